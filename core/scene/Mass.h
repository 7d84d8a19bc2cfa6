#pragma once
// Lumped particle masses from element measures.

#include "core/scene/Body.h"
#include "core/scene/Particles.h"

namespace pbd {

// Gives each particle of `body` a third of the mass of every triangle it belongs to
// (arealDensity in kg/m^2) and sets its inverse mass; particles with no triangle get w = 0.
void assignTriangleMasses(Particles& particles, const Body& body, Real arealDensity);

// Gives each particle of `body` a quarter of the mass of every tet it belongs to (density in
// kg/m^3) and sets its inverse mass; particles with no tet get w = 0.
void assignTetMasses(Particles& particles, const Body& body, Real density);

// The body's material density as its particle masses say: kg/m^3 for a body with tets, kg/m^2
// (mass per area) for a triangle surface; over its free particles (w > 0), exact when the
// masses were lumped from one density. NaN when no particle is free.
Real bodyDensity(const Particles& particles, const Body& body);
// Lumps the body's masses again from `density` (as bodyDensity measures it); pinned particles
// (w = 0) stay pinned.
void setBodyDensity(Particles& particles, const Body& body, Real density);

// Total mass of a body's particles (pinned particles, w = 0, count as zero).
Real totalMass(const Particles& particles, const Body& body);

} // namespace pbd
