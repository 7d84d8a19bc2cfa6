#pragma once
// Morton (Z-order) codes: points put in the order of a space-filling curve, so that what lies
// close in space lies close in memory (the air's tets, the continuous collision's triangles).

#include "core/base/LinearAlgebra.h"

#include <cstdint>
#include <vector>

namespace pbd {

// Spreads the low 21 bits of v to every third bit (a 63-bit Morton code's share of one axis).
std::uint64_t spreadBits(std::uint64_t v);

// The indices of `points` in the Morton order of where they lie in the box [low, high] (21 bits
// an axis; ties by index). A point that is not finite sorts first.
std::vector<std::size_t> mortonOrder(const std::vector<Vec3>& points, const Vec3& low,
                                     const Vec3& high);

} // namespace pbd
