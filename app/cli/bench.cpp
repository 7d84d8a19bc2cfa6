// pbdlab-cli bench: times the solver on a scene: the median ms per step, ns per projection of
// each constraint type; with air, ns per air check and ms per optimisation pass; with rigid
// bodies, ms for contact detection and for the solve.

#include "app/cli/Command.h"
#include "app/cli/ReportJson.h"
#include "app/cli/RunOptions.h"
#include "core/air/AirOptimizer.h"
#include "core/cache/FrameCache.h"
#include "core/solver/KernelPaths.h"
#include "core/solver/Solver.h"
#include "meshing/SceneJson.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

namespace pbd::cli {

namespace {

int bench(const RunOptions& o) {
    std::optional<Scene> made = sceneToRun(o);
    if (!made) {
        return kInputProblem;
    }
    Scene& scene = *made;
    if (o.threads < 0) {
        scene.solver.threads = 1;
    }
    const int steps = o.steps > 0 ? o.steps : 200;
    Solver solver(scene);
    // A step that throws (out of memory in a runaway) ends the bench with what it says.
    std::string failed;
    const auto step = [&] {
        try {
            solver.step();
            return true;
        } catch (const std::exception& e) {
            failed = Solver::stepFailure(e, long(solver.stepCount()) + 1);
            return false;
        }
    };
    const int warmup = std::min(20, steps);
    double warmupMs = 0;
    for (int i = 0; i < warmup; ++i) {
        if (!step()) {
            return inputProblem(failed);
        }
        warmupMs += solver.lastStepMilliseconds();
        if (const std::string r = solver.runaway(); !r.empty()) {
            return inputProblem(r);
        }
    }
    double airProjectionMs = 0, airMs = 0;
    std::vector<double> ms;
    double detectionMs = 0, rigidSolveMs = 0, skinningMs = 0, holdMs = 0, continuousMs = 0;
    RigidStatistics::Stages rigidStages;
    std::size_t continuousTouching = 0, continuousHeld = 0;
    std::size_t manifoldsMade = 0, manifoldsRefreshed = 0, shapesReproxied = 0;
    const std::size_t passesBefore = solver.airOptimizationPasses();
    const double passMsBefore = solver.airOptimizationMilliseconds();
    std::size_t changes = 0, candidates = 0, deferred = 0;
    for (int i = 0; i < steps; ++i) {
        if (!step()) {
            return inputProblem(failed);
        }
        ms.push_back(solver.lastStepMilliseconds());
        changes += solver.airOptimization().changes();
        candidates += solver.airOptimization().candidates;
        deferred += solver.airOptimization().deferred;
        airProjectionMs += solver.airStatistics().projectionMilliseconds;
        airMs += solver.airStatistics().milliseconds;
        detectionMs += solver.rigid().statistics().detectionMilliseconds;
        manifoldsMade += solver.rigid().statistics().manifolds;
        manifoldsRefreshed += solver.rigid().statistics().refreshedManifolds;
        shapesReproxied += solver.rigid().statistics().reproxied;
        rigidSolveMs += solver.rigid().statistics().solveMilliseconds;
        {
            const RigidStatistics::Stages& g = solver.rigid().statistics().stages;
            rigidStages.graph += g.graph;
            rigidStages.bodies += g.bodies;
            rigidStages.batches += g.batches;
            rigidStages.substeps += g.substeps;
            rigidStages.poses += g.poses;
            rigidStages.impulses += g.impulses;
            rigidStages.velocities += g.velocities;
            rigidStages.sleep += g.sleep;
        }
        skinningMs += solver.lastSkinningMilliseconds();
        holdMs += solver.lastHoldMilliseconds();
        continuousMs += solver.continuousCollision().milliseconds;
        continuousTouching += solver.continuousCollision().touching;
        continuousHeld += solver.continuousCollision().held;
        if (const std::string r = solver.runaway(); !r.empty()) {
            return inputProblem(r);
        }
    }
    const std::size_t passes = solver.airOptimizationPasses() - passesBefore;
    const double passMs = solver.airOptimizationMilliseconds() - passMsBefore;
    if (const std::string d = divergence(scene); !d.empty()) {
        return inputProblem(d);
    }
    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted.size() % 2 == 1
                              ? sorted[sorted.size() / 2]
                              : 0.5 * (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]);
    double mean = 0;
    for (double v : ms) {
        mean += v / static_cast<double>(ms.size());
    }
    json perType = json::object();
    json counts = json::object();
    for (const KernelCost& k : solver.measureKernels(20)) {
        perType[std::string(toString(k.type))] = k.nanosecondsPerProjection;
        counts[std::string(toString(k.type))] = k.projections / 20;
    }
    // What the timeline's frame cache costs per frame: a frame after one more step, its air
    // shared with the frame before unless the optimisation re-meshed it in that step.
    FrameCache cache;
    (void)cache.record(scene, solver, true);
    const std::size_t firstFrameBytes = cache.memoryBytes();
    if (!step()) {
        return inputProblem(failed);
    }
    const auto recordStart = std::chrono::steady_clock::now();
    (void)cache.record(scene, solver, true);
    const double recordMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - recordStart)
            .count();
    const std::size_t frameBytes = cache.memoryBytes() - firstFrameBytes;
    const CachedFrame* lastFrame = cache.frame(cache.lastStep());
    const std::size_t particleBytes =
        (lastFrame->positions.size() + lastFrame->velocities.size()) * sizeof(Vec3);
    const bool airCopied = lastFrame->air && lastFrame->air != cache.frame(cache.firstStep())->air;
    json full = {
        {"cache_bytes_per_frame", frameBytes},
        {"cache_particle_bytes_per_frame", particleBytes},
        {"cache_air_copied", airCopied},
        {"cache_record_ms", recordMs},
        {"scene", scene.name},
        {"threads", scene.solver.threads},
        {"steps", steps},
        {"substeps", scene.solver.substeps},
        {"iterations", scene.solver.iterations},
        {"method", std::string(toString(scene.solver.method))},
        {"kernels", std::string(kernels::kernelPath().name)},
        {"kernel_lanes", kernels::kernelPath().lanes},
        {"particles", scene.particles.size()},
        {"colours", scene.constraints.colourCount},
        {"constraints", counts},
        {"bending_model", std::string(toString(scene.constraints.bending.model))},
        {"ms_per_step", median},
        {"ms_per_step_min", sorted.front()},
        {"ms_per_step_max", sorted.back()},
        {"ms_per_step_mean", mean},
        // Every step from the first, the warm-up's too: a scene that slows down late,
        // or only early, shows it here.
        {"warmup_steps", warmup},
        {"ms_per_step_whole_run", (warmupMs + mean * double(steps)) / double(warmup + steps)},
        {"ns_per_projection", perType}};
    if (!scene.rigidBodies.empty()) {
        const RigidStatistics& st = solver.rigid().statistics();
        full["rigid_bodies"] = scene.rigidBodies.size();
        full["rigid_contacts"] = st.points;
        full["rigid_rows"] = st.rows;
        full["rigid_manifolds"] = st.manifolds;
        // The share of the solved manifolds carried with their bodies instead of detected.
        full["rigid_refreshed_share"] =
            manifoldsMade > 0 ? double(manifoldsRefreshed) / double(manifoldsMade) : 0.0;
        // The share of the shapes paired afresh in the broadphase per step (their bounds left
        // the enlarged ones).
        std::size_t shapes = 0;
        for (const RigidBody& b : scene.rigidBodies) {
            shapes += b.shapes.size();
        }
        full["rigid_reproxied_share"] =
            shapes > 0 ? double(shapesReproxied) / (double(shapes) * steps) : 0.0;
        full["rigid_threads"] = st.threads; // the threads its substeps ran on
        full["rigid_awake"] = st.awakeBodies;
        full["rigid_sleeping"] = st.sleepingBodies;
        // Per substep, averaged over the timed steps.
        const double substeps = double(steps) * std::max(1, scene.solver.substeps);
        full["ms_rigid_detection"] = detectionMs / substeps;
        full["ms_rigid_solve"] = rigidSolveMs / substeps;
        // The solve by stage (RigidStatistics::Stages), per substep too.
        full["ms_rigid_stages"] = {{"graph", rigidStages.graph / substeps},
                                   {"bodies", rigidStages.bodies / substeps},
                                   {"batches", rigidStages.batches / substeps},
                                   {"substeps", rigidStages.substeps / substeps},
                                   {"poses", rigidStages.poses / substeps},
                                   {"impulses", rigidStages.impulses / substeps},
                                   {"velocities", rigidStages.velocities / substeps},
                                   {"sleep", rigidStages.sleep / substeps}};
        full["rigid_settings"] = rigidSettingsJson(scene.solver.rigid);
    }
    if (!scene.characters.empty()) {
        std::size_t vertices = 0;
        for (const Character& c : scene.characters) {
            vertices += c.vertexCount();
        }
        full["characters"] = scene.characters.size();
        full["skin_vertices"] = vertices;
        full["ms_per_step_skinning"] = skinningMs / double(steps);
    }
    if (scene.solver.continuousCollision) {
        // Per timed step: continuous collision's cycles (its tests and zones, and the air mended
        // around what they held between them), its tests and zones alone, the pairs that would
        // touch and the particles held.
        full["ms_per_step_continuous"] = holdMs / double(steps);
        full["ms_per_step_continuous_tests"] = continuousMs / double(steps);
        full["continuous_touching_per_step"] = double(continuousTouching) / double(steps);
        full["continuous_held_per_step"] = double(continuousHeld) / double(steps);
    }
    if (!scene.air.empty()) {
        full["air_tets"] = scene.air.tets.size();
        full["air_triangles"] = scene.air.triangles.size();
        full["ns_per_air_projection"] = solver.measureAirCheck(50);
        full["air_optimisation_interval"] = scene.solver.airOptimizationInterval;
        full["optimisation_passes"] = passes;
        full["optimisation_changes"] = changes;
        // The tets below the quality threshold, and those of them left for a later pass
        // (unchanged since a pass could not improve them), over the timed passes.
        full["optimisation_candidates"] = candidates;
        full["optimisation_deferred"] = deferred;
        // Per timed step: the air's projection and the optimisation, apart from the rest.
        full["ms_per_step_air_projection"] = airProjectionMs / double(steps);
        // The air's whole share of a step: its sign checks (in parts on every thread) and its
        // projections (on one), wall clock.
        full["ms_per_step_air"] = airMs / double(steps);
        full["ms_per_step_optimisation"] = passMs / double(steps);
        if (passes > 0) {
            full["ms_per_optimisation_pass"] = passMs / double(passes);
        } else {
            // Optimisation off in the run: time a pass on a copy of the final state, after one
            // pass that builds the adjacency (the run's passes keep theirs between passes).
            Scene copy = scene;
            AirOptimizer optimizer;
            AirOptimizationOptions options;
            options.qualityThreshold = scene.solver.airQualityThreshold;
            optimizer.optimize(copy, options);
            full["ms_per_optimisation_pass"] = optimizer.optimize(copy, options).milliseconds;
            full["optimisation_measured_on_copy"] = true;
        }
    }
    if (o.json) {
        std::cout << sceneio::dumpJson(full, 2) << '\n';
        return 0;
    }
    std::printf("%s: %d steps, %d substep(s) x %d iterations, %d thread(s), %s kernels (%d "
                "lanes)\n",
                scene.name.c_str(), steps, scene.solver.substeps, scene.solver.iterations,
                scene.solver.threads, std::string(kernels::kernelPath().name).c_str(),
                kernels::kernelPath().lanes);
    std::printf("  ms per step: median %.3f, min %.3f, max %.3f, mean %.3f; whole run (the %d "
                "warm-up steps too) %.3f\n",
                median, sorted.front(), sorted.back(), mean, warmup,
                full["ms_per_step_whole_run"].get<double>());
    for (auto it = perType.begin(); it != perType.end(); ++it) {
        std::printf("  %-16s %8zu elements  %7.1f ns per projection\n", it.key().c_str(),
                    counts[it.key()].get<std::size_t>(), it.value().get<double>());
    }
    std::printf("  frame cache: %.3f MB per frame (%.3f MB of particle state%s), %.3f ms to "
                "record one\n",
                double(frameBytes) / 1e6, double(particleBytes) / 1e6,
                airCopied ? ", the air's tets re-meshed in the step" : "", recordMs);
    if (full.contains("rigid_bodies")) {
        std::printf("  rigid: %zu bodies (%zu awake), %zu contact points, %zu rows; per substep "
                    "%.3f ms detection, %.3f ms solve (on %d thread%s)\n",
                    scene.rigidBodies.size(), full["rigid_awake"].get<std::size_t>(),
                    full["rigid_contacts"].get<std::size_t>(),
                    full["rigid_rows"].get<std::size_t>(), full["ms_rigid_detection"].get<double>(),
                    full["ms_rigid_solve"].get<double>(), full["rigid_threads"].get<int>(),
                    full["rigid_threads"].get<int>() == 1 ? "" : "s");
        const json& g = full["ms_rigid_stages"];
        std::printf("  rigid solve by stage (ms): contact graph %.3f, bodies %.3f, batches %.3f, "
                    "substeps %.3f, poses %.3f, impulses %.3f, velocities %.3f, sleep %.3f\n",
                    g["graph"].get<double>(), g["bodies"].get<double>(), g["batches"].get<double>(),
                    g["substeps"].get<double>(), g["poses"].get<double>(),
                    g["impulses"].get<double>(), g["velocities"].get<double>(),
                    g["sleep"].get<double>());
    }
    if (full.contains("characters")) {
        std::printf("  characters: %zu, %zu skin vertices, posed and skinned in %.3f ms per step\n",
                    scene.characters.size(), full["skin_vertices"].get<std::size_t>(),
                    full["ms_per_step_skinning"].get<double>());
    }
    if (full.contains("ms_per_step_continuous")) {
        std::printf("  continuous collision %.3f ms per step (its tests and zones %.3f%s); %.0f "
                    "pairs touching, %.0f particles held per step\n",
                    holdMs / double(steps), continuousMs / double(steps),
                    scene.air.empty() ? "" : ", the rest the air mended around the held",
                    full["continuous_touching_per_step"].get<double>(),
                    full["continuous_held_per_step"].get<double>());
    }
    if (full.contains("air_tets")) {
        std::printf("  %-16s %8zu elements  %7.2f ns per check\n", "air", scene.air.size(),
                    full["ns_per_air_projection"].get<double>());
        std::printf("  air %.3f ms per step (checks and projection; the projection alone %.3f), "
                    "optimisation %.3f ms per step\n",
                    airMs / double(steps), airProjectionMs / double(steps), passMs / double(steps));
        if (passes > 0) {
            std::printf("  air optimisation every %d step(s): %.3f ms per pass, %zu changes in "
                        "%zu passes\n",
                        scene.solver.airOptimizationInterval, passMs / double(passes), changes,
                        passes);
        } else {
            std::printf("  air optimisation off; a pass on a copy of the final state: %.3f ms\n",
                        full["ms_per_optimisation_pass"].get<double>());
        }
    }
    return 0;
}

} // namespace

void addBenchCommand(CLI::App& cli, int& status) {
    auto o = std::make_shared<RunOptions>();
    auto* c = cli.add_subcommand(
        "bench", "Time the solver on a scene (one thread unless --threads): the median ms per "
                 "step and ns per projection of each constraint type; with air, ns per air check "
                 "and ms per optimisation pass; with rigid bodies, ms for contact detection and "
                 "for the solve.");
    addRunOptions(*c, *o);
    c->add_flag("--json", o->json, "The figures as JSON");
    c->callback([o, &status] { status = bench(*o); });
}

} // namespace pbd::cli
