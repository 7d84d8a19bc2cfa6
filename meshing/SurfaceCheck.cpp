#include "meshing/SurfaceCheck.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <sstream>
#include <unordered_map>

namespace pbd {

namespace {

std::uint64_t edgeKey(Index a, Index b) {
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

bool degenerateTriangle(const std::vector<Vec3>& x, const Triangle& t) {
    if (t[0] == t[1] || t[1] == t[2] || t[0] == t[2]) {
        return true;
    }
    const Vec3 e0 = x[t[1]] - x[t[0]];
    const Vec3 e1 = x[t[2]] - x[t[0]];
    const Vec3 e2 = x[t[2]] - x[t[1]];
    const Real longest = std::max({e0.squaredNorm(), e1.squaredNorm(), e2.squaredNorm()});
    return !(e0.cross(e1).norm() > 1e-12 * longest);
}

bool degenerateUV(const std::array<Vec2, 3>& uv) {
    const Vec2 a = uv[1] - uv[0];
    const Vec2 b = uv[2] - uv[0];
    const Real longest =
        std::max({a.squaredNorm(), b.squaredNorm(), (uv[2] - uv[1]).squaredNorm()});
    return !(std::abs(a.x() * b.y() - a.y() * b.x()) > 1e-12 * longest);
}

// How each undirected edge of a surface is used: by how many triangles, and whether two of them
// traverse it the same way (an orientation flip between neighbours).
struct EdgeUse {
    int count = 0;
    std::size_t first = 0; // the first triangle using it
    bool firstForward = false;
    bool sameDirection = false;
};

std::unordered_map<std::uint64_t, EdgeUse> edgeUses(const std::vector<Triangle>& triangles) {
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

std::string listPairs(const std::vector<std::pair<std::size_t, std::size_t>>& pairs,
                      std::size_t shown = 5) {
    std::ostringstream s;
    for (std::size_t i = 0; i < std::min(shown, pairs.size()); ++i) {
        s << (i ? ", " : "") << pairs[i].first << " and " << pairs[i].second;
    }
    if (pairs.size() > shown) {
        s << " and " << pairs.size() - shown << " more";
    }
    return s.str();
}

BodySurfaceReport checkBody(const Scene& scene, const Body& body,
                            std::vector<std::string>& problems,
                            std::vector<std::string>& warnings) {
    const auto& x = scene.particles.positions;
    BodySurfaceReport r;
    r.body = body.name;
    r.triangles = body.triangles.size();
    const std::string who = "body '" + body.name + "'";

    std::vector<std::size_t> degenerate;
    for (std::size_t t = 0; t < body.triangles.size(); ++t) {
        const Triangle& tri = body.triangles[t];
        if (degenerateTriangle(x, tri)) {
            degenerate.push_back(t);
            continue;
        }
        r.area += 0.5 * (x[tri[1]] - x[tri[0]]).cross(x[tri[2]] - x[tri[0]]).norm();
        r.signedVolume += x[tri[0]].dot(x[tri[1]].cross(x[tri[2]])) / 6.0;
    }
    r.degenerateTriangles = degenerate.size();
    if (!degenerate.empty()) {
        std::ostringstream s;
        s << who << ": " << degenerate.size() << " degenerate (zero-area) triangle(s), first "
          << degenerate.front() << "; repair drops them";
        warnings.push_back(s.str());
    }

    const auto uses = edgeUses(body.triangles);
    UnionFind components(body.triangles.size());
    std::vector<std::size_t> nonManifoldEdgeTriangles;
    for (const auto& [key, u] : uses) {
        if (u.count == 1) {
            ++r.boundaryEdges;
        } else if (u.count > 2) {
            ++r.nonManifoldEdges;
            nonManifoldEdgeTriangles.push_back(u.first);
        } else if (u.sameDirection) {
            ++r.inconsistentEdges;
        }
    }
    // Components, through edges (manifold or not).
    {
        std::unordered_map<std::uint64_t, std::size_t> firstTriangle;
        for (std::size_t t = 0; t < body.triangles.size(); ++t) {
            for (int k = 0; k < 3; ++k) {
                const Index a = body.triangles[t][k];
                const Index b = body.triangles[t][(k + 1) % 3];
                if (a == b) {
                    continue;
                }
                auto [it, inserted] = firstTriangle.try_emplace(edgeKey(a, b), t);
                if (!inserted) {
                    components.unite(t, it->second);
                }
            }
        }
        for (std::size_t t = 0; t < body.triangles.size(); ++t) {
            r.components += components.find(t) == t;
        }
    }
    // Vertices: the triangles around a manifold vertex form one fan (connected through the
    // edges at the vertex); two or more fans make it non-manifold (for example two cones
    // touching at their tips).
    {
        std::unordered_map<Index, std::vector<std::size_t>> around;
        for (std::size_t t = 0; t < body.triangles.size(); ++t) {
            for (Index v : body.triangles[t]) {
                around[v].push_back(t);
            }
        }
        r.vertices = around.size();
        std::size_t firstBad = 0;
        for (const auto& [v, tris] : around) {
            UnionFind fans(tris.size());
            for (std::size_t i = 0; i < tris.size(); ++i) {
                for (std::size_t j = i + 1; j < tris.size(); ++j) {
                    int shared = 0;
                    for (Index a : body.triangles[tris[i]]) {
                        for (Index b : body.triangles[tris[j]]) {
                            shared += a == b;
                        }
                    }
                    if (shared >= 2) {
                        fans.unite(i, j);
                    }
                }
            }
            std::size_t fanCount = 0;
            for (std::size_t i = 0; i < tris.size(); ++i) {
                fanCount += fans.find(i) == i;
            }
            if (fanCount > 1) {
                if (r.nonManifoldVertices == 0 || v < firstBad) {
                    firstBad = v;
                }
                ++r.nonManifoldVertices;
            }
        }
        if (r.nonManifoldVertices > 0) {
            problems.push_back(who + ": " + std::to_string(r.nonManifoldVertices) +
                               " non-manifold vertex(es), first particle " +
                               std::to_string(firstBad - body.firstParticle) +
                               " (surfaces meet at a single point)");
        }
    }
    if (r.nonManifoldEdges > 0) {
        std::sort(nonManifoldEdgeTriangles.begin(), nonManifoldEdgeTriangles.end());
        problems.push_back(who + ": " + std::to_string(r.nonManifoldEdges) +
                           " edge(s) shared by more than two triangles, first at triangle " +
                           std::to_string(nonManifoldEdgeTriangles.front()));
    }
    if (r.inconsistentEdges > 0) {
        warnings.push_back(who + ": " + std::to_string(r.inconsistentEdges) +
                           " edge(s) between triangles wound opposite ways; repair orients them");
    } else if (r.closed() && r.signedVolume < 0) {
        warnings.push_back(who + " is wound inward (negative volume); repair turns it outward");
    }
    if (r.boundaryEdges > 0 && r.nonManifoldEdges == 0) {
        std::ostringstream s;
        s << who << " is open (" << r.boundaryEdges
          << " border edges): it can be cloth but not a tet body";
        warnings.push_back(s.str());
    }

    std::size_t withFrame = 0;
    if (body.hasUVs() && body.triangleUVs.size() == body.triangles.size()) {
        std::size_t firstBadUV = 0;
        for (std::size_t t = 0; t < body.triangles.size(); ++t) {
            if (degenerateUV(body.triangleUVs[t])) {
                if (r.degenerateUVTriangles++ == 0) {
                    firstBadUV = t;
                }
            } else {
                ++withFrame;
            }
        }
        if (r.degenerateUVTriangles > 0) {
            warnings.push_back(who + ": " + std::to_string(r.degenerateUVTriangles) +
                               " triangle(s) with zero UV area, first " +
                               std::to_string(firstBadUV) +
                               "; their material frames follow an edge instead");
        }
    }
    r.uvCoverage = r.triangles > 0 ? double(withFrame) / double(r.triangles) : 0.0;
    return r;
}

} // namespace

std::size_t SurfaceReport::bodyIntersections() const {
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    for (const TriangleIntersection& i : intersections) {
        if (i.bodyA != i.bodyB) {
            pairs.emplace_back(i.bodyA, i.bodyB);
        }
    }
    std::sort(pairs.begin(), pairs.end());
    return std::size_t(std::unique(pairs.begin(), pairs.end()) - pairs.begin());
}

SurfaceReport checkSurfaces(const Scene& scene) {
    SurfaceReport report;
    for (const Body& body : scene.bodies) {
        report.bodies.push_back(checkBody(scene, body, report.problems, report.warnings));
    }
    report.intersections = findIntersections(scene);
    // Group the crossing triangle pairs by the pair of bodies.
    std::map<std::pair<std::size_t, std::size_t>, std::vector<std::pair<std::size_t, std::size_t>>>
        byBodies;
    for (const TriangleIntersection& i : report.intersections) {
        byBodies[{i.bodyA, i.bodyB}].emplace_back(i.triangleA, i.triangleB);
    }
    for (const auto& [bodies, pairs] : byBodies) {
        const std::string& a = scene.bodies[bodies.first].name;
        const std::string& b = scene.bodies[bodies.second].name;
        if (bodies.first == bodies.second) {
            report.bodies[bodies.first].selfIntersections = pairs.size();
            report.problems.push_back("body '" + a +
                                      "' intersects itself: " + std::to_string(pairs.size()) +
                                      " pair(s) of triangles cross (" + listPairs(pairs) + ")");
        } else {
            report.problems.push_back("bodies '" + a + "' and '" + b +
                                      "' intersect: " + std::to_string(pairs.size()) +
                                      " pair(s) of triangles cross (triangles of '" + a +
                                      "' and '" + b + "': " + listPairs(pairs) + ")");
        }
    }
    return report;
}

namespace {

// Removes triangles (and their UVs) for which drop(t) is true; returns how many.
template <class Drop> std::size_t removeTriangles(Body& body, Drop drop) {
    std::size_t kept = 0;
    for (std::size_t t = 0; t < body.triangles.size(); ++t) {
        if (drop(t)) {
            continue;
        }
        body.triangles[kept] = body.triangles[t];
        if (body.hasUVs()) {
            body.triangleUVs[kept] = body.triangleUVs[t];
        }
        ++kept;
    }
    const std::size_t removed = body.triangles.size() - kept;
    body.triangles.resize(kept);
    if (body.hasUVs()) {
        body.triangleUVs.resize(kept);
    }
    return removed;
}

std::size_t stitchBorders(const std::vector<Vec3>& x, Body& body, double tolerance) {
    const auto uses = edgeUses(body.triangles);
    std::vector<Index> border;
    Real edgeSum = 0;
    std::size_t edgeCount = 0;
    for (const auto& [key, u] : uses) {
        const Index a = Index(key >> 32);
        const Index b = Index(key & 0xffffffffu);
        edgeSum += (x[a] - x[b]).norm();
        ++edgeCount;
        if (u.count == 1) {
            border.push_back(a);
            border.push_back(b);
        }
    }
    if (border.empty() || edgeCount == 0) {
        return 0;
    }
    std::sort(border.begin(), border.end());
    border.erase(std::unique(border.begin(), border.end()), border.end());
    const Real radius = tolerance * edgeSum / Real(edgeCount);
    if (!(radius > 0)) {
        return 0;
    }
    // Each border vertex merges into the lowest-indexed border vertex within the radius.
    std::unordered_map<Index, Index> target;
    for (std::size_t i = 0; i < border.size(); ++i) {
        if (target.count(border[i])) {
            continue;
        }
        for (std::size_t j = i + 1; j < border.size(); ++j) {
            if (!target.count(border[j]) && (x[border[i]] - x[border[j]]).norm() <= radius) {
                target[border[j]] = border[i];
            }
        }
    }
    if (target.empty()) {
        return 0;
    }
    for (Triangle& t : body.triangles) {
        for (Index& v : t) {
            if (auto it = target.find(v); it != target.end()) {
                v = it->second;
            }
        }
    }
    return target.size();
}

std::size_t removeDuplicateTriangles(Body& body) {
    std::unordered_map<std::uint64_t, std::vector<std::size_t>> seen;
    std::vector<bool> drop(body.triangles.size(), false);
    for (std::size_t t = 0; t < body.triangles.size(); ++t) {
        Triangle s = body.triangles[t];
        std::sort(s.begin(), s.end());
        auto& candidates = seen[edgeKey(s[0], s[1]) * 31 + s[2]];
        for (std::size_t other : candidates) {
            Triangle o = body.triangles[other];
            std::sort(o.begin(), o.end());
            if (o == s) {
                drop[t] = true;
            }
        }
        if (!drop[t]) {
            candidates.push_back(t);
        }
    }
    return removeTriangles(body, [&](std::size_t t) { return drop[t]; });
}

// Makes neighbouring triangles traverse their shared edges in opposite directions, spreading
// from the first triangle of each component across edges with exactly two triangles; then turns
// each closed component outward. Returns the number of triangles flipped.
std::size_t orientBody(const std::vector<Vec3>& x, Body& body) {
    const std::size_t n = body.triangles.size();
    std::unordered_map<std::uint64_t, std::vector<std::size_t>> byEdge;
    for (std::size_t t = 0; t < n; ++t) {
        for (int k = 0; k < 3; ++k) {
            byEdge[edgeKey(body.triangles[t][k], body.triangles[t][(k + 1) % 3])].push_back(t);
        }
    }
    auto forward = [&](std::size_t t, Index a, Index b) {
        const Triangle& tri = body.triangles[t];
        for (int k = 0; k < 3; ++k) {
            if (tri[k] == a && tri[(k + 1) % 3] == b) {
                return true;
            }
        }
        return false;
    };
    auto flip = [&](std::size_t t) {
        std::swap(body.triangles[t][1], body.triangles[t][2]);
        if (body.hasUVs()) {
            std::swap(body.triangleUVs[t][1], body.triangleUVs[t][2]);
        }
    };
    std::vector<int> component(n, -1);
    std::vector<std::size_t> flipped;
    int components = 0;
    for (std::size_t seed = 0; seed < n; ++seed) {
        if (component[seed] >= 0) {
            continue;
        }
        std::vector<std::size_t> stack{seed};
        component[seed] = components;
        while (!stack.empty()) {
            const std::size_t t = stack.back();
            stack.pop_back();
            for (int k = 0; k < 3; ++k) {
                const Index a = body.triangles[t][k];
                const Index b = body.triangles[t][(k + 1) % 3];
                const auto& around = byEdge[edgeKey(a, b)];
                if (around.size() != 2) {
                    continue;
                }
                const std::size_t o = around[0] == t ? around[1] : around[0];
                if (component[o] >= 0) {
                    continue;
                }
                component[o] = components;
                if (forward(o, a, b)) { // same direction as t: flip the neighbour
                    flip(o);
                    flipped.push_back(o);
                }
                stack.push_back(o);
            }
        }
        ++components;
    }
    // Closed components with negative volume are turned inside out.
    std::vector<Real> volume(components, 0.0);
    std::vector<bool> closed(components, true);
    for (std::size_t t = 0; t < n; ++t) {
        const Triangle& tri = body.triangles[t];
        volume[component[t]] += x[tri[0]].dot(x[tri[1]].cross(x[tri[2]]));
        for (int k = 0; k < 3; ++k) {
            if (byEdge[edgeKey(tri[k], tri[(k + 1) % 3])].size() != 2) {
                closed[component[t]] = false;
            }
        }
    }
    std::vector<bool> changed(n, false);
    for (std::size_t t : flipped) {
        changed[t] = !changed[t];
    }
    for (std::size_t t = 0; t < n; ++t) {
        if (closed[component[t]] && volume[component[t]] < 0) {
            flip(t);
            changed[t] = !changed[t];
        }
    }
    return std::size_t(std::count(changed.begin(), changed.end(), true));
}

} // namespace

RepairReport repairSurfaces(Scene& scene, const RepairOptions& options) {
    RepairReport report;
    const auto& x = scene.particles.positions;
    for (Body& body : scene.bodies) {
        if (body.triangles.empty() || !body.tets.empty()) {
            continue; // a tet body's surface is derived from its tets
        }
        const std::string who = "body '" + body.name + "': ";
        if (options.dropDegenerate) {
            const std::size_t n = removeTriangles(
                body, [&](std::size_t t) { return degenerateTriangle(x, body.triangles[t]); });
            if (n > 0) {
                report.actions.push_back(who + "dropped " + std::to_string(n) +
                                         " degenerate triangle(s)");
            }
        }
        if (options.stitchTolerance > 0) {
            const std::size_t merged = stitchBorders(x, body, options.stitchTolerance);
            if (merged > 0) {
                const std::size_t collapsed = removeTriangles(body, [&](std::size_t t) {
                    const Triangle& tri = body.triangles[t];
                    return tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2];
                });
                const std::size_t duplicates = removeDuplicateTriangles(body);
                report.actions.push_back(who + "stitched " + std::to_string(merged) +
                                         " border vertex(es) onto their neighbours (" +
                                         std::to_string(collapsed + duplicates) +
                                         " triangle(s) collapsed or duplicated and removed)");
            }
        }
        if (options.orientOutward) {
            const std::size_t flipped = orientBody(x, body);
            if (flipped > 0) {
                report.actions.push_back(who + "flipped " + std::to_string(flipped) +
                                         " triangle(s) to wind consistently and outward");
            }
        }
    }
    return report;
}

} // namespace pbd
