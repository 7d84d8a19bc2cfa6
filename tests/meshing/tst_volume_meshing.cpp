// meshing: surface checks and repair (CGAL), tetrahedralization and air tessellation (TetGen in
// a child process, with crash, hang and cancel turned into errors), material frames.

#include "core/air/AirConnectivity.h"
#include "core/air/AirOptimizer.h"
#include "core/scene/Topology.h"
#include "meshing/SurfaceCheck.h"
#include "meshing/SurfaceRepair.h"
#include "meshing/VolumeMeshing.h"

#include "MeshingFixtures.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <set>
#include <unistd.h>

using namespace pbd;
using namespace pbd::test;

namespace {

std::set<std::array<Index, 3>> tetFaces(const std::vector<Tetrahedron>& tets) {
    std::set<std::array<Index, 3>> faces;
    for (const Tetrahedron& t : tets) {
        for (int skip = 0; skip < 4; ++skip) {
            std::array<Index, 3> f{};
            int k = 0;
            for (int i = 0; i < 4; ++i) {
                if (i != skip) {
                    f[k++] = t[i];
                }
            }
            std::sort(f.begin(), f.end());
            faces.insert(f);
        }
    }
    return faces;
}

bool hasFace(const std::set<std::array<Index, 3>>& faces, Triangle t) {
    std::sort(t.begin(), t.end());
    return faces.count({t[0], t[1], t[2]}) > 0;
}

Real tetVolume(const Scene& s, const std::vector<Tetrahedron>& tets) {
    Real v = 0;
    for (const Tetrahedron& t : tets) {
        v += signedVolume(s.particles.positions[t[0]], s.particles.positions[t[1]],
                          s.particles.positions[t[2]], s.particles.positions[t[3]]);
    }
    return v;
}

Real minTetVolume(const Scene& s, const std::vector<Tetrahedron>& tets) {
    Real v = std::numeric_limits<Real>::infinity();
    for (const Tetrahedron& t : tets) {
        v = std::min(v, signedVolume(s.particles.positions[t[0]], s.particles.positions[t[1]],
                                     s.particles.positions[t[2]], s.particles.positions[t[3]]));
    }
    return v;
}

} // namespace

class TestVolumeMeshing : public QObject {
    Q_OBJECT

private slots:
    void cleanScenePassesTheChecks() {
        const Scene scene = twoBoxesAndCloth();
        const SurfaceReport report = checkSurfaces(scene);
        QVERIFY2(report.problems.empty(),
                 report.problems.empty() ? "" : report.problems[0].c_str());
        QCOMPARE(report.bodies.size(), std::size_t(3));
        const BodySurfaceReport& lower = report.bodies[0];
        QVERIFY(lower.closed());
        QVERIFY(lower.manifold());
        QVERIFY(lower.outward());
        QCOMPARE(lower.components, std::size_t(1));
        QVERIFY(std::abs(lower.signedVolume - 1.0) < 1e-12);
        QCOMPARE(lower.selfIntersections, std::size_t(0));
        const BodySurfaceReport& sheet = report.bodies[2];
        QVERIFY(!sheet.closed());
        QCOMPARE(sheet.boundaryEdges, std::size_t(4 * 5));
        QCOMPARE(sheet.uvCoverage, 1.0);
        QCOMPARE(report.bodyIntersections(), std::size_t(0));
    }

    void intersectingBodiesAreReportedByName() {
        Scene scene;
        addBoxSurface(scene, Vec3(0, 0, 0), Vec3(1, 1, 1), "left");
        addBoxSurface(scene, Vec3(0.5, 0.3, 0.2), Vec3(1, 1, 1), "right");
        const SurfaceReport report = checkSurfaces(scene);
        QCOMPARE(report.bodyIntersections(), std::size_t(1));
        QVERIFY(!report.intersections.empty());
        for (const TriangleIntersection& i : report.intersections) {
            QCOMPARE(i.bodyA, std::size_t(0));
            QCOMPARE(i.bodyB, std::size_t(1));
        }
        QCOMPARE(report.problems.size(), std::size_t(1));
        QVERIFY(report.problems[0].find("bodies 'left' and 'right' intersect") == 0);
    }

    void selfIntersectionIsFoundWithinABody() {
        Scene scene;
        addBoxSurface(scene, Vec3(0, 0, 0), Vec3(1, 1, 1), "box");
        // A second box surface inside the same body: its triangles cross the first box's.
        Scene other;
        addBoxSurface(other, Vec3(0.5, 0.5, 0.5), Vec3(1, 1, 1), "box");
        Body& body = scene.bodies[0];
        const Index offset = Index(scene.particles.size());
        for (const Vec3& p : other.particles.positions) {
            scene.particles.add(p, 0.0);
        }
        for (Triangle t : other.bodies[0].triangles) {
            for (Index& v : t) {
                v += offset;
            }
            body.triangles.push_back(t);
        }
        body.particleCount = Index(scene.particles.size());
        const SurfaceReport report = checkSurfaces(scene);
        QVERIFY(report.bodies[0].selfIntersections > 0);
        QCOMPARE(report.bodies[0].components, std::size_t(2));
        QVERIFY(report.problems.back().find("body 'box' intersects itself") == 0);
    }

    void nonManifoldEdgeIsNamed() {
        Scene scene;
        addBoxSurface(scene, Vec3(0, 0, 0), Vec3(1, 1, 1), "fin");
        Body& body = scene.bodies[0];
        // A fin: a third triangle on an existing edge, pointing away from the box.
        const Triangle& t = body.triangles[0];
        const Vec3 mid = 0.5 * (scene.particles.positions[t[0]] + scene.particles.positions[t[1]]);
        const Vec3 out = mid + 2 * (mid - scene.bounds().center());
        body.triangles.push_back({t[0], t[1], scene.particles.add(out, 0.0)});
        body.particleCount++;
        const SurfaceReport report = checkSurfaces(scene);
        QCOMPARE(report.bodies[0].nonManifoldEdges, std::size_t(1));
        QVERIFY(!report.bodies[0].closed());
        const bool named = std::any_of(report.problems.begin(), report.problems.end(), [](auto& p) {
            return p.find("body 'fin': 1 edge(s) shared by more than two triangles") == 0;
        });
        QVERIFY(named);
    }

    void repairOrientsStitchesAndDropsDegenerates() {
        Scene scene;
        addBoxSurface(scene, Vec3(0, 0, 0), Vec3(1, 1, 1), "box");
        Body& body = scene.bodies[0];
        // Inward everywhere, then one triangle flipped back: inconsistent and inward.
        for (Triangle& t : body.triangles) {
            std::swap(t[1], t[2]);
        }
        std::swap(body.triangles[3][1], body.triangles[3][2]);
        // A degenerate sliver, and a crack: one corner duplicated slightly off its place.
        body.triangles.push_back(
            {body.triangles[0][0], body.triangles[0][0], body.triangles[0][1]});
        const Index corner = body.triangles[5][0];
        const Index copy =
            scene.particles.add(scene.particles.positions[corner] + Vec3(1e-3, 0, 0), 0.0);
        body.particleCount++;
        body.triangles[5][0] = copy;

        const std::size_t original = body.triangles.size() - 1;
        const SurfaceReport before = checkSurfaces(scene);
        QVERIFY(!before.bodies[0].closed());
        QCOMPARE(before.bodies[0].degenerateTriangles, std::size_t(1));
        QVERIFY(before.bodies[0].inconsistentEdges > 0);

        const RepairReport repair = repairSurfaces(scene);
        // Stitching the crack collapses the sliver too (its corners were one vertex already).
        QCOMPARE(repair.actions.size(), std::size_t(2));
        QVERIFY(repair.actions[0].find("body 'box': stitched 1 border vertex") == 0);
        QVERIFY(repair.actions[1].find("body 'box': flipped") == 0);
        QCOMPARE(repair.bodies.size(), std::size_t(1));
        QCOMPARE(repair.bodies[0].rungs, (std::vector<std::string>{"stitch", "orient"}));
        QVERIFY(repair.bodies[0].solid);

        const SurfaceReport after = checkSurfaces(scene);
        QVERIFY(after.problems.empty());
        QVERIFY(after.bodies[0].closed());
        QVERIFY(after.bodies[0].outward());
        QCOMPARE(after.bodies[0].triangles, original);
        QVERIFY(std::abs(after.bodies[0].signedVolume - 1.0) < 1e-12);
    }

    void interiorPointOfATorusIsInsideTheTube() {
        Scene scene;
        addTorusSurface(scene, Vec3(0, 0, 0), "torus");
        const Body& body = scene.bodies[0];
        Result<Vec3> p = interiorPoint(scene.particles.positions, body.triangles);
        QVERIFY2(p.ok(), p.error().c_str());
        // Inside the tube: distance from the major circle below the minor radius (0.2).
        const Vec3 q = *p;
        const Real ring = std::hypot(q.x(), q.z()) - 0.5;
        QVERIFY(std::hypot(ring, q.y()) < 0.2);
    }

    void tetrahedralizeKeepsTheSurfaceExactly() {
        Scene scene = twoBoxesAndCloth();
        addTorusSurface(scene, Vec3(3, 0, 0), "torus");
        const std::vector<Vec3> before = scene.particles.positions;
        std::vector<double> fractions;
        TetOptions options;
        options.radiusEdgeRatio = 1.5;
        options.maxVolume = 0.01;
        auto reports =
            tetrahedralizeBodies(scene, {0, 1, 3}, options, [&](double f, const std::string&) {
                if (f >= 0) {
                    fractions.push_back(f);
                }
                return true;
            });
        QVERIFY2(reports.ok(), reports.error().c_str());
        QCOMPARE(reports->size(), std::size_t(3));
        QVERIFY(std::is_sorted(fractions.begin(), fractions.end()));
        QVERIFY(fractions.size() >= 6);
        QVERIFY(validateScene(scene).empty());
        for (std::size_t b : {0, 1, 3}) {
            const Body& body = scene.bodies[b];
            QVERIFY(body.kind == BodyKind::TetBody);
            QVERIFY(!body.tets.empty());
            QVERIFY(minTetVolume(scene, body.tets) > 0);
            const auto faces = tetFaces(body.tets);
            for (const Triangle& t : body.triangles) {
                QVERIFY(hasFace(faces, t));
            }
            // The tets fill exactly the volume the surface encloses.
            Real enclosed = 0;
            for (const Triangle& t : body.triangles) {
                enclosed +=
                    scene.particles.positions[t[0]].dot(
                        scene.particles.positions[t[1]].cross(scene.particles.positions[t[2]])) /
                    6.0;
            }
            QVERIFY(std::abs(tetVolume(scene, body.tets) - enclosed) < 1e-9 * enclosed);
            // Quality refinement and the volume bound both added interior points.
            QVERIFY((*reports)[b == 3 ? 2 : b].steinerPoints > 0);
            QCOMPARE((*reports)[b == 3 ? 2 : b].surfacePreserved,
                     (*reports)[b == 3 ? 2 : b].surfaceTriangles);
            for (const Tetrahedron& t : body.tets) {
                const Vec3 a = scene.particles.positions[t[0]];
                const Vec3 bb = scene.particles.positions[t[1]];
                const Vec3 c = scene.particles.positions[t[2]];
                const Vec3 d = scene.particles.positions[t[3]];
                QVERIFY(signedVolume(a, bb, c, d) <= 0.01 + 1e-12);
            }
        }
        // The surface vertices kept their positions (no Steiner points on the surface).
        const Body& lower = scene.bodies[0];
        std::set<Index> surface;
        for (const Triangle& t : lower.triangles) {
            surface.insert(t.begin(), t.end());
        }
        QCOMPARE(surface.size(), std::size_t(5 * 5 * 5 - 3 * 3 * 3));
        for (Index v : surface) {
            const Vec3& p = scene.particles.positions[v];
            QVERIFY(std::any_of(before.begin(), before.end(),
                                [&](const Vec3& q) { return (p - q).norm() == 0; }));
        }
        // The cloth was left alone (moved in the array, same shape).
        QVERIFY(scene.bodies[2].kind == BodyKind::Cloth);
        QVERIFY(scene.bodies[2].tets.empty());
    }

    void airFillsTheBoxAroundBodiesAndCloth() {
        Scene scene = twoBoxesAndCloth();
        auto tets = tetrahedralizeBodies(scene, {0, 1}, TetOptions{});
        QVERIFY2(tets.ok(), tets.error().c_str());
        const std::size_t bodyParticles = scene.particles.size();
        AirOptions options;
        options.margin = 0.25;
        options.boxSubdivisions = 3;
        auto air = tessellateAir(scene, options);
        QVERIFY2(air.ok(), air.error().c_str());
        QVERIFY(validateScene(scene).empty());
        QVERIFY(air->tets > 100);
        QCOMPARE(air->tets, scene.air.tets.size());
        QVERIFY(minTetVolume(scene, scene.air.tets) > 0);
        QCOMPARE(scene.air.firstParticle, Index(bodyParticles));
        // 6 faces of a 3x3 grid share their borders: 6*16 - 12*4 + 8 = 56 box vertices.
        QCOMPARE(air->boxVertices, std::size_t(56));
        // Every body and cloth surface triangle is a face of an air tet: the air touches the
        // bodies at their own vertices.
        const auto faces = tetFaces(scene.air.tets);
        for (const Body& body : scene.bodies) {
            for (const Triangle& t : body.triangles) {
                QVERIFY(hasFace(faces, t));
            }
        }
        // Cloth triangles are internal: air on both sides.
        std::size_t clothFaceUses = 0;
        const Triangle sheetTri = scene.bodies[2].triangles[7];
        for (const Tetrahedron& t : scene.air.tets) {
            int shared = 0;
            for (Index v : t) {
                shared += std::count(sheetTri.begin(), sheetTri.end(), v) > 0;
            }
            clothFaceUses += shared == 3;
        }
        QCOMPARE(clothFaceUses, std::size_t(2));
        // Air plus bodies fill the container exactly.
        const Bounds b = Bounds(twoBoxesAndCloth().bounds());
        const Real margin = 0.25 * b.size().maxCoeff();
        const Vec3 box = b.size() + Vec3::Constant(2 * margin);
        const Real container = box.prod();
        const Real bodies =
            tetVolume(scene, scene.bodies[0].tets) + tetVolume(scene, scene.bodies[1].tets);
        QVERIFY(std::abs(air->volume + bodies - container) < 1e-9 * container);
        QVERIFY(air->sharedVertices >= 16 + 36);
        // No air tet inside a body: each air tet's centroid is outside both boxes.
        for (const Tetrahedron& t : scene.air.tets) {
            Vec3 c = Vec3::Zero();
            for (Index v : t) {
                c += scene.particles.positions[v] / 4;
            }
            const bool inLower = (c.cwiseAbs().array() < 0.5 - 1e-9).all();
            QVERIFY(!inLower);
        }
        // The container is pinned; the bodies' particles are untouched by the air.
        for (Index i = scene.air.firstParticle; i < scene.particles.size(); ++i) {
            const Vec3& p = scene.particles.positions[i];
            const bool onBox =
                (p - (b.min - Vec3::Constant(margin))).cwiseAbs().minCoeff() < 1e-9 ||
                (p - (b.max + Vec3::Constant(margin))).cwiseAbs().minCoeff() < 1e-9;
            QCOMPARE(scene.particles.inverseMasses[i] == 0.0, onBox);
        }
    }

    void localAirKeepsOnlyTetsNearTheSurfaces() {
        Scene full = twoBoxesAndCloth();
        QVERIFY(tetrahedralizeBodies(full, {0, 1}, TetOptions{}).ok());
        Scene local = full;
        AirOptions options;
        options.radiusEdgeRatio = 2.0; // finer air so that distance matters
        auto all = tessellateAir(full, options);
        QVERIFY(all.ok());
        options.localDistance = 0.1;
        options.localBodies = {"sheet"};
        auto near = tessellateAir(local, options);
        QVERIFY2(near.ok(), near.error().c_str());
        QVERIFY(near->tets > 0);
        QVERIFY(near->tets < all->tets);
        QCOMPARE(near->tets + near->droppedByDistance, all->tets);
        QVERIFY(validateScene(local).empty());
        options.localBodies = {"nobody"};
        Scene again = full;
        again.air = {};
        QVERIFY(!tessellateAir(again, options).ok());
    }

    // A collider body that is open (a character's legs cut at the waist) bounds the air like
    // a cloth, on both sides, instead of being a hole; the filters keep the air between the
    // bodies (no tet touches the container) and what `keep` accepts (no fixed tet, and only
    // below a height here), and count what they leave out.
    void openCollidersAndFiltersShapeTheAir() {
        Scene scene = twoBoxesAndCloth();
        Body& upper = scene.bodies[1];
        upper.kind = BodyKind::Collider;
        std::vector<Triangle> open;
        for (const Triangle& t : upper.triangles) {
            const auto& x = scene.particles.positions;
            if (!(x[t[0]].y() > 2.39 && x[t[1]].y() > 2.39 && x[t[2]].y() > 2.39)) {
                open.push_back(t); // the lid left out
            }
        }
        QVERIFY(open.size() < upper.triangles.size());
        upper.triangles = open;
        for (Index i = upper.firstParticle; i < upper.firstParticle + upper.particleCount; ++i) {
            scene.particles.inverseMasses[i] = 0; // kinematic, as a skin body is
        }
        Scene all = scene;
        AirOptions options;
        options.boxSubdivisions = 3;
        auto whole = tessellateAir(all, options);
        QVERIFY2(whole.ok(), whole ? "" : whole.error().c_str());
        // The open box holds air (it is not a hole).
        const auto centroid = [](const Scene& s, const Tetrahedron& t) {
            Vec3 c = Vec3::Zero();
            for (Index v : t) {
                c += s.particles.positions[v] / 4;
            }
            return c;
        };
        QVERIFY(std::any_of(all.air.tets.begin(), all.air.tets.end(), [&](const Tetrahedron& t) {
            const Vec3 c = centroid(all, t) - Vec3(0.2, 2, 0);
            return std::abs(c.x()) < 0.5 && std::abs(c.y()) < 0.4 && std::abs(c.z()) < 0.6;
        }));
        options.dropContainer = true;
        std::size_t fixedSeen = 0;
        options.keep = [&](const Vec3& c, bool fixed) {
            fixedSeen += fixed;
            return !fixed && c.y() < 1.5;
        };
        auto kept = tessellateAir(scene, options);
        QVERIFY2(kept.ok(), kept ? "" : kept.error().c_str());
        QVERIFY(kept->tets > 0);
        QVERIFY(fixedSeen > 0);
        QCOMPARE(kept->tets + kept->droppedByFilter, whole->tets);
        QVERIFY(validateScene(scene).empty());
        QVERIFY(minTetVolume(scene, scene.air.tets) > 0);
        for (const Tetrahedron& t : scene.air.tets) {
            QVERIFY(centroid(scene, t).y() < 1.5);
            QVERIFY(std::any_of(t.begin(), t.end(),
                                [&](Index v) { return scene.particles.inverseMasses[v] > 0; }));
            for (Index v : t) {
                // No container vertex: the only air particles are free points.
                QVERIFY(v < scene.air.firstParticle || scene.particles.inverseMasses[v] > 0);
            }
        }
        // The contact-distance pass pairs a particle only with a surface across the air: a
        // body's triangle or the container's face. The air cut at y = 1.5 ends in faces of no
        // surface, which are no contact.
        for (const Scene* s : {&all, &scene}) {
            std::set<Triangle> surfaces;
            for (const Body& b : s->bodies) {
                for (const Triangle& t : b.triangles) {
                    surfaces.insert(air::faceKey(t[0], t[1], t[2]));
                }
            }
            const auto container = [&](Index v) {
                return v >= s->air.firstParticle && !(s->particles.inverseMasses[v] > 0);
            };
            const std::vector<std::int32_t> adjacency = air::buildAdjacency(s->air.tets);
            std::size_t cutFaces = 0;
            for (std::size_t t = 0; t < s->air.tets.size(); ++t) {
                for (int i = 0; i < 4; ++i) {
                    const Triangle key = air::faceOpposite(s->air.tets[t], i);
                    cutFaces += adjacency[4 * t + std::size_t(i)] == air::kNone &&
                                !surfaces.count(key) &&
                                !std::all_of(key.begin(), key.end(), container);
                }
            }
            QCOMPARE(cutFaces > 0, s == &scene); // the whole air ends at surfaces only
            const std::vector<AirContactPair> pairs = airContactPairs(*s);
            QVERIFY(!pairs.empty());
            std::size_t onContainer = 0;
            for (const AirContactPair& pair : pairs) {
                const Triangle key = air::faceKey(pair.face[0], pair.face[1], pair.face[2]);
                const bool walls = std::all_of(key.begin(), key.end(), container);
                onContainer += walls;
                QVERIFY(walls || surfaces.count(key));
            }
            QCOMPARE(onContainer > 0, s == &all);
        }
    }

    void tetgenCrashIsAnErrorAndTheProcessLives() {
        Scene scene = twoBoxesAndCloth();
        const Scene before = scene;
        TetOptions options;
        options.fault = TetgenFault::Crash;
        auto result = tetrahedralizeBodies(scene, {0}, options);
        QVERIFY(!result.ok());
        QVERIFY2(result.error().find("body 'lower': TetGen crashed (signal 11") == 0,
                 result.error().c_str());
        // Nothing the user had was touched.
        QCOMPARE(scene.particles.positions, before.particles.positions);
        QCOMPARE(scene.bodies[0].triangles, before.bodies[0].triangles);
        QVERIFY(scene.bodies[0].tets.empty());
    }

    void tetgenHangTimesOut() {
        Scene scene = twoBoxesAndCloth();
        TetOptions options;
        options.fault = TetgenFault::Hang;
        options.timeoutSeconds = 0.5;
        QElapsedTimer timer;
        timer.start();
        auto result = tetrahedralizeBodies(scene, {0}, options);
        QVERIFY(!result.ok());
        QVERIFY2(result.error().find("did not finish within 0.5 s") != std::string::npos,
                 result.error().c_str());
        QVERIFY(timer.elapsed() < 5000);
    }

    void tetgenRunCanBeCancelled() {
        Scene scene = twoBoxesAndCloth();
        TetOptions options;
        options.fault = TetgenFault::Hang;
        int calls = 0;
        auto result = tetrahedralizeBodies(scene, {0}, options,
                                           [&](double, const std::string&) { return ++calls < 5; });
        QVERIFY(!result.ok());
        QCOMPARE(result.error(), kCancelledMessage);
        QCOMPARE(calls, 5);
        QVERIFY(scene.bodies[0].tets.empty());
    }

    void tetgenRejectsSelfIntersectingInputWithAMessage() {
        // Bypass the CGAL check on purpose: TetGen itself must not take us down.
        TetgenInput input;
        Scene scene;
        addBoxSurface(scene, Vec3(0, 0, 0), Vec3(1, 1, 1), "a");
        addBoxSurface(scene, Vec3(0.5, 0.3, 0.2), Vec3(1, 1, 1), "b");
        input.points = scene.particles.positions;
        for (const Body& body : scene.bodies) {
            input.facets.insert(input.facets.end(), body.triangles.begin(), body.triangles.end());
        }
        auto result = runTetgen(input, "pYJ");
        QVERIFY(!result.ok());
        QVERIFY2(result.error().find("TetGen") == 0, result.error().c_str());
        QVERIFY(getpid() > 0); // still here
    }

    void frameFromUVsFollowsTheUDirection() {
        // A triangle in the xz plane whose u axis runs along the diagonal (1, 0, 1).
        const Vec3 x0(0, 0, 0), x1(1, 0, 0), x2(0, 0, 1);
        const Vec2 uv[3] = {Vec2(0, 0), Vec2(1, -1), Vec2(1, 1)};
        bool fromUVs = false;
        const Mat3 f = triangleFrame(x0, x1, x2, uv, &fromUVs);
        QVERIFY(fromUVs);
        QVERIFY((f.transpose() * f - Mat3::Identity()).norm() < 1e-12);
        QVERIFY(std::abs(f.determinant() - 1) < 1e-12);
        QVERIFY((f.col(0) - Vec3(1, 0, 1).normalized()).norm() < 1e-12);
        QVERIFY((f.col(2) - Vec3(0, -1, 0)).norm() < 1e-12);
        // Degenerate UVs fall back to the first edge.
        const Vec2 flat[3] = {Vec2(0, 0), Vec2(1, 1), Vec2(2, 2)};
        const Mat3 g = triangleFrame(x0, x1, x2, flat, &fromUVs);
        QVERIFY(!fromUVs);
        QVERIFY((g.col(0) - Vec3(1, 0, 0)).norm() < 1e-12);
    }

    void materialFramesAreCountedAndTetFramesFollowTheSurface() {
        Scene scene = twoBoxesAndCloth();
        // Make one cloth triangle's UVs degenerate.
        scene.bodies[2].triangleUVs[4] = {Vec2(0.5, 0.5), Vec2(0.5, 0.5), Vec2(0.6, 0.5)};
        QVERIFY(tetrahedralizeBodies(scene, {0, 1}, TetOptions{1.5, 0.005}).ok());
        const FrameReport report = assignMaterialFrames(scene, TetFrameMode::NearestSurface);
        const std::size_t clothTriangles = scene.bodies[2].triangles.size();
        QCOMPARE(report.fromUVs, clothTriangles - 1);
        QCOMPARE(report.degenerateUV, std::size_t(1));
        QCOMPARE(report.warnings.size(), std::size_t(1));
        QVERIFY(report.warnings[0].find(
                    "body 'sheet': 1 triangle(s) with degenerate UVs (first 4)") == 0);
        QCOMPARE(report.tetFrames, scene.bodies[0].tets.size() + scene.bodies[1].tets.size());
        const Body& lower = scene.bodies[0];
        QCOMPARE(lower.tetFrames.size(), lower.tets.size());
        for (std::size_t t = 0; t < lower.tets.size(); ++t) {
            const Mat3& f = lower.tetFrames[t];
            QVERIFY((f.transpose() * f - Mat3::Identity()).norm() < 1e-9);
            // The third axis is a face normal of the unit box: one of +-x, +-y, +-z.
            QVERIFY(std::abs(f.col(2).cwiseAbs().maxCoeff() - 1) < 1e-9);
        }
        // The unit box is centred at the origin: the nearest face of a tet's centroid is the
        // one along the axis where |c| is largest, and the frame's normal is that face's.
        std::size_t checked = 0;
        for (std::size_t t = 0; t < lower.tets.size(); ++t) {
            Vec3 c = Vec3::Zero();
            for (Index v : lower.tets[t]) {
                c += scene.particles.positions[v] / 4;
            }
            Vec3 a = c.cwiseAbs();
            int axis = 0;
            a.maxCoeff(&axis);
            std::array<Real, 3> sorted{a.x(), a.y(), a.z()};
            std::sort(sorted.begin(), sorted.end());
            if (sorted[2] - sorted[1] < 1e-6) {
                continue; // equally near two faces
            }
            Vec3 normal = Vec3::Zero();
            normal[axis] = c[axis] > 0 ? 1 : -1;
            QVERIFY((lower.tetFrames[t].col(2) - normal).norm() < 1e-9);
            ++checked;
        }
        QVERIFY(checked > lower.tets.size() / 2);
        QVERIFY(validateScene(scene).empty());
        // Global mode clears them.
        assignMaterialFrames(scene, TetFrameMode::Global);
        QVERIFY(scene.bodies[0].tetFrames.empty());
    }
};

QTEST_GUILESS_MAIN(TestVolumeMeshing)
#include "tst_volume_meshing.moc"
