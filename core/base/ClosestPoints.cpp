#include "core/base/ClosestPoints.h"

#include <algorithm>

namespace pbd {

void closestSegmentParameters(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1,
                              Real& s, Real& t) {
    const Vec3 d1 = p1 - p0, d2 = q1 - q0, r = p0 - q0;
    const Real a = d1.squaredNorm(), e = d2.squaredNorm(), f = d2.dot(r);
    constexpr Real eps = 1e-14;
    if (a <= eps && e <= eps) {
        s = t = 0;
        return;
    }
    if (a <= eps) {
        s = 0;
        t = std::clamp(f / e, Real(0), Real(1));
        return;
    }
    const Real c = d1.dot(r);
    if (e <= eps) {
        t = 0;
        s = std::clamp(-c / a, Real(0), Real(1));
        return;
    }
    const Real b = d1.dot(d2), denom = a * e - b * b;
    s = denom > eps * a * e ? std::clamp((b * f - c * e) / denom, Real(0), Real(1)) : 0;
    t = (b * s + f) / e;
    if (t < 0) {
        t = 0;
        s = std::clamp(-c / a, Real(0), Real(1));
    } else if (t > 1) {
        t = 1;
        s = std::clamp((b - c) / a, Real(0), Real(1));
    }
}

Real segmentDistance(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1) {
    Real s = 0, t = 0;
    closestSegmentParameters(p0, p1, q0, q1, s, t);
    return ((p0 + s * (p1 - p0)) - (q0 + t * (q1 - q0))).norm();
}

} // namespace pbd
