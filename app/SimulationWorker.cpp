#include "app/SimulationWorker.h"

#include "core/air/AirOptimizer.h"
#include "core/fields/Fields.h"
#include "core/solver/Solver.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace pbd {

SimulationWorker::SimulationWorker(QObject* parent)
    : QObject(parent)
    , cache_(std::make_unique<FrameCache>()) {
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

void SimulationWorker::seek(std::size_t step) {
    {
        std::lock_guard lock(mutex_);
        seekRequest_ = long(step);
        repace_ = true;
    }
    wake_.notify_all();
}

void SimulationWorker::setCacheSettings(const CacheSettings& settings) {
    {
        std::lock_guard lock(mutex_);
        if (settings == cacheSettings_) {
            return;
        }
        cacheSettings_ = settings;
        cacheSettings_.every = std::max(1, settings.every);
        cacheSettingsChanged_ = true;
    }
    wake_.notify_all();
}

CacheSettings SimulationWorker::cacheSettings() const {
    std::lock_guard lock(mutex_);
    return cacheSettings_;
}

void SimulationWorker::exportCache(const CacheExportOptions& options) {
    {
        std::lock_guard lock(mutex_);
        exportRequest_ = options;
        exportCancel_ = false;
        exportDone_ = 0;
        exportTotal_ = 0;
        exporting_ = true;
        pendingSteps_ = 0;
        running_ = false;
    }
    wake_.notify_all();
}

void SimulationWorker::runExport(const CacheExportOptions& options) {
    const auto fail = [&](const QString& text) {
        exporting_ = false;
        emit exportFinished(false, text);
    };
    if (!scene_ || cache_->empty()) {
        return fail(tr("Nothing to export: the frame cache is empty (play the simulation first)."));
    }
    RestFrames rest;
    {
        std::lock_guard lock(mutex_);
        rest = captureRestFrames(loaded_ ? *loaded_ : *scene_);
    }
    const std::vector<std::size_t> steps = cache_->steps();
    exportTotal_ = int(steps.size());
    Scene frame = *scene_;
    std::unique_ptr<CacheExporter> exporter;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        if (exportCancel_) {
            return fail(tr("Export cancelled after %1 of %2 frames; the files in %3 are "
                           "incomplete.")
                            .arg(i)
                            .arg(steps.size())
                            .arg(QString::fromStdString(options.folder.string())));
        }
        if (auto restored = cache_->restore(steps[i], frame); !restored) {
            return fail(QString::fromStdString(restored.error()));
        }
        if (!exporter) {
            auto begun = CacheExporter::begin(frame, rest, options);
            if (!begun) {
                return fail(QString::fromStdString(begun.error()));
            }
            exporter = std::move(*begun);
        }
        if (Result<bool> added = exporter->addFrame(frame, cache_->frame(steps[i])->time); !added) {
            return fail(QString::fromStdString(added.error()));
        }
        exportDone_ = int(i + 1);
    }
    const Result<CacheExportSummary> summary = exporter->finish();
    if (!summary) {
        return fail(QString::fromStdString(summary.error()));
    }
    QStringList files;
    for (const auto& f : summary->files) {
        files << QString::fromStdString(f.filename().string());
    }
    exporting_ = false;
    emit exportFinished(true, tr("Exported %1 frames (steps %2-%3) to %4: %5.")
                                  .arg(summary->frames)
                                  .arg(steps.front())
                                  .arg(steps.back())
                                  .arg(QString::fromStdString(options.folder.string()))
                                  .arg(files.join(", ")));
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
                                      Real contactDistance, Real friction, int iterations) {
    {
        std::lock_guard lock(mutex_);
        newSettings_.airOptimizationInterval = std::max(0, optimizationInterval);
        newSettings_.airQualityThreshold = qualityThreshold;
        newSettings_.airContactDistance = std::max<Real>(0, contactDistance);
        newSettings_.airFriction = std::max<Real>(0, friction);
        newSettings_.airIterations = std::max(-1, iterations);
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

void SimulationWorker::setContinuousCollision(bool on) {
    {
        std::lock_guard lock(mutex_);
        newSettings_.continuousCollision = on;
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

void SimulationWorker::truncateAirHistory(double time) {
    std::lock_guard history(historyMutex_);
    while (!airHistory_.empty() && airHistory_.back().time > time + 1e-12) {
        airHistory_.pop_back();
    }
    ++airHistoryGeneration_; // the plot reads it again
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

std::shared_ptr<SimulationSnapshot> SimulationWorker::freeSnapshot() {
    // Three snapshots take turns (a triple buffer): the newest, the one the view may still be
    // drawing, and one to fill. One held by no one but the pool is reachable by no other
    // thread (the newest is always held by snapshot_ too), so it is filled again in place and
    // its arrays keep their memory: a step of a large scene copies its positions, and
    // allocates nothing.
    for (std::shared_ptr<SimulationSnapshot>& s : snapshotPool_) {
        if (s && s.use_count() == 1) {
            // The view's last reads of it happened before its release (the count's decrement).
            std::atomic_thread_fence(std::memory_order_acquire);
            std::vector<Vec3> positions = std::move(s->positions);
            std::vector<SimulationSnapshot::RigidPose> poses = std::move(s->rigidPoses);
            *s = SimulationSnapshot{};
            s->positions = std::move(positions);
            s->rigidPoses = std::move(poses);
            s->rigidPoses.clear();
            return s;
        }
    }
    // None free: an empty slot, or else the pool lets go of the first (whoever holds it keeps
    // it) and fills a new one.
    const auto slot = std::find(snapshotPool_.begin(), snapshotPool_.end(), nullptr);
    std::shared_ptr<SimulationSnapshot>& s = slot != snapshotPool_.end() ? *slot : snapshotPool_[0];
    s = std::make_shared<SimulationSnapshot>();
    return s;
}

void SimulationWorker::publish(bool topologyChanged) {
    std::shared_ptr<SimulationSnapshot> snapshot = freeSnapshot();
    snapshot->positions.assign(scene_->particles.positions.begin(),
                               scene_->particles.positions.end());
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
    snapshot->cacheFirst = cache_->firstStep();
    snapshot->cacheLast = cache_->lastStep();
    snapshot->cacheFrames = cache_->size();
    snapshot->cacheBytes = cache_->memoryBytes();
    snapshot->cacheDropped = cache_->droppedFrames();
    snapshot->cacheSpilled = cache_->spilledFrames();
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
#ifdef __linux__
    // The solver yields to the window: at nice 10 it takes what the view (and, without a GPU,
    // Mesa's rasteriser threads) leave, so the view keeps turning while a large scene steps
    // (cloth-xl under llvmpipe: 17 frames a second at nice 0; see docs/performance.md).
    setpriority(PRIO_PROCESS, pid_t(syscall(SYS_gettid)), 10);
#endif
    std::unique_ptr<Solver> solver;
    Particles lastGood;
    std::unique_ptr<Scene> lastGoodScene; // when tearing may change the topology
    auto rateStart = std::chrono::steady_clock::now();
    auto errorMeasured = rateStart - std::chrono::seconds(1);
    // At least 0.1 s between measures, and 20 times the last measure's cost: cloth-xl's pass
    // over 773,000 constraints took a sixth of the worker's time when measured every step.
    std::chrono::steady_clock::duration errorInterval = std::chrono::milliseconds(100);
    // The Convergence dock's record costs a pass over every constraint per iteration (cloth-xl:
    // its step took twice as long): a step records it when 0.1 s, and ten times the last
    // recorded step's time, have passed since that one.
    auto convergenceRecorded = rateStart - std::chrono::seconds(1);
    std::chrono::steady_clock::duration convergenceInterval = std::chrono::milliseconds(100);
    std::size_t rateSteps = 0;
    auto paceWall = std::chrono::steady_clock::now();
    Real paceSim = 0;
    for (;;) {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] {
            return quit_ || pending_ || resetRequested_ || settingsChanged_ || nanParticle_ >= 0 ||
                   !massEdits_.empty() || !groupEdits_.empty() || colliderEdit_ ||
                   republishRequested_ || seekRequest_ >= 0 || cacheSettingsChanged_ ||
                   exportRequest_ || (pendingSteps_ != 0 && scene_);
        });
        if (quit_) {
            return;
        }
        bool republish = false;
        bool newState = false;
        if (pending_) {
            scene_ = std::move(pending_);
            solver.reset();
            carry_.reset();
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
                carry_.reset();
                time_ = 0;
                steps_ = 0;
                restartAirHistory();
                constraintError_ = 0;
                republish = true;
                newState = true;
            }
        }
        // An edit (a setting other than the thread count, a mass, a group, the colliders)
        // makes the cached frames after the current one another history: they are dropped and
        // the current frame is taken again as edited.
        bool edited = false;
        const auto replaceSolver = [&] {
            if (solver) {
                carry_ = solver->state(); // the new one goes on from the same time
                solver.reset();
            }
        };
        if (settingsChanged_) {
            settingsChanged_ = false;
            if (scene_) {
                SolverSettings old = scene_->solver;
                old.threads = newSettings_.threads;
                edited = !(old == newSettings_);
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
                replaceSolver(); // rebuilt from the edited particles at the next step
                edited = true;
            }
            massEdits_.clear();
        }
        if (!groupEdits_.empty()) {
            if (scene_) {
                for (const auto& [index, group] : groupEdits_) {
                    applyGroupEdit(*scene_, index, group);
                }
                replaceSolver(); // its PBD stiffness cache follows the new materials
                edited = true;
            }
            groupEdits_.clear();
        }
        if (colliderEdit_) {
            if (scene_) {
                scene_->colliders = std::move(*colliderEdit_);
                replaceSolver(); // it keeps the colliders' acceleration structures
                edited = true;
            }
            colliderEdit_.reset();
        }
        long seekTo = -1;
        if (seekRequest_ >= 0) {
            seekTo = seekRequest_;
            seekRequest_ = -1;
        }
        std::optional<CacheSettings> newCache;
        if (cacheSettingsChanged_) {
            cacheSettingsChanged_ = false;
            newCache = cacheSettings_;
        }
        std::optional<CacheExportOptions> exportNow;
        if (exportRequest_) {
            exportNow = std::move(exportRequest_);
            exportRequest_.reset();
        }
        const bool stepNow = pendingSteps_ != 0 && scene_;
        const bool commands = edited || seekTo >= 0 || newCache || exportNow;
        if (stepNow && pendingSteps_ < 0 && realTime_ && !commands) {
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
        const auto ensureSolver = [&] {
            if (!solver) {
                solver = std::make_unique<Solver>(*scene_);
                if (carry_) {
                    solver->restore(*carry_);
                    carry_.reset();
                }
            }
        };
        const auto record = [&](bool force) {
            if (!scene_ || !blocked_.isEmpty()) {
                return;
            }
            ensureSolver();
            if (Result<bool> r = cache_->record(*scene_, *solver, force); !r && !spillFailed_) {
                spillFailed_ = true;
                emit message(QString::fromStdString(r.error()));
            }
        };
        // Shows a cached frame: the scene as it was then, and the solver state to go on from.
        const auto showCached = [&](const CachedFrame& frame) {
            auto restored = cache_->restore(frame.step, *scene_);
            if (!restored) {
                emit message(QString::fromStdString(restored.error()));
                return false;
            }
            solver.reset();
            carry_ = *restored;
            time_ = frame.time;
            steps_ = frame.step;
            if (frame.air != shownAir_) {
                airChanged_ = true;
                shownAir_ = frame.air;
            }
            keepGood();
            rigidContacts_.clear();
            contacts_.clear();
            return true;
        };
        if (newCache) {
            FrameCacheSettings fs;
            fs.every = std::size_t(newCache->every);
            fs.budgetBytes = newCache->budgetBytes;
            fs.spillFolder = newCache->spillFolder.toStdString();
            if (fs.every != cache_->settings().every ||
                fs.spillFolder != cache_->settings().spillFolder) {
                cache_ = std::make_unique<FrameCache>(fs); // another cache: start it here
                spillFailed_ = false;
                record(true);
            } else {
                cache_->setBudget(fs.budgetBytes);
            }
            republish = republish || !stepNow;
        }
        if (newState) {
            cache_->clear();
            record(true);
            refresh = refresh || !republish; // the timeline shows frame 0 cached
        } else if (edited && scene_) {
            cache_->truncateAfter(steps_);
            truncateAirHistory(time_);
            record(true);
            republish = republish || !stepNow;
        }
        long shownBySeek = -1;
        if (seekTo >= 0 && scene_) {
            const CachedFrame* frame = cache_->atOrBefore(std::size_t(seekTo));
            if (!frame) {
                emit message(tr("Step %1 is not in the frame cache (it holds steps %2-%3).")
                                 .arg(seekTo)
                                 .arg(cache_->firstStep())
                                 .arg(cache_->lastStep()));
            } else if (showCached(*frame)) {
                republish = true;
                shownBySeek = frame->step;
            }
        }
        if (exportNow) {
            runExport(*exportNow);
            republish = true;
        }
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
        if (shownBySeek >= 0) {
            emit frameShown(qulonglong(shownBySeek));
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
        // The bookkeeping of a step shown, computed or from the cache.
        const auto finishStep = [&](bool topologyChanged, bool computed) {
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
            } else if (computed && (finished || now - errorMeasured >= errorInterval)) {
                constraintError_ = solver->constraintError();
                errorMeasured = std::chrono::steady_clock::now();
                errorInterval = std::max<std::chrono::steady_clock::duration>(
                    std::chrono::milliseconds(100), 20 * (errorMeasured - now));
            }
            publish(topologyChanged);
            if (finished) {
                emit paused();
            }
        };
        // A step the cache holds is shown from it: computing it again gives the same bits.
        if (const CachedFrame* next = cache_->frame(steps_ + 1); next && showCached(*next)) {
            finishStep(next->structure != nullptr, false);
            continue;
        }
        ensureSolver();
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
        std::string failure; // what a step that threw said (out of memory in a runaway)
        const auto began = std::chrono::steady_clock::now();
        const bool recordThisStep =
            recordConvergence_ && began - convergenceRecorded >= convergenceInterval;
        if (!before) {
            solver->setRecordConvergence(recordThisStep);
            try {
                solver->step();
            } catch (const std::exception& e) {
                failure = Solver::stepFailure(e, long(steps_) + 1);
            }
        }
        // A step gone bad (non-finite, or it threw): back to the last good step, paused, with
        // the solver built again from it at the next step (its caches may hold the bad state).
        const auto backToLastGood = [&] {
            if (tearing) {
                *scene_ = *lastGoodScene;
            } else {
                scene_->particles = lastGood;
            }
            solver.reset();
            // The next one goes on from the last good step: its cached state when kept.
            const CachedFrame* good = cache_->frame(steps_);
            carry_ = good ? good->solver : Solver::coldState(time_, steps_);
            {
                std::lock_guard relock(mutex_);
                pendingSteps_ = 0;
                running_ = false;
            }
            publish(true);
        };
        if (!failure.empty()) {
            backToLastGood();
            QString message = QString::fromStdString(failure);
            message[0] = message[0].toUpper();
            emit diverged(message +
                          tr(". The run is paused at the state after step %1.").arg(steps_));
            continue;
        }
        if (!before) {
            if (recordThisStep) {
                convergence_ = solver->convergence();
                convergenceRecorded = began;
                convergenceInterval = std::max<std::chrono::steady_clock::duration>(
                    std::chrono::milliseconds(100),
                    10 * (std::chrono::steady_clock::now() - began));
            } else if (!recordConvergence_) {
                convergence_.clear();
            }
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
            backToLastGood();
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
            if (airHistory_.empty() || sample.time > airHistory_.back().time) {
                airHistory_.push_back(sample); // a step recomputed after a seek is there already
            }
        }
        lastStepMs_ = solver->lastStepMilliseconds();
        record(false);
        finishStep(!solver->tears().empty(), true);
        // A cloth collapsed into itself: the step is kept (finite, and worth looking at), the
        // run stops before the next one spends its time on a tangle.
        if (const std::string runaway = solver->runaway(); !runaway.empty()) {
            {
                std::lock_guard relock(mutex_);
                pendingSteps_ = 0;
                running_ = false;
            }
            QString message = QString::fromStdString(runaway);
            message[0] = message[0].toUpper();
            emit diverged(message +
                          tr(". The run is paused at the state after step %1.").arg(steps_));
        }
    }
}

} // namespace pbd
