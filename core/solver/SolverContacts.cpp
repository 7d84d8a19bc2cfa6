// The solver's contacts with colliders and cloth self-collision (PBD §3.4, §4.3): found once
// per substep in parts, projected with the constraints, then friction and restitution on the
// velocities. Members of Solver.

#include "core/solver/Solver.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>

namespace pbd {

// The triangles self-collision and continuous collision keep apart: every cloth body's and
// the 3D soft bodies' boundary surfaces (takesPartInSelfCollision).
void Solver::collectSurfaceTriangles(std::vector<Triangle>& triangles) const {
    triangles.clear();
    for (const Body& body : scene_.bodies) {
        if (takesPartInSelfCollision(body)) {
            triangles.insert(triangles.end(), body.triangles.begin(), body.triangles.end());
        }
    }
}

// Serial part of the contact search: collider bounds, the cloth and soft-body surface triangles
// and their hash.
void Solver::prepareContacts(int parts) {
    if (contactParts_.size() != static_cast<std::size_t>(parts)) {
        contactParts_.assign(static_cast<std::size_t>(parts), {});
    }
    const auto& colliders = scene_.colliders;
    if (colliderBounds_.size() != colliders.size()) {
        colliderBounds_.clear();
        for (const Collider& c : colliders) {
            Bounds b; // empty: unbounded (planes) or not worth bounding
            if (c.shape == ColliderShape::Mesh) {
                for (const Vec3& v : c.vertices) {
                    b.add(v);
                }
            }
            colliderBounds_.push_back(b);
        }
    }
    // Moving meshes (characters' skins): their search grid and bounds at the substep's end.
    movingColliders_.resize(colliders.size());
    skinReach_ = 0;
    for (std::size_t c = 0; c < colliders.size(); ++c) {
        if (colliders[c].shape == ColliderShape::Mesh && !colliders[c].velocities.empty()) {
            movingColliders_[c].build(colliders[c]);
            skinReach_ = std::max(skinReach_, movingColliders_[c].reach());
            colliderBounds_[c] = movingColliders_[c].bounds();
            colliderBounds_[c].min.array() -= movingColliders_[c].reach();
            colliderBounds_[c].max.array() += movingColliders_[c].reach();
            if (skinClearance_.size() != predicted_.size()) {
                skinClearance_.assign(predicted_.size(), SkinClearance{});
            }
        } else {
            movingColliders_[c] = MovingMeshCollider{};
        }
    }
    if (!scene_.solver.selfCollision) {
        selfCollisionWorkspace_.vertices.clear();
        return;
    }
    collectSurfaceTriangles(contactTriangles_);
    predictedPositions_.resize(predicted_.size());
    for (std::size_t i = 0; i < predicted_.size(); ++i) {
        predictedPositions_[i] = Vec3(predicted_[i].x, predicted_[i].y, predicted_[i].z);
    }
    // The hash itself is counted and filled in parts (Solver::runSubstepPhases).
    beginSelfCollisionGrid(contactTriangles_, scene_.particles.positions, predictedPositions_,
                           scene_.solver.clothThickness, parts, selfCollisionWorkspace_);
}

// Part k of T of the contact search: colliders for the particles of region k, self-collision for
// the k-th share of the cloth and soft-body surface triangles, into the part's own lists (merged in
// order afterwards, so the result does not depend on the threads).
void Solver::findContacts(int k, int T) {
    // Sized by prepareContacts on one thread: the parts run at once, and two of them resizing
    // the list on a solver's first step crashed (tst_meshing_export, two threads).
    ContactPart& part = contactParts_[static_cast<std::size_t>(k)];
    part.contacts.clear();
    part.selfContacts.clear();
    part.skinSearched = part.skinSkipped = 0;
    const auto& colliders = scene_.colliders;
    const Particles& particles = scene_.particles;
    const Real margin = scene_.solver.collisionMargin;
    const auto [begin, end] = particleRange(k, T, particles.size());
    const bool skins = skinReach_ > 0; // a moving mesh: its searches remembered
    for (std::size_t i = colliders.empty() ? end : begin; i < end; ++i) {
        const SolverParticle& q = predicted_[i];
        if (!(q.w > 0)) {
            continue;
        }
        const Vec3& x = particles.positions[i];
        const Vec3 p(q.x, q.y, q.z);
        // The skins: skipped while the particle cannot have come within its contact distance
        // of any of them since it was last searched (MovingMeshCollider::contact: the margin
        // and as much again or its path, beyond its path), outside them all: not by the skins'
        // largest vertex moves since and its own. Where a search found nothing within its
        // reach (the particle may have been deeper inside), not within the reach either.
        // Seen outside them, it can be no deeper inside one now than it and the skins moved
        // since, less how far out it was (the signed distance changes no faster than either
        // moves; with the margin as slack): deeper, the pseudo-normals' side is wrong (an
        // opening's rim came between), and the search takes the point for outside.
        bool skipSkins = false;
        Real deepest = MovingMeshCollider::kAnyDepth;
        if (skins) {
            const SkinClearance& remembered = skinClearance_[i];
            const Real path = (p - x).norm();
            const Real near = margin + std::max(margin, path) + path;
            const Real moved = (x - remembered.from).norm() + (skinTravel_ - remembered.travel);
            skipSkins = remembered.outside >= 0 && remembered.outside - moved > near &&
                        remembered.bound - moved > near + skinReach_;
            if (remembered.outside > 0 && std::isfinite(remembered.outside)) {
                deepest = std::max<Real>(0, moved + path - remembered.outside) + margin;
            }
        }
        bool searched = false;
        Real outside = std::numeric_limits<Real>::infinity();
        Real bound = std::numeric_limits<Real>::infinity();
        bool inside = false;
        for (std::size_t c = 0; c < colliders.size(); ++c) {
            const Bounds& b = colliderBounds_[c];
            const MovingMeshCollider& moving = movingColliders_[c];
            if (!b.empty() && ((x.cwiseMin(p).array() > b.max.array() + margin).any() ||
                               (x.cwiseMax(p).array() < b.min.array() - margin).any())) {
                if (!moving.empty() && !skipSkins) {
                    searched = true;
                    bound = 0; // far from this skin now, but not remembered how far
                }
                continue;
            }
            if (!moving.empty()) {
                if (skipSkins) {
                    continue;
                }
                searched = true;
            }
            Contact contact;
            Real clearance = 0;
            if (moving.empty()
                    ? contactFor(colliders[c], x, p, margin, contact.point, contact.normal)
                    : moving.contact(x, p, margin, contact.point, contact.normal,
                                     contact.surfaceVelocity, &clearance, deepest)) {
                contact.particle = static_cast<Index>(i);
                contact.collider = static_cast<Index>(c);
                contact.approachSpeed =
                    (particles.velocities[i] - contact.surfaceVelocity).dot(contact.normal);
                part.contacts.push_back(contact);
            }
            if (!moving.empty()) {
                if (clearance > 0) {
                    outside = std::min(outside, clearance);
                } else if (clearance < 0) {
                    bound = std::min(bound, -clearance);
                } else {
                    inside = true;
                }
            }
        }
        part.skinSkipped += skipSkins ? 1 : 0;
        if (searched) {
            ++part.skinSearched;
            SkinClearance& remembered = skinClearance_[i];
            remembered.from = x;
            remembered.travel = skinTravel_;
            remembered.outside = inside ? -1 : outside;
            remembered.bound = bound;
        }
    }
    part.selfContactsCut = false;
    if (!selfCollisionWorkspace_.vertices.empty()) {
        const auto [first, last] = particleRange(k, T, contactTriangles_.size());
        const std::size_t limit =
            kRunawaySelfContacts * selfCollisionWorkspace_.vertices.size() / std::size_t(T) + 1;
        part.selfContactsCut =
            !querySelfContacts(contactTriangles_, particles.positions, predictedPositions_,
                               scene_.solver.clothThickness, selfCollisionWorkspace_, first, last,
                               part.candidates, part.selfContacts, limit);
    }
}

void Solver::mergeContacts() {
    contacts_.clear();
    selfContacts_.clear();
    contactPartBegins_.clear();
    skinSearched_ = skinSkipped_ = 0;
    for (const ContactPart& part : contactParts_) {
        skinSearched_ += part.skinSearched;
        skinSkipped_ += part.skinSkipped;
        contactPartBegins_.push_back(contacts_.size());
        selfContactsCut_ = selfContactsCut_ || part.selfContactsCut;
        contacts_.insert(contacts_.end(), part.contacts.begin(), part.contacts.end());
        selfContacts_.insert(selfContacts_.end(), part.selfContacts.begin(),
                             part.selfContacts.end());
    }
    contactPartBegins_.push_back(contacts_.size());
    orderSelfContacts(selfContacts_);
}

// PBD eq. 12-13 with the triangle's point fixed by its barycentric coordinates:
// grad_q = s n, grad_pi = -s b_i n (n held constant during the projection).
void Solver::solveSelfContacts() {
    const Real h = scene_.solver.clothThickness;
    for (const SelfContact& c : selfContacts_) {
        SolverParticle* v[4] = {&predicted_[c.particle], &predicted_[c.triangle[0]],
                                &predicted_[c.triangle[1]], &predicted_[c.triangle[2]]};
        auto pos = [&](int k) { return Vec3(v[k]->x, v[k]->y, v[k]->z); };
        const Vec3 n = (pos(2) - pos(1)).cross(pos(3) - pos(1));
        const Real len = n.norm();
        if (!(len > 0)) {
            continue;
        }
        const Vec3 un = c.side * n / len;
        const Vec3 onTriangle =
            c.barycentric[0] * pos(1) + c.barycentric[1] * pos(2) + c.barycentric[2] * pos(3);
        const Real C = (pos(0) - onTriangle).dot(un) - h;
        if (C >= 0) {
            continue;
        }
        const Real weights[4] = {1, -c.barycentric[0], -c.barycentric[1], -c.barycentric[2]};
        Real denom = 0;
        for (int k = 0; k < 4; ++k) {
            denom += v[k]->w * weights[k] * weights[k];
        }
        if (!(denom > 0)) {
            continue;
        }
        const Real dl = -C / denom;
        for (int k = 0; k < 4; ++k) {
            const Vec3 dp = (v[k]->w * weights[k] * dl) * un;
            v[k]->x += dp.x();
            v[k]->y += dp.y();
            v[k]->z += dp.z();
        }
    }
}

// C(p) = (p - q)·n - margin >= 0, projected only when violated (PBD §3.4); the particle alone
// moves, so its mass does not matter.
void Solver::solveContacts(std::size_t first, std::size_t last) {
    const Real margin = scene_.solver.collisionMargin;
    for (std::size_t k = first; k < last; ++k) {
        Contact& c = contacts_[k];
        SolverParticle& q = predicted_[c.particle];
        const Vec3 p(q.x, q.y, q.z);
        const Real C = (p - c.point).dot(c.normal) - margin;
        if (C < 0) {
            q.x -= C * c.normal.x();
            q.y -= C * c.normal.y();
            q.z -= C * c.normal.z();
            c.normalCorrection -= C;
        }
    }
}

// Friction and restitution on the velocities of particles whose contact acted (PBD §3.1 line
// 16): the tangential speed drops by mu times the normal speed change the contact caused
// (dynamic Coulomb friction), and a particle that approached at speed u leaves at e u at least.
void Solver::applyContactVelocities(Real h) {
    Particles& particles = scene_.particles;
    for (const Contact& c : contacts_) {
        if (!(c.normalCorrection > 0)) {
            continue;
        }
        const Collider& collider = scene_.colliders[c.collider];
        // Relative to the surface, which moves when a character carries it.
        const Vec3 v = particles.velocities[c.particle] - c.surfaceVelocity;
        const Real vn = v.dot(c.normal);
        Vec3 vt = v - vn * c.normal;
        const Real speed = vt.norm();
        if (speed > 0) {
            const Real drop = std::min(collider.friction * c.normalCorrection / h, speed);
            vt *= (speed - drop) / speed;
        }
        Real vnNew = vn;
        if (c.approachSpeed < 0) {
            vnNew = std::max(vn, -collider.restitution * c.approachSpeed);
        }
        particles.velocities[c.particle] = c.surfaceVelocity + vt + vnNew * c.normal;
    }
}

std::string Solver::runaway() const {
    if (!selfContactsCut_) {
        return {};
    }
    return "the simulation ran away in step " + std::to_string(steps_) +
           ": self-collision found over " + std::to_string(kRunawaySelfContacts) +
           " contacts per particle (" + std::to_string(selfCollisionWorkspace_.vertices.size()) +
           " particles take part): the cloth has collapsed into itself";
}

std::string Solver::stepFailure(const std::exception& e, long step) {
    const bool memory = dynamic_cast<const std::bad_alloc*>(&e) != nullptr;
    return "the simulation failed in step " + std::to_string(step) + ": " +
           (memory ? std::string("it ran out of memory (a runaway: a particle flung far, or a "
                                 "tangle that keeps growing)")
                   : std::string(e.what()));
}

} // namespace pbd
