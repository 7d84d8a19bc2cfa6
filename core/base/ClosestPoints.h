#pragma once
// Closest points between simple primitives, shared by the rigid bodies' contacts and the
// particles' continuous collision.

#include "core/base/LinearAlgebra.h"

namespace pbd {

// Closest points of the segments p0-p1 and q0-q1: parameters s on the first and t on the
// second, in [0, 1] (Ericson, Real-Time Collision Detection §5.1.9, with its degenerate cases).
void closestSegmentParameters(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1,
                              Real& s, Real& t);

// The closest distance between the segments p0-p1 and q0-q1.
Real segmentDistance(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1);

} // namespace pbd
