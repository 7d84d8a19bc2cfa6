#include "meshing/TriangleGrid.h"

#include <algorithm>
#include <cmath>

namespace pbd {

// Ericson, Real-Time Collision Detection, 5.1.5: the Voronoi regions of the triangle.
Vec3 closestPointOnTriangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
    const Vec3 ab = b - a, ac = c - a, ap = p - a;
    const Real d1 = ab.dot(ap), d2 = ac.dot(ap);
    if (d1 <= 0 && d2 <= 0) {
        return a;
    }
    const Vec3 bp = p - b;
    const Real d3 = ab.dot(bp), d4 = ac.dot(bp);
    if (d3 >= 0 && d4 <= d3) {
        return b;
    }
    const Real vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0) {
        return a + d1 / (d1 - d3) * ab;
    }
    const Vec3 cp = p - c;
    const Real d5 = ab.dot(cp), d6 = ac.dot(cp);
    if (d6 >= 0 && d5 <= d6) {
        return c;
    }
    const Real vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0) {
        return a + d2 / (d2 - d6) * ac;
    }
    const Real va = d3 * d6 - d5 * d4;
    if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
        return b + (d4 - d3) / ((d4 - d3) + (d5 - d6)) * (c - b);
    }
    const Real denom = 1 / (va + vb + vc);
    return a + ab * (vb * denom) + ac * (vc * denom);
}

TriangleGrid::TriangleGrid(const std::vector<Vec3>& positions, std::vector<Triangle> triangles)
    : x_(positions)
    , triangles_(std::move(triangles)) {
    Real edges = 0;
    for (const Triangle& t : triangles_) {
        for (Index v : t) {
            bounds_.add(x_[v]);
        }
        edges += (x_[t[1]] - x_[t[0]]).norm() + (x_[t[2]] - x_[t[1]]).norm() +
                 (x_[t[0]] - x_[t[2]]).norm();
    }
    if (triangles_.empty()) {
        return;
    }
    const Vec3 size = bounds_.size();
    // About two mean edge lengths per cell, and never more than ~2M cells.
    cell_ = std::max(2 * edges / Real(3 * triangles_.size()), size.maxCoeff() / 128);
    if (!(cell_ > 0)) {
        cell_ = 1;
    }
    for (int k = 0; k < 3; ++k) {
        dims_[k] = std::max(1, int(std::ceil(size[k] / cell_)));
    }
    for (std::size_t t = 0; t < triangles_.size(); ++t) {
        Bounds b;
        for (Index v : triangles_[t]) {
            b.add(x_[v]);
        }
        const auto lo = cellOf(b.min);
        const auto hi = cellOf(b.max);
        for (int i = lo[0]; i <= hi[0]; ++i) {
            for (int j = lo[1]; j <= hi[1]; ++j) {
                for (int k = lo[2]; k <= hi[2]; ++k) {
                    cells_[key(i, j, k)].push_back(t);
                }
            }
        }
    }
}

std::int64_t TriangleGrid::key(int i, int j, int k) const {
    return (std::int64_t(i) * (dims_[1] + 1) + j) * (dims_[2] + 1) + k;
}

std::array<int, 3> TriangleGrid::cellOf(const Vec3& p) const {
    std::array<int, 3> c;
    for (int k = 0; k < 3; ++k) {
        c[k] = std::clamp(int(std::floor((p[k] - bounds_.min[k]) / cell_)), 0, dims_[k] - 1);
    }
    return c;
}

TriangleGrid::Hit TriangleGrid::nearest(const Vec3& p, Real maxDistance) const {
    Hit best;
    best.distance = maxDistance;
    if (triangles_.empty()) {
        return best;
    }
    // Distance from p to the grid's box: rings closer than that hold nothing.
    const Vec3 outside = (bounds_.min - p).cwiseMax(p - bounds_.max).cwiseMax(Vec3::Zero());
    const Real toBox = outside.norm();
    if (toBox > maxDistance) {
        return best;
    }
    const auto c = cellOf(p);
    const int maxRing = std::max({dims_[0], dims_[1], dims_[2]});
    for (int r = 0; r <= maxRing; ++r) {
        // Everything in ring r is at least (r - 1) cells and the box gap away from p.
        const Real bound = std::max(Real(std::max(0, r - 1)) * cell_, toBox);
        if (bound > best.distance) {
            break;
        }
        for (int i = c[0] - r; i <= c[0] + r; ++i) {
            for (int j = c[1] - r; j <= c[1] + r; ++j) {
                for (int k = c[2] - r; k <= c[2] + r; ++k) {
                    if (std::max({std::abs(i - c[0]), std::abs(j - c[1]), std::abs(k - c[2])}) !=
                        r) {
                        continue; // only the shell of the ring
                    }
                    if (i < 0 || j < 0 || k < 0 || i >= dims_[0] || j >= dims_[1] ||
                        k >= dims_[2]) {
                        continue;
                    }
                    const auto it = cells_.find(key(i, j, k));
                    if (it == cells_.end()) {
                        continue;
                    }
                    for (std::size_t t : it->second) {
                        const Triangle& tri = triangles_[t];
                        const Real d =
                            (p - closestPointOnTriangle(p, x_[tri[0]], x_[tri[1]], x_[tri[2]]))
                                .norm();
                        if (d < best.distance || (!best.found && d <= maxDistance)) {
                            best = {t, d, true};
                        }
                    }
                }
            }
        }
    }
    return best;
}

} // namespace pbd
