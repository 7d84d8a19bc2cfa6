// The rigid step's joints (ALGORITHMS §5): ball, hinge (with limits and a motor) and fixed
// joints as blocks of velocity rows, built from the bodies' current poses every substep and
// solved after the contacts in each sweep.
#include "core/rigid/RigidStep.h"

#include <algorithm>

namespace pbd {

using namespace rigid;

// Joint constraints, from the bodies' current poses; rebuilt every substep.
void RigidSolver::buildJoints(Step& st, Real hj) {
    std::vector<RigidBody>& bodies = st.bodies;
    const std::vector<RigidJoint>& joints = st.joints;
    const RigidSettings& settings = st.settings;
    const int n = st.n;
    std::vector<char>& touched = st.touched;
    const std::vector<std::uint32_t>& jointOrder = st.jointOrder;
    std::vector<JointConstraint>& jointRows = jointRows_;
    const auto awake = [&](int i) { return st.awake(i); };
    jointRows.clear();
    for (const std::uint32_t index : jointOrder) {
        const RigidJoint& j = joints[index];
        const int a = j.bodyA < 0 ? n : j.bodyA, b = j.bodyB < 0 ? n : j.bodyB;
        if ((a == n || !awake(a)) && (b == n || !awake(b))) {
            continue;
        }
        touched[std::size_t(a)] = touched[std::size_t(b)] = 1;
        JointConstraint c;
        c.joint = &j;
        c.a = a;
        c.b = b;
        const SolverBody &sa = solverBodies_[a], &sb = solverBodies_[b];
        const Quat qa = a == n ? Quat::Identity() : bodies[a].q;
        const Quat qb = b == n ? Quat::Identity() : bodies[b].q;
        const Vec3 xa = a == n ? Vec3::Zero() : bodies[a].x;
        const Vec3 xb = b == n ? Vec3::Zero() : bodies[b].x;
        c.ra = qa * j.anchorA;
        c.rb = qb * j.anchorB;
        c.wa = sa.inverseMass;
        c.wb = sb.inverseMass;
        c.ia = sa.inverseInertia;
        c.ib = sb.inverseInertia;
        const Mat3 Sa = skew(c.ra), Sb = skew(c.rb);
        const Mat3 K = (c.wa + c.wb) * Mat3::Identity() - Sa * c.ia * Sa - Sb * c.ib * Sb;
        c.linearMass = K.inverse();
        const Vec3 error = (xb + c.rb) - (xa + c.ra);
        c.linearBias = settings.jointCorrection / hj * error;
        const Mat3 angularK = c.ia + c.ib;
        if (j.type == RigidJointType::Hinge) {
            const Vec3 axisA = qa * j.axisA, axisB = qb * j.axisB;
            c.axis = axisA;
            const Vec3 u1 = axisA.unitOrthogonal(), u2 = axisA.cross(u1);
            c.angularRows = 2;
            c.angularAxes.row(0) = u1.transpose();
            c.angularAxes.row(1) = u2.transpose();
            c.angularAxes.row(2).setZero();
            Eigen::Matrix2d k2;
            k2 << u1.dot(angularK * u1), u1.dot(angularK * u2), u2.dot(angularK * u1),
                u2.dot(angularK * u2);
            c.angularMass.setZero();
            c.angularMass.topLeftCorner<2, 2>() = k2.inverse();
            const Vec3 misalignment = axisA.cross(axisB);
            c.angularBias =
                settings.jointCorrection / hj * Vec3(u1.dot(misalignment), u2.dot(misalignment), 0);
            const Real k1 = axisA.dot(angularK * axisA);
            c.axialMass = k1 > 0 ? 1 / k1 : 0;
            if (j.limit) {
                const Real angle = hingeAngle(bodies, j);
                // Speculative limits: active near the bound, allowing the approach that is
                // left.
                const Real toLower = angle - j.lowerAngle, toUpper = j.upperAngle - angle;
                c.lowerActive = toLower < 0.1;
                c.upperActive = toUpper < 0.1;
                c.lowerBias = toLower < 0 ? settings.jointCorrection * toLower / hj : toLower / hj;
                c.upperBias = toUpper < 0 ? settings.jointCorrection * toUpper / hj : toUpper / hj;
            }
        } else if (j.type == RigidJointType::Fixed) {
            c.angularRows = 3;
            c.angularAxes.setIdentity();
            c.angularMass = angularK.inverse();
            // The rotation that takes B's current orientation to the kept one, as a vector.
            Quat turn = qb * (qa * j.restRotation).conjugate();
            if (turn.w() < 0) {
                turn.coeffs() = -turn.coeffs();
            }
            c.angularBias = settings.jointCorrection / hj * 2 * turn.vec();
        }
        jointRows.push_back(c);
    }
}

void RigidSolver::solveJoints(Step&, Real hj) {
    std::vector<SweepRecord>& fv = sweepVelocities_;
    const auto load = [&](int i) { return Step::load(fv, i); };
    const auto store = [&](int i, const Velocity& u) { Step::store(fv, i, u); };
    for (JointConstraint& c : jointRows_) {
        Velocity A = load(c.a), B = load(c.b);
        const auto applyJointLinear = [&](const Vec3& impulse) {
            A.v -= c.wa * impulse;
            A.w -= c.ia * c.ra.cross(impulse);
            B.v += c.wb * impulse;
            B.w += c.ib * c.rb.cross(impulse);
        };
        const auto applyJointAngular = [&](const Vec3& angular) {
            A.w -= c.ia * angular;
            B.w += c.ib * angular;
        };
        {
            const Vec3 cdot = B.v + B.w.cross(c.rb) - A.v - A.w.cross(c.ra);
            const Vec3 impulse = -(c.linearMass * (cdot + c.linearBias));
            c.linearImpulse += impulse;
            applyJointLinear(impulse);
        }
        if (c.angularRows > 0) {
            const Vec3 relativeW = B.w - A.w;
            Vec3 cdot = c.angularAxes * relativeW;
            if (c.angularRows == 2) {
                cdot.z() = 0;
            }
            const Vec3 impulse = -(c.angularMass * (cdot + c.angularBias));
            c.angularImpulse += impulse;
            applyJointAngular(c.angularAxes.transpose() * impulse);
        }
        if (c.lowerActive) {
            const Real wAxis = c.axis.dot(B.w - A.w);
            // Row: +axis·(wB - wA) >= -lowerBias.
            const Real next =
                std::max<Real>(c.lowerImpulse - c.axialMass * (wAxis + c.lowerBias), 0);
            const Real delta = next - c.lowerImpulse;
            c.lowerImpulse = next;
            applyJointAngular(delta * c.axis);
        }
        if (c.upperActive) {
            const Real wAxis = c.axis.dot(B.w - A.w);
            // Row: -axis·(wB - wA) >= -upperBias.
            const Real next =
                std::max<Real>(c.upperImpulse - c.axialMass * (-wAxis + c.upperBias), 0);
            const Real delta = next - c.upperImpulse;
            c.upperImpulse = next;
            applyJointAngular(-delta * c.axis);
        }
        if (c.joint->motor) {
            const RigidJoint& j = *c.joint;
            const Real wAxis = c.axis.dot(B.w - A.w);
            const Real bound = j.maxMotorTorque * hj;
            const Real next =
                std::clamp(c.motorImpulse - c.axialMass * (wAxis - j.motorSpeed), -bound, bound);
            applyJointAngular((next - c.motorImpulse) * c.axis);
            c.motorImpulse = next;
        }
        store(c.a, A);
        store(c.b, B);
    }
}

} // namespace pbd
