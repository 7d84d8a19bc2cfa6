#include "core/anim/LoopSubdivision.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

namespace pbd {

void LoopLevel::apply(const std::vector<Vec3>& coarse, std::vector<Vec3>& fine) const {
    fine.resize(vertexCount());
    for (std::size_t v = 0; v < fine.size(); ++v) {
        Vec3 sum = Vec3::Zero();
        for (Index k = rowStart[v]; k < rowStart[v + 1]; ++k) {
            sum += weight[k] * coarse[column[k]];
        }
        fine[v] = sum;
    }
}

LoopLevel loopSubdivide(const std::vector<Triangle>& triangles, std::size_t vertexCount) {
    LoopLevel level;
    level.coarseVertices = vertexCount;
    level.coarseTriangles = triangles.size();

    // Every triangle side: its corners (lower first), the corner opposite, and where it is.
    struct Side {
        Index lo, hi, opposite, at; // at = 3 * triangle + corner
    };
    std::vector<Side> sides;
    sides.reserve(3 * triangles.size());
    const auto valid = [&](const Triangle& t) {
        return t[0] < vertexCount && t[1] < vertexCount && t[2] < vertexCount;
    };
    for (std::size_t t = 0; t < triangles.size(); ++t) {
        if (!valid(triangles[t])) {
            continue;
        }
        for (int k = 0; k < 3; ++k) {
            const Index u = triangles[t][std::size_t(k)], v = triangles[t][std::size_t(k + 1) % 3];
            sides.push_back({std::min(u, v), std::max(u, v), triangles[t][std::size_t(k + 2) % 3],
                             Index(3 * t + std::size_t(k))});
        }
    }
    std::sort(sides.begin(), sides.end(), [](const Side& a, const Side& b) {
        return a.lo != b.lo ? a.lo < b.lo : a.hi != b.hi ? a.hi < b.hi : a.at < b.at;
    });

    // The edges: a run of sides with the same corners. Per vertex: its neighbours, how many of
    // its edges are rims, and whether one is non-manifold.
    struct Edge {
        std::size_t first, count; // into sides
    };
    std::vector<Edge> edges;
    std::vector<Index> edgeOf(3 * triangles.size());
    std::vector<Index> neighbourCount(vertexCount + 1, 0);
    std::vector<int> rims(vertexCount, 0);
    std::vector<char> singular(vertexCount, 0);
    for (std::size_t i = 0; i < sides.size();) {
        std::size_t j = i;
        while (j < sides.size() && sides[j].lo == sides[i].lo && sides[j].hi == sides[i].hi) {
            edgeOf[sides[j].at] = Index(edges.size());
            ++j;
        }
        edges.push_back({i, j - i});
        const Index lo = sides[i].lo, hi = sides[i].hi;
        if (lo != hi) {
            ++neighbourCount[lo + 1];
            ++neighbourCount[hi + 1];
            if (j - i == 1) {
                ++rims[lo];
                ++rims[hi];
            } else if (j - i > 2) {
                singular[lo] = singular[hi] = 1;
            }
        }
        i = j;
    }
    for (std::size_t v = 0; v < vertexCount; ++v) {
        neighbourCount[v + 1] += neighbourCount[v];
    }
    std::vector<Index> neighbours(neighbourCount[vertexCount]);
    std::vector<char> rimNeighbour(neighbours.size(), 0);
    {
        std::vector<Index> fill(neighbourCount.begin(), neighbourCount.end() - 1);
        for (const Edge& e : edges) {
            const Side& s = sides[e.first];
            if (s.lo == s.hi) {
                continue;
            }
            rimNeighbour[fill[s.lo]] = e.count == 1 ? 1 : 0;
            neighbours[fill[s.lo]++] = s.hi;
            rimNeighbour[fill[s.hi]] = e.count == 1 ? 1 : 0;
            neighbours[fill[s.hi]++] = s.lo;
        }
    }

    level.rowStart.reserve(vertexCount + edges.size() + 1);
    level.rowStart.push_back(0);
    const auto term = [&](Index column, Real weight) {
        // Merged with an earlier term of the row on the same vertex (a degenerate triangle).
        for (Index k = level.rowStart.back(); k < Index(level.column.size()); ++k) {
            if (level.column[k] == column) {
                level.weight[k] += weight;
                return;
            }
        }
        level.column.push_back(column);
        level.weight.push_back(weight);
    };
    const auto endRow = [&] { level.rowStart.push_back(Index(level.column.size())); };

    for (std::size_t v = 0; v < vertexCount; ++v) {
        const Index first = neighbourCount[v], last = neighbourCount[v + 1];
        const Index n = last - first;
        if (n == 0 || singular[v] || (rims[v] != 0 && rims[v] != 2)) {
            term(Index(v), 1);
        } else if (rims[v] == 2) {
            term(Index(v), 0.75);
            for (Index k = first; k < last; ++k) {
                if (rimNeighbour[k]) {
                    term(neighbours[k], 0.125);
                }
            }
        } else {
            const Real c = 0.375 + 0.25 * std::cos(2 * std::numbers::pi / Real(n));
            const Real beta = (0.625 - c * c) / Real(n);
            term(Index(v), 1 - Real(n) * beta);
            for (Index k = first; k < last; ++k) {
                term(neighbours[k], beta);
            }
        }
        endRow();
    }
    for (const Edge& e : edges) {
        const Side& s = sides[e.first];
        if (e.count == 2) {
            term(s.lo, 0.375);
            term(s.hi, 0.375);
            term(s.opposite, 0.125);
            term(sides[e.first + 1].opposite, 0.125);
        } else {
            term(s.lo, 0.5);
            term(s.hi, 0.5);
        }
        endRow();
    }

    level.triangles.reserve(4 * triangles.size());
    const Index base = Index(vertexCount);
    for (std::size_t t = 0; t < triangles.size(); ++t) {
        const Triangle& c = triangles[t];
        if (!valid(c)) {
            // Four collapsed children, to keep 4 t's place: checkCharacter refuses such a mesh.
            level.triangles.insert(level.triangles.end(), 4, Triangle{0, 0, 0});
            continue;
        }
        const Index ab = base + edgeOf[3 * t], bc = base + edgeOf[3 * t + 1],
                    ca = base + edgeOf[3 * t + 2];
        level.triangles.push_back({c[0], ab, ca});
        level.triangles.push_back({ab, c[1], bc});
        level.triangles.push_back({ca, bc, c[2]});
        level.triangles.push_back({ab, bc, ca});
    }
    return level;
}

} // namespace pbd
