#pragma once
// The rigid-body step (ALGORITHMS §5, source 004). Stages: apply gravity to v and torque to L
// and set omega = I^-1 L; detect contacts; wake touched islands; build the velocity
// constraints (contact normal rows [0, inf), two friction rows bounded by mu·lambda_n, joint
// rows); warm-start them; projected Gauss-Seidel sweeps in a random row order seeded per step;
// shock propagation (if chosen); integrate x += h v and R += h [omega]x R (as a quaternion,
// normalised); relax sweeps; put resting islands to sleep. With substeps (RigidSettings), the
// solve, move and relax repeat per substep on the contacts detected once (the soft step).
// Serial and deterministic: same input, same result.

#include "core/rigid/RigidCollision.h"
#include "core/rigid/RigidSettings.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace pbd {

struct ThreadTeam; // core/base/PhaseRunner.h

namespace rigid { // the step's parts (RigidStep.h)
struct JointConstraint;
struct LaneBatch;
struct LaneSources;
struct SweepRecord;
} // namespace rigid

// A contact point as solved in the last step: for views (glyphs, the contact force field) and
// tests. Impulses are N·s over the step; divided by h they are forces.
struct RigidContact {
    int bodyA = 0, bodyB = 0; // bodyA may be a static body; never -1
    Vec3 position = Vec3::Zero();
    Vec3 normal = Vec3::UnitY(); // from A to B
    Real separation = 0;
    Real normalImpulse = 0;
    Vec3 frictionImpulse = Vec3::Zero();
    std::uint32_t feature = 0;
};

struct RigidStatistics {
    std::size_t candidatePairs = 0; // pairs whose bounds overlap
    std::size_t reproxied = 0;      // shapes paired afresh: their bounds left the enlarged ones
    std::size_t manifolds = 0;      // touching shape pairs solved
    std::size_t points = 0;
    std::size_t rows = 0;               // scalar rows (a joint's block counts its rows)
    std::size_t warmStarted = 0;        // points that found their last impulse
    std::size_t reusedManifolds = 0;    // kept from the last step by aggressive sleep
    std::size_t refreshedManifolds = 0; // carried with their bodies, not detected again
    std::size_t awakeBodies = 0;
    std::size_t sleepingBodies = 0;
    std::size_t islands = 0;    // islands of dynamic bodies (awake and asleep)
    int maxHeight = 0;          // contact-graph distance of the highest body from a fixed one
    int threads = 1;            // the threads the substeps ran on (the soft step: the solver's)
    std::size_t uncoloured = 0; // manifolds beyond 64 colours, swept one by one after them
    double detectionMilliseconds = 0; // broadphase and narrowphase (bench: ms_rigid_detection)
    // The rest of the step: stack heights, islands, colours, rows, substeps, sleep (since
    // session 54 the heights, run beside the colouring, count here, no longer in detection).
    double solveMilliseconds = 0;
    // Where the solve's time went (bench: ms_rigid_stages): the walks over the contact graph
    // (stack heights, islands, colours), the bodies' solver records, the lane batches (rows),
    // the substeps (warm starts, sweeps, moves; with the joints' rows), the poses after them,
    // the impulses kept for the next step, the velocities back in the bodies (and the joints'
    // errors), and sleep.
    struct Stages {
        double graph = 0, bodies = 0, batches = 0, substeps = 0, poses = 0, impulses = 0,
               velocities = 0, sleep = 0;
    } stages;
};

class RigidSolver {
public:
    RigidSolver();
    ~RigidSolver();
    RigidSolver(RigidSolver&&) noexcept;
    RigidSolver& operator=(RigidSolver&&) noexcept;
    // A copy carries the warm start (manifolds, impulses, broadphase pairs) on: a solver state.
    RigidSolver(const RigidSolver&);
    RigidSolver& operator=(const RigidSolver&);

    // Advances the bodies by h. Joint indices refer to `bodies`. With a team of more than one
    // thread, the rows are built and the soft step's substeps run on it, with the same result
    // to the bit on any number of threads.
    void step(std::vector<RigidBody>& bodies, const std::vector<RigidJoint>& joints,
              const RigidSettings& settings, const Vec3& gravity, Real h,
              ThreadTeam* team = nullptr);
    // Forgets the cached contacts (warm start, aggressive sleep) and the step count that seeds
    // the row order; for a scene reset.
    void reset();

    const std::vector<RigidContact>& contacts() const;
    const RigidStatistics& statistics() const { return stats_; }
    // The largest distance between a joint's two anchors after the last step, m.
    Real maxJointError() const { return maxJointError_; }
    // What the next step reads of this solver, and no more: the broadphase's proxies and pairs,
    // the manifolds with their impulses (the warm start), the step count that seeds the row
    // order and the last step's report. The per-step scratch (rows, batches, lanes, colours)
    // is left out: a solver state for a frame cache costs the warm start, not the scratch
    // (pyramid-100: 22 MB and 8 ms per copy with it).
    RigidSolver warmStart() const;
    // Bytes its arrays hold: what a cached solver state costs.
    std::size_t memoryBytes() const;

private:
    struct CachedManifold {
        std::uint64_t key = 0;
        RigidManifold manifold;
        // The impulses: carried over from the last step's manifold of the pair at detection
        // (matched by feature; `warm` bits 0-3 say which points found theirs, bit 4 that the
        // pair was there), and this step's once solved.
        std::array<Real, 4> normalImpulse{};
        Vec3 frictionImpulse = Vec3::Zero(); // along t1, t2 and the twist about n
        std::uint8_t warm = 0;
        Vec3 xA = Vec3::Zero(), xB = Vec3::Zero(); // the bodies' positions when it was made
        // The manifold as detected and the bodies' poses then (for the refresh).
        RigidManifold made;
        Vec3 madeXA = Vec3::Zero(), madeXB = Vec3::Zero();
        Quat madeQA = Quat::Identity(), madeQB = Quat::Identity();
    };
    // What building the rows reads of a body, in one place.
    struct SolverBody {
        Real inverseMass = 0;
        Mat3 inverseInertia = Mat3::Zero();
        Vec3 x = Vec3::Zero();
        Real friction = 0;
        int height = 0; // contact-graph distance from a fixed body (stack stabilisation)
    };
    struct Velocity {
        Vec3 v, w;
    };
    struct Step; // what one step carries from stage to stage (RigidStep.h)

    // A shape in the broadphase: its bounds (with half the contact margin) and the enlarged
    // bounds its kept pairs were found with.
    struct BroadProxy {
        Bounds tight, fat;
        int body = -1, shape = -1;
    };
    struct ProxyPair {
        std::uint64_t key; // the pair's manifold key
        std::uint32_t p, q;
    };
    struct Candidate {
        std::uint64_t key;
        int a, sa, b, sb;
    };

    // Detection (RigidDetection.cpp).
    void broadphase(const std::vector<RigidBody>& bodies, const std::vector<RigidJoint>& joints,
                    const RigidSettings& settings, ThreadTeam* team);
    void repairProxies();
    void detect(std::vector<RigidBody>& bodies, const std::vector<RigidJoint>& joints,
                const RigidSettings& settings, ThreadTeam* team);
    void computeHeights();

    // The step's other stages, by file; step() (RigidSolver.cpp) runs them.
    void prepareBodies(Step& st);   // RigidSolver.cpp
    void colourManifolds(Step& st); // RigidContactSolver.cpp
    void buildBatches(Step& st);
    void warmStart(Step& st);
    void sweep(Step& st, bool withBias, Real hj); // the contacts, then the joints
    // The three above over the lane batches, compiled twice in a portable build (AVX2 or not,
    // core/base/InstructionSets.h).
    // A batch to build: its manifolds (count of them, at lanes) and where the step's random
    // generator stands when it draws its row order.
    struct BatchPlan {
        const std::uint32_t* lanes;
        int count;
        std::uint64_t randomState;
    };
    struct BuildCounts {
        std::size_t manifolds = 0, warmStarted = 0, points = 0, rows = 0;
    };
    void buildLaneBatches(Step& st, std::size_t begin, std::size_t end, BuildCounts& counts);
    void warmStartBatches(std::size_t begin, std::size_t end);
    void sweepBatches(Step& st, bool withBias, bool takeMoves, std::size_t begin, std::size_t end);
    // Batches [begin, end) only (within a colour, for the parts of a phase).
    void warmStartRange(std::size_t begin, std::size_t end);
    void sweepRange(Step& st, bool withBias, bool takeMoves, std::size_t begin, std::size_t end);
    void propagateShock(Step& st);
    void storeImpulses(Step& st);
    void buildJoints(Step& st, Real hj); // RigidJointSolver.cpp
    void solveJoints(Step& st, Real hj);
    void beginSubsteps(Step& st); // RigidIntegration.cpp
    void integratePositions(Step& st);
    void integrateMoves(Step& st, std::size_t begin, std::size_t end);
    void dropJointBiases();
    void runSubstepsInPhases(Step& st, const rigid::SweepRecord& fall);
    void poseJointed(Step& st);
    void syncToDoubles(Step& st);
    void finishSubsteps(Step& st);
    void takeVelocities(Step& st);
    void turnThroughL(Step& st, RigidBody& b, int i);
    std::pair<Vec3, Quat> poseAfterSubsteps(int i) const;
    void uniteIslands(Step& st); // RigidIslands.cpp
    void listManifoldBodies(Step& st);
    void sleepIslands(Step& st);

    std::vector<BroadProxy> proxies_;
    std::vector<std::uint8_t> reproxied_;
    std::vector<ProxyPair> proxyPairs_; // by key: the shapes whose enlarged bounds overlap
    bool proxyPairsValid_ = false;
    std::vector<std::uint32_t> proxyFirst_; // per body, its first proxy (then the count)
    std::vector<Candidate> candidates_;
    std::vector<std::vector<Candidate>> partCandidates_; // the broadphase's, per part
    // Per candidate, in detection: what it becomes, the last step's manifold of its pair, and
    // its place among this step's manifolds.
    std::vector<std::uint8_t> candidateFates_;
    std::vector<const CachedManifold*> candidateOlds_;
    std::vector<std::uint32_t> candidatePlaces_;
    std::vector<CachedManifold> manifolds_; // this step's, sorted by key; next step's cache
    std::vector<CachedManifold> previous_;
    std::vector<SolverBody> solverBodies_;
    std::vector<Velocity> velocities_;
    std::vector<Vec3> omegaBefore_; // per body: omega and the world inertia at the step's start
    std::vector<Mat3> inertiaBefore_;
    std::vector<int> heights_;
    std::vector<int> adjacencyFirst_, adjacency_; // the contact graph (computeHeights)
    std::vector<int> islandParents_;              // the islands' union-find (uniteIslands)
    std::vector<int> heightQueue_;                // its breadth-first queue
    std::vector<std::uint8_t> solved_; // per manifold: solved in the last step (reported)
    int reportSubsteps_ = 1;
    mutable std::vector<RigidContact> contacts_; // made from the manifolds when asked for
    mutable bool contactsStale_ = false;
    std::vector<rigid::JointConstraint> jointRows_;
    std::vector<rigid::LaneBatch> batches_; // the manifolds in colours, eight at a time, then the
                                            // ones left out of the colours, one per batch
    std::vector<rigid::LaneSources> laneSources_; // per batch
    // Where each colour's batches end in batches_ (batches of one colour share no body that
    // moves), and where the batches left out of the colours begin (each a colour of its own).
    std::vector<std::uint32_t> colourBatchEnds_;
    std::size_t uncolouredBatches_ = 0;
    std::vector<BatchPlan> batchPlan_;
    // Per body, the velocity and, with substeps, the move and turn since the step's start (in
    // floats, for the lanes).
    std::vector<rigid::SweepRecord> sweepVelocities_, sweepMoves_;
    struct SubstepTurn {
        float x = 0, y = 0, z = 0, w = 1; // a unit quaternion
    };
    std::vector<SubstepTurn> turns_; // per body: its turn since the step's start
    std::vector<Quat> startOrientations_;
    std::vector<int> substepped_, jointed_; // the bodies moved per substep; the jointed ones
    // Separate push: the velocities before the push sweeps, and per batch the biases and
    // impulses (a block of lanes each).
    struct alignas(32) LaneBlock {
        float lanes[8];
    };
    std::vector<rigid::SweepRecord> pushVelocities_;
    std::vector<LaneBlock> pushSaved_;
    std::vector<std::uint64_t> colours_; // per body: the colours its manifolds are in
    // Per manifold its bodies, per body its motion (kDynamicMotion, ...): listManifoldBodies.
    std::vector<std::pair<int, int>> manifoldBodies_;
    std::vector<std::uint8_t> bodyMotion_;
    static constexpr std::uint8_t kStaticMotion = 0, kDynamicMotion = 1, kKinematicMotion = 2;
    std::vector<std::uint8_t> bodyFlags_;
    std::vector<std::uint32_t> colourCounts_, colourSorted_; // ordering each colour
    std::vector<std::uint8_t> manifoldDeep_;                 // sleep's compact input
    RigidStatistics stats_;
    Real maxJointError_ = 0;
    std::uint64_t steps_ = 0;
};

} // namespace pbd
