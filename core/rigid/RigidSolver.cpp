// The rigid step (ALGORITHMS §5): its stages in order, each in a file of its own (RigidStep.h
// lists them); here the bodies in, the substep loop, and the velocities back.
#include "core/base/PhaseRunner.h"
#include "core/rigid/RigidStep.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>

namespace pbd {

using namespace rigid;

std::string_view toString(StackStabilisation s) {
    switch (s) {
    case StackStabilisation::Off:
        return "off";
    case StackStabilisation::ShockPropagation:
        return "shock-propagation";
    case StackStabilisation::WeightAmplification:
        return "weight-amplification";
    }
    return "?";
}

namespace {

using Clock = std::chrono::steady_clock;

double millisecondsSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

} // namespace

RigidSolver::RigidSolver() = default;
RigidSolver::~RigidSolver() = default;
RigidSolver::RigidSolver(RigidSolver&&) noexcept = default;
RigidSolver& RigidSolver::operator=(RigidSolver&&) noexcept = default;
RigidSolver::RigidSolver(const RigidSolver&) = default;
RigidSolver& RigidSolver::operator=(const RigidSolver&) = default;

namespace {
template <class T> std::size_t bytesOf(const std::vector<T>& v) {
    return v.size() * sizeof(T);
}
} // namespace

std::size_t RigidSolver::memoryBytes() const {
    return sizeof(*this) + bytesOf(proxies_) + bytesOf(reproxied_) + bytesOf(proxyPairs_) +
           bytesOf(proxyFirst_) + bytesOf(candidates_) + bytesOf(manifolds_) + bytesOf(previous_) +
           bytesOf(solverBodies_) + bytesOf(velocities_) + bytesOf(omegaBefore_) +
           bytesOf(inertiaBefore_) + bytesOf(heights_) + bytesOf(adjacencyFirst_) +
           bytesOf(adjacency_) + bytesOf(heightQueue_) + bytesOf(solved_) + bytesOf(contacts_) +
           bytesOf(jointRows_) + bytesOf(batches_) + bytesOf(laneSources_) +
           bytesOf(sweepVelocities_) + bytesOf(sweepMoves_) + bytesOf(turns_) +
           bytesOf(startOrientations_) + bytesOf(substepped_) + bytesOf(jointed_) +
           bytesOf(pushVelocities_) + bytesOf(pushSaved_) + bytesOf(colours_) +
           bytesOf(manifoldBodies_) + bytesOf(bodyMotion_) + bytesOf(bodyFlags_);
}

RigidSolver RigidSolver::warmStart() const {
    RigidSolver s;
    s.proxies_ = proxies_;
    s.reproxied_ = reproxied_;
    s.proxyPairs_ = proxyPairs_;
    s.proxyPairsValid_ = proxyPairsValid_;
    s.manifolds_ = manifolds_;
    s.solved_ = solved_;
    s.reportSubsteps_ = reportSubsteps_;
    s.contactsStale_ = !manifolds_.empty();
    s.stats_ = stats_;
    s.maxJointError_ = maxJointError_;
    s.steps_ = steps_;
    return s;
}

void RigidSolver::reset() {
    manifolds_.clear();
    previous_.clear();
    contacts_.clear();
    contactsStale_ = false;
    solved_.clear();
    proxies_.clear();
    proxyPairs_.clear();
    proxyPairsValid_ = false;
    stats_ = {};
    steps_ = 0;
    maxJointError_ = 0;
}
// The contact points of the manifolds solved in the last step, each with its share of the
// manifold's friction; impulses over the step (per substep times the substeps). Made when
// first asked for.
const std::vector<RigidContact>& RigidSolver::contacts() const {
    if (!contactsStale_) {
        return contacts_;
    }
    contactsStale_ = false;
    contacts_.clear();
    for (std::size_t mi = 0; mi < manifolds_.size() && mi < solved_.size(); ++mi) {
        if (!solved_[mi]) {
            continue;
        }
        const CachedManifold& cm = manifolds_[mi];
        const RigidManifold& m = cm.manifold;
        Real support = 0;
        for (int k = 0; k < m.count; ++k) {
            support += cm.normalImpulse[std::size_t(k)];
        }
        Vec3 t1, t2;
        tangents(m.normal, t1, t2);
        const Vec3 friction =
            reportSubsteps_ * (cm.frictionImpulse.x() * t1 + cm.frictionImpulse.y() * t2);
        for (int k = 0; k < m.count; ++k) {
            const RigidContactPoint& p = m.points[k];
            const Real lambda = cm.normalImpulse[std::size_t(k)];
            const Real share = support > 0 ? lambda / support : 1.0 / m.count;
            contacts_.push_back({m.bodyA, m.bodyB, p.position, m.normal, p.separation,
                                 reportSubsteps_ * lambda, share * friction, p.feature});
        }
    }
    return contacts_;
}
void RigidSolver::step(std::vector<RigidBody>& bodies, const std::vector<RigidJoint>& joints,
                       const RigidSettings& settings, const Vec3& gravity, Real h,
                       ThreadTeam* team) {
    const Clock::time_point start = Clock::now();
    stats_ = {};
    const int n = int(bodies.size());
    ++steps_;
    const int substeps = std::max(settings.substeps, 1);
    const Real hs = h / substeps;
    const bool soft = settings.contactHertz > 0;
    // The separations follow the bodies (substeps, soft contacts), or the biases are fixed at
    // the step's start (the source's single solve).
    const bool track = substeps > 1 || soft;

    // This step's manifolds are written over the storage of the step before last (detect):
    // kept at its size, it is not built anew.
    std::swap(previous_, manifolds_);
    detect(bodies, joints, settings, team);
    const bool stacking = settings.stabilisation != StackStabilisation::Off;
    const bool shock = settings.stabilisation == StackStabilisation::ShockPropagation;
    stats_.detectionMilliseconds = millisecondsSince(start);
    const Clock::time_point solveStart = Clock::now();
    Step st{.bodies = bodies,
            .joints = joints,
            .settings = settings,
            .gravity = gravity,
            .h = h,
            .hs = hs,
            .n = n,
            .substeps = substeps,
            .soft = soft,
            .track = track,
            .stacking = stacking,
            .shock = shock,
            // The order the constraints are swept in, drawn once per step (source 004,
            // Permutation: the rows are permuted, then the solver starts): the manifolds and
            // joints in a random order (the order they take their colours in, and the joints'
            // order), and each batch's and each lane's rows in a random order.
            .random = SplitMix{steps_ * 0x2545F4914F6CDD1Dull}};
    st.touched.assign(std::size_t(n) + 1, 0);
    st.team = team;
    const D4 zero{};
    st.slopLanes = zero + float(settings.slop);
    st.invHs = zero + float(1 / hs);
    st.correctionLanes = zero + float(settings.correction);
    st.maxPush = zero + float(settings.maxPushVelocity);
    st.stepLanes = zero + float(hs);
    const auto softLanes = [&](Real hertz) {
        const Softness spring =
            makeSoft(std::min(hertz, 0.25 / hs), settings.contactDampingRatio, hs);
        return SoftLanes{zero + float(spring.biasRate), zero + float(spring.massScale),
                         zero + float(spring.impulseScale)};
    };
    st.softness[0] = softLanes(settings.contactHertz);
    st.softness[1] = softLanes(2 * settings.contactHertz);

    // The stages' clock (RigidStatistics::Stages): each takes the time since the one before.
    Clock::time_point stageStart = solveStart;
    const auto stageEnds = [&](double& into) {
        const Clock::time_point now = Clock::now();
        into = std::chrono::duration<double, std::milli>(now - stageStart).count();
        stageStart = now;
    };
    listManifoldBodies(st);
    // Three walks over the manifolds, each on one thread, side by side on a team of several:
    // the stack heights (which the bodies' records take), the islands (which sleep reads at
    // the end of the step) and the colours (pyramid-100 on two threads: 0.06 + 0.04 ms beside
    // 0.11 ms). None reads what another writes.
    const auto walk = [&](int part) {
        if (part == 0) {
            if (stacking) {
                computeHeights();
            }
            uniteIslands(st);
        } else {
            colourManifolds(st);
        }
    };
    if (st.threads() > 1) {
        struct Phase {
            int parts;
        };
        runPhases(team->arena, team->count, std::vector<Phase>{{2}},
                  [&](const Phase&, int part) { walk(part); });
    } else {
        walk(0);
        walk(1);
    }
    stageEnds(stats_.stages.graph);
    prepareBodies(st);
    stageEnds(stats_.stages.bodies);
    buildBatches(st);
    stageEnds(stats_.stages.batches);
    buildJoints(st, hs);
    beginSubsteps(st);

    std::vector<SweepRecord>& fv = sweepVelocities_;
    std::vector<Velocity>& sb = velocities_;
    const auto awake = [&](int i) { return st.awake(i); };
    const auto movable = [&](int i) { return solverBodies_[std::size_t(i)].inverseMass > 0; };
    // The substeps (one for the source's single solve): gravity, warm start, sweeps, shock
    // propagation, positions, relax.
    // Split push (see RigidSettings::separatePush); the soft step has its own.
    const bool split = settings.separatePush && settings.warmStart && !soft;
    const D4 fall = bodyRecord(hs * gravity, Vec3::Zero());
    // On several threads, the substeps of the soft step (or of substeps without the separate
    // push or shock propagation) run as phases: the same operations in the same order, each
    // colour's batches shared out (they have no body that moves in common), so the result is
    // the same to the bit on any number of threads.
    const bool phased = st.threads() > 1 && track && !split && !shock;
    if (phased) {
        runSubstepsInPhases(st, SweepRecord{fall});
        stats_.threads = st.threads();
    }
    for (int sub = 0; sub < (phased ? 0 : substeps); ++sub) {
        if (track) {
            for (const int i : substepped_) {
                if (movable(i)) {
                    fv[std::size_t(i)].value += fall;
                }
            }
        } else {
            for (int i = 0; i < n; ++i) {
                if (awake(i)) {
                    sb[std::size_t(i)].v += hs * gravity;
                    fv[std::size_t(i)].value =
                        bodyRecord(sb[std::size_t(i)].v, sb[std::size_t(i)].w);
                }
            }
        }
        if (sub > 0) {
            buildJoints(st, hs);
        }
        warmStart(st);
        if (split) {
            // The velocities first, without the push out of penetrations: the sweeps' own
            // speculative approach stays; joints keep their correction.
            constexpr std::size_t kSaved = 11; // per batch: 4 biases, then 7 impulses
            static_assert(sizeof(LaneBlock) == sizeof(D4) && alignof(LaneBlock) >= alignof(D4));
            pushSaved_.resize(batches_.size() * kSaved);
            D4* saved = reinterpret_cast<D4*>(pushSaved_.data());
            for (std::size_t k = 0; k < batches_.size(); ++k) {
                LaneBatch& L = batches_[k];
                for (int r = 0; r < 4; ++r) {
                    saved[k * kSaved + std::size_t(r)] = L.sep[r];
                    if (!track) {
                        L.sep[r] = L.sep[r] < zero ? L.sep[r] : zero;
                    }
                }
            }
            for (int it = 0; it < settings.iterations; ++it) {
                sweep(st, false, hs);
            }
            if (shock) {
                propagateShock(st);
            }
            // Then the push, from there. It moves the positions only: the velocities and the
            // impulses are put back afterwards.
            pushVelocities_ = fv;
            for (std::size_t k = 0; k < batches_.size(); ++k) {
                LaneBatch& L = batches_[k];
                D4* at = saved + k * kSaved;
                for (int r = 0; r < 4; ++r) {
                    L.sep[r] = at[r];
                    at[4 + r] = L.lambdaN[r];
                }
                at[8] = L.lambdaT1;
                at[9] = L.lambdaT2;
                at[10] = L.lambdaTwist;
            }
            for (int it = 0; it < settings.relaxIterations; ++it) {
                sweep(st, true, hs);
            }
            if (!track) {
                syncToDoubles(st);
            }
            integratePositions(st);
            fv.swap(pushVelocities_);
            for (std::size_t k = 0; k < batches_.size(); ++k) {
                LaneBatch& L = batches_[k];
                const D4* at = saved + k * kSaved;
                for (int r = 0; r < 4; ++r) {
                    L.lambdaN[r] = at[4 + r];
                }
                L.lambdaT1 = at[8];
                L.lambdaT2 = at[9];
                L.lambdaTwist = at[10];
            }
            if (!track) {
                syncToDoubles(st);
            }
            continue;
        }
        for (int it = 0; it < settings.iterations; ++it) {
            sweep(st, true, hs);
        }
        if (shock) {
            propagateShock(st);
        }
        if (!track) {
            syncToDoubles(st);
        }
        integratePositions(st);
        // Relax: sweeps without the push out, so the velocity it took does not stay in the
        // bodies as energy (Catto's relax iterations, Box2D v3); the penetration has been
        // corrected in the positions above. Speculative contacts keep their allowed approach.
        if (settings.relaxIterations > 0) {
            if (!track) {
                for (LaneBatch& L : batches_) {
                    for (D4& bias : L.sep) {
                        bias = bias < zero ? bias : zero;
                    }
                }
            }
            dropJointBiases();
            for (int it = 0; it < settings.relaxIterations; ++it) {
                sweep(st, false, hs);
            }
            if (!track) {
                syncToDoubles(st);
            }
        }
    }
    stageEnds(stats_.stages.substeps);
    if (track) {
        finishSubsteps(st);
    }
    stageEnds(stats_.stages.poses);
    storeImpulses(st);
    stageEnds(stats_.stages.impulses);
    takeVelocities(st);

    maxJointError_ = 0;
    for (const RigidJoint& j : joints) {
        const auto anchors = jointAnchors(bodies, j);
        maxJointError_ = std::max(maxJointError_, (anchors[0] - anchors[1]).norm());
    }

    stageEnds(stats_.stages.velocities);
    sleepIslands(st);
    stageEnds(stats_.stages.sleep);
    stats_.solveMilliseconds = millisecondsSince(solveStart);
}

// Each manifold's bodies and each body's motion, compact, for the walks over the contact graph
// below (heights, islands, colours) and sleep at the end of the step (a body's motion does not
// change within it): they read these instead of the manifolds' records (650
// bytes each) and the bodies' (pyramid-100: four passes over 6.5 MB and 20,000 reads of
// bodies at random became one).
void RigidSolver::listManifoldBodies(Step& st) {
    std::vector<std::pair<int, int>>& pairs = manifoldBodies_;
    pairs.resize(manifolds_.size());
    st.inParts(manifolds_.size(), 2048, [&](int, std::size_t begin, std::size_t end) {
        for (std::size_t k = begin; k < end; ++k) {
            pairs[k] = {manifolds_[k].manifold.bodyA, manifolds_[k].manifold.bodyB};
        }
    });
    std::vector<std::uint8_t>& motion = bodyMotion_;
    motion.resize(std::size_t(st.n));
    for (int i = 0; i < st.n; ++i) {
        const RigidBody& b = st.bodies[i];
        motion[std::size_t(i)] = b.isDynamic()                        ? kDynamicMotion
                                 : b.motion == RigidMotion::Kinematic ? kKinematicMotion
                                                                      : kStaticMotion;
    }
}

// The relax sweeps' joints: no push out of their errors, limits only kept from closing.
void RigidSolver::dropJointBiases() {
    for (JointConstraint& c : jointRows_) {
        c.linearBias.setZero();
        c.angularBias.setZero();
        c.lowerBias = std::max<Real>(c.lowerBias, 0);
        c.upperBias = std::max<Real>(c.upperBias, 0);
    }
}

// The substep loop above (the path without the separate push and shock propagation) as phases
// on `threads` threads (core/base/PhaseRunner.h): gravity, the joints rebuilt, the warm start
// and every sweep one phase per colour, whose batches are shared out in parts (no two share a
// body that moves); the moves in parts of the bodies; the joints, the jointed bodies' poses and
// the batches left out of the colours (each its own colour) in one part.
void RigidSolver::runSubstepsInPhases(Step& st, const SweepRecord& fall) {
    const RigidSettings& settings = st.settings;
    const int threads = st.threads();
    const Real hs = st.hs;
    enum class Kind : std::uint8_t {
        Gravity,
        BuildJoints,
        WarmStart,
        Sweep,
        SolveJoints,
        Integrate,
        PoseJointed,
        DropJointBiases
    };
    struct Phase {
        int parts = 1;
        Kind kind = Kind::Gravity;
        bool withBias = false, takeMoves = false;
        std::size_t begin = 0, end = 0;
    };
    // One part per thread: the phases are short (a colour's sweep, 20-50 us in pyramid-100), and
    // more parts to claim cost more than the balance gains (2 x threads: 3.85 against 3.71 ms
    // on two threads, alternated).
    const int most = std::min(64, threads);
    const auto partsFor = [&](std::size_t count, std::size_t smallest) {
        return int(std::clamp<std::size_t>(count / smallest, 1, std::size_t(most)));
    };
    // The colours' batches, then the ones left out of the colours: those in one part, in
    // order (each is a colour of its own).
    struct Range {
        std::size_t begin, end;
        bool alone;
    };
    std::vector<Range> colours;
    std::size_t first = 0;
    for (const std::uint32_t end : colourBatchEnds_) {
        colours.push_back({first, end, false});
        first = end;
    }
    if (batches_.size() > uncolouredBatches_) {
        colours.push_back({uncolouredBatches_, batches_.size(), true});
    }
    const auto partsOf = [&](const Range& r) {
        return r.alone ? 1 : colourParts(r.end - r.begin, threads);
    };
    const bool joints = !jointRows_.empty();
    const std::size_t moved = substepped_.size();
    std::vector<Phase> phases;
    bool movesPending = !st.movesTaken;
    const auto addSweep = [&](bool withBias) {
        for (const Range& r : colours) {
            phases.push_back({partsOf(r), Kind::Sweep, withBias, movesPending, r.begin, r.end});
        }
        if (joints) {
            phases.push_back({1, Kind::SolveJoints});
        }
        movesPending = false;
    };
    for (int sub = 0; sub < st.substeps; ++sub) {
        phases.push_back({partsFor(moved, 512), Kind::Gravity, false, false, 0, moved});
        if (sub > 0 && joints) {
            phases.push_back({1, Kind::BuildJoints});
        }
        for (const Range& r : colours) {
            phases.push_back({partsOf(r), Kind::WarmStart, false, false, r.begin, r.end});
        }
        for (int it = 0; it < settings.iterations; ++it) {
            addSweep(true);
        }
        phases.push_back({partsFor(moved, 512), Kind::Integrate, false, false, 0, moved});
        if (!jointed_.empty()) {
            phases.push_back({1, Kind::PoseJointed});
        }
        movesPending = true;
        if (settings.relaxIterations > 0) {
            if (joints) {
                phases.push_back({1, Kind::DropJointBiases});
            }
            for (int it = 0; it < settings.relaxIterations; ++it) {
                addSweep(false);
            }
        }
    }
    std::vector<SweepRecord>& fv = sweepVelocities_;
    runPhases(st.team->arena, threads, phases, [&](const Phase& phase, int part) {
        const std::size_t count = phase.end - phase.begin;
        const std::size_t begin =
            phase.begin + count * std::size_t(part) / std::size_t(phase.parts);
        const std::size_t end =
            phase.begin + count * std::size_t(part + 1) / std::size_t(phase.parts);
        switch (phase.kind) {
        case Kind::Gravity:
            for (std::size_t k = begin; k < end; ++k) {
                const int i = substepped_[k];
                if (solverBodies_[std::size_t(i)].inverseMass > 0) {
                    fv[std::size_t(i)].value += fall.value;
                }
            }
            break;
        case Kind::BuildJoints:
            buildJoints(st, hs);
            break;
        case Kind::WarmStart:
            warmStartRange(begin, end);
            break;
        case Kind::Sweep:
            sweepRange(st, phase.withBias, phase.takeMoves, begin, end);
            break;
        case Kind::SolveJoints:
            solveJoints(st, hs);
            break;
        case Kind::Integrate:
            integrateMoves(st, begin, end);
            break;
        case Kind::PoseJointed:
            poseJointed(st);
            break;
        case Kind::DropJointBiases:
            dropJointBiases();
            break;
        }
    });
    st.movesTaken = !movesPending;
}

// Solver bodies (inverse masses) and their velocities, apart: the sweeps touch only the
// velocities, which then stay in the cache. Index n is the world.
void RigidSolver::prepareBodies(Step& st) {
    std::vector<RigidBody>& bodies = st.bodies;
    const int n = st.n;
    const bool stacking = st.stacking;
    // Sized only: every record is written whole in the parts below (zeroing them first, on
    // one thread, was 0.05 ms of pyramid-100's step on two), the world's record (n) here.
    solverBodies_.resize(std::size_t(n) + 1);
    velocities_.resize(std::size_t(n) + 1);
    solverBodies_[std::size_t(n)] = SolverBody{};
    velocities_[std::size_t(n)] = Velocity{Vec3::Zero(), Vec3::Zero()};
    std::vector<Vec3>& omegaBefore = omegaBefore_;
    std::vector<Mat3>& inertiaBefore = inertiaBefore_;
    omegaBefore.resize(std::size_t(n));
    inertiaBefore.resize(std::size_t(n));
    // Each body its own; the counts per part, added after. Counted in the part's own variables
    // and stored once: a count per part in a shared array, bumped per body, made the parts
    // pass its cache line back and forth (pyramid-100: 0.12 ms on two threads as on one).
    std::vector<std::size_t> awakeIn(mostParts(st.team), 0), sleepingIn(mostParts(st.team), 0);
    st.inParts(std::size_t(n), 512, [&](int part, std::size_t begin, std::size_t end) {
        std::size_t awake = 0, sleeping = 0;
        for (int i = int(begin); i < int(end); ++i) {
            RigidBody& b = bodies[i];
            SolverBody& s = solverBodies_[i];
            s = SolverBody{};
            s.x = b.x;
            s.friction = b.friction;
            s.height = stacking ? heights_[std::size_t(i)] : 0;
            Velocity& u = velocities_[std::size_t(i)];
            u = Velocity{Vec3::Zero(), Vec3::Zero()};
            if (b.isDynamic() && !b.sleeping) {
                // omega from L with the current inertia (§5 step 3-4; no external torques).
                // Gravity is added per substep.
                const Mat3 R = b.rotation();
                s.inverseInertia = R * b.inverseInertiaBody * R.transpose();
                inertiaBefore[i] = R * b.inertiaBody * R.transpose();
                b.omega = s.inverseInertia * b.L;
                u = {b.v, b.omega};
                s.inverseMass = b.inverseMass;
                ++awake;
            } else {
                inertiaBefore[i].setZero();
                if (b.motion == RigidMotion::Kinematic) {
                    u = {b.v, b.omega};
                }
            }
            omegaBefore[i] = u.w;
            if (b.isDynamic() && b.sleeping) {
                ++sleeping;
            }
        }
        awakeIn[std::size_t(part)] = awake;
        sleepingIn[std::size_t(part)] = sleeping;
    });
    for (std::size_t k = 0; k < awakeIn.size(); ++k) {
        stats_.awakeBodies += awakeIn[k];
        stats_.sleepingBodies += sleepingIn[k];
    }
}

} // namespace pbd
