#pragma once
// Loop subdivision (Loop 1987) of a triangle mesh as a fixed linear map: each level's vertices
// are weighted sums of the level before's, so a mesh that moves (a skinned character) is
// subdivided every substep by applying the weights to its posed vertices, without looking at
// its topology again. Used to smooth a character's skin for its collider and the window
// (Character::subdivisions): a coarse game mesh's ridges turn by 40-60 degrees, and cloth
// resting a few millimetres above two faces of such a ridge passes under it between its
// particles.
//
// The rules: an edge shared by two triangles gets 3/8 of each end and 1/8 of each opposite
// corner; a rim edge (one triangle) or a non-manifold one (three or more) its midpoint. A vertex
// inside the surface keeps 1 - n beta of itself and beta of each of its n neighbours, beta =
// (5/8 - (3/8 + cos(2 pi / n) / 4)^2) / n; a vertex on a rim (two rim edges) 3/4 of itself and
// 1/8 of each rim neighbour; any other vertex (a rim corner, a non-manifold edge's end, one on
// no triangle) stays where it is. Loop's surface lies inside the coarse mesh where it is convex
// (about 3% of the radius of a limb five edges round).

#include "core/base/LinearAlgebra.h"

#include <cstddef>
#include <vector>

namespace pbd {

struct LoopLevel {
    // What it subdivides: a mesh of these many vertices and triangles.
    std::size_t coarseVertices = 0;
    std::size_t coarseTriangles = 0;
    // Fine vertex v is the sum of weight[k] times coarse vertex column[k], k in
    // [rowStart[v], rowStart[v + 1]). The coarse vertices come first (each moved by the vertex
    // rule), then one per edge in the order of (lower, higher) corner.
    std::vector<Index> rowStart;
    std::vector<Index> column;
    std::vector<Real> weight;
    // Coarse triangle t's four, in its winding: [4t, 4t + 4).
    std::vector<Triangle> triangles;

    std::size_t vertexCount() const { return rowStart.empty() ? 0 : rowStart.size() - 1; }
    // fine = the map applied to coarse (coarse.size() must be coarseVertices).
    void apply(const std::vector<Vec3>& coarse, std::vector<Vec3>& fine) const;
};

// One level of Loop subdivision of `triangles` on `vertexCount` vertices. A triangle with an
// index out of range (the caller's to refuse) has no edges, and four collapsed children.
LoopLevel loopSubdivide(const std::vector<Triangle>& triangles, std::size_t vertexCount);

} // namespace pbd
