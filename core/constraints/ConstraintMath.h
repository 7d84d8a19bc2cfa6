#pragma once
// Constraint functions C(p) and their gradients, stateless, templated on the scalar type so the
// same source runs one constraint (T = double) or kLanes constraints at once (T = lanes::Lanes).
// Each `evaluate*` returns C and writes grad_k C for every particle k; `project` turns C and the
// gradients into the XPBD update (XPBD eq. 17-18), which with alpha~ = 0 and a stiffness scale
// is the PBD projection (PBD eq. 8-9). Equation numbers refer to ../shared/reference.

#include "core/base/Lanes.h"

namespace pbd::math {

using lanes::absOf;
using lanes::atan2Of;
using lanes::maxOf;
using lanes::select;
using lanes::sqrtOf;

template <class T> PBD_KERNEL_INLINE T splat(double v) {
    return T{} + v;
}

template <class T> struct V3 { T x, y, z; };
template <class T> PBD_KERNEL_INLINE V3<T> operator+(V3<T> a, V3<T> b) {
    return {a.x + b.x, a.y + b.y, a.z + b.z};
}
template <class T> PBD_KERNEL_INLINE V3<T> operator-(V3<T> a, V3<T> b) {
    return {a.x - b.x, a.y - b.y, a.z - b.z};
}
template <class T> PBD_KERNEL_INLINE V3<T> operator-(V3<T> a) {
    return {-a.x, -a.y, -a.z};
}
template <class T> PBD_KERNEL_INLINE V3<T> operator*(V3<T> a, T s) {
    return {a.x * s, a.y * s, a.z * s};
}
template <class T> PBD_KERNEL_INLINE V3<T> operator*(T s, V3<T> a) {
    return {a.x * s, a.y * s, a.z * s};
}
template <class T> PBD_KERNEL_INLINE V3<T>& operator+=(V3<T>& a, V3<T> b) {
    return a = a + b;
}
template <class T> PBD_KERNEL_INLINE V3<T>& operator-=(V3<T>& a, V3<T> b) {
    return a = a - b;
}
template <class T> PBD_KERNEL_INLINE T dot(V3<T> a, V3<T> b) {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}
template <class T> PBD_KERNEL_INLINE T norm2(V3<T> a) {
    return dot(a, a);
}
template <class T> PBD_KERNEL_INLINE V3<T> cross(V3<T> a, V3<T> b) {
    return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
template <class T> PBD_KERNEL_INLINE V3<T> zero() {
    return {T{}, T{}, T{}};
}

// 1 / v where v > tiny, else 0: degenerate elements produce no correction instead of NaNs.
template <class T> PBD_KERNEL_INLINE T safeInverse(T v, double tiny = 1e-30) {
    const auto ok = absOf(v) > tiny;
    return select(ok, 1.0 / select(ok, v, splat<T>(1.0)), splat<T>(0.0));
}

// One XPBD update (XPBD eq. 18 then eq. 17): dlambda = scale (-C - a~ lambda) / (sum w|g|^2 + a~),
// p_k += w_k g_k dlambda. For PBD, a~ = 0 and scale = k' = 1 - (1 - k)^(1/n) (PBD §3.3).
// Returns dlambda.
template <class T, int N>
PBD_KERNEL_INLINE T project(T c, const V3<T> (&g)[N], V3<T> (&p)[N], const T (&w)[N], T alphaTilde,
                            T lambda, T scale) {
    T denom = alphaTilde;
    for (int k = 0; k < N; ++k) {
        denom += w[k] * norm2(g[k]);
    }
    const T dl = scale * (-c - alphaTilde * lambda) * safeInverse(denom);
    for (int k = 0; k < N; ++k) {
        p[k] += g[k] * (w[k] * dl);
    }
    return dl;
}

// Distance, PBD eq. 10-11: C = |p0 - p1| - d.
template <class T>
PBD_KERNEL_INLINE T evaluateDistance(const V3<T> (&p)[2], T rest, V3<T> (&g)[2]) {
    const V3<T> n = p[0] - p[1];
    const T len = sqrtOf(norm2(n));
    g[0] = n * safeInverse(len);
    g[1] = -g[0];
    return len - rest;
}

// Signed dihedral angle of the hinge with wing tips p0, p1 and shared edge p2 -> p3, with the
// derivatives of Bridson et al. (SBD §3.8, eq. 39-46). The angle is 0 when the two triangles
// (p0, p2, p3) and (p1, p3, p2) are coplanar and unfolded, and signed so the gradients hold
// through the flat state.
template <class T>
PBD_KERNEL_INLINE T evaluateDihedralBridson(const V3<T> (&p)[4], T restAngle, V3<T> (&g)[4]) {
    const V3<T> e = p[3] - p[2];
    const T elen2 = norm2(e);
    const T elen = sqrtOf(elen2);
    const T invElen = safeInverse(elen);
    const V3<T> m1 = cross(p[2] - p[0], p[3] - p[0]);
    const V3<T> m2 = cross(p[3] - p[1], p[2] - p[1]);
    const T m1n2 = norm2(m1);
    const T m2n2 = norm2(m2);
    const V3<T> n1 = m1 * safeInverse(m1n2);
    const V3<T> n2 = m2 * safeInverse(m2n2);
    g[0] = n1 * elen;
    g[1] = n2 * elen;
    g[2] = n1 * (dot(p[0] - p[3], e) * invElen) + n2 * (dot(p[1] - p[3], e) * invElen);
    g[3] = n1 * (dot(p[2] - p[0], e) * invElen) + n2 * (dot(p[2] - p[1], e) * invElen);
    // Angle from the unit normals: cos = n1.n2, sin = (n2 x n1).e / |e|; this sign is the one
    // whose derivatives are the ones above (checked against finite differences in the tests).
    // atan2 needs them only up to a common positive factor: both times |m1| |m2| |e|, which
    // spares a square root and a division.
    const T cosA = dot(m1, m2) * elen;
    const T sinA = dot(cross(m2, m1), e);
    const T angle = atan2Of(sinA, cosA);
    return angle - restAngle;
}

// Dihedral bending of the PBD appendix (PBD eq. 25-29): shared edge p0 -> p1, triangles
// (p0, p2, p1) and (p0, p1, p3); C = acos(n1.n2) - phi0. The gradient of acos is singular when
// the hinge is flat (d = +-1); there it is reported as zero and the constraint does nothing.
template <class T>
PBD_KERNEL_INLINE T evaluateDihedralPbd(const V3<T> (&p)[4], T restAngle, V3<T> (&g)[4]) {
    const V3<T> p2 = p[1] - p[0];
    const V3<T> p3 = p[2] - p[0];
    const V3<T> p4 = p[3] - p[0];
    const V3<T> c23 = cross(p2, p3);
    const V3<T> c24 = cross(p2, p4);
    const T inv23 = safeInverse(sqrtOf(norm2(c23)));
    const T inv24 = safeInverse(sqrtOf(norm2(c24)));
    const V3<T> n1 = c23 * inv23;
    const V3<T> n2 = c24 * inv24;
    const T d = maxOf(splat<T>(-1.0), lanes::minOf(splat<T>(1.0), dot(n1, n2)));
    const V3<T> q3 = (cross(p2, n2) + cross(n1, p2) * d) * inv23;
    const V3<T> q4 = (cross(p2, n1) + cross(n2, p2) * d) * inv24;
    const V3<T> q2 = -((cross(p3, n2) + cross(n1, p3) * d) * inv23) -
                     ((cross(p4, n1) + cross(n2, p4) * d) * inv24);
    const V3<T> q1 = -(q2 + q3 + q4);
    const T sinA = sqrtOf(maxOf(splat<T>(0.0), 1.0 - d * d));
    // The appendix's q_i, as printed, are the derivatives of -d with these normals, so
    // grad C = d(acos d)/dp = q / sqrt(1 - d^2) (checked against finite differences).
    const T s = safeInverse(sinA, 1e-9);
    g[0] = q1 * s;
    g[1] = q2 * s;
    g[2] = q3 * s;
    g[3] = q4 * s;
    return atan2Of(sinA, d) - restAngle;
}

// Isometric bending (Bergou, Wardetzky, Harmon, Zorin and Grinspun 2006, "A quadratic bending
// model for inextensible surfaces"; the survey of Bender, Mueller and Macklin 2015, §4.2.2): the
// hinge's curvature vector v = sum_k K_k p_k, linear in the positions, with weights K from the
// cotangents of the rest triangles (hingeRest, ConstraintBuilders.h). Bridson's particle order:
// wing tips p0, p1, shared edge p2 -> p3. With K divided by the rest edge's length, |v| = 2
// sin(theta / 2) for a hinge folded by theta from flat as long as its triangles keep their rest
// shape, so a compliance means what it means for the dihedral angle near flat. Flat at rest, v = 0;
// the energy |v|^2 / (2 alpha) is then quadratic in the positions, with constant gradients: the
// projection needs no square root, division by the positions or angle (and no singularity at
// flat, where v is a vector constraint with a lambda per axis). For a hinge curved at rest the
// constraint is v - r v/|v| (r = |v| at rest; see the solver's kernel).
// K_3 = -(K_0 + K_1 + K_2): the weights sum to zero (a translation changes nothing), and v is
// computed from positions relative to p3 so that holds in the rounding too.
template <class T>
PBD_KERNEL_INLINE V3<T> isometricCurvature(const V3<T> (&p)[4], T k0, T k1, T k2) {
    return (p[0] - p[3]) * k0 + (p[1] - p[3]) * k1 + (p[2] - p[3]) * k2;
}

// The scalar form C = |v| - r with grad_k C = K_k v/|v| (zero where v = 0), for residuals,
// fields and damping (the solver projects the vector form).
template <class T>
PBD_KERNEL_INLINE T evaluateIsometricBending(const V3<T> (&p)[4], T k0, T k1, T k2, T rest,
                                             V3<T> (&g)[4]) {
    const V3<T> v = isometricCurvature<T>(p, k0, k1, k2);
    const T len = sqrtOf(norm2(v));
    const V3<T> u = v * safeInverse(len);
    g[0] = u * k0;
    g[1] = u * k1;
    g[2] = u * k2;
    g[3] = -(g[0] + g[1] + g[2]);
    return len - rest;
}

// Strain constraints (SBD §3.1-3.5). `cols` are the columns c_i of Q^-1, D = 2 for triangles
// and 3 for tets; P = [p1 - p0, ..., pD - p0], f_i = P c_i, S = F^T F.
// Column i of F = P Q^-1: f_i = sum_k (p_{k+1} - p_0) c_i[k].
template <class T, int D>
PBD_KERNEL_INLINE V3<T> deformationColumn(const V3<T> (&p)[D + 1], const T (&cols)[D][D], int i) {
    V3<T> f = (p[1] - p[0]) * cols[i][0];
    for (int k = 1; k < D; ++k) {
        f += (p[k + 1] - p[0]) * cols[i][k];
    }
    return f;
}

// Stretch along material axis i, sqrt form (SBD eq. 14): C = sqrt(S_ii) - s_i, whose gradient is
// grad S_ii / (2 sqrt(S_ii)) = f_i c_i[k] / |f_i| (SBD eq. 29-31, 32).
template <class T, int D>
PBD_KERNEL_INLINE T evaluateStrainStretch(const V3<T> (&p)[D + 1], const T (&cols)[D][D], int i,
                                          T rest, V3<T> (&g)[D + 1]) {
    const V3<T> fi = deformationColumn<T, D>(p, cols, i);
    const T len = sqrtOf(norm2(fi));
    const V3<T> u = fi * safeInverse(len);
    g[0] = zero<T>();
    for (int k = 0; k < D; ++k) {
        g[k + 1] = u * cols[i][k];
        g[0] -= g[k + 1];
    }
    return len - rest;
}

// The XPBD update of the stretch constraint above, in closed form: with u = f_i / |f_i| a unit
// vector, sum_k w_k |grad_k C|^2 = sum_k w_k c_i[k]^2 (c_i[-1] = -sum c_i) does not depend on
// the positions, so it is computed beside the sqrt instead of after it, and the update needs one
// division: dp_k = -w_k c_i[k] f_i (C + a~ lambda) / ((D + a~) |f_i|) (SBD eq. 32, 35; XPBD
// eq. 17-18). Returns dlambda. Equal to project(evaluateStrainStretch(...)) (tested).
template <class T, int D>
PBD_KERNEL_INLINE T projectStrainStretch(V3<T> (&p)[D + 1], const T (&w)[D + 1],
                                         const T (&cols)[D][D], int i, T rest, T alphaTilde,
                                         T lambda, T scale) {
    const V3<T> fi = deformationColumn<T, D>(p, cols, i);
    T c0 = cols[i][0];
    for (int k = 1; k < D; ++k) {
        c0 += cols[i][k];
    }
    T denom = w[0] * c0 * c0 + alphaTilde;
    for (int k = 0; k < D; ++k) {
        denom += w[k + 1] * cols[i][k] * cols[i][k];
    }
    const T len = sqrtOf(norm2(fi));
    const T c = len - rest;
    const T q = scale * (-c - alphaTilde * lambda) * safeInverse(denom * len);
    p[0] -= fi * (w[0] * c0 * q);
    for (int k = 0; k < D; ++k) {
        p[k + 1] += fi * (w[k + 1] * cols[i][k] * q);
    }
    return q * len;
}

// Shear between axes i < j: C = S_ij (SBD eq. 10) with grad_{p_k} S_ij = f_j c_i[k] + f_i c_j[k]
// (SBD eq. 30 with its erratum fixed), or, normalised, from S̄_ij = f_i.f_j / (|f_i||f_j|)
// (SBD eq. 15, gradient eq. 36), which leaves pure stretch alone; `rest` is then an angle (rad).
template <class T, int D>
PBD_KERNEL_INLINE T evaluateStrainShear(const V3<T> (&p)[D + 1], const T (&cols)[D][D], int i,
                                        int j, T rest, bool normalised, V3<T> (&g)[D + 1]) {
    const V3<T> fi = deformationColumn<T, D>(p, cols, i);
    const V3<T> fj = deformationColumn<T, D>(p, cols, j);
    const T sij = dot(fi, fj);
    g[0] = zero<T>();
    if (!normalised) {
        for (int k = 0; k < D; ++k) {
            g[k + 1] = fj * cols[i][k] + fi * cols[j][k];
            g[0] -= g[k + 1];
        }
        return sij - rest;
    }
    const T li2 = norm2(fi);
    const T lj2 = norm2(fj);
    const T li = sqrtOf(li2);
    const T lj = sqrtOf(lj2);
    const T inv = safeInverse(li * lj);
    const T inv3 = inv * inv * inv;
    // Measured as the angle asin(S̄_ij) (= pi/2 minus the angle between the axes) rather than
    // S̄_ij itself: the same for small shear, but the gradient of S̄ vanishes as the axes become
    // parallel, where a full projection of eq. 15 would take an unbounded step (it blew up cloth
    // under classic PBD with k = 1); the angle's gradient stays finite.
    const T cosine = maxOf(splat<T>(-1.0), lanes::minOf(splat<T>(1.0), sij * inv));
    const T sine = sqrtOf(maxOf(splat<T>(0.0), 1.0 - cosine * cosine));
    const T scale = safeInverse(sine, 1e-12);
    for (int k = 0; k < D; ++k) {
        g[k + 1] = ((fj * cols[i][k] + fi * cols[j][k]) * inv -
                    (fi * (lj2 * cols[i][k]) + fj * (li2 * cols[j][k])) * (sij * inv3)) *
                   scale;
        g[0] -= g[k + 1];
    }
    return atan2Of(cosine, sine) - rest;
}

// Volume (SBD eq. 16-19): C = det(P) - rest with rest = det(Q) (or s1 s2 s3 det(Q), the
// generalised rest). Its sign is enforced, so it also un-inverts inverted tets.
template <class T> PBD_KERNEL_INLINE T evaluateVolume(const V3<T> (&p)[4], T rest, V3<T> (&g)[4]) {
    const V3<T> a = p[1] - p[0];
    const V3<T> b = p[2] - p[0];
    const V3<T> c = p[3] - p[0];
    g[1] = cross(b, c);
    g[2] = cross(c, a);
    g[3] = cross(a, b);
    g[0] = -(g[1] + g[2] + g[3]);
    return dot(a, g[1]) - rest;
}

// Area (SBD eq. 47-60): C = |p1 x p2|^2 - rest with rest = |q1 x q2|^2, relative to p0.
template <class T> PBD_KERNEL_INLINE T evaluateArea(const V3<T> (&p)[3], T rest, V3<T> (&g)[3]) {
    const V3<T> a = p[1] - p[0];
    const V3<T> b = p[2] - p[0];
    const V3<T> n = cross(a, b);
    g[1] = cross(b, n) * splat<T>(2.0);
    g[2] = cross(n, a) * splat<T>(2.0);
    g[0] = -(g[1] + g[2]);
    return norm2(n) - rest;
}

// C = ((p1 - p0) x (p2 - p0)).z - rest for a triangle in the xy plane (rest = 2 A0, signed):
// the gradients lie in the plane, so the triangle stays in it.
template <class T>
PBD_KERNEL_INLINE T evaluatePlanarArea(const V3<T> (&p)[3], T rest, V3<T> (&g)[3]) {
    const V3<T> a = p[1] - p[0];
    const V3<T> b = p[2] - p[0];
    const T zero = splat<T>(0.0);
    g[1] = {b.y, zero - b.x, zero};
    g[2] = {zero - a.y, a.x, zero};
    g[0] = -(g[1] + g[2]);
    return a.x * b.y - a.y * b.x - rest;
}

} // namespace pbd::math
