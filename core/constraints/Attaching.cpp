#include "core/constraints/Attaching.h"

#include "core/solver/SelfCollision.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>

namespace pbd {

namespace {

// The selection sorted, without repeats; a message when it is empty or out of range.
Result<std::vector<Index>> checkedSelection(const Scene& scene, std::vector<Index> particles,
                                            Real compliance) {
    if (particles.empty()) {
        return Error{"nothing to attach: select vertices first"};
    }
    std::sort(particles.begin(), particles.end());
    particles.erase(std::unique(particles.begin(), particles.end()), particles.end());
    if (particles.back() >= scene.particles.size()) {
        return Error{"particle " + std::to_string(particles.back()) + " does not exist (" +
                     std::to_string(scene.particles.size()) + " particles)"};
    }
    if (!(compliance >= 0) || !std::isfinite(compliance)) {
        return Error{"an attachment's compliance must be a number >= 0"};
    }
    return particles;
}

std::string bodyName(const Scene& scene, int body) {
    return body >= 0 ? scene.bodies[std::size_t(body)].name : std::string("scene");
}

// Attachments of `particles` to targets(i), in the group of the first particle's body.
template <class Target>
Result<AttachResult> attachTo(Scene& scene, const std::vector<Index>& selection, Real compliance,
                              Target&& target) {
    Result<std::vector<Index>> particles = checkedSelection(scene, selection, compliance);
    if (!particles) {
        return Error{particles.error()};
    }
    Attachments& a = scene.constraints.attachments;
    const std::set<Index> attached(a.particle.begin(), a.particle.end());
    AttachResult result;
    for (Index p : *particles) {
        if (attached.count(p) != 0) {
            ++result.skipped;
            continue;
        }
        const int body = bodyOfParticle(scene, p);
        const int group = findOrAddGroup(scene, body, ConstraintType::Attachment, compliance);
        a.add(p, target(p), compliance);
        a.group.back() = group;
        result.group = group;
        ++result.added;
    }
    if (result.added == 0) {
        return Error{"the selected particles are attached already"};
    }
    return result;
}

} // namespace

Result<AttachResult> attachToPoints(Scene& scene, const std::vector<Index>& particles,
                                    Real compliance) {
    return attachTo(scene, particles, compliance,
                    [&](Index p) { return scene.particles.positions[p]; });
}

Result<AttachResult> attachToCollider(Scene& scene, const std::vector<Index>& particles,
                                      int collider, Real compliance) {
    if (collider < 0 || std::size_t(collider) >= scene.colliders.size()) {
        return Error{"there is no collider " + std::to_string(collider)};
    }
    const Collider& c = scene.colliders[std::size_t(collider)];
    return attachTo(scene, particles, compliance, [&](Index p) {
        return closestSurfacePoint(c, scene.particles.positions[p]).point;
    });
}

Result<AttachResult> attachToCharacter(Scene& scene, const std::vector<Index>& particles,
                                       int character, Real compliance,
                                       const std::vector<Index>& triangles) {
    if (character < 0 || std::size_t(character) >= scene.characters.size()) {
        return Error{"there is no character " + std::to_string(character)};
    }
    Character& ch = scene.characters[std::size_t(character)];
    if (ch.collider < 0 || std::size_t(ch.collider) >= scene.colliders.size()) {
        return Error{"character '" + ch.name + "' has no collider"};
    }
    const Collider& skin = scene.colliders[std::size_t(ch.collider)];
    std::vector<CharacterPin> pins;
    Result<AttachResult> result = attachTo(scene, particles, compliance, [&](Index p) {
        const Vec3& x = scene.particles.positions[p];
        CharacterPin pin;
        pin.attachment = Index(scene.constraints.attachments.size());
        Real best = std::numeric_limits<Real>::infinity();
        Vec3 point = x;
        const std::size_t candidates = triangles.empty() ? skin.triangles.size() : triangles.size();
        for (std::size_t i = 0; i < candidates; ++i) {
            const std::size_t t = triangles.empty() ? i : triangles[i];
            if (t >= skin.triangles.size()) {
                continue;
            }
            const Triangle& tri = skin.triangles[t];
            const Vec3& a = skin.vertices[tri[0]];
            const Vec3& b = skin.vertices[tri[1]];
            const Vec3& c = skin.vertices[tri[2]];
            const Vec3 w = closestBarycentric(x, a, b, c);
            const Vec3 q = w[0] * a + w[1] * b + w[2] * c;
            if ((q - x).squaredNorm() < best) {
                best = (q - x).squaredNorm();
                point = q;
                pin.triangle = Index(t);
                pin.barycentric = w;
            }
        }
        // The particle keeps where it is from the skin (a waistband's ease), in the skin
        // triangle's frame, so the target is the particle now.
        const Triangle& tri = skin.triangles[pin.triangle];
        pin.offset = pinFrame(skin.vertices[tri[0]], skin.vertices[tri[1]], skin.vertices[tri[2]])
                         .transpose() *
                     (x - point);
        pins.push_back(pin);
        return pinTarget(pin, skin.vertices, skin.triangles);
    });
    if (result) {
        ch.pins.insert(ch.pins.end(), pins.begin(), pins.end());
    }
    return result;
}

Result<std::size_t> addSkinBody(Scene& scene, int character, const std::vector<Index>& triangles,
                                const std::string& name) {
    if (character < 0 || std::size_t(character) >= scene.characters.size()) {
        return Error{"there is no character " + std::to_string(character)};
    }
    Character& ch = scene.characters[std::size_t(character)];
    if (ch.collider < 0 || std::size_t(ch.collider) >= scene.colliders.size()) {
        return Error{"character '" + ch.name + "' has no collider"};
    }
    if (ch.body >= 0) {
        return Error{"character '" + ch.name + "' has a skin body already ('" +
                     scene.bodies[std::size_t(ch.body)].name + "')"};
    }
    if (triangles.empty()) {
        return Error{"no skin triangles for body '" + name + "'"};
    }
    const Collider& skin = scene.colliders[std::size_t(ch.collider)];
    Body body;
    body.name = name;
    body.kind = BodyKind::Collider;
    body.firstParticle = Index(scene.particles.size());
    // Skin vertex -> (particle, a triangle and corner that has it), in order of first use.
    std::vector<Index> particleOf(skin.vertices.size(), Index(-1));
    std::vector<CharacterPin> corners;
    for (Index t : triangles) {
        if (t >= skin.triangles.size()) {
            return Error{"character '" + ch.name + "' has no skin triangle " + std::to_string(t) +
                         " (" + std::to_string(skin.triangles.size()) + ")"};
        }
        Triangle tri = skin.triangles[t];
        for (int k = 0; k < 3; ++k) {
            Index& p = particleOf[tri[k]];
            if (p == Index(-1)) {
                p = scene.particles.add(skin.vertices[tri[k]], 0.0);
                CharacterPin pin;
                pin.triangle = t;
                pin.barycentric[k] = 1;
                corners.push_back(pin);
            }
            tri[k] = p;
        }
        body.triangles.push_back(tri);
    }
    body.particleCount = Index(scene.particles.size()) - body.firstParticle;
    const std::size_t index = scene.bodies.size();
    scene.bodies.push_back(std::move(body));
    const Index first = scene.bodies.back().firstParticle;
    std::vector<Index> particles(corners.size());
    for (std::size_t i = 0; i < particles.size(); ++i) {
        particles[i] = first + Index(i);
    }
    std::vector<CharacterPin> pins;
    Result<AttachResult> pinned = attachTo(scene, particles, 0, [&](Index p) {
        CharacterPin pin = corners[p - first];
        pin.attachment = Index(scene.constraints.attachments.size());
        pins.push_back(pin);
        return pinTarget(pin, skin.vertices, skin.triangles);
    });
    if (!pinned) {
        return Error{pinned.error()};
    }
    ch.pins.insert(ch.pins.end(), pins.begin(), pins.end());
    ch.body = int(index);
    return index;
}

Result<AttachResult> attachToBody(Scene& scene, const std::vector<Index>& selection, int body,
                                  Real compliance) {
    if (body < 0 || std::size_t(body) >= scene.bodies.size()) {
        return Error{"there is no body " + std::to_string(body)};
    }
    Result<std::vector<Index>> particles = checkedSelection(scene, selection, compliance);
    if (!particles) {
        return Error{particles.error()};
    }
    const Body& target = scene.bodies[std::size_t(body)];
    if (target.particleCount == 0) {
        return Error{"body '" + target.name + "' has no particles to attach to"};
    }
    const int from = bodyOfParticle(scene, particles->front());
    for (Index p : *particles) {
        if (bodyOfParticle(scene, p) == body) {
            return Error{"particle " + std::to_string(p) + " belongs to '" + target.name +
                         "' itself: select vertices of another body"};
        }
    }
    const std::string name = bodyName(scene, from) + " to " + target.name;
    DistanceConstraints& d = scene.constraints.distance;
    // Pairs tied already (either way round) are left.
    std::set<std::pair<Index, Index>> tied;
    for (const auto& e : d.particles) {
        tied.emplace(std::min(e[0], e[1]), std::max(e[0], e[1]));
    }
    const auto& x = scene.particles.positions;
    AttachResult result;
    for (Index p : *particles) {
        Index nearest = target.firstParticle;
        Real best = std::numeric_limits<Real>::infinity();
        for (Index q = target.firstParticle; q < target.firstParticle + target.particleCount; ++q) {
            const Real d2 = (x[q] - x[p]).squaredNorm();
            if (d2 < best) {
                best = d2;
                nearest = q;
            }
        }
        if (!tied.emplace(std::min(p, nearest), std::max(p, nearest)).second) {
            ++result.skipped;
            continue;
        }
        result.group = findOrAddGroup(scene, -1, ConstraintType::Distance, compliance, name);
        d.add(p, nearest, std::sqrt(best), compliance);
        d.group.back() = result.group;
        ++result.added;
    }
    if (result.added == 0) {
        return Error{"the selected particles are tied to '" + target.name + "' already"};
    }
    return result;
}

Result<AttachResult> attachToRigidBody(Scene& scene, const std::vector<Index>& selection,
                                       int rigidBody, Real compliance) {
    if (rigidBody < 0 || std::size_t(rigidBody) >= scene.rigidBodies.size()) {
        return Error{"there is no rigid body " + std::to_string(rigidBody)};
    }
    Result<std::vector<Index>> particles = checkedSelection(scene, selection, compliance);
    if (!particles) {
        return Error{particles.error()};
    }
    const RigidBody& b = scene.rigidBodies[std::size_t(rigidBody)];
    std::set<Index> carried;
    for (const RigidAttachment& a : scene.rigidAttachments) {
        if (a.body == rigidBody) {
            carried.insert(a.particle);
        }
    }
    AttachResult result;
    for (Index p : *particles) {
        if (carried.count(p) != 0) {
            ++result.skipped;
            continue;
        }
        const Vec3 local = b.q.conjugate() * (scene.particles.positions[p] - b.x);
        scene.rigidAttachments.push_back({p, rigidBody, local, compliance});
        ++result.added;
    }
    if (result.added == 0) {
        return Error{"the selected particles are carried by '" + b.name + "' already"};
    }
    return result;
}

} // namespace pbd
