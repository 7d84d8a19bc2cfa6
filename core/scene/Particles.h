#pragma once
// The simulated points of a scene, structure-of-arrays: one array per attribute, indexed by
// particle. Bodies refer to particles by global index.

#include "core/base/LinearAlgebra.h"

#include <vector>

namespace pbd {

struct Particles {
    std::vector<Vec3> positions;     // m
    std::vector<Vec3> velocities;    // m/s
    std::vector<Real> inverseMasses; // 1/kg; 0 means pinned (infinite mass)
    // External forces, N, constant over a step (wind, a user's pull); empty means none.
    std::vector<Vec3> forces;

    std::size_t size() const { return positions.size(); }

    Index add(const Vec3& position, Real inverseMass) {
        positions.push_back(position);
        velocities.push_back(Vec3::Zero());
        inverseMasses.push_back(inverseMass);
        if (!forces.empty()) {
            forces.push_back(Vec3::Zero());
        }
        return static_cast<Index>(positions.size() - 1);
    }
};

} // namespace pbd
