#pragma once
// The Air Meshes paper's headline scene (its Figure 1): a dancing character in a skirt of
// several layers. The character is Debian's assimp test model X/BCN_Epileptic.X (54 bones,
// 5,126 triangles, a 3.3 s dance), read as any character is (meshing/CharacterImport) and
// standing on the ground; the skirt is fitted to its hips (core/scenes/Garments) and pinned to
// the skin.

#include "core/base/Result.h"
#include "core/scenes/Garments.h"
#include "core/scenes/SceneLibrary.h"

#include <string>
#include <string_view>
#include <vector>

namespace pbd {

struct DancerSpec {
    std::string file;  // the character; empty: BCN_Epileptic.X from $ASSIMP_MODELS or Debian's
    std::string edits; // editCharacter's, after it is stood on the ground
    SkirtSpec skirt;
    Real waist = 0.0; // the waistband's height above the character's origin (its hips), m
};

// The paper's size (3 layers, 47,616 triangles) and a small one for tests.
DancerSpec dancerSpec(std::string_view name);
Result<Scene> makeDancer(const DancerSpec& spec, const std::string& name = "dancer");

// "dancer" and "dancer-small". Not in the generated scenes' catalogue yet: without the air
// between the layers and the legs, self-collision breaks down when the legs squeeze the layers
// (dancer-small at about 0.5 s; the full size at once on one thread), and a scene offered in
// the Samples menu must not run away. The tests build them by name.
const std::vector<SceneInfo>& characterSceneCatalogue();
Result<Scene> makeCharacterScene(std::string_view name);

} // namespace pbd
