#pragma once
// Element geometry and connectivity shared by the solver, meshing and views.

#include "core/base/LinearAlgebra.h"

#include <cmath>
#include <vector>

namespace pbd {

// Signed volume of tetrahedron (a, b, c, d): positive when (b-a, c-a, d-a) is right-handed.
inline Real signedVolume(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
    return (b - a).dot((c - a).cross(d - a)) / 6.0;
}

// Element quality (Air Meshes eq. 4 and eq. 3, with the erratum): 1 for a regular tet or an
// equilateral triangle, 0 when flat, negative when inverted (tets only; a triangle in 3D has no
// sign). q = 12/sqrt(2) V / l_rms^3 with l_rms^2 the mean of the 6 squared edge lengths, and
// q = 4 sqrt(3) A / (l1^2 + l2^2 + l3^2).
inline Real tetQuality(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
    const Real l2 = ((b - a).squaredNorm() + (c - a).squaredNorm() + (d - a).squaredNorm() +
                     (c - b).squaredNorm() + (d - b).squaredNorm() + (d - c).squaredNorm()) /
                    6.0;
    if (!(l2 > 0)) {
        return 0;
    }
    return 12.0 / std::sqrt(2.0) * signedVolume(a, b, c, d) / (l2 * std::sqrt(l2));
}
inline Real triangleQuality(const Vec3& a, const Vec3& b, const Vec3& c) {
    const Real sum = (b - a).squaredNorm() + (c - b).squaredNorm() + (a - c).squaredNorm();
    if (!(sum > 0)) {
        return 0;
    }
    return 4.0 * std::sqrt(3.0) * 0.5 * (b - a).cross(c - a).norm() / sum;
}

// The faces that belong to exactly one tetrahedron, wound so that their normals point out of the
// mesh (given positively oriented tets). Order follows the tets, so the result is deterministic.
std::vector<Triangle> boundaryFaces(const std::vector<Tetrahedron>& tets);

// Swaps two vertices of every tet with negative volume so that all are positively oriented.
// Returns how many were flipped.
std::size_t orientPositively(std::vector<Tetrahedron>& tets, const std::vector<Vec3>& positions);

// Area-weighted vertex normals of a triangle surface of `count` vertices, written to
// `normals[0, count)` (unit length, zero where no triangle has area); no allocation, for views
// that update every frame.
void vertexNormals(const std::vector<Triangle>& triangles, const Vec3* positions, std::size_t count,
                   Vec3* normals);
// The same for positions.size() vertices.
std::vector<Vec3> vertexNormals(const std::vector<Triangle>& triangles,
                                const std::vector<Vec3>& positions);

} // namespace pbd
