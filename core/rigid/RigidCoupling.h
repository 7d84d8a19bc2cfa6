#pragma once
// Particles coupled with rigid bodies (§5): attachments of particles to points of rigid bodies,
// and contacts of particles and of the edges between them (cloth and surface triangles) with
// rigid shapes, so that a shape's edge or corner cannot slip through between particles. After
// the rigid step of a substep the particles are projected onto the bodies (position level, like
// the colliders; an edge's point is moved like a point of the segment, its two particles weighted
// by their inverse masses and the point's place on the edge), and each correction moves a dynamic
// body too, through its inverse mass and inverse inertia, so a light body is not treated as an
// immovable one. Afterwards every body receives the opposite of the momentum its links gave the
// particles: the impulse m_i dp_i / h at the particle's start position x_i (with v = (p' - x)/h
// the particle's angular momentum changes by x_i x m_i dp_i / h), its position following its
// velocity change, so the coupling keeps the total linear and angular momentum exactly.

#include "core/rigid/RigidBody.h"

#include <array>
#include <cstdint>
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
    // The substep is h long.
    void begin(const Scene& scene, const SolverParticle* predicted, Real margin, Real h);
    // One projection of every attachment and contact (after the other constraints).
    void project(const Scene& scene, SolverParticle* predicted, Real h);
    // After the velocity update: each body gets the impulses back; sleeping bodies touched wake.
    void applyImpulses(Scene& scene, Real h);

    // Particle contacts with rigid shapes in the last substep.
    std::size_t contactCount() const { return contactCount_; }
    // Edge contacts (a shape closer to an edge's inside than to its particles) in the last
    // substep.
    std::size_t edgeContactCount() const { return edgeLinks_.size(); }
    // The momentum handed to bodies in the last substep (sum of |impulse|), N·s.
    Real lastImpulse() const { return lastImpulse_; }
    // Bytes its arrays hold (a copy holds the same).
    std::size_t memoryBytes() const;

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
    // A shape's point against the point a fraction t along the edge from particle a to b.
    struct EdgeLink {
        Index a, b;
        int body;
        Real t;
        Vec3 local;  // the surface point, body frame
        Vec3 normal; // outward surface normal, body frame
        Vec3 movedA, movedB;
        Vec3 startA, startB;
    };
    // The edges of the bodies' triangles (not the air's), each once; rebuilt when the
    // triangles change (tearing, editing).
    void updateEdges(const Scene& scene);
    void findEdgeContacts(const Scene& scene, const SolverParticle* predicted);

    // A dynamic body as the projection moves it within the substep: each correction dl along
    // n moves the particle by w dl n and the body by -dl n through its inverse mass and inverse
    // inertia at the particle's lever arm, to first order (Müller et al., "Detailed Rigid Body
    // Simulation with Extended Position Based Dynamics", 2020).
    struct BodyState {
        bool moves = false;   // dynamic
        bool touched = false; // received an impulse this substep
        Real inverseMass = 0;
        Mat3 inverseInertia = Mat3::Zero(); // world, at the start of the projection
        Vec3 dx = Vec3::Zero(), dtheta = Vec3::Zero();
        Vec3 origin = Vec3::Zero(); // x - h v: where the lever arms are taken from
        Vec3 v = Vec3::Zero();      // the velocity before the impulses
    };
    static Vec3 pointOn(const RigidBody& b, const BodyState& s, const Vec3& local);
    static Vec3 directionOn(const RigidBody& b, const BodyState& s, const Vec3& local);
    static Real bodyWeight(const BodyState& s, const Vec3& arm, const Vec3& n);
    static void push(BodyState& s, const Vec3& arm, const Vec3& n, Real dl);

    std::vector<BodyState> bodies_;
    std::vector<Link> links_;
    std::vector<EdgeLink> edgeLinks_;
    std::vector<std::array<Index, 2>> edges_;
    std::uint64_t edgeSignature_ = 0;
    struct ParticleDistance {
        Real distance;
        Vec3 normal;
    };
    std::vector<ParticleDistance> distances_; // per particle, valid where stamps_ == stamp_
    std::vector<std::uint32_t> stamps_;
    std::uint32_t stamp_ = 0;
    Real longestEdge_ = 0;
    std::size_t contactCount_ = 0;
    Real margin_ = 0;
    Real lastImpulse_ = 0;
};

} // namespace pbd
