#pragma once
// Contact detection between rigid shapes: what the rigid solver needs, written for it
// (collision detection is not in source 004). Polyhedra (boxes, hulls) meet by the separating
// axis test with reference-face clipping, which gives the up to four stable points a resting
// box needs; spheres and capsules by closest points on their core point or segment. Every
// point carries a feature ID (e.g. "vertex 3 of box A against face 1 of box B") so that the
// solver can warm-start it from the previous step (§5, [Moravan04]).

#include "core/rigid/RigidBody.h"

#include <array>
#include <cstdint>
#include <limits>

namespace pbd {

struct RigidContactPoint {
    Vec3 position = Vec3::Zero(); // world, midway between the two surfaces
    Real separation = 0;          // along the normal; negative when the shapes overlap
    std::uint32_t feature = 0;    // the pair of features that made the point
};

// The contact of two shapes: the normal points from shape A to shape B.
struct RigidManifold {
    int bodyA = 0, bodyB = 0;
    int shapeA = 0, shapeB = 0;
    Vec3 normal = Vec3::UnitY();
    int count = 0;
    std::array<RigidContactPoint, 4> points;
};

// The contact points of two shapes closer than `margin` (speculative contacts); false when
// they are farther apart. Fills everything in the manifold but the body and shape indices.
bool collideShapes(const RigidShape& a, const ShapePose& poseA, const RigidShape& b,
                   const ShapePose& poseB, Real margin, RigidManifold& manifold);

// Signed distance from a world point to a shape (negative inside) with the outward normal at
// the closest surface point.
Real shapeSignedDistance(const RigidShape& shape, const ShapePose& pose, const Vec3& point,
                         Vec3& normal);

// The smallest signed distance from the segment [a, b] to a shape: the segment parameter t in
// [0, 1] where it is reached and the outward normal there. The distance is convex along the
// segment, so `iterations` steps of golden-section search find t within 0.618^iterations. The
// search stops early, returning a distance of at least `cutoff`, once the minimum is known to
// be no smaller than `cutoff`.
Real segmentSignedDistance(const RigidShape& shape, const ShapePose& pose, const Vec3& a,
                           const Vec3& b, Real& t, Vec3& normal, int iterations = 40,
                           Real cutoff = std::numeric_limits<Real>::infinity());

} // namespace pbd
