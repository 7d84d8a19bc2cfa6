// The constraint sweeps of one instruction set: this file is compiled once per path
// (core/CMakeLists.txt), each time with its own PBDLAB_KERNEL_ISA, target flags and lane count,
// and everything it defines lives in namespace pbd::kernels::PBDLAB_KERNEL_ISA, so no function
// compiled for one instruction set can stand in for another's at link time.

#include "core/constraints/ConstraintKernels.h"
#include "core/solver/KernelPaths.h"

#ifndef PBDLAB_KERNEL_ISA
#error "compile with -DPBDLAB_KERNEL_ISA=<path name>"
#endif
#define PBDLAB_STRINGIFY2(x) #x
#define PBDLAB_STRINGIFY(x) PBDLAB_STRINGIFY2(x)

namespace pbd::kernels::PBDLAB_KERNEL_ISA {
namespace {

template <bool Xpbd>
void sweepColourPartOf(ConstraintSet& set, const ColourRegions& regions, SolverParticle* P,
                       int colour, int part, int parts, const Sweep& sweep) {
    int batch = 0;
    forEachBatch(set, [&](auto& b) {
        const int index = batch++;
        if (b.size() == 0) {
            return;
        }
        const auto [begin, end] =
            colourPart(regions.begin(index, 0, colour), regions.end(index, 0, colour), part, parts);
        if (begin < end) {
            solve<Xpbd>(b, P, begin, end, sweep);
        }
    });
}

void sweepColourPart(ConstraintSet& set, const ColourRegions& regions, SolverParticle* P,
                     int colour, int part, int parts, const Sweep& sweep, bool xpbd) {
    xpbd ? sweepColourPartOf<true>(set, regions, P, colour, part, parts, sweep)
         : sweepColourPartOf<false>(set, regions, P, colour, part, parts, sweep);
}

void solveRange(ConstraintSet& set, int batch, SolverParticle* P, Index begin, Index end,
                const Sweep& sweep) {
    int index = 0;
    forEachBatch(set, [&](auto& b) {
        if (index++ == batch && begin < end) {
            solve<true>(b, P, begin, end, sweep);
        }
    });
}

} // namespace

extern const KernelPath path{PBDLAB_STRINGIFY(PBDLAB_KERNEL_ISA), kLanes, &sweepColourPart,
                             &solveRange};

} // namespace pbd::kernels::PBDLAB_KERNEL_ISA
