// pbdlab-cli: PBD Lab without a display, for scripts, batch preparation and benchmarks.

#include "core/Fields.h"
#include "core/Mass.h"
#include "core/Solver.h"
#include "core/Version.h"
#include "meshing/AirScenes.h"
#include "meshing/CookedAsset.h"
#include "meshing/Export.h"
#include "meshing/LibraryVersions.h"
#include "meshing/MeshImport.h"
#include "meshing/Prepare.h"
#include "meshing/ProjectFile.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using nlohmann::json;

json groupsJson(const pbd::Scene& scene);
json collidersJson(const pbd::Scene& scene);

constexpr const char* kUsage = R"(Usage: pbdlab-cli [--help] [--version] COMMAND [ARGS]

Commands:
  scenes [--json]                  List the scenes PBD Lab generates itself.
  info SCENE|MESH|PROJECT|ASSET [--json] [--scale S]
                                   Load a generated scene or a project, or import a mesh
                                   file (.obj, .ply, .stl, .off, .gltf, .glb), and report its
                                   bodies, element counts, size, mass, constraint groups and
                                   any problems found.
  prepare MESH... [--tet] [--air] [--frames uv] [--tet-frames global|surface]
          [--quality Q] [--max-volume V] [--air-margin F] [--air-subdivisions N]
          [--air-quality Q] [--local-air D] [--local-air-bodies NAME,...] [--scale S]
          [--no-repair] [--constraints] [--density D] [--areal-density D] [--timeout S]
          [--rigid [--ground]]
          [-o project.json] [--asset F] [--vtu F] [--msh F] [--tetgen PREFIX]
          [--report report.json] [--quiet]
                                   Import, check and repair meshes; tetrahedralize closed
                                   bodies (TetGen, surface kept exactly, radius-edge ratio Q,
                                   max tet volume V m^3); tessellate the air in a box around
                                   everything (margin F of the scene size, N segments per box
                                   edge; only within D m of the named bodies with
                                   --local-air); material frames from UVs; masses and, with
                                   --constraints, default constraints. Writes a project file,
                                   a cooked asset (--asset), .vtu, Gmsh .msh 4.1, TetGen
                                   .node/.ele/.face and a JSON report. Progress and the report go to stderr. With --rigid
                                   every body becomes a rigid body, its convex hull, of
                                   density D (--ground: on a static ground).
  export SCENE|PROJECT|ASSET [-o project.json] [--asset F] [--vtu F] [--msh F]
         [--tetgen PREFIX] [--indent N]
                                   Write a generated scene, a project or a cooked asset as a
                                   project, a cooked asset (an engine's input: particles,
                                   inverse masses, constraints by type with rest data and
                                   compliance, coloured; material frames, air, colliders,
                                   rigid bodies, solver settings), .vtu, .msh or TetGen files.
  simulate SCENE|PROJECT|ASSET [--steps N] [--substeps S] [--iterations I] [--dt T] [--threads T]
           [--method xpbd|pbd] [--air-optimization K] [--air-threshold Q]
           [--air-distance D] [--air-friction MU] [--squash-y] [--out result.json]
           [--rigid-iterations N] [--rigid-substeps S] [--rigid-relax N] [--contact-hertz HZ]
           [--warm-start on|off] [--separate-push on|off] [--sleeping on|off]
           [--stabilisation off|shock-propagation|weight-amplification]
           [--exact-angular-momentum on|off] [--group NAME:KEY=VALUE[,KEY=VALUE]]...
           [--collider SHAPE[:KEY=VALUE,...]]...
                                   Step a generated scene and write the final positions,
                                   per-element fields (Green strain, principal stretches,
                                   det F) and per-constraint residuals and lambdas as JSON
                                   (--squash-y: every y set to the floor at step 0)
                                   (to stdout without --out). With air: an air-mesh
                                   optimisation pass every K steps (0 = off) on the air tets
                                   of quality below Q; bodies facing each other across the
                                   air keep D m apart and slide with friction MU. With rigid
                                   bodies: their transforms, velocities, total momentum and
                                   energy, and the momenta with the particles (N PGS
                                   sweeps, warm starting, sleeping, stack stabilisation;
                                   S substeps on contacts detected once, N relax sweeps,
                                   soft contacts of HZ hertz, 0 = rigid: the soft step;
                                   --separate-push off keeps the push out of penetrations
                                   in the velocities, taken out by the relax sweeps).
                                   --exact-angular-momentum on projects distances along
                                   their edges at the start of the substep (SHAKE).
                                   --group edits a constraint group first (see 'info'):
                                   KEY is enabled (on|off), modulus or compliance, a
                                   component (stretch_u, stretch_v, shear_uv, stretch_x...,
                                   a number or 'rigid'), pbd or pbd_COMPONENT, rest_u,
                                   rest_v, rest_x..., pressure; e.g. --group
                                   'cloth strain:stretch_v=50,rest_u=1.1'.
                                   --collider adds a plane, sphere, box or capsule fitted
                                   under the bodies, then edited: KEY is name, position,
                                   normal, radius, half_extents, rotation (degrees), a, b,
                                   friction, restitution; vectors as 'x y z'; e.g.
                                   --collider 'sphere:position=0 0.5 0,radius=0.3';
                                   or mesh:file=PATH[,KEY=VALUE...], a closed mesh.
  bench SCENE|PROJECT|ASSET [--steps N] [--threads T] [--air-optimization K] [--air-threshold Q]
        [--air-distance D] [--air-friction MU] [--rigid-iterations N] [--rigid-substeps S]
        [--rigid-relax N] [--contact-hertz HZ] [--warm-start on|off] [--separate-push on|off]
        [--sleeping on|off] [--stabilisation off|shock-propagation|weight-amplification]
        [--exact-angular-momentum on|off] [--group NAME:KEY=VALUE[,...]]...
        [--collider SHAPE[:KEY=VALUE,...]]... [--json]
                                   Time the solver on a generated scene: median ms per step
                                   and ns per projection of each constraint type; with air,
                                   ns per air check and ms per optimisation pass; with rigid
                                   bodies, ms for contact detection and for the solve.

Options:
  -h, --help                       Show this help and exit.
  -v, --version                    Show the version of PBD Lab and its libraries and exit.

Exit status: 0 on success, 1 when the input has problems, 2 on a usage error.
)";

int usageError(const std::string& message) {
    std::fprintf(stderr, "pbdlab-cli: %s\nTry 'pbdlab-cli --help'.\n", message.c_str());
    return 2;
}

int listScenes(const std::vector<std::string_view>& args) {
    bool asJson = false;
    for (std::string_view a : args) {
        if (a == "--json") {
            asJson = true;
        } else {
            return usageError("scenes: unknown option '" + std::string(a) + "'");
        }
    }
    if (asJson) {
        json list = json::array();
        for (const pbd::SceneInfo& info : pbd::allScenes()) {
            list.push_back({{"name", info.name}, {"description", info.description}});
        }
        std::cout << list.dump(2) << '\n';
    } else {
        for (const pbd::SceneInfo& info : pbd::allScenes()) {
            std::cout << info.name << "\t" << info.description << '\n';
        }
    }
    return 0;
}

json boundsJson(const pbd::Bounds& b) {
    if (b.empty()) {
        return nullptr;
    }
    return {{"min", {b.min.x(), b.min.y(), b.min.z()}}, {"max", {b.max.x(), b.max.y(), b.max.z()}}};
}

int info(const std::vector<std::string_view>& args) {
    std::string input;
    bool asJson = false;
    pbd::ImportOptions options;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--json") {
            asJson = true;
        } else if (args[i] == "--scale") {
            if (i + 1 >= args.size()) {
                return usageError("info: --scale needs a value");
            }
            char* end = nullptr;
            const std::string value(args[++i]);
            options.scale = std::strtod(value.c_str(), &end);
            if (end == value.c_str() || *end != '\0' || !(options.scale > 0)) {
                return usageError("info: --scale must be a positive number, not '" + value + "'");
            }
        } else if (args[i].starts_with("-")) {
            return usageError("info: unknown option '" + std::string(args[i]) + "'");
        } else if (input.empty()) {
            input = args[i];
        } else {
            return usageError("info: only one SCENE or MESH may be given");
        }
    }
    if (input.empty()) {
        return usageError("info: name a generated scene or a mesh file");
    }

    pbd::Scene scene;
    std::vector<std::string> warnings;
    pbd::Result<pbd::Scene> generated =
        input.ends_with(".json") ? pbd::loadSceneFile(input) : pbd::makeAnyScene(input);
    if (generated) {
        scene = std::move(generated).value();
    } else if (input.ends_with(".json")) {
        std::fprintf(stderr, "pbdlab-cli: %s\n", generated.error().c_str());
        return 1;
    } else if (input.find('.') == std::string::npos && input.find('/') == std::string::npos) {
        std::fprintf(stderr, "pbdlab-cli: %s\n", generated.error().c_str());
        return 1;
    } else {
        pbd::Result<pbd::ImportedMesh> imported = pbd::importMesh(input, options);
        if (!imported) {
            std::fprintf(stderr, "pbdlab-cli: %s\n", imported.error().c_str());
            return 1;
        }
        scene = std::move(imported->scene);
        warnings = std::move(imported->warnings);
    }
    const std::vector<std::string> problems = pbd::validateScene(scene);

    json bodies = json::array();
    for (const pbd::Body& body : scene.bodies) {
        bodies.push_back({{"name", body.name},
                          {"kind", std::string(pbd::toString(body.kind))},
                          {"particles", body.particleCount},
                          {"triangles", body.triangles.size()},
                          {"tetrahedra", body.tets.size()},
                          {"uvs", body.hasUVs()},
                          {"mass", pbd::totalMass(scene.particles, body)},
                          {"bounds", boundsJson(scene.bounds(body))}});
    }
    const json report = {{"scene", scene.name},
                         {"description", scene.description},
                         {"particles", scene.particles.size()},
                         {"triangles", scene.triangleCount()},
                         {"tetrahedra", scene.tetCount()},
                         {"bounds", boundsJson(scene.bounds())},
                         {"bodies", bodies},
                         {"constraint_groups", groupsJson(scene)},
                         {"colliders", collidersJson(scene)},
                         {"colliders", collidersJson(scene)},
                         {"warnings", warnings},
                         {"problems", problems}};
    if (asJson) {
        std::cout << report.dump(2) << '\n';
    } else {
        std::cout << scene.name << ": " << scene.bodies.size() << " bodies, "
                  << scene.particles.size() << " particles, " << scene.triangleCount()
                  << " triangles, " << scene.tetCount() << " tetrahedra\n";
        for (const json& b : bodies) {
            std::cout << "  " << b["name"].get<std::string>() << " ("
                      << b["kind"].get<std::string>() << "): " << b["particles"] << " particles, "
                      << b["triangles"] << " triangles, " << b["tetrahedra"] << " tetrahedra"
                      << (b["uvs"].get<bool>() ? ", UVs" : "") << '\n';
        }
        for (const json& g : report["constraint_groups"]) {
            std::cout << "  group '" << g["name"].get<std::string>() << "': " << g["constraints"]
                      << " " << g["type"].get<std::string>() << " constraints"
                      << (g["enabled"].get<bool>() ? "" : " (off)") << ", "
                      << g["unit"].get<std::string>() << " " << g["material"].dump() << '\n';
        }
        for (const std::string& w : warnings) {
            std::cout << "warning: " << w << '\n';
        }
        for (const std::string& p : problems) {
            std::cout << "problem: " << p << '\n';
        }
    }
    return problems.empty() ? 0 : 1;
}

// Options shared by simulate and bench; each returns an error message or "".
struct RunOptions {
    std::string scene;
    int steps = -1;
    int substeps = -1;
    int iterations = -1;
    double dt = -1;
    int threads = -1;
    std::string method;
    std::string out;
    bool json = false;
    bool squashY = false;
    int airOptimization = -1;
    double airThreshold = -1;
    double airDistance = -1;
    double airFriction = -1;
    int rigidIterations = -1;
    int rigidSubsteps = -1;
    int rigidRelax = -1;
    double contactHertz = -1;
    std::string warmStart;              // on | off
    std::string separatePush;           // on | off
    std::string stabilisation;          // off | shock-propagation | weight-amplification
    std::string sleeping;               // on | off
    std::string exactAngularMomentum;   // on | off
    std::vector<std::string> groups;    // NAME:KEY=VALUE,... (core editConstraintGroup)
    std::vector<std::string> colliders; // SHAPE[:KEY=VALUE,...] (core colliderFromSpec)
};

template <class T> bool parseNumber(std::string_view text, T& value) {
    const std::string s(text);
    char* end = nullptr;
    if constexpr (std::is_integral_v<T>) {
        const long v = std::strtol(s.c_str(), &end, 10);
        value = static_cast<T>(v);
    } else {
        value = std::strtod(s.c_str(), &end);
    }
    return !s.empty() && end != s.c_str() && *end == '\0';
}

std::string parseRunOptions(std::string_view command, const std::vector<std::string_view>& args,
                            bool allowOut, RunOptions& o) {
    const std::string cmd(command);
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view a = args[i];
        auto value = [&]() -> std::string_view { return i + 1 < args.size() ? args[++i] : ""; };
        auto positiveInt = [&](int& target) -> std::string {
            const std::string_view v = value();
            if (!parseNumber(v, target) || target < 1) {
                return cmd + ": " + std::string(a) + " needs a positive whole number, not '" +
                       std::string(v) + "'";
            }
            return "";
        };
        std::string error;
        if (a == "--steps") {
            error = positiveInt(o.steps);
        } else if (a == "--substeps") {
            error = positiveInt(o.substeps);
        } else if (a == "--iterations") {
            error = positiveInt(o.iterations);
        } else if (a == "--threads") {
            error = positiveInt(o.threads);
        } else if (a == "--dt") {
            const std::string_view v = value();
            if (!parseNumber(v, o.dt) || !(o.dt > 0) || !std::isfinite(o.dt)) {
                error = cmd + ": --dt needs a positive time step in seconds, not '" +
                        std::string(v) + "'";
            }
        } else if (a == "--air-optimization") {
            const std::string_view v = value();
            if (!parseNumber(v, o.airOptimization) || o.airOptimization < 0) {
                error = cmd + ": --air-optimization needs a step interval (0 = off), not '" +
                        std::string(v) + "'";
            }
        } else if (a == "--air-threshold") {
            const std::string_view v = value();
            if (!parseNumber(v, o.airThreshold) || !(o.airThreshold > 0) ||
                !(o.airThreshold <= 1)) {
                error = cmd + ": --air-threshold needs a quality in (0, 1], not '" +
                        std::string(v) + "'";
            }
        } else if (a == "--air-distance" || a == "--air-friction") {
            const std::string_view v = value();
            double& target = a == "--air-distance" ? o.airDistance : o.airFriction;
            if (!parseNumber(v, target) || !(target >= 0) || !std::isfinite(target)) {
                error = cmd + ": " + std::string(a) + " needs a number >= 0, not '" +
                        std::string(v) + "'";
            }
        } else if (a == "--rigid-iterations") {
            error = positiveInt(o.rigidIterations);
        } else if (a == "--rigid-substeps") {
            error = positiveInt(o.rigidSubsteps);
        } else if (a == "--rigid-relax") {
            const std::string_view v = value();
            if (!parseNumber(v, o.rigidRelax) || o.rigidRelax < 0) {
                error =
                    cmd + ": --rigid-relax needs a whole number >= 0, not '" + std::string(v) + "'";
            }
        } else if (a == "--contact-hertz") {
            const std::string_view v = value();
            if (!parseNumber(v, o.contactHertz) || !(o.contactHertz >= 0) ||
                !std::isfinite(o.contactHertz)) {
                error = cmd +
                        ": --contact-hertz needs a frequency >= 0 (0: rigid contacts), not '" +
                        std::string(v) + "'";
            }
        } else if (a == "--warm-start" || a == "--sleeping" || a == "--exact-angular-momentum" ||
                   a == "--separate-push") {
            std::string& target = a == "--warm-start"      ? o.warmStart
                                  : a == "--sleeping"      ? o.sleeping
                                  : a == "--separate-push" ? o.separatePush
                                                           : o.exactAngularMomentum;
            target = value();
            if (target != "on" && target != "off") {
                error = cmd + ": " + std::string(a) + " is on or off, not '" + target + "'";
            }
        } else if (a == "--stabilisation") {
            o.stabilisation = value();
            if (o.stabilisation != "off" && o.stabilisation != "shock-propagation" &&
                o.stabilisation != "weight-amplification") {
                error = cmd +
                        ": --stabilisation is off, shock-propagation or "
                        "weight-amplification, not '" +
                        o.stabilisation + "'";
            }
        } else if (a == "--method") {
            o.method = value();
            if (o.method != "xpbd" && o.method != "pbd") {
                error = cmd + ": --method is xpbd or pbd, not '" + o.method + "'";
            }
        } else if (a == "--out" && allowOut) {
            o.out = value();
            if (o.out.empty()) {
                error = cmd + ": --out needs a file name";
            }
        } else if (a == "--group") {
            const std::string_view v = value();
            if (v.find(':') == std::string_view::npos || v.find('=') == std::string_view::npos) {
                error = cmd + ": --group needs NAME:KEY=VALUE[,KEY=VALUE...], not '" +
                        std::string(v) + "'";
            }
            o.groups.emplace_back(v);
        } else if (a == "--collider") {
            const std::string_view v = value();
            if (v.empty()) {
                error = cmd + ": --collider needs SHAPE[:KEY=VALUE,...]";
            }
            o.colliders.emplace_back(v);
        } else if (a == "--json") {
            o.json = true;
        } else if (a == "--squash-y" && allowOut) {
            o.squashY = true;
        } else if (a.starts_with("-")) {
            error = cmd + ": unknown option '" + std::string(a) + "'";
        } else if (o.scene.empty()) {
            o.scene = a;
        } else {
            error = cmd + ": only one SCENE may be given";
        }
        if (!error.empty()) {
            return error;
        }
    }
    if (o.scene.empty()) {
        return cmd + ": name a generated scene (see 'pbdlab-cli scenes') or a project file";
    }
    return "";
}

void applyRunOptions(const RunOptions& o, pbd::SolverSettings& s) {
    if (o.substeps > 0) {
        s.substeps = o.substeps;
    }
    if (o.iterations > 0) {
        s.iterations = o.iterations;
    }
    if (o.dt > 0) {
        s.timeStep = o.dt;
    }
    if (o.threads > 0) {
        s.threads = o.threads;
    }
    if (o.airOptimization >= 0) {
        s.airOptimizationInterval = o.airOptimization;
    }
    if (o.airThreshold > 0) {
        s.airQualityThreshold = o.airThreshold;
    }
    if (o.airDistance >= 0) {
        s.airContactDistance = o.airDistance;
    }
    if (o.airFriction >= 0) {
        s.airFriction = o.airFriction;
    }
    if (!o.method.empty()) {
        s.method = o.method == "pbd" ? pbd::SolverMethod::Pbd : pbd::SolverMethod::Xpbd;
    }
    if (o.rigidIterations > 0) {
        s.rigid.iterations = o.rigidIterations;
    }
    if (o.rigidSubsteps > 0) {
        s.rigid.substeps = o.rigidSubsteps;
    }
    if (o.rigidRelax >= 0) {
        s.rigid.relaxIterations = o.rigidRelax;
    }
    if (o.contactHertz >= 0) {
        s.rigid.contactHertz = o.contactHertz;
    }
    if (!o.warmStart.empty()) {
        s.rigid.warmStart = o.warmStart == "on";
    }
    if (!o.separatePush.empty()) {
        s.rigid.separatePush = o.separatePush == "on";
    }
    if (!o.sleeping.empty()) {
        s.rigid.sleeping = o.sleeping == "on";
    }
    if (!o.exactAngularMomentum.empty()) {
        s.exactAngularMomentum = o.exactAngularMomentum == "on";
    }
    if (!o.stabilisation.empty()) {
        s.rigid.stabilisation = o.stabilisation == "off" ? pbd::StackStabilisation::Off
                                : o.stabilisation == "shock-propagation"
                                    ? pbd::StackStabilisation::ShockPropagation
                                    : pbd::StackStabilisation::WeightAmplification;
    }
}

// The first particle with a non-finite position, as a message; "" when all are finite.
std::string divergence(const pbd::Scene& scene) {
    for (std::size_t i = 0; i < scene.particles.size(); ++i) {
        if (!scene.particles.positions[i].allFinite()) {
            return "the simulation diverged: particle " + std::to_string(i) +
                   " has a non-finite position";
        }
    }
    for (const pbd::RigidBody& b : scene.rigidBodies) {
        if (!b.x.allFinite() || !b.q.coeffs().allFinite() || !b.v.allFinite() || !b.L.allFinite()) {
            return "the simulation diverged: rigid body '" + b.name +
                   "' has a non-finite position or velocity";
        }
    }
    return "";
}

json vec(const pbd::Vec3& v) {
    return {v.x(), v.y(), v.z()};
}

json rigidSettingsJson(const pbd::RigidSettings& r) {
    return {{"iterations", r.iterations},
            {"substeps", r.substeps},
            {"relax_iterations", r.relaxIterations},
            {"contact_hertz", r.contactHertz},
            {"contact_damping_ratio", r.contactDampingRatio},
            {"max_push_velocity", r.maxPushVelocity},
            {"slop", r.slop},
            {"correction", r.correction},
            {"warm_start", r.warmStart},
            {"separate_push", r.separatePush},
            {"permute_rows", r.permuteRows},
            {"stabilisation", std::string(pbd::toString(r.stabilisation))},
            {"weight_amplification", r.weightAmplification},
            {"sleeping", r.sleeping},
            {"aggressive_sleep", r.aggressiveSleep}};
}

// The rigid bodies after a run: transforms, velocities, totals and the solver's figures.
json rigidJson(const pbd::Scene& scene, const pbd::Solver& solver) {
    json bodies = json::array();
    for (const pbd::RigidBody& b : scene.rigidBodies) {
        json shapes = json::array();
        for (const pbd::RigidShape& s : b.shapes) {
            shapes.push_back(std::string(pbd::toString(s.type)));
        }
        bodies.push_back({{"name", b.name},
                          {"motion", std::string(pbd::toString(b.motion))},
                          {"shapes", shapes},
                          {"mass", b.mass},
                          {"position", vec(b.x)},
                          {"orientation", {b.q.w(), b.q.x(), b.q.y(), b.q.z()}},
                          {"velocity", vec(b.v)},
                          {"angular_velocity", vec(b.omega)},
                          {"angular_momentum", vec(b.L)},
                          {"sleeping", b.sleeping}});
    }
    const pbd::RigidTotals t = pbd::rigidTotals(scene.rigidBodies, scene.solver.gravity);
    const pbd::RigidStatistics& st = solver.rigid().statistics();
    // The whole system's momenta (about the origin): the bodies' and the particles'.
    pbd::Vec3 linear = t.linearMomentum;
    pbd::Vec3 angular = t.angularMomentum;
    const pbd::Particles& p = scene.particles;
    for (std::size_t i = 0; i < p.size(); ++i) {
        if (p.inverseMasses[i] > 0) {
            const pbd::Vec3 momentum = p.velocities[i] / p.inverseMasses[i];
            linear += momentum;
            angular += p.positions[i].cross(momentum);
        }
    }
    return {{"bodies", bodies},
            {"joints", scene.rigidJoints.size()},
            {"linear_momentum", vec(t.linearMomentum)},
            {"angular_momentum", vec(t.angularMomentum)},
            {"linear_momentum_with_particles", vec(linear)},
            {"angular_momentum_with_particles", vec(angular)},
            {"kinetic_energy", t.kineticEnergy},
            {"potential_energy", t.potentialEnergy},
            {"energy", t.kineticEnergy + t.potentialEnergy},
            {"contacts", st.points},
            {"manifolds", st.manifolds},
            {"warm_started", st.warmStarted},
            {"awake", st.awakeBodies},
            {"sleeping", st.sleepingBodies},
            {"islands", st.islands},
            {"max_height", st.maxHeight},
            {"max_joint_error", solver.rigid().maxJointError()},
            {"settings", rigidSettingsJson(scene.solver.rigid)}};
}

json settingsJson(const pbd::SolverSettings& s) {
    return {{"method", std::string(pbd::toString(s.method))},
            {"dt", s.timeStep},
            {"substeps", s.substeps},
            {"iterations", s.iterations},
            {"threads", s.threads},
            {"gravity", {s.gravity.x(), s.gravity.y(), s.gravity.z()}},
            {"global_damping", s.globalDamping},
            {"exact_angular_momentum", s.exactAngularMomentum}};
}

template <class V> json rowsJson(const std::vector<V>& rows) {
    json a = json::array();
    for (const auto& r : rows) {
        json row = json::array();
        for (int k = 0; k < static_cast<int>(r.size()); ++k) {
            row.push_back(r[k]);
        }
        a.push_back(std::move(row));
    }
    return a;
}

// The generated scene named by the options, with their solver settings applied; nothing (and
// a message on stderr) for an unknown name.
std::optional<pbd::Scene> sceneToRun(const RunOptions& o);

// The --group edits and --collider additions on `scene`; false (with the message on stderr)
// when one cannot be made.
bool applyGroupEdits(const RunOptions& o, pbd::Scene& scene) {
    for (const std::string& spec : o.groups) {
        if (const pbd::Result<int> edited = pbd::editConstraintGroup(scene, spec); !edited) {
            std::fprintf(stderr, "pbdlab-cli: --group %s: %s\n", spec.c_str(),
                         edited.error().c_str());
            return false;
        }
    }
    for (const std::string& spec : o.colliders) {
        pbd::Result<pbd::Collider> c = pbd::Error{""};
        if (spec.starts_with("mesh:file=")) {
            // mesh:file=PATH[,KEY=VALUE...]: a closed surface from a mesh file, then edits.
            const std::size_t comma = spec.find(',');
            const std::string file = spec.substr(10, comma - std::min(comma, std::size_t(10)));
            c = pbd::meshColliderFromFile(file);
            if (c && comma != std::string::npos) {
                c = pbd::editCollider(std::move(c).value(), spec.substr(comma + 1));
            }
        } else {
            c = pbd::colliderFromSpec(spec, scene.bounds());
        }
        if (!c) {
            std::fprintf(stderr, "pbdlab-cli: --collider %s: %s\n", spec.c_str(),
                         c.error().c_str());
            return false;
        }
        scene.colliders.push_back(std::move(c).value());
    }
    return true;
}

json collidersJson(const pbd::Scene& scene) {
    json out = json::array();
    for (const pbd::Collider& c : scene.colliders) {
        const pbd::Vec3 p = pbd::colliderPosition(c);
        json j{{"name", c.name},
               {"shape", std::string(pbd::toString(c.shape))},
               {"position", {p.x(), p.y(), p.z()}},
               {"friction", c.friction},
               {"restitution", c.restitution}};
        if (c.shape == pbd::ColliderShape::Sphere || c.shape == pbd::ColliderShape::Capsule) {
            j["radius"] = c.radius;
        }
        if (c.shape == pbd::ColliderShape::Plane) {
            j["normal"] = {c.normal.x(), c.normal.y(), c.normal.z()};
        }
        if (c.shape == pbd::ColliderShape::Box) {
            j["half_extents"] = {c.halfExtents.x(), c.halfExtents.y(), c.halfExtents.z()};
        }
        out.push_back(j);
    }
    return out;
}

json groupsJson(const pbd::Scene& scene) {
    json groups = json::array();
    for (std::size_t g = 0; g < scene.constraintGroups.size(); ++g) {
        const pbd::ConstraintGroup& group = scene.constraintGroups[g];
        const int K = pbd::materialComponents(group.type);
        json material = json::object(), stiffness = json::object();
        for (int k = 0; k < K; ++k) {
            std::string name = K == 1
                                   ? (pbd::materialIsModulus(group.type) ? "modulus" : "compliance")
                                   : std::string(pbd::materialComponentName(group.type, k));
            std::replace(name.begin(), name.end(), ' ', '_');
            material[name] =
                std::isinf(group.material[k]) ? json("rigid") : json(group.material[k]);
            stiffness[name] = group.pbdStiffness[k];
        }
        const json pbdStiffness = K == 1 ? json(group.pbdStiffness[0]) : stiffness;
        json j{{"name", group.name},
               {"type", std::string(pbd::toString(group.type))},
               {"body",
                group.body >= 0 ? json(scene.bodies[std::size_t(group.body)].name) : json(nullptr)},
               {"enabled", group.enabled},
               {"constraints", pbd::constraintGroupSize(scene.constraints, int(g))},
               {"material", material},
               {"unit", std::string(pbd::materialUnit(group.type))},
               {"pbd_stiffness", pbdStiffness}};
        if (pbd::restStretchComponents(group.type) > 0) {
            j["rest_stretch"] = std::vector<double>(group.restStretch.begin(),
                                                    group.restStretch.begin() +
                                                        pbd::restStretchComponents(group.type));
        }
        groups.push_back(std::move(j));
    }
    return groups;
}

std::optional<pbd::Scene> sceneToRun(const RunOptions& o) {
    if (o.scene.ends_with(".json")) {
        pbd::Result<pbd::Scene> project = pbd::loadSceneFile(o.scene);
        if (!project) {
            std::fprintf(stderr, "pbdlab-cli: %s\n", project.error().c_str());
            return std::nullopt;
        }
        pbd::Scene scene = std::move(project).value();
        applyRunOptions(o, scene.solver);
        if (!applyGroupEdits(o, scene)) {
            return std::nullopt;
        }
        if (o.squashY) {
            pbd::squashY(scene);
        }
        return scene;
    }
    pbd::Result<pbd::Scene> made = pbd::makeAnyScene(o.scene);
    if (!made) {
        if (o.scene.find_first_of("./") != std::string::npos) {
            // A mesh file has no constraints until it is prepared.
            std::fprintf(stderr,
                         "pbdlab-cli: '%s' looks like a mesh file; prepare it first "
                         "('pbdlab-cli prepare %s --tet --constraints -o project.json') and "
                         "simulate the project\n",
                         o.scene.c_str(), o.scene.c_str());
        } else {
            std::fprintf(stderr, "pbdlab-cli: %s\n", made.error().c_str());
        }
        return std::nullopt;
    }
    pbd::Scene scene = std::move(made).value();
    applyRunOptions(o, scene.solver);
    if (!applyGroupEdits(o, scene)) {
        return std::nullopt;
    }
    if (o.squashY) {
        pbd::squashY(scene);
    }
    return scene;
}

int simulate(const std::vector<std::string_view>& args) {
    RunOptions o;
    if (const std::string e = parseRunOptions("simulate", args, true, o); !e.empty()) {
        return usageError(e);
    }
    std::optional<pbd::Scene> made = sceneToRun(o);
    if (!made) {
        return 1;
    }
    pbd::Scene& scene = *made;
    const int steps = o.steps > 0 ? o.steps : 100;
    const pbd::RestFrames rest = pbd::captureRestFrames(scene);
    pbd::Solver solver(scene);
    double totalMs = 0;
    for (int i = 0; i < steps; ++i) {
        solver.step();
        totalMs += solver.lastStepMilliseconds();
    }
    if (const std::string d = divergence(scene); !d.empty()) {
        std::fprintf(stderr, "pbdlab-cli: %s\n", d.c_str());
        return 1;
    }
    const pbd::ElementFields fields = pbd::computeElementFields(scene, rest);
    json constraints = json::array();
    for (const pbd::ConstraintResiduals& r : pbd::computeConstraintResiduals(scene)) {
        if (r.residual.empty()) {
            continue;
        }
        constraints.push_back({{"type", std::string(pbd::toString(r.type))},
                               {"components", r.components},
                               {"count", r.residual.size() / r.components},
                               {"max_abs_residual", r.maxAbsResidual()},
                               {"residual", r.residual},
                               {"lambda", r.lambda}});
    }
    json positions = json::array();
    for (const pbd::Vec3& p : scene.particles.positions) {
        positions.push_back({p.x(), p.y(), p.z()});
    }
    // Bodies with their triangles as they are now: tearing changes both.
    json bodies = json::array();
    for (const pbd::Body& body : scene.bodies) {
        json triangles = json::array();
        for (const pbd::Triangle& t : body.triangles) {
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
    if (!scene.air.empty()) {
        const pbd::AirStatistics& a = solver.airStatistics();
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
        std::cout << result.dump() << '\n';
        return 0;
    }
    std::ofstream file(o.out);
    file << result.dump() << '\n';
    file.close();
    if (!file) {
        std::fprintf(stderr, "pbdlab-cli: could not write '%s'\n", o.out.c_str());
        return 1;
    }
    std::fprintf(stderr, "%s: %d steps (%.3f s simulated) written to %s\n", scene.name.c_str(),
                 steps, solver.time(), o.out.c_str());
    return 0;
}

int bench(const std::vector<std::string_view>& args) {
    RunOptions o;
    if (const std::string e = parseRunOptions("bench", args, false, o); !e.empty()) {
        return usageError(e);
    }
    std::optional<pbd::Scene> made = sceneToRun(o);
    if (!made) {
        return 1;
    }
    pbd::Scene& scene = *made;
    if (o.threads < 0) {
        scene.solver.threads = 1;
    }
    const int steps = o.steps > 0 ? o.steps : 200;
    pbd::Solver solver(scene);
    const int warmup = std::min(20, steps);
    for (int i = 0; i < warmup; ++i) {
        solver.step();
    }
    std::vector<double> ms;
    double detectionMs = 0, rigidSolveMs = 0;
    std::size_t manifoldsMade = 0, manifoldsRefreshed = 0, shapesReproxied = 0;
    const std::size_t passesBefore = solver.airOptimizationPasses();
    const double passMsBefore = solver.airOptimizationMilliseconds();
    std::size_t changes = 0;
    for (int i = 0; i < steps; ++i) {
        solver.step();
        ms.push_back(solver.lastStepMilliseconds());
        changes += solver.airOptimization().changes();
        detectionMs += solver.rigid().statistics().detectionMilliseconds;
        manifoldsMade += solver.rigid().statistics().manifolds;
        manifoldsRefreshed += solver.rigid().statistics().refreshedManifolds;
        shapesReproxied += solver.rigid().statistics().reproxied;
        rigidSolveMs += solver.rigid().statistics().solveMilliseconds;
    }
    const std::size_t passes = solver.airOptimizationPasses() - passesBefore;
    const double passMs = solver.airOptimizationMilliseconds() - passMsBefore;
    if (const std::string d = divergence(scene); !d.empty()) {
        std::fprintf(stderr, "pbdlab-cli: %s\n", d.c_str());
        return 1;
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
    for (const pbd::KernelCost& k : solver.measureKernels(20)) {
        perType[std::string(pbd::toString(k.type))] = k.nanosecondsPerProjection;
        counts[std::string(pbd::toString(k.type))] = k.projections / 20;
    }
    json full = {{"scene", scene.name},
                 {"threads", scene.solver.threads},
                 {"steps", steps},
                 {"substeps", scene.solver.substeps},
                 {"iterations", scene.solver.iterations},
                 {"method", std::string(pbd::toString(scene.solver.method))},
                 {"particles", scene.particles.size()},
                 {"colours", scene.constraints.colourCount},
                 {"constraints", counts},
                 {"ms_per_step", median},
                 {"ms_per_step_min", sorted.front()},
                 {"ms_per_step_mean", mean},
                 {"ns_per_projection", perType}};
    if (!scene.rigidBodies.empty()) {
        const pbd::RigidStatistics& st = solver.rigid().statistics();
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
        for (const pbd::RigidBody& b : scene.rigidBodies) {
            shapes += b.shapes.size();
        }
        full["rigid_reproxied_share"] =
            shapes > 0 ? double(shapesReproxied) / (double(shapes) * steps) : 0.0;
        full["rigid_awake"] = st.awakeBodies;
        full["rigid_sleeping"] = st.sleepingBodies;
        // Per substep, averaged over the timed steps.
        const double substeps = double(steps) * std::max(1, scene.solver.substeps);
        full["ms_rigid_detection"] = detectionMs / substeps;
        full["ms_rigid_solve"] = rigidSolveMs / substeps;
        full["rigid_settings"] = rigidSettingsJson(scene.solver.rigid);
    }
    if (!scene.air.empty()) {
        full["air_tets"] = scene.air.tets.size();
        full["air_triangles"] = scene.air.triangles.size();
        full["ns_per_air_projection"] = solver.measureAirCheck(50);
        full["air_optimisation_interval"] = scene.solver.airOptimizationInterval;
        full["optimisation_passes"] = passes;
        full["optimisation_changes"] = changes;
        if (passes > 0) {
            full["ms_per_optimisation_pass"] = passMs / double(passes);
        } else {
            // Optimisation off in the run: time a pass on a copy of the final state, after one
            // pass that builds the adjacency (the run's passes keep theirs between passes).
            pbd::Scene copy = scene;
            pbd::AirOptimizer optimizer;
            pbd::AirOptimizationOptions options;
            options.qualityThreshold = scene.solver.airQualityThreshold;
            optimizer.optimize(copy, options);
            full["ms_per_optimisation_pass"] = optimizer.optimize(copy, options).milliseconds;
            full["optimisation_measured_on_copy"] = true;
        }
    }
    if (o.json) {
        std::cout << full.dump(2) << '\n';
        return 0;
    }
    std::printf("%s: %d steps, %d substep(s) x %d iterations, %d thread(s)\n", scene.name.c_str(),
                steps, scene.solver.substeps, scene.solver.iterations, scene.solver.threads);
    std::printf("  ms per step: median %.3f, min %.3f, mean %.3f\n", median, sorted.front(), mean);
    for (auto it = perType.begin(); it != perType.end(); ++it) {
        std::printf("  %-16s %8zu elements  %7.1f ns per projection\n", it.key().c_str(),
                    counts[it.key()].get<std::size_t>(), it.value().get<double>());
    }
    if (full.contains("rigid_bodies")) {
        std::printf("  rigid: %zu bodies (%zu awake), %zu contact points, %zu rows; per substep "
                    "%.3f ms detection, %.3f ms solve\n",
                    scene.rigidBodies.size(), full["rigid_awake"].get<std::size_t>(),
                    full["rigid_contacts"].get<std::size_t>(),
                    full["rigid_rows"].get<std::size_t>(), full["ms_rigid_detection"].get<double>(),
                    full["ms_rigid_solve"].get<double>());
    }
    if (full.contains("air_tets")) {
        std::printf("  %-16s %8zu elements  %7.2f ns per check\n", "air", scene.air.size(),
                    full["ns_per_air_projection"].get<double>());
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

const char* severityName(pbd::ReportSeverity s) {
    switch (s) {
    case pbd::ReportSeverity::Info:
        return "info";
    case pbd::ReportSeverity::Warning:
        return "warning";
    case pbd::ReportSeverity::Error:
        return "error";
    }
    return "";
}

int prepare(const std::vector<std::string_view>& args) {
    pbd::PrepareOptions options;
    std::vector<std::filesystem::path> files;
    std::string project, asset, vtu, msh, tetgen, reportPath;
    bool quiet = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view a = args[i];
        const std::string name(a);
        auto value = [&]() -> std::string {
            return i + 1 < args.size() ? std::string(args[++i]) : "";
        };
        auto number = [&](double& target, bool allowZero) -> std::string {
            const std::string v = value();
            if (!parseNumber(std::string_view(v), target) || !std::isfinite(target) || target < 0 ||
                (!allowZero && target == 0)) {
                return "prepare: " + name + " needs a " +
                       (allowZero ? "non-negative" : "positive") + " number, not '" + v + "'";
            }
            return "";
        };
        auto path = [&](std::string& target) -> std::string {
            target = value();
            return target.empty() ? "prepare: " + name + " needs a file name" : "";
        };
        std::string error;
        if (a == "--tet") {
            options.tetrahedralize = true;
        } else if (a == "--air") {
            options.air = true;
        } else if (a == "--frames") {
            const std::string v = value();
            if (v != "uv") {
                error = "prepare: --frames takes 'uv', not '" + v + "'";
            }
            options.frames = true;
        } else if (a == "--tet-frames") {
            const std::string v = value();
            if (v == "global") {
                options.tetFrames = pbd::TetFrameMode::Global;
            } else if (v == "surface") {
                options.tetFrames = pbd::TetFrameMode::NearestSurface;
            } else {
                error = "prepare: --tet-frames is global or surface, not '" + v + "'";
            }
            options.frames = true;
        } else if (a == "--quality") {
            error = number(options.tet.radiusEdgeRatio, true);
            if (error.empty() && options.tet.radiusEdgeRatio > 0 &&
                options.tet.radiusEdgeRatio < 1) {
                error = "prepare: --quality is a radius-edge ratio of at least 1 (or 0 for none)";
            }
        } else if (a == "--max-volume") {
            error = number(options.tet.maxVolume, false);
        } else if (a == "--air-margin") {
            error = number(options.airOptions.margin, false);
        } else if (a == "--air-subdivisions") {
            double n = 0;
            error = number(n, false);
            options.airOptions.boxSubdivisions = int(n);
        } else if (a == "--air-quality") {
            error = number(options.airOptions.radiusEdgeRatio, true);
        } else if (a == "--local-air") {
            error = number(options.airOptions.localDistance, false);
        } else if (a == "--local-air-bodies") {
            std::string list = value();
            std::size_t start = 0;
            while (start <= list.size()) {
                const std::size_t comma = std::min(list.find(',', start), list.size());
                if (comma > start) {
                    options.airOptions.localBodies.push_back(list.substr(start, comma - start));
                }
                start = comma + 1;
            }
        } else if (a == "--scale") {
            error = number(options.import.scale, false);
        } else if (a == "--no-repair") {
            options.repair = false;
        } else if (a == "--constraints") {
            options.defaultConstraints = true;
        } else if (a == "--rigid") {
            options.rigidHulls = true;
        } else if (a == "--ground") {
            options.rigidGround = true;
        } else if (a == "--density") {
            error = number(options.density, false);
        } else if (a == "--areal-density") {
            error = number(options.arealDensity, false);
        } else if (a == "--timeout") {
            double t = 0;
            error = number(t, false);
            options.tet.timeoutSeconds = options.airOptions.timeoutSeconds = t;
        } else if (a == "-o" || a == "--out") {
            error = path(project);
        } else if (a == "--asset") {
            error = path(asset);
        } else if (a == "--vtu") {
            error = path(vtu);
        } else if (a == "--msh") {
            error = path(msh);
        } else if (a == "--tetgen") {
            error = path(tetgen);
        } else if (a == "--report") {
            error = path(reportPath);
        } else if (a == "--quiet") {
            quiet = true;
        } else if (a.starts_with("-")) {
            error = "prepare: unknown option '" + name + "'";
        } else {
            files.emplace_back(name);
        }
        if (!error.empty()) {
            return usageError(error);
        }
    }
    if (files.empty()) {
        return usageError("prepare: name at least one mesh file");
    }
    int lastPercent = -1;
    const pbd::ProgressCallback progress = [&](double f, const std::string& stage) {
        if (!quiet && f >= 0 && int(f * 100) != lastPercent) {
            lastPercent = int(f * 100);
            std::fprintf(stderr, "[%3d%%] %s\n", lastPercent, stage.c_str());
        }
        return true;
    };
    pbd::PrepareResult result = pbd::prepareFiles(files, options, progress);
    for (const pbd::ReportLine& l : result.report.lines) {
        if (l.severity == pbd::ReportSeverity::Error && l.text == result.report.error) {
            continue; // said once below
        }
        if (!quiet || l.severity != pbd::ReportSeverity::Info) {
            std::fprintf(stderr, "%s: %s\n", severityName(l.severity), l.text.c_str());
        }
    }
    auto write = [&](const std::string& target, auto&& writer) {
        if (target.empty() || !result.report.ok()) {
            return true;
        }
        pbd::Result<bool> ok = writer(target);
        if (!ok) {
            std::fprintf(stderr, "pbdlab-cli: %s\n", ok.error().c_str());
            result.report.error = ok.error();
            return false;
        }
        return true;
    };
    const auto started = std::chrono::steady_clock::now();
    write(project, [&](const std::string& f) { return pbd::saveProject(result.scene, f); });
    write(asset, [&](const std::string& f) { return pbd::exportCookedAsset(result.scene, f); });
    write(vtu, [&](const std::string& f) { return pbd::exportVtu(result.scene, f); });
    write(msh, [&](const std::string& f) { return pbd::exportMsh(result.scene, f); });
    write(tetgen, [&](const std::string& f) { return pbd::exportTetgen(result.scene, f); });
    result.report.timings.emplace_back(
        "export",
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    if (!reportPath.empty()) {
        const pbd::Result<bool> ok =
            pbd::writeFileAtomically(reportPath, result.report.toJson(2) + "\n");
        if (!ok) {
            std::fprintf(stderr, "pbdlab-cli: %s\n", ok.error().c_str());
            return 1;
        }
    }
    if (!result.report.ok()) {
        std::fprintf(stderr, "pbdlab-cli: prepare failed: %s\n", result.report.error.c_str());
        return 1;
    }
    return 0;
}

int exportCommand(const std::vector<std::string_view>& args) {
    std::string input, project, asset, vtu, msh, tetgen;
    int indent = -1;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string name(args[i]);
        auto path = [&](std::string& target) -> std::string {
            target = i + 1 < args.size() ? std::string(args[++i]) : "";
            return target.empty() ? "export: " + name + " needs a file name" : "";
        };
        std::string error;
        if (name == "-o" || name == "--out" || name == "--project") {
            error = path(project);
        } else if (name == "--asset") {
            error = path(asset);
        } else if (name == "--vtu") {
            error = path(vtu);
        } else if (name == "--msh") {
            error = path(msh);
        } else if (name == "--tetgen") {
            error = path(tetgen);
        } else if (name == "--indent") {
            std::string v;
            error = path(v);
            double n = 0;
            if (error.empty() &&
                (!parseNumber(std::string_view(v), n) || n < 0 || n > 8 || n != std::floor(n))) {
                error = "export: --indent takes 0 to 8 spaces, not '" + v + "'";
            }
            indent = int(n);
        } else if (name.starts_with("-")) {
            error = "export: unknown option '" + name + "'";
        } else if (input.empty()) {
            input = name;
        } else {
            error = "export: one scene at a time ('" + input + "', then '" + name + "')";
        }
        if (!error.empty()) {
            return usageError(error);
        }
    }
    if (input.empty()) {
        return usageError("export: name a generated scene, a project or a cooked asset");
    }
    if (project.empty() && asset.empty() && vtu.empty() && msh.empty() && tetgen.empty()) {
        return usageError("export: name an output (-o, --asset, --vtu, --msh or --tetgen)");
    }
    pbd::Result<pbd::Scene> loaded =
        input.ends_with(".json") ? pbd::loadSceneFile(input) : pbd::makeAnyScene(input);
    if (!loaded) {
        std::fprintf(stderr, "pbdlab-cli: %s\n", loaded.error().c_str());
        return 1;
    }
    const pbd::Scene& scene = loaded.value();
    bool ok = true;
    auto write = [&](const std::string& target, auto&& writer) {
        if (target.empty() || !ok) {
            return;
        }
        const pbd::Result<bool> written = writer(target);
        if (!written) {
            std::fprintf(stderr, "pbdlab-cli: %s\n", written.error().c_str());
            ok = false;
        }
    };
    write(project, [&](const std::string& f) {
        return pbd::writeFileAtomically(f, pbd::projectToJson(scene, indent < 0 ? 1 : indent));
    });
    write(asset, [&](const std::string& f) { return pbd::exportCookedAsset(scene, f, indent); });
    write(vtu, [&](const std::string& f) { return pbd::exportVtu(scene, f); });
    write(msh, [&](const std::string& f) { return pbd::exportMsh(scene, f); });
    write(tetgen, [&](const std::string& f) { return pbd::exportTetgen(scene, f); });
    return ok ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string_view> args(argv + 1, argv + argc);
    if (args.empty()) {
        std::fputs(kUsage, stderr);
        return 2;
    }
    const std::string_view command = args.front();
    const std::vector<std::string_view> rest(args.begin() + 1, args.end());
    if (command == "-h" || command == "--help" || command == "help") {
        std::fputs(kUsage, stdout);
        return 0;
    }
    if (command == "-v" || command == "--version") {
        std::cout << "pbdlab-cli " << pbd::kVersion << '\n';
        for (const pbd::LibraryVersion& v : pbd::meshingLibraryVersions()) {
            std::cout << "  " << v.name << ' ' << v.version << '\n';
        }
        return 0;
    }
    if (command == "scenes") {
        return listScenes(rest);
    }
    if (command == "info") {
        return info(rest);
    }
    if (command == "prepare") {
        return prepare(rest);
    }
    if (command == "export") {
        return exportCommand(rest);
    }
    if (command == "simulate") {
        return simulate(rest);
    }
    if (command == "bench") {
        return bench(rest);
    }
    return usageError("unknown command '" + std::string(command) + "'");
}
