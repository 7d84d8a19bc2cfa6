// core: the air-mesh optimisation of Air Meshes §4 (edge removal and multi-face removal after
// Shewchuk) and the second pass after the air projection (§4.3: a contact distance and
// friction). The flips on hand-made configurations; the invariants (every tet positive, body and
// cloth faces and the container unchanged, air volume unchanged, adjacency kept right) over many
// passes; a free air point pressed onto a vertex contracted away (and never a container or body
// point); a box turning inside its container (free with the optimisation, locked without);
// friction on a sliding box; determinism.

#include "core/air/AirOptimizer.h"
#include "core/base/PhaseRunner.h"
#include "core/scene/Topology.h"
#include "core/solver/Solver.h"
#include "meshing/AirScenes.h"
#include "meshing/Prepare.h"

#include "../../meshing/MeshingFixtures.h"

#include <QTest>

#include <cmath>
#include <map>
#include <random>

using namespace pbd;
using namespace pbd::test;

namespace {

constexpr Real kPi = 3.14159265358979323846;

// Five points: a triangle u, v, w of circumradius 1 in z = 0 and a, b on the z axis at +-h.
Scene bipyramid(Real h) {
    Scene s;
    for (int k = 0; k < 3; ++k) {
        const Real angle = 2 * kPi * k / 3;
        s.particles.add(Vec3(std::cos(angle), std::sin(angle), 0), 1.0);
    }
    s.particles.add(Vec3(0, 0, h), 1.0);  // a = 3
    s.particles.add(Vec3(0, 0, -h), 1.0); // b = 4
    s.air.firstParticle = 0;
    s.air.particleCount = 5;
    return s;
}

// Three tets around the long edge ab.
Scene threeAroundAnEdge() {
    Scene s = bipyramid(1.5);
    s.air.tets = {{3, 4, 0, 1}, {3, 4, 1, 2}, {3, 4, 2, 0}};
    orientPositively(s.air.tets, s.particles.positions);
    return s;
}

// Two flat tets on either side of triangle uvw.
Scene twoAcrossAFace() {
    Scene s = bipyramid(0.3);
    s.air.tets = {{3, 0, 1, 2}, {4, 0, 1, 2}};
    orientPositively(s.air.tets, s.particles.positions);
    return s;
}

Real airVolume(const Scene& s) {
    Real v = 0;
    const auto& x = s.particles.positions;
    for (const Tetrahedron& t : s.air.tets) {
        v += signedVolume(x[t[0]], x[t[1]], x[t[2]], x[t[3]]);
    }
    return v;
}

Real smallestAirVolume(const Scene& s) {
    Real v = std::numeric_limits<Real>::infinity();
    const auto& x = s.particles.positions;
    for (const Tetrahedron& t : s.air.tets) {
        v = std::min(v, signedVolume(x[t[0]], x[t[1]], x[t[2]], x[t[3]]));
    }
    return v;
}

// The air's boundary (the bodies' surfaces and the container), as sorted vertex triples.
std::vector<Triangle> sortedBoundary(const Scene& s) {
    std::vector<Triangle> faces = boundaryFaces(s.air.tets);
    for (Triangle& f : faces) {
        std::sort(f.begin(), f.end());
    }
    std::sort(faces.begin(), faces.end());
    return faces;
}

// How many air tets have each cloth triangle as a face (must stay 2: air on both sides).
std::vector<int> clothFaceUse(const Scene& s) {
    std::vector<int> use;
    for (const Body& body : s.bodies) {
        if (body.kind != BodyKind::Cloth) {
            continue;
        }
        for (Triangle t : body.triangles) {
            std::sort(t.begin(), t.end());
            int n = 0;
            for (const Tetrahedron& tet : s.air.tets) {
                int shared = 0;
                for (Index v : tet) {
                    shared += v == t[0] || v == t[1] || v == t[2];
                }
                n += shared == 3;
            }
            use.push_back(n);
        }
    }
    return use;
}

Scene prepared(const Scene& raw, Real margin) {
    PrepareOptions options;
    options.tetrahedralize = true;
    options.air = true;
    options.defaultConstraints = true;
    options.airOptions.margin = margin;
    PrepareResult r = prepareScene(raw, options);
    if (!r.report.ok()) {
        qFatal("prepare failed: %s", r.report.error.c_str());
    }
    return std::move(r.scene);
}

// A 1 m box alone in a container of air, spinning about y at omega, without gravity; returns
// the angle it turned through after `steps` steps and the largest angle reached on the way.
std::pair<Real, Real> spin(int interval, Real omega, int steps) {
    Scene raw;
    addBoxSurface(raw, Vec3(0, 0, 0), Vec3(1, 1, 1), "box", 3);
    Scene s = prepared(raw, 0.3);
    s.solver.gravity = Vec3::Zero();
    s.solver.iterations = 10;
    s.solver.airOptimizationInterval = interval;
    const Body& box = s.bodies[0];
    const auto centre = [&] {
        Vec3 c = Vec3::Zero();
        for (Index i = box.firstParticle; i < box.firstParticle + box.particleCount; ++i) {
            c += s.particles.positions[i] / box.particleCount;
        }
        return c;
    };
    const Vec3 c0 = centre();
    Index corner = box.firstParticle;
    for (Index i = box.firstParticle; i < box.firstParticle + box.particleCount; ++i) {
        s.particles.velocities[i] = Vec3(0, omega, 0).cross(s.particles.positions[i] - c0);
        if ((s.particles.positions[i] - c0).squaredNorm() >
            (s.particles.positions[corner] - c0).squaredNorm()) {
            corner = i;
        }
    }
    const auto heading = [&] {
        const Vec3 d = s.particles.positions[corner] - centre();
        return std::atan2(-d.z(), d.x()); // about +y
    };
    Solver solver(s);
    Real turned = 0, largest = 0, previous = heading();
    for (int step = 0; step < steps; ++step) {
        solver.step();
        const Real now = heading();
        Real d = now - previous;
        d -= 2 * kPi * std::round(d / (2 * kPi));
        turned += d;
        previous = now;
        largest = std::max(largest, turned);
    }
    return {turned, largest};
}

// A 0.3 m box on a fixed slab, pushed along x at 1 m/s, with the optimisation on so the air
// lets it slide; returns how far it went in `steps` steps.
Real slide(Real friction, int steps) {
    Scene raw;
    addBoxSurface(raw, Vec3(0, 0, 0), Vec3(3, 0.2, 1), "slab", 12);
    addBoxSurface(raw, Vec3(-0.8, 0.27, 0), Vec3(0.3, 0.3, 0.3), "box", 2);
    Scene s = prepared(raw, 0.1);
    const Body& slab = s.bodies[0];
    for (Index i = slab.firstParticle; i < slab.firstParticle + slab.particleCount; ++i) {
        s.particles.inverseMasses[i] = 0;
    }
    s.solver.iterations = 10;
    s.solver.airFriction = friction;
    const Body& box = s.bodies[1];
    Solver solver(s);
    for (int step = 0; step < 20; ++step) { // settle onto the slab
        solver.step();
    }
    Real x0 = 0;
    for (Index i = box.firstParticle; i < box.firstParticle + box.particleCount; ++i) {
        x0 += s.particles.positions[i].x() / box.particleCount;
        s.particles.velocities[i].x() += 1.0;
    }
    for (int step = 0; step < steps; ++step) {
        solver.step();
    }
    Real x1 = 0;
    for (Index i = box.firstParticle; i < box.firstParticle + box.particleCount; ++i) {
        x1 += s.particles.positions[i].x() / box.particleCount;
    }
    return x1 - x0;
}

// An octahedron (corners +-x, +-y, +-z, fixed container points) around the free air point p,
// coned to p (8 tets). `p` sits 1e-7 inside the +x corner: the 4 tets around edge (p, +x) are
// needles that no flip can mend (any ring around that edge coned to p and to +x turns one
// side inside out).
Scene pressedFreePoint(Real pInverseMass) {
    Scene s;
    const Vec3 corners[6] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
    for (const Vec3& c : corners) {
        s.particles.add(c, 0.0);
    }
    s.particles.add(Vec3(1 - 1e-7, 2e-9, -3e-9), pInverseMass); // p = 6
    const Index faces[8][3] = {{0, 2, 4}, {0, 4, 3}, {0, 3, 5}, {0, 5, 2},
                               {1, 4, 2}, {1, 3, 4}, {1, 5, 3}, {1, 2, 5}};
    for (const auto& f : faces) {
        s.air.tets.push_back({6, f[0], f[1], f[2]});
    }
    orientPositively(s.air.tets, s.particles.positions);
    s.air.firstParticle = 0;
    s.air.particleCount = 7;
    return s;
}

} // namespace

class TestAirOptimizer : public QObject {
    Q_OBJECT
private slots:
    void qualityIsOneForTheRegularElements() {
        const Vec3 a(1, 1, 1), b(1, -1, -1), c(-1, 1, -1), d(-1, -1, 1);
        QVERIFY(std::abs(tetQuality(a, c, b, d) - 1) < 1e-12);
        QVERIFY(std::abs(tetQuality(a, b, c, d) + 1) < 1e-12);       // inverted
        QVERIFY(std::abs(tetQuality(a, b, c, (b + c) / 2)) < 1e-12); // flat
        QVERIFY(std::abs(triangleQuality(Vec3(0, 0, 0), Vec3(1, 0, 0),
                                         Vec3(0.5, std::sqrt(3.0) / 2, 0)) -
                         1) < 1e-12);
    }

    void aThreeTwoFlipReplacesThreeTetsAroundALongEdge() {
        Scene s = threeAroundAnEdge();
        const Real volume = airVolume(s);
        AirOptimizer optimizer;
        AirOptimizationOptions options;
        options.qualityThreshold = 1;
        const AirOptimizationStatistics stats = optimizer.optimize(s, options);
        QCOMPARE(stats.edgeRemovals, std::size_t(1));
        QCOMPARE(stats.flips32, std::size_t(1));
        QCOMPARE(s.air.tets.size(), std::size_t(2));
        for (const Tetrahedron& t : s.air.tets) { // the edge ab is gone
            QVERIFY(!(std::count(t.begin(), t.end(), Index(3)) &&
                      std::count(t.begin(), t.end(), Index(4))));
        }
        QVERIFY(stats.minQualityBefore < 0.5);
        QVERIFY(stats.minQualityAfter > 0.95);
        QVERIFY(std::abs(airVolume(s) - volume) < 1e-12);
        QVERIFY(smallestAirVolume(s) > 0);
        QVERIFY(optimizer.checkAdjacency(s).empty());
    }

    void aTwoThreeFlipReplacesTwoFlatTetsAcrossAFace() {
        Scene s = twoAcrossAFace();
        const Real volume = airVolume(s);
        AirOptimizer optimizer;
        AirOptimizationOptions options;
        options.qualityThreshold = 1;
        const AirOptimizationStatistics stats = optimizer.optimize(s, options);
        QCOMPARE(stats.multiFaceRemovals, std::size_t(1));
        QCOMPARE(stats.flips23, std::size_t(1));
        QCOMPARE(s.air.tets.size(), std::size_t(3));
        for (const Tetrahedron& t : s.air.tets) { // each has the new edge ab
            QVERIFY(std::count(t.begin(), t.end(), Index(3)) == 1 &&
                    std::count(t.begin(), t.end(), Index(4)) == 1);
        }
        QVERIFY(stats.minQualityAfter > stats.minQualityBefore + 0.1);
        QVERIFY(std::abs(airVolume(s) - volume) < 1e-12);
        QVERIFY(optimizer.checkAdjacency(s).empty());
        // Nothing better exists now: a second pass changes nothing.
        QCOMPARE(optimizer.optimize(s, options).changes(), std::size_t(0));
    }

    void aFreePointPressedOntoAVertexIsContractedAway() {
        Scene s = pressedFreePoint(1.0);
        QVERIFY(smallestAirVolume(s) > 0);
        const Real volume = airVolume(s);
        AirOptimizer optimizer;
        const AirOptimizationStatistics stats = optimizer.optimize(s);
        QCOMPARE(stats.contractions, std::size_t(1));
        QCOMPARE(stats.changes(), std::size_t(1));
        // p is gone; the octahedron is 4 tets around its +x to -x diagonal.
        QCOMPARE(s.air.tets.size(), std::size_t(4));
        for (const Tetrahedron& t : s.air.tets) {
            QCOMPARE(std::count(t.begin(), t.end(), Index(6)), 0);
            QCOMPARE(std::count(t.begin(), t.end(), Index(0)), 1);
            QCOMPARE(std::count(t.begin(), t.end(), Index(1)), 1);
        }
        QVERIFY(stats.minQualityBefore < 1e-5);
        QVERIFY(stats.minQualityAfter > 0.5);
        QVERIFY(std::abs(airVolume(s) - volume) < 1e-12);
        QVERIFY(std::abs(volume - 4.0 / 3.0) < 1e-6);
        QVERIFY(smallestAirVolume(s) > 0);
        QVERIFY(optimizer.checkAdjacency(s).empty());
    }

    void aPointOfTheContainerOrABodyIsNeverContracted() {
        Scene s = pressedFreePoint(0.0); // p immovable: a container point, not air's own
        AirOptimizer optimizer;
        const AirOptimizationStatistics stats = optimizer.optimize(s);
        QCOMPARE(stats.contractions, std::size_t(0));
        QVERIFY(smallestAirVolume(s) > 0);
        std::size_t withP = 0;
        for (const Tetrahedron& t : s.air.tets) {
            withP += std::count(t.begin(), t.end(), Index(6)) > 0;
        }
        QVERIFY(withP > 0); // still a vertex of the air
    }

    void aBodyEdgeOrFaceIsNeverRemoved() {
        for (const Triangle& cloth : {Triangle{3, 4, 0}, Triangle{0, 1, 2}}) {
            // The long edge ab (first) or the face uvw (second) belongs to a cloth.
            Scene s = cloth[0] == 3 ? threeAroundAnEdge() : twoAcrossAFace();
            Body sheet;
            sheet.name = "sheet";
            sheet.kind = BodyKind::Cloth;
            sheet.firstParticle = 0;
            sheet.particleCount = 5;
            sheet.triangles = {cloth};
            s.bodies.push_back(sheet);
            const std::vector<Tetrahedron> before = s.air.tets;
            AirOptimizer optimizer;
            AirOptimizationOptions options;
            options.qualityThreshold = 1;
            QCOMPARE(optimizer.optimize(s, options).changes(), std::size_t(0));
            QCOMPARE(s.air.tets, before);
        }
    }

    // Tangled air (a rough step can leave it so): the two flat tets across face (0, 1, 2) and a
    // third with both apexes, over (0, 1). The 2-3 flip across the face would make the edge
    // between the apexes a second time, and a tet of the third's four corners again: it must
    // not be made, whatever else the pass does.
    void aChangeNeverMakesAnEdgeOrATetTwice() {
        Scene s = bipyramid(0.3);
        s.air.tets = {{3, 0, 1, 2}, {4, 0, 1, 2}, {3, 4, 0, 1}};
        orientPositively(s.air.tets, s.particles.positions);
        AirOptimizer optimizer;
        AirOptimizationOptions options;
        options.qualityThreshold = 1;
        optimizer.optimize(s, options);
        std::vector<Tetrahedron> corners = s.air.tets;
        std::vector<Triangle> faces;
        for (Tetrahedron& t : corners) {
            std::sort(t.begin(), t.end());
            for (int i = 0; i < 4; ++i) { // sorted: the corners but the i-th
                Triangle f{};
                for (int k = 0, j = 0; k < 4; ++k) {
                    if (k != i) {
                        f[std::size_t(j++)] = t[std::size_t(k)];
                    }
                }
                faces.push_back(f);
            }
        }
        std::sort(corners.begin(), corners.end());
        QVERIFY(std::adjacent_find(corners.begin(), corners.end()) == corners.end());
        std::sort(faces.begin(), faces.end());
        for (std::size_t k = 0; k + 2 < faces.size(); ++k) {
            QVERIFY(!(faces[k] == faces[k + 2])); // no face of three tets
        }
        const std::vector<std::string> problems = optimizer.checkAdjacency(s);
        QVERIFY2(problems.empty(), problems.empty() ? "" : problems.front().c_str());
    }

    void passesKeepTheAirValid_data() {
        QTest::addColumn<QString>("scene");
        QTest::newRow("boxes and cloth") << "boxes and cloth";
        QTest::newRow("air-boxes") << "air-boxes";
    }

    void passesKeepTheAirValid() {
        // Jiggle every movable point (never so far that a tet inverts), then optimise; after
        // every pass: all air tets positive, the air's boundary (bodies and container) and the
        // cloth faces unchanged, the air's volume unchanged, the kept adjacency right.
        QFETCH(QString, scene);
        Scene s;
        if (scene == "air-boxes") {
            s = makeAirScene("air-boxes").value();
        } else {
            s = prepared(twoBoxesAndCloth(), 0.3);
        }
        const std::vector<Triangle> boundary = sortedBoundary(s);
        const std::vector<int> clothUse = clothFaceUse(s);
        for (int n : clothUse) {
            QCOMPARE(n, 2);
        }
        std::mt19937 random(7);
        std::uniform_real_distribution<Real> jiggle(-1, 1);
        AirOptimizer optimizer;
        std::size_t changes = 0;
        for (int pass = 0; pass < 25; ++pass) {
            std::vector<std::vector<const Tetrahedron*>> incident(s.particles.size());
            for (const Tetrahedron& t : s.air.tets) {
                for (Index v : t) {
                    incident[v].push_back(&t);
                }
            }
            for (const Body& b : s.bodies) {
                for (const Tetrahedron& t : b.tets) {
                    for (Index v : t) {
                        incident[v].push_back(&t);
                    }
                }
            }
            auto& x = s.particles.positions;
            for (std::size_t i = 0; i < x.size(); ++i) {
                if (!(s.particles.inverseMasses[i] > 0)) {
                    continue;
                }
                const Vec3 old = x[i];
                x[i] += 0.04 * Vec3(jiggle(random), jiggle(random), jiggle(random));
                for (const Tetrahedron* t : incident[i]) {
                    if (tetQuality(x[(*t)[0]], x[(*t)[1]], x[(*t)[2]], x[(*t)[3]]) < 0.01) {
                        x[i] = old;
                        break;
                    }
                }
            }
            const Real volume = airVolume(s);
            changes += optimizer.optimize(s).changes();
            QVERIFY(smallestAirVolume(s) > 0);
            QVERIFY(std::abs(airVolume(s) - volume) < 1e-12 * std::abs(volume));
            QVERIFY(sortedBoundary(s) == boundary);
            QVERIFY(clothFaceUse(s) == clothUse);
            const std::vector<std::string> problems = optimizer.checkAdjacency(s);
            QVERIFY2(problems.empty(), problems.empty() ? "" : problems.front().c_str());
        }
        QVERIFY2(changes > 50, qPrintable(QString::number(changes)));
        QCOMPARE(optimizer.rebuilds(), std::size_t(1)); // incremental after the first pass
        QVERIFY(validateScene(s).empty());
    }

    void aTetNoChangeImprovesWaitsUntilSomethingAroundItChanges() {
        // On air that does not move (air-boxes at rest), a pass defers the candidates an earlier
        // one could not improve when nothing around them changed since, and gives the very mesh
        // a pass that tries them all gives; with retryAfter 3, those that failed in pass k are
        // tried again in pass k + 3.
        Scene deferring = makeAirScene("air-boxes").value();
        Scene trying = deferring;
        AirOptimizer a, b;
        AirOptimizationOptions every;
        every.retryAfter = 0;
        AirOptimizationOptions three;
        three.retryAfter = 3;
        std::size_t deferredIn[7] = {};
        QString counts;
        for (int pass = 1; pass <= 6; ++pass) {
            const AirOptimizationStatistics sa = a.optimize(deferring, three);
            const AirOptimizationStatistics sb = b.optimize(trying, every);
            QCOMPARE(sb.deferred, std::size_t(0));
            QVERIFY(sa.deferred < sa.candidates);
            QCOMPARE(sa.changes(), sb.changes());
            QVERIFY(deferring.air.tets == trying.air.tets);
            deferredIn[pass] = sa.deferred;
            counts += QString(" %1 of %2").arg(sa.deferred).arg(sa.candidates);
        }
        QCOMPARE(deferredIn[1], std::size_t(0));
        QVERIFY2(deferredIn[3] > 100, qPrintable(counts));
        // Pass 2's failures wait in passes 3 and 4 and are tried in pass 5.
        QVERIFY2(deferredIn[4] >= deferredIn[3] && deferredIn[5] < deferredIn[4] / 2,
                 qPrintable(counts));
    }

    void planarFlipsKeepThe2DAirValid() {
        // 2D: jiggle the movable points in the plane (never so far that a triangle turns),
        // then flip; after every pass all air triangles counter-clockwise, the boundary of the
        // air (box outlines, the container) and the rope's segments unchanged, the air's area
        // unchanged, the kept adjacency right.
        Scene s = makeAirScene("air-boxes-2d").value();
        const auto& x = s.particles.positions;
        const auto twice = [&](const Triangle& t) {
            const Vec3 a = x[t[1]] - x[t[0]], b = x[t[2]] - x[t[0]];
            return a.x() * b.y() - a.y() * b.x();
        };
        const auto airEdges = [&](int uses) { // edges used by `uses` air triangles
            std::map<std::pair<Index, Index>, int> count;
            for (const Triangle& t : s.air.triangles) {
                for (int k = 0; k < 3; ++k) {
                    const Index a = t[k], b = t[(k + 1) % 3];
                    ++count[{std::min(a, b), std::max(a, b)}];
                }
            }
            std::vector<std::pair<Index, Index>> edges;
            for (const auto& [e, n] : count) {
                if (n == uses) {
                    edges.push_back(e);
                }
            }
            return edges;
        };
        const auto boundary = airEdges(1);
        const Body& rope = s.bodies.back();
        std::mt19937 random(3);
        std::uniform_real_distribution<Real> jiggle(-1, 1);
        AirOptimizer optimizer;
        AirOptimizationOptions options;
        options.qualityThreshold = 0.6;
        std::size_t changes = 0;
        for (int pass = 0; pass < 20; ++pass) {
            std::vector<std::vector<const Triangle*>> incident(s.particles.size());
            for (const Triangle& t : s.air.triangles) {
                for (Index v : t) {
                    incident[v].push_back(&t);
                }
            }
            for (const Body& b : s.bodies) {
                for (const Triangle& t : b.triangles) {
                    for (Index v : t) {
                        incident[v].push_back(&t);
                    }
                }
            }
            auto& positions = s.particles.positions;
            for (std::size_t i = 0; i < positions.size(); ++i) {
                if (!(s.particles.inverseMasses[i] > 0)) {
                    continue;
                }
                const Vec3 old = positions[i];
                positions[i] += 0.01 * Vec3(jiggle(random), jiggle(random), 0);
                for (const Triangle* t : incident[i]) {
                    if (twice(*t) < 1e-6) {
                        positions[i] = old;
                        break;
                    }
                }
            }
            Real before = 0;
            for (const Triangle& t : s.air.triangles) {
                before += twice(t);
            }
            changes += optimizer.optimize(s, options).changes();
            Real after = 0;
            for (const Triangle& t : s.air.triangles) {
                QVERIFY(twice(t) > 0);
                after += twice(t);
            }
            QVERIFY(std::abs(after - before) < 1e-12 * before);
            QVERIFY(airEdges(1) == boundary);
            const auto inner = airEdges(2);
            for (Index i = rope.firstParticle; i + 1 < rope.firstParticle + rope.particleCount;
                 ++i) {
                QVERIFY(std::binary_search(inner.begin(), inner.end(), std::pair{i, i + 1}));
            }
            const std::vector<std::string> problems = optimizer.checkAdjacency(s);
            QVERIFY2(problems.empty(), problems.empty() ? "" : problems.front().c_str());
        }
        QVERIFY2(changes > 20, qPrintable(QString::number(changes)));
        QCOMPARE(optimizer.rebuilds(), std::size_t(1));
        QVERIFY(validateScene(s).empty());
    }

    void theSolverOptimisesEveryKSteps() {
        Scene s = makeAirScene("air-boxes").value();
        s.solver.airOptimizationInterval = 3;
        const std::vector<Triangle> boundary = sortedBoundary(s);
        Solver solver(s);
        std::size_t changes = 0;
        for (int step = 1; step <= 60; ++step) {
            solver.step();
            QCOMPARE(solver.airOptimizationPasses(), std::size_t(step / 3));
            changes += solver.airOptimization().changes();
            QVERIFY(sortedBoundary(s) == boundary);
            QCOMPARE(solver.airStatistics().invertedAfter, std::size_t(0));
        }
        QVERIFY(changes > 0);
        QVERIFY(solver.airOptimizationMilliseconds() > 0);

        Scene off = makeAirScene("air-boxes").value();
        off.solver.airOptimizationInterval = 0;
        const std::vector<Tetrahedron> before = off.air.tets;
        Solver still(off);
        for (int step = 0; step < 10; ++step) {
            still.step();
        }
        QCOMPARE(still.airOptimizationPasses(), std::size_t(0));
        QCOMPARE(off.air.tets, before);
    }

    void aTurningBoxTurnsFreelyWithOptimisationAndLocksWithout() {
        const Real omega = kPi; // half a turn a second
        const int steps = 200;  // 1 s
        const Real free = omega * steps * 0.005;
        const auto [turnedOn, largestOn] = spin(1, omega, steps);
        QVERIFY2(turnedOn > 0.9 * free, qPrintable(QString::number(turnedOn / free)));
        const auto [turnedOff, largestOff] = spin(0, omega, steps);
        // Without it the air stops the box within a fifth of a turn, and springs it back.
        QVERIFY2(largestOff < 0.3 * free, qPrintable(QString::number(largestOff / free)));
        QVERIFY(turnedOff < largestOff);
        Q_UNUSED(largestOn);
    }

    void frictionSlowsASlidingBox() {
        const Real frictionless = slide(0, 100);
        const Real rough = slide(0.5, 100);
        // 100 steps of 5 ms at 1 m/s: 0.5 m without friction; mu g = 4.9 m/s^2 stops it in
        // v^2 / (2 mu g) = 0.102 m. Session 53: 0.469 and 0.103 (0.122 without friction while
        // the contact-distance pass counted a vertex 2 mm below the box's front face as over it).
        qInfo("slid %.3f m without friction, %.3f m with mu = 0.5", frictionless, rough);
        QVERIFY2(frictionless > 0.4, qPrintable(QString::number(frictionless)));
        QVERIFY2(std::abs(rough - 0.102) < 0.02, qPrintable(QString::number(rough)));
    }

    void aPassOnManyThreadsMakesTheChangesOfOne() {
        // Threads try a batch's candidates ahead and one applies them in order, trying again
        // those whose zone an earlier change touched: the same changes as one thread, pass after
        // pass, on air jiggled so that thousands of tets are candidates and changes lie close
        // together.
        Scene scenes[2] = {makeAirScene("air-boxes").value(), makeAirScene("air-boxes").value()};
        AirOptimizer optimizers[2];
        ThreadTeam teams[2] = {ThreadTeam(1), ThreadTeam(3)}; // through their arenas
        std::mt19937 random(11);
        std::uniform_real_distribution<Real> jiggle(-1, 1);
        std::size_t candidates = 0, changes = 0;
        for (int pass = 0; pass < 12; ++pass) {
            std::vector<Vec3>& x = scenes[0].particles.positions;
            for (std::size_t i = 0; i < x.size(); ++i) {
                if (scenes[0].particles.inverseMasses[i] > 0) {
                    x[i] += 0.01 * Vec3(jiggle(random), jiggle(random), jiggle(random));
                }
            }
            scenes[1].particles.positions = x;
            AirOptimizationStatistics stats[2];
            for (int k = 0; k < 2; ++k) {
                teams[k].arena.execute([&] { stats[k] = optimizers[k].optimize(scenes[k]); });
            }
            QCOMPARE(stats[1].changes(), stats[0].changes());
            QCOMPARE(stats[1].deferred, stats[0].deferred);
            QVERIFY(scenes[1].air.tets == scenes[0].air.tets);
            candidates += stats[0].candidates;
            changes += stats[0].changes();
        }
        QVERIFY2(candidates > 5000 && changes > 500,
                 qPrintable(QString("%1 candidates, %2 changes").arg(candidates).arg(changes)));
    }

    void theOptimisedAirIsDeterministic() {
        std::vector<Vec3> positions[2];
        std::vector<Tetrahedron> tets[2];
        for (int run = 0; run < 2; ++run) {
            Scene s = makeAirScene("air-boxes").value();
            s.solver.threads = run + 1;
            Solver solver(s);
            for (int step = 0; step < 60; ++step) {
                solver.step();
            }
            positions[run] = s.particles.positions;
            tets[run] = s.air.tets;
        }
        QCOMPARE(positions[0], positions[1]);
        QCOMPARE(tets[0], tets[1]);
    }
};

QTEST_GUILESS_MAIN(TestAirOptimizer)
#include "tst_air_optimizer.moc"
