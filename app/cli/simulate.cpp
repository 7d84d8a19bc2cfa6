// pbdlab-cli simulate: steps a scene and writes the final positions, per-element fields,
// per-constraint residuals and lambdas, the air's and the rigid bodies' figures as JSON.

#include "app/cli/Command.h"
#include "app/cli/ReportJson.h"
#include "app/cli/RunOptions.h"
#include "core/air/AirOptimizer.h"
#include "core/fields/Fields.h"
#include "core/scene/Topology.h"
#include "core/solver/Solver.h"
#include "meshing/CacheExport.h"
#include "meshing/SceneJson.h"
#include "meshing/SurfaceCheck.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>

namespace pbd::cli {

namespace {

// The figures of a run with air that the last step alone does not show: the largest number of
// inverted air tets after any step, the smallest volume any body kept (against its rest shape)
// and the body particles that left the container.
class AirRun {
public:
    AirRun(const Scene& scene, const RestFrames& rest) {
        // Each tet body's rest volume, from its tets' rest frames: V0 = 1 / (6 det Q^-1).
        std::size_t tet = 0;
        for (const Body& body : scene.bodies) {
            Real volume = 0;
            for (std::size_t k = 0; k < body.tets.size() && tet < rest.tetQInverse.size(); ++k) {
                const Real d = rest.tetQInverse[tet++].determinant();
                volume += d != 0 ? 1 / (6 * d) : 0;
            }
            restVolume_.push_back(volume);
        }
        // The container: the box the air's immovable points span.
        const AirMesh& air = scene.air;
        for (Index i = air.firstParticle; i < air.firstParticle + air.particleCount; ++i) {
            if (scene.particles.inverseMasses[i] == 0) {
                box_.extend(scene.particles.positions[i]);
            }
        }
    }

    // The step's smallest body volume ratio and the body particles outside the container.
    Real stepVolumeRatio() const { return stepVolumeRatio_; }
    std::size_t stepOutside() const { return stepOutside_; }

    void afterStep(const Scene& scene, const Solver& solver, int step) {
        const AirStatistics& a = solver.airStatistics();
        if (a.invertedAfter > maxInvertedAfter_ || step == 1) {
            maxInvertedAfter_ = std::max(maxInvertedAfter_, a.invertedAfter);
            if (a.invertedAfter > 0) {
                worstStep_ = step;
            }
        }
        stepsWithInverted_ += a.invertedAfter > 0;
        relocatedPoints_ += a.relocatedPoints;
        const auto& x = scene.particles.positions;
        stepVolumeRatio_ = 1;
        for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
            const Body& body = scene.bodies[b];
            if (body.tets.empty() || !(restVolume_[b] > 0)) {
                continue;
            }
            Real volume = 0;
            for (const Tetrahedron& t : body.tets) {
                volume += signedVolume(x[t[0]], x[t[1]], x[t[2]], x[t[3]]);
            }
            const Real ratio = volume / restVolume_[b];
            stepVolumeRatio_ = std::min(stepVolumeRatio_, ratio);
            if (ratio < minVolumeRatio_) {
                minVolumeRatio_ = ratio;
                smallestBody_ = body.name;
            }
        }
        if (!box_.isEmpty()) {
            const Real tolerance = 1e-6 * box_.diagonal().norm();
            std::size_t outside = 0;
            for (const Body& body : scene.bodies) {
                for (Index i = body.firstParticle; i < body.firstParticle + body.particleCount;
                     ++i) {
                    const Real d = box_.exteriorDistance(x[i]);
                    outside += d > tolerance;
                    deepestOutside_ = std::max(deepestOutside_, d);
                }
            }
            stepOutside_ = outside;
            maxOutside_ = std::max(maxOutside_, outside);
        }
    }

    void write(json& air) const {
        air["max_inverted_after"] = maxInvertedAfter_;
        air["max_inverted_step"] = worstStep_;
        air["steps_with_inverted"] = stepsWithInverted_;
        air["relocated_points"] = relocatedPoints_;
        air["min_body_volume_ratio"] = minVolumeRatio_;
        air["smallest_body"] = smallestBody_;
        air["max_particles_outside"] = maxOutside_;
        air["max_distance_outside"] = deepestOutside_;
    }

private:
    std::vector<Real> restVolume_;
    Eigen::AlignedBox<Real, 3> box_;
    std::size_t maxInvertedAfter_ = 0;
    int worstStep_ = 0;
    std::size_t stepsWithInverted_ = 0;
    std::size_t relocatedPoints_ = 0; // free air points moved out of a closing body, all steps
    Real minVolumeRatio_ = 1;
    std::string smallestBody_;
    std::size_t maxOutside_ = 0;
    Real deepestOutside_ = 0; // m
    Real stepVolumeRatio_ = 1;
    std::size_t stepOutside_ = 0;
};

// Crossing triangles (any two of all bodies' surfaces that intersect other than at a shared
// vertex or edge; CGAL's exact predicates, independent of the air and of the contacts) after
// the steps checked: the last one always, every K-th with --intersections-every.
class IntersectionRun {
public:
    void check(const Scene& scene, int step) {
        const auto t0 = std::chrono::steady_clock::now();
        pairs_ = findIntersections(scene, true);
        ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                   .count();
        ++checks_;
        maxAtFolds_ = std::max(maxAtFolds_, countAtSkinFolds(pairs_));
        if (pairs_.size() > max_ || checks_ == 1) {
            max_ = std::max(max_, pairs_.size());
            maxStep_ = pairs_.empty() ? maxStep_ : step;
        }
        if (!pairs_.empty() && firstStep_ < 0) {
            firstStep_ = step;
        }
    }
    json toJson(const Scene& scene, int every) const {
        json listed = json::array();
        for (std::size_t i = 0; i < pairs_.size() && i < 20; ++i) {
            const TriangleIntersection& p = pairs_[i];
            listed.push_back({{"body_a", intersectionBodyName(scene, p.bodyA)},
                              {"triangle_a", p.triangleA},
                              {"body_b", intersectionBodyName(scene, p.bodyB)},
                              {"triangle_b", p.triangleB},
                              {"at_skin_fold", p.atSkinFold}});
        }
        return {{"last", pairs_.size()},
                {"max", max_},
                {"at_skin_folds", countAtSkinFolds(pairs_)},
                {"max_at_skin_folds", maxAtFolds_},
                {"max_step", maxStep_},
                {"first_step", firstStep_},
                {"checked_steps", checks_},
                {"every", every},
                {"ms_per_check", checks_ > 0 ? ms_ / double(checks_) : 0.0},
                {"pairs", listed}};
    }

private:
    std::vector<TriangleIntersection> pairs_;
    std::size_t max_ = 0;
    std::size_t maxAtFolds_ = 0; // the most pairs at the skins' folds in a check
    int maxStep_ = 0;
    int firstStep_ = -1;
    std::size_t checks_ = 0;
    double ms_ = 0;
};

// One line per step for --trace: the time, the step's cost and the air's figures.
void traceHeader(std::ostream& out) {
    out << "step,time,ms,air_inverted_before,air_inverted_after,air_min_volume,air_projections,"
           "air_optimisation_ms,air_optimisation_changes,air_min_quality_after,air_tets,"
           "body_min_volume_ratio,particles_outside,max_speed,fastest_particle,contacts,"
           "self_contacts,held,touching\n";
}
void traceStep(std::ostream& out, const Scene& scene, const Solver& solver, const AirRun* air,
               int step) {
    const AirStatistics& a = solver.airStatistics();
    const AirOptimizationStatistics& o = solver.airOptimization();
    // The fastest particle: a run that blows up shows it here steps before anything else.
    Real maxSpeed2 = 0;
    std::size_t fastest = 0;
    const auto& v = scene.particles.velocities;
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (const Real s2 = v[i].squaredNorm(); s2 > maxSpeed2) {
            maxSpeed2 = s2;
            fastest = i;
        }
    }
    const ContinuousCollisionStatistics& c = solver.continuousCollision();
    char line[520];
    std::snprintf(
        line, sizeof line,
        "%d,%.6f,%.3f,%zu,%zu,%.6g,%zu,%.3f,%zu,%.6g,%zu,%.6f,%zu,%.6g,%zu,%zu,%zu,%zu,%zu\n", step,
        double(solver.time()), solver.lastStepMilliseconds(), a.invertedBefore, a.invertedAfter,
        double(a.minVolume), a.projections, o.milliseconds, o.changes(), double(o.minQualityAfter),
        scene.air.tets.size(), air ? double(air->stepVolumeRatio()) : 1.0,
        air ? air->stepOutside() : 0, double(std::sqrt(maxSpeed2)), fastest,
        solver.contacts().size(), solver.selfContacts().size(), c.held, c.touching);
    out << line << std::flush; // a run stopped midway keeps its lines
}

int simulate(const RunOptions& o) {
    if (checkOutputs({o.out, o.trace}) != kSuccess) {
        return kInputProblem;
    }
    RestFrames rest;
    std::optional<Scene> made = sceneToRun(o, &rest);
    if (!made) {
        return kInputProblem;
    }
    Scene& scene = *made;
    const int steps = o.steps > 0 ? o.steps : 100;
    std::unique_ptr<CacheExporter> cache;
    if (!o.cacheFolder.empty()) {
        const Result<unsigned> formats = parseCacheFormats(o.cacheFormats);
        if (!formats) {
            return inputProblem(formats.error());
        }
        if (o.cacheEvery < 1) {
            return inputProblem("--cache-every must be at least 1");
        }
        auto begun = CacheExporter::begin(scene, rest, {o.cacheFolder, scene.name, *formats});
        if (!begun) {
            return inputProblem(begun.error());
        }
        cache = std::move(*begun);
        if (Result<bool> added = cache->addFrame(scene, 0); !added) {
            return inputProblem(added.error());
        }
    }
    // Continuous collision keeps apart what starts apart; triangles that cross it lets go
    // until they come apart: say so when the run starts crossed (an imported mesh's shells
    // through each other, a cached tangle).
    std::size_t crossingAtStart = 0;
    if (scene.solver.continuousCollision) {
        crossingAtStart = findIntersections(scene, true).size();
        if (crossingAtStart > 0) {
            std::cerr << "warning: " << crossingAtStart
                      << " pair(s) of the bodies' and characters' triangles cross at the start: "
                         "continuous collision does not hold them until they come apart (it "
                         "keeps apart what starts apart)\n";
        }
    }
    Solver solver(scene);
    std::optional<AirRun> airRun;
    if (!scene.air.empty()) {
        airRun.emplace(scene, rest);
    }
    std::ofstream trace;
    if (!o.trace.empty()) {
        trace.open(o.trace);
        traceHeader(trace);
    }
    double totalMs = 0;
    ContinuousCollisionStatistics continuous; // summed over the steps; rounds: the most
    std::size_t heldMost = 0;
    IntersectionRun intersections;
    std::string ranAway;
    for (int i = 0; i < steps; ++i) {
        try {
            solver.step();
        } catch (const std::exception& e) { // out of memory in a runaway: the steps so far stay
            ranAway = Solver::stepFailure(e, i + 1);
            break;
        }
        totalMs += solver.lastStepMilliseconds();
        if (const ContinuousCollisionStatistics& c = solver.continuousCollision(); c.rounds > 0) {
            continuous.add(c);
            heldMost = std::max(heldMost, c.held);
        }
        if (o.intersectionsEvery > 0 && (i + 1) % o.intersectionsEvery == 0 && i + 1 < steps) {
            intersections.check(scene, i + 1);
        }
        if (airRun) {
            airRun->afterStep(scene, solver, i + 1);
        }
        if (trace.is_open()) {
            traceStep(trace, scene, solver, airRun ? &*airRun : nullptr, i + 1);
        }
        if (cache && (i + 1) % o.cacheEvery == 0) {
            if (Result<bool> added = cache->addFrame(scene, solver.time()); !added) {
                return inputProblem(added.error());
            }
        }
        // A run collapsed into itself, or gone non-finite, stops here (its trace and cache keep
        // the steps so far): stepping NaNs on costs as much as sound steps and says nothing.
        if (ranAway = solver.runaway(); !ranAway.empty()) {
            break;
        }
        if (ranAway = divergence(scene, std::size_t(i) + 1); !ranAway.empty()) {
            break;
        }
    }
    json cacheJson;
    if (cache) {
        const Result<CacheExportSummary> written = cache->finish();
        if (!written) {
            return inputProblem(written.error());
        }
        json files = json::array();
        for (const auto& f : written->files) {
            files.push_back(f.string());
        }
        cacheJson = {{"folder", o.cacheFolder},
                     {"formats", o.cacheFormats},
                     {"every", o.cacheEvery},
                     {"frames", written->frames},
                     {"files", files},
                     {"surface_vertices", written->surfaceVertices},
                     {"pvd_ms", written->pvdMilliseconds},
                     {"pc2_ms", written->pc2Milliseconds},
                     {"glb_ms", written->glbMilliseconds}};
    }
    if (trace.is_open()) {
        trace.close();
        if (!trace) {
            return inputProblem("could not write '" + o.trace + "'");
        }
    }
    if (!ranAway.empty()) {
        return inputProblem(ranAway);
    }
    intersections.check(scene, steps);
    const ElementFields fields = computeElementFields(scene, rest);
    json constraints = json::array();
    for (const ConstraintResiduals& r : computeConstraintResiduals(scene)) {
        if (r.residual.empty()) {
            continue;
        }
        constraints.push_back({{"type", std::string(toString(r.type))},
                               {"components", r.components},
                               {"count", r.residual.size() / r.components},
                               {"max_abs_residual", r.maxAbsResidual()},
                               {"residual", r.residual},
                               {"lambda", r.lambda}});
    }
    json positions = json::array();
    for (const Vec3& p : scene.particles.positions) {
        positions.push_back({p.x(), p.y(), p.z()});
    }
    // Bodies with their triangles as they are now: tearing changes both.
    json bodies = json::array();
    for (const Body& body : scene.bodies) {
        json triangles = json::array();
        for (const Triangle& t : body.triangles) {
            triangles.push_back({t[0], t[1], t[2]});
        }
        bodies.push_back({{"name", body.name},
                          {"first_particle", body.firstParticle},
                          {"particles", body.particleCount},
                          {"triangles", triangles}});
    }
    json settings = settingsJson(scene.solver);
    settings["bending_model"] = std::string(toString(scene.constraints.bending.model));
    json result = {{"scene", scene.name},
                   {"settings", settings},
                   {"constraint_groups", groupsJson(scene)},
                   {"colliders", collidersJson(scene)},
                   {"characters", charactersJson(scene, solver.time())},
                   {"steps", steps},
                   {"time", solver.time()},
                   {"ms_per_step", totalMs / steps},
                   {"positions", positions},
                   {"bodies", bodies},
                   {"fields",
                    {{"tet_green_strain", rowsJson(fields.tetGreenStrain)},
                     {"tet_principal_stretch", rowsJson(fields.tetPrincipalStretch)},
                     {"tet_volume_ratio", fields.tetVolumeRatio},
                     {"inverted_tets", fields.invertedTets()},
                     {"triangle_green_strain", rowsJson(fields.triangleGreenStrain)},
                     {"triangle_principal_stretch", rowsJson(fields.trianglePrincipalStretch)},
                     {"triangle_area_ratio", fields.triangleAreaRatio}}},
                   {"constraints", constraints}};
    if (!scene.rigidBodies.empty()) {
        result["rigid"] = rigidJson(scene, solver);
    }
    if (!scene.embedded.empty()) {
        // The meshes the cage carries, where it carries them now.
        json embedded = json::array();
        std::vector<Vec3> carried;
        for (const EmbeddedMesh& m : scene.embedded) {
            embeddedPositions(m, scene.particles.positions, carried);
            json at = json::array();
            for (const Vec3& p : carried) {
                at.push_back({p.x(), p.y(), p.z()});
            }
            embedded.push_back({{"name", m.name},
                                {"vertices", m.vertexCount()},
                                {"triangles", m.triangles.size()},
                                {"positions", at}});
        }
        result["embedded"] = embedded;
    }
    if (!scene.air.empty()) {
        const AirStatistics& a = solver.airStatistics();
        result["air"] = {{"tets", scene.air.tets.size()},
                         {"triangles", scene.air.triangles.size()},
                         {"inverted_before", a.invertedBefore},
                         {"inverted_after", a.invertedAfter},
                         {"inverted_fixed", a.invertedFixed},
                         {"min_volume", a.minVolume},
                         {"projections", a.projections},
                         {"contact_pairs", a.contactPairs},
                         {"contacts", a.contacts},
                         {"contact_distance", scene.solver.airContactDistance},
                         {"friction", scene.solver.airFriction},
                         {"iterations", scene.solver.airIterations},
                         {"optimisation_interval", scene.solver.airOptimizationInterval},
                         {"optimisation_passes", solver.airOptimizationPasses()},
                         {"optimisation_ms", solver.airOptimizationMilliseconds()}};
        airRun->write(result["air"]);
    }
    if (!cacheJson.is_null()) {
        result["cache"] = cacheJson;
    }
    result["intersections"] = intersections.toJson(scene, o.intersectionsEvery);
    if (scene.solver.continuousCollision) {
        const double run = std::max(1, steps);
        result["continuous_collision"] = {{"crossing_at_start", crossingAtStart},
                                          {"pairs_per_step", double(continuous.pairs) / run},
                                          {"touching_per_step", double(continuous.touching) / run},
                                          {"held", continuous.held},
                                          {"held_most_in_a_step", heldMost},
                                          {"unresolved", continuous.unresolved},
                                          {"let_go", continuous.tangled},
                                          {"air_tets_tied", continuous.tied},
                                          {"most_rounds", continuous.rounds},
                                          {"lists", continuous.lists},
                                          {"ms_per_step", continuous.milliseconds / run}};
    }
    if (o.out.empty()) {
        std::cout << sceneio::dumpJson(result) << '\n';
        return 0;
    }
    std::ofstream file(o.out);
    file << sceneio::dumpJson(result) << '\n';
    file.close();
    if (!file) {
        return inputProblem("could not write '" + o.out + "'");
    }
    std::fprintf(stderr, "%s: %d steps (%.3f s simulated) written to %s\n", scene.name.c_str(),
                 steps, solver.time(), o.out.c_str());
    return 0;
}

} // namespace

void addSimulateCommand(CLI::App& cli, int& status) {
    auto o = std::make_shared<RunOptions>();
    auto* c = cli.add_subcommand(
        "simulate",
        "Step a generated scene, a project or an asset and write the final positions, "
        "per-element fields (Green strain, principal stretches, det F) and per-constraint "
        "residuals and lambdas as JSON (to stdout without --out); with air, its statistics; "
        "with rigid bodies, their transforms, velocities, momenta and energy.");
    addRunOptions(*c, *o);
    c->add_option("--out", o->out, "Write the JSON here instead of stdout")

        ->type_name("RESULT.json");
    c->add_option("--trace", o->trace,
                  "Write one CSV line per step here: its time and cost, and with air the "
                  "inverted tets before and after, the smallest volume, the projections and "
                  "the optimisation's time, changes and worst quality")
        ->type_name("STEPS.csv");
    c->add_option("--cache", o->cacheFolder,
                  "Write a cache of the run here that other tools read: a ParaView collection "
                  "(.pvd and a .vtu per frame with the fields), a point cache (.pc2 with the "
                  "rest mesh as .obj) and an animated binary glTF (.glb), as --cache-format says")
        ->type_name("DIR");
    c->add_option("--cache-every", o->cacheEvery, "Cache every K-th step (and step 0)")
        ->type_name("K")
        ->check(CLI::PositiveNumber);
    c->add_option("--cache-format", o->cacheFormats,
                  "The cache's formats: pvd, glb, pc2 (comma-separated) or all; default pvd")
        ->type_name("pvd,glb,pc2|all");
    c->add_option("--intersections-every", o->intersectionsEvery,
                  "Count crossing triangles (exact, independent of the air) after every K-th "
                  "step too, not only after the last: `intersections` gets the largest count "
                  "over the run and its step")
        ->type_name("K")
        ->check(CLI::NonNegativeNumber);
    c->add_flag("--squash-y", o->squashY,
                "Every body particle's y set to the floor at step 0 (the memory experiment)");
    c->add_flag("--json", o->json, "Accepted for symmetry with bench: the output is JSON anyway");
    c->callback([o, &status] { status = simulate(*o); });
}

} // namespace pbd::cli
