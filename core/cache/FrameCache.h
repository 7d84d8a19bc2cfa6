#pragma once
// The frame cache: the solver's full state after every k-th step, so a run can be scrubbed
// back and resumed from any cached frame bit for bit as if it had never stopped.
//
// A frame keeps what a step changes: the particles' positions and velocities, the rigid
// bodies' poses, velocities and sleep, the air mesh's topology (shared with the frame before
// while the optimisation has not changed it), the solver's own state (time, step count, the
// rigid warm start; Solver::state) and, for scenes that tear, the scene itself whenever its
// topology changed. Everything else (constraints, materials, colliders, settings) is the live
// scene's: a frame restored into the scene goes on with the scene's current settings, which is
// what an edit after scrubbing back means. Frames past the memory budget are spilled to a
// folder (positions and velocities, the bulk) or, without one, dropped oldest first.

#include "core/base/Result.h"
#include "core/scene/Scene.h"

#include <cstddef>
#include <filesystem>
#include <memory>
#include <vector>

namespace pbd {

class Solver;
struct SolverState;

struct FrameCacheSettings {
    std::size_t every = 1;                          // cache every k-th step (and step 0)
    std::size_t budgetBytes = std::size_t(2) << 30; // frames kept in memory, 2 GiB
    std::filesystem::path spillFolder;              // empty: frames past the budget are dropped
};

// A rigid body's state in a frame (what RigidSolver::step changes of it).
struct RigidBodyState {
    Vec3 x, v, L, omega;
    Quat q;
    bool sleeping = false;
    Real restTime = 0;
};

struct CachedFrame {
    std::size_t step = 0;                    // steps simulated when it was taken
    Real time = 0;                           // s
    std::vector<Vec3> positions, velocities; // empty while spilled
    std::size_t particleCount = 0;
    std::vector<RigidBodyState> rigid;
    std::shared_ptr<const AirMesh> air;     // null without air
    std::shared_ptr<const Scene> structure; // scenes that tear only: the scene then
    std::shared_ptr<const SolverState> solver;
    std::filesystem::path spillFile; // set once spilled
    std::size_t bytes = 0; // held in memory; a shared air or scene counts at its first frame
    bool spilled() const { return !spillFile.empty() && positions.empty(); }
};

class FrameCache {
public:
    explicit FrameCache(FrameCacheSettings settings = {});
    ~FrameCache();
    FrameCache(const FrameCache&) = delete;
    FrameCache& operator=(const FrameCache&) = delete;

    const FrameCacheSettings& settings() const { return settings_; }
    void setBudget(std::size_t bytes);

    // Records the scene after the solver's last step if the step count is a multiple of
    // `every` (or forced), replacing a frame of the same step; the frames after it stay (the
    // same history, recomputed bit for bit): after an edit, drop them first (truncateAfter).
    // Returns whether a frame was taken; an error only when spilling to the folder failed (the
    // oldest frames are then dropped instead, nothing else is lost).
    Result<bool> record(const Scene& scene, const Solver& solver, bool force = false);

    // Puts the frame of `step` into `scene` and returns the solver state to restore a new
    // Solver on it with (Solver::restore). The scene must be the one the cache recorded, as
    // edited since; a frame of a scene that tore brings its topology back with it.
    Result<std::shared_ptr<const SolverState>> restore(std::size_t step, Scene& scene) const;

    // The frame's positions (loaded from the spill folder if needed), for views and exports.
    Result<std::vector<Vec3>> positions(std::size_t step) const;
    const CachedFrame* frame(std::size_t step) const;

    bool contains(std::size_t step) const { return frame(step) != nullptr; }
    std::vector<std::size_t> steps() const; // ascending
    std::size_t size() const { return frames_.size(); }
    bool empty() const { return frames_.empty(); }
    // The first and last cached steps (0, 0 when empty).
    std::size_t firstStep() const;
    std::size_t lastStep() const;
    // The cached step at or before `step`, if any.
    const CachedFrame* atOrBefore(std::size_t step) const;

    // Drops the frames after `step` (an edit at that frame invalidates them).
    void truncateAfter(std::size_t step);
    void clear();

    // Bytes the frames hold in memory; frames dropped and spilled over the budget so far.
    std::size_t memoryBytes() const { return memoryBytes_; }
    std::size_t droppedFrames() const { return dropped_; }
    std::size_t spilledFrames() const;
    static std::size_t frameBytes(const CachedFrame& frame);

private:
    void enforceBudget(const CachedFrame* keep);
    Result<bool> spill(CachedFrame& frame);
    Result<bool> load(const CachedFrame& frame, std::vector<Vec3>& positions,
                      std::vector<Vec3>& velocities) const;

    FrameCacheSettings settings_;
    std::vector<std::unique_ptr<CachedFrame>> frames_; // ascending by step
    std::size_t memoryBytes_ = 0;
    std::size_t dropped_ = 0;
    Result<bool> spillError_ = true;
};

} // namespace pbd
