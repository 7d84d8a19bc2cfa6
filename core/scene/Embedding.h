#pragma once
// A render mesh carried by a simulated cage (Houdini's point deform, SOFA's barycentric
// mapping): every vertex of the render mesh is a fixed combination of the four corners of one
// cage tet, so the mesh follows whatever the solver does to the cage. The solver never sees the
// render mesh; the window, the exports and the cooked asset apply the binding.

#include "core/base/LinearAlgebra.h"

#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace pbd {

struct EmbeddedMesh {
    std::string name;
    std::vector<Vec3> restPositions;              // where the binding was made
    std::vector<Triangle> triangles;              // indices into the mesh's own vertices
    std::vector<std::array<Vec2, 3>> triangleUVs; // per corner, parallel to triangles; or empty
    // Per vertex: the particles of the tet that carries it and their weights (barycentric
    // coordinates: each in [0, 1], summing to 1).
    std::vector<Tetrahedron> corners;
    std::vector<std::array<Real, 4>> weights;
    // When bound: vertices outside every tet (carried by the nearest tet's closest point) and
    // the largest distance of one from its tet, m.
    std::size_t outsideVertices = 0;
    Real largestOutsideDistance = 0;

    std::size_t vertexCount() const { return restPositions.size(); }
};

// The mesh's vertices for the particles at `positions`: out[v] = sum_k weights[v][k] *
// positions[corners[v][k]]. `out` is resized.
void embeddedPositions(const EmbeddedMesh& mesh, const std::vector<Vec3>& positions,
                       std::vector<Vec3>& out);

struct TetBinding {
    std::vector<Tetrahedron> corners;
    std::vector<std::array<Real, 4>> weights;
    std::size_t outside = 0;
    Real largestOutsideDistance = 0;
};

// Binds each point to the tet (of `tets`, indices into `positions`) that holds it, by its
// barycentric coordinates; a point outside every tet goes to the nearest tet, with the
// coordinates of that tet's closest point. Uses every core (TBB). Tets must not be flat.
TetBinding bindToTets(const std::vector<Vec3>& positions, const std::vector<Tetrahedron>& tets,
                      const std::vector<Vec3>& points);

// Problems with an embedded mesh against a scene of `particleCount` particles (indices out of
// range, weights not finite or not summing to 1, UVs not parallel to triangles); empty if none.
std::vector<std::string> validateEmbedded(const EmbeddedMesh& mesh, std::size_t particleCount);

} // namespace pbd
