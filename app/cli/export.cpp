// pbdlab-cli export: a generated scene, a project or a cooked asset written as a project, a
// cooked asset (an engine's input), .vtu, .msh or TetGen files.

#include "meshing/Export.h"

#include "app/cli/Command.h"
#include "meshing/AirScenes.h"
#include "meshing/CookedAsset.h"
#include "meshing/ProjectFile.h"

namespace pbd::cli {

namespace {

struct ExportOptions {
    std::string input, project, asset, vtu, msh, tetgen;
    int indent = -1;
};

int exportScene(const ExportOptions& o) {
    if (o.project.empty() && o.asset.empty() && o.vtu.empty() && o.msh.empty() &&
        o.tetgen.empty()) {
        throw CLI::ValidationError("name an output (-o, --asset, --vtu, --msh or --tetgen)",
                                   CLI::ExitCodes::ValidationError);
    }
    if (checkOutputs({o.project, o.asset, o.vtu, o.msh, o.tetgen}) != kSuccess) {
        return kInputProblem;
    }
    Result<Scene> loaded =
        o.input.ends_with(".json") ? loadSceneFile(o.input) : makeAnyScene(o.input);
    if (!loaded) {
        return inputProblem(loaded.error());
    }
    const Scene& scene = loaded.value();
    bool ok = true;
    auto write = [&](const std::string& target, auto&& writer) {
        if (target.empty() || !ok) {
            return;
        }
        if (const Result<bool> written = writer(target); !written) {
            inputProblem(written.error());
            ok = false;
        }
    };
    const int indent = o.indent;
    write(o.project, [&](const std::string& f) {
        return writeFileAtomically(f, projectToJson(scene, indent < 0 ? 1 : indent));
    });
    write(o.asset, [&](const std::string& f) { return exportCookedAsset(scene, f, indent); });
    write(o.vtu, [&](const std::string& f) { return exportVtu(scene, f); });
    write(o.msh, [&](const std::string& f) { return exportMsh(scene, f); });
    write(o.tetgen, [&](const std::string& f) { return exportTetgen(scene, f); });
    return ok ? kSuccess : kInputProblem;
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
    c->add_option("-o,--out,--project", o->project, "Write a project")

        ->type_name("PROJECT.json");
    c->add_option("--asset", o->asset, "Write a cooked asset")

        ->type_name("FILE");
    c->add_option("--vtu", o->vtu, "Write a VTK unstructured grid")

        ->type_name("FILE");
    c->add_option("--msh", o->msh, "Write a Gmsh 4.1 mesh")->type_name("FILE");
    c->add_option("--tetgen", o->tetgen, "Write TetGen .node/.ele/.face")

        ->type_name("PREFIX");
    c->add_option("--indent", o->indent,
                  "Indent JSON by N spaces (0 to 8; default: compact "
                  "assets, projects by 1)")
        ->check(wholeWhere([](long v) { return v >= 0 && v <= 8; }, "0 to 8 spaces", "0..8"))
        ->type_name("N");
    c->callback([o, &status] { status = exportScene(*o); });
}

} // namespace pbd::cli
