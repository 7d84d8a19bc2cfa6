#pragma once
// Lumped particle masses from element measures.

#include "core/Body.h"
#include "core/Particles.h"

namespace pbd {

// Gives each particle of `body` a third of the mass of every triangle it belongs to
// (arealDensity in kg/m^2) and sets its inverse mass; particles with no triangle get w = 0.
void assignTriangleMasses(Particles& particles, const Body& body, Real arealDensity);

// Gives each particle of `body` a quarter of the mass of every tet it belongs to (density in
// kg/m^3) and sets its inverse mass; particles with no tet get w = 0.
void assignTetMasses(Particles& particles, const Body& body, Real density);

// Total mass of a body's particles (pinned particles, w = 0, count as zero).
Real totalMass(const Particles& particles, const Body& body);

} // namespace pbd
