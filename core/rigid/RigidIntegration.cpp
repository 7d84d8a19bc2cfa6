// The rigid step's integration (ALGORITHMS §5 step 1): positions and orientations from the
// solved velocities; with substeps, the moves and turns in floats that the sweeps read; free
// flight through L; and the velocities and angular momenta back into the bodies.
#include "core/rigid/RigidStep.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace pbd {

using namespace rigid;

void RigidSolver::beginSubsteps(Step& st) {
    std::vector<RigidBody>& bodies = st.bodies;
    const int n = st.n;
    const bool track = st.track;
    const std::vector<char>& touched = st.touched;
    const std::vector<JointConstraint>& jointRows = jointRows_;
    const auto awake = [&](int i) { return st.awake(i); };
    // With substeps, the bodies a constraint acts on and the kinematic ones move in floats,
    // which the sweeps read: each substep adds h_s v and h_s omega to the body's move and turn
    // since the step's start (sweepMoves_) and turns its orientation's turn (turns_, from the
    // identity: q += (angle/2, 0) q, normalised). The poses take them at the end of the step,
    // and the jointed bodies' every substep (the joints are rebuilt from them). Free bodies
    // fall and turn in doubles once, at the end.
    std::vector<int>& substepped = substepped_;
    std::vector<int>& jointed = jointed_;
    substepped.clear();
    jointed.clear();
    // The bodies' records in parts on the team's threads (on one, pyramid-100's 5,051 bodies
    // took 0.05 ms a step); each part lists its substepped bodies, joined in order.
    std::vector<SweepRecord>& fv = sweepVelocities_;
    fv.resize(std::size_t(n) + 1);
    if (track) {
        turns_.resize(std::size_t(n));
        startOrientations_.resize(std::size_t(n));
        sweepMoves_.resize(std::size_t(n) + 1);
    }
    std::vector<std::vector<int>> partSubstepped(mostParts(st.team));
    const int parts =
        st.inParts(std::size_t(n) + 1, 1024, [&](int part, std::size_t begin, std::size_t end) {
            std::vector<int> mine;
            for (std::size_t k = begin; k < end; ++k) {
                fv[k].value = bodyRecord(velocities_[k].v, velocities_[k].w);
                if (!track) {
                    continue;
                }
                sweepMoves_[k] = SweepRecord{};
                if (k == std::size_t(n)) {
                    continue; // the world's record
                }
                const int i = int(k);
                turns_[k] = SubstepTurn{};
                startOrientations_[k] = bodies[i].q;
                if ((awake(i) && touched[k]) || bodies[i].motion == RigidMotion::Kinematic) {
                    mine.push_back(i);
                }
            }
            partSubstepped[std::size_t(part)] = std::move(mine);
        });
    if (track) {
        for (int part = 0; part < parts; ++part) {
            const std::vector<int>& mine = partSubstepped[std::size_t(part)];
            substepped.insert(substepped.end(), mine.begin(), mine.end());
        }
        for (const JointConstraint& c : jointRows) {
            for (const int i : {c.a, c.b}) {
                if (i < n && (awake(i) || bodies[i].motion == RigidMotion::Kinematic)) {
                    jointed.push_back(i);
                }
            }
        }
        // A link between two joints is posed once per substep.
        std::sort(jointed.begin(), jointed.end());
        jointed.erase(std::unique(jointed.begin(), jointed.end()), jointed.end());
    }
    for (const JointConstraint& c : jointRows) {
        stats_.rows += 3 + std::size_t(c.angularRows) + (c.lowerActive || c.upperActive) +
                       std::size_t(c.joint->motor);
    }

    // The velocities in the sweeps (above): floats, in the records of the lanes
    // (sweepVelocities_); velocities_ keeps the doubles, which the bodies a constraint acts on
    // take back after the sweeps (syncToDoubles; with substeps once, at the end of the step)
    // and the free ones keep.
}

std::pair<Vec3, Quat> RigidSolver::poseAfterSubsteps(int i) const {
    const SubstepTurn& t = turns_[std::size_t(i)];
    const Quat turn(double(t.w), double(t.x), double(t.y), double(t.z));
    return std::pair<Vec3, Quat>(solverBodies_[std::size_t(i)].x +
                                     recordFirst(sweepMoves_[std::size_t(i)].value),
                                 (turn * startOrientations_[std::size_t(i)]).normalized());
}

void RigidSolver::syncToDoubles(Step& st) {
    const std::vector<SweepRecord>& fv = sweepVelocities_;
    for (int i = 0; i < st.n; ++i) {
        if (st.touched[std::size_t(i)] && solverBodies_[std::size_t(i)].inverseMass > 0) {
            velocities_[std::size_t(i)] = Step::load(fv, i);
        }
    }
}

// Positions (§5 step 1): x += h v and R turned by h omega. In the single solve, omega is
// taken at the middle of the turn, omega_mid = I_mid^-1 L with I_mid = R_mid I' R_mid^T (a
// few fixed-point rounds): with L exact in free flight this keeps the kinetic energy, where
// turning by the omega of the step's start gains energy every step. With substeps, the
// bodies a constraint acts on turn by the solved omega every substep, and free bodies turn
// this way once, at the end.
void RigidSolver::turnThroughL(Step& st, RigidBody& b, int i) {
    const Real h = st.h;
    const std::vector<Velocity>& sb = velocities_;
    const std::vector<Vec3>& omegaBefore = omegaBefore_;
    const std::vector<Mat3>& inertiaBefore = inertiaBefore_;
    const Vec3 L =
        sb[i].w == omegaBefore[i] ? b.L : Vec3(b.L + inertiaBefore[i] * (sb[i].w - omegaBefore[i]));
    Vec3 w = sb[i].w;
    for (int round = 0; round < 4; ++round) {
        const Mat3 R = turned(b.q, 0.5 * h * w).toRotationMatrix();
        const Vec3 next = R * (b.inverseInertiaBody * (R.transpose() * L));
        const bool settled = (next - w).squaredNorm() <= 1e-28 * next.squaredNorm();
        w = next;
        if (settled) {
            break;
        }
    }
    b.q = turned(b.q, h * w).normalized();
}

void RigidSolver::integratePositions(Step& st) {
    std::vector<RigidBody>& bodies = st.bodies;
    const int n = st.n;
    const Real h = st.h;
    const std::vector<Velocity>& sb = velocities_;
    const auto awake = [&](int i) { return st.awake(i); };
    if (st.track) {
        st.movesTaken = false;
        integrateMoves(st, 0, substepped_.size());
        poseJointed(st);
        return;
    }
    for (int i = 0; i < n; ++i) {
        RigidBody& b = bodies[i];
        if (awake(i)) {
            b.x += h * sb[i].v;
            turnThroughL(st, b, i);
        } else if (b.motion == RigidMotion::Kinematic) {
            b.x += h * sb[i].v;
            b.q = turned(b.q, h * b.omega).normalized();
        }
    }
}

// With substeps: the moves and turns of substepped_[begin, end) (each body its own).
void RigidSolver::integrateMoves(Step& st, std::size_t begin, std::size_t end) {
    const std::vector<SweepRecord>& fv = sweepVelocities_;
    const D4 stepLanes = st.stepLanes;
    for (std::size_t k = begin; k < end; ++k) {
        const int i = substepped_[k];
        D4& move = sweepMoves_[std::size_t(i)].value;
        const D4 angle = stepLanes * fv[std::size_t(i)].value;
        move += angle;
        // The source's R += h [omega]x R for a quaternion, q += (angle/2, 0) q,
        // normalised: a substep's turn (small), without the sine and cosine of the
        // exact one.
        const float x = 0.5f * angle[3], y = 0.5f * angle[4], z = 0.5f * angle[5];
        SubstepTurn& t = turns_[std::size_t(i)];
        const float qx = t.x + t.w * x + (y * t.z - z * t.y);
        const float qy = t.y + t.w * y + (z * t.x - x * t.z);
        const float qz = t.z + t.w * z + (x * t.y - y * t.x);
        const float qw = t.w - (x * t.x + y * t.y + z * t.z);
        const float norm = 1 / std::sqrt(qx * qx + qy * qy + qz * qz + qw * qw);
        t = {qx * norm, qy * norm, qz * norm, qw * norm};
    }
}

// The jointed bodies' poses after this substep (their joints are rebuilt from them).
void RigidSolver::poseJointed(Step& st) {
    for (const int i : jointed_) {
        std::tie(st.bodies[i].x, st.bodies[i].q) = poseAfterSubsteps(i);
    }
}

// With substeps: the poses of the bodies moved per substep, their velocities in doubles, and
// the free bodies, substep by substep in doubles: they fall, and turn through L.
void RigidSolver::finishSubsteps(Step& st) {
    std::vector<RigidBody>& bodies = st.bodies;
    const int n = st.n;
    const Real hs = st.hs;
    const Vec3& gravity = st.gravity;
    const int substeps = st.substeps;
    const std::vector<char>& touched = st.touched;
    std::vector<Velocity>& sb = velocities_;
    const auto awake = [&](int i) { return st.awake(i); };
    // Each body its own, in parts on the team's threads.
    st.inParts(substepped_.size(), 512, [&](int, std::size_t begin, std::size_t end) {
        for (std::size_t k = begin; k < end; ++k) {
            const int i = substepped_[k];
            std::tie(bodies[i].x, bodies[i].q) = poseAfterSubsteps(i);
        }
    });
    const std::vector<SweepRecord>& fv = sweepVelocities_;
    st.inParts(std::size_t(n), 512, [&](int, std::size_t begin, std::size_t end) {
        for (int i = int(begin); i < int(end); ++i) {
            if (touched[std::size_t(i)] && solverBodies_[std::size_t(i)].inverseMass > 0) {
                sb[std::size_t(i)] = Step::load(fv, i); // syncToDoubles
            }
            // The free bodies, substep by substep in doubles: they fall, and turn through L.
            if (awake(i) && !touched[std::size_t(i)]) {
                Velocity& u = sb[std::size_t(i)];
                for (int sub = 0; sub < substeps; ++sub) {
                    u.v += hs * gravity;
                    bodies[i].x += hs * u.v;
                }
                turnThroughL(st, bodies[i], i);
            }
        }
    });
}

// Velocities back; L changes by I (omega_after - omega_before), exactly zero without
// contacts or joints, so |L| is kept bit for bit in free flight. Then omega for the new
// orientation (§5 steps 2-4), so views and energies see the current one.
void RigidSolver::takeVelocities(Step& st) {
    std::vector<RigidBody>& bodies = st.bodies;
    const int n = st.n;
    const std::vector<Velocity>& sb = velocities_;
    const std::vector<Vec3>& omegaBefore = omegaBefore_;
    const std::vector<Mat3>& inertiaBefore = inertiaBefore_;
    const auto awake = [&](int i) { return st.awake(i); };
    st.inParts(std::size_t(n), 512, [&](int, std::size_t begin, std::size_t end) {
        for (int i = int(begin); i < int(end); ++i) {
            RigidBody& b = bodies[i];
            if (!awake(i)) {
                continue;
            }
            const Velocity& s = sb[i];
            b.v = s.v;
            if (s.w != omegaBefore[i]) {
                b.L += inertiaBefore[i] * (s.w - omegaBefore[i]);
            }
            b.omega = b.inverseInertiaWorld() * b.L;
        }
    });
}

} // namespace pbd
