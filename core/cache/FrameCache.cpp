#include "core/cache/FrameCache.h"

#include "core/solver/Solver.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <system_error>

namespace pbd {

namespace {

template <class T> std::size_t bytesOf(const std::vector<T>& v) {
    return v.size() * sizeof(T);
}

std::size_t airBytes(const AirMesh& air) {
    return sizeof(AirMesh) + bytesOf(air.tets) + bytesOf(air.triangles);
}

bool sameAir(const AirMesh& a, const AirMesh& b) {
    return a.firstParticle == b.firstParticle && a.particleCount == b.particleCount &&
           a.tets == b.tets && a.triangles == b.triangles;
}

// What a scene copy holds, roughly: its per-particle and per-element arrays.
std::size_t sceneBytes(const Scene& s) {
    std::size_t bytes = sizeof(Scene) + s.particles.size() * (2 * sizeof(Vec3) + sizeof(Real));
    forEachBatch(s.constraints, [&](const auto& batch) {
        using B = std::decay_t<decltype(batch)>;
        bytes +=
            batch.size() * (sizeof(typename decltype(B::particles)::value_type) +
                            B::kComponents * 4 * sizeof(Real) + 2 * sizeof(int) + sizeof(Real));
    });
    for (const Body& b : s.bodies) {
        bytes += b.triangles.size() * sizeof(Triangle) + b.tets.size() * sizeof(Tetrahedron);
    }
    return bytes + airBytes(s.air);
}

std::vector<RigidBodyState> rigidStates(const std::vector<RigidBody>& bodies) {
    std::vector<RigidBodyState> out(bodies.size());
    for (std::size_t i = 0; i < bodies.size(); ++i) {
        const RigidBody& b = bodies[i];
        out[i] = {b.x, b.v, b.L, b.omega, b.q, b.sleeping, b.restTime};
    }
    return out;
}

// The spill file: a header, then the positions and the velocities as doubles.
constexpr char kSpillMagic[8] = {'P', 'B', 'D', 'F', 'R', 'M', '0', '1'};

void removeSpillFile(const CachedFrame& f) {
    if (!f.spillFile.empty()) {
        std::error_code ec;
        std::filesystem::remove(f.spillFile, ec);
    }
}

} // namespace

FrameCache::FrameCache(FrameCacheSettings settings)
    : settings_(std::move(settings)) {
    settings_.every = std::max<std::size_t>(settings_.every, 1);
}

// Spill files belong to this cache's run: they go with their frames.
FrameCache::~FrameCache() {
    clear();
}

void FrameCache::setBudget(std::size_t bytes) {
    settings_.budgetBytes = bytes;
    enforceBudget(frames_.empty() ? nullptr : frames_.back().get());
}

std::size_t FrameCache::frameBytes(const CachedFrame& f) {
    std::size_t bytes =
        sizeof(CachedFrame) + bytesOf(f.positions) + bytesOf(f.velocities) + bytesOf(f.rigid);
    if (f.solver) {
        bytes += pbd::memoryBytes(*f.solver);
    }
    return bytes;
}

Result<bool> FrameCache::record(const Scene& scene, const Solver& solver, bool force) {
    const std::size_t step = solver.stepCount();
    if (!force && step % settings_.every != 0) {
        return false;
    }
    // A frame of the same step is replaced (the same history recomputed, or the frame an edit
    // changed); the frames after it stay unless the caller drops them (truncateAfter).
    auto at = std::lower_bound(frames_.begin(), frames_.end(), step,
                               [](const auto& f, std::size_t s) { return f->step < s; });
    if (at != frames_.end() && (*at)->step == step) {
        memoryBytes_ -= (*at)->bytes;
        removeSpillFile(**at);
        at = frames_.erase(at);
    }
    const CachedFrame* previous = at == frames_.begin() ? nullptr : std::prev(at)->get();

    auto f = std::make_unique<CachedFrame>();
    f->step = step;
    f->time = solver.time();
    f->positions = scene.particles.positions;
    f->velocities = scene.particles.velocities;
    f->particleCount = scene.particles.size();
    f->rigid = rigidStates(scene.rigidBodies);
    f->solver = solver.state();
    f->bytes = frameBytes(*f);
    if (!scene.air.empty()) {
        // The optimisation changes the air now and then: frames share it until it does.
        if (previous && previous->air && sameAir(*previous->air, scene.air)) {
            f->air = previous->air;
        } else {
            f->air = std::make_shared<const AirMesh>(scene.air);
            f->bytes += airBytes(scene.air);
        }
    }
    if (scene.solver.tearingStretch > 0) {
        // Tearing splits vertices (the particle count grows) and rewires the constraints.
        if (previous && previous->structure &&
            previous->structure->particles.size() == scene.particles.size() &&
            previous->structure->constraints.elementCount() == scene.constraints.elementCount()) {
            f->structure = previous->structure;
        } else {
            f->structure = std::make_shared<const Scene>(scene);
            f->bytes += sceneBytes(scene);
        }
    }
    memoryBytes_ += f->bytes;
    const CachedFrame* recorded = f.get();
    frames_.insert(at, std::move(f));
    spillError_ = true;
    enforceBudget(recorded);
    if (!spillError_) {
        return Error{spillError_.error()};
    }
    return true;
}

void FrameCache::enforceBudget(const CachedFrame* keep) {
    // The frame just recorded stays whatever it costs: it is the one to resume from.
    std::size_t i = 0;
    while (memoryBytes_ > settings_.budgetBytes && i < frames_.size()) {
        CachedFrame& f = *frames_[i];
        if (&f == keep) {
            ++i;
            continue;
        }
        if (!settings_.spillFolder.empty() && !f.spilled()) {
            const std::size_t before = f.bytes;
            Result<bool> spilled = spill(f);
            if (spilled) {
                memoryBytes_ -= before - f.bytes;
                ++i;
                continue;
            }
            spillError_ = spilled;
        } else if (!settings_.spillFolder.empty()) {
            ++i; // spilled already: what it holds is small and shared
            continue;
        }
        // Dropped: a shared air or scene it introduced now counts at the next frame.
        if (i + 1 < frames_.size()) {
            CachedFrame& next = *frames_[i + 1];
            const bool airShared = f.air && next.air == f.air;
            const bool sceneShared = f.structure && next.structure == f.structure;
            const std::size_t shared =
                (airShared ? airBytes(*f.air) : 0) + (sceneShared ? sceneBytes(*f.structure) : 0);
            next.bytes += shared;
            f.bytes -= shared;
        }
        memoryBytes_ -= f.bytes;
        removeSpillFile(f);
        frames_.erase(frames_.begin() + std::ptrdiff_t(i));
        ++dropped_;
    }
}

Result<bool> FrameCache::spill(CachedFrame& f) {
    std::error_code ec;
    std::filesystem::create_directories(settings_.spillFolder, ec);
    const std::filesystem::path file =
        settings_.spillFolder / ("frame-" + std::to_string(f.step) + ".pbdframe");
    {
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        const std::uint64_t header[2] = {f.step, f.positions.size()};
        out.write(kSpillMagic, sizeof kSpillMagic);
        out.write(reinterpret_cast<const char*>(header), sizeof header);
        out.write(reinterpret_cast<const char*>(f.positions.data()),
                  std::streamsize(bytesOf(f.positions)));
        out.write(reinterpret_cast<const char*>(f.velocities.data()),
                  std::streamsize(bytesOf(f.velocities)));
        out.close();
        if (!out) {
            std::filesystem::remove(file, ec);
            return Error{"cannot write the frame cache's spill file " + file.string() +
                         " (disk full or not writable); frames past the memory budget are "
                         "dropped instead"};
        }
    }
    const std::size_t freed = bytesOf(f.positions) + bytesOf(f.velocities);
    f.spillFile = file;
    f.positions = {};
    f.velocities = {};
    f.bytes -= freed;
    return true;
}

Result<bool> FrameCache::load(const CachedFrame& f, std::vector<Vec3>& positions,
                              std::vector<Vec3>& velocities) const {
    if (!f.spilled()) {
        positions = f.positions;
        velocities = f.velocities;
        return true;
    }
    std::ifstream in(f.spillFile, std::ios::binary);
    char magic[sizeof kSpillMagic] = {};
    std::uint64_t header[2] = {};
    in.read(magic, sizeof magic);
    in.read(reinterpret_cast<char*>(header), sizeof header);
    if (!in || std::memcmp(magic, kSpillMagic, sizeof magic) != 0 || header[0] != f.step ||
        header[1] != f.particleCount) {
        return Error{"the frame cache's spill file " + f.spillFile.string() + " for step " +
                     std::to_string(f.step) + " is missing or damaged"};
    }
    positions.resize(f.particleCount);
    velocities.resize(f.particleCount);
    in.read(reinterpret_cast<char*>(positions.data()), std::streamsize(bytesOf(positions)));
    in.read(reinterpret_cast<char*>(velocities.data()), std::streamsize(bytesOf(velocities)));
    if (!in) {
        return Error{"the frame cache's spill file " + f.spillFile.string() + " for step " +
                     std::to_string(f.step) + " is truncated"};
    }
    return true;
}

Result<std::shared_ptr<const SolverState>> FrameCache::restore(std::size_t step,
                                                               Scene& scene) const {
    const CachedFrame* f = frame(step);
    if (!f) {
        return Error{"step " + std::to_string(step) + " is not in the frame cache"};
    }
    std::vector<Vec3> positions, velocities;
    if (Result<bool> loaded = load(*f, positions, velocities); !loaded) {
        return Error{loaded.error()};
    }
    if (f->structure) {
        // A scene that tore since: its topology as it was, with the live scene's settings.
        const SolverSettings settings = scene.solver;
        scene = *f->structure;
        scene.solver = settings;
    }
    if (scene.particles.size() != f->particleCount || scene.rigidBodies.size() != f->rigid.size() ||
        (f->air && (f->air->firstParticle + f->air->particleCount > f->particleCount))) {
        return Error{"the frame cache's step " + std::to_string(step) + " has " +
                     std::to_string(f->particleCount) + " particles and " +
                     std::to_string(f->rigid.size()) + " rigid bodies, the scene " +
                     std::to_string(scene.particles.size()) + " and " +
                     std::to_string(scene.rigidBodies.size()) + ": it belongs to another scene"};
    }
    scene.particles.positions = std::move(positions);
    scene.particles.velocities = std::move(velocities);
    for (std::size_t i = 0; i < f->rigid.size(); ++i) {
        const RigidBodyState& r = f->rigid[i];
        RigidBody& b = scene.rigidBodies[i];
        b.x = r.x;
        b.v = r.v;
        b.L = r.L;
        b.omega = r.omega;
        b.q = r.q;
        b.sleeping = r.sleeping;
        b.restTime = r.restTime;
    }
    if (f->air) {
        scene.air = *f->air;
    }
    return f->solver;
}

Result<std::vector<Vec3>> FrameCache::positions(std::size_t step) const {
    const CachedFrame* f = frame(step);
    if (!f) {
        return Error{"step " + std::to_string(step) + " is not in the frame cache"};
    }
    if (!f->spilled()) {
        return f->positions;
    }
    std::vector<Vec3> positions, velocities;
    if (Result<bool> loaded = load(*f, positions, velocities); !loaded) {
        return Error{loaded.error()};
    }
    return positions;
}

const CachedFrame* FrameCache::frame(std::size_t step) const {
    auto it = std::lower_bound(frames_.begin(), frames_.end(), step,
                               [](const auto& f, std::size_t s) { return f->step < s; });
    return it != frames_.end() && (*it)->step == step ? it->get() : nullptr;
}

const CachedFrame* FrameCache::atOrBefore(std::size_t step) const {
    auto it = std::upper_bound(frames_.begin(), frames_.end(), step,
                               [](std::size_t s, const auto& f) { return s < f->step; });
    return it == frames_.begin() ? nullptr : std::prev(it)->get();
}

std::vector<std::size_t> FrameCache::steps() const {
    std::vector<std::size_t> out;
    out.reserve(frames_.size());
    for (const auto& f : frames_) {
        out.push_back(f->step);
    }
    return out;
}

std::size_t FrameCache::firstStep() const {
    return frames_.empty() ? 0 : frames_.front()->step;
}
std::size_t FrameCache::lastStep() const {
    return frames_.empty() ? 0 : frames_.back()->step;
}

std::size_t FrameCache::spilledFrames() const {
    return std::size_t(
        std::count_if(frames_.begin(), frames_.end(), [](const auto& f) { return f->spilled(); }));
}

void FrameCache::truncateAfter(std::size_t step) {
    while (!frames_.empty() && frames_.back()->step > step) {
        CachedFrame& f = *frames_.back();
        memoryBytes_ -= f.bytes;
        removeSpillFile(f);
        frames_.pop_back();
    }
}

void FrameCache::clear() {
    for (const auto& f : frames_) {
        removeSpillFile(*f);
    }
    frames_.clear();
    memoryBytes_ = 0;
}

} // namespace pbd
