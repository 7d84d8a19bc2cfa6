#pragma once
// A cage for a render mesh (Houdini's Vellum with point deform, SOFA's barycentric mapping):
// the mesh a user brings, however large or broken, is not simulated itself. A closed, coarse
// cage around it is (an alpha wrap of about N triangles, or a cage the user made); the cage is
// tetrahedralized, and every render vertex is bound to the cage tet that holds it, so the
// render mesh follows the cage (core/scene/Embedding.h).

#include "core/base/Result.h"
#include "core/scene/Scene.h"
#include "meshing/MeshImport.h"

#include <filesystem>
#include <string>

namespace pbd {

struct CageOptions {
    std::size_t triangles = 0;  // an alpha-wrap cage of about this many triangles; 0: none
    std::filesystem::path mesh; // or this mesh, the user's cage
    ImportOptions import;       // for `mesh`

    bool enabled() const { return triangles > 0 || !mesh.empty(); }
};

struct CageReport {
    std::string source;           // "alpha wrap" or the cage file
    std::size_t triangles = 0;    // the cage's
    double alpha = 0, offset = 0; // the wrap's (m)
    int attempts = 0;             // wraps tried to come near the asked triangle count
    std::size_t renderMeshes = 0, renderVertices = 0, renderTriangles = 0;
    // After binding: render vertices outside every cage tet, and the farthest one's distance.
    std::size_t outside = 0;
    double largestOutsideDistance = 0;
    double renderDiagonal = 0; // the render mesh's bounding-box diagonal (m), for scale
};

// Replaces the scene's bodies (imported surfaces, no constraints) by one body, "cage", a
// surface to be repaired and tetrahedralized as any other, and keeps them as the scene's
// embedded meshes, not bound yet. The alpha is searched for the asked triangle count (its
// offset a tenth of it).
Result<CageReport> buildCage(Scene& scene, const CageOptions& options,
                             const ProgressCallback& progress = {});

// Binds every embedded mesh of the scene to the tets of body `cage` (a tet body now), and fills
// the report's outside figures.
void bindEmbeddedMeshes(Scene& scene, std::size_t cage, CageReport& report);

} // namespace pbd
