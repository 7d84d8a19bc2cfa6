#pragma once
// Every scalar constraint of a set's batches evaluated at given positions, one callback per
// component: f(type, batch, component, element, C, gradients). The one place that knows how each
// batch type turns into C and grad C outside the solver's SIMD kernels (fields, residuals,
// convergence records and constraint damping use it).

#include "core/constraints/ConstraintMath.h"
#include "core/constraints/Constraints.h"

namespace pbd {

template <class Position, class F>
void visitConstraints(const ConstraintSet& set, Position&& position, F&& f) {
    math::V3<Real> p2[2], g2[2], p3[3], g3[3], p[4], g[4];
    auto gather = [&](const auto& idx, auto& into) {
        for (std::size_t k = 0; k < idx.size(); ++k) {
            const Vec3 x = position(idx[k]);
            into[k] = {x.x(), x.y(), x.z()};
        }
    };

    const auto& d = set.distance;
    for (std::size_t e = 0; e < d.size(); ++e) {
        gather(d.particles[e], p2);
        f(ConstraintType::Distance, d, 0, e, math::evaluateDistance<Real>(p2, d.restLength[e], g2),
          g2);
    }
    const auto& b = set.bending;
    for (std::size_t e = 0; e < b.size(); ++e) {
        gather(b.particles[e], p);
        const Real c = b.model == BendingModel::Bridson
                           ? math::evaluateDihedralBridson<Real>(p, b.restAngle[e], g)
                       : b.model == BendingModel::Isometric
                           ? math::evaluateIsometricBending<Real>(p, b.weight[0][e], b.weight[1][e],
                                                                  b.weight[2][e], b.restAngle[e], g)
                           : math::evaluateDihedralPbd<Real>(p, b.restAngle[e], g);
        f(ConstraintType::DihedralBending, b, 0, e, c, g);
    }
    const auto& st = set.strainTriangles;
    for (std::size_t e = 0; e < st.size(); ++e) {
        gather(st.particles[e], p3);
        Real cols[2][2];
        for (int k = 0; k < 4; ++k) {
            cols[k / 2][k % 2] = st.qInverse[k][e];
        }
        for (int i = 0; i < 2; ++i) {
            const Real c = math::evaluateStrainStretch<Real, 2>(p3, cols, i, st.rest[i][e], g3);
            f(ConstraintType::StrainTriangle, st, i, e, c, g3);
        }
        const Real c = math::evaluateStrainShear<Real, 2>(p3, cols, 0, 1, st.rest[2][e],
                                                          st.normalisedShear, g3);
        f(ConstraintType::StrainTriangle, st, 2, e, c, g3);
    }
    const auto& tt = set.strainTets;
    constexpr int pairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};
    for (std::size_t e = 0; e < tt.size(); ++e) {
        gather(tt.particles[e], p);
        Real cols[3][3];
        for (int k = 0; k < 9; ++k) {
            cols[k / 3][k % 3] = tt.qInverse[k][e];
        }
        for (int i = 0; i < 3; ++i) {
            const Real c = math::evaluateStrainStretch<Real, 3>(p, cols, i, tt.rest[i][e], g);
            f(ConstraintType::StrainTet, tt, i, e, c, g);
        }
        for (int s = 0; s < 3; ++s) {
            const Real c = math::evaluateStrainShear<Real, 3>(
                p, cols, pairs[s][0], pairs[s][1], tt.rest[3 + s][e], tt.normalisedShear, g);
            f(ConstraintType::StrainTet, tt, 3 + s, e, c, g);
        }
    }
    const auto& a = set.area;
    for (std::size_t e = 0; e < a.size(); ++e) {
        gather(a.particles[e], p3);
        f(ConstraintType::Area, a, 0, e, math::evaluateArea<Real>(p3, a.restValue[e], g3), g3);
    }
    const auto& v = set.volume;
    for (std::size_t e = 0; e < v.size(); ++e) {
        gather(v.particles[e], p);
        f(ConstraintType::Volume, v, 0, e, math::evaluateVolume<Real>(p, v.restValue[e], g), g);
    }
    const auto& pa = set.planarArea;
    for (std::size_t e = 0; e < pa.size(); ++e) {
        gather(pa.particles[e], p3);
        f(ConstraintType::PlanarArea, pa, 0, e,
          math::evaluatePlanarArea<Real>(p3, pa.restValue[e], g3), g3);
    }
}

} // namespace pbd
