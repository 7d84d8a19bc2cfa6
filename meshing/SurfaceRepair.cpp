#include "meshing/SurfaceRepair.h"

#include "meshing/RepairCgal.h"
#include "meshing/SurfaceCheck.h"
#include "meshing/SurfaceTopology.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <unordered_map>

namespace pbd {

using namespace surface;

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

// Gives each vertex one copy per fan of triangles around it, fans joined only across edges with
// exactly two triangles: a vertex where surfaces touch at a point, and the ends of an edge that
// more than two triangles share, come apart. Returns the copies added.
std::size_t splitNonManifold(Particles& particles, Body& body) {
    auto& tris = body.triangles;
    const std::size_t n = tris.size();
    UnionFind corners(3 * n);
    std::unordered_map<std::uint64_t, std::vector<std::size_t>> byEdge; // corner (3t + k) of a
    byEdge.reserve(n * 2);
    for (std::size_t t = 0; t < n; ++t) {
        for (int k = 0; k < 3; ++k) {
            byEdge[edgeKey(tris[t][k], tris[t][(k + 1) % 3])].push_back(3 * t + k);
        }
    }
    auto cornerOf = [&](std::size_t t, Index v) {
        for (int k = 0; k < 3; ++k) {
            if (tris[t][k] == v) {
                return 3 * t + k;
            }
        }
        return 3 * t;
    };
    for (const auto& [key, uses] : byEdge) {
        if (uses.size() != 2) {
            continue;
        }
        const std::size_t t1 = uses[0] / 3, t2 = uses[1] / 3;
        for (Index v : {Index(key >> 32), Index(key & 0xffffffffu)}) {
            corners.unite(cornerOf(t1, v), cornerOf(t2, v));
        }
    }
    std::vector<long> copyOfRoot(3 * n, -1);
    std::vector<bool> claimed(particles.size(), false);
    std::vector<Index> split; // vertices that got copies, each once
    std::size_t added = 0;
    for (std::size_t c = 0; c < 3 * n; ++c) {
        const std::size_t root = corners.find(c);
        Index& v = tris[c / 3][c % 3];
        if (copyOfRoot[root] < 0) {
            if (!claimed[v]) {
                claimed[v] = true;
                copyOfRoot[root] = long(v);
            } else {
                if (split.empty() || split.back() != v) {
                    split.push_back(v);
                }
                copyOfRoot[root] =
                    long(particles.add(particles.positions[v], particles.inverseMasses[v]));
                ++body.particleCount;
                ++added;
            }
        }
        v = Index(copyOfRoot[root]);
    }
    if (added == 0) {
        return 0;
    }
    // The copies still coincide, so the surfaces would still touch there (a crossing for
    // TetGen): each copy, and the vertex it came from, steps 1% of the way towards the middle
    // of its own fan's neighbours, into its own surface.
    std::sort(split.begin(), split.end());
    split.erase(std::unique(split.begin(), split.end()), split.end());
    std::vector<Vec3> sum(particles.size(), Vec3::Zero());
    std::vector<int> count(particles.size(), 0);
    for (std::size_t c = 0; c < 3 * n; ++c) {
        const Triangle& t = tris[c / 3];
        const Index v = t[c % 3];
        for (int k = 1; k < 3; ++k) {
            sum[v] += particles.positions[t[(c % 3 + k) % 3]];
            ++count[v];
        }
    }
    std::vector<char> isSplit(particles.size(), 0);
    for (Index v : split) {
        isSplit[v] = 1;
    }
    for (std::size_t i = 0; i < particles.size(); ++i) {
        const bool copy = i >= particles.size() - added;
        if ((copy || isSplit[i]) && count[i] > 0) {
            const Vec3 middle = sum[i] / Real(count[i]);
            particles.positions[i] += 0.01 * (middle - particles.positions[i]);
        }
    }
    return added;
}

// The border loops of an oriented surface, each as its vertices in the order the triangles
// traverse the border; nullopt when a vertex has more than one border edge leaving it.
std::optional<std::vector<std::vector<Index>>> borderLoops(const Body& body) {
    const auto uses = edgeUses(body.triangles);
    std::unordered_map<Index, Index> next;
    for (const Triangle& t : body.triangles) {
        for (int k = 0; k < 3; ++k) {
            const Index a = t[k], b = t[(k + 1) % 3];
            auto it = uses.find(edgeKey(a, b));
            if (it != uses.end() && it->second.count == 1) {
                if (!next.emplace(a, b).second) {
                    return std::nullopt;
                }
            }
        }
    }
    std::vector<std::vector<Index>> loops;
    std::unordered_map<Index, bool> visited;
    for (const auto& [start, unused] : next) {
        (void)unused;
        if (visited[start]) {
            continue;
        }
        std::vector<Index> loop;
        Index v = start;
        while (!visited[v]) {
            visited[v] = true;
            loop.push_back(v);
            auto it = next.find(v);
            if (it == next.end()) {
                return std::nullopt; // the border does not close
            }
            v = it->second;
        }
        if (v != start) {
            return std::nullopt;
        }
        loops.push_back(std::move(loop));
    }
    return loops;
}

// The body's referenced vertices (compacted, in first-use order) and its triangles over them.
void compact(const Scene& one, std::vector<Vec3>& points, std::vector<Triangle>& triangles) {
    const Body& body = one.bodies[0];
    std::vector<long> index(one.particles.size(), -1);
    points.clear();
    triangles = body.triangles;
    for (Triangle& t : triangles) {
        for (Index& v : t) {
            if (index[v] < 0) {
                index[v] = long(points.size());
                points.push_back(one.particles.positions[v]);
            }
            v = Index(index[v]);
        }
    }
}

// Replaces the one-body scene's surface.
void replaceSurface(Scene& one, const std::vector<Vec3>& points, std::vector<Triangle> triangles,
                    std::vector<std::array<Vec2, 3>> uvs) {
    const Real inverseMass = one.particles.size() > 0 ? one.particles.inverseMasses[0] : 1.0;
    one.particles = Particles{};
    for (const Vec3& p : points) {
        one.particles.add(p, inverseMass);
    }
    Body& body = one.bodies[0];
    body.firstParticle = 0;
    body.particleCount = Index(points.size());
    body.triangles = std::move(triangles);
    body.triangleUVs = std::move(uvs);
}

Bounds boundsOf(const Scene& one) {
    Bounds b;
    for (const Triangle& t : one.bodies[0].triangles) {
        for (Index v : t) {
            b.add(one.particles.positions[v]);
        }
    }
    return b;
}

std::string fixed(double value, int digits = 3) {
    std::ostringstream s;
    s.precision(digits);
    s << value;
    return s.str();
}

// Replaces the soup by its alpha wrap; fills `w` (alpha, offset, distances, volume after).
// `sceneDiagonal`: a small part is not wrapped finer than 1/500 of the whole scene (a wrap's size
// grows with (diagonal / alpha)^2; a speck of a large model would otherwise cost seconds).
bool wrapSoup(std::vector<Vec3>& points, std::vector<Triangle>& triangles,
              const RepairOptions& options, double sceneDiagonal, WrapReport& w) {
    Bounds bounds;
    for (const Vec3& p : points) {
        bounds.add(p);
    }
    const double diagonal = bounds.size().norm();
    w.alpha =
        options.wrapAlpha > 0 ? options.wrapAlpha : std::max(diagonal / 50, sceneDiagonal / 500);
    w.offset = options.wrapOffset > 0 ? options.wrapOffset : w.alpha / 30;
    cgal::Wrap wrapped = cgal::alphaWrap(points, triangles, w.alpha, w.offset);
    if (wrapped.triangles.empty()) {
        return false;
    }
    w.volumeAfter = wrapped.volume;
    w.wrapToOriginal = wrapped.wrapToInput;
    w.originalToWrap = wrapped.inputToWrap;
    w.hausdorffError = wrapped.hausdorffError;
    w.trianglesAfter = wrapped.triangles.size();
    points = std::move(wrapped.points);
    triangles = std::move(wrapped.triangles);
    return true;
}

std::string describeWrap(const WrapReport& w) {
    std::string change = "no volume before";
    if (w.volumeBefore > 0) {
        change = "volume " + fixed(100.0 * (w.volumeAfter / w.volumeBefore - 1.0), 3) + "%";
    }
    return "wrapped (alpha " + fixed(w.alpha) + " m, offset " + fixed(w.offset) +
           " m): " + std::to_string(w.trianglesAfter) + " triangles, within " +
           fixed(w.wrapToOriginal) + " m of the original, which is within " +
           fixed(w.originalToWrap) + " m of it (Hausdorff, ±" + fixed(w.hausdorffError, 2) +
           " m), " + change;
}

// The ladder on a scene of one body whose particles are its own (firstParticle 0).
BodyRepair repairBody(Scene& one, const RepairOptions& options, double sceneDiagonal) {
    Body& body = one.bodies[0];
    BodyRepair r;
    r.body = body.name;
    const std::string who = "body '" + body.name + "': ";
    auto step = [&](const char* rung, std::string what) {
        r.rungs.emplace_back(rung);
        r.actions.push_back(who + what);
    };
    auto check = [&](bool intersections) {
        return checkSurfaces(one, intersections).bodies.front();
    };
    const auto& x = one.particles.positions;
    BodySurfaceReport c = check(false);
    const bool startedClosed = c.triangles > 0 && c.boundaryEdges == 0;
    const std::size_t trianglesBefore = c.triangles;

    if (c.boundaryEdges > 0 && options.stitchTolerance > 0) {
        const std::size_t merged = stitchBorders(x, body, options.stitchTolerance);
        if (merged > 0) {
            const std::size_t collapsed = removeTriangles(body, [&](std::size_t t) {
                const Triangle& tri = body.triangles[t];
                return tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2];
            });
            const std::size_t duplicates = removeDuplicateTriangles(body);
            step("stitch", "stitched " + std::to_string(merged) +
                               " border vertex(es) onto their neighbours (" +
                               std::to_string(collapsed + duplicates) +
                               " triangle(s) collapsed or duplicated and removed)");
            c = check(false);
        }
    }
    if (c.degenerateTriangles > 0 && options.dropDegenerate) {
        const std::size_t n = removeTriangles(
            body, [&](std::size_t t) { return degenerateTriangle(x, body.triangles[t]); });
        const std::size_t duplicates = removeDuplicateTriangles(body);
        step("degenerate", "dropped " + std::to_string(n) + " degenerate triangle(s)" +
                               (duplicates ? " and " + std::to_string(duplicates) + " duplicate(s)"
                                           : std::string()));
        c = check(false);
    }
    if ((c.nonManifoldEdges > 0 || c.nonManifoldVertices > 0) && options.splitNonManifold) {
        const std::size_t edges = c.nonManifoldEdges, vertices = c.nonManifoldVertices;
        const std::size_t copies = splitNonManifold(one.particles, body);
        step("non_manifold", "split " + std::to_string(vertices) + " non-manifold vertex(es) and " +
                                 std::to_string(edges) + " non-manifold edge(s): " +
                                 std::to_string(copies) + " vertex copies");
        c = check(false);
    }
    if (options.orientOutward && (c.inconsistentEdges > 0 || (c.closed() && c.signedVolume < 0))) {
        const std::size_t flipped = orientBody(x, body);
        if (flipped > 0) {
            step("orient", "flipped " + std::to_string(flipped) +
                               " triangle(s) to wind consistently and outward");
        }
        c = check(false);
    }
    bool meantSolid = startedClosed;
    if (c.boundaryEdges > 0 && options.maxHole > 0) {
        const Bounds bounds = boundsOf(one);
        const double largest = options.maxHole * bounds.size().norm();
        const auto loops = borderLoops(body);
        bool allSmall = loops.has_value() && !loops->empty();
        double longest = 0;
        if (loops) {
            for (const auto& loop : *loops) {
                double perimeter = 0;
                for (std::size_t i = 0; i < loop.size(); ++i) {
                    perimeter += (x[loop[i]] - x[loop[(i + 1) % loop.size()]]).norm();
                }
                longest = std::max(longest, perimeter);
                allSmall = allSmall && perimeter <= largest && loop.size() <= 2000;
            }
        }
        if (allSmall) {
            meantSolid = true;
            std::size_t added = 0, unfilled = 0;
            for (const auto& loop : *loops) {
                std::vector<Vec3> polyline;
                for (auto it = loop.rbegin(); it != loop.rend(); ++it) {
                    polyline.push_back(x[*it]);
                }
                const auto patch = cgal::triangulateHole(polyline);
                if (patch.empty()) {
                    ++unfilled;
                    continue;
                }
                for (const auto& p : patch) {
                    const std::size_t m = loop.size();
                    body.triangles.push_back({loop[m - 1 - std::size_t(p[0])],
                                              loop[m - 1 - std::size_t(p[1])],
                                              loop[m - 1 - std::size_t(p[2])]});
                    if (body.hasUVs()) {
                        body.triangleUVs.push_back({Vec2::Zero(), Vec2::Zero(), Vec2::Zero()});
                    }
                    ++added;
                }
            }
            orientBody(x, body);
            step("fill_holes", "filled " + std::to_string(loops->size() - unfilled) + " of " +
                                   std::to_string(loops->size()) + " hole(s) (the longest border " +
                                   fixed(longest) + " m) with " + std::to_string(added) +
                                   " triangle(s)");
            c = check(false);
        }
    }
    if (meantSolid && c.closed() && options.removeSelfIntersections) {
        c = check(true);
        if (c.selfIntersections > 0) {
            const std::size_t pairs = c.selfIntersections;
            std::vector<Vec3> points;
            std::vector<Triangle> triangles;
            std::vector<long> origin;
            compact(one, points, triangles);
            if (cgal::removeSelfIntersections(points, triangles, origin)) {
                std::vector<std::array<Vec2, 3>> uvs;
                if (body.hasUVs()) {
                    for (long o : origin) {
                        uvs.push_back(
                            o >= 0 ? body.triangleUVs[std::size_t(o)]
                                   : std::array<Vec2, 3>{Vec2::Zero(), Vec2::Zero(), Vec2::Zero()});
                    }
                }
                replaceSurface(one, points, std::move(triangles), std::move(uvs));
                step("self_intersections",
                     "removed " + std::to_string(pairs) +
                         " crossing triangle pair(s) and refilled the regions around them");
            } else {
                r.actions.push_back(who + "could not remove " + std::to_string(pairs) +
                                    " crossing triangle pair(s) locally");
            }
            c = check(true);
        }
    } else if (meantSolid) {
        c = check(true);
    }
    const bool solidNow = c.outward() && c.manifold() && c.selfIntersections == 0;
    const bool wrap =
        options.wrap == WrapMode::Always || (options.wrap == WrapMode::Auto && meantSolid &&
                                             !solidNow && body.kind == BodyKind::Surface);
    if (wrap && c.triangles > 0) {
        std::vector<Vec3> points;
        std::vector<Triangle> triangles;
        compact(one, points, triangles);
        WrapReport w;
        w.volumeBefore = c.signedVolume; // after the other rungs (oriented), before the wrap
        w.trianglesBefore = trianglesBefore;
        if (wrapSoup(points, triangles, options, sceneDiagonal, w)) {
            replaceSurface(one, points, std::move(triangles), {});
            r.wrapped = true;
            r.wrap = w;
            step("wrap", describeWrap(w));
            c = check(true);
        } else {
            r.actions.push_back(who + "the alpha wrap produced no surface");
        }
    }
    r.solid = c.outward() && c.manifold() && c.selfIntersections == 0;
    return r;
}

} // namespace

bool BodyRepair::ran(const std::string& rung) const {
    return std::find(rungs.begin(), rungs.end(), rung) != rungs.end();
}

RepairReport repairSurfaces(Scene& scene, const RepairOptions& options) {
    RepairReport report;
    if (scene.constraints.elementCount() > 0 || !scene.air.empty()) {
        report.actions.push_back(
            "surfaces not repaired: the scene already has constraints or air (repair works on "
            "imported meshes)");
        return report;
    }
    Particles particles;
    const bool forces = !scene.particles.forces.empty();
    auto append = [&](const Particles& from, Index i) {
        const Index j = particles.add(from.positions[i], from.inverseMasses[i]);
        particles.velocities[j] = from.velocities[i];
        if (forces) {
            particles.forces.push_back(i < from.forces.size() ? from.forces[i] : Vec3::Zero());
        }
    };
    Bounds sceneBounds;
    for (const Body& body : scene.bodies) {
        for (const Triangle& t : body.triangles) {
            for (Index v : t) {
                sceneBounds.add(scene.particles.positions[v]);
            }
        }
    }
    const double sceneDiagonal = sceneBounds.size().norm();
    for (Body& body : scene.bodies) {
        const Index first = body.firstParticle;
        const Index offset = Index(particles.size());
        if (body.triangles.empty() || !body.tets.empty()) {
            // Kept as it is (a tet body's surface is derived from its tets), renumbered.
            for (Index i = 0; i < body.particleCount; ++i) {
                append(scene.particles, first + i);
            }
            for (Triangle& t : body.triangles) {
                for (Index& v : t) {
                    v = v - first + offset;
                }
            }
            for (Tetrahedron& t : body.tets) {
                for (Index& v : t) {
                    v = v - first + offset;
                }
            }
            body.firstParticle = offset;
            continue;
        }
        Scene one;
        for (Index i = 0; i < body.particleCount; ++i) {
            const Index j = one.particles.add(scene.particles.positions[first + i],
                                              scene.particles.inverseMasses[first + i]);
            one.particles.velocities[j] = scene.particles.velocities[first + i];
        }
        one.bodies.push_back(std::move(body));
        Body& local = one.bodies[0];
        for (Triangle& t : local.triangles) {
            for (Index& v : t) {
                v -= first;
            }
        }
        local.firstParticle = 0;
        BodyRepair repaired = repairBody(one, options, sceneDiagonal);
        report.actions.insert(report.actions.end(), repaired.actions.begin(),
                              repaired.actions.end());
        report.bodies.push_back(std::move(repaired));
        body = std::move(one.bodies[0]);
        for (Index i = 0; i < Index(one.particles.size()); ++i) {
            append(one.particles, i);
        }
        for (Triangle& t : body.triangles) {
            for (Index& v : t) {
                v += offset;
            }
        }
        body.firstParticle = offset;
        body.particleCount = Index(one.particles.size());
    }
    scene.particles = std::move(particles);
    return report;
}

std::vector<MergedOverlap> mergeOverlaps(Scene& scene, const SurfaceReport& checks,
                                         OverlapMode mode, const RepairOptions& options) {
    std::vector<MergedOverlap> merged;
    if (mode == OverlapMode::Keep || (checks.intersections.empty() && checks.nested.empty()) ||
        scene.constraints.elementCount() > 0 || !scene.air.empty()) {
        return merged;
    }
    const std::size_t n = scene.bodies.size();
    UnionFind groups(n);
    bool any = false;
    std::vector<bool> crossed(n, false), inside(n, false); // how each joined its group
    for (const TriangleIntersection& i : checks.intersections) {
        if (i.bodyA != i.bodyB && i.bodyA < n && i.bodyB < n) {
            groups.unite(i.bodyA, i.bodyB);
            crossed[i.bodyA] = crossed[i.bodyB] = true;
            any = true;
        }
    }
    for (const auto& [inner, outer] : checks.nested) {
        if (inner < n && outer < n) {
            groups.unite(inner, outer);
            inside[inner] = true;
            any = true;
        }
    }
    if (!any) {
        return merged;
    }
    std::vector<std::vector<std::size_t>> members(n);
    for (std::size_t b = 0; b < n; ++b) {
        members[groups.find(b)].push_back(b);
    }
    const auto& x = scene.particles.positions;
    auto soupOf = [&](std::size_t b, std::vector<Vec3>& points, std::vector<Triangle>& tris) {
        const Body& body = scene.bodies[b];
        const Index offset = Index(points.size());
        for (Index i = 0; i < body.particleCount; ++i) {
            points.push_back(x[body.firstParticle + i]);
        }
        for (Triangle t : body.triangles) {
            for (Index& v : t) {
                v = v - body.firstParticle + offset;
            }
            tris.push_back(t);
        }
    };
    // The surface each group's first body gets; the others are dropped.
    std::vector<std::optional<std::pair<std::vector<Vec3>, std::vector<Triangle>>>> replacement(n);
    std::vector<bool> dropped(n, false);
    for (const auto& group : members) {
        if (group.size() < 2) {
            continue;
        }
        bool anyClosed = false;
        bool allSurfaces = true;
        for (std::size_t b : group) {
            anyClosed = anyClosed || checks.bodies[b].closed();
            allSurfaces = allSurfaces && scene.bodies[b].tets.empty() &&
                          (scene.bodies[b].kind == BodyKind::Surface);
        }
        if (!anyClosed || !allSurfaces) {
            continue;
        }
        MergedOverlap m;
        m.body = scene.bodies[group.front()].name;
        for (std::size_t b : group) {
            m.parts.push_back(scene.bodies[b].name);
        }
        std::vector<Vec3> points;
        std::vector<Triangle> triangles;
        if (mode == OverlapMode::Union) {
            soupOf(group.front(), points, triangles);
            m.united = true;
            for (std::size_t k = 1; k < group.size() && m.united; ++k) {
                std::vector<Vec3> p;
                std::vector<Triangle> t;
                soupOf(group[k], p, t);
                m.united = cgal::unite(points, triangles, p, t);
            }
            if (m.united) { // a union that is not clean gives way to the wrap
                Scene one;
                one.bodies.emplace_back().kind = BodyKind::Surface;
                replaceSurface(one, points, triangles, {});
                const BodySurfaceReport c = checkSurfaces(one).bodies.front();
                m.united = c.outward() && c.manifold() && c.selfIntersections == 0;
            }
        }
        std::string names;
        for (std::size_t k = 0; k < m.parts.size(); ++k) {
            names += (k ? (k + 1 == m.parts.size() ? " and '" : ", '") : "'") + m.parts[k] + "'";
        }
        const bool anyCrossed =
            std::any_of(group.begin(), group.end(), [&](std::size_t b) { return crossed[b]; });
        const bool anyInside =
            std::any_of(group.begin(), group.end(), [&](std::size_t b) { return inside[b]; });
        const std::string why = anyCrossed && anyInside ? " cross or lie one inside another"
                                : anyCrossed            ? " cross"
                                                        : " lie one inside another";
        if (m.united) {
            m.action = "bodies " + names + why + ": replaced by their union '" + m.body + "' (" +
                       std::to_string(triangles.size()) + " triangles)";
        } else {
            points.clear();
            triangles.clear();
            double volume = 0;
            for (std::size_t b : group) {
                soupOf(b, points, triangles);
                volume += checks.bodies[b].closed() ? checks.bodies[b].signedVolume : 0.0;
            }
            m.wrap.volumeBefore = volume;
            m.wrap.trianglesBefore = triangles.size();
            if (!wrapSoup(points, triangles, options, 0.0, m.wrap)) {
                continue;
            }
            m.action =
                "bodies " + names + why + ": wrapped together into '" + m.body + "', " +
                describeWrap(m.wrap) +
                (mode == OverlapMode::Union ? " (not every part bounds a volume, so no union)"
                                            : "");
        }
        replacement[group.front()] = std::make_pair(std::move(points), std::move(triangles));
        for (std::size_t k = 1; k < group.size(); ++k) {
            dropped[group[k]] = true;
        }
        merged.push_back(std::move(m));
    }
    if (merged.empty()) {
        return merged;
    }
    Scene rebuilt = scene;
    rebuilt.particles = Particles{};
    rebuilt.bodies.clear();
    for (std::size_t b = 0; b < n; ++b) {
        if (dropped[b]) {
            continue;
        }
        Body body = scene.bodies[b];
        const Index offset = Index(rebuilt.particles.size());
        if (replacement[b]) {
            const auto& [points, triangles] = *replacement[b];
            for (const Vec3& p : points) {
                rebuilt.particles.add(p, 1.0);
            }
            body.triangles = triangles;
            for (Triangle& t : body.triangles) {
                for (Index& v : t) {
                    v += offset;
                }
            }
            body.triangleUVs.clear();
            body.particleCount = Index(points.size());
        } else {
            for (Index i = 0; i < body.particleCount; ++i) {
                const Index from = body.firstParticle + i;
                rebuilt.particles.add(scene.particles.positions[from],
                                      scene.particles.inverseMasses[from]);
            }
            for (Triangle& t : body.triangles) {
                for (Index& v : t) {
                    v = v - body.firstParticle + offset;
                }
            }
        }
        body.firstParticle = offset;
        rebuilt.bodies.push_back(std::move(body));
    }
    scene = std::move(rebuilt);
    return merged;
}

} // namespace pbd
