#pragma once
// Animated characters from files: skinned meshes with their skeleton and animation clips (glTF
// and GLB, FBX, Collada, DirectX .x and what else assimp reads), read by assimp in a child
// process (ContainedProcess) so that a file that crashes or hangs it costs nothing here. The
// result is core's Character (core/anim), posed and skinned there.

#include "core/anim/Character.h"
#include "core/base/Result.h"
#include "meshing/MeshImport.h"

#include <filesystem>
#include <string>
#include <vector>

namespace pbd {

struct ImportedCharacter {
    Character character;
    std::vector<std::string> warnings; // what was left out (morph targets, points and lines)
};

// Reads `path`; `edits` as editCharacter takes them ("clip=dance,up=z,scale=0.01") are applied
// after reading, so that an unknown clip is named with the clips the file has.
Result<ImportedCharacter> importCharacter(const std::filesystem::path& path,
                                          const std::string& edits = {},
                                          const ImportOptions& options = {},
                                          const ProgressCallback& progress = {});

// "FILE[,KEY=VALUE...]" (the command line's --character, Python's add_character): the character
// read from FILE with the edits editCharacter takes and `friction` (its collider's), added to
// the scene with its moving collider (core addCharacter); the character's index.
Result<int> addCharacterFromSpec(Scene& scene, const std::string& spec,
                                 const ProgressCallback& progress = {},
                                 std::vector<std::string>* warnings = nullptr);

// The file's extensions assimp reads characters from, lower case with the dot.
const std::vector<std::string>& supportedCharacterExtensions();

// The binary form the reader's child sends back (also for the fuzz target): encode, and decode
// with every count checked against what is left, then checkCharacter.
std::string encodeCharacter(const Character& character);
Result<Character> decodeCharacter(const std::string& bytes);

// The reader as the child runs it, in this process: for the fuzz targets only.
Result<ImportedCharacter> readCharacterUncontained(const std::filesystem::path& path);

} // namespace pbd
