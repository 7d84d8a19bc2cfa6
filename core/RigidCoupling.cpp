#include "core/RigidCoupling.h"

#include "core/Scene.h"
#include "core/Solver.h"

namespace pbd {

RigidAttachment attachToRigidBody(const Scene& scene, Index particle, int body, Real compliance) {
    const RigidBody& b = scene.rigidBodies.at(std::size_t(body));
    return {particle, body, b.q.conjugate() * (scene.particles.positions.at(particle) - b.x),
            compliance};
}

void RigidCoupling::begin(const Scene& scene, const SolverParticle* P, Real margin) {
    margin_ = margin;
    links_.clear();
    contactCount_ = 0;
    for (const RigidAttachment& a : scene.rigidAttachments) {
        links_.push_back({a.particle, a.body, a.local, Vec3::Zero(), a.compliance, 0, Vec3::Zero(),
                          false, scene.particles.positions[a.particle]});
    }
    // Contacts at the predicted positions, with a little room so that a particle arriving
    // within the substep is caught: every particle inside a shape's bounds is tested.
    const std::size_t n = scene.particles.size();
    const Index airBegin = scene.air.firstParticle;
    const Index airEnd = airBegin + scene.air.particleCount;
    for (int bi = 0; bi < int(scene.rigidBodies.size()); ++bi) {
        const RigidBody& b = scene.rigidBodies[std::size_t(bi)];
        for (const RigidShape& shape : b.shapes) {
            Bounds bounds = shapeBounds(b, shape);
            bounds.min -= Vec3::Constant(2 * margin);
            bounds.max += Vec3::Constant(2 * margin);
            const ShapePose pose = shapePose(b, shape);
            for (std::size_t i = 0; i < n; ++i) {
                const SolverParticle& p = P[i];
                if (p.w <= 0 || (i >= airBegin && i < airEnd) || p.x < bounds.min.x() ||
                    p.x > bounds.max.x() || p.y < bounds.min.y() || p.y > bounds.max.y() ||
                    p.z < bounds.min.z() || p.z > bounds.max.z()) {
                    continue;
                }
                const Vec3 at(p.x, p.y, p.z);
                Vec3 normal;
                const Real d = shapeSignedDistance(shape, pose, at, normal);
                if (d >= 2 * margin) {
                    continue;
                }
                const Vec3 surface = at - d * normal;
                links_.push_back({Index(i), bi, b.q.conjugate() * (surface - b.x),
                                  b.q.conjugate() * normal, 0, 0, Vec3::Zero(), true,
                                  scene.particles.positions[i]});
                ++contactCount_;
            }
        }
    }
}

void RigidCoupling::project(const Scene& scene, SolverParticle* P, Real h) {
    for (Link& l : links_) {
        SolverParticle& p = P[l.particle];
        if (p.w <= 0) {
            continue;
        }
        const RigidBody& b = scene.rigidBodies[std::size_t(l.body)];
        const Vec3 at(p.x, p.y, p.z);
        const Vec3 target = b.x + b.q * l.local;
        Vec3 move = Vec3::Zero();
        if (l.contact) {
            // C = (p - q)·n - margin >= 0, like a collider (PBD §3.4).
            const Vec3 n = b.q * l.normal;
            const Real c = (at - target).dot(n) - margin_;
            if (c >= 0) {
                continue;
            }
            move = -c * n;
        } else if (l.compliance <= 0) {
            move = target - at;
        } else {
            // XPBD: C = |p - target|, alpha~ = compliance / h^2 (XPBD eq. 18).
            const Vec3 d = at - target;
            const Real c = d.norm();
            if (c < 1e-15) {
                continue;
            }
            const Real alpha = l.compliance / (h * h);
            const Real dl = (-c - alpha * l.lambda) / (p.w + alpha);
            l.lambda += dl;
            move = p.w * dl * (d / c);
        }
        p.x += move.x();
        p.y += move.y();
        p.z += move.z();
        l.moved += move;
    }
}

void RigidCoupling::applyImpulses(Scene& scene, Real h) {
    lastImpulse_ = 0;
    // Coulomb friction on the contacts, after the velocity update (as for colliders, PBD §3.4):
    // the particle's sliding velocity relative to the body's surface there is reduced by at
    // most mu times the normal velocity change the contact made; the body takes the opposite.
    for (Link& l : links_) {
        const Real w = scene.particles.inverseMasses[l.particle];
        if (!l.contact || w <= 0 || l.moved.squaredNorm() == 0) {
            continue;
        }
        RigidBody& b = scene.rigidBodies[std::size_t(l.body)];
        if (!(b.friction > 0)) {
            continue;
        }
        const Vec3 n = b.q * l.normal;
        const Vec3& at = scene.particles.positions[l.particle];
        Vec3& v = scene.particles.velocities[l.particle];
        const Vec3 relative = v - b.velocityAt(at);
        const Vec3 sliding = relative - relative.dot(n) * n;
        const Real speed = sliding.norm();
        if (speed < 1e-12) {
            continue;
        }
        const Real normalChange = std::abs(l.moved.dot(n)) / h;
        const Vec3 dv = -std::min(speed, b.friction * normalChange) * (sliding / speed);
        v += dv;
        if (b.isDynamic()) {
            const Vec3 impulse = dv / w; // given to the particle
            b.v -= b.inverseMass * impulse;
            b.L -= (at - b.x).cross(impulse);
            b.omega = b.inverseInertiaWorld() * b.L;
        }
    }
    for (const Link& l : links_) {
        const Real w = scene.particles.inverseMasses[l.particle];
        if (w <= 0 || l.moved.squaredNorm() == 0) {
            continue;
        }
        RigidBody& b = scene.rigidBodies[std::size_t(l.body)];
        // The momentum this link gave the particle, taken from the body at the particle.
        const Vec3 impulse = l.moved / (w * h);
        lastImpulse_ += impulse.norm();
        if (!b.isDynamic()) {
            continue;
        }
        // With v = (p' - x)/h the particle's angular momentum x' x m v' changed by
        // x x m dp/h (x' x x' = 0): the impulse acts at the start position x = p + (x - p).
        const Vec3& at = l.start;
        b.v -= b.inverseMass * impulse;
        b.L -= (at - b.x).cross(impulse);
        b.omega = b.inverseInertiaWorld() * b.L;
        if (b.sleeping) {
            b.sleeping = false;
            b.restTime = 0;
        }
    }
}

} // namespace pbd
