#include "meshing/SurfaceCheck.h"

#include "core/solver/Colliders.h"
#include "meshing/SurfaceTopology.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <sstream>
#include <unordered_map>

namespace pbd {

namespace {

using namespace surface;

bool degenerateUV(const std::array<Vec2, 3>& uv) {
    const Vec2 a = uv[1] - uv[0];
    const Vec2 b = uv[2] - uv[0];
    const Real longest =
        std::max({a.squaredNorm(), b.squaredNorm(), (uv[2] - uv[1]).squaredNorm()});
    return !(std::abs(a.x() * b.y() - a.y() * b.x()) > 1e-12 * longest);
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
            if (fanCount(body.triangles, tris) > 1) {
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

// The bodies wholly inside another closed body without crossing it (SurfaceReport::nested):
// its bounds inside the outer's, no crossing pair between the two, and most of three of its
// vertices inside the outer by the parity of a skewed ray's crossings (as the mesh colliders
// tell inside from out); for each, the outer with the smallest bounds.
std::vector<std::pair<std::size_t, std::size_t>>
findNestedBodies(const Scene& scene, const std::vector<BodySurfaceReport>& reports,
                 const std::vector<TriangleIntersection>& intersections) {
    const std::size_t n = scene.bodies.size();
    const auto& x = scene.particles.positions;
    std::vector<Bounds> bounds(n);
    for (std::size_t b = 0; b < n; ++b) {
        for (const Triangle& t : scene.bodies[b].triangles) {
            for (Index v : t) {
                bounds[b].add(x[v]);
            }
        }
    }
    std::vector<std::pair<std::size_t, std::size_t>> crossing;
    for (const TriangleIntersection& i : intersections) {
        crossing.emplace_back(std::min(i.bodyA, i.bodyB), std::max(i.bodyA, i.bodyB));
    }
    std::sort(crossing.begin(), crossing.end());
    const auto crosses = [&](std::size_t a, std::size_t b) {
        return std::binary_search(crossing.begin(), crossing.end(),
                                  std::pair{std::min(a, b), std::max(a, b)});
    };
    const auto within = [](const Bounds& inner, const Bounds& outer) {
        return (inner.min.array() >= outer.min.array()).all() &&
               (inner.max.array() <= outer.max.array()).all();
    };
    const Vec3 ray = Vec3(0.5773, 0.5774, 0.5771).normalized();
    const auto insideOf = [&](const Vec3& q, const Body& outer) {
        int crossings = 0;
        for (const Triangle& t : outer.triangles) {
            crossings += rayTriangle(q, ray, x[t[0]], x[t[1]], x[t[2]]) > 0 ? 1 : 0;
        }
        return crossings % 2 == 1;
    };
    std::vector<std::pair<std::size_t, std::size_t>> nested;
    for (std::size_t a = 0; a < n; ++a) {
        const std::vector<Triangle>& triangles = scene.bodies[a].triangles;
        if (triangles.empty()) {
            continue;
        }
        const Vec3 probes[3] = {x[triangles.front()[0]], x[triangles[triangles.size() / 2][1]],
                                x[triangles.back()[2]]};
        std::size_t best = n;
        for (std::size_t b = 0; b < n; ++b) {
            if (b == a || !reports[b].closed() || !within(bounds[a], bounds[b]) || crosses(a, b) ||
                (best < n && !within(bounds[b], bounds[best]))) { // not inside the one found
                continue;
            }
            int inside = 0;
            for (const Vec3& q : probes) {
                inside += insideOf(q, scene.bodies[b]) ? 1 : 0;
            }
            if (inside >= 2) {
                best = b;
            }
        }
        if (best < n) {
            nested.emplace_back(a, best);
        }
    }
    return nested;
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

SurfaceReport checkSurfaces(const Scene& scene, bool intersections) {
    SurfaceReport report;
    for (const Body& body : scene.bodies) {
        report.bodies.push_back(checkBody(scene, body, report.problems, report.warnings));
    }
    if (intersections) {
        report.intersections = findIntersections(scene);
        report.nested = findNestedBodies(scene, report.bodies, report.intersections);
    }
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
    for (const auto& [inner, outer] : report.nested) {
        report.problems.push_back("body '" + scene.bodies[inner].name + "' lies inside body '" +
                                  scene.bodies[outer].name +
                                  "' without crossing it: no air can reach it, and "
                                  "tetrahedralized the two would overlap");
    }
    return report;
}

} // namespace pbd
