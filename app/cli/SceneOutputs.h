#pragma once
// The files `prepare` and `export` write a scene to: a project, a cooked asset, .vtu, .msh and
// TetGen files. One set of options, checked before any work and written in one order.

#include "core/base/Result.h"
#include "core/scene/Scene.h"

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace pbd::cli {

struct SceneOutputs {
    std::string project, asset, vtu, msh, tetgen;

    bool any() const;
    std::vector<std::string> paths() const; // the named ones and the empty ones
};

// -o/--out (and `extraProjectNames`, e.g. ",--project"), --asset, --vtu, --msh, --tetgen.
void addSceneOutputs(CLI::App& command, SceneOutputs& outputs,
                     const std::string& extraProjectNames = "");

// Writes every output named; the first failure's message, after which nothing more is written.
// indent: JSON indentation of the project (default 1) and the asset (default compact).
Result<bool> writeSceneOutputs(const Scene& scene, const SceneOutputs& outputs, int indent = -1);

} // namespace pbd::cli
