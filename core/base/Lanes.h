#pragma once
// SIMD lanes for the constraint kernels: `Lanes` holds kLanes doubles, one constraint per lane,
// so one kernel source serves both the scalar path (T = double) and the vector path
// (T = Lanes). Within a colour no two constraints share a particle, which is what makes the
// lanes independent. Uses GCC/Clang vector extensions; the width the compiler emits follows
// the instruction set each kernel path is compiled for (core/solver/KernelPaths.h).

#include "core/base/InstructionSets.h"

#include <cmath>
#include <cstring>
#include <numbers>

#if defined(__AVX__) || defined(__SSE2__)
#include <immintrin.h>
#endif

// The lane types are only ever used inside always-inlined functions, so the ABI GCC warns about
// for 32-byte vectors without AVX (-Wpsabi) never applies.
#pragma GCC diagnostic ignored "-Wpsabi"

// The kernels are many small templates; inlining them all (PBD_KERNEL_INLINE) keeps the lane
// vectors in registers (without it GCC passes them through memory between calls, about twice as
// slow).

namespace pbd::lanes {

// Eight lanes where AVX-512 is on (only the solver's step, see core/CMakeLists.txt): two chains
// of four in flight hide the latency of the dependency chain inside one constraint (sqrt,
// division, then the update the element's next constraint reads); measured 1.6x faster than
// four lanes on the tet kernel. Without AVX-512, eight lanes spill and four are faster; without
// AVX, GCC spills even four, and two (one SSE2 register) are used.
// kLanes has internal linkage: translation units may differ.
#ifndef PBDLAB_LANES
#if defined(__AVX512F__)
#define PBDLAB_LANES 8
#elif defined(__AVX__)
#define PBDLAB_LANES 4
#else
#define PBDLAB_LANES 2
#endif
#endif
constexpr int kLanes = PBDLAB_LANES;
static_assert(kLanes == 2 || kLanes == 4 || kLanes == 8);
using Lanes = double __attribute__((vector_size(kLanes * sizeof(double))));
using LaneMask = decltype(Lanes{} < Lanes{});
// Four doubles: one particle's (x, y, z, w), the unit of gathers and transposes.
using Quad = double __attribute__((vector_size(4 * sizeof(double))));

PBD_KERNEL_INLINE Lanes broadcast(double v) {
    return Lanes{} + v;
}

PBD_KERNEL_INLINE Lanes load(const double* p) {
    Lanes r;
    std::memcpy(&r, p, sizeof(r));
    return r;
}
PBD_KERNEL_INLINE void store(double* p, Lanes v) {
    std::memcpy(p, &v, sizeof(v));
}
PBD_KERNEL_INLINE Quad loadQuad(const double* p) {
    Quad r;
    std::memcpy(&r, p, sizeof(r));
    return r;
}
PBD_KERNEL_INLINE void storeQuad(double* p, Quad v) {
    std::memcpy(p, &v, sizeof(v));
}
// Quad q of a lane vector, and a lane vector from its quads.
#if PBDLAB_LANES >= 4
PBD_KERNEL_INLINE Quad quadOf(Lanes v, int q) {
#if PBDLAB_LANES == 4
    (void)q;
    return v;
#else
    return q == 0 ? __builtin_shufflevector(v, v, 0, 1, 2, 3)
                  : __builtin_shufflevector(v, v, 4, 5, 6, 7);
#endif
}
PBD_KERNEL_INLINE Lanes fromQuads(const Quad (&q)[kLanes / 4]) {
#if PBDLAB_LANES == 4
    return q[0];
#else
    return __builtin_shufflevector(q[0], q[1], 0, 1, 2, 3, 4, 5, 6, 7);
#endif
}
#endif

// Scalar and lane versions of the few functions the kernels need, so templates call one name.
PBD_KERNEL_INLINE double sqrtOf(double v) {
    return std::sqrt(v);
}
PBD_KERNEL_INLINE Lanes sqrtOf(Lanes v) {
#if defined(__AVX__) && PBDLAB_LANES >= 4
    Quad q[kLanes / 4];
    for (int i = 0; i < kLanes / 4; ++i) {
        __m256d x;
        const Quad in = quadOf(v, i);
        std::memcpy(&x, &in, sizeof(x));
        x = _mm256_sqrt_pd(x);
        std::memcpy(&q[i], &x, sizeof(x));
    }
    return fromQuads(q);
#elif defined(__SSE2__) && PBDLAB_LANES == 2
    __m128d x;
    std::memcpy(&x, &v, sizeof(x));
    x = _mm_sqrt_pd(x);
    std::memcpy(&v, &x, sizeof(x));
    return v;
#else
    for (int i = 0; i < kLanes; ++i) {
        v[i] = __builtin_sqrt(v[i]);
    }
    return v;
#endif
}

// Whether any lane's mask is set (for a branch around work every lane can skip).
PBD_KERNEL_INLINE bool anyOf(bool m) {
    return m;
}
PBD_KERNEL_INLINE bool anyOf(LaneMask m) {
    bool any = false;
    for (int i = 0; i < kLanes; ++i) {
        any = any || m[i] != 0;
    }
    return any;
}

PBD_KERNEL_INLINE double select(bool m, double a, double b) {
    return m ? a : b;
}
PBD_KERNEL_INLINE Lanes select(LaneMask m, Lanes a, Lanes b) {
    return m ? a : b;
}

PBD_KERNEL_INLINE double maxOf(double a, double b) {
    return a > b ? a : b;
}
PBD_KERNEL_INLINE Lanes maxOf(Lanes a, Lanes b) {
    return a > b ? a : b;
}
PBD_KERNEL_INLINE double minOf(double a, double b) {
    return a < b ? a : b;
}
PBD_KERNEL_INLINE Lanes minOf(Lanes a, Lanes b) {
    return a < b ? a : b;
}
PBD_KERNEL_INLINE double absOf(double a) {
    return std::fabs(a);
}
PBD_KERNEL_INLINE Lanes absOf(Lanes a) {
    return a < 0 ? -a : a;
}

// atan2 with the accuracy of the libm version (max error about 2e-16 rad, checked by
// tst_core_kernels against std::atan2), written without branches so it vectorises.
// Reduction: t = min(|y|,|x|) / max(|y|,|x|) in [0, 1]; t > tan(pi/8) is mapped through
// (t - 1)/(t + 1) and pi/4; on what is left, a rational minimax approximation in t^2
// (Cephes atan coefficients).
template <class T> PBD_KERNEL_INLINE T atan2Of(T y, T x) {
    const T ax = absOf(x);
    const T ay = absOf(y);
    const T big = maxOf(ax, ay);
    const T small = minOf(ax, ay);
    // u = t or, above tan(pi/8), (t - 1) / (t + 1) for t = small / big: one division either way.
    const auto reduce = small > 0.41421356237309504880 * big;
    const T u = select(reduce, small - big, small) /
                select(reduce, small + big, select(big > 0, big, T{} + 1.0));
    const T base = select(reduce, T{} + std::numbers::pi / 4, T{} + 0.0);
    const T z = u * u;
    const T p = (((-8.750608600031904122785e-1 * z - 1.615753718733365076637e1) * z -
                  7.500855792314704667340e1) *
                     z -
                 1.228866684490136173410e2) *
                    z -
                6.485021904942025371773e1;
    const T q = ((((z + 2.485846490142306297962e1) * z + 1.650270098316988542046e2) * z +
                  4.328810604912902668951e2) *
                     z +
                 4.853903996359136964868e2) *
                    z +
                1.945506571482613964425e2;
    T r = base + u + u * z * p / q;
    r = select(ay > ax, std::numbers::pi / 2 - r, r);
    r = select(x < 0, std::numbers::pi - r, r);
    return select(y < 0, -r, r);
}

} // namespace pbd::lanes
