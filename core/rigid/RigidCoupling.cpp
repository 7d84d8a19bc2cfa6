#include "core/rigid/RigidCoupling.h"

#include "core/rigid/RigidCollision.h"
#include "core/scene/Scene.h"
#include "core/solver/Solver.h"

#include <algorithm>

namespace pbd {

RigidAttachment attachToRigidBody(const Scene& scene, Index particle, int body, Real compliance) {
    const RigidBody& b = scene.rigidBodies.at(std::size_t(body));
    return {particle, body, b.q.conjugate() * (scene.particles.positions.at(particle) - b.x),
            compliance};
}

std::size_t RigidCoupling::memoryBytes() const {
    return sizeof(*this) + bodies_.size() * sizeof(BodyState) + links_.size() * sizeof(Link) +
           edgeLinks_.size() * sizeof(EdgeLink) + edges_.size() * sizeof(edges_[0]) +
           distances_.size() * sizeof(ParticleDistance) + stamps_.size() * sizeof(stamps_[0]);
}

void RigidCoupling::begin(const Scene& scene, const SolverParticle* P, Real margin, Real h) {
    margin_ = margin;
    bodies_.resize(scene.rigidBodies.size());
    for (std::size_t i = 0; i < bodies_.size(); ++i) {
        const RigidBody& b = scene.rigidBodies[i];
        BodyState& s = bodies_[i];
        s.moves = b.isDynamic();
        s.dx = s.dtheta = Vec3::Zero();
        s.inverseMass = s.moves ? b.inverseMass : 0;
        s.inverseInertia = s.moves ? b.inverseInertiaWorld() : Mat3::Zero();
        s.origin = b.x - h * b.v;
        s.v = b.v;
        s.touched = false;
    }
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

Vec3 RigidCoupling::pointOn(const RigidBody& b, const BodyState& s, const Vec3& local) {
    const Vec3 r = b.q * local;
    return b.x + s.dx + r + s.dtheta.cross(r);
}

Vec3 RigidCoupling::directionOn(const RigidBody& b, const BodyState& s, const Vec3& local) {
    const Vec3 d = b.q * local;
    return (d + s.dtheta.cross(d)).normalized();
}

Real RigidCoupling::bodyWeight(const BodyState& s, const Vec3& arm, const Vec3& n) {
    const Vec3 rn = arm.cross(n);
    return s.inverseMass + rn.dot(s.inverseInertia * rn);
}

void RigidCoupling::push(BodyState& s, const Vec3& arm, const Vec3& n, Real dl) {
    // The particle received m dp / h = dl n / h at `arm`: the body takes the opposite.
    s.dx -= s.inverseMass * dl * n;
    s.dtheta -= s.inverseInertia * arm.cross(n) * dl;
}

void RigidCoupling::project(const Scene& scene, SolverParticle* P, Real h) {
    for (Link& l : links_) {
        SolverParticle& p = P[l.particle];
        if (p.w <= 0) {
            continue;
        }
        const RigidBody& b = scene.rigidBodies[std::size_t(l.body)];
        BodyState& state = bodies_[std::size_t(l.body)];
        const Vec3 at(p.x, p.y, p.z);
        const Vec3 target = pointOn(b, state, l.local);
        const Vec3 arm = l.start - state.origin;
        // The correction dl along n moves the particle by w dl n and the body's point by
        // -w_body dl n (PBD §3.3 with the body's generalized inverse mass, Müller et al. 2020).
        Vec3 n;
        Real dl = 0;
        if (l.contact) {
            // C = (p - q)·n - margin >= 0, like a collider (PBD §3.4).
            n = directionOn(b, state, l.normal);
            const Real c = (at - target).dot(n) - margin_;
            if (c >= 0) {
                continue;
            }
            dl = -c / (p.w + (state.moves ? bodyWeight(state, arm, n) : 0));
        } else {
            const Vec3 d = target - at;
            const Real c = d.norm();
            if (c < 1e-15) {
                continue;
            }
            n = d / c;
            const Real w = p.w + (state.moves ? bodyWeight(state, arm, n) : 0);
            if (l.compliance <= 0) {
                dl = c / w;
            } else {
                // XPBD: C = |p - target|, alpha~ = compliance / h^2 (XPBD eq. 18).
                const Real alpha = l.compliance / (h * h);
                dl = (c - alpha * l.lambda) / (w + alpha);
                l.lambda += dl;
            }
        }
        const Vec3 move = p.w * dl * n;
        p.x += move.x();
        p.y += move.y();
        p.z += move.z();
        l.moved += move;
        if (state.moves) {
            push(state, arm, n, dl);
        }
    }
    for (EdgeLink& l : edgeLinks_) {
        // C = (p(t) - q)·n - margin >= 0 with p(t) = (1 - t) p_a + t p_b: the gradients are
        // (1 - t) n and t n, so dl = -C / (w_a (1 - t)^2 + w_b t^2 + w_body) (PBD §3.3); the
        // body takes each particle's share at that particle's start.
        SolverParticle& pa = P[l.a];
        SolverParticle& pb = P[l.b];
        const Real ga = pa.w > 0 ? 1 - l.t : 0, gb = pb.w > 0 ? l.t : 0;
        const Real particles = pa.w * ga * ga + pb.w * gb * gb;
        if (particles <= 0) {
            continue;
        }
        const RigidBody& b = scene.rigidBodies[std::size_t(l.body)];
        BodyState& state = bodies_[std::size_t(l.body)];
        const Vec3 n = directionOn(b, state, l.normal);
        const Real ta = 1 - l.t, tb = l.t;
        const Vec3 at(ta * pa.x + tb * pb.x, ta * pa.y + tb * pb.y, ta * pa.z + tb * pb.z);
        const Real c = (at - pointOn(b, state, l.local)).dot(n) - margin_;
        if (c >= 0) {
            continue;
        }
        const Vec3 armA = l.startA - state.origin, armB = l.startB - state.origin;
        Real weight = particles;
        if (state.moves) {
            const Vec3 arm = (ga * armA + gb * armB) / (ga + gb);
            weight += (ga + gb) * bodyWeight(state, arm, n);
        }
        const Real dl = -c / weight;
        const Vec3 moveA = pa.w * ga * dl * n, moveB = pb.w * gb * dl * n;
        pa.x += moveA.x();
        pa.y += moveA.y();
        pa.z += moveA.z();
        pb.x += moveB.x();
        pb.y += moveB.y();
        pb.z += moveB.z();
        l.movedA += moveA;
        l.movedB += moveB;
        if (state.moves) {
            push(state, armA, n, ga * dl);
            push(state, armB, n, gb * dl);
        }
    }
}

void RigidCoupling::applyImpulses(Scene& scene, Real h) {
    lastImpulse_ = 0;
    // The momentum each link gave its particles, taken from the body. With v = (p' - x)/h the
    // particle's angular momentum x' x m v' changed by x x m dp/h (x' x x' = 0): the impulse
    // acts at the particle's start x. The body's position moves with its velocity change as
    // the projection moved it (x_b += h dv_b), so its own angular momentum x_b x m v_b changes
    // by o x m dv_b with o = x_b - h v_b: the lever arms are taken from o.
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
        BodyState& state = bodies_[std::size_t(body)];
        b.v -= b.inverseMass * impulse;
        b.L -= (start - state.origin).cross(impulse);
        state.touched = true;
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
    for (std::size_t i = 0; i < bodies_.size(); ++i) {
        BodyState& state = bodies_[i];
        if (!state.touched) {
            continue;
        }
        // Where the projection moved the body: dx = h dv and dtheta = h I^-1 dL.
        RigidBody& b = scene.rigidBodies[i];
        b.x += h * (b.v - state.v);
        const Real angle = state.dtheta.norm();
        if (angle > 0) {
            b.q = (Quat(Eigen::AngleAxisd(angle, state.dtheta / angle)) * b.q).normalized();
        }
        b.omega = b.inverseInertiaWorld() * b.L;
        state.inverseInertia = b.inverseInertiaWorld();
    }

    // Coulomb friction on the contacts, after the velocity update (as for colliders, PBD §3.4):
    // the sliding velocity relative to the body's surface there is reduced by an impulse of at
    // most mu times the contact's normal impulse; the body takes the opposite at the particle
    // (velocities only, so the lever arm is from the body's centre now).
    const auto slidingWeight = [&](int body, const Vec3& arm, const Vec3& direction) {
        const BodyState& state = bodies_[std::size_t(body)];
        return state.moves ? bodyWeight(state, arm, direction) : Real(0);
    };
    const auto give = [](RigidBody& b, const Vec3& impulse, const Vec3& at) {
        b.v -= b.inverseMass * impulse;
        b.L -= (at - b.x).cross(impulse);
        b.omega = b.inverseInertiaWorld() * b.L;
    };
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
        const Vec3 direction = sliding / speed;
        const Real normalImpulse = std::abs(l.moved.dot(n)) / (w * h);
        const Real stop = speed / (w + slidingWeight(l.body, at - b.x, direction));
        const Vec3 impulse = -std::min(stop, b.friction * normalImpulse) * direction;
        v += w * impulse;
        if (b.isDynamic()) {
            give(b, impulse, at);
        }
    }
    // The same at an edge's point: the impulse J there is shared as (1 - t) J and t J.
    for (EdgeLink& l : edgeLinks_) {
        RigidBody& b = scene.rigidBodies[std::size_t(l.body)];
        const Real wa = scene.particles.inverseMasses[l.a], wb = scene.particles.inverseMasses[l.b];
        const Real ga = wa > 0 ? 1 - l.t : 0, gb = wb > 0 ? l.t : 0;
        const Real particles = wa * ga * ga + wb * gb * gb;
        if (!(b.friction > 0) || particles <= 0 ||
            l.movedA.squaredNorm() + l.movedB.squaredNorm() == 0) {
            continue;
        }
        const Vec3 n = b.q * l.normal;
        Vec3& va = scene.particles.velocities[l.a];
        Vec3& vb = scene.particles.velocities[l.b];
        const Real ta = 1 - l.t, tb = l.t;
        const Vec3 at = ta * scene.particles.positions[l.a] + tb * scene.particles.positions[l.b];
        const Vec3 relative = ta * va + tb * vb - b.velocityAt(at);
        const Vec3 sliding = relative - relative.dot(n) * n;
        const Real speed = sliding.norm();
        if (speed < 1e-12) {
            continue;
        }
        const Vec3 direction = sliding / speed;
        const Real normalImpulse =
            std::abs((l.movedA / (wa > 0 ? wa : 1) + l.movedB / (wb > 0 ? wb : 1)).dot(n)) / h;
        const Vec3 arm =
            (ga * scene.particles.positions[l.a] + gb * scene.particles.positions[l.b]) /
                (ga + gb) -
            b.x;
        const Real stop = speed / (particles + (ga + gb) * slidingWeight(l.body, arm, direction));
        const Vec3 impulse = -std::min(stop, b.friction * normalImpulse) * direction;
        va += wa * ga * impulse;
        vb += wb * gb * impulse;
        if (b.isDynamic()) {
            give(b, ga * impulse, scene.particles.positions[l.a]);
            give(b, gb * impulse, scene.particles.positions[l.b]);
        }
    }
}

} // namespace pbd
