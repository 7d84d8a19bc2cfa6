#include "meshing/VolumeMeshing.h"

#include "core/base/Morton.h"
#include "core/scene/Topology.h"
#include "meshing/TriangleGrid.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <numbers>
#include <numeric>
#include <set>
#include <sstream>
#include <unordered_map>

namespace pbd {

namespace {

// The tets' indices in the Morton order of their centroids (ties by index), in the box of the
// points.
std::vector<std::size_t> mortonOrder(const std::vector<Tetrahedron>& tets,
                                     const std::vector<Vec3>& points) {
    Vec3 low = Vec3::Constant(std::numeric_limits<Real>::infinity());
    Vec3 high = -low;
    for (const Vec3& p : points) {
        low = low.cwiseMin(p);
        high = high.cwiseMax(p);
    }
    std::vector<Vec3> centroids(tets.size());
    for (std::size_t t = 0; t < tets.size(); ++t) {
        const Tetrahedron& c = tets[t];
        centroids[t] = (points[c[0]] + points[c[1]] + points[c[2]] + points[c[3]]) / 4.0;
    }
    return pbd::mortonOrder(centroids, low, high);
}

double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Solid angle of triangle (a, b, c) seen from p (Van Oosterom and Strackee).
Real solidAngle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
    const Vec3 ra = a - p, rb = b - p, rc = c - p;
    const Real la = ra.norm(), lb = rb.norm(), lc = rc.norm();
    const Real numerator = ra.dot(rb.cross(rc));
    const Real denominator = la * lb * lc + ra.dot(rb) * lc + rb.dot(rc) * la + rc.dot(ra) * lb;
    return 2 * std::atan2(numerator, denominator);
}

Real windingNumber(const std::vector<Vec3>& x, const std::vector<Triangle>& triangles,
                   const Vec3& p) {
    Real sum = 0;
    for (const Triangle& t : triangles) {
        sum += solidAngle(p, x[t[0]], x[t[1]], x[t[2]]);
    }
    return sum / (4 * std::numbers::pi);
}

// Nearest positive ray parameter where origin + s dir hits a triangle (Moeller-Trumbore).
Real rayHit(const std::vector<Vec3>& x, const std::vector<Triangle>& triangles, std::size_t skip,
            const Vec3& origin, const Vec3& dir) {
    Real best = std::numeric_limits<Real>::infinity();
    for (std::size_t i = 0; i < triangles.size(); ++i) {
        if (i == skip) {
            continue;
        }
        const Vec3& a = x[triangles[i][0]];
        const Vec3 e1 = x[triangles[i][1]] - a;
        const Vec3 e2 = x[triangles[i][2]] - a;
        const Vec3 h = dir.cross(e2);
        const Real det = e1.dot(h);
        if (std::abs(det) < 1e-300) {
            continue;
        }
        const Vec3 s = origin - a;
        const Real u = s.dot(h) / det;
        if (u < 0 || u > 1) {
            continue;
        }
        const Vec3 q = s.cross(e1);
        const Real v = dir.dot(q) / det;
        if (v < 0 || u + v > 1) {
            continue;
        }
        const Real t = e2.dot(q) / det;
        if (t > 0 && t < best) {
            best = t;
        }
    }
    return best;
}

struct LocalSurface {
    std::vector<Index> globalOf; // local vertex -> global particle
    std::vector<Vec3> points;
    std::vector<Triangle> triangles; // local indices
};

LocalSurface localSurface(const std::vector<Vec3>& x, const std::vector<Triangle>& triangles) {
    LocalSurface s;
    std::unordered_map<Index, Index> localOf;
    for (const Triangle& t : triangles) {
        Triangle local;
        for (int k = 0; k < 3; ++k) {
            auto [it, inserted] = localOf.try_emplace(t[k], Index(s.globalOf.size()));
            if (inserted) {
                s.globalOf.push_back(t[k]);
                s.points.push_back(x[t[k]]);
            }
            local[k] = it->second;
        }
        s.triangles.push_back(local);
    }
    return s;
}

std::uint64_t faceKey(Index a, Index b, Index c) {
    std::array<Index, 3> f{a, b, c};
    std::sort(f.begin(), f.end());
    return (std::uint64_t(f[0]) * 0x9E3779B97F4A7C15ULL) ^ (std::uint64_t(f[1]) << 21) ^
           (std::uint64_t(f[2]) << 42) ^ std::uint64_t(f[2]);
}

// How many of `triangles` are faces of `tets` (as vertex sets).
std::size_t facesPresent(const std::vector<Triangle>& triangles,
                         const std::vector<Tetrahedron>& tets) {
    std::multimap<std::uint64_t, std::array<Index, 3>> faces;
    for (const Tetrahedron& t : tets) {
        static constexpr int f[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};
        for (const auto& face : f) {
            std::array<Index, 3> v{t[face[0]], t[face[1]], t[face[2]]};
            std::sort(v.begin(), v.end());
            faces.emplace(faceKey(v[0], v[1], v[2]), v);
        }
    }
    std::size_t found = 0;
    for (const Triangle& tri : triangles) {
        std::array<Index, 3> v = tri;
        std::sort(v.begin(), v.end());
        auto [lo, hi] = faces.equal_range(faceKey(v[0], v[1], v[2]));
        found += std::any_of(lo, hi, [&](const auto& e) { return e.second == v; });
    }
    return found;
}

std::string switchesFor(const char* base, double ratio, double maxVolume) {
    std::ostringstream s;
    s.precision(10);
    s << base;
    if (ratio > 0) {
        s << 'q' << ratio;
    }
    if (maxVolume > 0) {
        s << 'a' << maxVolume;
    }
    return s.str();
}

// Maps a sub-range [from, to) of the caller's progress onto TetGen's progress.
ProgressCallback subProgress(const ProgressCallback& progress, double from, double to,
                             const std::string& prefix) {
    if (!progress) {
        return {};
    }
    return [=](double f, const std::string& stage) {
        return progress(f < 0 ? -1.0 : from + (to - from) * f, prefix + stage);
    };
}

} // namespace

Result<Vec3> interiorPoint(const std::vector<Vec3>& x, const std::vector<Triangle>& triangles) {
    std::vector<std::size_t> order(triangles.size());
    std::iota(order.begin(), order.end(), std::size_t(0));
    auto area = [&](std::size_t i) {
        const Triangle& t = triangles[i];
        return (x[t[1]] - x[t[0]]).cross(x[t[2]] - x[t[0]]).norm();
    };
    std::partial_sort(order.begin(), order.begin() + std::min<std::size_t>(16, order.size()),
                      order.end(), [&](std::size_t a, std::size_t b) { return area(a) > area(b); });
    for (std::size_t c = 0; c < std::min<std::size_t>(16, order.size()); ++c) {
        const Triangle& t = triangles[order[c]];
        const Vec3 centroid = (x[t[0]] + x[t[1]] + x[t[2]]) / 3.0;
        const Vec3 n = (x[t[1]] - x[t[0]]).cross(x[t[2]] - x[t[0]]);
        if (!(n.norm() > 0)) {
            continue;
        }
        const Vec3 inward = -n.normalized();
        const Real hit = rayHit(x, triangles, order[c], centroid, inward);
        if (!std::isfinite(hit)) {
            continue;
        }
        const Vec3 p = centroid + 0.5 * hit * inward;
        if (windingNumber(x, triangles, p) > 0.5) {
            return p;
        }
    }
    return Error{"no point inside the surface was found (is it closed and wound outward?)"};
}

Result<std::vector<BodyTetReport>> tetrahedralizeBodies(Scene& scene,
                                                        const std::vector<std::size_t>& bodies,
                                                        const TetOptions& options,
                                                        const ProgressCallback& progress) {
    if (!(scene.constraints.elementCount() == 0) || !scene.air.empty()) {
        return Error{"tetrahedralize the bodies before adding constraints or air"};
    }
    struct Meshed {
        LocalSurface surface;
        TetgenOutput output;
    };
    std::map<std::size_t, Meshed> meshed;
    std::vector<BodyTetReport> reports;
    for (std::size_t n = 0; n < bodies.size(); ++n) {
        const std::size_t b = bodies[n];
        const Body& body = scene.bodies.at(b);
        const auto start = std::chrono::steady_clock::now();
        Meshed m;
        m.surface = localSurface(scene.particles.positions, body.triangles);
        TetgenInput input;
        input.points = m.surface.points;
        input.facets = m.surface.triangles;
        TetgenRunOptions run;
        run.timeoutSeconds = options.timeoutSeconds;
        run.fault = options.fault;
        const double from = double(n) / double(bodies.size());
        const double to = double(n + 1) / double(bodies.size());
        run.progress = subProgress(progress, from, to, "body '" + body.name + "': ");
        Result<TetgenOutput> out =
            runTetgen(input, switchesFor("pYJ", options.radiusEdgeRatio, options.maxVolume), run);
        if (!out) {
            if (out.error() == kCancelledMessage) {
                return Error{kCancelledMessage};
            }
            return Error{"body '" + body.name + "': " + out.error()};
        }
        if (out->tets.empty()) {
            return Error{"body '" + body.name + "': TetGen produced no tets (is it closed?)"};
        }
        m.output = std::move(*out);
        BodyTetReport r;
        r.body = body.name;
        r.tets = m.output.tets.size();
        r.steinerPoints = m.output.points.size() - m.surface.points.size();
        r.inverted = orientPositively(m.output.tets, m.output.points);
        r.surfaceTriangles = m.surface.triangles.size();
        r.surfacePreserved = facesPresent(m.surface.triangles, m.output.tets);
        r.seconds = secondsSince(start);
        r.peakMemoryBytes = m.output.peakMemoryBytes;
        reports.push_back(r);
        meshed.emplace(b, std::move(m));
    }

    // Rebuild the particle array: each meshed body's particles become its surface vertices
    // followed by TetGen's interior points; other bodies keep theirs.
    Particles rebuilt;
    for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
        Body& body = scene.bodies[b];
        const Index first = Index(rebuilt.size());
        auto it = meshed.find(b);
        if (it == meshed.end()) {
            for (Index i = 0; i < body.particleCount; ++i) {
                const Index old = body.firstParticle + i;
                rebuilt.add(scene.particles.positions[old], scene.particles.inverseMasses[old]);
                rebuilt.velocities.back() = scene.particles.velocities[old];
            }
            const Index shift = first - body.firstParticle;
            for (Triangle& t : body.triangles) {
                for (Index& v : t) {
                    v += shift;
                }
            }
            for (Tetrahedron& t : body.tets) {
                for (Index& v : t) {
                    v += shift;
                }
            }
            body.firstParticle = first;
            continue;
        }
        const Meshed& m = it->second;
        for (const Vec3& p : m.output.points) {
            rebuilt.add(p, 0.0);
        }
        for (std::size_t t = 0; t < body.triangles.size(); ++t) {
            for (int k = 0; k < 3; ++k) {
                body.triangles[t][k] = first + m.surface.triangles[t][k];
            }
        }
        body.tets = m.output.tets;
        for (Tetrahedron& t : body.tets) {
            for (Index& v : t) {
                v += first;
            }
        }
        body.firstParticle = first;
        body.particleCount = Index(m.output.points.size());
        body.kind = BodyKind::TetBody;
        body.tetFrames.clear();
    }
    if (!scene.particles.forces.empty()) {
        rebuilt.forces.assign(rebuilt.size(), Vec3::Zero());
    }
    scene.particles = std::move(rebuilt);
    return reports;
}

namespace {

// Whether every edge of `triangles` is in exactly two of them.
bool isClosedSurface(const std::vector<Triangle>& triangles) {
    std::map<std::pair<Index, Index>, int> uses;
    for (const Triangle& t : triangles) {
        for (int k = 0; k < 3; ++k) {
            ++uses[std::minmax(t[k], t[(k + 1) % 3])];
        }
    }
    return !uses.empty() &&
           std::all_of(uses.begin(), uses.end(), [](const auto& e) { return e.second == 2; });
}

} // namespace

Result<AirReport> tessellateAir(Scene& scene, const AirOptions& options,
                                const ProgressCallback& progress) {
    if (!scene.air.empty()) {
        return Error{"the scene already has an air mesh"};
    }
    // The surfaces' particles keep their indices (TetGen's -Y keeps the boundary as it is) and
    // the air's own particles come after every other: the constraints stay as they are.
    const auto start = std::chrono::steady_clock::now();
    const auto& x = scene.particles.positions;
    AirReport report;

    TetgenInput input;
    std::unordered_map<Index, Index> localOf;
    std::vector<Index> globalOf;
    auto local = [&](Index global) {
        auto [it, inserted] = localOf.try_emplace(global, Index(globalOf.size()));
        if (inserted) {
            globalOf.push_back(global);
            input.points.push_back(x[global]);
        }
        return it->second;
    };
    Bounds bounds;
    for (const Body& body : scene.bodies) {
        if (body.triangles.empty()) {
            continue;
        }
        for (const Triangle& t : body.triangles) {
            input.facets.push_back({local(t[0]), local(t[1]), local(t[2])});
            for (Index v : t) {
                bounds.add(x[v]);
            }
        }
        // Closed bodies are not air: each gets a hole seed inside. A collider may be open (a
        // character's legs cut at the waist): its triangles are then internal facets, like a
        // cloth's.
        const bool closed = body.kind == BodyKind::TetBody || body.kind == BodyKind::Surface ||
                            (body.kind == BodyKind::Collider && isClosedSurface(body.triangles));
        if (closed) {
            Result<Vec3> inside = interiorPoint(x, body.triangles);
            if (!inside) {
                return Error{"body '" + body.name + "': " + inside.error()};
            }
            input.holes.push_back(*inside);
        }
    }
    if (bounds.empty()) {
        return Error{"there are no surfaces to put air around"};
    }
    const std::size_t surfaceVertices = globalOf.size();

    // The container: a box around everything, each face a grid of n x n squares.
    const Real margin = std::max(1e-6, options.margin) * bounds.size().maxCoeff();
    const Vec3 lo = bounds.min - Vec3::Constant(margin);
    const Vec3 hi = bounds.max + Vec3::Constant(margin);
    const int n = std::max(1, options.boxSubdivisions);
    std::map<std::array<int, 3>, Index> boxVertex;
    auto gridPoint = [&](int i, int j, int k) {
        auto [it, inserted] = boxVertex.try_emplace({i, j, k}, Index(input.points.size()));
        if (inserted) {
            input.points.push_back(lo + Vec3(i, j, k).cwiseProduct(hi - lo) / Real(n));
        }
        return it->second;
    };
    for (int axis = 0; axis < 3; ++axis) {
        for (int side = 0; side <= n; side += n) {
            for (int a = 0; a < n; ++a) {
                for (int b = 0; b < n; ++b) {
                    auto at = [&](int da, int db) {
                        std::array<int, 3> c{};
                        c[axis] = side;
                        c[(axis + 1) % 3] = a + da;
                        c[(axis + 2) % 3] = b + db;
                        return gridPoint(c[0], c[1], c[2]);
                    };
                    input.facets.push_back({at(0, 0), at(1, 0), at(1, 1)});
                    input.facets.push_back({at(0, 0), at(1, 1), at(0, 1)});
                }
            }
        }
    }
    report.boxVertices = input.points.size() - surfaceVertices;

    TetgenRunOptions run;
    run.timeoutSeconds = options.timeoutSeconds;
    run.fault = options.fault;
    run.progress = subProgress(progress, 0.0, 0.9, "air: ");
    Result<TetgenOutput> out =
        runTetgen(input, switchesFor("pYJ", options.radiusEdgeRatio, options.maxVolume), run);
    if (!out) {
        return out.error() == kCancelledMessage ? Error{kCancelledMessage}
                                                : Error{"air: " + out.error()};
    }
    TetgenOutput& mesh = *out;
    report.inverted = orientPositively(mesh.tets, mesh.points);
    report.peakMemoryBytes = mesh.peakMemoryBytes;

    // Local air: only the tets near the selected surfaces.
    std::vector<bool> keep(mesh.tets.size(), true);
    if (options.localDistance > 0) {
        std::vector<Triangle> near;
        for (const Body& body : scene.bodies) {
            const auto& names = options.localBodies;
            if (names.empty() || std::find(names.begin(), names.end(), body.name) != names.end()) {
                near.insert(near.end(), body.triangles.begin(), body.triangles.end());
            }
        }
        if (near.empty()) {
            return Error{"air: none of the bodies named for local air exists"};
        }
        const TriangleGrid grid(x, near);
        for (std::size_t t = 0; t < mesh.tets.size(); ++t) {
            // Kept when its centroid or any corner is near: tets touching the surface always
            // stay, so the local air still separates what it surrounds.
            const Tetrahedron& tet = mesh.tets[t];
            const Vec3 c = (mesh.points[tet[0]] + mesh.points[tet[1]] + mesh.points[tet[2]] +
                            mesh.points[tet[3]]) /
                           4.0;
            keep[t] = grid.nearest(c, options.localDistance).found ||
                      std::any_of(tet.begin(), tet.end(), [&](Index v) {
                          return grid.nearest(mesh.points[v], options.localDistance).found;
                      });
            report.droppedByDistance += !keep[t];
        }
    }

    // Air-only vertices (box and Steiner points) that a kept tet uses become air particles.
    Real meanMass = 0;
    std::size_t massCount = 0;
    for (Real w : scene.particles.inverseMasses) {
        if (w > 0) {
            meanMass += 1 / w;
            ++massCount;
        }
    }
    meanMass = massCount ? meanMass / Real(massCount) : 1e-3;
    std::vector<Index> globalIndex(mesh.points.size(), Index(-1));
    for (std::size_t i = 0; i < surfaceVertices; ++i) {
        globalIndex[i] = globalOf[i];
    }
    scene.air.firstParticle = Index(scene.particles.size());
    std::set<Index> shared;
    // The air tets in space-filling-curve order, and their own points numbered as they first
    // appear: a tet's neighbours and corners then sit near it in memory. Every air iteration
    // checks every tet's four corners; in TetGen's order they are four particles at random
    // (air-xl: 1.4 million air tets over 7 MB of particles).
    const std::vector<std::size_t> order = mortonOrder(mesh.tets, mesh.points);
    for (std::size_t t : order) {
        if (!keep[t]) {
            continue;
        }
        const Tetrahedron& corners = mesh.tets[t];
        const auto onBox = [&](Index v) {
            return v >= surfaceVertices && v < surfaceVertices + report.boxVertices;
        };
        if (options.dropContainer && std::any_of(corners.begin(), corners.end(), onBox)) {
            ++report.droppedByFilter;
            continue;
        }
        if (options.keep) {
            const bool fixed = std::all_of(corners.begin(), corners.end(), [&](Index v) {
                return v < surfaceVertices ? !(scene.particles.inverseMasses[globalOf[v]] > 0)
                                           : onBox(v);
            });
            const Vec3 centroid = (mesh.points[corners[0]] + mesh.points[corners[1]] +
                                   mesh.points[corners[2]] + mesh.points[corners[3]]) /
                                  4.0;
            if (!options.keep(centroid, fixed)) {
                ++report.droppedByFilter;
                continue;
            }
        }
        Tetrahedron global;
        for (int k = 0; k < 4; ++k) {
            const Index v = mesh.tets[t][k];
            if (globalIndex[v] == Index(-1)) {
                const bool box = v < surfaceVertices + report.boxVertices;
                // The container is fixed; a Steiner point in the air is free and weighs what
                // a body particle weighs on average (the solver gives it that weight anyway,
                // and no momentum: it is air, not matter).
                globalIndex[v] = scene.particles.add(mesh.points[v], box ? 0.0 : 1 / meanMass);
            } else if (v < surfaceVertices) {
                shared.insert(v);
            }
            global[k] = globalIndex[v];
        }
        scene.air.tets.push_back(global);
        report.volume += signedVolume(
            scene.particles.positions[global[0]], scene.particles.positions[global[1]],
            scene.particles.positions[global[2]], scene.particles.positions[global[3]]);
    }
    scene.air.particleCount = Index(scene.particles.size()) - scene.air.firstParticle;
    for (Index i = scene.air.firstParticle; i < scene.particles.size(); ++i) {
        if (scene.particles.inverseMasses[i] > 0) {
            ++report.steinerPoints;
        }
    }
    report.boxVertices = scene.air.particleCount - report.steinerPoints;
    report.sharedVertices = shared.size();
    report.tets = scene.air.tets.size();
    report.seconds = secondsSince(start);
    if (progress) {
        progress(1.0, "air: done");
    }
    return report;
}

Mat3 triangleFrame(const Vec3& x0, const Vec3& x1, const Vec3& x2, const Vec2* uv, bool* fromUVs) {
    const Vec3 e1 = x1 - x0;
    const Vec3 e2 = x2 - x0;
    const Vec3 n = e1.cross(e2).normalized();
    Vec3 u = e1;
    bool usedUVs = false;
    if (uv != nullptr) {
        // SBD eq. 37: (t_u, t_v) = (x1 - x0, x2 - x0) (uv1 - uv0, uv2 - uv0)^-1
        Eigen::Matrix2d D;
        D << uv[1].x() - uv[0].x(), uv[2].x() - uv[0].x(), uv[1].y() - uv[0].y(),
            uv[2].y() - uv[0].y();
        const Real det = D.determinant();
        const Real scale = std::max((uv[1] - uv[0]).squaredNorm(), (uv[2] - uv[0]).squaredNorm());
        if (std::abs(det) > 1e-12 * scale) {
            Eigen::Matrix<Real, 3, 2> E;
            E << e1, e2;
            const Eigen::Matrix<Real, 3, 2> T = E * D.inverse();
            if (T.col(0).norm() > 0) {
                u = T.col(0);
                usedUVs = true;
            }
        }
    }
    u = (u - u.dot(n) * n).normalized(); // SBD eq. 38: n1, orthonormal with the normal
    Mat3 frame;
    frame << u, n.cross(u), n;
    if (fromUVs != nullptr) {
        *fromUVs = usedUVs;
    }
    return frame;
}

FrameReport assignMaterialFrames(Scene& scene, TetFrameMode mode) {
    FrameReport report;
    const auto& x = scene.particles.positions;
    for (Body& body : scene.bodies) {
        std::size_t firstBad = 0;
        std::size_t bad = 0;
        for (std::size_t t = 0; t < body.triangles.size(); ++t) {
            const Triangle& tri = body.triangles[t];
            bool fromUVs = false;
            const Mat3 f =
                triangleFrame(x[tri[0]], x[tri[1]], x[tri[2]],
                              body.hasUVs() ? body.triangleUVs[t].data() : nullptr, &fromUVs);
            if (!f.allFinite()) {
                continue; // zero-area triangle: no frame at all
            }
            ++report.triangleFrames;
            report.fromUVs += fromUVs;
            if (body.hasUVs() && !fromUVs) {
                if (bad++ == 0) {
                    firstBad = t;
                }
            }
        }
        report.degenerateUV += bad;
        if (bad > 0) {
            report.warnings.push_back("body '" + body.name + "': " + std::to_string(bad) +
                                      " triangle(s) with degenerate UVs (first " +
                                      std::to_string(firstBad) + ") use an edge-aligned frame");
        }

        body.tetFrames.clear();
        if (mode != TetFrameMode::NearestSurface || body.tets.empty() || body.triangles.empty()) {
            continue;
        }
        // Skin layers (SBD §3.6): each tet's axes are the nearest surface triangle's tangents
        // and normal, so shear along the surface can be given its own stiffness.
        const TriangleGrid grid(x, body.triangles);
        body.tetFrames.reserve(body.tets.size());
        for (const Tetrahedron& tet : body.tets) {
            const Vec3 c = (x[tet[0]] + x[tet[1]] + x[tet[2]] + x[tet[3]]) / 4.0;
            const auto hit = grid.nearest(c);
            Mat3 frame = Mat3::Identity();
            if (hit.found) {
                const Triangle& tri = body.triangles[hit.triangle];
                const Mat3 f =
                    triangleFrame(x[tri[0]], x[tri[1]], x[tri[2]],
                                  body.hasUVs() ? body.triangleUVs[hit.triangle].data() : nullptr);
                if (f.allFinite()) {
                    frame = f;
                }
            }
            body.tetFrames.push_back(frame);
        }
        report.tetFrames += body.tets.size();
    }
    return report;
}

} // namespace pbd
