#pragma once
// SIMD lanes for the constraint kernels: `Lanes` holds kLanes doubles, one constraint per lane,
// so one kernel source serves both the scalar path (T = double) and the vector path
// (T = Lanes). Within a colour no two constraints share a particle, which is what makes the
// lanes independent. Uses GCC/Clang vector extensions; the width the compiler emits follows
// the target (AVX2/AVX-512 with PBDLAB_NATIVE_ARCH, SSE2 pairs otherwise).

#include <cmath>
#include <cstring>
#include <numbers>

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace pbd::lanes {

inline constexpr int kLanes = 4;
using Lanes = double __attribute__((vector_size(kLanes * sizeof(double))));
using LaneMask = decltype(Lanes{} < Lanes{});

inline Lanes broadcast(double v) {
    return Lanes{} + v;
}

inline Lanes load(const double* p) {
    Lanes r;
    std::memcpy(&r, p, sizeof(r));
    return r;
}
inline void store(double* p, Lanes v) {
    std::memcpy(p, &v, sizeof(v));
}

// Scalar and lane versions of the few functions the kernels need, so templates call one name.
inline double sqrtOf(double v) {
    return std::sqrt(v);
}
inline Lanes sqrtOf(Lanes v) {
#if defined(__AVX__)
    static_assert(kLanes == 4);
    __m256d x;
    std::memcpy(&x, &v, sizeof(x));
    x = _mm256_sqrt_pd(x);
    std::memcpy(&v, &x, sizeof(x));
    return v;
#else
    for (int i = 0; i < kLanes; ++i) {
        v[i] = __builtin_sqrt(v[i]);
    }
    return v;
#endif
}

inline double select(bool m, double a, double b) {
    return m ? a : b;
}
inline Lanes select(LaneMask m, Lanes a, Lanes b) {
    return m ? a : b;
}

inline double maxOf(double a, double b) {
    return a > b ? a : b;
}
inline Lanes maxOf(Lanes a, Lanes b) {
    return a > b ? a : b;
}
inline double minOf(double a, double b) {
    return a < b ? a : b;
}
inline Lanes minOf(Lanes a, Lanes b) {
    return a < b ? a : b;
}
inline double absOf(double a) {
    return std::fabs(a);
}
inline Lanes absOf(Lanes a) {
    return a < 0 ? -a : a;
}

// atan2 with the accuracy of the libm version (max error about 2e-16 rad, checked by
// tst_core_kernels against std::atan2), written without branches so it vectorises.
// Reduction: t = min(|y|,|x|) / max(|y|,|x|) in [0, 1]; t > tan(pi/8) is mapped through
// (t - 1)/(t + 1) and pi/4; on what is left, a rational minimax approximation in t^2
// (Cephes atan coefficients).
template <class T> T atan2Of(T y, T x) {
    const T ax = absOf(x);
    const T ay = absOf(y);
    const T big = maxOf(ax, ay);
    const T small = minOf(ax, ay);
    const T t = small / select(big > 0, big, T{} + 1.0);
    const auto reduce = t > 0.41421356237309504880;
    const T u = select(reduce, (t - 1.0) / (t + 1.0), t);
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
