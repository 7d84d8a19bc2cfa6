// core: collider geometry (closest points, segment entries), the continuous contact test of
// PBD §3.4, and friction and restitution against analytic answers.

#include "core/base/InstructionSets.h"
#include "core/constraints/ConstraintBuilders.h"
#include "core/scenes/PrimitiveMeshes.h"
#include "core/scenes/SceneLibrary.h"
#include "core/solver/Colliders.h"
#include "core/solver/SelfCollision.h"
#include "core/solver/Solver.h"

#include <QTest>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

using namespace pbd;

namespace {

constexpr double kGravity = 9.81;

// A closed unit cube mesh centred at the origin, outward winding.
Collider cubeMesh() {
    std::vector<Vec3> v;
    for (int i = 0; i < 8; ++i) {
        v.emplace_back((i & 1) ? 0.5 : -0.5, (i & 2) ? 0.5 : -0.5, (i & 4) ? 0.5 : -0.5);
    }
    const std::vector<Triangle> t = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6},
                                     {0, 1, 4}, {1, 5, 4}, {2, 6, 3}, {3, 6, 7},
                                     {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
    return Collider::mesh(v, t);
}

// One free particle of 1 kg at x0 with velocity v0.
Scene oneParticle(const Vec3& x0, const Vec3& v0) {
    Scene s;
    Body body;
    body.name = "particle";
    body.particleCount = 1;
    s.particles.add(x0, 1.0);
    s.particles.velocities[0] = v0;
    s.bodies.push_back(body);
    s.solver.timeStep = 0.005;
    s.solver.iterations = 4;
    return s;
}

// `layers` square cloth sheets of columns x columns vertices and `size` metres, layer k centred
// at k * shift: their triangles, their particles added to `particles`.
std::vector<Triangle> stackedSheets(Particles& particles, int layers, int columns, Real size,
                                    const Vec3& shift) {
    std::vector<Triangle> triangles;
    for (int layer = 0; layer < layers; ++layer) {
        ClothSheetSpec sheet;
        sheet.columns = columns;
        sheet.rows = columns;
        sheet.width = size;
        sheet.depth = size;
        sheet.center = double(layer) * shift;
        const Body body = makeClothSheet(particles, sheet, "sheet");
        triangles.insert(triangles.end(), body.triangles.begin(), body.triangles.end());
    }
    return triangles;
}

} // namespace

class TestColliders : public QObject {
    Q_OBJECT
private slots:
    void closestPointsAndSignedDistances() {
        const Collider sphere = Collider::sphere(Vec3(1, 0, 0), 0.5);
        SurfacePoint s = closestSurfacePoint(sphere, Vec3(3, 0, 0));
        QCOMPARE(s.distance, 1.5);
        QVERIFY((s.point - Vec3(1.5, 0, 0)).norm() < 1e-15);
        s = closestSurfacePoint(sphere, Vec3(1, 0.2, 0));
        QVERIFY(std::abs(s.distance + 0.3) < 1e-15);
        QVERIFY((s.normal - Vec3::UnitY()).norm() < 1e-15);

        const Collider box = Collider::box(Vec3::Zero(), Vec3(1, 0.5, 0.25));
        s = closestSurfacePoint(box, Vec3(0.2, 0.4, 0.0)); // inside, nearest the +y face
        QVERIFY(std::abs(s.distance + 0.1) < 1e-15);
        QVERIFY((s.normal - Vec3::UnitY()).norm() < 1e-15);
        s = closestSurfacePoint(box, Vec3(2, 1.5, 0)); // outside, nearest the +x+y edge
        QVERIFY(std::abs(s.distance - std::sqrt(2.0)) < 1e-15);

        const Collider capsule = Collider::capsule(Vec3(0, 0, 0), Vec3(0, 2, 0), 0.3);
        s = closestSurfacePoint(capsule, Vec3(1, 1, 0));
        QVERIFY(std::abs(s.distance - 0.7) < 1e-15);
        s = closestSurfacePoint(capsule, Vec3(0, 3, 0)); // beyond the end cap
        QVERIFY(std::abs(s.distance - 0.7) < 1e-15);

        const Collider cube = cubeMesh();
        s = closestSurfacePoint(cube, Vec3(0.1, 0.3, 0.0));
        QVERIFY2(std::abs(s.distance + 0.2) < 1e-12, qPrintable(QString::number(s.distance)));
        QVERIFY((s.normal - Vec3::UnitY()).norm() < 1e-12);
        s = closestSurfacePoint(cube, Vec3(0.0, 0.0, 2.0));
        QVERIFY(std::abs(s.distance - 1.5) < 1e-12);
        QVERIFY((s.normal - Vec3::UnitZ()).norm() < 1e-12);

        const Collider ground = Collider::plane(Vec3(0, -1, 0), Vec3(0, 2, 0));
        s = closestSurfacePoint(ground, Vec3(5, 1, 3));
        QCOMPARE(s.distance, 2.0);
    }

    void segmentsEnterAtTheRightPlace() {
        const Vec3 from(0, 2, 0), to(0, -2, 0);
        SegmentHit hit;
        QVERIFY(firstEntry(Collider::sphere(Vec3::Zero(), 1), from, to, hit));
        QVERIFY(std::abs(hit.t - 0.25) < 1e-15);
        QVERIFY((hit.normal - Vec3::UnitY()).norm() < 1e-15);
        QVERIFY(firstEntry(Collider::box(Vec3::Zero(), Vec3(1, 0.5, 1)), from, to, hit));
        QVERIFY(std::abs(hit.t - 0.375) < 1e-15);
        QVERIFY((hit.normal - Vec3::UnitY()).norm() < 1e-15);
        QVERIFY(firstEntry(Collider::plane(Vec3::Zero(), Vec3::UnitY()), from, to, hit));
        QVERIFY(std::abs(hit.t - 0.5) < 1e-15);
        QVERIFY(firstEntry(Collider::capsule(Vec3(-1, 0, 0), Vec3(1, 0, 0), 0.5), from, to, hit));
        QVERIFY(std::abs(hit.t - 0.375) < 1e-8);
        QVERIFY(firstEntry(cubeMesh(), from, to, hit));
        QVERIFY(std::abs(hit.t - 0.375) < 1e-15);
        QVERIFY((hit.normal - Vec3::UnitY()).norm() < 1e-15);
        // Moving away, or passing beside, is no entry.
        QVERIFY(!firstEntry(Collider::sphere(Vec3::Zero(), 1), to * 2, to * 3, hit));
        QVERIFY(!firstEntry(cubeMesh(), Vec3(2, 2, 0), Vec3(2, -2, 0), hit));
    }

    void continuousTestStopsAFastParticleAtAThinWall() {
        // 300 m/s for 5 ms is 1.5 m: without the ray test the particle would pass the 2 cm
        // wall between two samples.
        Scene s = oneParticle(Vec3(0, 1, 0), Vec3(0, -300, 0));
        s.colliders.push_back(Collider::box(Vec3::Zero(), Vec3(1, 0.01, 1)));
        s.solver.gravity = Vec3::Zero();
        Solver solver(s);
        solver.step();
        QVERIFY2(s.particles.positions[0].y() >= 0.01,
                 qPrintable(QString::number(s.particles.positions[0].y())));
        QCOMPARE(solver.contacts().size(), std::size_t(1));
        for (int i = 0; i < 20; ++i) {
            solver.step();
        }
        QVERIFY(s.particles.positions[0].y() >= 0.01);
    }

    void particleRestsOnTheGroundAtTheMargin() {
        Scene s = oneParticle(Vec3(0, 0.5, 0), Vec3::Zero());
        s.colliders.push_back(Collider::plane(Vec3::Zero(), Vec3::UnitY()));
        Solver solver(s);
        for (int i = 0; i < 400; ++i) {
            solver.step();
        }
        QVERIFY(std::abs(s.particles.positions[0].y() - s.solver.collisionMargin) < 1e-9);
        QVERIFY(s.particles.velocities[0].norm() < 1e-9);
    }

    void frictionStopsASlidingParticleAtTheCoulombDistance() {
        const double mu = 0.4;
        const double v0 = 2.0;
        Scene s = oneParticle(Vec3(0, 0.002, 0), Vec3(v0, 0, 0));
        s.colliders.push_back(Collider::plane(Vec3::Zero(), Vec3::UnitY()));
        s.colliders.back().friction = mu;
        s.solver.timeStep = 0.001;
        Solver solver(s);
        for (int i = 0; i < 2000; ++i) {
            solver.step();
        }
        const double expected = v0 * v0 / (2 * mu * kGravity); // v^2 / (2 mu g)
        const double travelled = s.particles.positions[0].x();
        QVERIFY2(std::abs(travelled - expected) < 0.02 * expected,
                 qPrintable(QString("%1 vs %2").arg(travelled).arg(expected)));
        QVERIFY(std::abs(s.particles.velocities[0].x()) < 1e-9);
    }

    void restitutionReturnsItsShareOfTheImpactSpeed() {
        Scene s = oneParticle(Vec3(0, 1.0, 0), Vec3::Zero());
        s.colliders.push_back(Collider::plane(Vec3::Zero(), Vec3::UnitY()));
        s.colliders.back().restitution = 0.5;
        s.solver.timeStep = 0.0005;
        Solver solver(s);
        double impact = 0;
        double rebound = 0;
        for (int i = 0; i < 4000 && rebound <= 0; ++i) {
            const double before = s.particles.velocities[0].y();
            solver.step();
            if (!solver.contacts().empty() && before < 0 && s.particles.velocities[0].y() > 0) {
                impact = -before;
                rebound = s.particles.velocities[0].y();
            }
        }
        QVERIFY(impact > 4.0); // sqrt(2 g h) = 4.43 m/s
        QVERIFY2(std::abs(rebound - 0.5 * impact) < 0.05 * impact,
                 qPrintable(QString("%1 from %2").arg(rebound).arg(impact)));
    }

    void twoFallingClothLayersStayTheThicknessApart() {
        // Two sheets, the upper one shifted and rotated so no vertex sits over a vertex, fall
        // onto the ground. With self-collision the upper one never comes closer to the lower
        // one than the thickness (less the solver's tolerance); without, they interpenetrate.
        auto run = [](bool selfCollision) {
            Scene s;
            for (int layer = 0; layer < 2; ++layer) {
                ClothSheetSpec sheet;
                sheet.columns = 16;
                sheet.rows = 16;
                sheet.width = 0.6;
                sheet.depth = 0.6;
                sheet.center = Vec3(0.013 * layer, 0.05 + 0.03 * layer, 0.007 * layer);
                s.bodies.push_back(makeClothSheet(s.particles, sheet, layer ? "top" : "bottom"));
                addEdgeDistances(s.constraints, s.particles, s.bodies.back(), 0.0);
                addDihedralBending(s.constraints, s.particles, s.bodies.back(), 10.0);
            }
            s.colliders.push_back(Collider::plane(Vec3::Zero(), Vec3::UnitY()));
            s.solver.selfCollision = selfCollision;
            s.solver.clothThickness = 0.01;
            s.solver.collisionMargin = 0.002;
            s.solver.timeStep = 1.0 / 240;
            s.solver.iterations = 10;
            Solver solver(s);
            for (int i = 0; i < 240; ++i) {
                solver.step();
            }
            // Closest approach of each top vertex to the bottom sheet, signed by the side.
            const Body& bottom = s.bodies[0];
            const Body& top = s.bodies[1];
            double closest = 1e9;
            for (Index q = top.firstParticle; q < top.firstParticle + top.particleCount; ++q) {
                const Vec3& x = s.particles.positions[q];
                for (const Triangle& t : bottom.triangles) {
                    const Vec3& a = s.particles.positions[t[0]];
                    const Vec3& b = s.particles.positions[t[1]];
                    const Vec3& c = s.particles.positions[t[2]];
                    const Vec3 w = closestBarycentric(x, a, b, c);
                    const Vec3 onT = w[0] * a + w[1] * b + w[2] * c;
                    const double d = (x - onT).norm() * (x.y() >= onT.y() ? 1 : -1);
                    closest = std::min(closest, d);
                }
            }
            return std::make_pair(closest, solver.selfContacts().size());
        };
        const auto [with, contacts] = run(true);
        QVERIFY(contacts > 100); // the layers lie on each other
        QVERIFY2(with > 0.9 * 0.01, qPrintable(QString::number(with)));
        const auto [without, none] = run(false);
        QCOMPARE(none, std::size_t(0));
        QVERIFY2(without < 0.5 * 0.01, qPrintable(QString::number(without)));
    }

    void clothDrapesOverASoftBodyWithSelfCollision() {
        // A cloth falls on a soft tet torus resting on the ground. Self-collision covers the
        // torus's boundary surface: with it, the cloth lies on the torus (its highest point
        // over the torus's top); without, it falls through onto the ground.
        auto run = [](bool selfCollision) {
            Scene s;
            TetTorusSpec torus;
            torus.majorRadius = 0.4;
            torus.minorRadius = 0.15;
            torus.segments = 24;
            torus.sides = 10;
            torus.rings = 1;
            torus.center = Vec3(0, 0.152, 0);
            s.bodies.push_back(makeTetTorus(s.particles, torus, "torus"));
            StrainTetMaterial rubber;
            rubber.stretch = {2e5, 2e5, 2e5};
            rubber.shear = {6e4, 6e4, 6e4};
            (void)addStrainTets(s.constraints, s.particles, s.bodies.back(), rubber);
            ClothSheetSpec sheet;
            sheet.columns = 24;
            sheet.rows = 24;
            sheet.width = 1.2;
            sheet.depth = 1.2;
            sheet.center = Vec3(0, 0.45, 0);
            s.bodies.push_back(makeClothSheet(s.particles, sheet, "cloth"));
            addEdgeDistances(s.constraints, s.particles, s.bodies.back(), 0.0);
            addDihedralBending(s.constraints, s.particles, s.bodies.back(), 5e3);
            s.colliders.push_back(Collider::plane(Vec3::Zero(), Vec3::UnitY()));
            s.solver.selfCollision = selfCollision;
            s.solver.clothThickness = 0.01;
            s.solver.timeStep = 1.0 / 120;
            s.solver.substeps = 2;
            s.solver.iterations = 10;
            Solver solver(s);
            for (int i = 0; i < 240; ++i) {
                solver.step();
            }
            const Body& cloth = s.bodies[1];
            double highest = -1e9;
            std::vector<double> speeds;
            for (Index q = cloth.firstParticle; q < cloth.firstParticle + cloth.particleCount;
                 ++q) {
                highest = std::max(highest, s.particles.positions[q].y());
                speeds.push_back(s.particles.velocities[q].norm());
            }
            std::sort(speeds.begin(), speeds.end());
            return std::array<double, 3>{highest, speeds[speeds.size() / 2], speeds.back()};
        };
        const auto [on, median, fastest] = run(true);
        const double through = run(false)[0];
        qInfo("cloth's highest point after 2 s: %.3f m with self-collision (median speed %.4f "
              "m/s, fastest %.3f), %.3f m without; the torus's top at 0.302 m",
              on, median, fastest, through);
        QVERIFY(on > 0.302 + 0.005);
        QVERIFY(through < 0.1);
        // Lying on it, sliding slowly down its sides (self-contacts have no friction yet) but
        // not jittering: the median vertex under 15 cm/s, none over 2 m/s.
        QVERIFY(median < 0.15);
        QVERIFY(fastest < 2);
    }

    void aFlatSheetWithSelfCollisionComesToRest() {
        // A sheet lying on the ground with self-collision on: its vertices' neighbours, a
        // fraction of an edge away when the sheet compresses, must not push each other out of
        // its plane (contacts act only where a vertex lies over a triangle's inside), so it
        // comes to rest as it does without.
        Scene s;
        ClothSheetSpec sheet;
        sheet.columns = 30;
        sheet.rows = 30;
        sheet.width = 0.6; // 2 cm edges: 2 h = 2 cm
        sheet.depth = 0.6;
        sheet.center = Vec3(0, 0.1, 0);
        s.bodies.push_back(makeClothSheet(s.particles, sheet, "sheet"));
        StrainTriangleMaterial soft;
        soft.stretchU = 2e3;
        soft.stretchV = 2e2; // compresses across under friction and bending
        soft.shear = 1e2;
        (void)addStrainTriangles(s.constraints, s.particles, s.bodies.back(), soft);
        addDihedralBending(s.constraints, s.particles, s.bodies.back(), 5e3);
        s.colliders.push_back(Collider::plane(Vec3::Zero(), Vec3::UnitY()));
        s.colliders.back().friction = 0.5;
        s.solver.selfCollision = true;
        s.solver.clothThickness = 0.01;
        s.solver.timeStep = 1.0 / 120;
        s.solver.substeps = 2;
        s.solver.iterations = 10;
        Solver solver(s);
        for (int i = 0; i < 360; ++i) {
            solver.step();
        }
        double fastest = 0, highest = 0;
        for (std::size_t q = 0; q < s.particles.size(); ++q) {
            fastest = std::max(fastest, s.particles.velocities[q].norm());
            highest = std::max(highest, s.particles.positions[q].y());
        }
        qInfo("after 3 s on the ground: fastest vertex %.4f m/s, highest %.4f m", fastest, highest);
        QVERIFY(fastest < 0.05);
        QVERIFY(highest < 0.03);
        QVERIFY2(solver.runaway().empty(), solver.runaway().c_str());
    }

    void aClothCollapsedIntoItselfIsStoppedWithBoundedMemory() {
        // A strip of 6 x 200 vertices crumpled into 200 layers within 1 cm (each row at its own
        // height, its own offset along the strip and its own place across it, so a vertex lies
        // over the inside of triangles in about half the layers): with a 1 cm thickness
        // every vertex is in reach of a hundred triangles or more. The query stops at
        // Solver::kRunawaySelfContacts per particle and the solver says the run ran away.
        Scene s;
        ClothSheetSpec sheet;
        sheet.columns = 6;
        sheet.rows = 200;
        s.bodies.push_back(makeClothSheet(s.particles, sheet, "strip"));
        addEdgeDistances(s.constraints, s.particles, s.bodies.back(), 1e-6);
        const std::size_t n = s.particles.size();
        const auto fraction = [](double v) { return v - std::floor(v); };
        for (int k = 0; k < sheet.rows; ++k) {
            for (int i = 0; i < sheet.columns; ++i) {
                s.particles.positions[std::size_t(k * sheet.columns + i)] = Vec3(
                    0.01 * i + 0.01 * fraction(k * 0.37), 5e-5 * k, 0.02 * fraction(k * 0.618034));
            }
        }
        s.solver.selfCollision = true;
        s.solver.clothThickness = 0.01;
        s.solver.gravity = Vec3::Zero();
        s.solver.threads = 2;
        Solver solver(s);
        solver.step();
        const std::size_t bound = Solver::kRunawaySelfContacts * n + 2;
        qInfo("%zu self-contacts kept (bound %zu): %s", solver.selfContacts().size(), bound,
              solver.runaway().c_str());
        QVERIFY(solver.selfContacts().size() <= bound);
        QVERIFY(solver.selfContacts().size() > 16 * n); // the query ran up to the limit
        QVERIFY(solver.runaway().find("ran away in step 1") != std::string::npos);
        QVERIFY(solver.runaway().find("1200 particles") != std::string::npos);

        // The same strip laid flat is a sound run.
        Scene flat;
        flat.bodies.push_back(makeClothSheet(flat.particles, sheet, "strip"));
        flat.solver.selfCollision = true;
        flat.solver.clothThickness = 0.01;
        Solver calm(flat);
        calm.step();
        QVERIFY2(calm.runaway().empty(), calm.runaway().c_str());
    }

    void theSearchFindsEveryPairTheTestAccepts() {
        // Three sheets crumpled at random into one another, moving at random within a substep,
        // with near-slivers and degenerate triangles among them: the hash, the scans shared by
        // two triangles and the plane test before the exact one must find exactly the pairs a
        // test of every particle against every triangle finds (those whose boxes overlap), in
        // the same order, and parts of the triangles queried apart (split inside a shared scan)
        // must give the same list as one.
        Particles particles;
        const std::vector<Triangle> triangles =
            stackedSheets(particles, 3, 16, 0.3, Vec3(0.004, 0.006, -0.003));
        std::mt19937 random(31);
        std::uniform_real_distribution<Real> noise(-0.006, 0.006);
        std::vector<Vec3> x = particles.positions;
        for (Vec3& v : x) {
            v += Vec3(noise(random), noise(random), noise(random));
        }
        // Slivers: corners put on (or 10 micrometres off) the line of two others.
        for (std::size_t t = 0; t < triangles.size(); t += 37) {
            const Triangle& tri = triangles[t];
            x[tri[2]] = 0.5 * (x[tri[0]] + x[tri[1]]) + Vec3(0, (t % 2) * 1e-5, 0);
        }
        std::vector<Vec3> p = x;
        for (Vec3& v : p) {
            v += Vec3(noise(random), noise(random), noise(random));
        }
        const Real thickness = 0.005;

        const auto testEveryPair = [&](const std::vector<Vec3>& xs, const std::vector<Vec3>& ps) {
            std::vector<SelfContact> found;
            for (const Triangle& tri : triangles) {
                const Bounds box = selfCollisionBox(tri, xs, ps, thickness);
                for (Index q = 0; q < Index(xs.size()); ++q) {
                    Bounds swept;
                    swept.add(xs[q]);
                    swept.add(ps[q]);
                    SelfContact contact;
                    if ((swept.max.array() >= box.min.array()).all() &&
                        (swept.min.array() <= box.max.array()).all() &&
                        selfContactBetween(q, tri, xs, ps, thickness, contact)) {
                        found.push_back(contact);
                    }
                }
            }
            orderSelfContacts(found);
            return found;
        };
        const std::vector<SelfContact> everyPair = testEveryPair(x, p);
        QVERIFY2(everyPair.size() > 500, qPrintable(QString::number(everyPair.size())));
        const auto same = [](const std::vector<SelfContact>& a, const std::vector<SelfContact>& b) {
            return a.size() == b.size() &&
                   std::equal(a.begin(), a.end(), b.begin(), [](const auto& u, const auto& v) {
                       return u.particle == v.particle && u.triangle == v.triangle &&
                              u.barycentric == v.barycentric && u.side == v.side;
                   });
        };
        SelfCollisionWorkspace ws;
        QVERIFY(same(findSelfContacts(triangles, x, p, thickness, ws), everyPair));
        // The scan's first filter is in floats, each box rounded outwards, and tests eight
        // entries at once with AVX2, one at a time without: never a pair fewer with either, also
        // a kilometre from the origin, where a float's last place (61 micrometres) is coarse
        // beside the 5 mm thickness and the boxes' gaps.
        {
            std::vector<Vec3> farX = x, farP = p;
            const Vec3 away(1000.3, -2000.7, 500.1);
            for (std::size_t i = 0; i < x.size(); ++i) {
                farX[i] += away;
                farP[i] += away;
            }
            const std::vector<SelfContact> farPairs = testEveryPair(farX, farP);
            QVERIFY(farPairs.size() > 500);
            const isa::Level before = isa::activeLevel();
            for (const isa::Level level : {isa::Level::Sse2, isa::cpuLevel()}) {
                QVERIFY(isa::selectLevel(level));
                SelfCollisionWorkspace at;
                QVERIFY(same(findSelfContacts(triangles, x, p, thickness, at), everyPair));
                QVERIFY(same(findSelfContacts(triangles, farX, farP, thickness, at), farPairs));
            }
            QVERIFY(isa::selectLevel(before));
        }

        std::vector<SelfContact> inParts;
        std::vector<Index> candidates;
        for (std::size_t first : {std::size_t(0), std::size_t(301), std::size_t(1000)}) {
            const std::size_t last = first == 1000 ? triangles.size() : first == 0 ? 301 : 1000;
            QVERIFY(querySelfContacts(triangles, x, p, thickness, ws, first, last, candidates,
                                      inParts));
        }
        orderSelfContacts(inParts);
        QVERIFY(same(inParts, everyPair));

        // The hash built in three parts (the solver's threads) is the hash built in one, wide
        // vertices (flung far) in the same order too.
        p[5] += Vec3(30, 0, 0);
        p[700] += Vec3(0, -30, 0);
        SelfCollisionWorkspace one;
        buildSelfCollisionGrid(triangles, x, p, thickness, one);
        QCOMPARE(one.wide, (std::vector<Index>{5, 700}));
        for (int parts : {3, kMostGridParts + 3}) { // the parts beyond the most do nothing
            SelfCollisionWorkspace three;
            beginSelfCollisionGrid(triangles, x, p, thickness, parts, three);
            for (int part = parts - 1; part >= 0; --part) {
                countSelfCollisionGrid(part, three);
            }
            placeSelfCollisionGrid(three);
            for (int part = 0; part < parts; ++part) {
                fillSelfCollisionGrid((part + 1) % parts, three);
            }
            QCOMPARE(three.wide, one.wide);
            QCOMPARE(three.start, one.start);
            QCOMPARE(three.table, one.table);
            QVERIFY(three.tableBoxes == one.tableBoxes);
        }
    }

    void aParticleFlungFarKeepsTheHashSmallAndTheContacts() {
        // Two sheets 3 mm apart (the upper one shifted so its vertices lie over the lower one's
        // triangles), thickness 5 mm: the upper vertices touch the lower sheet. Then one upper
        // vertex is flung 10 km down in a substep, and one lower vertex 1,000 km along the
        // diagonal (a runaway once asked the hash for 24 GB of entries). The flung vertex stays
        // out of the hash (memory bounded by kMaxVertexCells entries a vertex), the triangles
        // at the far corner test every vertex, and every other contact is as it was.
        Particles particles;
        const std::vector<Triangle> triangles =
            stackedSheets(particles, 2, 20, 0.4, Vec3(0.007, 0.003, 0.004));
        const std::vector<Vec3> x = particles.positions;
        const Real thickness = 0.005;
        const auto pairs = [](const std::vector<SelfContact>& contacts, Index skip) {
            std::vector<std::array<Index, 4>> kept;
            for (const SelfContact& c : contacts) {
                const Triangle& t = c.triangle;
                if (c.particle != skip && t[0] != skip && t[1] != skip && t[2] != skip) {
                    kept.push_back({c.particle, t[0], t[1], t[2]});
                }
            }
            std::sort(kept.begin(), kept.end());
            return kept;
        };
        SelfCollisionWorkspace calm;
        const std::vector<SelfContact> before = findSelfContacts(triangles, x, x, thickness, calm);
        QVERIFY(before.size() > 300); // the upper sheet lies on the lower one
        QVERIFY(calm.wide.empty());

        const Index up = 400 + 10 * 20 + 10; // an upper vertex in the middle
        std::vector<Vec3> p = x;
        p[up] = x[up] - Vec3(0, 1e4, 0);
        SelfCollisionWorkspace ws;
        const std::vector<SelfContact> flung = findSelfContacts(triangles, x, p, thickness, ws);
        QCOMPARE(ws.wide, std::vector<Index>{up});
        QVERIFY(ws.table.size() <= std::size_t(kMaxVertexCells) * 800);
        QVERIFY(pairs(flung, up) == pairs(before, up));
        // Its path crosses the lower triangle under it: found, from the side it came from.
        const auto crossing = std::find_if(flung.begin(), flung.end(), [&](const SelfContact& c) {
            return c.particle == up && c.triangle[0] < 400;
        });
        QVERIFY(crossing != flung.end());
        QCOMPARE(crossing->side, 1.0);

        const Index low = 9 * 20 + 9; // a lower vertex: its triangles reach 1,000 km
        p = x;
        p[low] = x[low] + Vec3::Constant(1e6);
        SelfCollisionWorkspace far;
        const std::vector<SelfContact> reach = findSelfContacts(triangles, x, p, thickness, far);
        QCOMPARE(far.wide, std::vector<Index>{low});
        QVERIFY(far.table.size() <= std::size_t(kMaxVertexCells) * 800);
        QVERIFY(pairs(reach, low) == pairs(before, low));

        // A non-finite prediction neither hangs nor allocates: it is no one's contact, and
        // is not even tested.
        p = x;
        p[up] = Vec3::Constant(std::numeric_limits<Real>::infinity());
        SelfCollisionWorkspace broken;
        const std::vector<SelfContact> none = findSelfContacts(triangles, x, p, thickness, broken);
        QVERIFY(broken.wide.empty());
        QVERIFY(pairs(none, up) == pairs(before, up));
        // Nor does a whole sheet gone NaN (its boxes are its start positions'): no contact.
        p.assign(x.size(), Vec3::Constant(std::numeric_limits<Real>::quiet_NaN()));
        SelfCollisionWorkspace nan;
        QVERIFY(findSelfContacts(triangles, x, p, thickness, nan).empty());
        QVERIFY(nan.wide.empty() && nan.table.size() <= std::size_t(kMaxVertexCells) * 800);
    }

    void particleStartingInsideIsPushedOut() {
        for (const Collider& c : {Collider::sphere(Vec3::Zero(), 1), cubeMesh(),
                                  Collider::capsule(Vec3(0, -1, 0), Vec3(0, 1, 0), 0.5),
                                  Collider::box(Vec3::Zero(), Vec3::Constant(0.5))}) {
            Scene s = oneParticle(Vec3(0.1, 0.2, 0.05), Vec3::Zero());
            s.colliders.push_back(c);
            s.solver.gravity = Vec3::Zero();
            Solver solver(s);
            solver.step();
            const double d = closestSurfacePoint(c, s.particles.positions[0]).distance;
            QVERIFY2(std::abs(d - s.solver.collisionMargin) < 1e-9,
                     qPrintable(QString("%1: %2").arg(c.name.c_str()).arg(d)));
        }
    }

    void collidersAreAuthoredByPositionAndKeys() {
        // Every shape moves rigidly by its position; the Euler angles round-trip; edits check
        // their values and name what is wrong.
        Bounds bodies;
        bodies.add(Vec3(-1, 2, -1));
        bodies.add(Vec3(1, 3, 1));
        for (ColliderShape shape : {ColliderShape::Plane, ColliderShape::Sphere, ColliderShape::Box,
                                    ColliderShape::Capsule}) {
            Collider c = defaultCollider(shape, bodies);
            QVERIFY2(checkCollider(c).empty(), checkCollider(c).c_str());
            // Fitted under the bodies: the top of the shape is at or below their lowest point.
            const SurfacePoint top = closestSurfacePoint(c, Vec3(0, 10, 0));
            QVERIFY(top.point.y() <= 2 + 1e-12);
            QVERIFY(top.point.y() > 1.0);
            const Collider before = c;
            moveCollider(c, colliderPosition(c) + Vec3(0.5, -1, 2));
            QVERIFY((colliderPosition(c) - colliderPosition(before) - Vec3(0.5, -1, 2)).norm() <
                    1e-12);
            // Moved rigidly: a point moved with it keeps its distance.
            const Vec3 probe(0.3, 0.7, -0.2);
            QVERIFY(std::abs(closestSurfacePoint(c, probe + Vec3(0.5, -1, 2)).distance -
                             closestSurfacePoint(before, probe).distance) < 1e-12);
        }
        Collider mesh = cubeMesh();
        moveCollider(mesh, Vec3(1, 2, 3));
        QVERIFY((colliderPosition(mesh) - Vec3(1, 2, 3)).norm() < 1e-12);

        const Vec3 angles(0.3, -0.7, 1.1);
        QVERIFY((eulerAnglesOf(rotationFromEulerAngles(angles)) - angles).norm() < 1e-12);
        const Mat3 r = rotationFromEulerAngles(Vec3(0, 0, std::numbers::pi / 2));
        QVERIFY((r * Vec3::UnitX() - Vec3::UnitY()).norm() < 1e-12);

        Result<Collider> box = colliderFromSpec(
            "box:name=crate,position=1 2 3,half_extents=0.5 0.25 1,rotation=0 90 0,friction=0.6",
            bodies);
        QVERIFY2(box.ok(), box.error().c_str());
        QCOMPARE(box->name, std::string("crate"));
        QVERIFY((box->center - Vec3(1, 2, 3)).norm() < 1e-12);
        QCOMPARE(box->halfExtents, Vec3(0.5, 0.25, 1));
        QVERIFY((box->rotation * Vec3::UnitZ() - Vec3::UnitX()).norm() < 1e-12);
        QCOMPARE(box->friction, 0.6);
        // The rotated box is 1 m deep along x: a point 0.9 m along x from its centre is inside.
        QVERIFY(closestSurfacePoint(*box, Vec3(1.9, 2, 3)).distance < 0);
        Result<Collider> capsule = colliderFromSpec("capsule:a=0 0 0,b=0 1 0,radius=0.2", bodies);
        QVERIFY(capsule.ok());
        QVERIFY((colliderPosition(*capsule) - Vec3(0, 0.5, 0)).norm() < 1e-12);
        Result<Collider> plane = colliderFromSpec("plane:normal=0 0 2", bodies);
        QVERIFY(plane.ok());
        QCOMPARE(plane->normal, Vec3(0, 0, 1));

        struct Refusal {
            const char* spec;
            const char* message;
        };
        for (const Refusal& bad : {
                 Refusal{"cone", "unknown collider shape 'cone'"},
                 Refusal{"sphere:radius=0", "the radius must be positive"},
                 Refusal{"sphere:radius=x", "radius cannot be 'x'"},
                 Refusal{"box:half_extents=1 0 1", "every half extent must be positive"},
                 Refusal{"plane:normal=0 0 0", "the normal is zero"},
                 Refusal{"sphere:position=1 2", "three numbers"},
                 Refusal{"sphere:restitution=2", "restitution must be in [0, 1]"},
                 Refusal{"sphere:friction=-1", "friction must be a number >= 0"},
                 Refusal{"sphere:colour=red", "has no 'colour'; keys: name, position"},
                 Refusal{"sphere:radius", "is not KEY=VALUE"},
             }) {
            const Result<Collider> c = colliderFromSpec(bad.spec, bodies);
            QVERIFY2(!c.ok(), bad.spec);
            QVERIFY2(c.error().find(bad.message) != std::string::npos, c.error().c_str());
        }
        Scene scene;
        scene.colliders.push_back(Collider::sphere(Vec3::Zero(), -1));
        QCOMPARE(validateScene(scene).size(), std::size_t(1));
    }

    void anAddedSphereCatchesTheCloth() {
        // The cloth scene, unpinned, with a sphere added under its middle: after 1.5 s no
        // particle is inside the sphere, and the cloth hangs over it, far above where it falls
        // to without.
        Result<Scene> made = makeScene("cloth");
        QVERIFY(made.ok());
        made->constraints.attachments = {};
        Real w = 0;
        for (Real m : made->particles.inverseMasses) {
            w = std::max(w, m);
        }
        for (Real& m : made->particles.inverseMasses) {
            m = w;
        }
        Scene free = *made;
        Scene caught = *made;
        const Bounds b = caught.bounds();
        Result<Collider> sphere = colliderFromSpec(
            "sphere:radius=0.3,position=" + std::to_string(b.center().x()) + " " +
                std::to_string(b.min.y() - 0.6) + " " + std::to_string(b.center().z()),
            b);
        QVERIFY2(sphere.ok(), sphere.error().c_str());
        caught.colliders.push_back(*sphere);
        Solver a(free), c(caught);
        for (int i = 0; i < 300; ++i) {
            a.step();
            c.step();
        }
        Real lowestFree = 1e9, lowestCaught = 1e9, inside = 1e9;
        for (std::size_t i = 0; i < caught.particles.size(); ++i) {
            inside = std::min(inside,
                              closestSurfacePoint(*sphere, caught.particles.positions[i]).distance);
            lowestFree = std::min(lowestFree, free.particles.positions[i].y());
            lowestCaught = std::min(lowestCaught, caught.particles.positions[i].y());
        }
        qInfo("closest to the sphere %.4f m; lowest point %.3f m caught, %.3f m free", inside,
              lowestCaught, lowestFree);
        QVERIFY(inside > -0.01);
        QVERIFY(lowestCaught > lowestFree + 5);
        QVERIFY(lowestCaught > b.min.y() - 3);
    }
};

QTEST_GUILESS_MAIN(TestColliders)
#include "tst_colliders.moc"
