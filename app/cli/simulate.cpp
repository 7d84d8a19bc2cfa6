// pbdlab-cli simulate: steps a scene and writes the final positions, per-element fields,
// per-constraint residuals and lambdas, the air's and the rigid bodies' figures as JSON.

#include "app/cli/Command.h"
#include "app/cli/ReportJson.h"
#include "app/cli/RunOptions.h"
#include "core/fields/Fields.h"
#include "core/solver/Solver.h"
#include "meshing/SceneJson.h"

#include <cstdio>
#include <fstream>
#include <iostream>

namespace pbd::cli {

namespace {

int simulate(const RunOptions& o) {
    if (checkOutputs({o.out}) != kSuccess) {
        return kInputProblem;
    }
    RestFrames rest;
    std::optional<Scene> made = sceneToRun(o, &rest);
    if (!made) {
        return kInputProblem;
    }
    Scene& scene = *made;
    const int steps = o.steps > 0 ? o.steps : 100;
    Solver solver(scene);
    double totalMs = 0;
    for (int i = 0; i < steps; ++i) {
        solver.step();
        totalMs += solver.lastStepMilliseconds();
    }
    if (const std::string d = divergence(scene); !d.empty()) {
        return inputProblem(d);
    }
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
    json result = {{"scene", scene.name},
                   {"settings", settingsJson(scene.solver)},
                   {"constraint_groups", groupsJson(scene)},
                   {"colliders", collidersJson(scene)},
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
                         {"min_volume", a.minVolume},
                         {"projections", a.projections},
                         {"contact_pairs", a.contactPairs},
                         {"contacts", a.contacts},
                         {"contact_distance", scene.solver.airContactDistance},
                         {"friction", scene.solver.airFriction},
                         {"optimisation_interval", scene.solver.airOptimizationInterval},
                         {"optimisation_passes", solver.airOptimizationPasses()},
                         {"optimisation_ms", solver.airOptimizationMilliseconds()}};
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
    c->add_flag("--squash-y", o->squashY,
                "Every body particle's y set to the floor at step 0 (the memory experiment)");
    c->add_flag("--json", o->json, "Accepted for symmetry with bench: the output is JSON anyway");
    c->callback([o, &status] { status = simulate(*o); });
}

} // namespace pbd::cli
