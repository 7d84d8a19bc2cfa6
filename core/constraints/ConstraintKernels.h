#pragma once
// The solver's inner loops: for each constraint batch, project the elements [begin, end) of one
// colour, kLanes at a time in SIMD (gathering each particle's x, y, z, w with one load and a 4x4
// transpose), the remainder one by one with the same code on doubles. Included by
// core/solver/KernelSweeps.cpp only, once per instruction set: everything here is in that
// set's namespace (PBDLAB_KERNEL_ISA).

#include "core/constraints/ConstraintMath.h"
#include "core/constraints/Constraints.h"
#include "core/solver/KernelPaths.h"
#include "core/solver/Solver.h"

namespace pbd::kernels::PBDLAB_KERNEL_ISA {

using lanes::kLanes;
using lanes::Lanes;
using math::V3;

// The elements a kernel call works on: e, e + 1, ..., e + active - 1 (active < kLanes only for
// the tail of a range, whose unused lanes repeat the last element and are never stored).
struct At {
    std::size_t e;
    int active;
};

template <class T> PBD_KERNEL_INLINE T loadAt(const std::vector<Real>& v, At at) {
    if constexpr (std::is_same_v<T, Lanes>) {
        if (at.active == kLanes) {
            return lanes::load(v.data() + at.e);
        }
        Lanes r{};
        for (int l = 0; l < kLanes; ++l) {
            r[l] = v[at.e + static_cast<std::size_t>(std::min(l, at.active - 1))];
        }
        return r;
    } else {
        return v[at.e];
    }
}
template <class T> PBD_KERNEL_INLINE void storeAt(std::vector<Real>& v, At at, T value) {
    if constexpr (std::is_same_v<T, Lanes>) {
        if (at.active == kLanes) {
            lanes::store(v.data() + at.e, value);
            return;
        }
        for (int l = 0; l < at.active; ++l) {
            v[at.e + static_cast<std::size_t>(l)] = value[l];
        }
    } else {
        v[at.e] = value;
    }
}

// Rows (x, y, z, w) of four particles <-> columns x, y, z, w of four lanes; the transpose is its
// own inverse.
#if PBDLAB_LANES >= 4
PBD_KERNEL_INLINE void transpose(lanes::Quad& a, lanes::Quad& b, lanes::Quad& c, lanes::Quad& d) {
    using Q = lanes::Quad;
    const Q t0 = __builtin_shufflevector(a, b, 0, 4, 2, 6);
    const Q t1 = __builtin_shufflevector(a, b, 1, 5, 3, 7);
    const Q t2 = __builtin_shufflevector(c, d, 0, 4, 2, 6);
    const Q t3 = __builtin_shufflevector(c, d, 1, 5, 3, 7);
    a = __builtin_shufflevector(t0, t2, 0, 1, 4, 5);
    b = __builtin_shufflevector(t1, t3, 0, 1, 4, 5);
    c = __builtin_shufflevector(t0, t2, 2, 3, 6, 7);
    d = __builtin_shufflevector(t1, t3, 2, 3, 6, 7);
}
#endif

#if PBDLAB_LANES == 2
// Two lanes (SSE2): each particle row is two pairs, (x, y) and (z, w).
template <int N>
PBD_KERNEL_INLINE void gather(const SolverParticle* P, const std::array<Index, N>* idx,
                              V3<Lanes> (&p)[N], Lanes (&w)[N]) {
    for (int k = 0; k < N; ++k) {
        const Lanes a0 = lanes::load(&P[idx[0][k]].x), a1 = lanes::load(&P[idx[0][k]].z);
        const Lanes b0 = lanes::load(&P[idx[1][k]].x), b1 = lanes::load(&P[idx[1][k]].z);
        p[k] = {__builtin_shufflevector(a0, b0, 0, 2), __builtin_shufflevector(a0, b0, 1, 3),
                __builtin_shufflevector(a1, b1, 0, 2)};
        w[k] = __builtin_shufflevector(a1, b1, 1, 3);
    }
}
template <int N>
PBD_KERNEL_INLINE void scatter(SolverParticle* P, const std::array<Index, N>* idx,
                               const V3<Lanes> (&p)[N], const Lanes (&w)[N], int active = kLanes) {
    for (int k = 0; k < N; ++k) {
        for (int l = 0; l < active; ++l) {
            SolverParticle& q = P[idx[l][k]];
            q.x = p[k].x[l];
            q.y = p[k].y[l];
            q.z = p[k].z[l];
        }
    }
    (void)w;
}
#else
template <int N>
PBD_KERNEL_INLINE void gather(const SolverParticle* P, const std::array<Index, N>* idx,
                              V3<Lanes> (&p)[N], Lanes (&w)[N]) {
    constexpr int Q = kLanes / 4;
    for (int k = 0; k < N; ++k) {
        lanes::Quad x[Q], y[Q], z[Q], m[Q];
        for (int q = 0; q < Q; ++q) {
            x[q] = lanes::loadQuad(&P[idx[4 * q + 0][k]].x);
            y[q] = lanes::loadQuad(&P[idx[4 * q + 1][k]].x);
            z[q] = lanes::loadQuad(&P[idx[4 * q + 2][k]].x);
            m[q] = lanes::loadQuad(&P[idx[4 * q + 3][k]].x);
            transpose(x[q], y[q], z[q], m[q]);
        }
        p[k] = {lanes::fromQuads(x), lanes::fromQuads(y), lanes::fromQuads(z)};
        w[k] = lanes::fromQuads(m);
    }
}
template <int N>
PBD_KERNEL_INLINE void scatter(SolverParticle* P, const std::array<Index, N>* idx,
                               const V3<Lanes> (&p)[N], const Lanes (&w)[N], int active = kLanes) {
    if (active < kLanes) {
        // The tail: store lane by lane, only the lanes that hold real elements.
        for (int k = 0; k < N; ++k) {
            for (int l = 0; l < active; ++l) {
                SolverParticle& q = P[idx[l][k]];
                q.x = p[k].x[l];
                q.y = p[k].y[l];
                q.z = p[k].z[l];
            }
        }
        return;
    }
    for (int k = 0; k < N; ++k) {
        for (int q = 0; q < kLanes / 4; ++q) {
            lanes::Quad a = lanes::quadOf(p[k].x, q);
            lanes::Quad b = lanes::quadOf(p[k].y, q);
            lanes::Quad c = lanes::quadOf(p[k].z, q);
            lanes::Quad d = lanes::quadOf(w[k], q);
            transpose(a, b, c, d);
            lanes::storeQuad(&P[idx[4 * q + 0][k]].x, a);
            lanes::storeQuad(&P[idx[4 * q + 1][k]].x, b);
            lanes::storeQuad(&P[idx[4 * q + 2][k]].x, c);
            lanes::storeQuad(&P[idx[4 * q + 3][k]].x, d);
        }
    }
}
#endif
template <int N>
PBD_KERNEL_INLINE void gather(const SolverParticle* P, const std::array<Index, N>* idx,
                              V3<Real> (&p)[N], Real (&w)[N]) {
    for (int k = 0; k < N; ++k) {
        const SolverParticle& q = P[(*idx)[k]];
        p[k] = {q.x, q.y, q.z};
        w[k] = q.w;
    }
}
template <int N>
PBD_KERNEL_INLINE void scatter(SolverParticle* P, const std::array<Index, N>* idx,
                               const V3<Real> (&p)[N], const Real (&)[N]) {
    for (int k = 0; k < N; ++k) {
        SolverParticle& q = P[(*idx)[k]];
        q.x = p[k].x;
        q.y = p[k].y;
        q.z = p[k].z;
    }
}

// Batches of more elements than this prefetch (see forRange).
inline constexpr std::size_t kPrefetchElements = 32768;

// Runs `element(at, p, w)` over [begin, end): full lane groups, then the tail in lanes with the
// unused lanes masked, and one or two elements on doubles (see the first lines).
template <class Batch, class Element>
void forRange(Batch& b, SolverParticle* P, std::size_t begin, std::size_t end, Element&& element) {
    constexpr int N = Batch::kParticles;
    // The code on doubles takes the last one or two elements of a range whose length leaves one
    // or two over a multiple of eight, and only those, on every path: each element then runs the
    // same code whatever the path's lane count (the compiler fuses multiplies and adds in the
    // code on doubles differently from the lanes'). With each path's own remainder instead, AVX2
    // (four lanes) solved on doubles what AVX-512 solved in lanes: cloth-on-rigid's runs parted
    // by 2e-16 m at step 60 and by 2 cm at step 300. Ranges begin at a multiple of eight from
    // their colour's start (colourPart), so the threads do not change this either.
    const std::size_t leftOver = (end - begin) % kWidestLanes;
    const std::size_t lanesEnd = leftOver <= 2 ? end - leftOver : end;
    std::size_t e = begin;
    // Large batches: what the elements 16 on need is fetched while these are solved. A strain
    // tet reads 27 arrays of its own (inverse rest shape, rest values, compliances, lambdas)
    // and four particles at random: more streams than the hardware prefetcher follows, so
    // tet-xl (a million tets) waited on memory, 78 ns a tet against tetbar's 41. With this:
    // 43 ns; tet-xl's step 220 -> 131 ms on two threads, cloth-xl 72 -> 68 ms.
    constexpr std::size_t kAhead = 16; // two groups of eight lanes, four of four
    const bool prefetch = b.size() > kPrefetchElements;
    // Distances and bending in smaller batches (whose data the caches hold): two lane groups
    // at a time. An element's work is one long chain (a square root, divisions, then the
    // update), and the second group's chain runs beside the first's: cloth's dihedral 7.0 ->
    // 6.1 ns, its distance 3.6 -> 3.0. The elements of a colour are independent, so each gets
    // the same operations as one group at a time; but the compiler fuses multiplies and adds
    // where it sees fit, and for strain tets it fused differently in the AVX-512 copy than in
    // the AVX2 one (tetbar under PBD moved apart by 3e-15 m; the kernel paths must agree:
    // tst_core_solver everyKernelPathGivesTheSameMotion). Not with the prefetch either: tet-xl's
    // strain tet took 75 ns instead of 43, and cloth-xl's dihedral gained nothing.
    constexpr bool kPairs =
        std::is_same_v<Batch, DistanceConstraints> || std::is_same_v<Batch, BendingConstraints>;
    if (kPairs && !prefetch) {
        for (; e + 2 * kLanes <= lanesEnd; e += 2 * kLanes) {
            V3<Lanes> p0[N], p1[N];
            Lanes w0[N], w1[N];
            gather<N>(P, b.particles.data() + e, p0, w0);
            gather<N>(P, b.particles.data() + e + kLanes, p1, w1);
            element(At{e, kLanes}, p0, w0);
            element(At{e + kLanes, kLanes}, p1, w1);
            scatter<N>(P, b.particles.data() + e, p0, w0);
            scatter<N>(P, b.particles.data() + e + kLanes, p1, w1);
        }
    }
    for (; e + kLanes <= lanesEnd; e += kLanes) {
        if (prefetch && e + kAhead + kLanes <= end) {
            const std::size_t a = e + kAhead;
            for (int l = 0; l < kLanes; ++l) {
                for (int k = 0; k < N; ++k) {
                    __builtin_prefetch(&P[b.particles[a + std::size_t(l)][k]], 1);
                }
            }
            for (const auto& v : b.lambda) {
                __builtin_prefetch(v.data() + a, 1);
            }
            for (const auto& v : b.compliance) {
                __builtin_prefetch(v.data() + a, 0);
            }
            if constexpr (requires { b.restLength; }) {
                __builtin_prefetch(b.restLength.data() + a, 0);
            }
            if constexpr (requires { b.restAngle; }) {
                __builtin_prefetch(b.restAngle.data() + a, 0);
                if (b.model == BendingModel::Isometric) {
                    for (const auto& v : b.weight) {
                        __builtin_prefetch(v.data() + a, 0);
                    }
                    for (const auto& v : b.lambdaYZ) {
                        __builtin_prefetch(v.data() + a, 1);
                    }
                }
            }
            if constexpr (requires { b.restValue; }) {
                __builtin_prefetch(b.restValue.data() + a, 0);
            }
            if constexpr (requires { b.qInverse; }) {
                for (const auto& v : b.qInverse) {
                    __builtin_prefetch(v.data() + a, 0);
                }
                for (const auto& v : b.rest) {
                    __builtin_prefetch(v.data() + a, 0);
                }
            }
        }
        V3<Lanes> p[N];
        Lanes w[N];
        gather<N>(P, b.particles.data() + e, p, w);
        element(At{e, kLanes}, p, w);
        scatter<N>(P, b.particles.data() + e, p, w);
    }
    const int tail = static_cast<int>(lanesEnd - e);
    if (tail > 0) {
        std::array<Index, N> idx[kLanes];
        for (int l = 0; l < kLanes; ++l) {
            idx[l] = b.particles[e + static_cast<std::size_t>(std::min(l, tail - 1))];
        }
        V3<Lanes> p[N];
        Lanes w[N];
        gather<N>(P, idx, p, w);
        element(At{e, tail}, p, w);
        scatter<N>(P, idx, p, w, tail);
        e = lanesEnd;
    }
    for (; e < end; ++e) {
        V3<Real> p[N];
        Real w[N];
        gather<N>(P, b.particles.data() + e, p, w);
        element(At{e, 1}, p, w);
        scatter<N>(P, b.particles.data() + e, p, w);
    }
}

// XPBD (or PBD) update of component `comp` of element(s) e, given C and its gradients.
template <bool Xpbd, class T, int N, class Batch>
PBD_KERNEL_INLINE void apply(Batch& b, int comp, At e, T c, const V3<T> (&g)[N], V3<T> (&p)[N],
                             const T (&w)[N], Sweep sweep) {
    const T lambda = sweep.first ? math::splat<T>(0.0) : loadAt<T>(b.lambda[comp], e);
    T alphaTilde;
    T scale;
    if constexpr (Xpbd) {
        alphaTilde = loadAt<T>(b.compliance[comp], e) * sweep.invH2;
        scale = math::splat<T>(1.0);
    } else {
        alphaTilde = math::splat<T>(0.0);
        scale = loadAt<T>(b.pbdScale[comp], e);
    }
    const T dl = math::project<T, N>(c, g, p, w, alphaTilde, lambda, scale);
    storeAt<T>(b.lambda[comp], e, lambda + dl);
}

// The same for a strain stretch component, with its closed-form projection.
template <bool Xpbd, class T, int D, class Batch>
PBD_KERNEL_INLINE void applyStretch(Batch& b, int comp, At e, V3<T> (&p)[D + 1],
                                    const T (&w)[D + 1], const T (&cols)[D][D], Sweep sweep) {
    const T lambda = sweep.first ? math::splat<T>(0.0) : loadAt<T>(b.lambda[comp], e);
    T alphaTilde;
    T scale;
    if constexpr (Xpbd) {
        alphaTilde = loadAt<T>(b.compliance[comp], e) * sweep.invH2;
        scale = math::splat<T>(1.0);
    } else {
        alphaTilde = math::splat<T>(0.0);
        scale = loadAt<T>(b.pbdScale[comp], e);
    }
    const T dl = math::projectStrainStretch<T, D>(p, w, cols, comp, loadAt<T>(b.rest[comp], e),
                                                  alphaTilde, lambda, scale);
    storeAt<T>(b.lambda[comp], e, lambda + dl);
}

// The edge p0 - p1 of element(s) e at the start of the substep.
template <class T>
PBD_KERNEL_INLINE V3<T> startEdge(const DistanceConstraints& b, const Vec3* x, At e) {
    if constexpr (std::is_same_v<T, Lanes>) {
        V3<T> d;
        for (int l = 0; l < kLanes; ++l) {
            const auto& idx =
                b.particles[e.e + static_cast<std::size_t>(std::min(l, e.active - 1))];
            const Vec3 v = x[idx[0]] - x[idx[1]];
            d.x[l] = v.x();
            d.y[l] = v.y();
            d.z[l] = v.z();
        }
        return d;
    } else {
        const auto& idx = b.particles[e.e];
        const Vec3 v = x[idx[0]] - x[idx[1]];
        return {v.x(), v.y(), v.z()};
    }
}

template <bool Xpbd>
void solve(DistanceConstraints& b, SolverParticle* P, std::size_t begin, std::size_t end,
           Sweep sweep) {
    if (!sweep.start) {
        forRange(b, P, begin, end, [&]<class T>(At e, V3<T>(&p)[2], T(&w)[2]) {
            V3<T> g[2];
            const T c = math::evaluateDistance<T>(p, loadAt<T>(b.restLength, e), g);
            apply<Xpbd>(b, 0, e, c, g, p, w, sweep);
        });
        return;
    }
    // SHAKE (Ryckaert, Ciccotti & Berendsen 1977): the correction is along the edge x0 - x1 at
    // the start of the substep, its size the Newton step of C = |p0 - p1| - d along it (the
    // denominator has n.n0 for |g|^2). Each correction then has no torque about the start
    // positions, from which v = (p' - x)/h measures: the particles' angular momentum changes by
    // exactly none. Where the edge turned by more than 60 degrees within the substep the current
    // direction is used (PBD's), which always converges.
    forRange(b, P, begin, end, [&]<class T>(At e, V3<T>(&p)[2], T(&w)[2]) {
        V3<T> g[2];
        const T c = math::evaluateDistance<T>(p, loadAt<T>(b.restLength, e), g);
        const V3<T> d0 = startEdge<T>(b, sweep.start, e);
        const V3<T> n0 = d0 * math::safeInverse(lanes::sqrtOf(math::norm2(d0)));
        const T along = math::dot(g[0], n0);
        const auto keep = along > 0.5;
        const V3<T> n = {lanes::select(keep, n0.x, g[0].x), lanes::select(keep, n0.y, g[0].y),
                         lanes::select(keep, n0.z, g[0].z)};
        const T cosine = lanes::select(keep, along, math::splat<T>(1.0));
        const T lambda = sweep.first ? math::splat<T>(0.0) : loadAt<T>(b.lambda[0], e);
        T alphaTilde = math::splat<T>(0.0);
        T scale = math::splat<T>(1.0);
        if constexpr (Xpbd) {
            alphaTilde = loadAt<T>(b.compliance[0], e) * sweep.invH2;
        } else {
            scale = loadAt<T>(b.pbdScale[0], e);
        }
        const T dl = scale * (-c - alphaTilde * lambda) *
                     math::safeInverse((w[0] + w[1]) * cosine + alphaTilde);
        p[0] += n * (w[0] * dl);
        p[1] -= n * (w[1] * dl);
        storeAt<T>(b.lambda[0], e, lambda + dl);
    });
}

// Isometric bending (ConstraintMath.h), projected as the vector constraint C = v - r v/|v| with
// a lambda per axis: grad_k C = K_k I, so sum_k w_k |grad_k|^2 = sum_k w_k K_k^2 for each axis,
// and dlambda = scale (-C - a~ lambda) / (sum_k w_k K_k^2 + a~), p_k += w_k K_k dlambda (XPBD
// eq. 17-18 per axis). Flat at rest (r = 0, every lane): C = v, no square root or division by
// the positions. Lanes of curved hinges take C = v (1 - r/|v|), which is v itself where r = 0,
// so a hinge gets the same bits whichever lanes it shares.
template <bool Xpbd>
void solveIsometric(BendingConstraints& b, SolverParticle* P, std::size_t begin, std::size_t end,
                    Sweep sweep) {
    forRange(b, P, begin, end, [&]<class T>(At e, V3<T>(&p)[4], T(&w)[4]) {
        const T k0 = loadAt<T>(b.weight[0], e);
        const T k1 = loadAt<T>(b.weight[1], e);
        const T k2 = loadAt<T>(b.weight[2], e);
        const T k3 = -(k0 + k1 + k2);
        V3<T> c = math::isometricCurvature<T>(p, k0, k1, k2);
        const T rest = loadAt<T>(b.restAngle, e);
        if (lanes::anyOf(rest != math::splat<T>(0.0))) {
            const T t = rest * math::safeInverse(lanes::sqrtOf(math::norm2(c)));
            c = c - c * t;
        }
        const T zero = math::splat<T>(0.0);
        const T lx = sweep.first ? zero : loadAt<T>(b.lambda[0], e);
        const T ly = sweep.first ? zero : loadAt<T>(b.lambdaYZ[0], e);
        const T lz = sweep.first ? zero : loadAt<T>(b.lambdaYZ[1], e);
        T alphaTilde = zero;
        T scale = math::splat<T>(1.0);
        if constexpr (Xpbd) {
            alphaTilde = loadAt<T>(b.compliance[0], e) * sweep.invH2;
        } else {
            scale = loadAt<T>(b.pbdScale[0], e);
        }
        const T denom =
            w[0] * k0 * k0 + w[1] * k1 * k1 + w[2] * k2 * k2 + w[3] * k3 * k3 + alphaTilde;
        const T s = scale * math::safeInverse(denom);
        const V3<T> dl = {(-c.x - alphaTilde * lx) * s, (-c.y - alphaTilde * ly) * s,
                          (-c.z - alphaTilde * lz) * s};
        p[0] += dl * (w[0] * k0);
        p[1] += dl * (w[1] * k1);
        p[2] += dl * (w[2] * k2);
        p[3] += dl * (w[3] * k3);
        storeAt<T>(b.lambda[0], e, lx + dl.x);
        storeAt<T>(b.lambdaYZ[0], e, ly + dl.y);
        storeAt<T>(b.lambdaYZ[1], e, lz + dl.z);
    });
}

template <bool Xpbd>
void solve(BendingConstraints& b, SolverParticle* P, std::size_t begin, std::size_t end,
           Sweep sweep) {
    if (b.model == BendingModel::Isometric) {
        solveIsometric<Xpbd>(b, P, begin, end, sweep);
        return;
    }
    const bool bridson = b.model == BendingModel::Bridson;
    forRange(b, P, begin, end, [&]<class T>(At e, V3<T>(&p)[4], T(&w)[4]) {
        V3<T> g[4];
        const T rest = loadAt<T>(b.restAngle, e);
        const T c = bridson ? math::evaluateDihedralBridson<T>(p, rest, g)
                            : math::evaluateDihedralPbd<T>(p, rest, g);
        apply<Xpbd>(b, 0, e, c, g, p, w, sweep);
    });
}

template <bool Xpbd>
void solve(StrainTriangleConstraints& b, SolverParticle* P, std::size_t begin, std::size_t end,
           Sweep sweep) {
    const bool normalised = b.normalisedShear;
    forRange(b, P, begin, end, [&]<class T>(At e, V3<T>(&p)[3], T(&w)[3]) {
        T cols[2][2];
        for (int k = 0; k < 4; ++k) {
            cols[k / 2][k % 2] = loadAt<T>(b.qInverse[k], e);
        }
        V3<T> g[3];
        for (int i = 0; i < 2; ++i) {
            applyStretch<Xpbd, T, 2>(b, i, e, p, w, cols, sweep);
        }
        const T c =
            math::evaluateStrainShear<T, 2>(p, cols, 0, 1, loadAt<T>(b.rest[2], e), normalised, g);
        apply<Xpbd>(b, 2, e, c, g, p, w, sweep);
    });
}

template <bool Xpbd>
void solve(StrainTetConstraints& b, SolverParticle* P, std::size_t begin, std::size_t end,
           Sweep sweep) {
    const bool normalised = b.normalisedShear;
    forRange(b, P, begin, end, [&]<class T>(At e, V3<T>(&p)[4], T(&w)[4]) {
        T cols[3][3];
        for (int k = 0; k < 9; ++k) {
            cols[k / 3][k % 3] = loadAt<T>(b.qInverse[k], e);
        }
        V3<T> g[4];
        for (int i = 0; i < 3; ++i) {
            applyStretch<Xpbd, T, 3>(b, i, e, p, w, cols, sweep);
        }
        constexpr int pairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};
        for (int s = 0; s < 3; ++s) {
            const T c = math::evaluateStrainShear<T, 3>(p, cols, pairs[s][0], pairs[s][1],
                                                        loadAt<T>(b.rest[3 + s], e), normalised, g);
            apply<Xpbd>(b, 3 + s, e, c, g, p, w, sweep);
        }
    });
}

template <bool Xpbd>
void solve(AreaConstraints& b, SolverParticle* P, std::size_t begin, std::size_t end, Sweep sweep) {
    forRange(b, P, begin, end, [&]<class T>(At e, V3<T>(&p)[3], T(&w)[3]) {
        V3<T> g[3];
        const T c = math::evaluateArea<T>(p, loadAt<T>(b.restValue, e), g);
        apply<Xpbd>(b, 0, e, c, g, p, w, sweep);
    });
}

template <bool Xpbd>
void solve(PlanarAreaConstraints& b, SolverParticle* P, std::size_t begin, std::size_t end,
           Sweep sweep) {
    forRange(b, P, begin, end, [&]<class T>(At e, V3<T>(&p)[3], T(&w)[3]) {
        V3<T> g[3];
        const T c = math::evaluatePlanarArea<T>(p, loadAt<T>(b.restValue, e), g);
        apply<Xpbd>(b, 0, e, c, g, p, w, sweep);
    });
}

template <bool Xpbd>
void solve(VolumeConstraints& b, SolverParticle* P, std::size_t begin, std::size_t end,
           Sweep sweep) {
    forRange(b, P, begin, end, [&]<class T>(At e, V3<T>(&p)[4], T(&w)[4]) {
        V3<T> g[4];
        const T c = math::evaluateVolume<T>(p, loadAt<T>(b.restValue, e), g);
        apply<Xpbd>(b, 0, e, c, g, p, w, sweep);
    });
}

} // namespace pbd::kernels::PBDLAB_KERNEL_ISA
