#include "core/RigidCoupling.h"

#include "core/RigidCollision.h"
#include "core/Scene.h"
#include "core/Solver.h"

#include <algorithm>

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
                Vec3 surface = at - d * normal;
                if (d < 0) {
                    // Already inside at the predicted position: the nearest face may be the far
                    // one (a thin shape). If the particle was outside at the start of the
                    // substep, the tangent plane nearest to where it came from holds it.
                    const Vec3& start = scene.particles.positions[i];
                    Vec3 startNormal;
                    const Real ds = shapeSignedDistance(shape, pose, start, startNormal);
                    if (ds > 0) {
                        normal = startNormal;
                        surface = start - ds * startNormal;
                    }
                }
                links_.push_back({Index(i), bi, b.q.conjugate() * (surface - b.x),
                                  b.q.conjugate() * normal, 0, 0, Vec3::Zero(), true,
                                  scene.particles.positions[i]});
                ++contactCount_;
            }
        }
    }
    findEdgeContacts(scene, P);
}

void RigidCoupling::updateEdges(const Scene& scene) {
    const Index airBegin = scene.air.firstParticle;
    const Index airEnd = airBegin + scene.air.particleCount;
    std::uint64_t signature = 1469598103934665603ull; // FNV-1a over the triangles
    const auto mix = [&](std::uint64_t v) { signature = (signature ^ v) * 1099511628211ull; };
    mix(scene.particles.size());
    mix(airBegin);
    mix(airEnd);
    for (const Body& body : scene.bodies) {
        mix(body.triangles.size());
        for (const Triangle& t : body.triangles) {
            mix((std::uint64_t(t[0]) << 42) ^ (std::uint64_t(t[1]) << 21) ^ std::uint64_t(t[2]));
        }
    }
    if (signature == edgeSignature_) {
        return;
    }
    edgeSignature_ = signature;
    edges_.clear();
    for (const Body& body : scene.bodies) {
        for (const Triangle& t : body.triangles) {
            for (int k = 0; k < 3; ++k) {
                const Index a = std::min(t[k], t[(k + 1) % 3]), b = std::max(t[k], t[(k + 1) % 3]);
                if (a == b || (a >= airBegin && a < airEnd) || (b >= airBegin && b < airEnd)) {
                    continue;
                }
                edges_.push_back({a, b});
            }
        }
    }
    std::sort(edges_.begin(), edges_.end());
    edges_.erase(std::unique(edges_.begin(), edges_.end()), edges_.end());
}

void RigidCoupling::findEdgeContacts(const Scene& scene, const SolverParticle* P) {
    edgeLinks_.clear();
    updateEdges(scene);
    if (edges_.empty()) {
        return;
    }
    const Real reach = 2 * margin_;
    if (stamps_.size() != scene.particles.size()) {
        stamps_.assign(scene.particles.size(), 0);
        distances_.resize(scene.particles.size());
        stamp_ = 0;
    }
    for (int bi = 0; bi < int(scene.rigidBodies.size()); ++bi) {
        const RigidBody& body = scene.rigidBodies[std::size_t(bi)];
        for (const RigidShape& shape : body.shapes) {
            Bounds bounds = shapeBounds(body, shape);
            bounds.min -= Vec3::Constant(reach);
            bounds.max += Vec3::Constant(reach);
            const ShapePose pose = shapePose(body, shape);
            // A particle's distance to the shape, once per shape however many edges it is on.
            ++stamp_;
            const auto distanceOf = [&](Index i, const Vec3& x) -> const ParticleDistance& {
                ParticleDistance& cached = distances_[i];
                if (stamps_[i] != stamp_) {
                    stamps_[i] = stamp_;
                    cached.distance = shapeSignedDistance(shape, pose, x, cached.normal);
                }
                return cached;
            };
            for (const auto& [a, b] : edges_) {
                const SolverParticle& pa = P[a];
                const SolverParticle& pb = P[b];
                if ((pa.w <= 0 && pb.w <= 0) || std::max(pa.x, pb.x) < bounds.min.x() ||
                    std::min(pa.x, pb.x) > bounds.max.x() ||
                    std::max(pa.y, pb.y) < bounds.min.y() ||
                    std::min(pa.y, pb.y) > bounds.max.y() ||
                    std::max(pa.z, pb.z) < bounds.min.z() ||
                    std::min(pa.z, pb.z) > bounds.max.z()) {
                    continue;
                }
                const Vec3 xa(pa.x, pa.y, pa.z), xb(pb.x, pb.y, pb.z);
                const auto& [da, na] = distanceOf(a, xa);
                const auto& [db, nb] = distanceOf(b, xb);
                // The distance is 1-Lipschitz, so along the edge it is at least
                // (d_a + d_b - length) / 2. Two points outside with the same normal lie over
                // the same face, and so does the edge between them: its distance is linear.
                const Real length = (xb - xa).norm();
                if (0.5 * (da + db - length) >= reach ||
                    (da >= 0 && db >= 0 && na.dot(nb) > 1 - 1e-12)) {
                    continue;
                }
                Real t = 0;
                Vec3 normal;
                const Real d = segmentSignedDistance(shape, pose, xa, xb, t, normal, 24, reach);
                // Only where the edge's inside is nearer than both its particles: at the ends
                // the particles' own contacts hold.
                if (d >= reach || t <= 1e-3 || t >= 1 - 1e-3 ||
                    d >= std::min(da, db) - 1e-6 * length) {
                    continue;
                }
                Vec3 surface = (1 - t) * xa + t * xb - d * normal;
                if (d < 0) {
                    // As for particles: if the edge was outside at the start of the substep, the
                    // tangent plane nearest to where it came from.
                    const Vec3& sa = scene.particles.positions[a];
                    const Vec3& sb = scene.particles.positions[b];
                    Real ts = 0;
                    Vec3 startNormal;
                    const Real ds = segmentSignedDistance(shape, pose, sa, sb, ts, startNormal, 24);
                    if (ds > 0) {
                        normal = startNormal;
                        surface = (1 - ts) * sa + ts * sb - ds * startNormal;
                    }
                }
                edgeLinks_.push_back({a, b, bi, t, body.q.conjugate() * (surface - body.x),
                                      body.q.conjugate() * normal, Vec3::Zero(), Vec3::Zero(),
                                      scene.particles.positions[a], scene.particles.positions[b]});
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
    for (EdgeLink& l : edgeLinks_) {
        // C = (p(t) - q)·n - margin >= 0 with p(t) = (1 - t) p_a + t p_b: the gradients are
        // (1 - t) n and t n, so s = -C / (w_a (1 - t)^2 + w_b t^2) (PBD §3.3).
        SolverParticle& pa = P[l.a];
        SolverParticle& pb = P[l.b];
        const Real ga = 1 - l.t, gb = l.t;
        const Real weight = pa.w * ga * ga + pb.w * gb * gb;
        if (weight <= 0) {
            continue;
        }
        const RigidBody& b = scene.rigidBodies[std::size_t(l.body)];
        const Vec3 n = b.q * l.normal;
        const Vec3 at(ga * pa.x + gb * pb.x, ga * pa.y + gb * pb.y, ga * pa.z + gb * pb.z);
        const Real c = (at - (b.x + b.q * l.local)).dot(n) - margin_;
        if (c >= 0) {
            continue;
        }
        const Real lambda = -c / weight;
        const Vec3 moveA = pa.w * ga * lambda * n, moveB = pb.w * gb * lambda * n;
        pa.x += moveA.x();
        pa.y += moveA.y();
        pa.z += moveA.z();
        pb.x += moveB.x();
        pb.y += moveB.y();
        pb.z += moveB.z();
        l.movedA += moveA;
        l.movedB += moveB;
    }
}

void RigidCoupling::applyImpulses(Scene& scene, Real h) {
    lastImpulse_ = 0;
    const auto give = [](RigidBody& b, const Vec3& impulse, const Vec3& at) {
        // The impulse a particle received at `at`, taken from the body.
        b.v -= b.inverseMass * impulse;
        b.L -= (at - b.x).cross(impulse);
        b.omega = b.inverseInertiaWorld() * b.L;
    };
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
            give(b, dv / w, at);
        }
    }
    // The same at an edge's point: its velocity change dv is shared like a position correction,
    // dv_a = w_a (1 - t) s, dv_b = w_b t s with s = dv / (w_a (1 - t)^2 + w_b t^2), and the body
    // takes -s (the impulse the two particles received) at the point.
    for (EdgeLink& l : edgeLinks_) {
        RigidBody& b = scene.rigidBodies[std::size_t(l.body)];
        const Real wa = scene.particles.inverseMasses[l.a], wb = scene.particles.inverseMasses[l.b];
        const Real ga = 1 - l.t, gb = l.t;
        const Real weight = wa * ga * ga + wb * gb * gb;
        if (!(b.friction > 0) || weight <= 0 ||
            l.movedA.squaredNorm() + l.movedB.squaredNorm() == 0) {
            continue;
        }
        const Vec3 n = b.q * l.normal;
        Vec3& va = scene.particles.velocities[l.a];
        Vec3& vb = scene.particles.velocities[l.b];
        const Vec3 at = ga * scene.particles.positions[l.a] + gb * scene.particles.positions[l.b];
        const Vec3 relative = ga * va + gb * vb - b.velocityAt(at);
        const Vec3 sliding = relative - relative.dot(n) * n;
        const Real speed = sliding.norm();
        if (speed < 1e-12) {
            continue;
        }
        const Real normalChange = std::abs((ga * l.movedA + gb * l.movedB).dot(n)) / h;
        const Vec3 dv = -std::min(speed, b.friction * normalChange) * (sliding / speed);
        const Vec3 impulse = dv / weight;
        va += wa * ga * impulse;
        vb += wb * gb * impulse;
        if (b.isDynamic()) {
            give(b, ga * (wa > 0 ? impulse : Vec3::Zero()) + gb * (wb > 0 ? impulse : Vec3::Zero()),
                 at);
        }
    }
    // The momentum each link gave its particles, taken from the body at the particles.
    const auto giveBack = [&](int body, Index particle, const Vec3& moved, const Vec3& start) {
        const Real w = scene.particles.inverseMasses[particle];
        if (w <= 0 || moved.squaredNorm() == 0) {
            return;
        }
        RigidBody& b = scene.rigidBodies[std::size_t(body)];
        const Vec3 impulse = moved / (w * h);
        lastImpulse_ += impulse.norm();
        if (!b.isDynamic()) {
            return;
        }
        // With v = (p' - x)/h the particle's angular momentum x' x m v' changed by
        // x x m dp/h (x' x x' = 0): the impulse acts at the start position x = p + (x - p).
        give(b, impulse, start);
        if (b.sleeping) {
            b.sleeping = false;
            b.restTime = 0;
        }
    };
    for (const Link& l : links_) {
        giveBack(l.body, l.particle, l.moved, l.start);
    }
    for (const EdgeLink& l : edgeLinks_) {
        giveBack(l.body, l.a, l.movedA, l.startA);
        giveBack(l.body, l.b, l.movedB, l.startB);
    }
}

} // namespace pbd
