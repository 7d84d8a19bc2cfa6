#include "core/scene/Mass.h"

#include "core/scene/Topology.h"

#include <limits>
#include <vector>

namespace pbd {

namespace {

void setInverseMasses(Particles& particles, const Body& body, const std::vector<Real>& masses) {
    for (Index i = 0; i < body.particleCount; ++i) {
        const Real m = masses[i];
        particles.inverseMasses[body.firstParticle + i] = m > 0 ? 1.0 / m : 0.0;
    }
}

} // namespace

void assignTriangleMasses(Particles& particles, const Body& body, Real arealDensity) {
    std::vector<Real> masses(body.particleCount, 0.0);
    const auto& x = particles.positions;
    for (const Triangle& t : body.triangles) {
        const Real area = 0.5 * (x[t[1]] - x[t[0]]).cross(x[t[2]] - x[t[0]]).norm();
        for (Index v : t) {
            masses[v - body.firstParticle] += arealDensity * area / 3.0;
        }
    }
    setInverseMasses(particles, body, masses);
}

void assignTetMasses(Particles& particles, const Body& body, Real density) {
    std::vector<Real> masses(body.particleCount, 0.0);
    const auto& x = particles.positions;
    for (const Tetrahedron& t : body.tets) {
        const Real volume = std::abs(signedVolume(x[t[0]], x[t[1]], x[t[2]], x[t[3]]));
        for (Index v : t) {
            masses[v - body.firstParticle] += density * volume / 4.0;
        }
    }
    setInverseMasses(particles, body, masses);
}

Real totalMass(const Particles& particles, const Body& body) {
    Real m = 0;
    for (Index i = body.firstParticle; i < body.firstParticle + body.particleCount; ++i) {
        const Real w = particles.inverseMasses[i];
        m += w > 0 ? 1.0 / w : 0.0;
    }
    return m;
}

namespace {

// Per particle of the body, the mass lumped from density 1 (tets where there are, else
// triangles).
std::vector<Real> unitMasses(const Particles& particles, const Body& body) {
    Particles unit;
    unit.positions = particles.positions;
    unit.inverseMasses.assign(particles.positions.size(), 0);
    if (!body.tets.empty()) {
        assignTetMasses(unit, body, 1);
    } else {
        assignTriangleMasses(unit, body, 1);
    }
    std::vector<Real> m(body.particleCount, 0);
    for (Index i = 0; i < body.particleCount; ++i) {
        const Real w = unit.inverseMasses[body.firstParticle + i];
        m[i] = w > 0 ? 1 / w : 0;
    }
    return m;
}

} // namespace

Real bodyDensity(const Particles& particles, const Body& body) {
    const std::vector<Real> unit = unitMasses(particles, body);
    Real mass = 0, unitMass = 0;
    for (Index i = 0; i < body.particleCount; ++i) {
        const Real w = particles.inverseMasses[body.firstParticle + i];
        if (w > 0 && unit[i] > 0) {
            mass += 1 / w;
            unitMass += unit[i];
        }
    }
    return unitMass > 0 ? mass / unitMass : std::numeric_limits<Real>::quiet_NaN();
}

void setBodyDensity(Particles& particles, const Body& body, Real density) {
    const std::vector<Real> unit = unitMasses(particles, body);
    for (Index i = 0; i < body.particleCount; ++i) {
        Real& w = particles.inverseMasses[body.firstParticle + i];
        if (w > 0) {
            w = unit[i] > 0 ? 1 / (density * unit[i]) : 0;
        }
    }
}

} // namespace pbd
