#include "app/cli/RunOptions.h"

#include "app/cli/Command.h"
#include "core/constraints/ConstraintBuilders.h"
#include "core/scenes/Garments.h"
#include "core/solver/KernelPaths.h"
#include "meshing/AirScenes.h"
#include "meshing/CharacterImport.h"
#include "meshing/Prepare.h"
#include "meshing/ProjectFile.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

namespace pbd::cli {

void addRunOptions(CLI::App& c, RunOptions& o) {
    c.add_option("scene", o.scene,
                 "A generated scene (see 'pbdlab-cli scenes'), a project or a cooked asset (.json)")
        ->required()
        ->type_name("SCENE|PROJECT|ASSET");
    c.add_option("--steps", o.steps, "Steps to run")->check(positiveWhole())->type_name("N");
    c.add_option("--substeps", o.substeps, "Substeps per step")
        ->check(positiveWhole())
        ->type_name("S");
    c.add_option("--iterations", o.iterations, "Constraint sweeps per substep")
        ->check(positiveWhole())
        ->type_name("I");
    c.add_option("--dt", o.dt, "Time step of a step, seconds")
        ->check(positiveNumber("a positive time step in seconds"))
        ->type_name("T");
    c.add_option("--threads", o.threads, "Solver threads")->check(positiveWhole())->type_name("T");
    choice(c.add_option("--method", o.method, "XPBD (compliance) or classic PBD (stiffness)"),
           {"xpbd", "pbd"});
    {
        std::vector<std::string> paths = {"auto"};
        std::string names;
        for (std::string_view name : kernels::builtKernelPaths()) {
            paths.emplace_back(name);
            names += (names.empty() ? "" : ", ") + std::string(name);
        }
        choice(c.add_option("--kernels", o.kernels,
                            "The instruction set of the hot loops: auto (the fastest this CPU "
                            "runs) or one this build has (" +
                                names + ")"),
               paths);
    }
    c.add_option("--air-optimization", o.airOptimization,
                 "With air: an optimisation pass every K steps (0 = off)")
        ->check(wholeWhere([](long v) { return v >= 0; }, "a step interval (0 = off)", "INT>=0"))
        ->type_name("K");
    c.add_option("--air-iterations", o.airIterations,
                 "With air: projections per substep (-1 = as --iterations, 0 = the air off)")
        ->check(wholeWhere([](long v) { return v >= -1; }, "-1, 0 (off) or more", "INT>=-1"))
        ->type_name("N");
    c.add_option("--air-threshold", o.airThreshold, "Air tets of a quality below Q are improved")
        ->check(
            numberWhere([](double v) { return v > 0 && v <= 1; }, "a quality in (0, 1]", "(0,1]"))
        ->type_name("Q");
    c.add_option("--air-distance", o.airDistance,
                 "Bodies facing each other across the air keep D m apart")
        ->check(numberAtLeastZero())
        ->type_name("D");
    c.add_option("--air-friction", o.airFriction, "Friction between bodies in contact via air")
        ->check(numberAtLeastZero())
        ->type_name("MU");
    c.add_option("--rigid-iterations", o.rigidIterations, "Rigid bodies: PGS sweeps")
        ->check(positiveWhole())
        ->type_name("N");
    c.add_option("--rigid-substeps", o.rigidSubsteps,
                 "Rigid bodies: substeps on contacts detected once (the soft step)")
        ->check(positiveWhole())
        ->type_name("S");
    c.add_option("--rigid-relax", o.rigidRelax, "Rigid bodies: relax sweeps")
        ->check(wholeAtLeastZero())
        ->type_name("N");
    c.add_option("--contact-hertz", o.contactHertz,
                 "Rigid bodies: soft contacts of HZ hertz (0: rigid contacts)")
        ->check(numberWhere([](double v) { return v >= 0; }, "a frequency >= 0 (0: rigid contacts)",
                            "NUMBER>=0"))
        ->type_name("HZ");
    onOff(c.add_option("--warm-start", o.warmStart, "Rigid bodies: warm starting"));
    onOff(c.add_option("--separate-push", o.separatePush,
                       "Rigid bodies: the push out of penetrations kept out of the velocities"));
    onOff(c.add_option("--sleeping", o.sleeping, "Rigid bodies: islands at rest sleep"));
    choice(c.add_option("--stabilisation", o.stabilisation,
                        "Rigid bodies: what keeps stacks standing"),
           {"off", "shock-propagation", "weight-amplification"});
    onOff(c.add_option("--exact-angular-momentum", o.exactAngularMomentum,
                       "Project distances along their edges at the start of the substep (SHAKE)"));
    onOff(c.add_option("--continuous-collision", o.continuousCollision,
                       "Cloth and soft-body surfaces followed through each substep: particles "
                       "whose moves would make two of them cross move with what they would "
                       "cross (impact zones)"));
    onOff(c.add_option("--self-collision", o.selfCollision,
                       "Cloth and soft-body surfaces keep their thickness from each other"));
    c.add_option("--cloth-thickness", o.thickness,
                 "What self-collision keeps between surfaces, m (the scene's clothThickness)")
        ->check(CLI::PositiveNumber)
        ->type_name("M");
    c.add_option("--bending-model", o.bendingModel,
                 "Give every bending hinge this model, its rest shape from the positions the "
                 "scene starts from: bridson (signed dihedral angle, the default), pbd-appendix, "
                 "or isometric (Bergou et al.'s quadratic model: two thirds of the cost, for cloth "
                 "that stretches little; the same compliance per radian squared near flat)")
        ->check(CLI::IsMember({"bridson", "pbd-appendix", "isometric"}))
        ->type_name("MODEL");
    c.add_option("--group", o.groups,
                 "Edit a constraint group first (see 'info'): KEY is enabled (on|off), modulus or "
                 "compliance, a component (stretch_u, stretch_v, shear_uv, stretch_x..., a number "
                 "or 'rigid'), pbd or pbd_COMPONENT, rest_u, rest_v, rest_x..., pressure; e.g. "
                 "'cloth strain:stretch_v=50,rest_u=1.1'")
        ->check(CLI::Validator(
            [](std::string& s) -> std::string {
                return s.find(':') != std::string::npos && s.find('=') != std::string::npos
                           ? ""
                           : "needs NAME:KEY=VALUE[,KEY=VALUE...], not '" + s + "'";
            },
            ""))
        ->type_name("NAME:KEY=VALUE[,...]")
        ->allow_extra_args(false); // one value per --group; repeat the option for more
    c.add_option("--collider", o.colliders,
                 "Add a plane, sphere, box or capsule fitted under the bodies, then edited: KEY "
                 "is name, position, normal, radius, half_extents, rotation (degrees), a, b, "
                 "friction, restitution; vectors as 'x y z'; e.g. "
                 "'sphere:position=0 0.5 0,radius=0.3'; or mesh:file=PATH[,KEY=VALUE...]")
        ->type_name("SHAPE[:KEY=VALUE,...]")
        ->allow_extra_args(false);
    c.add_option("--character", o.characters,
                 "Add an animated character (glTF, FBX, Collada, DirectX .x, ...) as a moving "
                 "collider: the file, then clip (name, index or none), up (x, y, z, -x, -y, -z), "
                 "scale, position ('x y z'), start, speed (clip seconds per second), end (the "
                 "clip time it stops at), wrap (loop|clamp), subdivide (levels of Loop subdivision "
                 "of the skin for its collider, 0-3), friction; e.g. "
                 "'dancer.x,up=z,clip=0,position=0 0.9 0'")
        ->type_name("FILE[,KEY=VALUE,...]")
        ->allow_extra_args(false);
    c.add_option("--skirt", o.skirts,
                 "Fit a skirt of layers to a character (after --character), pinned at its waist: "
                 "character (index), layers, segments, rows, waist (height, m), length, gap, "
                 "flare (hem over waist radius), ease, density (kg/m^2), bending (compliance), pin "
                 "(the waistband's compliance, m/N; 0: hard); "
                 "e.g. 'layers=2,waist=1.0,length=0.45,gap=0.01' (step it in 2 substeps at "
                 "1/60 s, as the dancer scenes do)")
        ->type_name("KEY=VALUE,...")
        ->allow_extra_args(false);
}

void applyRunOptions(const RunOptions& o, SolverSettings& s) {
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
    if (o.airIterations >= -1) {
        s.airIterations = o.airIterations;
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
        s.method = o.method == "pbd" ? SolverMethod::Pbd : SolverMethod::Xpbd;
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
    if (!o.selfCollision.empty()) {
        s.selfCollision = o.selfCollision == "on";
    }
    if (o.thickness) {
        s.clothThickness = *o.thickness;
    }
    if (!o.continuousCollision.empty()) {
        s.continuousCollision = o.continuousCollision == "on";
    }
    if (!o.stabilisation.empty()) {
        s.rigid.stabilisation = o.stabilisation == "off" ? StackStabilisation::Off
                                : o.stabilisation == "shock-propagation"
                                    ? StackStabilisation::ShockPropagation
                                    : StackStabilisation::WeightAmplification;
    }
}

namespace {

// The --group edits and --collider additions on `scene`; false (with the message on stderr)
// when one cannot be made.
bool applyEdits(const RunOptions& o, Scene& scene) {
    for (const std::string& spec : o.groups) {
        if (const Result<int> edited = editConstraintGroup(scene, spec); !edited) {
            inputProblem("--group " + spec + ": " + edited.error());
            return false;
        }
    }
    for (const std::string& spec : o.colliders) {
        Result<Collider> c = colliderFromCommandSpec(spec, scene.bounds());
        if (!c) {
            inputProblem("--collider " + spec + ": " + c.error());
            return false;
        }
        scene.colliders.push_back(std::move(c).value());
    }
    for (const std::string& spec : o.characters) {
        std::vector<std::string> warnings;
        if (Result<int> added = addCharacterFromSpec(scene, spec, {}, &warnings); !added) {
            inputProblem("--character " + spec + ": " + added.error());
            return false;
        }
        for (const std::string& w : warnings) {
            std::cerr << "pbdlab-cli: --character " << spec << ": " << w << '\n';
        }
    }
    for (const std::string& spec : o.skirts) {
        if (Result<std::size_t> added = addSkirtFromSpec(scene, spec); !added) {
            inputProblem("--skirt " + spec + ": " + added.error());
            return false;
        }
    }
    if (!o.bendingModel.empty()) {
        // Last: the skirts' hinges too. The scene's positions now are its rest state, as
        // `prepare` and the builders take them.
        if (scene.constraints.bending.size() == 0) {
            inputProblem("--bending-model " + o.bendingModel + ": '" + o.scene +
                         "' has no bending constraints");
            return false;
        }
        setBendingModel(scene.constraints, scene.particles.positions,
                        *bendingModelFromString(o.bendingModel));
    }
    return true;
}

} // namespace

std::optional<Scene> sceneToRun(const RunOptions& o, RestFrames* rest) {
    Result<Scene> made =
        o.scene.ends_with(".json") ? loadSceneFile(o.scene) : makeAnyScene(o.scene);
    if (!made) {
        const bool path = o.scene.find_first_of("./") != std::string::npos;
        std::error_code unreadable; // a folder that cannot be read: the loader's own message
        if (path && !std::filesystem::exists(o.scene, unreadable) && !unreadable) {
            // A path, not a scene's name: say so rather than what a mesh would need.
            inputProblem("'" + o.scene +
                         "': no such file (and no generated scene of that name; 'pbdlab-cli "
                         "scenes' lists them)");
        } else if (path && !o.scene.ends_with(".json")) {
            // A mesh file has no constraints until it is prepared.
            inputProblem(
                "'" + o.scene + "' looks like a mesh file; prepare it first ('pbdlab-cli prepare " +
                o.scene + " --tet --constraints -o project.json') and simulate the project");
        } else {
            inputProblem(made.error());
        }
        return std::nullopt;
    }
    Scene scene = std::move(made).value();
    if (!o.kernels.empty() && !kernels::selectKernelPath(o.kernels)) {
        inputProblem("--kernels " + o.kernels + ": this CPU cannot run them (it runs " +
                     kernels::kernelPathNames() + ")");
        return std::nullopt;
    }
    applyRunOptions(o, scene.solver);
    if (!applyEdits(o, scene)) {
        return std::nullopt;
    }
    // What the solver cannot step (a NaN, a zero mass, a negative compliance, a degenerate
    // tet) is refused before the first step, naming the body and element. (The squash below is
    // an experiment on purpose.)
    if (const std::vector<std::string> problems = validateScene(scene); !problems.empty()) {
        inputProblem("cannot simulate '" + o.scene + "': " + problems.front());
        return std::nullopt;
    }
    if (rest != nullptr) {
        *rest = captureRestFrames(scene);
    }
    if (o.squashY) {
        squashY(scene);
    }
    return scene;
}

} // namespace pbd::cli
