#pragma once
// The connectivity of the air mesh, internal to core/air: keys for edges and faces that do not
// depend on the order of their corners, and the face (tets) or edge (2D triangles) adjacency
// the optimiser keeps up to date and the contact pairs read.

#include "core/base/LinearAlgebra.h"

#include <algorithm>
#include <array>
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

// A set of faces for the air's passes to look faces up in: each listed under its lowest corner
// with its other two, so a look-up is a scan of a few (a binary search over all a body's faces
// waits on memory: a fifth of the optimiser's edge removals in the full dancer).
class FaceSet {
public:
    // `faces` as faceKey gives them (corners ascending); those of particles >= n are left out.
    void build(const std::vector<Triangle>& faces, std::size_t n) {
        start_.assign(n + 1, 0);
        for (const Triangle& f : faces) {
            if (f[0] < n) {
                ++start_[std::size_t(f[0]) + 1];
            }
        }
        for (std::size_t v = 0; v < n; ++v) {
            start_[v + 1] += start_[v];
        }
        with_.resize(start_[n]);
        std::vector<std::uint32_t> fill(start_.begin(), start_.end() - 1);
        for (const Triangle& f : faces) {
            if (f[0] < n) {
                with_[fill[f[0]]++] = {f[1], f[2]};
            }
        }
    }
    bool contains(const Triangle& key) const {
        if (std::size_t(key[0]) + 1 >= start_.size()) {
            return false; // a particle after those the set was built with
        }
        for (std::uint32_t k = start_[key[0]]; k < start_[key[0] + 1]; ++k) {
            if (with_[k][0] == key[1] && with_[k][1] == key[2]) {
                return true;
            }
        }
        return false;
    }

private:
    std::vector<std::uint32_t> start_;
    std::vector<std::array<Index, 2>> with_;
};

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
