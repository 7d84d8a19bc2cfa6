#pragma once
// Internal to meshing/: the edge and triangle helpers the surface checks and repairs share.

#include "core/base/LinearAlgebra.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <unordered_map>
#include <vector>

namespace pbd::surface {

inline std::uint64_t edgeKey(Index a, Index b) {
    if (a > b) {
        std::swap(a, b);
    }
    return (std::uint64_t(a) << 32) | b;
}

struct UnionFind {
    std::vector<std::size_t> parent;
    explicit UnionFind(std::size_t n)
        : parent(n) {
        std::iota(parent.begin(), parent.end(), std::size_t(0));
    }
    std::size_t find(std::size_t i) {
        while (parent[i] != i) {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        return i;
    }
    void unite(std::size_t a, std::size_t b) { parent[find(a)] = find(b); }
};

inline bool degenerateTriangle(const std::vector<Vec3>& x, const Triangle& t) {
    if (t[0] == t[1] || t[1] == t[2] || t[0] == t[2]) {
        return true;
    }
    const Vec3 e0 = x[t[1]] - x[t[0]];
    const Vec3 e1 = x[t[2]] - x[t[0]];
    const Vec3 e2 = x[t[2]] - x[t[1]];
    const Real longest = std::max({e0.squaredNorm(), e1.squaredNorm(), e2.squaredNorm()});
    return !(e0.cross(e1).norm() > 1e-12 * longest);
}

// The fans the triangles `around` a vertex make (connected through the edges they share):
// one for a manifold vertex, more where surfaces meet at a point.
inline std::size_t fanCount(const std::vector<Triangle>& triangles,
                            const std::vector<std::size_t>& around) {
    UnionFind fans(around.size());
    for (std::size_t i = 0; i < around.size(); ++i) {
        for (std::size_t j = i + 1; j < around.size(); ++j) {
            int shared = 0;
            for (Index a : triangles[around[i]]) {
                for (Index b : triangles[around[j]]) {
                    shared += a == b;
                }
            }
            if (shared >= 2) {
                fans.unite(i, j);
            }
        }
    }
    std::size_t count = 0;
    for (std::size_t i = 0; i < around.size(); ++i) {
        count += fans.find(i) == i;
    }
    return count;
}

// How each undirected edge of a surface is used: by how many triangles, and whether two of them
// traverse it the same way (an orientation flip between neighbours).
struct EdgeUse {
    int count = 0;
    std::size_t first = 0; // the first triangle using it
    bool firstForward = false;
    bool sameDirection = false;
};

inline std::unordered_map<std::uint64_t, EdgeUse> edgeUses(const std::vector<Triangle>& triangles) {
    std::unordered_map<std::uint64_t, EdgeUse> uses;
    uses.reserve(triangles.size() * 2);
    for (std::size_t t = 0; t < triangles.size(); ++t) {
        for (int k = 0; k < 3; ++k) {
            const Index a = triangles[t][k];
            const Index b = triangles[t][(k + 1) % 3];
            if (a == b) {
                continue;
            }
            EdgeUse& u = uses[edgeKey(a, b)];
            if (u.count == 0) {
                u.first = t;
                u.firstForward = a < b;
            } else if ((a < b) == u.firstForward) {
                u.sameDirection = true;
            }
            ++u.count;
        }
    }
    return uses;
}

} // namespace pbd::surface
