#include "core/ConstraintDamping.h"

#include "core/ConstraintMath.h"

namespace pbd {

namespace {

template <int N> struct Element {
    math::V3<Real> p[N];
    math::V3<Real> g[N];
};

template <int N, class Evaluate>
void dampBatch(const std::vector<std::array<Index, N>>& particles, const std::vector<Vec3>& x,
               std::vector<Vec3>& v, const std::vector<Real>& w, Real k, Evaluate&& evaluate) {
    for (std::size_t e = 0; e < particles.size(); ++e) {
        Element<N> el;
        for (int i = 0; i < N; ++i) {
            const Vec3& q = x[particles[e][i]];
            el.p[i] = {q.x(), q.y(), q.z()};
        }
        const int components = evaluate(e, el, -1); // number of components
        for (int c = 0; c < components; ++c) {
            evaluate(e, el, c);
            Real rate = 0;
            Real denom = 0;
            for (int i = 0; i < N; ++i) {
                const Index id = particles[e][i];
                const Vec3 g(el.g[i].x, el.g[i].y, el.g[i].z);
                rate += g.dot(v[id]);
                denom += w[id] * g.squaredNorm();
            }
            if (!(denom > 0)) {
                continue;
            }
            const Real s = -k * rate / denom;
            for (int i = 0; i < N; ++i) {
                const Index id = particles[e][i];
                v[id] += (s * w[id]) * Vec3(el.g[i].x, el.g[i].y, el.g[i].z);
            }
        }
    }
}

} // namespace

void dampAlongConstraints(const ConstraintSet& set, const std::vector<Vec3>& x,
                          std::vector<Vec3>& v, const std::vector<Real>& w, Real k) {
    if (k <= 0) {
        return;
    }
    const auto& d = set.distance;
    dampBatch<2>(d.particles, x, v, w, k, [&](std::size_t e, Element<2>& el, int c) {
        if (c >= 0) {
            math::evaluateDistance<Real>(el.p, d.restLength[e], el.g);
        }
        return 1;
    });
    const auto& b = set.bending;
    dampBatch<4>(b.particles, x, v, w, k, [&](std::size_t e, Element<4>& el, int c) {
        if (c >= 0) {
            b.model == BendingModel::Bridson
                ? math::evaluateDihedralBridson<Real>(el.p, b.restAngle[e], el.g)
                : math::evaluateDihedralPbd<Real>(el.p, b.restAngle[e], el.g);
        }
        return 1;
    });
    const auto& st = set.strainTriangles;
    dampBatch<3>(st.particles, x, v, w, k, [&](std::size_t e, Element<3>& el, int c) {
        if (c >= 0) {
            Real cols[2][2];
            for (int i = 0; i < 4; ++i) {
                cols[i / 2][i % 2] = st.qInverse[i][e];
            }
            c < 2 ? math::evaluateStrainStretch<Real, 2>(el.p, cols, c, st.rest[c][e], el.g)
                  : math::evaluateStrainShear<Real, 2>(el.p, cols, 0, 1, st.rest[2][e],
                                                       st.normalisedShear, el.g);
        }
        return 3;
    });
    const auto& tt = set.strainTets;
    dampBatch<4>(tt.particles, x, v, w, k, [&](std::size_t e, Element<4>& el, int c) {
        if (c >= 0) {
            constexpr int pairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};
            Real cols[3][3];
            for (int i = 0; i < 9; ++i) {
                cols[i / 3][i % 3] = tt.qInverse[i][e];
            }
            c < 3 ? math::evaluateStrainStretch<Real, 3>(el.p, cols, c, tt.rest[c][e], el.g)
                  : math::evaluateStrainShear<Real, 3>(el.p, cols, pairs[c - 3][0], pairs[c - 3][1],
                                                       tt.rest[c][e], tt.normalisedShear, el.g);
        }
        return 6;
    });
    const auto& a = set.area;
    dampBatch<3>(a.particles, x, v, w, k, [&](std::size_t e, Element<3>& el, int c) {
        if (c >= 0) {
            math::evaluateArea<Real>(el.p, a.restValue[e], el.g);
        }
        return 1;
    });
    const auto& vol = set.volume;
    dampBatch<4>(vol.particles, x, v, w, k, [&](std::size_t e, Element<4>& el, int c) {
        if (c >= 0) {
            math::evaluateVolume<Real>(el.p, vol.restValue[e], el.g);
        }
        return 1;
    });
}

} // namespace pbd
