#pragma once
// The connectivity of the air mesh, internal to core/air: keys for edges and faces that do not
// depend on the order of their corners, and the face (tets) or edge (2D triangles) adjacency
// the optimiser keeps up to date and the contact pairs read.

#include "core/base/LinearAlgebra.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace pbd::air {

constexpr std::int32_t kNone = -1;
// The face opposite vertex i, wound so that (vertex i, face) is positively oriented.
constexpr int kFace[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};

using EdgeKey = std::uint64_t;

inline EdgeKey edgeKey(Index a, Index b) {
    if (a > b) {
        std::swap(a, b);
    }
    return (EdgeKey(a) << 32) | b;
}

inline Triangle faceKey(Index a, Index b, Index c) {
    Triangle f{a, b, c};
    std::sort(f.begin(), f.end());
    return f;
}

inline Triangle faceOpposite(const Tetrahedron& t, int i) {
    return faceKey(t[kFace[i][0]], t[kFace[i][1]], t[kFace[i][2]]);
}

// Links the elements whose sides (key, corners * element + side) are shared by exactly two
// elements; a side of one element (the boundary) or of three or more stays kNone.
template <class Key>
void pairUp(std::vector<std::pair<Key, std::int32_t>>& sides, int corners,
            std::vector<std::int32_t>& neighbours) {
    std::sort(sides.begin(), sides.end());
    for (std::size_t k = 0; k < sides.size();) {
        std::size_t end = k + 1;
        while (end < sides.size() && sides[end].first == sides[k].first) {
            ++end;
        }
        if (end - k == 2) {
            neighbours[std::size_t(sides[k].second)] = sides[k + 1].second / corners;
            neighbours[std::size_t(sides[k + 1].second)] = sides[k].second / corners;
        }
        k = end;
    }
}

// Face adjacency of tets: entry 4 t + i is the tet across the face opposite vertex i of tet t,
// or kNone where the face is on the boundary of the air (a body, the container) or is shared by
// more than two tets.
std::vector<std::int32_t> buildAdjacency(const std::vector<Tetrahedron>& tets);
// Edge adjacency of triangles: entry 3 t + i is the triangle across the edge opposite corner i.
std::vector<std::int32_t> buildEdgeAdjacency(const std::vector<Triangle>& triangles);

} // namespace pbd::air
