#pragma once
// Nearest-triangle queries over a triangle surface through a uniform grid: used for material
// frames from the nearest surface and for air kept near selected surfaces.

#include "core/base/LinearAlgebra.h"

#include <unordered_map>
#include <vector>

namespace pbd {

Vec3 closestPointOnTriangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c);

class TriangleGrid {
public:
    TriangleGrid(const std::vector<Vec3>& positions, std::vector<Triangle> triangles);

    struct Hit {
        std::size_t triangle = 0; // index into the triangles given
        Real distance = 0;
        bool found = false;
    };
    // The nearest triangle to p; with maxDistance, only triangles closer than that.
    Hit nearest(const Vec3& p, Real maxDistance = std::numeric_limits<Real>::infinity()) const;

private:
    std::int64_t key(int i, int j, int k) const;
    std::array<int, 3> cellOf(const Vec3& p) const;

    const std::vector<Vec3>& x_;
    std::vector<Triangle> triangles_;
    Bounds bounds_;
    Real cell_ = 1;
    std::array<int, 3> dims_{1, 1, 1};
    std::unordered_map<std::int64_t, std::vector<std::size_t>> cells_;
};

} // namespace pbd
