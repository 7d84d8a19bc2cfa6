#include "core/fields/Fields.h"

#include "core/constraints/ConstraintBuilders.h"
#include "core/constraints/ConstraintMath.h"
#include "core/constraints/ConstraintVisit.h"

#include <Eigen/LU>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>

namespace pbd {

RestFrames captureRestFrames(const Scene& scene) {
    RestFrames r;
    const auto& x = scene.particles.positions;
    for (const Body& body : scene.bodies) {
        for (std::size_t i = 0; i < body.tets.size(); ++i) {
            const Tetrahedron& t = body.tets[i];
            Mat3 Q;
            Q << x[t[1]] - x[t[0]], x[t[2]] - x[t[0]], x[t[3]] - x[t[0]];
            if (!body.tetFrames.empty()) {
                Q = body.tetFrames[i].transpose() * Q; // strain along the tet's material axes
            }
            Eigen::FullPivLU<Mat3> lu(Q);
            r.tetQInverse.push_back(lu.isInvertible() ? Mat3(lu.inverse()) : Mat3::Zero());
        }
        for (std::size_t i = 0; i < body.triangles.size(); ++i) {
            const Triangle& t = body.triangles[i];
            const Vec2* uv = body.hasUVs() ? body.triangleUVs[i].data() : nullptr;
            const TriangleMaterialFrame f = triangleMaterialFrame(x[t[0]], x[t[1]], x[t[2]], uv);
            Eigen::Matrix2d qi;
            qi << f.qInverse[0], f.qInverse[2], f.qInverse[1], f.qInverse[3];
            r.triangleQInverse.push_back(f.valid ? qi : Eigen::Matrix2d::Zero());
            r.triangleValid.push_back(f.valid);
        }
    }
    return r;
}

std::size_t ElementFields::invertedTets() const {
    return static_cast<std::size_t>(
        std::count_if(tetVolumeRatio.begin(), tetVolumeRatio.end(), [](Real j) { return j < 0; }));
}

ElementFields computeElementFields(const Scene& scene, const RestFrames& rest) {
    ElementFields f;
    const auto& x = scene.particles.positions;
    std::size_t tetIndex = 0;
    std::size_t triIndex = 0;
    for (const Body& body : scene.bodies) {
        for (const Tetrahedron& t : body.tets) {
            Mat3 P;
            P << x[t[1]] - x[t[0]], x[t[2]] - x[t[0]], x[t[3]] - x[t[0]];
            const Mat3 F = P * rest.tetQInverse.at(tetIndex++); // SBD eq. 7
            const Mat3 E = 0.5 * (F.transpose() * F - Mat3::Identity());
            f.tetGreenStrain.push_back({E(0, 0), E(1, 1), E(2, 2), E(0, 1), E(0, 2), E(1, 2)});
            f.tetPrincipalStretch.push_back(Eigen::JacobiSVD<Mat3>(F).singularValues());
            f.tetVolumeRatio.push_back(F.determinant());
        }
        for (const Triangle& t : body.triangles) {
            Eigen::Matrix<Real, 3, 2> P;
            P << x[t[1]] - x[t[0]], x[t[2]] - x[t[0]];
            const bool valid = rest.triangleValid.at(triIndex);
            const Eigen::Matrix<Real, 3, 2> F = P * rest.triangleQInverse.at(triIndex++);
            const Eigen::Matrix2d C = F.transpose() * F;
            const Eigen::Matrix2d E = 0.5 * (C - Eigen::Matrix2d::Identity());
            f.triangleGreenStrain.push_back(valid ? std::array<Real, 3>{E(0, 0), E(1, 1), E(0, 1)}
                                                  : std::array<Real, 3>{0, 0, 0});
            f.trianglePrincipalStretch.push_back(
                valid ? Vec2(Eigen::JacobiSVD<Eigen::Matrix<Real, 3, 2>>(F).singularValues())
                      : Vec2::Zero());
            f.triangleAreaRatio.push_back(valid ? F.col(0).cross(F.col(1)).norm() : 0.0);
        }
    }
    return f;
}

Real ConstraintResiduals::maxAbsResidual() const {
    Real m = 0;
    for (Real r : residual) {
        m = std::max(m, std::abs(r));
    }
    return m;
}

std::vector<ConstraintResiduals> computeConstraintResiduals(const Scene& scene) {
    const ConstraintSet& set = scene.constraints;
    std::vector<ConstraintResiduals> out;
    // One entry per batch type, in the visiting order, lambdas copied component-major.
    auto begin = [&](ConstraintType type, const auto& batch) {
        constexpr int K = std::remove_cvref_t<decltype(batch)>::kComponents;
        ConstraintResiduals r{type, K, std::vector<Real>(batch.size() * K),
                              std::vector<Real>(batch.size() * K)};
        for (int k = 0; k < K; ++k) {
            std::copy(batch.lambda[k].begin(), batch.lambda[k].end(),
                      r.lambda.begin() + static_cast<std::ptrdiff_t>(k * batch.size()));
        }
        out.push_back(std::move(r));
    };
    begin(ConstraintType::Distance, set.distance);
    begin(ConstraintType::DihedralBending, set.bending);
    if (set.bending.model == BendingModel::Isometric) { // a lambda per axis: its size
        auto& lambda = out.back().lambda;
        for (std::size_t e = 0; e < set.bending.size(); ++e) {
            lambda[e] = set.bending.lambdaSize(e);
        }
    }
    begin(ConstraintType::StrainTriangle, set.strainTriangles);
    begin(ConstraintType::StrainTet, set.strainTets);
    begin(ConstraintType::Area, set.area);
    begin(ConstraintType::Volume, set.volume);
    begin(ConstraintType::PlanarArea, set.planarArea);
    visitConstraints(
        set, [&](Index i) { return scene.particles.positions[i]; },
        [&](ConstraintType type, const auto& batch, int comp, std::size_t e, Real c,
            const math::V3<Real>*) {
            ConstraintResiduals& r = out[static_cast<std::size_t>(type)];
            r.residual[static_cast<std::size_t>(comp) * batch.size() + e] = c;
        });
    for (const PressureConstraint& c : set.pressure) {
        std::vector<Vec3> grad;
        const Real C = evaluatePressure(
            c, [&](Index i) { return scene.particles.positions[i]; }, grad);
        out.push_back({ConstraintType::Pressure, 1, {C}, {c.lambda}});
    }
    return out;
}

ConstraintLines constraintLines(const Scene& scene, Real time,
                                const std::vector<Contact>& contacts) {
    ConstraintLines lines;
    const auto& x = scene.particles.positions;
    const ConstraintSet& c = scene.constraints;
    const std::vector<ConstraintResiduals> residuals = computeConstraintResiduals(scene);
    auto add = [&](const Vec3& a, const Vec3& b, ConstraintLines::Kind kind, Real r, Real l) {
        lines.a.push_back(a);
        lines.b.push_back(b);
        lines.kind.push_back(kind);
        lines.residual.push_back(float(std::abs(r)));
        lines.lambda.push_back(float(std::abs(l)));
    };
    for (const ConstraintResiduals& r : residuals) {
        if (r.type == ConstraintType::Distance) {
            for (std::size_t e = 0; e < c.distance.size(); ++e) {
                const auto& p = c.distance.particles[e];
                add(x[p[0]], x[p[1]], ConstraintLines::Distance, r.residual[e], r.lambda[e]);
            }
        } else if (r.type == ConstraintType::DihedralBending) {
            for (std::size_t e = 0; e < c.bending.size(); ++e) {
                // The hinge's edge: p[2]-p[3], or p[0]-p[1] in the appendix's order.
                const auto& p = c.bending.particles[e];
                const int first = c.bending.model == BendingModel::PbdAppendix ? 0 : 2;
                add(x[p[first]], x[p[first + 1]], ConstraintLines::Bending, r.residual[e],
                    r.lambda[e]);
            }
        }
    }
    for (std::size_t i = 0; i < c.attachments.size(); ++i) {
        const Vec3 target = c.attachments.targetAt(i, time);
        const Vec3& p = x[c.attachments.particle[i]];
        add(p, target, ConstraintLines::Attachment, (p - target).norm(), c.attachments.lambda[i]);
    }
    for (const Contact& k : contacts) {
        if (k.particle >= x.size()) {
            continue;
        }
        const Vec3& p = x[k.particle];
        // A resting contact has the particle on its point: draw 1 cm along the normal instead.
        const Vec3 end = (p - k.point).norm() > 1e-4 ? k.point : Vec3(p + 0.01 * k.normal);
        add(p, end, ConstraintLines::Contact, (p - k.point).dot(k.normal), k.normalCorrection);
    }
    return lines;
}

} // namespace pbd
