#pragma once
// Runs the solver on its own thread. The GUI sends commands (play, pause, step, reset, new
// settings) that the worker applies between steps, and draws the newest snapshot the worker
// publishes; neither waits for the other. A step that produces a non-finite position stops the
// run, restores the state after the last good step and says which particle diverged.

#include "core/cache/FrameCache.h"
#include "core/fields/Fields.h"
#include "core/scene/Scene.h"
#include "core/solver/Solver.h"
#include "meshing/CacheExport.h"
#include "widgets/AirPanel.h"

#include <QObject>
#include <QString>

#include <array>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace pbd {

// What the view needs of one simulated state.
struct SimulationSnapshot {
    std::vector<Vec3> positions;
    // The bodies (their triangles) when tearing changed them since the previous snapshot.
    std::shared_ptr<const std::vector<Body>> bodies;
    std::size_t topologyVersion = 0;
    Real time = 0;
    std::size_t steps = 0;
    double lastStepMilliseconds = 0;
    double stepsPerSecond = 0;
    // Largest constraint error after each iteration of the step's last substep, when recorded.
    std::vector<Real> convergence;
    // The largest constraint error at the end of a recent step (measured at most every 0.1 s).
    Real constraintError = 0;
    // The air mesh in the last step (see core/solver/Solver.h); all zero without air.
    AirStatistics air;
    // The air tets, under a new version whenever the optimisation re-meshed them (or a reset
    // or a new scene brought others); the last step's optimisation pass and the passes so far.
    std::shared_ptr<const std::vector<Tetrahedron>> airTets;
    std::shared_ptr<const std::vector<Triangle>> airTriangles; // 2D scenes
    std::size_t airVersion = 0;
    AirOptimizationStatistics airOptimization;
    std::size_t airOptimizationPasses = 0;
    // When drawing constraints is on (setRecordConstraints).
    std::shared_ptr<const ConstraintLines> constraints;
    // Rigid bodies (§5): every body's pose and sleep state, the last substep's contacts (with
    // that substep's length, to turn impulses into forces) and the solver's figures.
    struct RigidPose {
        Vec3 x;
        Quat q;
        Vec3 v;
        Vec3 omega;
        bool sleeping;
    };
    std::vector<RigidPose> rigidPoses;
    std::vector<RigidContact> rigidContacts;
    Real rigidSubstep = 0;
    RigidStatistics rigidStatistics;
    Real rigidJointError = 0;
    // The frame cache (the timeline's marked range): its first and last steps, its frames,
    // the memory they hold, and frames dropped or spilled over the budget so far.
    std::size_t cacheFirst = 0, cacheLast = 0, cacheFrames = 0, cacheBytes = 0;
    std::size_t cacheDropped = 0, cacheSpilled = 0;
};

// What the frame cache keeps (core/cache/FrameCache.h): every k-th step, up to a memory budget,
// spilling to a folder past it or dropping the oldest frames.
struct CacheSettings {
    int every = 1;
    std::size_t budgetBytes = std::size_t(2) << 30;
    QString spillFolder; // empty: drop
    bool operator==(const CacheSettings&) const = default;
};

class SimulationWorker : public QObject {
    Q_OBJECT
public:
    explicit SimulationWorker(QObject* parent = nullptr);
    ~SimulationWorker() override;

    // Stops any run and takes `scene` as the state to simulate and to reset to.
    void load(const Scene& scene);
    void play();
    void pause();
    // Runs `count` more steps, then pauses. Steps the frame cache holds are shown from it
    // (bit for bit what computing them gives) instead of computed again.
    void step(int count = 1);
    // Shows the cached frame of `step` (or the nearest cached one before it) and goes on from
    // there: a play or step after it continues from that frame. Keeps playing if playing.
    void seek(std::size_t step);
    void setCacheSettings(const CacheSettings& settings);
    CacheSettings cacheSettings() const;
    // Writes the cached frames as caches other tools read (meshing/CacheExport.h) on the worker
    // thread, pausing the run; progress() and cancelExport() meanwhile, then exportFinished.
    void exportCache(const CacheExportOptions& options);
    // Frames written and to write of the export under way.
    std::pair<int, int> exportProgress() const { return {exportDone_.load(), exportTotal_.load()}; }
    void cancelExport() { exportCancel_ = true; }
    bool isExporting() const { return exporting_.load(); }
    // Back to the loaded state (paused).
    void reset();
    // New time step (s), substeps, iterations and threads, taken at the next step boundary.
    void setSettings(Real timeStep, int substeps, int iterations, int threads);
    // New air settings (core/solver/SolverSettings.h): optimisation interval (0 = off) and quality
    // threshold, contact distance (m), friction and projections per substep (-1: as the
    // constraints, 0: the air off); taken at the next step boundary.
    void setAirSettings(int optimizationInterval, Real qualityThreshold, Real contactDistance,
                        Real friction, int iterations = -1);
    // Play in real time (simulated time keeps pace with the clock; the default) or as fast as
    // the solver goes.
    void setRealTime(bool on);
    bool realTime() const { return realTime_.load(); }
    // Record the convergence of each step (costs an extra constraint evaluation per iteration).
    void setRecordConvergence(bool on) { recordConvergence_ = on; }
    // Every step's air figures since the scene was loaded or reset (the Air dock's plot), from
    // sample `from` on; `generation` changes at each load and reset (the history restarts).
    std::vector<AirSample> airHistory(std::size_t from, std::uint64_t* generation) const;
    // Measure the worst air quality after each step for the history (a pass over the air).
    void setRecordAirQuality(bool on) { recordAirQuality_ = on; }
    // Publish the constraints as lines with their residuals and lambdas (costs one constraint
    // evaluation per published step).
    void setRecordConstraints(bool on);
    // Debugging aid (and the tests' way to make a run diverge): particle `i` becomes NaN before
    // the next step.
    void injectNaN(Index particle);
    // Sets particle `i`'s inverse mass (0 pins it, and stops it) at the next step boundary, in
    // the running state and in the state Reset returns to.
    void setInverseMass(Index particle, Real inverseMass);

    // Sets constraint group `index`'s material (core/constraints/ConstraintGroups.h) at the next
    // step boundary, in the running state and in the state Reset returns to.
    void setConstraintGroup(int index, const ConstraintGroup& group);

    // Replaces the colliders at the next step boundary, in the running state and in the state
    // Reset returns to.
    void setColliders(const std::vector<Collider>& colliders);

    bool isRunning() const { return running_.load(); }
    // A step is being computed: after pause() the step in flight still completes and is
    // published; once this is false, nothing more is until the next play or step.
    bool isStepping() const { return stepping_.load(); }
    // New rigid-body solver settings (core/rigid/RigidSettings.h), taken at the next step boundary.
    void setRigidSettings(const RigidSettings& rigid);
    // Distances along their start-of-substep edges (SHAKE), from the next step.
    void setExactAngularMomentum(bool on);
    // Continuous collision (SolverSettings::continuousCollision), from the next step.
    void setContinuousCollision(bool on);
    // Cloth self-collision and the thickness cloth keeps from itself, from the next step.
    void setSelfCollision(bool on, Real thickness);
    SolverSettings settings() const;
    // The newest published state; never null after load().
    std::shared_ptr<const SimulationSnapshot> latest() const;

signals:
    // A new snapshot is ready (at most one such signal is queued at a time).
    void snapshotReady();
    // The run stopped on its own: the requested steps are done, or the reason (divergence).
    void paused();
    void diverged(const QString& message);
    // A seek showed the cached frame of `step`.
    void frameShown(qulonglong step);
    // A note for the Log (a seek to a frame the cache no longer holds, a spill that failed).
    void message(const QString& text);
    // The export ended: written (summary), cancelled, or failed (the reason).
    void exportFinished(bool ok, const QString& text);

private:
    void loop();
    // Publishes the worker's scene; with `topologyChanged`, its bodies under a new version.
    void publish(bool topologyChanged);

    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::thread thread_;
    bool quit_ = false;
    std::atomic<bool> running_{false};
    std::atomic<bool> stepping_{false};
    std::atomic<bool> realTime_{true};
    std::atomic<bool> recordConvergence_{false};
    std::atomic<bool> recordConstraints_{false};
    std::atomic<bool> recordAirQuality_{false};
    mutable std::mutex historyMutex_;
    std::vector<AirSample> airHistory_;
    std::uint64_t airHistoryGeneration_ = 0;
    void restartAirHistory();
    void truncateAirHistory(double time); // drops the samples after `time` (an edit there)
    bool republishRequested_ = false;
    std::vector<Contact> contacts_; // of the last step, owned by the worker thread
    std::vector<RigidContact> rigidContacts_;
    RigidStatistics rigidStatistics_;
    Real rigidJointError_ = 0;
    AirStatistics air_;
    AirOptimizationStatistics airOptimization_;
    std::size_t airOptimizationPasses_ = 0;
    bool airChanged_ = false; // the air tets changed since the last snapshot
    std::size_t airCounter_ = 0;
    bool repace_ = true;    // restart the real-time clock at the next step
    long pendingSteps_ = 0; // < 0: run until paused
    bool resetRequested_ = false;
    bool settingsChanged_ = false;
    SolverSettings newSettings_;
    long nanParticle_ = -1;
    QString blocked_; // the worker thread's: why the loaded scene cannot be stepped, or empty
    std::vector<std::pair<Index, Real>> massEdits_;
    std::vector<std::pair<int, ConstraintGroup>> groupEdits_;
    std::optional<std::vector<Collider>> colliderEdit_;
    long seekRequest_ = -1;
    CacheSettings cacheSettings_;
    bool cacheSettingsChanged_ = false;
    std::optional<CacheExportOptions> exportRequest_;
    std::atomic<bool> exporting_{false};
    std::atomic<bool> exportCancel_{false};
    std::atomic<int> exportDone_{0}, exportTotal_{0};
    std::unique_ptr<Scene> loaded_;  // what reset returns to
    std::unique_ptr<Scene> pending_; // a scene handed over by load()

    // Owned by the worker thread.
    std::unique_ptr<Scene> scene_;
    std::unique_ptr<FrameCache> cache_;
    std::shared_ptr<const AirMesh> shownAir_; // the cached air last shown
    // The solver state the next solver goes on from (after an edit replaced the solver, or a
    // seek): time, step count, rigid warm start.
    std::shared_ptr<const SolverState> carry_;
    bool spillFailed_ = false;
    void runExport(const CacheExportOptions& options);
    Real time_ = 0;
    std::size_t steps_ = 0;
    double lastStepMs_ = 0;
    double stepsPerSecond_ = 0;
    std::vector<Real> convergence_;
    Real constraintError_ = 0;

    std::atomic<std::size_t> topologyCounter_{0};
    mutable std::mutex snapshotMutex_;
    std::shared_ptr<const SimulationSnapshot> snapshot_;
    // The worker thread's snapshots to fill (see freeSnapshot).
    std::array<std::shared_ptr<SimulationSnapshot>, 3> snapshotPool_;
    std::shared_ptr<SimulationSnapshot> freeSnapshot();
    mutable std::atomic<bool> signalQueued_{false};
};

} // namespace pbd
