#pragma once
// Vector types used across PBD Lab. Units are SI (metres, seconds, kilograms); y is up;
// coordinates are right-handed; closed surfaces are wound counter-clockwise seen from outside.

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <array>
#include <cstdint>
#include <limits>

namespace pbd {

using Real = double;
using Vec2 = Eigen::Vector2d;
using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
using Index = std::uint32_t;

using Triangle = std::array<Index, 3>;
using Tetrahedron = std::array<Index, 4>;

// Axis-aligned bounding box; empty until a point is added.
struct Bounds {
    Vec3 min = Vec3::Constant(std::numeric_limits<Real>::infinity());
    Vec3 max = Vec3::Constant(-std::numeric_limits<Real>::infinity());

    bool empty() const { return !(min.x() <= max.x()); }
    void add(const Vec3& p) {
        min = min.cwiseMin(p);
        max = max.cwiseMax(p);
    }
    void add(const Bounds& b) {
        if (!b.empty()) {
            add(b.min);
            add(b.max);
        }
    }
    Vec3 center() const { return 0.5 * (min + max); }
    Vec3 size() const { return empty() ? Vec3::Zero() : Vec3(max - min); }
};

} // namespace pbd
