#pragma once
// Damping along the constraint directions (SBD §3.9): after the velocity update, every
// constraint loses a share k of its rate of change dC/dt = sum_i grad_i C · v_i, the change
// spread over its particles like a projection (dv_i = -k dC/dt w_i grad_i C / sum w|grad C|^2).
// Only relative motion along the constraint is damped: rigid motion has dC/dt = 0, and the
// changes sum to zero momentum.

#include "core/constraints/Constraints.h"

#include <vector>

namespace pbd {

void dampAlongConstraints(const ConstraintSet& set, const std::vector<Vec3>& positions,
                          std::vector<Vec3>& velocities, const std::vector<Real>& inverseMasses,
                          Real k);

} // namespace pbd
