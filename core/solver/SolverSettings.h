#pragma once
// How a scene is stepped: the integration and solver parameters that travel with the scene.

#include "core/base/LinearAlgebra.h"
#include "core/rigid/RigidSettings.h"

#include <string_view>

namespace pbd {

enum class SolverMethod {
    Xpbd, // compliance alpha and accumulated lambda (XPBD, default)
    Pbd,  // stiffness k in [0, 1] with k' = 1 - (1 - k)^(1/n) (PBD §3.3)
};
std::string_view toString(SolverMethod method);

struct SolverSettings {
    SolverMethod method = SolverMethod::Xpbd;
    Real timeStep = 0.005; // s, one frame of the simulation
    int substeps = 1;      // the frame is split into this many substeps of timeStep / substeps
    int iterations = 5;    // constraint sweeps per substep
    Vec3 gravity = Vec3(0, -9.81, 0); // m/s^2
    // Damping of each body's velocities toward its rigid motion, k in [0, 1] (PBD §3.5); 0 = off.
    Real globalDamping = 0;
    // Damping of each constraint's rate of change, k in [0, 1] per substep (SBD §3.9); 0 = off.
    Real constraintDamping = 0;
    // Distance constraints project along their edge at the start of the substep (SHAKE) rather
    // than as it is now (PBD): each correction then has no torque about the positions the
    // velocity update measures from, so cloth, ropes and their coupling with rigid bodies keep
    // the angular momentum exactly (PBD's own loses it to first order in h).
    bool exactAngularMomentum = false;
    // Particles keep this far from colliders, m.
    Real collisionMargin = 0.002;
    // Self-collision (PBD §4.3) between the triangles of all cloth bodies and the boundary
    // surfaces of the 3D soft (tet) bodies, so cloth drapes over a soft body and soft bodies
    // meet each other, and the thickness it keeps, m.
    bool selfCollision = false;
    Real clothThickness = 0.005;
    // Continuous collision (core/solver/ContinuousCollision.h): the same surfaces as
    // self-collision, followed from the substep's start to its end, the particles of every
    // vertex-triangle or edge-edge pair that would touch on the way moved together as an impact
    // zone; so surfaces that start apart never cross. Independent of selfCollision (which keeps
    // the thickness; this keeps the order).
    bool continuousCollision = false;
    // Tearing (PBD §5): a cloth edge stretched beyond this ratio of its rest length splits a
    // vertex, at most maxTearsPerStep per step; 0 = off.
    Real tearingStretch = 0;
    int maxTearsPerStep = 8;
    // Air-mesh optimisation (Air Meshes §4): a pass of edge and multi-face removals every this
    // many steps, so the air does not lock when bodies turn or slide; 0 = off (layered cloth,
    // skin, where rotations are small). Air tets below the quality threshold are improved.
    int airOptimizationInterval = 1;
    // The air's projections per substep (Air Meshes Table 1: the dancer's air takes 20 to its
    // cloth's 10); -1 = as many as `iterations`. 0 turns the air off: it still moves with the
    // bodies and is counted, but nothing is projected and it is not optimised (the tangle test
    // of Fig. 10: off for a while, then on, and the layers come back in order).
    int airIterations = -1;
    Real airQualityThreshold = 0.3;
    // The second, conventional pass after the air projection (Air Meshes §4.3): a body's
    // particle facing a surface across the air keeps this distance from it, m (0 = off), and
    // slides on it with Coulomb friction mu (0 = frictionless).
    Real airContactDistance = 0.002;
    Real airFriction = 0.5;
    // Rigid bodies (§5): the projected Gauss-Seidel solve and its stabilisation.
    RigidSettings rigid;
    // Worker threads for the parallel solve; 0 = all cores.
    int threads = 1;

    bool operator==(const SolverSettings&) const = default;
};

} // namespace pbd
