#pragma once
// Particles coupled with rigid bodies (§5): attachments of particles to points of rigid bodies,
// and contacts of particles with rigid shapes. Within a substep the bodies are held where the
// rigid step put them and the particles are projected onto them (position level, like the
// colliders); afterwards every body receives the opposite of the momentum its attachments and
// contacts gave the particles: the impulse m_i dp_i / h, applied at the particle's start position
// x_i (with v = (p' - x)/h the particle's angular momentum changes by x_i x m_i dp_i / h), so the
// coupling keeps the total linear and angular momentum exactly.

#include "core/RigidBody.h"

#include <vector>

namespace pbd {

struct Scene;
struct SolverParticle;

// Attaches the particle where it is now to the body's point there.
RigidAttachment attachToRigidBody(const Scene& scene, Index particle, int body,
                                  Real compliance = 0);

class RigidCoupling {
public:
    // Before the substep's iterations: the attachment targets and the particle contacts with
    // the rigid shapes at the predicted positions (closer than `margin`).
    void begin(const Scene& scene, const SolverParticle* predicted, Real margin);
    // One projection of every attachment and contact (after the other constraints).
    void project(const Scene& scene, SolverParticle* predicted, Real h);
    // After the velocity update: each body gets the impulses back; sleeping bodies touched wake.
    void applyImpulses(Scene& scene, Real h);

    // Particle contacts with rigid shapes in the last substep.
    std::size_t contactCount() const { return contactCount_; }
    // The momentum handed to bodies in the last substep (sum of |impulse|), N·s.
    Real lastImpulse() const { return lastImpulse_; }

private:
    struct Link {
        Index particle;
        int body;
        Vec3 local;  // the body point (attachment) or surface point (contact), body frame
        Vec3 normal; // contacts: outward surface normal, body frame
        Real compliance;
        Real lambda;
        Vec3 moved; // the particle's total correction from this link in the substep
        bool contact;
        Vec3 start; // the particle's position at the start of the substep
    };
    std::vector<Link> links_;
    std::size_t contactCount_ = 0;
    Real margin_ = 0;
    Real lastImpulse_ = 0;
};

} // namespace pbd
