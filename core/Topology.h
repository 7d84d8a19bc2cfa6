#pragma once
// Element geometry and connectivity shared by the solver, meshing and views.

#include "core/LinearAlgebra.h"

#include <vector>

namespace pbd {

// Signed volume of tetrahedron (a, b, c, d): positive when (b-a, c-a, d-a) is right-handed.
inline Real signedVolume(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
    return (b - a).dot((c - a).cross(d - a)) / 6.0;
}

// The faces that belong to exactly one tetrahedron, wound so that their normals point out of the
// mesh (given positively oriented tets). Order follows the tets, so the result is deterministic.
std::vector<Triangle> boundaryFaces(const std::vector<Tetrahedron>& tets);

// Swaps two vertices of every tet with negative volume so that all are positively oriented.
// Returns how many were flipped.
std::size_t orientPositively(std::vector<Tetrahedron>& tets, const std::vector<Vec3>& positions);

// Area-weighted vertex normals of a triangle surface, for positions.size() vertices.
std::vector<Vec3> vertexNormals(const std::vector<Triangle>& triangles,
                                const std::vector<Vec3>& positions);

} // namespace pbd
