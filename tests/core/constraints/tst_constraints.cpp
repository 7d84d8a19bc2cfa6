// core: constraint functions and their gradients (against central finite differences), the SIMD
// lanes (against the scalar path and libm), material frames and colouring.

#include "core/constraints/ConstraintBuilders.h"
#include "core/constraints/ConstraintMath.h"
#include "core/constraints/ConstraintVisit.h"
#include "core/constraints/Constraints.h"
#include "core/scenes/PrimitiveMeshes.h"
#include "core/scenes/SceneLibrary.h"

#include <QTest>

#include <cmath>
#include <functional>
#include <numbers>
#include <random>
#include <set>

using namespace pbd;
using math::V3;

namespace {

V3<double> v3(const Vec3& v) {
    return {v.x(), v.y(), v.z()};
}
Vec3 vec(const V3<double>& v) {
    return {v.x, v.y, v.z};
}

// Compares grad_k C from `evaluate` with central differences of C at `positions`. Returns the
// largest error relative to the largest gradient entry.
template <int N>
double
gradientError(const std::array<Vec3, N>& positions,
              const std::function<double(const V3<double> (&)[N], V3<double> (&)[N])>& evaluate) {
    V3<double> p[N];
    V3<double> g[N];
    for (int k = 0; k < N; ++k) {
        p[k] = v3(positions[k]);
    }
    evaluate(p, g);
    double scale = 1e-12;
    for (int k = 0; k < N; ++k) {
        scale = std::max(scale, vec(g[k]).cwiseAbs().maxCoeff());
    }
    double worst = 0;
    const double h = 1e-6;
    for (int k = 0; k < N; ++k) {
        for (int axis = 0; axis < 3; ++axis) {
            V3<double> q[N];
            V3<double> unused[N];
            for (int j = 0; j < N; ++j) {
                q[j] = p[j];
            }
            double* c = axis == 0 ? &q[k].x : axis == 1 ? &q[k].y : &q[k].z;
            const double c0 = *c;
            *c = c0 + h;
            const double plus = evaluate(q, unused);
            *c = c0 - h;
            const double minus = evaluate(q, unused);
            const double fd = (plus - minus) / (2 * h);
            const double analytic = axis == 0 ? g[k].x : axis == 1 ? g[k].y : g[k].z;
            worst = std::max(worst, std::abs(fd - analytic) / scale);
        }
    }
    return worst;
}

template <int N> std::array<Vec3, N> randomPoints(std::mt19937& rng, double spread = 1.0) {
    std::uniform_real_distribution<double> d(-spread, spread);
    std::array<Vec3, N> p;
    for (auto& x : p) {
        x = Vec3(d(rng), d(rng), d(rng));
    }
    return p;
}

// A random invertible Q^-1 for D material axes, as the kernels take it: cols[i][k].
template <int D> void randomColumns(std::mt19937& rng, double (&cols)[D][D]) {
    std::uniform_real_distribution<double> d(-1, 1);
    for (int i = 0; i < D; ++i) {
        for (int k = 0; k < D; ++k) {
            cols[i][k] = d(rng) + (i == k ? 2.0 : 0.0);
        }
    }
}

constexpr double kGradientTolerance = 1e-6;

} // namespace

class TestConstraints : public QObject {
    Q_OBJECT
private slots:
    void distanceGradient() {
        std::mt19937 rng(1);
        for (int trial = 0; trial < 20; ++trial) {
            const double err = gradientError<2>(randomPoints<2>(rng), [](auto& p, auto& g) {
                return math::evaluateDistance<double>(p, 0.3, g);
            });
            QVERIFY2(err < kGradientTolerance, qPrintable(QString::number(err)));
        }
    }

    void bridsonDihedralGradient() {
        std::mt19937 rng(2);
        for (int trial = 0; trial < 50; ++trial) {
            const double err = gradientError<4>(randomPoints<4>(rng), [](auto& p, auto& g) {
                return math::evaluateDihedralBridson<double>(p, 0.2, g);
            });
            QVERIFY2(err < 1e-5, qPrintable(QString::number(err)));
        }
    }

    void bridsonDihedralGradientHoldsWhenFlat() {
        // The flat hinge is where cloth rests; the acos form is singular there, this one is not.
        const std::array<Vec3, 4> flat = {Vec3(0, 0, -1), Vec3(0.1, 0, 1), Vec3(-1, 0, 0),
                                          Vec3(1, 0, 0)};
        V3<double> p[4], g[4];
        for (int k = 0; k < 4; ++k) {
            p[k] = v3(flat[k]);
        }
        QVERIFY(std::abs(math::evaluateDihedralBridson<double>(p, 0.0, g)) < 1e-12);
        QVERIFY(vec(g[0]).norm() > 0.1);
        const double err = gradientError<4>(flat, [](auto& q, auto& gg) {
            return math::evaluateDihedralBridson<double>(q, 0.0, gg);
        });
        QVERIFY2(err < 1e-5, qPrintable(QString::number(err)));
    }

    void bridsonDihedralAngleIsSignedAndZeroWhenFlat() {
        // Folding the wing tips up or down gives angles of opposite sign and the right size.
        for (double fold : {0.3, -0.3, 1.2}) {
            const std::array<Vec3, 4> hinge = {Vec3(0, std::sin(fold), -std::cos(fold)),
                                               Vec3(0, 0, 1), Vec3(-1, 0, 0), Vec3(1, 0, 0)};
            V3<double> p[4], g[4];
            for (int k = 0; k < 4; ++k) {
                p[k] = v3(hinge[k]);
            }
            const double angle = math::evaluateDihedralBridson<double>(p, 0.0, g);
            QVERIFY2(std::abs(std::abs(angle) - std::abs(fold)) < 1e-12,
                     qPrintable(QString::number(angle)));
        }
    }

    void pbdDihedralGradient() {
        std::mt19937 rng(3);
        for (int trial = 0; trial < 50; ++trial) {
            const double err = gradientError<4>(randomPoints<4>(rng), [](auto& p, auto& g) {
                return math::evaluateDihedralPbd<double>(p, 1.0, g);
            });
            QVERIFY2(err < 1e-5, qPrintable(QString::number(err)));
        }
    }

    void isometricWeightsMeasureTheFold() {
        // Hinges of random shape, flat at rest, folded about their edge by theta: |v| is
        // 2 sin(theta / 2) whatever the triangles' shapes, anywhere in space; 0 when flat.
        std::mt19937 rng(12);
        std::uniform_real_distribution<double> d(0.2, 1.5);
        for (int trial = 0; trial < 20; ++trial) {
            const Vec3 u(-d(rng), 0, 0), v(d(rng), 0, 0);
            const Vec3 a(d(rng) - 0.7, d(rng), 0);
            const double bx = d(rng) - 0.7, by = d(rng);
            const Eigen::Matrix3d turn =
                Eigen::AngleAxisd(d(rng) * 3, Vec3(d(rng), -d(rng), d(rng)).normalized())
                    .toRotationMatrix();
            const Vec3 shift(100 * d(rng), -40, 7);
            auto place = [&](const Vec3& x) { return Vec3(turn * x + shift); };
            const HingeRest rest = hingeRest(
                BendingModel::Isometric, {place(a), place(Vec3(bx, -by, 0)), place(u), place(v)});
            QCOMPARE(rest.rest, 0.0);
            QVERIFY(rest.weight[0] > 0 && rest.weight[1] > 0);
            for (double theta : {0.0, 0.1, 0.7, 2.0, -1.0}) {
                const Vec3 b(bx, -by * std::cos(theta), by * std::sin(theta));
                V3<double> p[4] = {v3(place(a)), v3(place(b)), v3(place(u)), v3(place(v))};
                const double size = std::sqrt(math::norm2(math::isometricCurvature<double>(
                    p, rest.weight[0], rest.weight[1], rest.weight[2])));
                QVERIFY2(std::abs(size - 2 * std::abs(std::sin(theta / 2))) < 1e-11,
                         qPrintable(QString("theta %1: |v| %2").arg(theta).arg(size)));
            }
        }
        // A hinge folded at rest keeps its fold as its rest curvature.
        const HingeRest folded = hingeRest(
            BendingModel::Isometric, {Vec3(0.3, 1, 0), Vec3(0.1, -std::cos(0.5), std::sin(0.5)),
                                      Vec3(-1, 0, 0), Vec3(1, 0, 0)});
        QVERIFY(std::abs(folded.rest - 2 * std::sin(0.25)) < 1e-12);
        // A degenerate triangle gives no weights (the hinge does nothing), not infinities.
        const HingeRest flat = hingeRest(BendingModel::Isometric, {Vec3(0.5, 0, 0), Vec3(0, -1, 0),
                                                                   Vec3(-1, 0, 0), Vec3(1, 0, 0)});
        QCOMPARE(flat.weight[0], 0.0);
        QCOMPARE(flat.weight[2], 0.0);
    }

    void isometricGradient() {
        std::mt19937 rng(13);
        for (int trial = 0; trial < 50; ++trial) {
            const auto rest = randomPoints<4>(rng);
            const HingeRest r = hingeRest(BendingModel::Isometric, rest);
            const double err = gradientError<4>(randomPoints<4>(rng), [&](auto& p, auto& g) {
                return math::evaluateIsometricBending<double>(p, r.weight[0], r.weight[1],
                                                              r.weight[2], 0.2, g);
            });
            QVERIFY2(err < 1e-5, qPrintable(QString::number(err)));
        }
    }

    void bendingModelsConvertBothWays() {
        // A sheet curled into a half cylinder: Bridson -> isometric -> appendix -> Bridson gives
        // back the particles and rest angles; each model's C is 0 at the rest shape.
        Particles particles;
        ClothSheetSpec spec;
        spec.columns = 7;
        spec.rows = 5;
        const Body body = makeClothSheet(particles, spec, "sheet");
        for (Vec3& x : particles.positions) {
            const double a = x.x() / 0.8 * 1.5;
            x = Vec3(0.8 * std::sin(a), 0.8 * (1 - std::cos(a)), x.z());
        }
        ConstraintSet set;
        addDihedralBending(set, particles, body, 0.25, 0.5);
        const ConstraintSet before = set;
        auto restResidual = [&] {
            double worst = 0;
            visitConstraints(
                set, [&](Index i) { return particles.positions[i]; },
                [&](ConstraintType, const auto&, int, std::size_t, double c, const V3<double>*) {
                    worst = std::max(worst, std::abs(c));
                });
            return worst;
        };
        setBendingModel(set, particles.positions, BendingModel::Isometric);
        QVERIFY(set.bending.model == BendingModel::Isometric);
        QCOMPARE(set.bending.weight[2].size(), set.bending.size());
        QCOMPARE(set.bending.lambdaYZ[1].size(), set.bending.size());
        QCOMPARE(set.bending.particles, before.bending.particles);
        QCOMPARE(set.bending.compliance, before.bending.compliance);
        QCOMPARE(set.bending.stiffness, before.bending.stiffness);
        QVERIFY(restResidual() < 1e-12);
        double curved = 0;
        for (double r : set.bending.restAngle) {
            curved = std::max(curved, r);
        }
        QVERIFY(curved > 0.1); // 1.5 rad over 6 columns: 0.25 rad a hinge, 2 sin(0.125)
        setBendingModel(set, particles.positions, BendingModel::PbdAppendix);
        QVERIFY(set.bending.weight[0].empty());
        QVERIFY(set.bending.particles != before.bending.particles);
        QVERIFY(restResidual() < 1e-9);
        setBendingModel(set, particles.positions, BendingModel::Bridson);
        QCOMPARE(set.bending.particles, before.bending.particles);
        for (std::size_t e = 0; e < set.bending.size(); ++e) {
            QCOMPARE(set.bending.restAngle[e], before.bending.restAngle[e]);
        }
        QVERIFY(bendingModelFromString("isometric") == BendingModel::Isometric);
        QCOMPARE(toString(BendingModel::PbdAppendix), std::string_view("pbd-appendix"));
        QVERIFY(!bendingModelFromString("quadratic"));
        QVERIFY(*bendingModelNamed("pbd-appendix") == BendingModel::PbdAppendix);
        QCOMPARE(bendingModelNamed("quadratic").error(),
                 std::string("'quadratic' is not a bending model (bridson, pbd-appendix or "
                             "isometric)"));
    }

    void strainTriangleGradients() {
        std::mt19937 rng(4);
        for (int trial = 0; trial < 20; ++trial) {
            double cols[2][2];
            randomColumns<2>(rng, cols);
            const auto x = randomPoints<3>(rng);
            for (int i = 0; i < 2; ++i) {
                const double err = gradientError<3>(x, [&](auto& p, auto& g) {
                    return math::evaluateStrainStretch<double, 2>(p, cols, i, 1.0, g);
                });
                QVERIFY2(err < kGradientTolerance, qPrintable(QString::number(err)));
            }
            for (bool normalised : {false, true}) {
                const double err = gradientError<3>(x, [&](auto& p, auto& g) {
                    return math::evaluateStrainShear<double, 2>(p, cols, 0, 1, 0.1, normalised, g);
                });
                QVERIFY2(err < kGradientTolerance, qPrintable(QString::number(err)));
            }
        }
    }

    void strainTetGradients() {
        std::mt19937 rng(5);
        constexpr int pairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};
        for (int trial = 0; trial < 20; ++trial) {
            double cols[3][3];
            randomColumns<3>(rng, cols);
            const auto x = randomPoints<4>(rng);
            for (int i = 0; i < 3; ++i) {
                const double err = gradientError<4>(x, [&](auto& p, auto& g) {
                    return math::evaluateStrainStretch<double, 3>(p, cols, i, 1.0, g);
                });
                QVERIFY2(err < kGradientTolerance, qPrintable(QString::number(err)));
            }
            for (const auto& pair : pairs) {
                for (bool normalised : {false, true}) {
                    const double err = gradientError<4>(x, [&](auto& p, auto& g) {
                        return math::evaluateStrainShear<double, 3>(p, cols, pair[0], pair[1], 0.0,
                                                                    normalised, g);
                    });
                    QVERIFY2(err < kGradientTolerance, qPrintable(QString::number(err)));
                }
            }
        }
    }

    void closedFormStretchProjectionMatchesTheGeneric() {
        std::mt19937 rng(9);
        std::uniform_real_distribution<double> d(0.1, 2.0);
        for (int trial = 0; trial < 50; ++trial) {
            double cols[3][3];
            randomColumns<3>(rng, cols);
            const auto x = randomPoints<4>(rng);
            const double w[4] = {d(rng), trial % 3 == 0 ? 0.0 : d(rng), d(rng), d(rng)};
            const double alphaTilde = trial % 2 == 0 ? 0.0 : d(rng);
            const double lambda = alphaTilde > 0 ? d(rng) - 1 : 0.0;
            const double scale = trial % 5 == 0 ? 0.3 : 1.0;
            for (int i = 0; i < 3; ++i) {
                V3<double> a[4], b[4], g[4];
                for (int k = 0; k < 4; ++k) {
                    a[k] = b[k] = v3(x[k]);
                }
                const double c = math::evaluateStrainStretch<double, 3>(a, cols, i, 1.1, g);
                const double dlGeneric =
                    math::project<double, 4>(c, g, a, w, alphaTilde, lambda, scale);
                const double dlClosed = math::projectStrainStretch<double, 3>(
                    b, w, cols, i, 1.1, alphaTilde, lambda, scale);
                QVERIFY(std::abs(dlGeneric - dlClosed) < 1e-12 * (1 + std::abs(dlGeneric)));
                for (int k = 0; k < 4; ++k) {
                    QVERIFY((vec(a[k]) - vec(b[k])).norm() < 1e-12 * (1 + vec(a[k]).norm()));
                }
            }
        }
    }

    void volumeAndAreaGradients() {
        std::mt19937 rng(6);
        for (int trial = 0; trial < 20; ++trial) {
            double err = gradientError<4>(randomPoints<4>(rng), [](auto& p, auto& g) {
                return math::evaluateVolume<double>(p, 0.1, g);
            });
            QVERIFY2(err < kGradientTolerance, qPrintable(QString::number(err)));
            err = gradientError<3>(randomPoints<3>(rng), [](auto& p, auto& g) {
                return math::evaluateArea<double>(p, 0.1, g);
            });
            QVERIFY2(err < kGradientTolerance, qPrintable(QString::number(err)));
        }
    }

    void gradientsConserveMomentum() {
        // Translation and rotation invariance of every C: sum_k grad_k C = 0 and
        // sum_k p_k x grad_k C = 0, so a projection dp_k = w_k g_k dlambda changes neither the
        // linear nor the angular momentum (PBD §3.3).
        std::mt19937 rng(8);
        double cols3[3][3];
        double cols2[2][2];
        randomColumns<3>(rng, cols3);
        randomColumns<2>(rng, cols2);
        auto check = [](auto& p, auto& g, int n) {
            Vec3 sum = Vec3::Zero();
            Vec3 torque = Vec3::Zero();
            double scale = 0;
            for (int k = 0; k < n; ++k) {
                sum += vec(g[k]);
                torque += vec(p[k]).cross(vec(g[k]));
                scale += vec(g[k]).norm() * (1 + vec(p[k]).norm());
            }
            return (sum.norm() + torque.norm()) / scale;
        };
        for (int trial = 0; trial < 20; ++trial) {
            const auto x4 = randomPoints<4>(rng);
            const auto x3 = randomPoints<3>(rng);
            V3<double> p4[4], g4[4], p3[3], g3[3], p2[2], g2[2];
            for (int k = 0; k < 4; ++k) {
                p4[k] = v3(x4[k]);
            }
            for (int k = 0; k < 3; ++k) {
                p3[k] = v3(x3[k]);
            }
            p2[0] = p3[0];
            p2[1] = p3[1];
            double worst = 0;
            math::evaluateDistance<double>(p2, 0.5, g2);
            worst = std::max(worst, check(p2, g2, 2));
            math::evaluateDihedralBridson<double>(p4, 0.5, g4);
            worst = std::max(worst, check(p4, g4, 4));
            math::evaluateDihedralPbd<double>(p4, 0.5, g4);
            worst = std::max(worst, check(p4, g4, 4));
            math::evaluateVolume<double>(p4, 0.5, g4);
            worst = std::max(worst, check(p4, g4, 4));
            math::evaluateArea<double>(p3, 0.5, g3);
            worst = std::max(worst, check(p3, g3, 3));
            for (int i = 0; i < 3; ++i) {
                math::evaluateStrainStretch<double, 3>(p4, cols3, i, 1.0, g4);
                worst = std::max(worst, check(p4, g4, 4));
                math::evaluateStrainShear<double, 3>(p4, cols3, i, (i + 1) % 3, 0.0, true, g4);
                worst = std::max(worst, check(p4, g4, 4));
                math::evaluateStrainShear<double, 3>(p4, cols3, i, (i + 1) % 3, 0.0, false, g4);
                worst = std::max(worst, check(p4, g4, 4));
            }
            for (int i = 0; i < 2; ++i) {
                math::evaluateStrainStretch<double, 2>(p3, cols2, i, 1.0, g3);
                worst = std::max(worst, check(p3, g3, 3));
            }
            math::evaluateStrainShear<double, 2>(p3, cols2, 0, 1, 0.0, true, g3);
            worst = std::max(worst, check(p3, g3, 3));
            QVERIFY2(worst < 1e-13, qPrintable(QString::number(worst)));
        }
    }

    void volumeIsSixTimesTheSignedVolume() {
        V3<double> p[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
        V3<double> g[4];
        QCOMPARE(math::evaluateVolume<double>(p, 0.0, g), 1.0);
        std::swap(p[1], p[2]);
        QCOMPARE(math::evaluateVolume<double>(p, 0.0, g), -1.0);
    }

    void atan2MatchesLibm() {
        double worst = 0;
        for (int i = 0; i < 2000; ++i) {
            for (int j = 0; j < 16; ++j) {
                const double angle = -std::numbers::pi + 2 * std::numbers::pi * i / 1999.0;
                const double r = std::pow(10.0, j - 8);
                const double y = r * std::sin(angle);
                const double x = r * std::cos(angle);
                worst = std::max(worst, std::abs(lanes::atan2Of(y, x) - std::atan2(y, x)));
            }
        }
        QVERIFY2(worst < 1e-15, qPrintable(QString::number(worst)));
        QCOMPARE(lanes::atan2Of(0.0, 0.0), 0.0);
        QCOMPARE(lanes::atan2Of(0.0, -1.0), std::numbers::pi);
    }

    void lanesMatchTheScalarPath() {
        // kLanes random hinges evaluated in one lane vector agree with one-by-one evaluation.
        std::mt19937 rng(7);
        std::array<std::array<Vec3, 4>, lanes::kLanes> hinges;
        for (auto& h : hinges) {
            h = randomPoints<4>(rng);
        }
        V3<lanes::Lanes> p[4], g[4];
        for (int k = 0; k < 4; ++k) {
            for (int l = 0; l < lanes::kLanes; ++l) {
                p[k].x[l] = hinges[l][k].x();
                p[k].y[l] = hinges[l][k].y();
                p[k].z[l] = hinges[l][k].z();
            }
        }
        const lanes::Lanes c =
            math::evaluateDihedralBridson<lanes::Lanes>(p, lanes::broadcast(0.1), g);
        for (int l = 0; l < lanes::kLanes; ++l) {
            V3<double> q[4], gs[4];
            for (int k = 0; k < 4; ++k) {
                q[k] = v3(hinges[l][k]);
            }
            const double cs = math::evaluateDihedralBridson<double>(q, 0.1, gs);
            QVERIFY(std::abs(c[l] - cs) < 1e-14);
            for (int k = 0; k < 4; ++k) {
                QVERIFY(std::abs(g[k].x[l] - gs[k].x) < 1e-12 * (1 + std::abs(gs[k].x)));
                QVERIFY(std::abs(g[k].z[l] - gs[k].z) < 1e-12 * (1 + std::abs(gs[k].z)));
            }
        }
    }

    void materialFrameFollowsUVs() {
        // A right triangle whose u axis runs along the world z axis: the stretch along u is the
        // world z stretch, whatever the vertex order.
        const Vec3 x0(0, 0, 0), x1(0, 0, 2), x2(3, 0, 0);
        const Vec2 uv[3] = {Vec2(0, 0), Vec2(1, 0), Vec2(0, 1)};
        const TriangleMaterialFrame f = triangleMaterialFrame(x0, x1, x2, uv);
        QVERIFY(f.valid && f.fromUVs);
        QCOMPARE(f.restArea, 3.0);
        // Stretch the triangle by 1.5 along z: F's first column must have length 1.5.
        V3<double> p[3] = {{0, 0, 0}, {0, 0, 3}, {3, 0, 0}};
        double cols[2][2] = {{f.qInverse[0], f.qInverse[1]}, {f.qInverse[2], f.qInverse[3]}};
        V3<double> g[3];
        QVERIFY(std::abs(math::evaluateStrainStretch<double, 2>(p, cols, 0, 1.0, g) - 0.5) < 1e-12);
        QVERIFY(std::abs(math::evaluateStrainStretch<double, 2>(p, cols, 1, 1.0, g)) < 1e-12);
    }

    void degenerateUVsFallBackAndAreReported() {
        Particles particles;
        Body body;
        body.name = "patch";
        body.firstParticle = 0;
        body.particleCount = 3;
        particles.add(Vec3(0, 0, 0), 1);
        particles.add(Vec3(1, 0, 0), 1);
        particles.add(Vec3(0, 0, 1), 1);
        body.triangles.push_back({0, 2, 1});
        body.triangleUVs.push_back({Vec2(0.5, 0.5), Vec2(0.5, 0.5), Vec2(0.5, 0.5)});
        ConstraintSet set;
        const BuildReport report = addStrainTriangles(set, particles, body, {});
        QCOMPARE(report.added, std::size_t(1));
        QCOMPARE(report.warnings.size(), std::size_t(1));
        QVERIFY(report.warnings[0].find("patch") != std::string::npos);
        QVERIFY(report.warnings[0].find("degenerate UVs") != std::string::npos);
    }

    void bendingFindsEveryInteriorEdge() {
        Particles particles;
        ClothSheetSpec spec;
        spec.columns = 5;
        spec.rows = 4;
        const Body body = makeClothSheet(particles, spec, "sheet");
        ConstraintSet set;
        // Interior edges of a 4x3 quad grid with one diagonal per quad: 3*3 + 4*2 + 12 = 29.
        QCOMPARE(addDihedralBending(set, particles, body, 0.0), std::size_t(29));
        QCOMPARE(addEdgeDistances(set, particles, body, 0.0), std::size_t(4 * 4 + 5 * 3 + 12));
        for (double rest : set.bending.restAngle) {
            QVERIFY(std::abs(rest) < 1e-12); // the sheet is flat
        }
    }

    void coloursShareNoParticle() {
        for (const char* name : {"cloth", "cloth-sbd", "tetbar"}) {
            Scene scene = makeScene(name).value();
            const std::size_t before = scene.constraints.elementCount();
            colourConstraints(scene.constraints, scene.particles.size());
            QCOMPARE(scene.constraints.elementCount(), before);
            QVERIFY(scene.constraints.colourCount > 1);
            QVERIFY(scene.constraints.colourCount < 64);
            QVERIFY2(coloursAreIndependent(scene.constraints, scene.particles.size()), name);
        }
    }

    void regionsSplitEveryColourWithoutSharing() {
        Scene scene = makeScene("tetbar").value();
        colourConstraints(scene.constraints, scene.particles.size());
        const std::size_t tets = scene.constraints.strainTets.size();
        const ColourRegions r = partitionColours(scene.constraints, scene.particles.size(), 2);
        QCOMPARE(scene.constraints.strainTets.size(), tets);
        const int batch = 3; // strain tets
        std::vector<int> regionOf(scene.particles.size(), -1);
        std::size_t covered = 0;
        std::size_t boundary = 0;
        for (int k = 0; k <= 2; ++k) {
            for (int c = 0; c < r.colours; ++c) {
                std::set<Index> seen;
                for (Index e = r.begin(batch, k, c); e < r.end(batch, k, c); ++e) {
                    ++covered;
                    boundary += k == 2;
                    QCOMPARE(scene.constraints.strainTets.colour[e], c);
                    for (Index p : scene.constraints.strainTets.particles[e]) {
                        QVERIFY(seen.insert(p).second); // no particle twice in a colour
                        if (k < 2) {
                            // A region's particles belong to no other region.
                            QVERIFY(regionOf[p] == -1 || regionOf[p] == k);
                            regionOf[p] = k;
                        }
                    }
                }
            }
        }
        QCOMPARE(covered, tets);
        QVERIFY(boundary > 0 && boundary < tets / 10); // one layer of cells between the halves
    }

    void independenceCheckCatchesASharedParticle() {
        ConstraintSet set;
        set.distance.add(0, 1, 1, 0);
        set.distance.add(1, 2, 1, 0);
        colourConstraints(set, 3);
        QCOMPARE(set.colourCount, 2);
        QVERIFY(coloursAreIndependent(set, 3));
        set.distance.colour = {0, 0}; // force both into colour 0
        QVERIFY(!coloursAreIndependent(set, 3));
    }
};

QTEST_GUILESS_MAIN(TestConstraints)
#include "tst_constraints.moc"
