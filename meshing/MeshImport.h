#pragma once
// Reads surface meshes from files into a scene, one body per OBJ object/group or per mesh of
// the other formats. OBJ goes through tinyobjloader in double precision; PLY, STL, OFF and
// glTF/GLB through assimp.

#include "core/base/Result.h"
#include "core/scene/Scene.h"

#include <filesystem>
#include <string>
#include <vector>

namespace pbd {

struct ImportOptions {
    double scale = 1.0;          // multiplies every coordinate (unit conversion)
    double weldTolerance = 1e-6; // relative to each body's bounding-box diagonal
};

struct ImportedMesh {
    Scene scene;
    std::vector<std::string> warnings; // problems that were repaired, each naming the body
};

Result<ImportedMesh> importMesh(const std::filesystem::path& path,
                                const ImportOptions& options = {});

// Lower-case extensions with the dot, for file dialogs and command-line checks.
const std::vector<std::string>& supportedMeshExtensions();

} // namespace pbd
