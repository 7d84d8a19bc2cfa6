// pbdlab-cli export: a generated scene, a project or a cooked asset written as a project, a
// cooked asset (an engine's input), .vtu, .msh or TetGen files.

#include "meshing/Export.h"

#include "app/cli/Command.h"
#include "app/cli/SceneOutputs.h"
#include "meshing/AirScenes.h"
#include "meshing/ProjectFile.h"

namespace pbd::cli {

namespace {

struct ExportOptions {
    std::string input;
    SceneOutputs out;
    int indent = -1;
};

int exportScene(const ExportOptions& o) {
    if (!o.out.any()) {
        throw CLI::ValidationError("name an output (-o, --asset, --vtu, --msh or --tetgen)",
                                   CLI::ExitCodes::ValidationError);
    }
    if (checkOutputs(o.out.paths()) != kSuccess) {
        return kInputProblem;
    }
    Result<Scene> loaded =
        o.input.ends_with(".json") ? loadSceneFile(o.input) : makeAnyScene(o.input);
    if (!loaded) {
        return inputProblem(loaded.error());
    }
    if (const Result<bool> written = writeSceneOutputs(*loaded, o.out, o.indent); !written) {
        return inputProblem(written.error());
    }
    return kSuccess;
}

} // namespace

void addExportCommand(CLI::App& cli, int& status) {
    auto o = std::make_shared<ExportOptions>();
    auto* c = cli.add_subcommand(
        "export", "Write a generated scene, a project or a cooked asset as a project, a cooked "
                  "asset (an engine's input: particles, inverse masses, constraints by type with "
                  "rest data and compliance, coloured; material frames, air, colliders, rigid "
                  "bodies, solver settings), .vtu, .msh or TetGen files.");
    c->add_option("input", o->input, "A generated scene, a project or a cooked asset")
        ->required()
        ->type_name("SCENE|PROJECT|ASSET");
    addSceneOutputs(*c, o->out, ",--project");
    c->add_option("--indent", o->indent,
                  "Indent JSON by N spaces (0 to 8; default: compact "
                  "assets, projects by 1)")
        ->check(wholeWhere([](long v) { return v >= 0 && v <= 8; }, "0 to 8 spaces", "0..8"))
        ->type_name("N");
    c->callback([o, &status] { status = exportScene(*o); });
}

} // namespace pbd::cli
