// Continuous collision (core/solver/ContinuousCollision.h): the pair tests against moves
// worked by hand, and the guarantee itself: sheets that start apart and are moved at random,
// far enough to pass through each other, end apart (checked by an exact-enough crossing test of
// every pair of triangles that share no corner), with only particles near the crossings held.

#include "core/scene/Scene.h"
#include "core/scene/Topology.h"
#include "core/scenes/SceneLibrary.h"
#include "core/solver/ContinuousCollision.h"
#include "core/solver/Solver.h"

#include <QtTest>

#include <random>

using namespace pbd;

namespace {

// Pairs of triangles sharing no corner whose surfaces cross (an edge of one through the other).
std::size_t crossingPairs(const std::vector<Triangle>& triangles, const std::vector<Vec3>& x) {
    std::size_t count = 0;
    for (std::size_t i = 0; i < triangles.size(); ++i) {
        const Triangle& A = triangles[i];
        for (std::size_t j = i + 1; j < triangles.size(); ++j) {
            const Triangle& B = triangles[j];
            bool shared = false;
            for (Index v : A) {
                shared = shared || v == B[0] || v == B[1] || v == B[2];
            }
            if (shared) {
                continue;
            }
            count += trianglesCross(x[A[0]], x[A[1]], x[A[2]], x[B[0]], x[B[1]], x[B[2]]);
        }
    }
    return count;
}

// An n x n sheet of unit squares scaled to `size`, at height y, shifted by `shift` in x and z
// (sheets on one grid would cross exactly on each other's edges).
void addSheet(int n, Real size, Real y, std::vector<Vec3>& x, std::vector<Triangle>& triangles,
              Real shift = 0) {
    const Index first = Index(x.size());
    for (int i = 0; i <= n; ++i) {
        for (int j = 0; j <= n; ++j) {
            x.emplace_back(size * j / n + shift, y, size * i / n + 0.6 * shift);
        }
    }
    auto at = [&](int i, int j) { return first + Index(i * (n + 1) + j); };
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
            triangles.push_back({at(i, j), at(i + 1, j), at(i + 1, j + 1)});
            triangles.push_back({at(i, j), at(i + 1, j + 1), at(i, j + 1)});
        }
    }
}

// Two n x n sheets of `size`, the upper `gap` above the lower and shifted by `shift`, with a
// guard over both and every particle holdable.
struct TwoSheets {
    TwoSheets(int n, Real size, Real gap, Real shift)
        : side(std::size_t(n) + 1) {
        addSheet(n, size, 0, x0, triangles);
        upper = x0.size();
        addSheet(n, size, gap, x0, triangles, shift);
        holdable.assign(x0.size(), 1);
        guard.setTriangles(triangles);
    }
    // Particle (i, j) of the sheet whose particles start at `first`.
    std::size_t at(std::size_t first, int i, int j) const {
        return first + std::size_t(i) * side + std::size_t(j);
    }
    // Moves the 3 x 3 patch of particles round (i, j) of a sheet by dy.
    void raisePatch(std::vector<Vec3>& x, std::size_t first, int i, int j, Real dy) const {
        for (int a = i - 1; a <= i + 1; ++a) {
            for (int b = j - 1; b <= j + 1; ++b) {
                x[at(first, a, b)].y() += dy;
            }
        }
    }
    std::size_t side, upper = 0;
    std::vector<Vec3> x0;
    std::vector<Triangle> triangles;
    std::vector<std::uint8_t> holdable;
    ContinuousCollision guard;
};

} // namespace

class TestContinuousCollision : public QObject {
    Q_OBJECT

private slots:
    void aVertexThroughATriangleTouchesIt() {
        const Vec3 a(0, 0, 0), b(1, 0, 0), c(0, 0, 1);
        // Falling through the inside.
        QVERIFY(vertexTriangleTouch({0.2, 1, 0.2}, {0.2, -1, 0.2}, a, a, b, b, c, c));
        // Stopping 1 mm short.
        QVERIFY(!vertexTriangleTouch({0.2, 1, 0.2}, {0.2, 0.001, 0.2}, a, a, b, b, c, c));
        // Falling beside it.
        QVERIFY(!vertexTriangleTouch({0.8, 1, 0.8}, {0.8, -1, 0.8}, a, a, b, b, c, c));
        // Sliding along it 1 mm above, 2 cm.
        QVERIFY(!vertexTriangleTouch({0.1, 0.001, 0.1}, {0.12, 0.001, 0.11}, a, a, b, b, c, c));
        // And 0.01 mm above: conservative advancement runs out of steps (2,000 would clear
        // it), and the cubic of its height above the plane shows it never comes down. Ending
        // 0.05 um above instead, within kTouch of it, it touches.
        QVERIFY(!vertexTriangleTouch({0.1, 1e-5, 0.1}, {0.12, 1e-5, 0.11}, a, a, b, b, c, c));
        QVERIFY(vertexTriangleTouch({0.1, 1e-5, 0.1}, {0.12, 5e-8, 0.11}, a, a, b, b, c, c));
        // Below it, sliding the other way: the same on the other side.
        QVERIFY(!vertexTriangleTouch({0.12, -1e-5, 0.11}, {0.1, -1e-5, 0.1}, a, a, b, b, c, c));
        // In its plane, 0.01 mm beside its edge ca, sliding 2 cm along it: no cubic can tell
        // (the volume is 0 throughout), the direction away from the edge does.
        QVERIFY(!vertexTriangleTouch({-1e-5, 0, 0.5}, {-1e-5, 0, 0.52}, a, a, b, b, c, c));
        QVERIFY(vertexTriangleTouch({-1e-5, 0, 0.5}, {0.001, 0, 0.52}, a, a, b, b, c, c));
        // Still, with the triangle rising through it.
        const Vec3 up(0, 2, 0);
        QVERIFY(vertexTriangleTouch({0.2, 1, 0.2}, {0.2, 1, 0.2}, a, a + up, b, b + up, c, c + up));
        // Moving with the triangle: nothing relative, nothing touches.
        QVERIFY(!vertexTriangleTouch({0.2, 0.01, 0.2}, Vec3(0.2, 0.01, 0.2) + up, a, a + up, b,
                                     b + up, c, c + up));
        // A triangle that swings about its edge ab through a still point near its corner c (at
        // t = 0.45 the point is in its plane, 0.07 of its width in from the edge ca; the ends of
        // the move are both apart from it: only following the move finds the touch), and one
        // that swings past it (the point in its plane beyond the edge bc).
        QVERIFY(vertexTriangleTouch({0.05, 0.5, 0.6}, {0.05, 0.5, 0.6}, a, a, b, b, {0, -0.2, 1},
                                    {0, 1.5, 0.3}));
        QVERIFY(!vertexTriangleTouch({0.3, 0.5, 0.6}, {0.3, 0.5, 0.6}, a, a, b, b, {0, -0.2, 1},
                                     {0, 1.5, 0.3}));
    }

    void crossingEdgesTouch() {
        QCOMPARE(segmentDistance({0, 0, 0}, {1, 0, 0}, {0.5, 1, -1}, {0.5, 1, 1}), 1.0);
        QCOMPARE(segmentDistance({0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0}), 1.0); // parallel
        // Edge cd falls through edge ab (a cross seen from above).
        QVERIFY(edgeEdgeTouch({0, 0, 0}, {0, 0, 0}, {1, 0, 0}, {1, 0, 0}, {0.5, 1, -1},
                              {0.5, -1, -1}, {0.5, 1, 1}, {0.5, -1, 1}));
        // Falling beside it, and stopping short of it.
        QVERIFY(!edgeEdgeTouch({0, 0, 0}, {0, 0, 0}, {1, 0, 0}, {1, 0, 0}, {2, 1, -1}, {2, -1, -1},
                               {2, 1, 1}, {2, -1, 1}));
        QVERIFY(!edgeEdgeTouch({0, 0, 0}, {0, 0, 0}, {1, 0, 0}, {1, 0, 0}, {0.5, 1, -1},
                               {0.5, 1e-3, -1}, {0.5, 1, 1}, {0.5, 1e-3, 1}));
        // Edge cd 0.01 mm above ab, across it, sliding 2 cm along it: too many steps for
        // conservative advancement, apart by the cubic; sliding down onto it, touching.
        QVERIFY(!edgeEdgeTouch({0, 0, 0}, {0, 0, 0}, {1, 0, 0}, {1, 0, 0}, {0.5, 1e-5, -1},
                               {0.52, 1e-5, -1}, {0.5, 1e-5, 1}, {0.52, 1e-5, 1}));
        QVERIFY(edgeEdgeTouch({0, 0, 0}, {0, 0, 0}, {1, 0, 0}, {1, 0, 0}, {0.5, 1e-5, -1},
                              {0.52, 0, -1}, {0.5, 1e-5, 1}, {0.52, 0, 1}));
        // Parallel to ab and 0.01 mm above it, sliding 2 cm along it (no cubic: the lines'
        // cross product is 0), and the same coming down onto it.
        QVERIFY(!edgeEdgeTouch({0, 0, 0}, {0, 0, 0}, {1, 0, 0}, {1, 0, 0}, {0.2, 1e-5, 0},
                               {0.22, 1e-5, 0}, {0.8, 1e-5, 0}, {0.82, 1e-5, 0}));
        QVERIFY(edgeEdgeTouch({0, 0, 0}, {0, 0, 0}, {1, 0, 0}, {1, 0, 0}, {0.2, 1e-5, 0},
                              {0.22, 0, 0}, {0.8, 1e-5, 0}, {0.82, 0, 0}));
    }

    void trianglesApartAlongAnAxisHaveNoPairThatTouches() {
        // Pairs of triangles of about 1 cm, 1 cm apart at random, each corner moved at random
        // by up to 1 cm: whenever the triangle test says apart, none of the pairs of a vertex
        // and the other triangle, nor of two edges, touches over the move.
        std::mt19937 random(31);
        std::uniform_real_distribution<Real> unit(-1, 1);
        auto jitter = [&](Real r) -> Vec3 {
            return Vec3(unit(random), unit(random), unit(random)) * r;
        };
        int apart = 0, touching = 0;
        for (int trial = 0; trial < 40000; ++trial) {
            std::array<Vec3, 3> p0, p1, q0, q1;
            const Vec3 cq = jitter(0.01);
            for (int k = 0; k < 3; ++k) {
                p0[std::size_t(k)] = jitter(0.006);
                q0[std::size_t(k)] = cq + jitter(0.006);
                p1[std::size_t(k)] = p0[std::size_t(k)] + jitter(0.01);
                q1[std::size_t(k)] = q0[std::size_t(k)] + jitter(0.01);
            }
            bool touches = false;
            for (int k = 0; k < 3; ++k) {
                const std::size_t i = std::size_t(k), j = std::size_t((k + 1) % 3);
                touches =
                    touches ||
                    vertexTriangleTouch(p0[i], p1[i], q0[0], q1[0], q0[1], q1[1], q0[2], q1[2]) ||
                    vertexTriangleTouch(q0[i], q1[i], p0[0], p1[0], p0[1], p1[1], p0[2], p1[2]);
                for (int l = 0; l < 3; ++l) {
                    const std::size_t u = std::size_t(l), v = std::size_t((l + 1) % 3);
                    touches = touches ||
                              edgeEdgeTouch(p0[i], p1[i], p0[j], p1[j], q0[u], q1[u], q0[v], q1[v]);
                }
            }
            const bool stayApart =
                trianglesStayApart({&p0[0], &p0[1], &p0[2]}, {&p1[0], &p1[1], &p1[2]},
                                   {&q0[0], &q0[1], &q0[2]}, {&q1[0], &q1[1], &q1[2]});
            QVERIFY(!(stayApart && touches));
            apart += stayApart;
            touching += touches;
        }
        // Neither answer is rare in this mix: the test says something both ways.
        QVERIFY(apart > 4000);
        QVERIFY(touching > 4000);
        // Two parallel triangles 1 cm apart sliding 2 cm past each other (no vertex and edge
        // pair clears that in one step of conservative advancement), apart along the normal;
        // one through the other, not.
        const Vec3 a(0, 0, 0), b(0.01, 0, 0), c(0, 0, 0.01), up(0, 0.01, 0), slide(0.02, 0, 0.01);
        const Vec3 d = a + up, e = b + up, f = c + up;
        const Vec3 d1 = d + slide, e1 = e + slide, f1 = f + slide;
        QVERIFY(trianglesStayApart({&a, &b, &c}, {&a, &b, &c}, {&d, &e, &f}, {&d1, &e1, &f1}));
        const Vec3 d2 = d - 2 * up, e2 = e - 2 * up, f2 = f - 2 * up;
        QVERIFY(!trianglesStayApart({&a, &b, &c}, {&a, &b, &c}, {&d, &e, &f}, {&d2, &e2, &f2}));
    }

    void aSheetMovingAsOneFollowsNoPairOfNeighbours() {
        // A 24 x 24 sheet of 1 cm squares thrown 5 cm sideways and 3 cm up in a substep, as
        // one: its pairs of primitives are near for that move, but nothing moves against
        // anything. The bounds by the moves against each other dismiss the neighbours' pairs,
        // the triangle test most others; what is left are pairs closer than their spheres
        // tell, followed one step (63,763 pairs were followed with the largest moves alone).
        std::vector<Vec3> x0;
        std::vector<Triangle> triangles;
        addSheet(24, 0.25, 0, x0, triangles);
        std::vector<Vec3> x1 = x0;
        for (Vec3& p : x1) {
            p += Vec3(0.05, 0.03, 0);
        }
        ContinuousCollision guard;
        guard.setTriangles(triangles);
        const std::vector<std::uint8_t> holdable(x0.size(), 1);
        const ContinuousCollisionStatistics s = guard.apply(x0, x1, holdable);
        QVERIFY(s.pairs < 3000);
        QCOMPARE(s.held, std::size_t(0));
        // Bent along the middle as it goes, the fold's neighbours move against each other
        // and are followed; it does not touch itself.
        for (std::size_t i = 0; i < x1.size(); ++i) {
            if (x0[i].x() > 0.125) {
                x1[i].y() += 0.5 * (x0[i].x() - 0.125);
            }
        }
        const ContinuousCollisionStatistics bent = guard.apply(x0, x1, holdable);
        QVERIFY(bent.pairs > s.pairs);
        QCOMPARE(bent.held, std::size_t(0));
    }

    void aTieKeepsAnAirTetWholeWhereZonesWouldTurnIt() {
        // Triangle A (1 m, at z = 1 cm) stays, held by an earlier cycle; triangle B, beside
        // it (not under it), rises 4 cm, through triangle F 1.5 cm up: F and B join a zone,
        // which rises 2 cm, half B's move. The air tet between A and B's corner b0 (positive
        // while b0 is below A's plane) is turned inside out by that move, and no mending
        // could turn it back with all four corners held: tied, A joins the zone and the tet
        // moves by one translation.
        const std::vector<Vec3> x0 = {{0, 0, 0.01},      {1, 0, 0.01},    {0, 1, 0.01},     // A
                                      {2, 2, 0},         {3, 2, 0},       {2, 3, 0},        // B
                                      {2.2, 2.2, 0.015}, {2.2, 6, 0.015}, {6, 2.2, 0.015}}; // F
        const std::vector<Triangle> triangles = {{0, 1, 2}, {3, 4, 5}, {6, 7, 8}};
        const std::vector<Tetrahedron> air = {{0, 2, 1, 3}};
        const auto volume = [&](const std::vector<Vec3>& x) {
            return signedVolume(x[0], x[2], x[1], x[3]);
        };
        QVERIFY(volume(x0) > 0);
        std::vector<Vec3> wanted = x0;
        for (int i = 3; i < 6; ++i) {
            wanted[std::size_t(i)].z() += 0.04;
        }
        const std::vector<std::uint8_t> holdable(x0.size(), 1);
        const std::vector<Index> heldBefore = {0, 1, 2};
        for (int mode = 0; mode < 3; ++mode) {
            const bool tied = mode > 0;
            ContinuousCollision guard;
            guard.setTriangles(triangles);
            std::vector<Tetrahedron> list = air;
            if (mode == 2) {
                // The ties built at an apply from a list of another tet (F's corners and A's
                // first, which the moves do not turn), then the list changed in place and set
                // again under another version: the next apply reads it afresh.
                list = {{6, 7, 8, 0}};
                guard.setTies(&list, 1);
                std::vector<Vec3> first = wanted;
                QCOMPARE(guard.apply(x0, first, holdable, nullptr, &heldBefore).tied,
                         std::size_t(0));
                list = air;
            }
            guard.setTies(tied ? &list : nullptr, 2);
            std::vector<Vec3> x1 = wanted;
            const ContinuousCollisionStatistics s =
                guard.apply(x0, x1, holdable, nullptr, &heldBefore);
            QCOMPARE(s.unresolved, std::size_t(0));
            QVERIFY(s.touching > 0); // F and B
            QCOMPARE(crossingPairs(triangles, x1), std::size_t(0));
            if (!tied) {
                QCOMPARE(s.tied, std::size_t(0));
                QVERIFY(volume(x1) < 0); // B's zone rose past A's plane
                QCOMPARE(x1[0], x0[0]);
                continue;
            }
            QCOMPARE(s.tied, std::size_t(1));
            QVERIFY(std::abs(volume(x1) - volume(x0)) < 1e-12);
            // One translation for all nine: the zone's mean move, 3 x 4 cm over 9.
            for (std::size_t i = 0; i < x0.size(); ++i) {
                QVERIFY((x1[i] - x0[i] - Vec3(0, 0, 0.12 / 9)).norm() < 1e-12);
                QVERIFY(guard.held()[i]);
            }
        }
    }

    void aRunBlownUpBeyondFloatsCrashesNothing() {
        // Two sheets; one triangle's corners sent beyond what a float holds (1e40 m, each
        // way), as a run gone wrong upstream would: its swept box was infinite every way and
        // met the empty slots of the tree's leaves, naming triangles that do not exist (a
        // crash). Now such a box is empty: in no pair.
        std::vector<Vec3> x0;
        std::vector<Triangle> triangles;
        addSheet(12, 0.5, 0, x0, triangles);
        addSheet(12, 0.5, 0.01, x0, triangles);
        std::vector<Vec3> x1 = x0;
        for (Vec3& p : x1) {
            p.z() -= 0.001;
        }
        const Triangle blown = triangles[triangles.size() / 3];
        x1[blown[0]] = Vec3(1e40, 1e40, 1e40);
        x1[blown[1]] = Vec3(-1e40, -1e40, -1e40);
        const std::vector<Vec3> wanted = x1;
        ContinuousCollision guard;
        guard.setTriangles(triangles);
        const std::vector<std::uint8_t> holdable(x0.size(), 1);
        for (int apply = 0; apply < 2; ++apply) { // the whole test, then from the same start
            const ContinuousCollisionStatistics s = guard.apply(x0, x1, holdable);
            // What moves with the blown corners is held (their neighbours' pairs touch for
            // such moves); the second sheet, 1 cm above, is not.
            QVERIFY2(s.held < 40, qPrintable(QString::number(s.held)));
            for (std::size_t i = x0.size() / 2; i < x0.size(); ++i) {
                QCOMPARE(x1[i], wanted[i]);
            }
        }
    }

    void sheetsMovedAtRandomEndWithoutCrossing() {
        // Two 12 x 12 sheets of 0.5 m, 1 cm apart; every particle moved at random by up to
        // 4 cm in each axis: left alone, hundreds of pairs cross.
        std::vector<Vec3> x0;
        std::vector<Triangle> triangles;
        addSheet(12, 0.5, 0, x0, triangles);
        addSheet(12, 0.5, 0.01, x0, triangles);
        QCOMPARE(crossingPairs(triangles, x0), std::size_t(0));
        std::mt19937 random(7);
        std::uniform_real_distribution<Real> move(-0.04, 0.04);
        for (int trial = 0; trial < 4; ++trial) {
            std::vector<Vec3> x1 = x0;
            for (Vec3& p : x1) {
                p += Vec3(move(random), move(random), move(random));
            }
            QVERIFY(crossingPairs(triangles, x1) > 100);
            std::vector<std::uint8_t> holdable(x0.size(), 1);
            ContinuousCollision guard;
            guard.setTriangles(triangles);
            const std::vector<Vec3> wanted = x1;
            const ContinuousCollisionStatistics s = guard.apply(x0, x1, holdable);
            QCOMPARE(crossingPairs(triangles, x1), std::size_t(0));
            QVERIFY(s.touching > 0 && s.held > 0 && s.rounds >= 1);
            QCOMPARE(s.unresolved, std::size_t(0));
            // Each particle either moved as it was told or was held back, to a move no longer
            // than the longest wanted (its zone's mean, or none).
            Real longest = 0;
            for (std::size_t i = 0; i < x0.size(); ++i) {
                longest = std::max(longest, (wanted[i] - x0[i]).norm());
            }
            std::size_t held = 0;
            for (std::size_t i = 0; i < x0.size(); ++i) {
                QCOMPARE(bool(guard.held()[i]), x1[i] != wanted[i]);
                QVERIFY((x1[i] - x0[i]).norm() <= longest * (1 + 1e-12));
                held += guard.held()[i];
            }
            QVERIFY(held > 0 && held <= s.held);
        }
    }

    void anApplyFromTheSameStartTestsOnlyWhatChanged() {
        // The solver's hold cycles: an apply, then the end changed where the air was mended,
        // then an apply from the same start. The second tests only the pairs of what changed
        // or touched, and must end exactly where a guard that tests every pair ends.
        // Three sheets 1 cm apart; patches of the lowest and the highest that cannot be held
        // close in on the middle one from both sides: pairs that touch to the end of an apply
        // (unresolved), which nothing moves afterwards and which must be tested again.
        std::vector<Vec3> x0;
        std::vector<Triangle> triangles;
        addSheet(24, 0.5, 0, x0, triangles);
        addSheet(24, 0.5, 0.01, x0, triangles, 0.007);
        const std::size_t top = x0.size();
        addSheet(24, 0.5, 0.02, x0, triangles, 0.003);
        std::vector<std::uint8_t> holdable(x0.size(), 1);
        auto patch = [&](std::size_t first, auto&& visit) {
            for (int i = 11; i <= 13; ++i) {
                for (int j = 11; j <= 13; ++j) {
                    visit(first + std::size_t(i) * 25 + std::size_t(j));
                }
            }
        };
        patch(0, [&](std::size_t k) { holdable[k] = 0; });
        patch(top, [&](std::size_t k) { holdable[k] = 0; });
        std::mt19937 random(11);
        std::uniform_real_distribution<Real> move(-0.03, 0.03);
        std::uniform_int_distribution<std::size_t> pick(0, x0.size() - 1);
        std::size_t unresolved = 0;
        for (int trial = 0; trial < 3; ++trial) {
            std::vector<Vec3> x1 = x0;
            for (std::size_t k = 0; k < x1.size(); ++k) {
                if (holdable[k]) {
                    x1[k] += Vec3(move(random), move(random), move(random)) / 6;
                }
            }
            patch(0, [&](std::size_t k) { x1[k].y() += 0.015; });
            patch(top, [&](std::size_t k) { x1[k].y() -= 0.015; });
            ContinuousCollision cycles;
            cycles.setTriangles(triangles);
            cycles.apply(x0, x1, holdable);
            for (int cycle = 0; cycle < 2; ++cycle) {
                // The mending: a fiftieth of the particles that can be held moved again, far
                // enough to cross.
                for (int k = 0; k < int(x0.size()) / 50; ++k) {
                    const std::size_t i = pick(random);
                    if (holdable[i]) {
                        x1[i] += Vec3(move(random), 2 * move(random), move(random));
                    }
                }
                std::vector<Vec3> whole = x1;
                ContinuousCollision fresh;
                fresh.setTriangles(triangles);
                const ContinuousCollisionStatistics all = fresh.apply(x0, whole, holdable);
                const ContinuousCollisionStatistics some = cycles.apply(x0, x1, holdable);
                QVERIFY(4 * some.pairs < 3 * all.pairs); // the whole test was not run
                QVERIFY(all.touching > 0);
                unresolved += all.unresolved;
                QCOMPARE(some.touching, all.touching);
                QCOMPARE(some.unresolved, all.unresolved);
                QCOMPARE(some.held, all.held);
                for (std::size_t i = 0; i < x0.size(); ++i) {
                    QCOMPARE(x1[i], whole[i]); // to the bit
                    QCOMPARE(cycles.held()[i], fresh.held()[i]);
                }
            }
            // From the same start again, with a particle that could be held pinned: a whole
            // test (not the cycles' one), on what the applies before kept of their zones' moves
            // (refit makes again what a zone moved), again as a fresh guard ends.
            std::vector<std::uint8_t> pinned = holdable;
            pinned[pick(random)] = 0;
            for (std::size_t k = 0; k < x1.size(); k += 7) {
                if (pinned[k]) {
                    x1[k] += Vec3(move(random), move(random), move(random));
                }
            }
            std::vector<Vec3> whole = x1;
            ContinuousCollision fresh;
            fresh.setTriangles(triangles);
            const ContinuousCollisionStatistics all = fresh.apply(x0, whole, pinned);
            const ContinuousCollisionStatistics again = cycles.apply(x0, x1, pinned);
            QCOMPARE(again.pairs, all.pairs);
            QCOMPARE(again.touching, all.touching);
            for (std::size_t i = 0; i < x0.size(); ++i) {
                QCOMPARE(x1[i], whole[i]);
            }
        }
        QVERIFY(unresolved > 0);
    }

    void aPatchThatOutrunsTheListIsSearchedAfresh() {
        // One guard over substeps: the first lists its pairs with a margin of half an edge; in
        // the second, all but a small patch barely move (the list holds), and the patch, moved
        // 4 cm through the other sheet, is searched for afresh.
        TwoSheets t(16, 0.5, 0.01, 0.0041);
        std::vector<Vec3> x0 = t.x0, x1 = t.x0;
        for (Vec3& p : x1) {
            p.x() += 1e-4;
        }
        ContinuousCollisionStatistics s = t.guard.apply(x0, x1, t.holdable);
        QCOMPARE(s.lists, std::size_t(1));
        QCOMPARE(s.held, std::size_t(0));
        x0 = x1;
        for (Vec3& p : x1) {
            p.x() += 1e-4;
        }
        t.raisePatch(x1, t.upper, 7, 7, -0.04);
        QVERIFY(crossingPairs(t.triangles, x1) > 0);
        s = t.guard.apply(x0, x1, t.holdable);
        QCOMPARE(s.lists, std::size_t(0)); // the list held for all but the patch
        QVERIFY(s.held > 0);
        QCOMPARE(crossingPairs(t.triangles, x1), std::size_t(0));
    }

    void aZonePushesWhatItMovesInto() {
        // A 3 x 3 patch of the lower sheet rises 3 cm through the upper sheet, 1 cm above it,
        // weighing 20 times the rest (as a skin's contact does): the upper sheet's particles in
        // its way join its zone and are pushed up with it, instead of stopping it.
        TwoSheets t(16, 0.5, 0.01, 0.0041);
        std::vector<Vec3> x1 = t.x0;
        t.raisePatch(x1, 0, 8, 8, 0.03);
        std::vector<Real> weights(x1.size(), 1.0);
        for (std::size_t i = 0; i < x1.size(); ++i) {
            weights[i] = x1[i] != t.x0[i] ? 20 : 1;
        }
        QVERIFY(crossingPairs(t.triangles, x1) > 0);
        const ContinuousCollisionStatistics s = t.guard.apply(t.x0, x1, t.holdable, &weights);
        QCOMPARE(crossingPairs(t.triangles, x1), std::size_t(0));
        QVERIFY(s.held > 0);
        // The patch's middle still rose most of the way, and the upper sheet over it went up.
        QVERIFY(x1[t.at(0, 8, 8)].y() > 0.015);
        QVERIFY(x1[t.at(t.upper, 8, 8)].y() > 0.02);
        // The far corners of both sheets moved as told (not at all).
        QCOMPARE(x1[0].y(), 0.0);
        QCOMPARE(x1[t.upper].y(), 0.01);
    }

    void onlyWhatWouldCrossIsHeld() {
        // The upper sheet sinks 2 cm: only its middle, pushed through the lower sheet's middle
        // (a 3 x 3 patch of the lower one lifted into it), is in the way; the rest of both
        // sheets keep their moves. A particle that cannot be held (a pin) is not, and the pair
        // it alone moves in counts as unresolved.
        TwoSheets t(16, 1.0, 0.05, 0.0137);
        const std::vector<Vec3>& x0 = t.x0;
        const std::vector<Triangle>& triangles = t.triangles;
        const std::size_t lower = t.upper; // the upper sheet's first particle
        ContinuousCollision& guard = t.guard;
        std::vector<std::uint8_t>& holdable = t.holdable;
        std::vector<Vec3> x1 = x0;
        for (std::size_t i = lower; i < x0.size(); ++i) {
            x1[i].y() -= 0.02; // all of the upper sheet, to 3 cm
        }
        t.raisePatch(x1, 0, 8, 8, 0.06); // the lower sheet's middle, to 6 cm
        QVERIFY(crossingPairs(triangles, x1) > 0);
        const ContinuousCollisionStatistics s = guard.apply(x0, x1, holdable);
        QCOMPARE(crossingPairs(triangles, x1), std::size_t(0));
        QVERIFY(s.held > 0 && s.held < 80);
        // The corners of both sheets are far from the middle: moved as told.
        QVERIFY(std::abs(x1[lower].y() - 0.03) < 1e-15);
        QCOMPARE(x1[0].y(), 0.0);
        QVERIFY(!guard.held()[lower] && !guard.held()[0]);

        // The lifted patch pinned (not holdable, as a hard attachment or a skin is): nothing can
        // stop its particles, so the upper sheet's particles in its way go up with it, at least
        // as far as it rises, and nothing is left crossing.
        std::vector<Vec3> y1 = x0;
        for (std::size_t i = lower; i < x0.size(); ++i) {
            y1[i].y() -= 0.02;
        }
        t.raisePatch(y1, 0, 8, 8, 0.06);
        for (std::size_t i = 0; i < lower; ++i) {
            holdable[i] = y1[i] == x0[i] ? 1 : 0; // the patch pinned
        }
        const ContinuousCollisionStatistics pinned = guard.apply(x0, y1, holdable);
        QCOMPARE(pinned.unresolved, std::size_t(0));
        QCOMPARE(crossingPairs(triangles, y1), std::size_t(0));
        QCOMPARE(y1[t.at(0, 8, 8)].y(), 0.06); // moved as told
        QCOMPARE(y1[t.at(0, 7, 9)].y(), 0.06);
        QVERIFY(guard.held()[t.at(lower, 8, 8)]);
        QVERIFY(y1[t.at(lower, 8, 8)].y() >= 0.05 + 0.06 - 1e-12); // pushed up, not left at 3 cm
    }

    void trianglesCrossWhereAnEdgePassesThrough() {
        const Vec3 a(0, 0, 0), b(1, 0, 0), c(0, 0, 1);
        // An upright triangle through the inside of a flat one, beside it, above it.
        QVERIFY(trianglesCross(a, b, c, {0.2, -1, 0.2}, {0.2, 1, 0.2}, {0.3, 1, 0.25}));
        QVERIFY(trianglesCross({0.2, -1, 0.2}, {0.2, 1, 0.2}, {0.3, 1, 0.25}, a, b, c));
        QVERIFY(!trianglesCross(a, b, c, {0.8, -1, 0.8}, {0.8, 1, 0.8}, {0.9, 1, 0.85}));
        QVERIFY(!trianglesCross(a, b, c, {0.2, 1, 0.2}, {0.2, 2, 0.2}, {0.3, 2, 0.25}));
        // Two triangles linked like chain links: each has an edge through the other.
        QVERIFY(trianglesCross({-1, 0, -0.5}, {1, 0, -0.5}, {0, 0, 1}, {0, -1, 0}, {0, 1, 0},
                               {0, 0.2, 2}));
        // Corners only touching (one triangle's corner on the other's inside) do not count.
        QVERIFY(!trianglesCross(a, b, c, {0.2, 0, 0.2}, {0.2, 1, 0.2}, {0.3, 1, 0.25}));
    }

    void aMovingSkinPushesTheClothAheadOfIt() {
        // A sheet that cannot be held (a skin, moved by its animation) rises 3 cm, tilting, into
        // a cloth sheet 1 cm above it that wants to fall 1 cm: left alone they cross. The cloth
        // in the skin's way is pushed up ahead of it, at least as far as the skin rises under
        // it, and nothing crosses; the cloth far from the skin falls as told.
        TwoSheets t(16, 0.5, 0.01, 0.0041);
        std::vector<Vec3> x1 = t.x0;
        for (std::size_t i = 0; i < t.upper; ++i) {
            t.holdable[i] = 0;
            x1[i].y() += 0.03 + 0.02 * x1[i].x(); // 3 to 4 cm: a rise and a tilt
            if (x1[i].x() > 0.3) {
                x1[i] = t.x0[i]; // half of the skin stays
                x1[i].y() -= 0.03;
            }
        }
        for (std::size_t i = t.upper; i < x1.size(); ++i) {
            x1[i].y() -= 0.01;
        }
        const std::vector<Vec3> wanted = x1;
        QVERIFY(crossingPairs(t.triangles, x1) > 0);
        const ContinuousCollisionStatistics s = t.guard.apply(t.x0, x1, t.holdable);
        QCOMPARE(crossingPairs(t.triangles, x1), std::size_t(0));
        QCOMPARE(s.unresolved, std::size_t(0));
        for (std::size_t i = 0; i < t.upper; ++i) {
            QCOMPARE(x1[i], wanted[i]); // the skin moves as it is told
        }
        const std::size_t over = t.at(t.upper, 8, 2); // above the skin's rising part
        QVERIFY(x1[over].y() >= 0.01 + 0.03 - 1e-12);
        QVERIFY(t.guard.held()[over]);
        const std::size_t far = t.at(t.upper, 8, 15); // above the part that sinks
        QCOMPARE(x1[far], wanted[far]);
        QVERIFY(!t.guard.held()[far]);
    }

    void trianglesCrossingAtTheStartAreLetGo() {
        // A particle of the lower sheet starts pushed up through the upper sheet, a spike, and
        // goes back down: following it would hold it crossed; it is let go and comes out.
        // Pairs that do not cross at the start are still followed: the upper sheet, pushed down
        // into the lower sheet elsewhere, is held.
        TwoSheets t(16, 0.5, 0.01, 0.0041);
        std::vector<Vec3> x0 = t.x0;
        x0[t.at(0, 8, 8)].y() += 0.02; // through the upper sheet
        QVERIFY(crossingPairs(t.triangles, x0) > 0);
        std::vector<Vec3> x1 = t.x0; // the patch back down
        for (int j = 0; j <= 3; ++j) {
            x1[t.at(t.upper, 12, j)].y() -= 0.02; // an edge of the upper sheet through the lower
        }
        const ContinuousCollisionStatistics s = t.guard.apply(x0, x1, t.holdable);
        QVERIFY(s.tangled > 0);
        QCOMPARE(crossingPairs(t.triangles, x1), std::size_t(0));
        QCOMPARE(x1[t.at(0, 8, 8)], t.x0[t.at(0, 8, 8)]); // let go: moved as told
        QVERIFY(t.guard.held()[t.at(t.upper, 12, 1)]);
    }

    void onlyThePairsOfACrossingAreLetGo() {
        // Each sheet starts crossed by a needle of its own (still, not held) at the same place,
        // and the upper sheet is pushed down through the lower one there. The sheets' triangles
        // near the needles are let go against the needles only: against each other they are
        // followed, and the sheets do not cross (letting go every pair of triangles near any
        // crossing let them through each other).
        TwoSheets t(16, 0.5, 0.01, 0.0041);
        const std::size_t sheetTriangles = t.triangles.size() / 2;
        std::vector<Vec3> x0 = t.x0;
        auto needle = [&](const Vec3& a, const Vec3& b, const Vec3& c) {
            const Index first = Index(x0.size());
            x0.insert(x0.end(), {a, b, c});
            t.triangles.push_back({first, first + 1, first + 2});
        };
        needle({0.26, -0.01, 0.26}, {0.27, 0.001, 0.26}, {0.26, 0.001, 0.27}); // through the lower
        needle({0.28, 0.009, 0.28}, {0.29, 0.02, 0.28}, {0.28, 0.02, 0.29});   // through the upper
        std::vector<std::uint8_t> holdable(x0.size(), 1);
        std::fill(holdable.begin() + std::ptrdiff_t(t.x0.size()), holdable.end(), 0);
        auto sheetsCrossing = [&](const std::vector<Vec3>& x) {
            std::size_t count = 0;
            for (std::size_t i = 0; i < sheetTriangles; ++i) {
                const Triangle& A = t.triangles[i];
                for (std::size_t j = sheetTriangles; j < 2 * sheetTriangles; ++j) {
                    const Triangle& B = t.triangles[j];
                    count += trianglesCross(x[A[0]], x[A[1]], x[A[2]], x[B[0]], x[B[1]], x[B[2]]);
                }
            }
            return count;
        };
        QCOMPARE(sheetsCrossing(x0), std::size_t(0));
        const std::size_t needles =
            crossingPairs(t.triangles, x0); // each through a triangle or two
        QVERIFY(needles >= 2);
        std::vector<Vec3> x1 = x0;
        for (int i = 7; i <= 9; ++i) {
            for (int j = 7; j <= 9; ++j) {
                x1[t.at(t.upper, i, j)].y() -= 0.012;
            }
        }
        QVERIFY(sheetsCrossing(x1) > 0);
        ContinuousCollision guard;
        guard.setTriangles(t.triangles);
        const ContinuousCollisionStatistics s = guard.apply(x0, x1, holdable);
        QCOMPARE(s.tangled, needles);
        QVERIFY(s.held > 0);
        QCOMPARE(sheetsCrossing(x1), std::size_t(0));
    }

    void aDrapingClothNeverCrossesItself() {
        // The drape scene (cloth on a sphere with self-collision) leaves crossing pairs after
        // its fall; with continuous collision it has none at any of the checks, and its step
        // holds only a few particles.
        auto crossingsOfRun = [](bool continuous, std::size_t& held) {
            Scene scene = *makeScene("drape");
            scene.solver.continuousCollision = continuous;
            scene.solver.threads = 2;
            std::vector<Triangle> triangles;
            for (const Body& body : scene.bodies) {
                if (takesPartInSelfCollision(body)) {
                    triangles.insert(triangles.end(), body.triangles.begin(), body.triangles.end());
                }
            }
            Solver solver(scene);
            std::size_t most = 0;
            held = 0;
            for (int step = 1; step <= 160; ++step) {
                solver.step();
                held += solver.continuousCollision().held;
                if (step % 20 == 0) {
                    most = std::max(most, crossingPairs(triangles, scene.particles.positions));
                }
            }
            return most;
        };
        std::size_t held = 0;
        QVERIFY(crossingsOfRun(false, held) > 0);
        QCOMPARE(held, std::size_t(0));
        QCOMPARE(crossingsOfRun(true, held), std::size_t(0));
        QVERIFY(held > 0 && held < 2000);
    }
};

QTEST_APPLESS_MAIN(TestContinuousCollision)
#include "tst_continuous_collision.moc"
