#include "core/constraints/ConstraintDamping.h"

#include "core/constraints/ConstraintVisit.h"

namespace pbd {

void dampAlongConstraints(const ConstraintSet& set, const std::vector<Vec3>& x,
                          std::vector<Vec3>& v, const std::vector<Real>& w, Real k) {
    if (k <= 0) {
        return;
    }
    // Gauss-Seidel over the constraints: each sees the velocities the previous ones left.
    visitConstraints(
        set, [&](Index i) { return x[i]; },
        [&](ConstraintType, const auto& batch, int, std::size_t e, Real, const math::V3<Real>* g) {
            const auto& particles = batch.particles[e];
            Real rate = 0;
            Real denom = 0;
            for (std::size_t i = 0; i < particles.size(); ++i) {
                const Vec3 gi(g[i].x, g[i].y, g[i].z);
                rate += gi.dot(v[particles[i]]);
                denom += w[particles[i]] * gi.squaredNorm();
            }
            if (!(denom > 0)) {
                return;
            }
            const Real s = -k * rate / denom;
            for (std::size_t i = 0; i < particles.size(); ++i) {
                v[particles[i]] += (s * w[particles[i]]) * Vec3(g[i].x, g[i].y, g[i].z);
            }
        });
}

} // namespace pbd
