#pragma once
// Rigid bodies (ALGORITHMS §5, source 004): their shapes, mass and inertia, and the state the
// rigid solver integrates — the centre of mass x, the orientation q, the velocity v and the
// angular momentum L (omega = I^-1 L with I = R I' R^T, so |L| is exact in free flight).

#include "core/base/LinearAlgebra.h"
#include "core/base/Result.h"

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace pbd {

using Quat = Eigen::Quaterniond;

// A convex polyhedron in its shape frame: faces wound counter-clockwise seen from outside, with
// outward unit normals and plane offsets (n·p = offset on the face), and its edges once each.
struct ConvexPolyhedron {
    std::vector<Vec3> vertices;
    std::vector<std::vector<int>> faces;
    std::vector<Vec3> normals;
    std::vector<Real> offsets;
    std::vector<std::array<int, 2>> edges;
    // Edge directions with parallel edges merged (a box has 3): the separating-axis test crosses
    // these only.
    std::vector<Vec3> edgeDirections;

    Real volume() const;
    Vec3 centroid() const;
    // Inertia tensor about the origin of the shape frame for unit density.
    Mat3 unitInertia() const;
};

ConvexPolyhedron boxPolyhedron(const Vec3& halfExtents);
// The convex hull of the points (at least 4, not all in a plane), coplanar triangles merged into
// polygon faces; or why there is none.
Result<ConvexPolyhedron> convexHull(const std::vector<Vec3>& points);

enum class RigidShapeType { Sphere, Capsule, Box, Hull };
std::string_view toString(RigidShapeType type);

// One convex piece of a rigid body, placed in the body frame. A body with several pieces (a
// T-handle) is their union.
struct RigidShape {
    RigidShapeType type = RigidShapeType::Box;
    Vec3 halfExtents = Vec3::Constant(0.5); // Box
    Real radius = 0.5;                      // Sphere, Capsule
    Real halfHeight = 0.5; // Capsule: the core segment runs from -halfHeight to +halfHeight on y
    std::shared_ptr<const ConvexPolyhedron> polyhedron; // Box and Hull
    Vec3 position = Vec3::Zero();                       // pose in the body frame
    Mat3 rotation = Mat3::Identity();

    static RigidShape sphere(Real radius);
    static RigidShape box(const Vec3& halfExtents);
    static RigidShape capsule(Real radius, Real halfHeight);
    static Result<RigidShape> hull(const std::vector<Vec3>& points);

    Real volume() const;
    // Inertia about the shape's own origin, in the shape frame, for unit density.
    Mat3 unitInertia() const;
    // The centroid in the shape frame (a hull's points need not be centred).
    Vec3 centroid() const;
    // The largest distance of the shape from its origin (for bounds).
    Real boundingRadius() const;
};

enum class RigidMotion {
    Dynamic,   // moved by forces and contacts
    Static,    // never moves
    Kinematic, // moves with its set velocity and angular velocity, unaffected by contacts
};
std::string_view toString(RigidMotion motion);

struct RigidBody {
    std::string name;
    RigidMotion motion = RigidMotion::Dynamic;
    std::vector<RigidShape> shapes; // in the body frame, whose origin is the centre of mass
    Real density = 1000;            // kg/m^3
    Real friction = 0.5; // Coulomb coefficient; a contact uses the geometric mean of the two

    // Mass properties (from the shapes and density by finishRigidBody).
    Real mass = 0;
    Real inverseMass = 0;
    Mat3 inertiaBody = Mat3::Identity(); // I'
    Mat3 inverseInertiaBody = Mat3::Zero();

    // State.
    Vec3 x = Vec3::Zero(); // centre of mass, world
    Quat q = Quat::Identity();
    Vec3 v = Vec3::Zero();
    Vec3 L = Vec3::Zero();     // angular momentum about the centre of mass, world
    Vec3 omega = Vec3::Zero(); // I^-1 L (the set angular velocity of a kinematic body)

    // Sleeping (per simulation island) and the time the body has been nearly at rest.
    bool sleeping = false;
    Real restTime = 0;

    bool isDynamic() const { return motion == RigidMotion::Dynamic; }
    Mat3 rotation() const { return q.toRotationMatrix(); }
    Mat3 inertiaWorld() const;        // R I' R^T
    Mat3 inverseInertiaWorld() const; // R I'^-1 R^T
    Vec3 toWorld(const Vec3& local) const { return x + q * local; }
    Vec3 velocityAt(const Vec3& world) const { return v + omega.cross(world - x); }
    // Sets omega and, for a dynamic body, L = I omega.
    void setAngularVelocity(const Vec3& w);
    Real kineticEnergy() const; // 1/2 m v^2 + 1/2 omega·L
};

// Computes mass, centre of mass and inertia from the shapes and density, and moves the body
// frame's origin to the centre of mass (x moves with it, so nothing moves in the world).
// Static and kinematic bodies get zero inverse mass and inverse inertia.
void finishRigidBody(RigidBody& body);

// A shape's pose in the world.
struct ShapePose {
    Vec3 position;
    Mat3 rotation;
};
ShapePose shapePose(const RigidBody& body, const RigidShape& shape);

// Axis-aligned bounds of a shape in the world.
Bounds shapeBounds(const RigidBody& body, const RigidShape& shape);

enum class RigidJointType {
    Ball,  // the anchors coincide (3 rows)
    Hinge, // the anchors coincide and the axes stay aligned (3 + 2 rows), with a limit and motor
    Fixed, // the anchors coincide and the relative orientation is kept (3 + 3 rows)
};
std::string_view toString(RigidJointType type);

// A joint between two rigid bodies, or a body and the world (bodyA = -1). Anchors and axes are
// in each body's frame (the world's for -1).
struct RigidJoint {
    RigidJointType type = RigidJointType::Ball;
    std::string name;
    int bodyA = -1;
    int bodyB = 0;
    Vec3 anchorA = Vec3::Zero();
    Vec3 anchorB = Vec3::Zero();
    Vec3 axisA = Vec3::UnitZ(); // Hinge
    Vec3 axisB = Vec3::UnitZ();
    Vec3 referenceA = Vec3::UnitX(); // Hinge: perpendicular to the axis; angle 0 where they meet
    Vec3 referenceB = Vec3::UnitX();
    Quat restRotation = Quat::Identity(); // Fixed: qA^-1 qB when made
    bool limit = false;                   // Hinge angle limits, rad
    Real lowerAngle = 0;
    Real upperAngle = 0;
    bool motor = false; // Hinge motor: drives the angular speed up to the torque
    Real motorSpeed = 0;
    Real maxMotorTorque = 0;
    bool collideConnected = false;
};

// A particle held at a point of a rigid body (body frame), hard or with XPBD compliance
// (core/rigid/RigidCoupling.h).
struct RigidAttachment {
    Index particle = 0;
    int body = 0;
    Vec3 local = Vec3::Zero();
    Real compliance = 0; // m/N; 0 = hard
};

// Joints made at a world anchor (and axis), from the bodies' current poses.
RigidJoint ballJoint(const std::vector<RigidBody>& bodies, int a, int b, const Vec3& anchor);
RigidJoint hingeJoint(const std::vector<RigidBody>& bodies, int a, int b, const Vec3& anchor,
                      const Vec3& axis);
RigidJoint fixedJoint(const std::vector<RigidBody>& bodies, int a, int b, const Vec3& anchor);

// The hinge angle of B relative to A about the axis, rad in (-pi, pi].
Real hingeAngle(const std::vector<RigidBody>& bodies, const RigidJoint& joint);
// World anchor points of a joint's two sides (equal when the joint holds).
std::array<Vec3, 2> jointAnchors(const std::vector<RigidBody>& bodies, const RigidJoint& joint);

// Totals over dynamic bodies: linear momentum, angular momentum about the origin, kinetic
// energy, and potential energy in gravity g (zero at y = 0 for g along -y).
struct RigidTotals {
    Vec3 linearMomentum = Vec3::Zero();
    Vec3 angularMomentum = Vec3::Zero();
    Real kineticEnergy = 0;
    Real potentialEnergy = 0;
};
RigidTotals rigidTotals(const std::vector<RigidBody>& bodies, const Vec3& gravity);

} // namespace pbd
