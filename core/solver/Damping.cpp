#include "core/solver/Damping.h"

#include <Eigen/Eigenvalues>

namespace pbd {

void dampTowardRigidMotion(const std::vector<Vec3>& x, std::vector<Vec3>& v,
                           const std::vector<Real>& w, std::size_t begin, std::size_t end, Real k) {
    if (k <= 0 || begin >= end) {
        return;
    }
    Real mass = 0;
    Vec3 xcm = Vec3::Zero();
    Vec3 vcm = Vec3::Zero();
    for (std::size_t i = begin; i < end; ++i) {
        if (w[i] > 0) {
            const Real m = 1.0 / w[i];
            mass += m;
            xcm += m * x[i];
            vcm += m * v[i];
        }
    }
    if (!(mass > 0)) {
        return;
    }
    xcm /= mass;
    vcm /= mass;
    Vec3 L = Vec3::Zero();
    Mat3 I = Mat3::Zero();
    for (std::size_t i = begin; i < end; ++i) {
        if (w[i] > 0) {
            const Real m = 1.0 / w[i];
            const Vec3 r = x[i] - xcm;
            L += r.cross(m * v[i]);
            I += m * (r.squaredNorm() * Mat3::Identity() - r * r.transpose());
        }
    }
    // A collinear body has a singular inertia tensor: the pseudo-inverse leaves spin about its
    // axis alone, which such a body cannot carry anyway.
    // omega = I^+ L through the eigen-decomposition of the symmetric inertia tensor.
    const Eigen::SelfAdjointEigenSolver<Mat3> eig(I);
    const Real tolerance = 1e-12 * eig.eigenvalues().cwiseAbs().maxCoeff();
    Vec3 omega = Vec3::Zero();
    for (int a = 0; a < 3; ++a) {
        const Real lambda = eig.eigenvalues()(a);
        if (lambda > tolerance) {
            const Vec3 axis = eig.eigenvectors().col(a);
            omega += (axis.dot(L) / lambda) * axis;
        }
    }
    for (std::size_t i = begin; i < end; ++i) {
        if (w[i] > 0) {
            const Vec3 dv = vcm + omega.cross(x[i] - xcm) - v[i];
            v[i] += k * dv;
        }
    }
}

Momentum momentumOf(const std::vector<Vec3>& x, const std::vector<Vec3>& v,
                    const std::vector<Real>& w, std::size_t begin, std::size_t end) {
    Momentum m;
    for (std::size_t i = begin; i < end; ++i) {
        if (w[i] > 0) {
            const Vec3 p = v[i] / w[i];
            m.linear += p;
            m.angular += x[i].cross(p);
        }
    }
    return m;
}

} // namespace pbd
