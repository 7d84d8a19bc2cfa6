#pragma once
// The options `simulate` and `bench` share: the scene, the solver settings that override its
// own, constraint-group edits and added colliders; and the scene they name, ready to step.

#include "core/fields/Fields.h"
#include "core/scene/Scene.h"

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace pbd::cli {

struct RunOptions {
    std::string scene;
    int steps = -1;
    int substeps = -1;
    int iterations = -1;
    double dt = -1;
    int threads = -1;
    std::string method;
    std::string kernels; // the constraint sweeps' instruction set (core/solver/KernelPaths.h)
    std::string out;
    std::string trace;       // simulate: one CSV line per step
    std::string cacheFolder; // simulate: caches other tools read (meshing/CacheExport.h)
    int cacheEvery = 1;
    std::string cacheFormats = "pvd";
    int intersectionsEvery = 0; // simulate: count crossing triangles every K steps too
    bool json = false;
    bool squashY = false;
    int airOptimization = -1;
    int airIterations = -2; // -2: the scene's
    double airThreshold = -1;
    double airDistance = -1;
    double airFriction = -1;
    int rigidIterations = -1;
    int rigidSubsteps = -1;
    int rigidRelax = -1;
    double contactHertz = -1;
    std::string warmStart;               // on | off
    std::string separatePush;            // on | off
    std::string stabilisation;           // off | shock-propagation | weight-amplification
    std::string sleeping;                // on | off
    std::string exactAngularMomentum;    // on | off
    std::string continuousCollision;     // on | off
    std::string selfCollision;           // on | off
    std::optional<double> thickness;     // m
    std::string bendingModel;            // bridson | pbd-appendix | isometric
    std::vector<std::string> groups;     // NAME:KEY=VALUE,... (core editConstraintGroup)
    std::vector<std::string> colliders;  // SHAPE[:KEY=VALUE,...] (core colliderFromSpec)
    std::vector<std::string> characters; // FILE[,KEY=VALUE,...] (meshing addCharacterFromSpec)
    std::vector<std::string> skirts;     // KEY=VALUE,... (core addSkirtFromSpec)
};

// Adds the shared options to a subcommand (`simulate` also has --out and --squash-y, added by
// itself); -1 or "" means "the scene's own".
void addRunOptions(CLI::App& command, RunOptions& o);

// The solver settings the options set, over the scene's own.
void applyRunOptions(const RunOptions& o, SolverSettings& s);

// The generated scene, project or asset the options name, with their settings, group edits and
// colliders applied (and squashed with --squash-y); nothing, with the message on stderr, when it
// cannot be loaded or an edit cannot be made.
// `rest`, when given, gets the scene's rest frames for the fields before --squash-y flattens it
// (the squash is the experiment; the fields measure against the shape it started from).
std::optional<Scene> sceneToRun(const RunOptions& o, RestFrames* rest = nullptr);

} // namespace pbd::cli
