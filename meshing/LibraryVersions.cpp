#include "meshing/LibraryVersions.h"

#include <CGAL/version.h>
#include <Eigen/Core>
#include <assimp/version.h>
#include <nlohmann/json.hpp>
#include <oneapi/tbb/version.h>

#define PBD_STRINGIFY2(x) #x
#define PBD_STRINGIFY(x) PBD_STRINGIFY2(x)

namespace pbd {

std::vector<LibraryVersion> meshingLibraryVersions() {
    return {
        {"Eigen", PBD_STRINGIFY(EIGEN_WORLD_VERSION) "." PBD_STRINGIFY(
                      EIGEN_MAJOR_VERSION) "." PBD_STRINGIFY(EIGEN_MINOR_VERSION)},
        {"oneTBB", TBB_VERSION_STRING},
        {"CGAL", CGAL_VERSION_STR},
        {"TetGen", PBDLAB_TETGEN_VERSION},
        {"assimp", std::to_string(aiGetVersionMajor()) + "." + std::to_string(aiGetVersionMinor()) +
                       "." + std::to_string(aiGetVersionPatch())},
        {"tinyobjloader", PBDLAB_TINYOBJLOADER_VERSION},
        {"nlohmann-json",
         PBD_STRINGIFY(NLOHMANN_JSON_VERSION_MAJOR) "." PBD_STRINGIFY(
             NLOHMANN_JSON_VERSION_MINOR) "." PBD_STRINGIFY(NLOHMANN_JSON_VERSION_PATCH)},
    };
}

} // namespace pbd
