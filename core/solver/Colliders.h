#pragma once
// Static collision geometry and the contacts particles make with it (PBD §3.4): each substep the
// ray from a particle's position x to its prediction p is tested against every collider; where it
// enters, the contact is the entry point q_c with the surface normal n_c; where x is already
// inside, the closest surface point q_s with its normal. Either way the constraint is
// C(p) = (p - q)·n - margin >= 0, generated once per substep and projected every iteration.
// After the velocity update, friction and restitution act on the contacts' velocities.

#include "core/base/LinearAlgebra.h"
#include "core/base/Result.h"

#include <string>
#include <string_view>
#include <vector>

namespace pbd {

enum class ColliderShape { Plane, Sphere, Box, Capsule, Mesh };
std::string_view toString(ColliderShape shape);

struct Collider {
    ColliderShape shape = ColliderShape::Plane;
    std::string name;
    // Plane: a point and the outward normal. Sphere: centre and radius. Box: centre, half
    // extents along the columns of `rotation`. Capsule: the segment a-b and the radius.
    Vec3 center = Vec3::Zero();
    Vec3 normal = Vec3::UnitY();
    Real radius = 0.5;
    Vec3 halfExtents = Vec3::Constant(0.5);
    Mat3 rotation = Mat3::Identity();
    Vec3 a = Vec3::Zero();
    Vec3 b = Vec3::UnitX();
    // Mesh: a closed, outward-wound triangle surface. A mesh an animated character moves
    // (core/anim) has its vertices' velocities too, and may be open.
    std::vector<Vec3> vertices;
    std::vector<Triangle> triangles;
    std::vector<Vec3> velocities; // empty: at rest

    Real friction = 0.3;    // Coulomb coefficient, dynamic
    Real restitution = 0.0; // share of the approach speed returned along the normal

    static Collider plane(const Vec3& point, const Vec3& normal);
    static Collider sphere(const Vec3& center, Real radius);
    static Collider box(const Vec3& center, const Vec3& halfExtents,
                        const Mat3& rotation = Mat3::Identity());
    static Collider capsule(const Vec3& a, const Vec3& b, Real radius);
    static Collider mesh(std::vector<Vec3> vertices, std::vector<Triangle> triangles);
};

// Authoring (the Scene and Properties docks, pbdlab-cli --collider).
// The point a collider is placed by: a plane's point, a sphere's or box's centre, the middle of
// a capsule's segment, the centroid of a mesh's vertices.
Vec3 colliderPosition(const Collider& c);
// Moves a collider rigidly so that its position is `p`.
void moveCollider(Collider& c, const Vec3& p);
// A box's rotation as angles about x, then y, then z (R = Rz Ry Rx), in radians, and back.
Vec3 eulerAnglesOf(const Mat3& rotation);
Mat3 rotationFromEulerAngles(const Vec3& angles);
// What is wrong with a collider, naming it and the value (a non-finite or non-positive radius
// or half extent, a zero normal, a rotation that is not one, a friction or restitution out of
// range, a mesh index out of range); empty when it is fine.
std::string checkCollider(const Collider& c);
// A collider of `shape` (not Mesh) fitted to the bounds of the bodies: a plane under their
// lowest point, a sphere, box or capsule under their centre, a third of their size.
Collider defaultCollider(ColliderShape shape, const Bounds& bodies);
// Edits a collider from "KEY=VALUE,KEY=VALUE": name, position (or center), normal, radius,
// half_extents, rotation (degrees about x, y, z), a, b (capsule ends), friction, restitution;
// vectors as three numbers separated by spaces ("position=0 1 0"). Checked with
// checkCollider; an unknown key is refused with the keys there are.
Result<Collider> editCollider(Collider c, std::string_view edits);
// "SHAPE[:EDITS]": a default collider of SHAPE for the bounds, then the edits.
Result<Collider> colliderFromSpec(std::string_view spec, const Bounds& bodies);

// Where a point is relative to a collider's surface: signed distance (negative inside), the
// closest surface point and the outward normal there.
struct SurfacePoint {
    Real distance = 0;
    Vec3 point = Vec3::Zero();
    Vec3 normal = Vec3::UnitY();
};
SurfacePoint closestSurfacePoint(const Collider& c, const Vec3& x);

// First entry of the segment x -> p into the collider, as a parameter t in [0, 1] with the
// surface normal there; false when the segment does not enter.
struct SegmentHit {
    Real t = 0;
    Vec3 normal = Vec3::UnitY();
};
bool firstEntry(const Collider& c, const Vec3& x, const Vec3& p, SegmentHit& hit);

// Ray o + t d against triangle (a, b, c) (Moller-Trumbore): t, or a negative value when it
// misses; the hit's barycentric coordinates when asked.
Real rayTriangle(const Vec3& o, const Vec3& d, const Vec3& a, const Vec3& b, const Vec3& c,
                 Vec3* barycentric = nullptr);

// A particle's contact for one substep.
struct Contact {
    Index particle = 0;
    Index collider = 0;
    Vec3 point = Vec3::Zero();           // q
    Vec3 normal = Vec3::UnitY();         // n
    Vec3 surfaceVelocity = Vec3::Zero(); // a moving collider's velocity at q
    Real approachSpeed = 0; // (v - surface velocity)·n before the substep (negative: approaching)
    Real normalCorrection = 0; // total |dp| along n this substep, for friction
};

// PBD §3.4 for one particle moving from x to p: the contact point q and normal n when the
// particle starts within `margin` of the surface (closest point), enters it on the way (entry
// point), or ends within the margin (closest point of p); false when it stays clear.
bool contactFor(const Collider& c, const Vec3& x, const Vec3& p, Real margin, Vec3& q, Vec3& n);

} // namespace pbd
