#include "core/base/Morton.h"

#include <algorithm>
#include <utility>

namespace pbd {

std::uint64_t spreadBits(std::uint64_t v) {
    v &= 0x1fffff;
    v = (v | v << 32) & 0x1f00000000ffffULL;
    v = (v | v << 16) & 0x1f0000ff0000ffULL;
    v = (v | v << 8) & 0x100f00f00f00f00fULL;
    v = (v | v << 4) & 0x10c30c30c30c30c3ULL;
    v = (v | v << 2) & 0x1249249249249249ULL;
    return v;
}

std::vector<std::size_t> mortonOrder(const std::vector<Vec3>& points, const Vec3& low,
                                     const Vec3& high) {
    constexpr Real kMost = (1 << 21) - 1;
    const Vec3 scale = kMost / (high - low).cwiseMax(Vec3::Constant(1e-300)).array();
    std::vector<std::pair<std::uint64_t, std::size_t>> keys(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) {
        std::uint64_t code = 0;
        if (points[i].allFinite()) {
            const Vec3 q = (points[i] - low).cwiseProduct(scale).cwiseMax(0.0).cwiseMin(kMost);
            code = spreadBits(std::uint64_t(q.x())) | spreadBits(std::uint64_t(q.y())) << 1 |
                   spreadBits(std::uint64_t(q.z())) << 2;
        }
        keys[i] = {code, i};
    }
    std::sort(keys.begin(), keys.end());
    std::vector<std::size_t> order(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) {
        order[i] = keys[i].second;
    }
    return order;
}

} // namespace pbd
