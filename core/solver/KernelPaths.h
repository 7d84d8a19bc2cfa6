#pragma once
// The constraint sweeps, compiled once per instruction set (core/CMakeLists.txt) and chosen when
// the program starts: a portable build carries SSE2 (2 lanes), AVX2 with FMA (4 lanes) and
// AVX-512 (8 lanes) and runs the widest this CPU has; a native build carries one, for the
// building machine. Every path computes the same operations on every element in the same
// order: AVX2 and AVX-512 give the same bits; SSE2, without FMA, rounds a * b + c twice and
// differs by rounding (tst_core_solver everyKernelPathGivesTheSameMotion).

#include "core/base/LinearAlgebra.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pbd {

struct ConstraintSet;
struct ColourRegions;
struct SolverParticle;

namespace kernels {

// What a sweep needs besides the batch: 1/h^2 for alpha~ = alpha / h^2, and whether this is the
// substep's first sweep, when lambda restarts from 0 (XPBD Alg. 1 line 4) -- done here rather
// than in a pass of its own so each part touches only its own elements' lambdas.
// With `start` (the particles' positions at the start of the substep), distance constraints
// project along the edge as it was then (SHAKE) instead of as it is now; see the distance solve.
struct Sweep {
    Real invH2;
    bool first;
    const Vec3* start = nullptr;
};

struct KernelPath {
    std::string_view name; // "sse2", "avx2", "avx512" or "native"
    int lanes;             // constraints per SIMD vector
    // Part `part` of `parts` of one colour of class 0 (colourPart's share of each batch's
    // range), batch after batch. The elements of a colour share no particle: any split of it
    // gives the same bits as the whole.
    void (*sweepColourPart)(ConstraintSet& set, const ColourRegions& regions, SolverParticle* P,
                            int colour, int part, int parts, const Sweep& sweep, bool xpbd);
    // The elements [begin, end) of one colour of batch `batch` (forEachBatch's order), XPBD.
    void (*solveRange)(ConstraintSet& set, int batch, SolverParticle* P, Index begin, Index end,
                       const Sweep& sweep);
};

// The widest path's lane count (AVX-512). Parts of a colour are cut at its multiples, and every
// path leaves over for the code on doubles what this many lanes would (kernels::forRange), so
// an element runs the same code whatever the path and the thread count.
inline constexpr std::size_t kWidestLanes = 8;

// Part `part` of `parts` of the elements [begin, end): equal shares cut at multiples of
// kWidestLanes, so a part has at most one partly filled group of lanes.
inline std::pair<Index, Index> colourPart(Index begin, Index end, int part, int parts) {
    const auto cut = [&](int k) {
        if (k >= parts) {
            return end;
        }
        const std::uint64_t share =
            std::uint64_t(end - begin) * std::uint64_t(k) / std::uint64_t(parts);
        return std::min(end, Index(begin + share / kWidestLanes * kWidestLanes));
    };
    return {cut(part), cut(part + 1)};
}

// The paths this build has that this CPU can run, fastest first.
std::vector<const KernelPath*> kernelPaths();
// Every path this build has, whether this CPU runs it or not (for messages).
std::vector<std::string_view> builtKernelPaths();
// The names of kernelPaths(), for messages: "avx512, avx2, sse2".
std::string kernelPathNames();
// The path the solver uses: the fastest this CPU runs, unless the environment variable
// PBDLAB_KERNELS or selectKernelPath named another (core/base/InstructionSets: the same choice
// holds for every loop compiled twice).
const KernelPath& kernelPath();
// Chooses the path by name ("" or "auto": the fastest). False, with nothing changed, when this
// build lacks it or this CPU cannot run it. Not for use while a solver steps.
bool selectKernelPath(std::string_view name);

} // namespace kernels
} // namespace pbd
