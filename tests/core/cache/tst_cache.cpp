// core: the frame cache. Resuming from any cached frame goes on bit for bit as the run that
// never stopped (every generated scene; cloth, air with the optimisation, a rigid stack and a
// tearing sheet on 1 and 2 threads), frames past the budget are dropped or spilled and come back
// from the folder, an edit drops the frames after it, and a frame of another scene is refused.

#include "core/cache/FrameCache.h"
#include "core/solver/Solver.h"
#include "meshing/AirScenes.h"

#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace pbd;

namespace {

struct Snapshot {
    std::vector<Vec3> positions, velocities;
    std::vector<RigidBody> rigid;
    std::vector<Tetrahedron> airTets;
    std::vector<Triangle> airTriangles;
    Real time = 0;
    std::size_t steps = 0;
};

Snapshot snapshot(const Scene& s, const Solver& solver) {
    return {s.particles.positions, s.particles.velocities, s.rigidBodies,     s.air.tets,
            s.air.triangles,       solver.time(),          solver.stepCount()};
}

// "" when equal bit for bit, else what differs.
QString compare(const Snapshot& a, const Snapshot& b) {
    if (a.positions != b.positions) {
        return "positions";
    }
    if (a.velocities != b.velocities) {
        return "velocities";
    }
    if (a.rigid.size() != b.rigid.size()) {
        return "rigid body count";
    }
    for (std::size_t i = 0; i < a.rigid.size(); ++i) {
        if (a.rigid[i].x != b.rigid[i].x || a.rigid[i].q.coeffs() != b.rigid[i].q.coeffs() ||
            a.rigid[i].v != b.rigid[i].v || a.rigid[i].L != b.rigid[i].L ||
            a.rigid[i].sleeping != b.rigid[i].sleeping) {
            return QString("rigid body %1").arg(i);
        }
    }
    if (a.airTets != b.airTets || a.airTriangles != b.airTriangles) {
        return "air topology";
    }
    if (a.time != b.time || a.steps != b.steps) {
        return "time or step count";
    }
    return {};
}

// Runs `total` steps recording every `every`-th, then goes back to each of `from` and runs to
// `total` again; "" when every resumed run ends bit for bit where the first did.
QString resumeCheck(Scene scene, int threads, std::size_t total, std::size_t every,
                    std::vector<std::size_t> from, FrameCacheSettings settings = {}) {
    scene.solver.threads = threads;
    settings.every = every;
    FrameCache cache(settings);
    auto solver = std::make_unique<Solver>(scene);
    if (!cache.record(scene, *solver)) {
        return "recording step 0 failed";
    }
    for (std::size_t i = 0; i < total; ++i) {
        solver->step();
        if (Result<bool> r = cache.record(scene, *solver); !r) {
            return QString::fromStdString(r.error());
        }
    }
    const Snapshot end = snapshot(scene, *solver);
    for (std::size_t step : from) {
        solver.reset();
        auto state = cache.restore(step, scene);
        if (!state) {
            return QString::fromStdString(state.error());
        }
        solver = std::make_unique<Solver>(scene);
        solver->restore(**state);
        if (solver->stepCount() != step) {
            return QString("restored step %1, asked for %2").arg(solver->stepCount()).arg(step);
        }
        for (std::size_t i = step; i < total; ++i) {
            solver->step();
        }
        const QString diff = compare(snapshot(scene, *solver), end);
        if (!diff.isEmpty()) {
            return QString("from step %1: %2").arg(step).arg(diff);
        }
    }
    return {};
}

// Records steps 0..last, stepping after each; false when a record failed.
bool recordSteps(Scene& s, Solver& solver, FrameCache& cache, int last) {
    for (int i = 0; i <= last; ++i) {
        if (!cache.record(s, solver).value()) {
            return false;
        }
        solver.step();
    }
    return true;
}

} // namespace

class TestFrameCache : public QObject {
    Q_OBJECT
private slots:
    void resumingOnOneAndTwoThreadsIsBitIdentical() {
        // Cloth, tets in air the optimisation re-meshes (bremen's default: a pass every few
        // steps), a rigid stack, a sheet that tears, rigid bodies coupled to cloth.
        for (const char* name :
             {"cloth", "bremen", "air-boxes", "stack", "tear", "cloth-on-rigid"}) {
            for (int threads : {1, 2}) {
                Scene s = makeAnyScene(name).value();
                const QString diff = resumeCheck(std::move(s), threads, 36, 3, {0, 9, 27});
                QVERIFY2(
                    diff.isEmpty(),
                    qPrintable(QString("%1 on %2 threads: %3").arg(name).arg(threads).arg(diff)));
            }
        }
    }

    void resumingEveryGeneratedSceneIsBitIdentical() {
        // Whatever a step changes must be in the frame: a scene whose resume differs names it.
        for (const SceneInfo& info : allScenes()) {
            if (info.name.find("-xl") != std::string::npos) {
                continue; // production scale: seconds a step
            }
            Scene s = makeAnyScene(info.name).value();
            const QString diff = resumeCheck(std::move(s), 1, 12, 4, {4});
            QVERIFY2(diff.isEmpty(), qPrintable(QString::fromStdString(info.name) + ": " + diff));
        }
    }

    void theAirIsSharedUntilTheOptimisationChangesIt() {
        Scene s = makeAnyScene("bremen").value();
        QVERIFY(s.solver.airOptimizationInterval > 0);
        FrameCache cache;
        Solver solver(s);
        QVERIFY(cache.record(s, solver).value());
        std::size_t changes = 0;
        for (int i = 0; i < 30; ++i) {
            const std::vector<Tetrahedron> before = s.air.tets;
            solver.step();
            QVERIFY(cache.record(s, solver).value());
            const auto steps = cache.steps();
            const CachedFrame* now = cache.frame(steps.back());
            const CachedFrame* prev = cache.frame(steps[steps.size() - 2]);
            QCOMPARE(now->air->tets, s.air.tets);
            if (before == s.air.tets) {
                QCOMPARE(now->air.get(), prev->air.get()); // the same copy, counted once
            } else {
                QVERIFY(now->air.get() != prev->air.get());
                ++changes;
            }
        }
        QVERIFY2(changes > 0, "the optimisation never changed bremen's air in 30 steps");
        // Frames without a new air cost their particles and little else.
        const CachedFrame* last = cache.frame(cache.lastStep());
        QVERIFY(cache.memoryBytes() <
                31 * (FrameCache::frameBytes(*last) + 1024) +
                    (changes + 1) * s.air.tets.size() * sizeof(Tetrahedron) * 2);
    }

    void framesPastTheBudgetAreDroppedOldestFirst() {
        Scene s = makeAnyScene("cloth").value();
        Solver solver(s);
        FrameCache probe;
        QVERIFY(probe.record(s, solver).value());
        const std::size_t perFrame = probe.memoryBytes();
        FrameCacheSettings settings;
        settings.budgetBytes = 5 * perFrame + perFrame / 2; // 5 frames
        FrameCache cache(settings);
        QVERIFY(cache.record(s, solver).value());
        for (int i = 0; i < 20; ++i) {
            solver.step();
            QVERIFY(cache.record(s, solver).value());
            QVERIFY(cache.memoryBytes() <= settings.budgetBytes);
        }
        QCOMPARE(cache.size(), std::size_t(5));
        QCOMPARE(cache.firstStep(), std::size_t(16));
        QCOMPARE(cache.lastStep(), std::size_t(20));
        QCOMPARE(cache.droppedFrames(), std::size_t(16));
        QVERIFY(!cache.contains(15));
        QVERIFY(!cache.restore(3, s));
        QVERIFY(cache.restore(3, s).error().find("not in the frame cache") != std::string::npos);
    }

    void framesPastTheBudgetSpillToTheFolderAndComeBack() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        Scene s = makeAnyScene("cloth").value();
        FrameCacheSettings settings;
        settings.spillFolder = dir.filePath("spill").toStdString();
        settings.budgetBytes = 1; // everything but the newest frame goes to the folder
        const QString diff = resumeCheck(s, 2, 30, 5, {5, 15, 25}, settings);
        QVERIFY2(diff.isEmpty(), qPrintable(diff));

        Solver solver(s);
        std::vector<Vec3> atTen;
        {
            FrameCache cache(settings);
            for (int i = 0; i <= 12; ++i) {
                QVERIFY(cache.record(s, solver).value());
                if (i == 10) {
                    atTen = s.particles.positions;
                }
                solver.step();
            }
            QCOMPARE(cache.size(), std::size_t(13));
            QCOMPARE(cache.spilledFrames(), std::size_t(12));
            QVERIFY(cache.memoryBytes() < 13 * s.particles.size() * sizeof(Vec3));
            QCOMPARE(QDir(dir.filePath("spill")).entryList(QDir::Files).size(), 12);
            QCOMPARE(cache.positions(10).value(), atTen);
            // A damaged spill file is named, not read.
            QFile file(QString::fromStdString(cache.frame(10)->spillFile.string()));
            QVERIFY(file.open(QIODevice::ReadWrite));
            QVERIFY(file.resize(40));
            file.close();
            Scene other = s;
            const auto restored = cache.restore(10, other);
            QVERIFY(!restored);
            QVERIFY2(restored.error().find("truncated") != std::string::npos,
                     restored.error().c_str());
            QCOMPARE(other.particles.positions, s.particles.positions); // nothing was changed
        }
        // The folder is the cache's: its files go with it.
        QCOMPARE(QDir(dir.filePath("spill")).entryList(QDir::Files).size(), 0);
    }

    void anEditDropsTheFramesAfterIt() {
        Scene s = makeAnyScene("cloth").value();
        FrameCache cache;
        auto solver = std::make_unique<Solver>(s);
        QVERIFY(recordSteps(s, *solver, cache, 10));
        QCOMPARE(cache.lastStep(), std::size_t(10));
        // Back to step 4, an edit (more iterations), play on: the old frames 5-10 are gone and
        // the new ones follow the edit.
        solver.reset();
        auto state = cache.restore(4, s);
        QVERIFY(state);
        cache.truncateAfter(4);
        QCOMPARE(cache.lastStep(), std::size_t(4));
        s.solver.iterations *= 2;
        solver = std::make_unique<Solver>(s);
        solver->restore(**state);
        solver->step();
        QVERIFY(cache.record(s, *solver).value());
        QCOMPARE(cache.steps(), (std::vector<std::size_t>{0, 1, 2, 3, 4, 5}));
        QCOMPARE(cache.frame(5)->positions, s.particles.positions);
    }

    void replayingTheSameHistoryKeepsTheFramesAfterIt() {
        // Back to step 4 without an edit and on again: step 5 is recomputed bit for bit and
        // replaces its frame; the frames after it are still the run's.
        Scene s = makeAnyScene("cloth").value();
        FrameCache cache;
        auto solver = std::make_unique<Solver>(s);
        QVERIFY(recordSteps(s, *solver, cache, 10));
        const std::vector<Vec3> five = cache.frame(5)->positions;
        solver.reset();
        auto state = cache.restore(4, s);
        QVERIFY(state);
        solver = std::make_unique<Solver>(s);
        solver->restore(**state);
        solver->step();
        QVERIFY(cache.record(s, *solver).value());
        QCOMPARE(cache.size(), std::size_t(11));
        QCOMPARE(cache.lastStep(), std::size_t(10));
        QCOMPARE(cache.frame(5)->positions, five);
        QVERIFY(cache.frame(6)->air == nullptr);
    }

    void aFrameOfAnotherSceneIsRefused() {
        Scene cloth = makeAnyScene("cloth").value();
        Scene rope = makeAnyScene("rope").value();
        FrameCache cache;
        Solver solver(cloth);
        QVERIFY(cache.record(cloth, solver).value());
        const auto before = rope.particles.positions;
        const auto r = cache.restore(0, rope);
        QVERIFY(!r);
        QVERIFY2(r.error().find("belongs to another scene") != std::string::npos,
                 r.error().c_str());
        QCOMPARE(rope.particles.positions, before);
    }

    void aTornSceneGoesBackToItsTopology() {
        Scene s = makeAnyScene("tear").value();
        const std::size_t particles = s.particles.size();
        FrameCache cache;
        auto solver = std::make_unique<Solver>(s);
        QVERIFY(cache.record(s, *solver).value());
        for (int i = 0; i < 200 && s.particles.size() == particles; ++i) {
            solver->step();
            QVERIFY(cache.record(s, *solver).value());
        }
        QVERIFY2(s.particles.size() > particles, "the sheet did not tear in 200 steps");
        solver.reset();
        QVERIFY(cache.restore(0, s));
        QCOMPARE(s.particles.size(), particles);
    }
};

QTEST_GUILESS_MAIN(TestFrameCache)
#include "tst_cache.moc"
