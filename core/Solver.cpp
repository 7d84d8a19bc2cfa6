#include "core/Solver.h"

#include "core/ConstraintDamping.h"
#include "core/ConstraintKernels.h"
#include "core/ConstraintVisit.h"
#include "core/Damping.h"
#include "core/Topology.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <immintrin.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>
#include <thread>

namespace pbd {

std::string_view toString(SolverMethod method) {
    return method == SolverMethod::Xpbd ? "xpbd" : "pbd";
}

struct Solver::Threads {
    explicit Threads(int n)
        : count(n)
        , arena(n) {}
    int count;
    tbb::task_arena arena;
    ColourRegions regions;
};

namespace {

// Every colour of class k (a region, or the boundary when k == regions), in colour order.
template <bool Xpbd>
void solveRegion(ConstraintSet& set, const ColourRegions& regions, SolverParticle* P, int k,
                 kernels::Sweep sweep) {
    for (int c = 0; c < set.colourCount; ++c) {
        int batch = 0;
        forEachBatch(set, [&](auto& b) {
            const int index = batch++;
            if (b.size() == 0) {
                return;
            }
            const Index begin = regions.begin(index, k, c);
            const Index end = regions.end(index, k, c);
            if (begin < end) {
                kernels::solve<Xpbd>(b, P, begin, end, sweep);
            }
        });
    }
}

// The largest |C + alpha~ lambda| (|C| for PBD) of all batch constraints at the positions P.
Real largestConstraintError(const ConstraintSet& set, const SolverParticle* P, Real invH2,
                            bool xpbd) {
    Real worst = 0;
    visitConstraints(
        set, [&](Index i) { return Vec3(P[i].x, P[i].y, P[i].z); },
        [&](ConstraintType, const auto& b, int comp, std::size_t e, Real c, const math::V3<Real>*) {
            const Real alphaTilde = xpbd ? b.compliance[comp][e] * invH2 : 0.0;
            worst = std::max(worst, std::abs(c + alphaTilde * b.lambda[comp][e]));
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
void spinWait(const std::atomic<int>& counter, int target) {
    for (int spins = 0; counter.load(std::memory_order_acquire) < target; ++spins) {
        if (spins < 4096) {
            _mm_pause();
        } else {
            std::this_thread::yield();
        }
    }
}

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

// 6 V of an air tet at the predicted positions: (p1 - p0) . ((p2 - p0) x (p3 - p0)).
inline Real airDet(const SolverParticle* P, const Tetrahedron& t) {
    const SolverParticle& a = P[t[0]];
    const SolverParticle& b = P[t[1]];
    const SolverParticle& c = P[t[2]];
    const SolverParticle& d = P[t[3]];
    const Real bx = b.x - a.x, by = b.y - a.y, bz = b.z - a.z;
    const Real cx = c.x - a.x, cy = c.y - a.y, cz = c.z - a.z;
    const Real dx = d.x - a.x, dy = d.y - a.y, dz = d.z - a.z;
    return bx * (cy * dz - cz * dy) + by * (cz * dx - cx * dz) + bz * (cx * dy - cy * dx);
}

// 2 A of a 2D air triangle at the predicted positions: ((p1 - p0) x (p2 - p0)).z.
inline Real airCross(const SolverParticle* P, const Triangle& t) {
    const SolverParticle& a = P[t[0]];
    const SolverParticle& b = P[t[1]];
    const SolverParticle& c = P[t[2]];
    return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
}

int resolveThreads(int requested) {
    return requested > 0 ? requested : tbb::this_task_arena::max_concurrency();
}

} // namespace

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
    if (!scene_.air.empty() && (s.airContactDistance > 0 || s.airFriction > 0) &&
        airPairsVersion_ != airTopologyVersion_) {
        airPairs_ =
            airContactPairs(scene_, airOptimizer_ ? airOptimizer_->adjacency(scene_) : nullptr);
        airPairGap_.assign(airPairs_.size(), 0);
        airPairsVersion_ = airTopologyVersion_;
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
    }
    for (int i = 0; i < substeps; ++i) {
        substep(h);
    }
    optimizeAir();
    if (!scene_.air.empty()) {
        const auto& x = scene_.particles.positions;
        Real smallest = std::numeric_limits<Real>::infinity();
        for (const Tetrahedron& t : scene_.air.tets) {
            const Real v = signedVolume(x[t[0]], x[t[1]], x[t[2]], x[t[3]]);
            smallest = std::min(smallest, v);
            if (v < 0) {
                // A projected tet is flat (C = 0) up to rounding; inverted means beyond that.
                Real edge = 0;
                for (int i = 0; i < 4; ++i) {
                    for (int j = i + 1; j < 4; ++j) {
                        edge = std::max(edge, (x[t[i]] - x[t[j]]).squaredNorm());
                    }
                }
                airStatistics_.invertedAfter += v < -1e-9 * edge * std::sqrt(edge);
            }
        }
        for (const Triangle& t : scene_.air.triangles) {
            const Vec3 a = x[t[1]] - x[t[0]], b = x[t[2]] - x[t[0]];
            const Real area = 0.5 * (a.x() * b.y() - a.y() * b.x());
            smallest = std::min(smallest, area);
            const Real edge = std::max({a.squaredNorm(), b.squaredNorm(), (b - a).squaredNorm()});
            airStatistics_.invertedAfter += area < -1e-9 * edge;
        }
        airStatistics_.minVolume = smallest;
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

void Solver::optimizeAir() {
    airOptimization_ = AirOptimizationStatistics{};
    const int interval = scene_.solver.airOptimizationInterval;
    if (scene_.air.empty() || interval <= 0 || (steps_ + 1) % std::size_t(interval) != 0) {
        return;
    }
    if (!airOptimizer_) {
        airOptimizer_ = std::make_unique<AirOptimizer>();
    }
    AirOptimizationOptions options;
    options.qualityThreshold = scene_.solver.airQualityThreshold;
    airOptimization_ = airOptimizer_->optimize(scene_, options);
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
    if (th.regions.regions != th.count || th.regions.colours != set.colourCount) {
        th.regions = partitionColours(set, particles.size(), th.count);
    }
    convergence_.clear();
    if (!scene_.rigidBodies.empty()) {
        rigid_.step(scene_.rigidBodies, scene_.rigidJoints, s.rigid, s.gravity, h);
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

namespace {
// The particles of region k of R: the indices i with i R / n == k (see partitionColours).
std::pair<std::size_t, std::size_t> particleRange(int k, int R, std::size_t n) {
    const auto R_ = static_cast<std::size_t>(R);
    const auto k_ = static_cast<std::size_t>(k);
    return {(k_ * n + R_ - 1) / R_, ((k_ + 1) * n + R_ - 1) / R_};
}
} // namespace

// A substep as phases: predict (by region), then on one thread pin the attachments and find the
// contacts, then per iteration the regions' sweeps (by region) and the boundary with the serial
// constraints (one thread), and last the velocity update (by region). A parallel phase has one
// part per region, so each thread keeps its particles, constraints and lambdas in its cache;
// a serial phase has one part. With several threads the parts are claimed with a bit mask:
// thread k runs part k when it can, then any part nobody took, so a thread that never starts
// cannot stall the others. Results depend on the thread count (the sweep order does) but not on
// which thread ran which part.
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
    const Real invH = 1.0 / h;
    const Real targetTime = time_ + h;
    const bool xpbd = s.method == SolverMethod::Xpbd;
    const bool hasForces = particles.forces.size() == n;
    // The substep's start positions, for distances projected along their starting edge.
    const Vec3* start = s.exactAngularMomentum ? particles.positions.data() : nullptr;

    enum class Kind {
        Predict,
        Prepare,
        Contacts,
        Coupling,
        Sweep,
        Serial,
        AirCheck,
        AirProject,
        Velocity
    };
    struct Phase {
        Kind kind;
        int parts;
        int iteration;
    };
    std::vector<Phase> phases;
    phases.push_back({Kind::Predict, T, 0});
    const bool contacts = !scene_.colliders.empty() || s.selfCollision;
    if (contacts) {
        phases.push_back({Kind::Prepare, 1, 0});
        phases.push_back({Kind::Contacts, T, 0});
    }
    const bool coupled = !scene_.rigidBodies.empty() && n > 0;
    if (coupled) {
        phases.push_back({Kind::Coupling, 1, 0});
    }
    contacts_.clear();
    selfContacts_.clear();
    const bool air = !scene_.air.empty();
    if (air) {
        airInverted_.resize(std::size_t(T));
    }
    for (int it = 0; it < iterations; ++it) {
        phases.push_back({Kind::Sweep, T, it});
        phases.push_back({Kind::Serial, 1, it});
        if (air) { // last in every iteration: collisions win over elasticity (§4)
            phases.push_back({Kind::AirCheck, T, it});
            phases.push_back({Kind::AirProject, 1, it});
        }
    }
    phases.push_back({Kind::Velocity, T, 0});

    auto run = [&](const Phase& phase, int part) {
        switch (phase.kind) {
        case Kind::Predict: {
            // PBD Alg. 1 lines 5-7; gravity in the prediction (XPBD eq. 1).
            const auto [begin, end] = particleRange(part, T, n);
            // The air's own free points are air, not matter: no gravity, no forces.
            const std::size_t airBegin = scene_.air.firstParticle;
            const std::size_t airEnd = airBegin + scene_.air.particleCount;
            for (std::size_t i = begin; i < end; ++i) {
                const Real w = particles.inverseMasses[i];
                Vec3& v = particles.velocities[i];
                if (w > 0 && (i < airBegin || i >= airEnd)) {
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
            prepareContacts();
            break;
        case Kind::Contacts:
            findContacts(part, T);
            break;
        case Kind::Coupling:
            coupling_.begin(scene_, P, s.collisionMargin, h);
            break;
        case Kind::Sweep: {
            const kernels::Sweep sweep{invH2, phase.iteration == 0, start};
            xpbd ? solveRegion<true>(set, th.regions, P, part, sweep)
                 : solveRegion<false>(set, th.regions, P, part, sweep);
            break;
        }
        case Kind::Serial: {
            if (contacts && phase.iteration == 0) {
                mergeContacts();
            }
            const kernels::Sweep sweep{invH2, phase.iteration == 0, start};
            xpbd ? solveRegion<true>(set, th.regions, P, th.regions.regions, sweep)
                 : solveRegion<false>(set, th.regions, P, th.regions.regions, sweep);
            solveAttachments(set.attachments, P, targetTime, invH2, xpbd);
            solvePressure(set.pressure, P, invH2, xpbd, iterations, scratchGradient_);
            solveSelfContacts();
            solveContacts();
            if (coupled) {
                coupling_.project(scene_, P, h);
            }
            if (recordConvergence_) {
                convergence_.push_back(largestConstraintError(set, P, invH2, xpbd));
            }
            break;
        }
        case Kind::AirCheck:
            checkAir(part, T);
            break;
        case Kind::AirProject:
            if (phase.iteration == 0) {
                airStatistics_.invertedBefore = 0;
                for (const auto& inverted : airInverted_) {
                    airStatistics_.invertedBefore += inverted.size();
                }
            }
            airStatistics_.checks += scene_.air.size();
            projectAir(phase.iteration == iterations - 1);
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

    if (T == 1) {
        for (const Phase& phase : phases) {
            run(phase, 0);
        }
        return;
    }
    std::vector<std::atomic<std::uint64_t>> claimed(phases.size());
    std::atomic<int> completed{0};
    auto worker = [&](int k) {
        int firstTicket = 0;
        for (std::size_t f = 0; f < phases.size(); ++f) {
            const int parts = phases[f].parts;
            spinWait(completed, firstTicket);
            auto tryRun = [&](int part) {
                const std::uint64_t bit = std::uint64_t(1) << part;
                if ((claimed[f].fetch_or(bit, std::memory_order_relaxed) & bit) == 0) {
                    run(phases[f], part);
                    completed.fetch_add(1, std::memory_order_acq_rel);
                }
            };
            const int home = k % parts;
            tryRun(home);
            for (int part = 0; part < parts; ++part) {
                if (part != home) {
                    tryRun(part);
                }
            }
            firstTicket += parts;
        }
    };
    th.arena.execute([&] {
        tbb::parallel_for(
            tbb::blocked_range<int>(0, T, 1),
            [&](const tbb::blocked_range<int>& r) {
                for (int t = r.begin(); t < r.end(); ++t) {
                    worker(t);
                }
            },
            tbb::static_partitioner());
    });
}

// Serial part of the contact search: collider bounds, the cloth triangles and their hash.
// The unilateral air constraint C = det[p1 - p0, p2 - p0, p3 - p0] >= 0 (Air Meshes eq. 2) is
// free while positive, so the common case is a sign check: each part checks its share of the
// air tets and remembers the inverted ones; projectAir then projects those in order.
void Solver::checkAir(int part, int parts) {
    const std::vector<Tetrahedron>& tets = scene_.air.tets;
    const std::vector<Triangle>& triangles = scene_.air.triangles;
    const SolverParticle* P = predicted_.data();
    const std::size_t nTets = tets.size();
    const std::size_t n = scene_.air.size();
    const std::size_t begin = n * std::size_t(part) / std::size_t(parts);
    const std::size_t end = n * std::size_t(part + 1) / std::size_t(parts);
    std::vector<std::uint32_t>& inverted = airInverted_[std::size_t(part)];
    inverted.clear();
    for (std::size_t t = begin; t < std::min(end, nTets); ++t) {
        if (!(airDet(P, tets[t]) >= 0)) { // flat is allowed: C >= 0
            inverted.push_back(std::uint32_t(t));
        }
    }
    for (std::size_t t = std::max(begin, nTets); t < end; ++t) {
        if (!(airCross(P, triangles[t - nTets]) >= 0)) {
            inverted.push_back(std::uint32_t(t));
        }
    }
}

double Solver::measureAirCheck(int sweeps) {
    if (scene_.air.empty() || sweeps < 1) {
        return 0;
    }
    const std::size_t n = scene_.particles.size();
    predicted_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        const Vec3& p = scene_.particles.positions[i];
        predicted_[i] = {p.x(), p.y(), p.z(), scene_.particles.inverseMasses[i]};
    }
    airInverted_.resize(std::max<std::size_t>(airInverted_.size(), 1));
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < sweeps; ++k) {
        checkAir(0, 1); // writes the inverted list: nothing for the compiler to drop
    }
    const double ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    airInverted_[0].clear();
    return ns / (double(sweeps) * double(scene_.air.size()));
}

namespace {
constexpr int kAirRounds = 64; // re-checks after the last iteration, at most
constexpr int kAirPasses = 8;  // sweeps over the inverted tets per check, at most
} // namespace

void Solver::projectAir(bool last) {
    projectAirPasses();
    const SolverSettings& s = scene_.solver;
    if (!airPairs_.empty() && s.airContactDistance > 0) {
        keepAirDistance();
    }
    if (last) {
        airStatistics_.contacts = applyAirFriction();
    }
    if (!last || (airStatistics_.projections == 0 && airStatistics_.contacts == 0)) {
        return;
    }
    // After the last iteration no air tet may stay inverted: projections can invert neighbours
    // that were fine when checked. One full check, then rounds that re-check only the elements
    // around the corners the previous round moved (no other element can have changed sign).
    refreshAirIncidence();
    const std::size_t nTets = scene_.air.tets.size();
    const SolverParticle* P = predicted_.data();
    const auto inverted = [&](std::uint32_t e) {
        return e < nTets ? !(airDet(P, scene_.air.tets[e]) >= 0)
                         : !(airCross(P, scene_.air.triangles[e - nTets]) >= 0);
    };
    for (std::size_t k = 1; k < airInverted_.size(); ++k) {
        airInverted_[k].clear();
    }
    checkAir(0, 1);
    std::vector<std::uint32_t>& found = airInverted_[0];
    for (int round = 0; round < kAirRounds && !found.empty(); ++round) {
        projectAirPasses();
        airMoved_.assign(found.begin(), found.end());
        // The contacts these projections made get their friction too (the slip of the whole
        // substep, as for the others); it moves their corners as well.
        if (!airContactTets_.empty()) {
            airMoved_.insert(airMoved_.end(), airContactTets_.begin(), airContactTets_.end());
            airStatistics_.contacts += applyAirFriction();
        }
        if (airSeen_.size() != scene_.air.size()) {
            airSeen_.assign(scene_.air.size(), 0);
        }
        if (++airSeenStamp_ == 0) {
            std::fill(airSeen_.begin(), airSeen_.end(), 0);
            airSeenStamp_ = 1;
        }
        found.clear();
        for (std::uint32_t e : airMoved_) {
            const Index* corners =
                e < nTets ? scene_.air.tets[e].data() : scene_.air.triangles[e - nTets].data();
            const int n = e < nTets ? 4 : 3;
            for (int k = 0; k < n; ++k) {
                const Index v = corners[k];
                for (std::uint32_t i = airIncidenceStart_[v]; i < airIncidenceStart_[v + 1]; ++i) {
                    const std::uint32_t f = airIncidence_[i];
                    if (airSeen_[f] != airSeenStamp_) {
                        airSeen_[f] = airSeenStamp_;
                        if (inverted(f)) {
                            found.push_back(f);
                        }
                    }
                }
            }
        }
        std::sort(found.begin(), found.end()); // element order, as a full check gives
    }
}

// Particle -> air elements (tets, then 2D triangles) incidence, rebuilt when the air changed.
void Solver::refreshAirIncidence() {
    const std::size_t n = scene_.particles.size();
    if (airIncidenceVersion_ == airTopologyVersion_ && airIncidenceElements_ == scene_.air.size() &&
        airIncidenceStart_.size() == n + 1) {
        return;
    }
    airIncidenceStart_.assign(n + 1, 0);
    const auto visit = [&](auto&& f) {
        std::uint32_t e = 0;
        for (const Tetrahedron& t : scene_.air.tets) {
            for (Index v : t) {
                f(v, e);
            }
            ++e;
        }
        for (const Triangle& t : scene_.air.triangles) {
            for (Index v : t) {
                f(v, e);
            }
            ++e;
        }
    };
    visit([&](Index v, std::uint32_t) { ++airIncidenceStart_[v + 1]; });
    for (std::size_t i = 0; i < n; ++i) {
        airIncidenceStart_[i + 1] += airIncidenceStart_[i];
    }
    airIncidence_.resize(airIncidenceStart_[n]);
    std::vector<std::uint32_t> fill(airIncidenceStart_.begin(), airIncidenceStart_.end() - 1);
    visit([&](Index v, std::uint32_t e) { airIncidence_[fill[v]++] = e; });
    airIncidenceVersion_ = airTopologyVersion_;
    airIncidenceElements_ = scene_.air.size();
}

namespace {
// The point of plane (f0, f1, f2) nearest p in barycentric coordinates, for normal n of the
// face (its length twice the area).
Vec3 planeBarycentric(const Vec3& p, const Vec3& f0, const Vec3& f1, const Vec3& f2,
                      const Vec3& n) {
    const Real n2 = n.squaredNorm();
    const Real b1 = (f0 - p).cross(f2 - p).dot(n) / n2;
    const Real b2 = (f1 - p).cross(f0 - p).dot(n) / n2;
    return Vec3(1 - b1 - b2, b1, b2);
}
Vec3 at(const SolverParticle& q) {
    return Vec3(q.x, q.y, q.z);
}
void move(SolverParticle& q, const Vec3& d) {
    q.x += d.x();
    q.y += d.y();
    q.z += d.z();
}
} // namespace

// The second pass (Air Meshes §4.3): C = (p - f0) . n_hat - epsilon >= 0 for each vertex-face
// pair across the air whose vertex lies over its face (PBD eq. 12-13 with the face's point held
// by its barycentric coordinates, as in cloth self-collision). Counts the separation added per
// pair for friction.
void Solver::keepAirDistance() {
    const Real epsilon = scene_.solver.airContactDistance;
    SolverParticle* P = predicted_.data();
    for (std::size_t k = 0; k < airPairs_.size(); ++k) {
        const AirContactPair& pair = airPairs_[k];
        SolverParticle& q = P[pair.particle];
        SolverParticle* f[3] = {&P[pair.face[0]], &P[pair.face[1]], &P[pair.face[2]]};
        const Vec3 p = at(q), f0 = at(*f[0]), f1 = at(*f[1]), f2 = at(*f[2]);
        const Vec3 n = (f1 - f0).cross(f2 - f0);
        const Real length = n.norm();
        if (!(length > 0)) {
            continue;
        }
        const Vec3 un = -n / length; // toward the particle's side: (p, face) is positive
        const Real C = (p - f0).dot(un) - epsilon;
        if (C >= 0) {
            continue;
        }
        const Vec3 b = planeBarycentric(p, f0, f1, f2, n);
        if (b.minCoeff() < -0.05) {
            continue; // beside the face, not over it: other pairs hold it
        }
        const Real W = q.w + b[0] * b[0] * f[0]->w + b[1] * b[1] * f[1]->w + b[2] * b[2] * f[2]->w;
        if (!(W > 0)) {
            continue;
        }
        const Real dl = -C / W;
        move(q, (q.w * dl) * un);
        for (int i = 0; i < 3; ++i) {
            move(*f[i], (-f[i]->w * b[i] * dl) * un);
        }
        airPairGap_[k] -= C;
    }
}

// Coulomb friction on the pairs the second pass held (position-based: the relative tangential
// motion of the substep is taken back up to mu times the separation added, all of it while it
// is smaller: static friction).
std::size_t Solver::applyAirFriction() {
    const Real mu = scene_.solver.airFriction;
    SolverParticle* P = predicted_.data();
    const std::vector<Vec3>& x = scene_.particles.positions; // the start of the substep
    std::size_t acted = 0;
    for (std::size_t k = 0; k < airPairs_.size(); ++k) {
        const Real gap = k < airPairGap_.size() ? airPairGap_[k] : 0;
        if (!(gap > 0)) {
            continue;
        }
        airPairGap_[k] = 0;
        ++acted;
        if (!(mu > 0)) {
            continue;
        }
        const AirContactPair& pair = airPairs_[k];
        SolverParticle& q = P[pair.particle];
        SolverParticle* f[3] = {&P[pair.face[0]], &P[pair.face[1]], &P[pair.face[2]]};
        const Vec3 p = at(q), f0 = at(*f[0]), f1 = at(*f[1]), f2 = at(*f[2]);
        const Vec3 n = (f1 - f0).cross(f2 - f0);
        if (!(n.squaredNorm() > 0)) {
            continue;
        }
        const Vec3 un = n.normalized();
        const Vec3 b = planeBarycentric(p, f0, f1, f2, n).cwiseMax(0.0);
        const Real sum = b.sum();
        const Vec3 bb = sum > 0 ? Vec3(b / sum) : Vec3(1.0 / 3, 1.0 / 3, 1.0 / 3);
        const Vec3 rel = (p - x[pair.particle]) - bb[0] * (f0 - x[pair.face[0]]) -
                         bb[1] * (f1 - x[pair.face[1]]) - bb[2] * (f2 - x[pair.face[2]]);
        const Vec3 tangential = rel - rel.dot(un) * un;
        const Real slide = tangential.norm();
        if (!(slide > 0)) {
            continue;
        }
        const Vec3 take = tangential * (std::min(slide, mu * gap) / slide);
        const Real W =
            q.w + bb[0] * bb[0] * f[0]->w + bb[1] * bb[1] * f[1]->w + bb[2] * bb[2] * f[2]->w;
        if (!(W > 0)) {
            continue;
        }
        move(q, (-q.w / W) * take);
        for (int i = 0; i < 3; ++i) {
            move(*f[i], (f[i]->w * bb[i] / W) * take);
        }
    }
    // The contacts the air projection made: the same friction between the two solids' corners,
    // each side moving as one (by the mean of its corners' displacements).
    for (std::uint32_t t : airContactTets_) {
        const Real gap = airContactGap_[t];
        airContactGap_[t] = 0;
        ++acted;
        if (!(mu > 0) || !(gap > 0)) {
            continue;
        }
        // The element's corners and, now, the gradients of its C (a tet, or a 2D triangle).
        Index tet[4];
        Vec3 g[4];
        int corners = 4;
        const std::size_t nTets = scene_.air.tets.size();
        if (t < nTets) {
            std::copy(scene_.air.tets[t].begin(), scene_.air.tets[t].end(), tet);
            const Vec3 p0 = at(P[tet[0]]);
            const Vec3 e1 = at(P[tet[1]]) - p0, e2 = at(P[tet[2]]) - p0, e3 = at(P[tet[3]]) - p0;
            g[1] = e2.cross(e3), g[2] = e3.cross(e1), g[3] = e1.cross(e2);
            g[0] = -(g[1] + g[2] + g[3]);
        } else {
            const Triangle& tri = scene_.air.triangles[t - nTets];
            std::copy(tri.begin(), tri.end(), tet);
            corners = 3;
            const Vec3 p0 = at(P[tet[0]]);
            const Vec3 e1 = at(P[tet[1]]) - p0, e2 = at(P[tet[2]]) - p0;
            g[1] = Vec3(e2.y(), -e2.x(), 0);
            g[2] = Vec3(-e1.y(), e1.x(), 0);
            g[0] = -(g[1] + g[2]);
        }
        const int first = particleOwner_[tet[0]];
        Vec3 dA = Vec3::Zero(), dB = Vec3::Zero(), gA = Vec3::Zero();
        Real wA = 0, wB = 0;
        int nA = 0, nB = 0;
        for (int k = 0; k < corners; ++k) {
            const SolverParticle& q = P[tet[k]];
            const Vec3 d = at(q) - x[tet[k]];
            if (particleOwner_[tet[k]] == first) {
                dA += d, wA += q.w, gA += g[k], ++nA;
            } else {
                dB += d, wB += q.w, ++nB;
            }
        }
        wA /= nA;
        wB /= nB;
        // The normal: the direction moving the first solid's corners grows the element.
        if (!(wA + wB > 0) || !(gA.squaredNorm() > 0)) {
            continue;
        }
        const Vec3 n = gA.normalized();
        const Vec3 rel = dA / nA - dB / nB;
        const Vec3 tangential = rel - rel.dot(n) * n;
        const Real slide = tangential.norm();
        if (!(slide > 0)) {
            continue;
        }
        const Vec3 take = tangential * (std::min(slide, mu * gap) / slide);
        for (int k = 0; k < corners; ++k) {
            SolverParticle& q = P[tet[k]];
            if (!(q.w > 0)) {
                continue;
            }
            if (particleOwner_[tet[k]] == first) {
                move(q, (-wA / (wA + wB)) * take);
            } else {
                move(q, (wB / (wA + wB)) * take);
            }
        }
    }
    airContactTets_.clear();
    airStatistics_.contactPairs = airPairs_.size();
    return acted;
}

// A projected air tet whose corners belong to exactly two solids (two bodies, or a body and
// the container) is a contact between them: the normal is the direction that moving the first
// solid's corners grows the tet, and the separation the projection added along it is summed
// for friction (applyAirFriction).
void Solver::noteAirContact(std::uint32_t t, const Index* tet, const Vec3* g, int corners, Real s) {
    int owner[4];
    int first = kNoOwner, second = kNoOwner;
    for (int k = 0; k < corners; ++k) {
        owner[k] = particleOwner_[tet[k]];
        if (owner[k] == kFreeAir) {
            return; // the air's own free point: no surface on that side
        }
        if (first == kNoOwner || owner[k] == first) {
            first = owner[k];
        } else if (second == kNoOwner || owner[k] == second) {
            second = owner[k];
        } else {
            return; // three solids meet: no single contact normal
        }
    }
    if (second == kNoOwner) {
        return;
    }
    Vec3 gA = Vec3::Zero(), dA = Vec3::Zero(), dB = Vec3::Zero();
    int nA = 0, nB = 0;
    const SolverParticle* P = predicted_.data();
    for (int k = 0; k < corners; ++k) {
        const Vec3 d = (s * P[tet[k]].w) * g[k];
        if (owner[k] == first) {
            gA += g[k];
            dA += d;
            ++nA;
        } else {
            dB += d;
            ++nB;
        }
    }
    const Real length = gA.norm();
    if (!(length > 0)) {
        return;
    }
    const Vec3 n = gA / length;
    const Real gap = (dA / nA - dB / nB).dot(n);
    if (!(gap > 0)) {
        return;
    }
    if (airContactGap_.size() != scene_.air.size()) {
        airContactGap_.assign(scene_.air.size(), 0);
    }
    if (airContactGap_[t] == 0) {
        airContactTets_.push_back(t);
    }
    airContactGap_[t] += gap;
}

void Solver::projectAirPasses() {
    const std::vector<Tetrahedron>& tets = scene_.air.tets;
    const std::size_t nTets = tets.size();
    SolverParticle* P = predicted_.data();
    // Gauss-Seidel over the inverted tets; a projection moves corners of neighbours, so the
    // list is swept again (a few times at most) until none of them is inverted.
    const int kMaxPasses = kAirPasses;
    const bool friction = scene_.solver.airFriction > 0;
    for (int pass = 0; pass < kMaxPasses; ++pass) {
        std::size_t projected = 0;
        for (const auto& part : airInverted_) {
            for (std::uint32_t t : part) {
                // The element's corners and the gradients of its C: a tet, or (2D) a triangle.
                Index corner[4];
                Vec3 g[4];
                int n = 4;
                Real C = 0, longest = 0, gradients = 0;
                if (t < nTets) {
                    const Tetrahedron& tet = tets[t];
                    C = airDet(P, tet);
                    if (C >= 0) {
                        continue; // fine, or fixed by an earlier projection
                    }
                    std::copy(tet.begin(), tet.end(), corner);
                    const Vec3 p0 = at(P[tet[0]]);
                    const Vec3 e1 = at(P[tet[1]]) - p0, e2 = at(P[tet[2]]) - p0,
                               e3 = at(P[tet[3]]) - p0;
                    const Vec3 g1 = e2.cross(e3), g2 = e3.cross(e1), g3 = e1.cross(e2);
                    g[0] = -(g1 + g2 + g3), g[1] = g1, g[2] = g2, g[3] = g3;
                    longest = std::max({e1.squaredNorm(), e2.squaredNorm(), e3.squaredNorm(),
                                        (e2 - e1).squaredNorm(), (e3 - e1).squaredNorm(),
                                        (e3 - e2).squaredNorm()});
                    for (int k = 0; k < 4; ++k) {
                        gradients += g[k].squaredNorm();
                    }
                    // A degenerate tet (its corners nearly on a line: every face of near-zero
                    // area) has gradients too small to say which way is out; projecting it
                    // would take an unbounded step. Its neighbours carry the constraint instead.
                    if (gradients < 1e-6 * longest * longest) {
                        continue;
                    }
                } else {
                    const Triangle& tri = scene_.air.triangles[t - nTets];
                    C = airCross(P, tri);
                    if (C >= 0) {
                        continue;
                    }
                    n = 3;
                    std::copy(tri.begin(), tri.end(), corner);
                    const Vec3 p0 = at(P[tri[0]]);
                    const Vec3 e1 = at(P[tri[1]]) - p0, e2 = at(P[tri[2]]) - p0;
                    g[1] = Vec3(e2.y(), -e2.x(), 0);
                    g[2] = Vec3(-e1.y(), e1.x(), 0);
                    g[0] = -(g[1] + g[2]);
                    longest =
                        std::max({e1.squaredNorm(), e2.squaredNorm(), (e2 - e1).squaredNorm()});
                    for (int k = 0; k < 3; ++k) {
                        gradients += g[k].squaredNorm();
                    }
                    if (gradients < 1e-6 * longest) { // corners (nearly) on one point
                        continue;
                    }
                }
                Real denom = 0;
                for (int k = 0; k < n; ++k) {
                    denom += P[corner[k]].w * g[k].squaredNorm();
                }
                if (!(denom > 0)) {
                    continue; // all corners immovable
                }
                Real step = -C / denom; // hard: projects onto C = 0
                Real largestStep = 0;
                for (int k = 0; k < n; ++k) {
                    largestStep = std::max(largestStep, step * P[corner[k]].w * g[k].norm());
                }
                const Real limit = 2 * std::sqrt(longest); // never further than it is long
                if (largestStep > limit) {
                    step *= limit / largestStep;
                }
                for (int k = 0; k < n; ++k) {
                    SolverParticle& q = P[corner[k]];
                    move(q, (step * q.w) * g[k]);
                }
                if (friction) {
                    noteAirContact(t, corner, g, n, step);
                }
                ++projected;
            }
        }
        airStatistics_.projections += projected;
        if (projected == 0) {
            break;
        }
    }
}

void Solver::prepareContacts() {
    const auto& colliders = scene_.colliders;
    if (colliderBounds_.size() != colliders.size()) {
        colliderBounds_.clear();
        for (const Collider& c : colliders) {
            Bounds b; // empty: unbounded (planes) or not worth bounding
            if (c.shape == ColliderShape::Mesh) {
                for (const Vec3& v : c.vertices) {
                    b.add(v);
                }
            }
            colliderBounds_.push_back(b);
        }
    }
    if (!scene_.solver.selfCollision) {
        selfCollisionWorkspace_.vertices.clear();
        return;
    }
    clothTriangles_.clear();
    for (const Body& body : scene_.bodies) {
        if (body.kind == BodyKind::Cloth) {
            clothTriangles_.insert(clothTriangles_.end(), body.triangles.begin(),
                                   body.triangles.end());
        }
    }
    predictedPositions_.resize(predicted_.size());
    for (std::size_t i = 0; i < predicted_.size(); ++i) {
        predictedPositions_[i] = Vec3(predicted_[i].x, predicted_[i].y, predicted_[i].z);
    }
    buildSelfCollisionGrid(clothTriangles_, scene_.particles.positions, predictedPositions_,
                           scene_.solver.clothThickness, selfCollisionWorkspace_);
}

// Part k of T of the contact search: colliders for the particles of region k, self-collision for
// the k-th share of the cloth vertices, into the part's own lists (merged in order afterwards,
// so the result does not depend on the threads).
void Solver::findContacts(int k, int T) {
    if (contactParts_.size() != static_cast<std::size_t>(T)) {
        contactParts_.assign(static_cast<std::size_t>(T), {});
    }
    ContactPart& part = contactParts_[static_cast<std::size_t>(k)];
    part.contacts.clear();
    part.selfContacts.clear();
    const auto& colliders = scene_.colliders;
    const Particles& particles = scene_.particles;
    const Real margin = scene_.solver.collisionMargin;
    const auto [begin, end] = particleRange(k, T, particles.size());
    for (std::size_t i = colliders.empty() ? end : begin; i < end; ++i) {
        const SolverParticle& q = predicted_[i];
        if (!(q.w > 0)) {
            continue;
        }
        const Vec3& x = particles.positions[i];
        const Vec3 p(q.x, q.y, q.z);
        for (std::size_t c = 0; c < colliders.size(); ++c) {
            const Bounds& b = colliderBounds_[c];
            if (!b.empty() && ((x.cwiseMin(p).array() > b.max.array() + margin).any() ||
                               (x.cwiseMax(p).array() < b.min.array() - margin).any())) {
                continue;
            }
            Contact contact;
            if (contactFor(colliders[c], x, p, margin, contact.point, contact.normal)) {
                contact.particle = static_cast<Index>(i);
                contact.collider = static_cast<Index>(c);
                contact.approachSpeed = particles.velocities[i].dot(contact.normal);
                part.contacts.push_back(contact);
            }
        }
    }
    const std::size_t vertices = selfCollisionWorkspace_.vertices.size();
    if (vertices > 0) {
        const auto [first, last] = particleRange(k, T, vertices);
        querySelfContacts(clothTriangles_, particles.positions, predictedPositions_,
                          scene_.solver.clothThickness, selfCollisionWorkspace_, first, last,
                          part.candidates, part.selfContacts);
    }
}

void Solver::mergeContacts() {
    contacts_.clear();
    selfContacts_.clear();
    for (const ContactPart& part : contactParts_) {
        contacts_.insert(contacts_.end(), part.contacts.begin(), part.contacts.end());
        selfContacts_.insert(selfContacts_.end(), part.selfContacts.begin(),
                             part.selfContacts.end());
    }
}

// PBD eq. 12-13 with the triangle's point fixed by its barycentric coordinates:
// grad_q = s n, grad_pi = -s b_i n (n held constant during the projection).
void Solver::solveSelfContacts() {
    const Real h = scene_.solver.clothThickness;
    for (const SelfContact& c : selfContacts_) {
        SolverParticle* v[4] = {&predicted_[c.particle], &predicted_[c.triangle[0]],
                                &predicted_[c.triangle[1]], &predicted_[c.triangle[2]]};
        auto pos = [&](int k) { return Vec3(v[k]->x, v[k]->y, v[k]->z); };
        const Vec3 n = (pos(2) - pos(1)).cross(pos(3) - pos(1));
        const Real len = n.norm();
        if (!(len > 0)) {
            continue;
        }
        const Vec3 un = c.side * n / len;
        const Vec3 onTriangle =
            c.barycentric[0] * pos(1) + c.barycentric[1] * pos(2) + c.barycentric[2] * pos(3);
        const Real C = (pos(0) - onTriangle).dot(un) - h;
        if (C >= 0) {
            continue;
        }
        const Real weights[4] = {1, -c.barycentric[0], -c.barycentric[1], -c.barycentric[2]};
        Real denom = 0;
        for (int k = 0; k < 4; ++k) {
            denom += v[k]->w * weights[k] * weights[k];
        }
        if (!(denom > 0)) {
            continue;
        }
        const Real dl = -C / denom;
        for (int k = 0; k < 4; ++k) {
            const Vec3 dp = (v[k]->w * weights[k] * dl) * un;
            v[k]->x += dp.x();
            v[k]->y += dp.y();
            v[k]->z += dp.z();
        }
    }
}

// C(p) = (p - q)·n - margin >= 0, projected only when violated (PBD §3.4); the particle alone
// moves, so its mass does not matter.
void Solver::solveContacts() {
    const Real margin = scene_.solver.collisionMargin;
    for (Contact& c : contacts_) {
        SolverParticle& q = predicted_[c.particle];
        const Vec3 p(q.x, q.y, q.z);
        const Real C = (p - c.point).dot(c.normal) - margin;
        if (C < 0) {
            q.x -= C * c.normal.x();
            q.y -= C * c.normal.y();
            q.z -= C * c.normal.z();
            c.normalCorrection -= C;
        }
    }
}

// Friction and restitution on the velocities of particles whose contact acted (PBD §3.1 line
// 16): the tangential speed drops by mu times the normal speed change the contact caused
// (dynamic Coulomb friction), and a particle that approached at speed u leaves at e u at least.
void Solver::applyContactVelocities(Real h) {
    Particles& particles = scene_.particles;
    for (const Contact& c : contacts_) {
        if (!(c.normalCorrection > 0)) {
            continue;
        }
        const Collider& collider = scene_.colliders[c.collider];
        Vec3& v = particles.velocities[c.particle];
        const Real vn = v.dot(c.normal);
        Vec3 vt = v - vn * c.normal;
        const Real speed = vt.norm();
        if (speed > 0) {
            const Real drop = std::min(collider.friction * c.normalCorrection / h, speed);
            vt *= (speed - drop) / speed;
        }
        Real vnNew = vn;
        if (c.approachSpeed < 0) {
            vnNew = std::max(vn, -collider.restitution * c.approachSpeed);
        }
        v = vt + vnNew * c.normal;
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
                kernels::solve<true>(b, P.data(), regions.begin(batch, 0, c),
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
