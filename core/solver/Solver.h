#pragma once
// The position-based solver: steps a Scene with XPBD (default) or classic PBD (PBD §3.1,
// XPBD §3). Each substep predicts positions from velocities and gravity, pins hard attachments,
// sweeps the constraint colours `iterations` times (a colour's constraints share no particle,
// so its lanes run in SIMD and its chunks on TBB threads), then updates velocities and applies
// damping. Results are bitwise identical run to run for the same thread count: a colour's
// elements touch disjoint particles and every reduction runs in a fixed order, but each thread
// sweeps its own range of particles before the boundary between ranges, so the order of the
// sweep (and so the result, slightly) depends on the thread count.

#include "core/air/AirOptimizer.h"
#include "core/constraints/Constraints.h"
#include "core/rigid/RigidCoupling.h"
#include "core/rigid/RigidSolver.h"
#include "core/scene/Scene.h"
#include "core/solver/ContinuousCollision.h"
#include "core/solver/MovingMeshCollider.h"
#include "core/solver/SelfCollision.h"
#include "core/solver/Tearing.h"

#include <array>
#include <chrono>
#include <exception>
#include <memory>
#include <string>
#include <vector>

namespace pbd {

// Predicted position and inverse mass of a particle, padded to 32 bytes so the SIMD kernels
// gather one particle with one load.
struct alignas(32) SolverParticle {
    Real x, y, z, w;
};

// The air mesh in the last step (Air Meshes §4): air tets with non-positive volume at the
// predicted positions before the first iteration of the last substep; air tets inverted after
// the step (negative beyond rounding: a projected tet is flat, C = 0); the smallest air tet
// volume after the step (m^3; in 2D scenes the smallest air triangle's area, m^2); and the air
// projections done in the step.
struct AirStatistics {
    std::size_t invertedBefore = 0;
    std::size_t invertedAfter = 0;
    // Inverted after the step too, but none of their corners can move (an animated skin's
    // vertices, pins, the container): what moves them inverted them (a skin folding through
    // itself), and no projection can mend them. Not in invertedAfter; not checked or projected.
    std::size_t invertedFixed = 0;
    Real minVolume = 0;
    std::size_t projections = 0;
    std::size_t checks = 0; // air tets checked (tets x iterations x substeps)
    // Time spent projecting the inverted air (and the second pass and the rounds after the
    // last iteration), the sign checks not included, ms.
    double projectionMilliseconds = 0;
    // The air's whole time, its sign checks included: from the end of the phase before each
    // round's checks to the end of its projection (wall clock, however many threads), ms.
    double milliseconds = 0;
    // The second pass: vertex-face pairs across the air, and those that acted (held at the
    // contact distance) in the last substep.
    std::size_t contactPairs = 0;
    std::size_t contacts = 0;
    // Free air points moved into the kernel of their star after the last iteration (a body
    // had closed over them and the rounds could not mend their tets).
    std::size_t relocatedPoints = 0;
};

struct KernelCost {
    ConstraintType type;
    std::size_t projections = 0; // element projections measured (a strain tet is one)
    double nanosecondsPerProjection = 0;
};

// What a step reads that is not in the scene: the simulated time and step count (moving
// attachment targets, the air's optimisation interval) and the rigid bodies' warm start (their
// contact manifolds with the impulses, the broadphase's pairs, the particles' contacts with
// them). With the scene as it was, it lets a solver go on bit for bit where another one was
// (frame caches, copies). Particle and air scenes need nothing else: the air optimiser builds
// the same adjacency again from the tets.
struct SolverState;
// Bytes a state holds (the rigid warm start; a few bytes without rigid bodies).
std::size_t memoryBytes(const SolverState& state);

class Solver {
public:
    // Colours the scene's constraints if they are not coloured yet. The scene must outlive the
    // solver and keep its particle count.
    explicit Solver(Scene& scene);
    ~Solver();
    Solver(const Solver&) = delete;
    Solver& operator=(const Solver&) = delete;

    // Advances the scene by scene.solver.timeStep (all substeps).
    void step();
    // The state to go on from after this step (see SolverState), and going on from one: the
    // scene must be the one the state was taken with (a copy of it, as it was then).
    std::shared_ptr<const SolverState> state() const;
    void restore(const SolverState& state);
    // A state at `time` after `steps` steps with no rigid warm start (contacts found afresh):
    // to go on from a scene state kept without its solver.
    static std::shared_ptr<const SolverState> coldState(Real time, std::size_t steps);
    // Simulated time since construction, s.
    Real time() const { return time_; }
    std::size_t stepCount() const { return steps_; }
    // Wall time of the last step, ms.
    double lastStepMilliseconds() const { return lastStepMs_; }
    // Of that, posing and skinning the characters (all substeps), ms.
    double lastSkinningMilliseconds() const { return skinningMs_; }
    // Of that, continuous collision with the air mended around what it held (all substeps), ms.
    double lastHoldMilliseconds() const { return holdMs_; }

    // Measures each constraint type's kernel alone, `sweeps` sweeps over all its colours on one
    // thread, on a scratch copy of the current state (the scene is not changed).
    std::vector<KernelCost> measureKernels(int sweeps) const;
    // Nanoseconds per air constraint check (the sign of one air tet's determinant, the common
    // case of the air projection) over `sweeps` sweeps of all air tets on one thread, at the
    // current positions; 0 without air.
    double measureAirCheck(int sweeps);

    const Scene& scene() const { return scene_; }
    // Contacts with colliders in the last substep.
    const std::vector<Contact>& contacts() const { return contacts_; }
    // Of the last substep: particles searched against the moving meshes (characters' skins),
    // and those whose search was skipped, remembered too far from them to touch them.
    std::size_t skinSearches() const { return skinSearched_; }
    std::size_t skinSearchesSkipped() const { return skinSkipped_; }
    // Convergence record: with it on, the largest constraint error |C + alpha~ lambda| (|C| for
    // PBD) over all batch constraints after each iteration of the last substep. It costs an
    // extra evaluation of every constraint per iteration, so it is off by default.
    void setRecordConvergence(bool on) { recordConvergence_ = on; }
    const std::vector<Real>& convergence() const { return convergence_; }
    // The same error at the end of the last step (0 before any): one evaluation of every
    // constraint, for a status display.
    Real constraintError() const;
    // The tears of the last step (PBD §5).
    const std::vector<TearEvent>& tears() const { return tears_; }
    const AirStatistics& airStatistics() const { return airStatistics_; }
    // Continuous collision (SolverSettings::continuousCollision) over the last step's
    // substeps, summed (zero with it off).
    const ContinuousCollisionStatistics& continuousCollision() const { return continuousStats_; }
    // The air-mesh optimisation: the last pass (all zero if none ran in the last step), the
    // passes so far and their total wall time, and a counter that changes whenever a pass
    // changed the air tets (views redraw the air when it moves).
    const AirOptimizationStatistics& airOptimization() const { return airOptimization_; }
    std::size_t airOptimizationPasses() const { return airOptimizationPasses_; }
    double airOptimizationMilliseconds() const { return airOptimizationMs_; }
    std::uint64_t airTopologyVersion() const { return airTopologyVersion_; }
    // The rigid-body solver: contacts and statistics of the last substep.
    const RigidSolver& rigid() const { return rigid_; }
    const RigidCoupling& rigidCoupling() const { return coupling_; }
    // Cloth self-collision contacts in the last substep.
    const std::vector<SelfContact>& selfContacts() const { return selfContacts_; }
    // A run that has collapsed into itself: self-collision found more than
    // kRunawaySelfContacts contacts per particle that takes part in it (a cloth crumpled
    // smaller than its thickness; each substep's query stops there, so memory stays bounded).
    // The message names the step's count; "" when the run is sound.
    static constexpr std::size_t kRunawaySelfContacts = 64;
    std::string runaway() const;
    // What to say when step() threw (std::bad_alloc: a runaway asked for more memory than there
    // is). The solver is then unusable (its step stopped halfway): build another. The scene's
    // particles hold the last step that finished.
    static std::string stepFailure(const std::exception& e, long step);

private:
    void substep(Real h);
    void refreshPbdScales();
    void runSubstepPhases(Real h);
    void holdParticles();
    void collectSurfaceTriangles(std::vector<Triangle>& triangles) const;

    Scene& scene_;
    RigidSolver rigid_;
    RigidCoupling coupling_;
    void prepareContacts(int parts); // parts: the findContacts parts to come
    void findContacts(int part, int parts);
    void mergeContacts();
    void solveSelfContacts();
    // The contacts [first, last) of contacts_; contactPartBegins_[k] is where part k's begin
    // (each part's contacts are those of its particles), with the end last.
    void solveContacts(std::size_t first, std::size_t last);
    void applyContactVelocities(Real h);

    std::vector<SolverParticle> predicted_;
    std::vector<Contact> contacts_;
    std::vector<Bounds> colliderBounds_;
    // Characters: their colliders posed at the substep's end, with the skin's velocities, and
    // the search structures of the colliders they move (indexed by collider).
    void animateCharacters(Real h);
    std::vector<MovingMeshCollider> movingColliders_;
    // The skins' searches remembered (findContacts): a particle's clearance from every moving
    // mesh when last searched, where it was and the skins' travel until then. While it cannot
    // have come within its contact distance since (the skins' travel and its own path), the
    // search is skipped: no contact either way.
    struct SkinClearance {
        Vec3 from = Vec3::Zero();
        Real outside = -1; // the nearest skin found: outside by this much (< 0: not known)
        Real bound = 0;    // the skins' searches that found nothing: nothing within this
        Real travel = 0;   // skinTravel_ when measured
    };
    std::vector<SkinClearance> skinClearance_;
    Real skinTravel_ = 0; // the skins' largest vertex moves, summed over the substeps
    Real skinReach_ = 0;  // the moving meshes' largest search reach, this substep
    std::size_t skinSearched_ = 0, skinSkipped_ = 0;
    std::vector<std::vector<Vec3>> characterStart_; // skin at characterTime_, per character
    std::vector<std::vector<Vec3>> skinStart_;      // skin at the current substep's start
    Real characterTime_ = -1;
    std::vector<Affine3> characterScratch_;
    double skinningMs_ = 0;
    double holdMs_ = 0;
    std::vector<Vec3> scratchGradient_;
    std::vector<Real> scratchInverseMasses_;
    std::vector<SelfContact> selfContacts_;
    SelfCollisionWorkspace selfCollisionWorkspace_;
    std::vector<Triangle> contactTriangles_; // cloth and soft-body surfaces (this substep's)
    ContinuousCollision continuous_;
    ContinuousCollisionStatistics continuousStats_;
    std::vector<Triangle> continuousTriangles_; // the surfaces, then the moving skins
    std::vector<Vec3> continuousStart_, continuousEnd_;
    std::vector<std::uint8_t> holdable_;
    std::vector<Index> heldParticles_; // by the last substep's continuous collision
    std::vector<Real> zoneWeights_;
    // A cache line each: the parts grow their lists at once (a list's size beside another
    // part's would pass the line between the threads at every contact).
    struct alignas(64) ContactPart {
        std::vector<Contact> contacts;
        std::vector<SelfContact> selfContacts;
        std::vector<Index> candidates;
        std::size_t skinSearched = 0, skinSkipped = 0; // particles, this substep
        bool selfContactsCut = false;                  // the runaway limit stopped the query
    };
    bool selfContactsCut_ = false;
    std::vector<ContactPart> contactParts_;
    std::vector<std::size_t> contactPartBegins_;
    std::vector<TearEvent> tears_;
    AirStatistics airStatistics_;
    std::unique_ptr<AirOptimizer> airOptimizer_;
    AirOptimizationStatistics airOptimization_;
    std::size_t airOptimizationPasses_ = 0;
    double airOptimizationMs_ = 0;
    std::uint64_t airTopologyVersion_ = 0;
    void optimizeAir();
    std::vector<AirContactPair> airPairs_;
    std::vector<Real> airPairGap_;            // per pair: normal separation added in the substep
    std::vector<std::uint32_t> airPairsHeld_; // the pairs whose gap is no longer 0
    std::uint64_t airPairsVersion_ = ~std::uint64_t(0);
    // The second pass in two halves: the pairs that act on the positions the projections
    // left, found on all threads (findAirPairsNear, into airPairsNear_ per part, in pair
    // order), then projected in pair order on one (keepAirDistance), with every later pair
    // of a particle a projection moved checked again in its turn: the pass one by one.
    void findAirPairsNear(int part, int parts);
    void keepAirDistance();
    void refreshAirPairIncidence(); // particle -> its pairs, whenever airPairs_ is made
    std::vector<std::vector<std::uint32_t>> airPairsNear_;
    std::vector<std::uint32_t> airPairIncidenceStart_, airPairIncidence_;
    std::vector<std::uint64_t> airPairPending_, airPairFound_;
    std::size_t applyAirFriction(); // returns the contacts that acted
    // The container's walls, when it is a box (every immovable air point on the faces of
    // their bounding box): body particles are kept airContactDistance inside them, with
    // friction, whatever the tessellation of the layer between (keepAirWalls).
    struct AirWallContact {
        Index particle;
        int wall; // axis * 2 + (0: the low wall, 1: the high one)
        Real gap; // separation added this substep
    };
    void findAirWallContacts();
    void keepAirWalls();
    std::size_t applyAirWallFriction();
    std::vector<AirWallContact> airWallContacts_;
    Vec3 airWallLow_ = Vec3::Zero(), airWallHigh_ = Vec3::Zero();
    bool airWalls_ = false;
    std::size_t airWallsFor_ = ~std::size_t(0); // particle count the walls were found for
    // Per particle: its body's index, or kContainer / kFreeAir for the air's own points.
    static constexpr int kNoOwner = -3, kFreeAir = -2, kContainer = -1;
    std::vector<int> particleOwner_;
    // The inverse mass the air's free points take in the projection: a body particle's on
    // average (see Solver::step).
    Real airPointWeight_ = 0;
    std::vector<Real> airContactGap_;           // per air tet: separation added this substep
    std::vector<std::uint32_t> airContactTets_; // the air tets with a gap this substep
    // The final re-checks: particle -> air element incidence, and scratch.
    std::vector<std::uint32_t> airIncidenceStart_, airIncidence_;
    std::vector<std::vector<std::uint32_t>> airIncidenceParts_; // scratch of its parallel build
    std::uint64_t airIncidenceVersion_ = ~std::uint64_t(0);
    std::size_t airIncidenceElements_ = 0;
    std::vector<std::uint32_t> airMoved_;
    // Per air element: seen in this round of the air's rounds; per particle: in this round, or
    // in this contact pass.
    Marks airSeen_, airCornerSeen_;
    void refreshAirIncidence();
    AirOptimizationOptions airOptimizationOptions() const; // the scene's, for every pass
    void noteAirContact(std::uint32_t element, const Index* corners, const Vec3* g, int n, Real s);
    std::vector<std::vector<std::uint32_t>> airInverted_; // per part: tets found inverted
    // The phases' clock for the air's share, and whether the last projection left the air for
    // the final check and rounds (runSubstepPhases).
    std::chrono::steady_clock::time_point airRoundStart_, airProjectionStart_;
    void endAirRound(); // the round's times into airStatistics_
    bool airFinishing_ = false;
    void checkAir(int part, int parts);
    // `friction`: the contacts' friction acts, on the separation added since it last did.
    // After the last iteration it returns whether the air needs the final check and rounds
    // (finishAir), which the check's parts (checkAir) run between.
    // The projections of the inverted tets (projectAirPasses) and, when the second pass has
    // no phase of its own (splitAirPairs), the rest: projectAirContacts.
    bool projectAir(bool lastIteration, bool friction, bool splitAirPairs);
    bool projectAirContacts(bool lastIteration, bool friction);
    void finishAir();
    // Before continuous collision's mending (holdParticles): the air tets inverted since the
    // substep's start whose corners `held` (particles held this substep, w = 0) all are get
    // the inverse masses of those corners back.
    void releaseShutAir(const std::vector<Index>& held);
    // C after a projection, relative to the element's size; `rounds`: those after the last
    // iteration (finishAir), whose moves are also bounded by the elements' sizes at the start.
    void projectAirPasses(Real slack, bool rounds = false);
    // The rounds after the corner rounds: each tet body moves as one (see projectAir).
    void projectAirAsSolids(Real slack);
    std::vector<Real> airSolidWeight_; // per body: 1 / its mass, 0 when it does not move as one
    std::vector<std::uint32_t> airMovedBodies_; // bodies moved whole this round
    Marks airBodySeen_;
    std::vector<Real> airBodyTravel_; // per body: how far those rounds translated it
    // The re-checks after the last iteration: rounds over the elements around what moved.
    // solids: each tet body moves as one (projectAirAsSolids), for what corner rounds left.
    template <class Inverted>
    void runAirRounds(std::vector<std::uint32_t>& found, const Inverted& inverted, bool solids);
    // Moves the free points of the still-inverted tets `found` into their star's kernel where
    // it is not empty; whether any moved.
    bool relocateTrappedAirPoints(const std::vector<std::uint32_t>& found);
    bool recordConvergence_ = false;
    Real lastInvH2_ = 0; // 1 / h^2 of the last substep
    std::vector<Real> convergence_;
    std::vector<Vec3> predictedPositions_;
    Real time_ = 0;
    std::size_t steps_ = 0;
    double lastStepMs_ = 0;
    int pbdScaleIterations_ = -1;
    struct Threads;
    std::unique_ptr<Threads> threads_;
};

} // namespace pbd
