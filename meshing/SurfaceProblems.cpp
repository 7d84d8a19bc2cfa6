#include "meshing/SurfaceProblems.h"

#include "meshing/SurfaceTopology.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <unordered_map>

namespace pbd {

namespace {

using namespace surface;

std::string metres(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", v);
    return text;
}

// The triangles of each undirected edge.
std::unordered_map<std::uint64_t, std::vector<std::size_t>>
edgeTriangles(const std::vector<Triangle>& triangles) {
    std::unordered_map<std::uint64_t, std::vector<std::size_t>> out;
    out.reserve(triangles.size() * 2);
    for (std::size_t t = 0; t < triangles.size(); ++t) {
        for (int k = 0; k < 3; ++k) {
            const Index a = triangles[t][k], b = triangles[t][(k + 1) % 3];
            if (a != b) {
                out[edgeKey(a, b)].push_back(t);
            }
        }
    }
    return out;
}

// Whether triangle t runs a -> b.
bool runs(const Triangle& t, Index a, Index b) {
    for (int k = 0; k < 3; ++k) {
        if (t[k] == a && t[(k + 1) % 3] == b) {
            return true;
        }
    }
    return false;
}

void locateBody(const Scene& scene, std::size_t b, std::vector<SurfaceProblem>& out) {
    const Body& body = scene.bodies[b];
    const auto& x = scene.particles.positions;
    const std::vector<Triangle>& tris = body.triangles;
    const std::string who = "body '" + body.name + "': ";
    const auto local = [&](Index p) { return std::to_string(p - body.firstParticle); };
    const auto byEdge = edgeTriangles(tris);

    // Holes: the border edges, grouped by the vertices they share.
    std::vector<std::array<Index, 2>> border;
    for (const auto& [key, ts] : byEdge) {
        if (ts.size() == 1) {
            const Index a = Index(key >> 32), c = Index(key & 0xffffffffu);
            border.push_back(runs(tris[ts[0]], a, c) ? std::array<Index, 2>{a, c}
                                                     : std::array<Index, 2>{c, a});
        }
    }
    std::sort(border.begin(), border.end());
    {
        std::unordered_map<Index, std::size_t> slot;
        for (const auto& e : border) {
            slot.try_emplace(e[0], slot.size());
            slot.try_emplace(e[1], slot.size());
        }
        UnionFind loops(slot.size());
        for (const auto& e : border) {
            loops.unite(slot[e[0]], slot[e[1]]);
        }
        std::map<std::size_t, std::vector<std::array<Index, 2>>> groups;
        for (const auto& e : border) {
            groups[loops.find(slot[e[0]])].push_back(e);
        }
        std::vector<std::pair<double, SurfaceProblem>> holes;
        for (auto& [root, edges] : groups) {
            double length = 0;
            Index first = edges.front()[0];
            for (const auto& e : edges) {
                length += (x[e[1]] - x[e[0]]).norm();
                first = std::min(first, e[0]);
            }
            SurfaceProblem p;
            p.kind = SurfaceProblem::Kind::Hole;
            p.body = b;
            p.text = who + "open border of " + std::to_string(edges.size()) + " edges, " +
                     metres(length) + " m around, at particle " + local(first);
            p.edges = std::move(edges);
            holes.emplace_back(length, std::move(p));
        }
        std::stable_sort(holes.begin(), holes.end(),
                         [](const auto& l, const auto& r) { return l.first > r.first; });
        for (auto& h : holes) {
            out.push_back(std::move(h.second));
        }
    }

    // Edges of more than two triangles.
    std::vector<std::pair<std::uint64_t, const std::vector<std::size_t>*>> crowded;
    for (const auto& [key, ts] : byEdge) {
        if (ts.size() > 2) {
            crowded.emplace_back(key, &ts);
        }
    }
    std::sort(crowded.begin(), crowded.end());
    for (const auto& [key, ts] : crowded) {
        const Index a = Index(key >> 32), c = Index(key & 0xffffffffu);
        SurfaceProblem p;
        p.kind = SurfaceProblem::Kind::NonManifoldEdge;
        p.body = b;
        p.text = who + "the edge between particles " + local(a) + " and " + local(c) +
                 " is shared by " + std::to_string(ts->size()) + " triangles";
        p.edges.push_back({a, c});
        for (std::size_t t : *ts) {
            p.triangles.push_back(tris[t]);
        }
        out.push_back(std::move(p));
    }

    // Vertices whose triangles make more than one fan.
    {
        std::map<Index, std::vector<std::size_t>> around;
        for (std::size_t t = 0; t < tris.size(); ++t) {
            for (Index v : tris[t]) {
                around[v].push_back(t);
            }
        }
        for (const auto& [v, ts] : around) {
            const std::size_t count = fanCount(tris, ts);
            if (count > 1) {
                SurfaceProblem p;
                p.kind = SurfaceProblem::Kind::NonManifoldVertex;
                p.body = b;
                p.text = who + "particle " + local(v) + " is where " + std::to_string(count) +
                         " surfaces meet at a point";
                p.points.push_back(v);
                for (std::size_t t : ts) {
                    p.triangles.push_back(tris[t]);
                }
                out.push_back(std::move(p));
            }
        }
    }

    // Winding: across each edge of exactly two triangles, neighbours agree when they run it
    // opposite ways. Per edge-connected piece, the triangles that disagree with the larger
    // share are flipped; a closed piece that agrees but encloses a negative volume is inward.
    {
        const std::size_t n = tris.size();
        std::vector<int> parity(n, -1);
        std::vector<std::size_t> piece(n, 0);
        std::vector<std::vector<std::size_t>> pieces;
        for (std::size_t seed = 0; seed < n; ++seed) {
            if (parity[seed] >= 0) {
                continue;
            }
            pieces.emplace_back();
            std::vector<std::size_t> stack{seed};
            parity[seed] = 0;
            while (!stack.empty()) {
                const std::size_t t = stack.back();
                stack.pop_back();
                piece[t] = pieces.size() - 1;
                pieces.back().push_back(t);
                for (int k = 0; k < 3; ++k) {
                    const Index a = tris[t][k], c = tris[t][(k + 1) % 3];
                    if (a == c) {
                        continue;
                    }
                    const auto& ts = byEdge.at(edgeKey(a, c));
                    if (ts.size() != 2) {
                        continue;
                    }
                    const std::size_t o = ts[0] == t ? ts[1] : ts[0];
                    if (parity[o] < 0) {
                        // Agreeing neighbours run the edge c -> a.
                        parity[o] = runs(tris[o], c, a) ? parity[t] : 1 - parity[t];
                        stack.push_back(o);
                    }
                }
            }
        }
        for (const std::vector<std::size_t>& members : pieces) {
            std::size_t odd = 0;
            bool closed = true;
            for (std::size_t t : members) {
                odd += parity[t] == 1;
                for (int k = 0; k < 3; ++k) {
                    const Index a = tris[t][k], c = tris[t][(k + 1) % 3];
                    closed = closed && a != c && byEdge.at(edgeKey(a, c)).size() == 2;
                }
            }
            const int minority = 2 * odd > members.size() ? 0 : 1;
            std::vector<std::size_t> flipped;
            double volume = 0;
            for (std::size_t t : members) {
                const Triangle& tri = tris[t];
                const double v = x[tri[0]].dot(x[tri[1]].cross(x[tri[2]])) / 6.0;
                volume += parity[t] == minority ? -v : v;
                if (parity[t] == minority) {
                    flipped.push_back(t);
                }
            }
            if (!flipped.empty()) {
                SurfaceProblem p;
                p.kind = SurfaceProblem::Kind::FlippedFaces;
                p.body = b;
                p.text = who + std::to_string(flipped.size()) +
                         " triangle(s) wound against their neighbours, first " +
                         std::to_string(flipped.front());
                for (std::size_t t : flipped) {
                    p.triangles.push_back(tris[t]);
                }
                out.push_back(std::move(p));
            } else if (closed && volume < 0) {
                SurfaceProblem p;
                p.kind = SurfaceProblem::Kind::FlippedFaces;
                p.body = b;
                p.text = who + "a closed piece of " + std::to_string(members.size()) +
                         " triangles is wound inward (its volume is negative)";
                for (std::size_t t : members) {
                    p.triangles.push_back(tris[t]);
                }
                out.push_back(std::move(p));
            }
        }
    }

    for (std::size_t t = 0; t < tris.size(); ++t) {
        if (degenerateTriangle(x, tris[t])) {
            SurfaceProblem p;
            p.kind = SurfaceProblem::Kind::Degenerate;
            p.body = b;
            p.text = who + "triangle " + std::to_string(t) + " has no area (particles " +
                     local(tris[t][0]) + ", " + local(tris[t][1]) + ", " + local(tris[t][2]) + ")";
            p.points.assign(tris[t].begin(), tris[t].end());
            p.triangles.push_back(tris[t]);
            out.push_back(std::move(p));
        }
    }
}

} // namespace

std::string_view toString(SurfaceProblem::Kind kind) {
    switch (kind) {
    case SurfaceProblem::Kind::Hole:
        return "hole";
    case SurfaceProblem::Kind::NonManifoldEdge:
        return "non-manifold edge";
    case SurfaceProblem::Kind::NonManifoldVertex:
        return "non-manifold vertex";
    case SurfaceProblem::Kind::FlippedFaces:
        return "flipped faces";
    case SurfaceProblem::Kind::Degenerate:
        return "degenerate triangle";
    case SurfaceProblem::Kind::SelfIntersection:
        return "self-intersection";
    case SurfaceProblem::Kind::BodiesCross:
        return "bodies cross";
    case SurfaceProblem::Kind::BodyInside:
        return "body inside another";
    }
    return "";
}

std::vector<SurfaceProblem> locateSurfaceProblems(const Scene& scene, const SurfaceReport& report,
                                                  std::size_t limit) {
    std::vector<SurfaceProblem> out;
    for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
        if (!scene.bodies[b].triangles.empty()) {
            locateBody(scene, b, out);
        }
    }
    SurfaceProblem rest;
    std::size_t listed = 0, more = 0;
    for (const TriangleIntersection& i : report.intersections) {
        const Body& a = scene.bodies.at(i.bodyA);
        const Body& c = scene.bodies.at(i.bodyB);
        const Triangle& ta = a.triangles.at(i.triangleA);
        const Triangle& tc = c.triangles.at(i.triangleB);
        if (listed >= limit) {
            ++more;
            rest.triangles.push_back(ta);
            rest.triangles.push_back(tc);
            continue;
        }
        ++listed;
        SurfaceProblem p;
        p.body = i.bodyA;
        if (i.bodyA == i.bodyB) {
            p.kind = SurfaceProblem::Kind::SelfIntersection;
            p.text = "body '" + a.name + "': triangles " + std::to_string(i.triangleA) + " and " +
                     std::to_string(i.triangleB) + " cross each other";
        } else {
            p.kind = SurfaceProblem::Kind::BodiesCross;
            p.text = "bodies '" + a.name + "' and '" + c.name + "' cross: triangle " +
                     std::to_string(i.triangleA) + " of '" + a.name + "' and " +
                     std::to_string(i.triangleB) + " of '" + c.name + "'";
        }
        p.triangles = {ta, tc};
        out.push_back(std::move(p));
    }
    for (const auto& [inner, outer] : report.nested) {
        SurfaceProblem p;
        p.kind = SurfaceProblem::Kind::BodyInside;
        p.body = inner;
        p.text = "body '" + scene.bodies[inner].name + "' lies inside body '" +
                 scene.bodies[outer].name + "'";
        p.triangles = scene.bodies[inner].triangles;
        out.push_back(std::move(p));
    }
    if (more > 0) {
        rest.kind = SurfaceProblem::Kind::SelfIntersection;
        rest.body = report.intersections.back().bodyA;
        rest.text = "and " + std::to_string(more) + " more pairs of crossing triangles";
        out.push_back(std::move(rest));
    }
    return out;
}

Bounds problemBounds(const Scene& scene, const SurfaceProblem& problem) {
    const auto& x = scene.particles.positions;
    Bounds b;
    for (Index p : problem.points) {
        b.add(x[p]);
    }
    for (const auto& e : problem.edges) {
        b.add(x[e[0]]);
        b.add(x[e[1]]);
    }
    for (const Triangle& t : problem.triangles) {
        for (Index p : t) {
            b.add(x[p]);
        }
    }
    return b;
}

} // namespace pbd
