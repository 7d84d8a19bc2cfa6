#pragma once
// How rigid bodies are stepped (ALGORITHMS §5, source 004): the projected Gauss-Seidel solve
// and its stabilisation techniques, each switchable so that their effect can be seen.

#include "core/base/LinearAlgebra.h"

#include <string_view>

namespace pbd {

// What keeps tall stacks standing (source 004, "Shock Propagation", "WA法").
enum class StackStabilisation {
    Off,
    // After the ordinary sweeps, the contacts are solved again layer by layer from the ground
    // up with the lower body of each contact held (infinite mass) [Guendelman03, Erleben07].
    ShockPropagation,
    // The lower body of each contact counts `weightAmplification` times heavier in it.
    WeightAmplification,
};
std::string_view toString(StackStabilisation s);

struct RigidSettings {
    int iterations = 20; // projected Gauss-Seidel sweeps per substep
    // Substeps per step (the soft step of Box2D v3 / TGS): contacts are detected once per step;
    // each substep adds gravity, warm-starts, sweeps `iterations` times, moves the bodies and
    // sweeps `relaxIterations` times. Between substeps each contact's separation follows its
    // two bodies' moves, so the push-out is not applied twice. 1: the source's single solve.
    int substeps = 1;
    // Soft contacts (Box2D v3): > 0 makes the push-out a damped spring of this frequency (Hz)
    // and damping ratio, capped at maxPushVelocity, in place of `correction`; contacts with a
    // static or kinematic body are twice as stiff. 0: the source's rigid correction.
    Real contactHertz = 0;
    Real contactDampingRatio = 10;
    Real maxPushVelocity = 3; // m/s
    // Sweeps after the positions are integrated, without the push out of penetrations and
    // joint errors, so that the push does not stay in the bodies as kinetic energy. With
    // separatePush, the push sweeps instead.
    int relaxIterations = 3;
    // Separate push (rigid contacts with warm starting): the sweeps solve the velocities
    // without the push out of penetrations; then `relaxIterations` sweeps add the push, the
    // positions move with it, and the velocities and impulses are put back (a split impulse,
    // Catto 2006 / Bullet): no push stays in the bodies as energy, which otherwise rocks
    // stacks taller than about 15 boxes until they fall.
    bool separatePush = true;
    Real slop = 0.002; // m of penetration kept so support forces stay steady
    // k: share of the penetration error (d - slop) removed per substep. Larger values make
    // tall stacks sway with 10 sweeps.
    Real correction = 0.05;
    Real contactMargin = 0.02; // m: contacts are made this far apart (speculative contacts)
    // Manifold refresh (persistent contact manifolds): a touching pair whose relative pose has
    // changed by less than these since its manifold was made keeps that manifold's points,
    // carried with the two bodies (their separations follow the bodies exactly), instead of
    // being detected again. 0 detects every pair every step.
    Real refreshDistance = 0.001; // m of relative translation
    Real refreshAngle = 0.005;    // rad of relative rotation
    Real jointCorrection = 0.2;   // share of a joint's position error removed per substep
    bool warmStart = true;        // start from the last step's impulses, matched by feature IDs
    Real frictionWarmStart = 0;   // the share of the last friction impulse a warm start uses
    bool permuteRows = true;      // solve the rows in a random order, seeded per step
    StackStabilisation stabilisation = StackStabilisation::WeightAmplification;
    Real weightAmplification = 1.4; // c
    // Sleeping per simulation island: an island whose bodies have all moved slower than these
    // speeds for sleepTime stops being simulated until something touches it.
    bool sleeping = true;
    Real sleepLinearSpeed = 0.05;  // m/s
    Real sleepAngularSpeed = 0.05; // rad/s
    Real sleepTime = 0.5;          // s
    // Aggressive sleep: bodies nearly at rest for aggressiveSleepTime keep being simulated, but
    // their contacts are not detected again; the last step's contact points and Jacobians are
    // reused while both bodies stay at rest.
    bool aggressiveSleep = false;
    Real aggressiveSleepTime = 0.1; // s

    bool operator==(const RigidSettings&) const = default;
};

} // namespace pbd
