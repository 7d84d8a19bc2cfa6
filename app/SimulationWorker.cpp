#include "app/SimulationWorker.h"

#include "core/air/AirOptimizer.h"
#include "core/fields/Fields.h"
#include "core/solver/Solver.h"

#include <chrono>
#include <cmath>
#include <limits>

namespace pbd {

SimulationWorker::SimulationWorker(QObject* parent)
    : QObject(parent) {
    thread_ = std::thread([this] { loop(); });
}

SimulationWorker::~SimulationWorker() {
    {
        std::lock_guard lock(mutex_);
        quit_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void SimulationWorker::load(const Scene& scene) {
    {
        std::lock_guard lock(mutex_);
        pending_ = std::make_unique<Scene>(scene);
        loaded_ = std::make_unique<Scene>(scene);
        newSettings_ = scene.solver;
        pendingSteps_ = 0;
        running_ = false;
        resetRequested_ = false;
        settingsChanged_ = false;
        nanParticle_ = -1;
        groupEdits_.clear(); // they were for the previous scene
        colliderEdit_.reset();
    }
    auto snapshot = std::make_shared<SimulationSnapshot>();
    snapshot->positions = scene.particles.positions;
    snapshot->bodies = std::make_shared<std::vector<Body>>(scene.bodies);
    snapshot->topologyVersion = ++topologyCounter_;
    {
        std::lock_guard lock(snapshotMutex_);
        snapshot_ = std::move(snapshot);
    }
    wake_.notify_all();
}

void SimulationWorker::play() {
    {
        std::lock_guard lock(mutex_);
        if (!loaded_) {
            return;
        }
        pendingSteps_ = -1;
        repace_ = true;
        running_ = true;
    }
    wake_.notify_all();
}

void SimulationWorker::pause() {
    std::lock_guard lock(mutex_);
    pendingSteps_ = 0;
    running_ = false;
}

void SimulationWorker::step(int count) {
    {
        std::lock_guard lock(mutex_);
        if (!loaded_ || count <= 0 || pendingSteps_ < 0) {
            return;
        }
        pendingSteps_ += count;
        running_ = true;
    }
    wake_.notify_all();
}

void SimulationWorker::reset() {
    {
        std::lock_guard lock(mutex_);
        resetRequested_ = true;
        pendingSteps_ = 0;
        running_ = false;
    }
    wake_.notify_all();
}

void SimulationWorker::setSettings(Real timeStep, int substeps, int iterations, int threads) {
    {
        std::lock_guard lock(mutex_);
        newSettings_.timeStep = timeStep;
        newSettings_.substeps = std::max(1, substeps);
        newSettings_.iterations = std::max(1, iterations);
        newSettings_.threads = std::max(0, threads);
        settingsChanged_ = true;
    }
    wake_.notify_all();
}

void SimulationWorker::setAirSettings(int optimizationInterval, Real qualityThreshold,
                                      Real contactDistance, Real friction) {
    {
        std::lock_guard lock(mutex_);
        newSettings_.airOptimizationInterval = std::max(0, optimizationInterval);
        newSettings_.airQualityThreshold = qualityThreshold;
        newSettings_.airContactDistance = std::max<Real>(0, contactDistance);
        newSettings_.airFriction = std::max<Real>(0, friction);
        settingsChanged_ = true;
    }
    wake_.notify_all();
}

void SimulationWorker::setRigidSettings(const RigidSettings& rigid) {
    {
        std::lock_guard lock(mutex_);
        newSettings_.rigid = rigid;
        settingsChanged_ = true;
    }
    wake_.notify_all();
}

void SimulationWorker::setExactAngularMomentum(bool on) {
    {
        std::lock_guard lock(mutex_);
        newSettings_.exactAngularMomentum = on;
        settingsChanged_ = true;
    }
    wake_.notify_all();
}

void SimulationWorker::setSelfCollision(bool on, Real thickness) {
    {
        std::lock_guard lock(mutex_);
        newSettings_.selfCollision = on;
        newSettings_.clothThickness = thickness;
        settingsChanged_ = true;
    }
    wake_.notify_all();
}

SolverSettings SimulationWorker::settings() const {
    std::lock_guard lock(mutex_);
    return newSettings_;
}

void SimulationWorker::setRealTime(bool on) {
    {
        std::lock_guard lock(mutex_);
        realTime_ = on;
        repace_ = true;
    }
    wake_.notify_all();
}

void SimulationWorker::injectNaN(Index particle) {
    {
        std::lock_guard lock(mutex_);
        nanParticle_ = particle;
    }
    wake_.notify_all();
}

void SimulationWorker::setRecordConstraints(bool on) {
    {
        std::lock_guard lock(mutex_);
        recordConstraints_ = on;
        republishRequested_ = true; // show (or drop) them now, also while paused
    }
    wake_.notify_all();
}

namespace {

void applyGroupEdit(Scene& scene, int index, const ConstraintGroup& group) {
    if (index >= 0 && std::size_t(index) < scene.constraintGroups.size()) {
        scene.constraintGroups[std::size_t(index)] = group;
        applyConstraintGroup(scene.constraints, index, group);
    }
}

} // namespace

void SimulationWorker::setColliders(const std::vector<Collider>& colliders) {
    {
        std::lock_guard lock(mutex_);
        colliderEdit_ = colliders;
        for (Scene* s : {loaded_.get(), pending_.get()}) {
            if (s) {
                s->colliders = colliders;
            }
        }
    }
    wake_.notify_all();
}

void SimulationWorker::setConstraintGroup(int index, const ConstraintGroup& group) {
    {
        std::lock_guard lock(mutex_);
        groupEdits_.emplace_back(index, group);
        if (loaded_) {
            applyGroupEdit(*loaded_, index, group);
        }
        if (pending_) {
            applyGroupEdit(*pending_, index, group);
        }
    }
    wake_.notify_all();
}

void SimulationWorker::setInverseMass(Index particle, Real inverseMass) {
    {
        std::lock_guard lock(mutex_);
        massEdits_.emplace_back(particle, inverseMass);
        if (loaded_ && particle < loaded_->particles.size()) {
            loaded_->particles.inverseMasses[particle] = inverseMass;
        }
        if (pending_ && particle < pending_->particles.size()) {
            pending_->particles.inverseMasses[particle] = inverseMass;
        }
    }
    wake_.notify_all();
}

std::shared_ptr<const SimulationSnapshot> SimulationWorker::latest() const {
    signalQueued_ = false;
    std::lock_guard lock(snapshotMutex_);
    return snapshot_;
}

void SimulationWorker::restartAirHistory() {
    std::lock_guard history(historyMutex_);
    airHistory_.clear();
    ++airHistoryGeneration_;
}

std::vector<AirSample> SimulationWorker::airHistory(std::size_t from,
                                                    std::uint64_t* generation) const {
    std::lock_guard history(historyMutex_);
    if (generation) {
        *generation = airHistoryGeneration_;
    }
    if (from >= airHistory_.size()) {
        return {};
    }
    return {airHistory_.begin() + std::ptrdiff_t(from), airHistory_.end()};
}

void SimulationWorker::publish(bool topologyChanged) {
    auto snapshot = std::make_shared<SimulationSnapshot>();
    snapshot->positions = scene_->particles.positions;
    snapshot->time = time_;
    snapshot->steps = steps_;
    snapshot->lastStepMilliseconds = lastStepMs_;
    snapshot->stepsPerSecond = stepsPerSecond_;
    snapshot->convergence = convergence_;
    snapshot->constraintError = constraintError_;
    snapshot->air = air_;
    snapshot->airOptimization = airOptimization_;
    snapshot->airOptimizationPasses = airOptimizationPasses_;
    snapshot->rigidPoses.reserve(scene_->rigidBodies.size());
    for (const RigidBody& b : scene_->rigidBodies) {
        snapshot->rigidPoses.push_back({b.x, b.q, b.v, b.omega, b.sleeping});
    }
    snapshot->rigidContacts = rigidContacts_;
    snapshot->rigidSubstep = scene_->solver.timeStep / std::max(1, scene_->solver.substeps);
    snapshot->rigidStatistics = rigidStatistics_;
    snapshot->rigidJointError = rigidJointError_;
    const bool airChanged = airChanged_;
    if (airChanged) {
        snapshot->airTets = std::make_shared<std::vector<Tetrahedron>>(scene_->air.tets);
        snapshot->airTriangles = std::make_shared<std::vector<Triangle>>(scene_->air.triangles);
        snapshot->airVersion = ++airCounter_;
        airChanged_ = false;
    }
    if (recordConstraints_) {
        auto lines = std::make_shared<ConstraintLines>(constraintLines(*scene_, time_, contacts_));
        snapshot->constraints = std::move(lines);
    }
    if (topologyChanged) {
        snapshot->bodies = std::make_shared<std::vector<Body>>(scene_->bodies);
        snapshot->topologyVersion = ++topologyCounter_;
    }
    {
        std::lock_guard lock(snapshotMutex_);
        if (!topologyChanged && snapshot_) {
            snapshot->bodies = snapshot_->bodies;
            snapshot->topologyVersion = snapshot_->topologyVersion;
        }
        if (!airChanged && snapshot_) {
            snapshot->airTets = snapshot_->airTets;
            snapshot->airTriangles = snapshot_->airTriangles;
            snapshot->airVersion = snapshot_->airVersion;
        }
        snapshot_ = std::move(snapshot);
    }
    if (!signalQueued_.exchange(true)) {
        emit snapshotReady();
    }
}

void SimulationWorker::loop() {
    std::unique_ptr<Solver> solver;
    Particles lastGood;
    std::unique_ptr<Scene> lastGoodScene; // when tearing may change the topology
    auto rateStart = std::chrono::steady_clock::now();
    auto errorMeasured = rateStart - std::chrono::seconds(1);
    std::size_t rateSteps = 0;
    auto paceWall = std::chrono::steady_clock::now();
    Real paceSim = 0;
    for (;;) {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] {
            return quit_ || pending_ || resetRequested_ || settingsChanged_ || nanParticle_ >= 0 ||
                   !massEdits_.empty() || !groupEdits_.empty() || colliderEdit_ ||
                   republishRequested_ || (pendingSteps_ != 0 && scene_);
        });
        if (quit_) {
            return;
        }
        bool republish = false;
        bool newState = false;
        if (pending_) {
            scene_ = std::move(pending_);
            solver.reset();
            time_ = 0;
            steps_ = 0;
            restartAirHistory();
            constraintError_ = 0;
            newState = true;
            // A scene the solver cannot step (a NaN, a zero mass, a negative compliance, a
            // degenerate tet) is refused when Play is pressed, naming the body and element.
            const std::vector<std::string> problems = validateScene(*scene_);
            blocked_ = problems.empty() ? QString() : QString::fromStdString(problems.front());
        }
        if (resetRequested_) {
            resetRequested_ = false;
            if (loaded_) {
                scene_ = std::make_unique<Scene>(*loaded_);
                scene_->solver = newSettings_;
                solver.reset();
                time_ = 0;
                steps_ = 0;
                restartAirHistory();
                constraintError_ = 0;
                republish = true;
                newState = true;
            }
        }
        if (settingsChanged_) {
            settingsChanged_ = false;
            if (scene_) {
                scene_->solver = newSettings_;
            }
        }
        if (nanParticle_ >= 0 && scene_) {
            if (static_cast<std::size_t>(nanParticle_) < scene_->particles.size()) {
                scene_->particles.positions[static_cast<std::size_t>(nanParticle_)].x() =
                    std::numeric_limits<Real>::quiet_NaN();
            }
            nanParticle_ = -1;
        }
        bool refresh = false; // the same state again, with or without constraint lines
        if (republishRequested_) {
            republishRequested_ = false;
            refresh = scene_ && pendingSteps_ == 0;
        }
        if (!massEdits_.empty()) {
            if (scene_) {
                for (const auto& [i, w] : massEdits_) {
                    if (i < scene_->particles.size()) {
                        scene_->particles.inverseMasses[i] = w;
                        if (w == 0) {
                            scene_->particles.velocities[i] = Vec3::Zero();
                        }
                    }
                }
                solver.reset(); // rebuilt from the edited particles at the next step
            }
            massEdits_.clear();
        }
        if (!groupEdits_.empty()) {
            if (scene_) {
                for (const auto& [index, group] : groupEdits_) {
                    applyGroupEdit(*scene_, index, group);
                }
                solver.reset(); // its PBD stiffness cache follows the new materials
            }
            groupEdits_.clear();
        }
        if (colliderEdit_) {
            if (scene_) {
                scene_->colliders = std::move(*colliderEdit_);
                solver.reset(); // it keeps the colliders' acceleration structures
            }
            colliderEdit_.reset();
        }
        const bool stepNow = pendingSteps_ != 0 && scene_;
        if (stepNow && pendingSteps_ < 0 && realTime_) {
            // Real-time play: wait (for new commands at most) until the clock catches up with
            // the simulated time.
            if (repace_) {
                repace_ = false;
                paceWall = std::chrono::steady_clock::now();
                paceSim = time_;
            }
            const auto due =
                paceWall + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                               std::chrono::duration<double>(time_ - paceSim));
            if (std::chrono::steady_clock::now() < due) {
                wake_.wait_until(lock, due, [&] {
                    return quit_ || pending_ || resetRequested_ || settingsChanged_ ||
                           nanParticle_ >= 0 || pendingSteps_ >= 0 || repace_;
                });
                continue; // re-examine the commands, then step when due
            }
            if (std::chrono::steady_clock::now() - due > std::chrono::milliseconds(200)) {
                repace_ = true; // the solver cannot keep up: do not try to catch up later
            }
        }
        stepping_ = stepNow; // decided under the lock: a pause after this sees it
        lock.unlock();
        auto keepGood = [&] {
            if (scene_->solver.tearingStretch > 1) {
                lastGoodScene = std::make_unique<Scene>(*scene_);
            } else {
                lastGood = scene_->particles;
            }
        };
        if (newState) {
            keepGood();
            airChanged_ = true; // another scene, or the loaded one's air again
            airOptimization_ = AirOptimizationStatistics{};
            airOptimizationPasses_ = 0;
            rigidContacts_.clear();
            rigidStatistics_ = RigidStatistics{};
            rigidJointError_ = 0;
        }
        if (republish) {
            publish(true);
        } else if (refresh) {
            publish(false);
        }
        if (!stepNow) {
            continue;
        }
        // Until this step is published (or refused): the flag drops when the iteration ends.
        struct SteppingDone {
            std::atomic<bool>& flag;
            ~SteppingDone() { flag = false; }
        } steppingDone{stepping_};

        if (!blocked_.isEmpty()) {
            {
                std::lock_guard relock(mutex_);
                pendingSteps_ = 0;
                running_ = false;
            }
            publish(true);
            emit diverged(tr("Cannot simulate this scene: %1. Fix it and open the scene again.")
                              .arg(blocked_));
            continue;
        }
        if (!solver) {
            solver = std::make_unique<Solver>(*scene_);
        }
        // The state to return to is the one after the last good step (or the loaded one), kept
        // before anything (an injected NaN, a settings change) touched it.
        const bool tearing = scene_->solver.tearingStretch > 1 && lastGoodScene;
        auto firstNonFinite = [&] {
            for (std::size_t i = 0; i < scene_->particles.size(); ++i) {
                if (!scene_->particles.positions[i].allFinite() ||
                    !scene_->particles.velocities[i].allFinite()) {
                    return i;
                }
            }
            return scene_->particles.size();
        };
        // A state that is already bad (edited in, injected) is caught before the solver spreads
        // it, so the message names the particle where it started.
        std::size_t bad = firstNonFinite();
        const bool before = bad < scene_->particles.size();
        if (!before) {
            solver->setRecordConvergence(recordConvergence_);
            solver->step();
            convergence_ = solver->convergence();
            air_ = solver->airStatistics();
            airOptimization_ = solver->airOptimization();
            airOptimizationPasses_ = solver->airOptimizationPasses();
            airChanged_ = airChanged_ || airOptimization_.changes() > 0;
            if (!scene_->rigidBodies.empty()) {
                rigidContacts_ = solver->rigid().contacts();
                rigidStatistics_ = solver->rigid().statistics();
                rigidJointError_ = solver->rigid().maxJointError();
            }
            if (recordConstraints_) {
                contacts_ = solver->contacts();
            } else {
                contacts_.clear();
            }
            bad = firstNonFinite();
        }
        if (bad < scene_->particles.size()) {
            if (tearing) {
                *scene_ = *lastGoodScene;
            } else {
                scene_->particles = lastGood;
            }
            solver.reset(); // its caches may hold the bad state
            {
                std::lock_guard relock(mutex_);
                pendingSteps_ = 0;
                running_ = false;
            }
            publish(true);
            emit diverged((before ? tr("%2 had a non-finite position before step %1.")
                                  : tr("The simulation diverged in step %1: %2 got a non-finite "
                                       "position."))
                              .arg(steps_ + 1)
                              .arg([&] {
                                  QString who =
                                      QString::fromStdString(describeParticle(*scene_, bad));
                                  if (before) {
                                      who[0] = who[0].toUpper(); // it starts the sentence
                                  }
                                  return who;
                              }()) +
                          tr(" The run is paused at the state after step %1.").arg(steps_));
            continue;
        }
        ++steps_;
        time_ += scene_->solver.timeStep;
        keepGood();
        if (!scene_->air.empty()) {
            const AirSample sample{double(time_), air_.invertedBefore, air_.invertedAfter,
                                   recordAirQuality_ ? double(worstAirQuality(*scene_))
                                                     : std::numeric_limits<double>::quiet_NaN()};
            std::lock_guard history(historyMutex_);
            airHistory_.push_back(sample);
        }
        lastStepMs_ = solver->lastStepMilliseconds();
        ++rateSteps;
        const auto now = std::chrono::steady_clock::now();
        const double elapsed = std::chrono::duration<double>(now - rateStart).count();
        if (elapsed >= 0.5) {
            stepsPerSecond_ = static_cast<double>(rateSteps) / elapsed;
            rateSteps = 0;
            rateStart = now;
        }
        bool finished = false;
        {
            std::lock_guard relock(mutex_);
            if (pendingSteps_ > 0 && --pendingSteps_ == 0) {
                running_ = false;
                finished = true;
            }
        }
        // The status bar's constraint error: an extra pass over the constraints, so not every
        // step of a fast run.
        // While the Convergence dock records, its last entry is that error already.
        if (!convergence_.empty()) {
            constraintError_ = convergence_.back();
        } else if (finished || now - errorMeasured >= std::chrono::milliseconds(100)) {
            constraintError_ = solver->constraintError();
            errorMeasured = now;
        }
        const bool torn = !solver->tears().empty();
        publish(torn);
        if (finished) {
            emit paused();
        }
    }
}

} // namespace pbd
