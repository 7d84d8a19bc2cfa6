#pragma once
// Velocity damping that leaves rigid motion untouched (PBD §3.5).

#include "core/base/LinearAlgebra.h"

#include <vector>

namespace pbd {

// Moves the velocities of particles [begin, end) a fraction k of the way toward the rigid motion
// (v_cm + omega x r_i) that has the same linear and angular momentum. Pinned particles (w = 0)
// neither contribute nor change. k = 1 makes the motion rigid; momenta are kept for any k.
void dampTowardRigidMotion(const std::vector<Vec3>& positions, std::vector<Vec3>& velocities,
                           const std::vector<Real>& inverseMasses, std::size_t begin,
                           std::size_t end, Real k);

// Linear and angular momentum (about the origin) of particles [begin, end); pinned ones excluded.
struct Momentum {
    Vec3 linear = Vec3::Zero();
    Vec3 angular = Vec3::Zero();
};
Momentum momentumOf(const std::vector<Vec3>& positions, const std::vector<Vec3>& velocities,
                    const std::vector<Real>& inverseMasses, std::size_t begin, std::size_t end);

} // namespace pbd
