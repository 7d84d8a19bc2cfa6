#include "core/solver/Solver.h"

#include "core/base/PhaseRunner.h"
#include "core/constraints/ConstraintDamping.h"
#include "core/constraints/ConstraintVisit.h"
#include "core/scene/Topology.h"
#include "core/solver/Damping.h"
#include "core/solver/KernelPaths.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

namespace pbd {

std::string_view toString(SolverMethod method) {
    return method == SolverMethod::Xpbd ? "xpbd" : "pbd";
}

struct Solver::Threads : ThreadTeam {
    explicit Threads(int n)
        : ThreadTeam(n) {}
    ColourRegions regions;
};

namespace {

// An isometric hinge's lambda (a vector) along its scalar form's gradient, grad_k C = K_k u
// (ConstraintVisit), u read from the gradient of the particle with the largest weight.
Real isometricLambdaAlong(const BendingConstraints& b, std::size_t e, const math::V3<Real>* g) {
    const Real K[4] = {b.weight[0][e], b.weight[1][e], b.weight[2][e],
                       -(b.weight[0][e] + b.weight[1][e] + b.weight[2][e])};
    int k = 0;
    for (int i = 1; i < 4; ++i) {
        k = std::abs(K[i]) > std::abs(K[k]) ? i : k;
    }
    if (!(std::abs(K[k]) > 0)) {
        return 0;
    }
    const math::V3<Real> u = g[k] * (1 / K[k]);
    return b.lambda[0][e] * u.x + b.lambdaYZ[0][e] * u.y + b.lambdaYZ[1][e] * u.z;
}

// The largest |C + alpha~ lambda| (|C| for PBD) of all batch constraints at the positions P.
Real largestConstraintError(const ConstraintSet& set, const SolverParticle* P, Real invH2,
                            bool xpbd) {
    Real worst = 0;
    visitConstraints(
        set, [&](Index i) { return Vec3(P[i].x, P[i].y, P[i].z); },
        [&](ConstraintType, const auto& b, int comp, std::size_t e, Real c,
            const math::V3<Real>* g) {
            const Real alphaTilde = xpbd ? b.compliance[comp][e] * invH2 : 0.0;
            Real lambda = b.lambda[comp][e];
            if constexpr (std::is_same_v<std::remove_cvref_t<decltype(b)>, BendingConstraints>) {
                if (b.model == BendingModel::Isometric) {
                    lambda = isometricLambdaAlong(b, e, g);
                }
            }
            worst = std::max(worst, std::abs(c + alphaTilde * lambda));
        });
    return worst;
}

// Soft attachments: zero-length XPBD springs to a moving target, one particle each, in order.
void solveAttachments(Attachments& a, SolverParticle* P, Real targetTime, Real invH2, bool xpbd) {
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a.compliance[i] <= 0) {
            continue; // hard: pinned during prediction
        }
        SolverParticle& q = P[a.particle[i]];
        const Vec3 target = a.targetAt(i, targetTime);
        const Vec3 d = Vec3(q.x, q.y, q.z) - target;
        const Real len = d.norm();
        if (!(len > 0) || !(q.w > 0)) {
            continue;
        }
        const Real alphaTilde = xpbd ? a.compliance[i] * invH2 : 0;
        const Real dl = (-len - alphaTilde * a.lambda[i]) / (q.w + alphaTilde);
        const Vec3 dp = (q.w * dl / len) * d;
        q.x += dp.x();
        q.y += dp.y();
        q.z += dp.z();
        a.lambda[i] += dl;
    }
}

// Waiting for the parts of earlier phases; `iterations` sweeps of the colours (then the serial
// attachments) run with one fork-join per substep instead of one per colour. The results do not
// depend on which thread ran which part.
// One global pressure constraint (PBD eq. 14-15) per closed surface, serially.
void solvePressure(std::vector<PressureConstraint>& all, SolverParticle* P, Real invH2, bool xpbd,
                   int iterations, std::vector<Vec3>& grad) {
    for (PressureConstraint& c : all) {
        const Real C = evaluatePressure(
            c, [&](Index i) { return Vec3(P[i].x, P[i].y, P[i].z); }, grad);
        Real denom = 0;
        for (std::size_t k = 0; k < c.particles.size(); ++k) {
            denom += P[c.particles[k]].w * grad[k].squaredNorm();
        }
        const Real alphaTilde = xpbd ? c.compliance * invH2 : 0;
        const Real scale =
            xpbd ? 1.0 : 1.0 - std::pow(1.0 - std::clamp(c.stiffness, 0.0, 1.0), 1.0 / iterations);
        if (!(denom + alphaTilde > 0)) {
            continue;
        }
        const Real dl = scale * (-C - alphaTilde * c.lambda) / (denom + alphaTilde);
        for (std::size_t k = 0; k < c.particles.size(); ++k) {
            SolverParticle& q = P[c.particles[k]];
            const Vec3 dp = q.w * dl * grad[k];
            q.x += dp.x();
            q.y += dp.y();
            q.z += dp.z();
        }
        c.lambda += dl;
    }
}

int resolveThreads(int requested) {
    return requested > 0 ? requested : tbb::this_task_arena::max_concurrency();
}

} // namespace

Real Solver::constraintError() const {
    if (predicted_.size() != scene_.particles.size() || !(lastInvH2_ > 0)) {
        return 0;
    }
    return largestConstraintError(scene_.constraints, predicted_.data(), lastInvH2_,
                                  scene_.solver.method == SolverMethod::Xpbd);
}

Solver::Solver(Scene& scene)
    : scene_(scene) {
    if (!scene_.constraints.isColoured() && scene_.constraints.batchElementCount() > 0) {
        colourConstraints(scene_.constraints, scene_.particles.size());
    }
    predicted_.resize(scene_.particles.size());
}

Solver::~Solver() = default;

void Solver::refreshPbdScales() {
    const int n = std::max(1, scene_.solver.iterations);
    forEachBatch(scene_.constraints, [&](auto& b) {
        for (std::size_t k = 0; k < b.stiffness.size(); ++k) {
            b.pbdScale[k].resize(b.stiffness[k].size());
            for (std::size_t e = 0; e < b.stiffness[k].size(); ++e) {
                const Real s = std::clamp(b.stiffness[k][e], 0.0, 1.0);
                b.pbdScale[k][e] = 1.0 - std::pow(1.0 - s, 1.0 / n); // PBD §3.3
            }
        }
    });
    pbdScaleIterations_ = n;
}

void Solver::step() {
    const auto t0 = std::chrono::steady_clock::now();
    selfContactsCut_ = false;
    const SolverSettings& s = scene_.solver;
    const int substeps = std::max(1, s.substeps);
    const int threads = resolveThreads(s.threads);
    if (!threads_ || threads_->count != threads) {
        threads_ = std::make_unique<Threads>(threads);
    }
    if (s.method == SolverMethod::Pbd && pbdScaleIterations_ != std::max(1, s.iterations)) {
        refreshPbdScales();
    }
    const Real h = s.timeStep / substeps;
    airStatistics_ = AirStatistics{};
    continuousStats_ = ContinuousCollisionStatistics{};
    skinningMs_ = 0;
    holdMs_ = 0;
    if (!scene_.air.empty()) {
        // What the air's passes read of its connectivity, again after the optimisation changed
        // it: the vertex-face pairs across it and the particles' incidence, on every thread.
        const auto began = std::chrono::steady_clock::now();
        threads_->arena.execute([&] {
            if ((s.airContactDistance > 0 || s.airFriction > 0) &&
                airPairsVersion_ != airTopologyVersion_) {
                airPairs_ = airContactPairs(scene_, airOptimizer_ ? airOptimizer_->adjacency(scene_)
                                                                  : nullptr);
                airPairGap_.assign(airPairs_.size(), 0);
                airPairsHeld_.clear();
                airPairsVersion_ = airTopologyVersion_;
                refreshAirPairIncidence();
            }
            refreshAirIncidence();
        });
        airStatistics_.milliseconds +=
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began)
                .count();
    }
    if (!scene_.air.empty() && particleOwner_.size() != scene_.particles.size()) {
        // Who each particle belongs to, for the air's contacts: a body, the container (the
        // air's immovable points) or the air itself (its free points).
        particleOwner_.assign(scene_.particles.size(), kNoOwner);
        for (std::size_t b = 0; b < scene_.bodies.size(); ++b) {
            const Body& body = scene_.bodies[b];
            std::fill_n(particleOwner_.begin() + body.firstParticle, body.particleCount, int(b));
        }
        for (Index i = 0; i < scene_.air.particleCount; ++i) {
            const Index p = scene_.air.firstParticle + i;
            particleOwner_[p] = scene_.particles.inverseMasses[p] > 0 ? kFreeAir : kContainer;
        }
        // The air's free points (Steiner points the tessellation added) are not matter: they
        // carry no momentum (each substep starts them where they are) and weigh, in the air's
        // projection, what a body particle weighs on average, whatever mass the scene stored.
        // A point caught between two bodies that close in must pass their push on: a point
        // 1,000 times lighter takes 99.9% of every correction, so the bodies meet its
        // resistance only after thousands of sweeps, and with momentum the points the bodies
        // pushed kept flying through the air and inverted it further (air-dancer-scale: 52,375
        // of 165,494 air tets inverted after 120 steps; see docs/air-meshes.md).
        Real mass = 0;
        std::size_t count = 0;
        for (const Body& body : scene_.bodies) {
            for (Index p = body.firstParticle; p < body.firstParticle + body.particleCount; ++p) {
                const Real w = scene_.particles.inverseMasses[p];
                if (w > 0) {
                    mass += 1 / w;
                    ++count;
                }
            }
        }
        airPointWeight_ = count > 0 && mass > 0 ? Real(count) / mass : 1;
    }
    for (int i = 0; i < substeps; ++i) {
        substep(h);
    }
    // The optimisation's quality pass and the statistics below run on the solver's threads.
    threads_->arena.execute([&] { optimizeAir(); });
    if (!scene_.air.empty()) {
        const auto talliedFrom = std::chrono::steady_clock::now();
        const auto& x = scene_.particles.positions;
        const std::vector<Tetrahedron>& tets = scene_.air.tets;
        struct Tally {
            Real smallest = std::numeric_limits<Real>::infinity();
            std::size_t inverted = 0;
            std::size_t fixed = 0;
        };
        const SolverParticle* P = predicted_.data(); // w: what could move in the last substep
        const Tally tally = threads_->arena.execute([&] {
            return tbb::parallel_reduce(
                tbb::blocked_range<std::size_t>(0, tets.size(), 16384), Tally{},
                [&](const tbb::blocked_range<std::size_t>& r, Tally sum) {
                    for (std::size_t k = r.begin(); k < r.end(); ++k) {
                        const Tetrahedron& t = tets[k];
                        const Real v = signedVolume(x[t[0]], x[t[1]], x[t[2]], x[t[3]]);
                        sum.smallest = std::min(sum.smallest, v);
                        if (v < 0) {
                            // A projected tet is flat (C = 0) up to rounding; inverted means
                            // beyond that.
                            Real edge = 0;
                            for (int i = 0; i < 4; ++i) {
                                for (int j = i + 1; j < 4; ++j) {
                                    edge = std::max(edge, (x[t[i]] - x[t[j]]).squaredNorm());
                                }
                            }
                            const bool inverted = v < -1e-9 * edge * std::sqrt(edge);
                            const bool fixed = !(P[t[0]].w > 0) && !(P[t[1]].w > 0) &&
                                               !(P[t[2]].w > 0) && !(P[t[3]].w > 0);
                            sum.inverted += inverted && !fixed;
                            sum.fixed += inverted && fixed;
                        }
                    }
                    return sum;
                },
                [](Tally a, const Tally& b) {
                    return Tally{std::min(a.smallest, b.smallest), a.inverted + b.inverted,
                                 a.fixed + b.fixed};
                });
        });
        Real smallest = tally.smallest;
        airStatistics_.invertedAfter += tally.inverted;
        airStatistics_.invertedFixed += tally.fixed;
        for (const Triangle& t : scene_.air.triangles) {
            const Vec3 a = x[t[1]] - x[t[0]], b = x[t[2]] - x[t[0]];
            const Real area = 0.5 * (a.x() * b.y() - a.y() * b.x());
            smallest = std::min(smallest, area);
            const Real edge = std::max({a.squaredNorm(), b.squaredNorm(), (b - a).squaredNorm()});
            airStatistics_.invertedAfter += area < -1e-9 * edge;
        }
        airStatistics_.minVolume = smallest;
        airStatistics_.milliseconds += std::chrono::duration<double, std::milli>(
                                           std::chrono::steady_clock::now() - talliedFrom)
                                           .count();
    }
    tears_.clear();
    if (s.tearingStretch > 1) {
        tears_ = tearOverstretchedEdges(scene_, s.tearingStretch,
                                        static_cast<std::size_t>(std::max(0, s.maxTearsPerStep)));
        if (!tears_.empty()) {
            // New particles and constraints: colour and partition again, rebuild the caches.
            colourConstraints(scene_.constraints, scene_.particles.size());
            threads_->regions = ColourRegions{};
            pbdScaleIterations_ = -1;
        }
    }
    ++steps_;
    lastStepMs_ =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

struct SolverState {
    Real time = 0;
    std::size_t steps = 0;
    RigidSolver rigid;
    RigidCoupling coupling;
    std::shared_ptr<const AirOptimizer::Memory> airOptimizer; // what its passes remember
};

std::size_t memoryBytes(const SolverState& state) {
    return sizeof(SolverState) - sizeof(RigidSolver) - sizeof(RigidCoupling) +
           state.rigid.memoryBytes() + state.coupling.memoryBytes() +
           (state.airOptimizer ? state.airOptimizer->bytes() : 0);
}

std::shared_ptr<const SolverState> Solver::state() const {
    auto s = std::make_shared<SolverState>();
    s->time = time_;
    s->steps = steps_;
    s->rigid = rigid_.warmStart();
    s->coupling = coupling_;
    if (airOptimizer_) {
        s->airOptimizer = airOptimizer_->memory(airOptimizationOptions());
    }
    return s;
}

std::shared_ptr<const SolverState> Solver::coldState(Real time, std::size_t steps) {
    auto s = std::make_shared<SolverState>();
    s->time = time;
    s->steps = steps;
    return s;
}

void Solver::restore(const SolverState& state) {
    skinClearance_.clear();
    time_ = state.time;
    steps_ = state.steps;
    rigid_ = state.rigid;
    coupling_ = state.coupling;
    if (state.airOptimizer || airOptimizer_) {
        if (!airOptimizer_) {
            airOptimizer_ = std::make_unique<AirOptimizer>();
        }
        airOptimizer_->setMemory(state.airOptimizer);
    }
    // Air contacts carried from substep to substep belong to the air as it was.
    airContactTets_.clear();
    airContactGap_.assign(scene_.air.size(), 0);
}

AirOptimizationOptions Solver::airOptimizationOptions() const {
    AirOptimizationOptions options;
    options.qualityThreshold = scene_.solver.airQualityThreshold;
    return options;
}

void Solver::optimizeAir() {
    airOptimization_ = AirOptimizationStatistics{};
    const int interval = scene_.solver.airOptimizationInterval;
    if (scene_.air.empty() || interval <= 0 || scene_.solver.airIterations == 0 ||
        (steps_ + 1) % std::size_t(interval) != 0) {
        return;
    }
    if (!airOptimizer_) {
        airOptimizer_ = std::make_unique<AirOptimizer>();
    }
    airOptimization_ = airOptimizer_->optimize(scene_, airOptimizationOptions());
    ++airOptimizationPasses_;
    airOptimizationMs_ += airOptimization_.milliseconds;
    if (airOptimization_.changes() > 0) {
        ++airTopologyVersion_;
        // Contacts carried over to the next substep name air elements that may be gone.
        airContactTets_.clear();
        airContactGap_.assign(scene_.air.size(), 0);
    }
}

void Solver::substep(Real h) {
    Particles& particles = scene_.particles;
    ConstraintSet& set = scene_.constraints;
    const SolverSettings& s = scene_.solver;
    const std::size_t n = particles.size();
    predicted_.resize(n);

    // XPBD: the total lambda restarts every substep (XPBD Alg. 1, line 4); the batches' lambdas
    // are reset by the first sweep itself (kernels::Sweep::first).
    std::fill(set.attachments.lambda.begin(), set.attachments.lambda.end(), 0.0);
    for (PressureConstraint& c : set.pressure) {
        c.lambda = 0;
    }
    Threads& th = *threads_;
    // One region: the sweeps go colour by colour in the plain colour order, each colour shared
    // out among the threads (runSubstepPhases), so any number of threads gives the same bits.
    if (th.regions.regions != 1 || th.regions.colours != set.colourCount) {
        th.regions = partitionColours(set, particles.size(), 1);
    }
    convergence_.clear();
    if (!scene_.characters.empty()) {
        animateCharacters(h);
    }
    if (!scene_.rigidBodies.empty()) {
        rigid_.step(scene_.rigidBodies, scene_.rigidJoints, s.rigid, s.gravity, h, &th);
    }
    runSubstepPhases(h);
    if (!scene_.rigidBodies.empty() && !particles.positions.empty()) {
        coupling_.applyImpulses(scene_, h);
    }
    applyContactVelocities(h);
    if (s.constraintDamping > 0) {
        // With the substep's inverse masses: hard-attached particles (w = 0) are not moved.
        scratchInverseMasses_.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            scratchInverseMasses_[i] = predicted_[i].w;
        }
        dampAlongConstraints(set, particles.positions, particles.velocities, scratchInverseMasses_,
                             std::min<Real>(s.constraintDamping, 1));
    }
    if (s.globalDamping > 0) {
        for (const Body& body : scene_.bodies) {
            dampTowardRigidMotion(particles.positions, particles.velocities,
                                  particles.inverseMasses, body.firstParticle,
                                  std::size_t(body.firstParticle) + body.particleCount,
                                  std::min<Real>(s.globalDamping, 1));
        }
    }
    time_ += h;
}

// Each character's collider goes to the skin at the substep's end, time + h, with the velocity
// that takes the skin there from where it is at `time` (both poses computed from the time, so a
// solver restored from a cache moves the colliders as the first run did).
void Solver::animateCharacters(Real h) {
    const auto t0 = std::chrono::steady_clock::now();
    auto& characters = scene_.characters;
    characterStart_.resize(characters.size());
    skinStart_.resize(characters.size());
    const Real end = time_ + h;
    for (std::size_t k = 0; k < characters.size(); ++k) {
        const Character& character = characters[k];
        if (character.collider < 0 || character.collider >= int(scene_.colliders.size())) {
            continue;
        }
        Collider& c = scene_.colliders[std::size_t(character.collider)];
        if (characterTime_ != time_ || characterStart_[k].size() != character.vertexCount()) {
            skinCharacter(character, time_, characterStart_[k], characterScratch_);
            skinClearance_.clear(); // a skin posed afresh: what was remembered is not known
        }
        skinCharacter(character, end, c.vertices, characterScratch_);
        c.velocities.resize(c.vertices.size());
        Real largest = 0;
        for (std::size_t i = 0; i < c.vertices.size(); ++i) {
            const Vec3 move = c.vertices[i] - characterStart_[k][i];
            largest = std::max(largest, move.squaredNorm());
            c.velocities[i] = move / h;
        }
        skinTravel_ += std::sqrt(largest);
        skinStart_[k].swap(characterStart_[k]); // this substep's start, for holdParticles
        characterStart_[k] = c.vertices;        // the next substep starts here
        Attachments& a = scene_.constraints.attachments;
        for (const CharacterPin& pin : character.pins) {
            if (pin.attachment < a.size()) {
                // The target at the substep's end, as attachments read it (targetAt).
                a.target[pin.attachment] = pinTarget(pin, c.vertices, c.triangles) -
                                           end * a.targetVelocity[pin.attachment];
            }
        }
    }
    characterTime_ = end;
    skinningMs_ +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// A substep as phases: predict (by thread), then on one thread pin the attachments and find the
// contacts, then per iteration each colour's sweep (shared out: a colour's elements share no
// particle) and the serial constraints (one thread), and last the velocity update (by thread).
// A serial phase has one part (core/base/PhaseRunner.h runs them). What a part does to a
// particle never depends on the other parts, and the sweeps follow the plain colour order
// whatever the threads: the same bits on any number of threads.
void Solver::runSubstepPhases(Real h) {
    Particles& particles = scene_.particles;
    ConstraintSet& set = scene_.constraints;
    const SolverSettings& s = scene_.solver;
    Threads& th = *threads_;
    const int T = th.count;
    const std::size_t n = particles.size();
    SolverParticle* P = predicted_.data();
    const int iterations = std::max(1, s.iterations);
    const Real invH2 = 1.0 / (h * h);
    lastInvH2_ = invH2;
    const Real invH = 1.0 / h;
    const Real targetTime = time_ + h;
    const bool xpbd = s.method == SolverMethod::Xpbd;
    const kernels::KernelPath& kernelPath = kernels::kernelPath();
    const bool hasForces = particles.forces.size() == n;
    // The substep's start positions, for distances projected along their starting edge.
    const Vec3* start = s.exactAngularMomentum ? particles.positions.data() : nullptr;

    enum class Kind {
        Predict,
        Prepare,
        HashCount,
        HashPlace,
        HashFill,
        Contacts,
        ContactSolve,
        Coupling,
        Sweep,
        Serial,
        AirCheck,
        AirProject,
        AirPairs,
        AirContacts,
        AirRecheck,
        AirFinish,
        Velocity
    };
    struct Phase {
        Kind kind;
        int parts;
        int iteration;
        int colours = 0; // a sweep's run of colours (colourRuns)
    };
    std::vector<Phase> phases;
    phases.push_back({Kind::Predict, T, 0});
    const bool contacts = !scene_.colliders.empty() || s.selfCollision;
    if (contacts) {
        phases.push_back({Kind::Prepare, 1, 0});
        if (s.selfCollision) {
            phases.push_back({Kind::HashCount, T, 0});
            phases.push_back({Kind::HashPlace, 1, 0});
            phases.push_back({Kind::HashFill, T, 0});
        }
        phases.push_back({Kind::Contacts, T, 0});
    }
    const bool coupled = !scene_.rigidBodies.empty() && n > 0;
    if (coupled) {
        phases.push_back({Kind::Coupling, 1, 0});
    }
    contacts_.clear();
    selfContacts_.clear();
    const bool air = !scene_.air.empty();
    // The collider contacts each move their own particle only: where nothing in the serial
    // phase comes after them, each part projects those of its particles' range (their contacts
    // in the same order: the same bits), instead of one thread projecting all of them (the
    // dancer's skin contacts since session 64: the air's phases come after them either way).
    const bool contactsInParts =
        !scene_.colliders.empty() && T > 1 && !coupled && !recordConvergence_;
    if (air) {
        airInverted_.resize(std::size_t(T));
    }
    // The air last in every iteration: collisions win over elasticity (§4). Its projections
    // are spread over the iterations (20 to 10: two after each), so the last iteration ends
    // with the air; an air phase's `iteration` counts the air's own rounds.
    const int airIterations = !air ? 0 : s.airIterations < 0 ? iterations : s.airIterations;
    int airRound = 0;
    // The second pass's pairs are found on every thread between the projections and the rest
    // (projectAirContacts); with one thread, or none to find, in the projections' phase.
    const bool splitAirPairs =
        airIterations > 0 && T > 1 && !airPairs_.empty() && s.airContactDistance > 0;
    if (splitAirPairs) {
        airPairsNear_.resize(std::size_t(T)); // each part writes its own
    }
    // The colours' sweeps as phases: a colour with work enough for several threads (its
    // elements by their rough cost, core/solver: ns per projection on one core) shared out in
    // parts of about kPartNs; the colours between them, each too small to share, swept one after
    // another in one part (a phase costs its threads about a microsecond to start and end, and
    // more where they pass the particles' cache lines back and forth: cloth's 27 colours of
    // about 530 elements each, shared, made its step slower on two threads than on one).
    // Costs only decide the parts; the order is the plain colour order whatever they say.
    struct ColourRun {
        int first, last, parts;
    };
    std::vector<ColourRun> colourRuns;
    {
        constexpr double kNs[7] = {4, 10, 20, 50, 8, 9, 5}; // forEachBatch's order
        constexpr double kPartNs = 10000;
        for (int c = 0; c < set.colourCount; ++c) {
            double ns = 0;
            for (int batch = 0; batch < 7; ++batch) {
                if (!th.regions.offsets[std::size_t(batch)].empty()) {
                    ns += kNs[batch] *
                          double(th.regions.end(batch, 0, c) - th.regions.begin(batch, 0, c));
                }
            }
            const int parts = int(std::clamp(ns / kPartNs, 1.0, double(T)));
            if (parts == 1 && !colourRuns.empty() && colourRuns.back().parts == 1) {
                colourRuns.back().last = c + 1;
            } else {
                colourRuns.push_back({c, c + 1, parts});
            }
        }
    }
    for (int it = 0; it < iterations; ++it) {
        for (std::size_t r = 0; r < colourRuns.size(); ++r) {
            phases.push_back({Kind::Sweep, colourRuns[r].parts, it, int(r)});
        }
        phases.push_back({Kind::Serial, 1, it});
        if (contactsInParts) {
            phases.push_back({Kind::ContactSolve, T, it});
        }
        const int rounds = int((std::int64_t(it) + 1) * airIterations / iterations -
                               std::int64_t(it) * airIterations / iterations);
        for (int r = 0; r < rounds; ++r, ++airRound) {
            phases.push_back({Kind::AirCheck, T, airRound});
            phases.push_back({Kind::AirProject, 1, airRound});
            if (splitAirPairs) {
                phases.push_back({Kind::AirPairs, T, airRound});
                phases.push_back({Kind::AirContacts, 1, airRound});
            }
        }
    }
    if (airIterations > 0) {
        // After the last iteration: a full check in parts, then the rounds (finishAir).
        phases.push_back({Kind::AirRecheck, T, airIterations - 1});
        phases.push_back({Kind::AirFinish, 1, airIterations - 1});
    }
    // With continuous collision the velocity update waits for it (holdParticles).
    const bool continuous = s.continuousCollision;
    if (!continuous) {
        phases.push_back({Kind::Velocity, T, 0});
    }

    // airRoundStart_ and airFinishing_ are written by one part of a phase only (AirCheck's
    // first, AirProject), and read by the phases after it. Members, not locals: whichever thread
    // runs a phase writes them, and this frame's stack is another substep's next.
    airFinishing_ = false;
    auto run = [&](const Phase& phase, int part) {
        switch (phase.kind) {
        case Kind::Predict: {
            // PBD Alg. 1 lines 5-7; gravity in the prediction (XPBD eq. 1).
            const auto [begin, end] = particleRange(part, T, n);
            // The air's own free points are air, not matter: no gravity, no forces, no
            // momentum, and the weight of a body particle (see step()).
            const std::size_t airBegin = scene_.air.firstParticle;
            const std::size_t airEnd = airBegin + scene_.air.particleCount;
            for (std::size_t i = begin; i < end; ++i) {
                const Real w = particles.inverseMasses[i];
                Vec3& v = particles.velocities[i];
                if (w > 0 && i >= airBegin && i < airEnd) {
                    const Vec3& p = particles.positions[i];
                    v.setZero();
                    P[i] = {p.x(), p.y(), p.z(), airPointWeight_};
                    continue;
                }
                if (w > 0) {
                    v += h * s.gravity;
                    if (hasForces) {
                        v += (h * w) * particles.forces[i];
                    }
                }
                const Vec3 p = particles.positions[i] + h * v;
                P[i] = {p.x(), p.y(), p.z(), w};
            }
            // Hard attachments of this range: on their target, immovable for the substep.
            const Attachments& att = set.attachments;
            for (std::size_t a = 0; a < att.size(); ++a) {
                const Index i = att.particle[a];
                if (att.compliance[a] <= 0 && i >= begin && i < end) {
                    const Vec3 t = att.targetAt(a, targetTime);
                    P[i] = {t.x(), t.y(), t.z(), 0.0};
                }
            }
            break;
        }
        case Kind::Prepare:
            prepareContacts(T);
            break;
        case Kind::HashCount:
            countSelfCollisionGrid(part, selfCollisionWorkspace_);
            break;
        case Kind::HashPlace:
            placeSelfCollisionGrid(selfCollisionWorkspace_);
            break;
        case Kind::HashFill:
            fillSelfCollisionGrid(part, selfCollisionWorkspace_);
            break;
        case Kind::Contacts:
            findContacts(part, T);
            break;
        case Kind::ContactSolve:
            solveContacts(contactPartBegins_[std::size_t(part)],
                          contactPartBegins_[std::size_t(part) + 1]);
            break;
        case Kind::Coupling:
            coupling_.begin(scene_, P, s.collisionMargin, h);
            break;
        case Kind::Sweep: {
            const kernels::Sweep sweep{invH2, phase.iteration == 0, start};
            const ColourRun& colours = colourRuns[std::size_t(phase.colours)];
            for (int c = colours.first; c < colours.last; ++c) {
                kernelPath.sweepColourPart(set, th.regions, P, c, part, phase.parts, sweep, xpbd);
            }
            break;
        }
        case Kind::Serial: {
            if (contacts && phase.iteration == 0) {
                mergeContacts();
            }
            solveAttachments(set.attachments, P, targetTime, invH2, xpbd);
            solvePressure(set.pressure, P, invH2, xpbd, iterations, scratchGradient_);
            solveSelfContacts();
            if (!contactsInParts) {
                solveContacts(0, contacts_.size());
            }
            if (coupled) {
                coupling_.project(scene_, P, h);
            }
            if (recordConvergence_) {
                convergence_.push_back(largestConstraintError(set, P, invH2, xpbd));
            }
            break;
        }
        case Kind::AirCheck:
            if (part == 0) {
                airRoundStart_ = std::chrono::steady_clock::now(); // the air's checks start
            }
            checkAir(part, T);
            break;
        case Kind::AirProject:
            if (phase.iteration == 0) {
                findAirWallContacts();
                airStatistics_.invertedBefore = 0;
                for (const auto& inverted : airInverted_) {
                    airStatistics_.invertedBefore += inverted.size();
                }
            }
            airStatistics_.checks += scene_.air.size();
            airProjectionStart_ = std::chrono::steady_clock::now();
            airFinishing_ = projectAir(phase.iteration == airIterations - 1,
                                       phase.iteration >= airIterations - 2, splitAirPairs);
            if (!splitAirPairs) {
                endAirRound();
            }
            break;
        case Kind::AirPairs:
            findAirPairsNear(part, T);
            break;
        case Kind::AirContacts:
            airFinishing_ = projectAirContacts(phase.iteration == airIterations - 1,
                                               phase.iteration >= airIterations - 2);
            endAirRound();
            break;
        case Kind::AirRecheck:
            if (airFinishing_) {
                checkAir(part, T);
            }
            break;
        case Kind::AirFinish:
            if (airFinishing_) {
                const auto began = std::chrono::steady_clock::now();
                finishAir();
                const auto now = std::chrono::steady_clock::now();
                airStatistics_.projectionMilliseconds +=
                    std::chrono::duration<double, std::milli>(now - began).count();
                airStatistics_.milliseconds +=
                    std::chrono::duration<double, std::milli>(now - airRoundStart_).count();
            }
            break;
        case Kind::Velocity: {
            // PBD Alg. 1 lines 12-15.
            const auto [begin, end] = particleRange(part, T, n);
            for (std::size_t i = begin; i < end; ++i) {
                const Vec3 p(P[i].x, P[i].y, P[i].z);
                particles.velocities[i] = (p - particles.positions[i]) * invH;
                particles.positions[i] = p;
            }
            break;
        }
        }
    };

    runPhases(th.arena, T, phases, run);
    if (continuous) {
        const auto holdBegan = std::chrono::steady_clock::now();
        holdParticles();
        holdMs_ +=
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - holdBegan)
                .count();
        th.arena.execute([&] {
            tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 4096), [&](const auto& r) {
                for (std::size_t i = r.begin(); i < r.end(); ++i) {
                    const Vec3 p(P[i].x, P[i].y, P[i].z);
                    particles.velocities[i] = (p - particles.positions[i]) * invH;
                    particles.positions[i] = p;
                }
            });
        });
    }
}

// Continuous collision after the substep's projections: the particles whose moves would make
// two surfaces touch move with their impact zones instead (core/solver/ContinuousCollision.h).
// Moving a particle other than the air had it inverts the air between it and its neighbours,
// so with air those particles stay put (w = 0) while the air is mended around them (the rounds
// after the last iteration, finishAir), but for the corners of air tets the holds keep
// inverted since the substep's start (releaseShutAir), and what the mending moved is followed
// again (the zones' particles may move again): up to kMostHoldCycles times, the last cycle's
// moves standing whatever they leave of the air (the next substep's projections take it up).
void Solver::holdParticles() {
    constexpr int kMostHoldCycles = 4;
    const std::size_t n = predicted_.size();
    // The self-collision's surfaces, listed for this substep by prepareContacts when it is on.
    if (!scene_.solver.selfCollision) {
        collectSurfaceTriangles(contactTriangles_);
    }
    // The characters' skins join as vertices numbered after the particles, that cannot be
    // held, moving from where the skin was at the substep's start (exactly where the last
    // substep ended it) to where it is at its end: a layer the skin would cut between its
    // particles is pushed ahead of it instead.
    std::vector<std::pair<const Collider*, const std::vector<Vec3>*>> skins;
    for (std::size_t k = 0; k < scene_.characters.size() && k < skinStart_.size(); ++k) {
        const int collider = scene_.characters[k].collider;
        if (collider >= 0 && collider < int(scene_.colliders.size())) {
            const Collider& c = scene_.colliders[std::size_t(collider)];
            const bool listed = std::any_of(skins.begin(), skins.end(),
                                            [&](const auto& s) { return s.first == &c; });
            if (!listed && skinStart_[k].size() == c.vertices.size()) {
                skins.push_back({&c, &skinStart_[k]});
            }
        }
    }
    std::size_t extra = 0;
    if (!skins.empty()) {
        continuousTriangles_ = contactTriangles_;
        for (const auto& [c, skinStart] : skins) {
            const Index first = Index(n + extra);
            for (const Triangle& t : c->triangles) {
                continuousTriangles_.push_back({t[0] + first, t[1] + first, t[2] + first});
            }
            extra += c->vertices.size();
        }
    }
    continuous_.setTriangles(skins.empty() ? contactTriangles_ : continuousTriangles_);
    continuousEnd_.resize(n + extra);
    holdable_.assign(n + extra, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const SolverParticle& p = predicted_[i];
        continuousEnd_[i] = Vec3(p.x, p.y, p.z);
        holdable_[i] = p.w > 0;
    }
    if (extra > 0) {
        continuousStart_.resize(n + extra);
        std::copy(scene_.particles.positions.begin(), scene_.particles.positions.end(),
                  continuousStart_.begin());
        std::size_t k = n;
        for (const auto& [c, skinStart] : skins) {
            for (std::size_t i = 0; i < c->vertices.size(); ++i, ++k) {
                continuousStart_[k] = (*skinStart)[i];
                continuousEnd_[k] = c->vertices[i];
            }
        }
    }
    const std::vector<Vec3>& start = extra > 0 ? continuousStart_ : scene_.particles.positions;
    const bool mend = !scene_.air.empty() && scene_.solver.airIterations != 0;
    // Each particle's weight in its zone: its mass, kSkinWeight times over where a moving
    // collider (a character's skin) touches it this substep.
    zoneWeights_.assign(n + extra, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const Real w = scene_.particles.inverseMasses[i];
        zoneWeights_[i] = w > 0 ? 1 / w : 0;
    }
    for (const Contact& c : contacts_) {
        if (c.particle < n && c.collider < scene_.colliders.size() &&
            !scene_.colliders[c.collider].velocities.empty()) {
            const Real w = scene_.particles.inverseMasses[c.particle];
            zoneWeights_[c.particle] = w > 0 ? kSkinWeight / w : 0;
        }
    }
    // The air between the surfaces: no zone may turn one of its tets inside out where all
    // its corners are held (no mending could turn it back; the dancer: 1 to 10 such tets left
    // inverted after most steps of its held pose, between layers pressed together).
    continuous_.setTies(mend ? &scene_.air.tets : nullptr, airTopologyVersion_);
    heldParticles_.clear();
    for (int cycle = 0; cycle < kMostHoldCycles; ++cycle) {
        const ContinuousCollisionStatistics c = threads_->arena.execute([&] {
            return continuous_.apply(start, continuousEnd_, holdable_, &zoneWeights_,
                                     &heldParticles_);
        });
        continuousStats_.add(c);
        const std::vector<std::uint8_t>& held = continuous_.held();
        for (std::size_t i = 0; i < held.size() && i < n; ++i) {
            if (held[i]) {
                heldParticles_.push_back(Index(i));
                predicted_[i] = {continuousEnd_[i].x(), continuousEnd_[i].y(),
                                 continuousEnd_[i].z(), 0.0};
            }
        }
        if (c.held == 0 || !mend || cycle + 1 == kMostHoldCycles) {
            break;
        }
        releaseShutAir(heldParticles_); // the air the holds keep inverted (AirPasses.cpp)
        for (auto& list : airInverted_) {
            list.clear();
        }
        checkAir(0, 1);
        finishAir();
        for (std::size_t i = 0; i < n; ++i) {
            const SolverParticle& p = predicted_[i];
            continuousEnd_[i] = Vec3(p.x, p.y, p.z);
        }
    }
    for (Index i : heldParticles_) {
        predicted_[i].w = scene_.particles.inverseMasses[i];
    }
}

std::vector<KernelCost> Solver::measureKernels(int sweeps) const {
    ConstraintSet set = scene_.constraints; // scratch: lambdas and the order change
    const ColourRegions regions = partitionColours(set, scene_.particles.size(), 1);
    std::vector<SolverParticle> P(scene_.particles.size());
    for (std::size_t i = 0; i < P.size(); ++i) {
        const Vec3& x = scene_.particles.positions[i];
        P[i] = {x.x(), x.y(), x.z(), scene_.particles.inverseMasses[i]};
    }
    const Real h = scene_.solver.timeStep / std::max(1, scene_.solver.substeps);
    const Real invH2 = 1.0 / (h * h);
    std::vector<KernelCost> costs;
    const kernels::KernelPath& path = kernels::kernelPath();
    const ConstraintType types[] = {ConstraintType::Distance,       ConstraintType::DihedralBending,
                                    ConstraintType::StrainTriangle, ConstraintType::StrainTet,
                                    ConstraintType::Area,           ConstraintType::Volume,
                                    ConstraintType::PlanarArea};
    int typeIndex = 0;
    forEachBatch(set, [&](auto& b) {
        const int batch = typeIndex;
        const ConstraintType type = types[typeIndex++];
        if (b.size() == 0) {
            return;
        }
        const auto t0 = std::chrono::steady_clock::now();
        for (int s = 0; s < sweeps; ++s) {
            for (int c = 0; c < set.colourCount; ++c) {
                path.solveRange(set, batch, P.data(), regions.begin(batch, 0, c),
                                regions.end(batch, 0, c), kernels::Sweep{invH2, false});
            }
        }
        const double ns =
            std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
        KernelCost k{type, b.size() * static_cast<std::size_t>(sweeps), 0};
        k.nanosecondsPerProjection = ns / static_cast<double>(k.projections);
        costs.push_back(k);
    });
    return costs;
}

} // namespace pbd
