// pbdlab-cli info: what a generated scene, a project, a cooked asset or a mesh file holds, and
// any problems found in it.

#include "app/cli/Command.h"
#include "app/cli/ReportJson.h"
#include "core/scene/Mass.h"
#include "meshing/AirScenes.h"
#include "meshing/MeshImport.h"
#include "meshing/ProjectFile.h"
#include "meshing/SceneJson.h"

#include <iostream>

namespace pbd::cli {

namespace {

struct InfoOptions {
    std::string input;
    bool json = false;
    ImportOptions import;
};

int info(const InfoOptions& o) {
    const std::string& input = o.input;
    Scene scene;
    std::vector<std::string> warnings;
    Result<Scene> generated = input.ends_with(".json") ? loadSceneFile(input) : makeAnyScene(input);
    if (generated) {
        scene = std::move(generated).value();
    } else if (input.ends_with(".json") ||
               (input.find('.') == std::string::npos && input.find('/') == std::string::npos)) {
        return inputProblem(generated.error());
    } else {
        Result<ImportedMesh> imported = importMesh(input, o.import);
        if (!imported) {
            return inputProblem(imported.error());
        }
        scene = std::move(imported->scene);
        warnings = std::move(imported->warnings);
    }
    const std::vector<std::string> problems = validateScene(scene);

    json bodies = json::array();
    for (const Body& body : scene.bodies) {
        bodies.push_back({{"name", body.name},
                          {"kind", std::string(toString(body.kind))},
                          {"particles", body.particleCount},
                          {"triangles", body.triangles.size()},
                          {"tetrahedra", body.tets.size()},
                          {"uvs", body.hasUVs()},
                          {"mass", totalMass(scene.particles, body)},
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
                         {"bending_model", std::string(toString(scene.constraints.bending.model))},
                         {"colliders", collidersJson(scene)},
                         {"warnings", warnings},
                         {"problems", problems}};
    if (o.json) {
        std::cout << sceneio::dumpJson(report, 2) << '\n';
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
                      << (g["type"] == "dihedral"
                              ? " (" + report["bending_model"].get<std::string>() + ")"
                              : std::string())
                      << (g["enabled"].get<bool>() ? "" : " (off)") << ", "
                      << g["unit"].get<std::string>() << " " << sceneio::dumpJson(g["material"])
                      << '\n';
        }
        for (const std::string& w : warnings) {
            std::cout << "warning: " << w << '\n';
        }
        for (const std::string& p : problems) {
            std::cout << "problem: " << p << '\n';
        }
    }
    return problems.empty() ? kSuccess : kInputProblem;
}

} // namespace

void addInfoCommand(CLI::App& cli, int& status) {
    auto o = std::make_shared<InfoOptions>();
    auto* c = cli.add_subcommand(
        "info", "Load a generated scene or a project, or import a mesh file (.obj, .ply, .stl, "
                ".off, .gltf, .glb), and report its bodies, element counts, size, mass, "
                "constraint groups and any problems found (exit 1 when there are problems).");
    c->add_option("input", o->input, "A generated scene, a project, a cooked asset or a mesh file")
        ->required()
        ->type_name("SCENE|MESH|PROJECT|ASSET");
    c->add_flag("--json", o->json, "The report as JSON");
    c->add_flag("--merge-shells", o->import.mergeShells,
                "Keep a part's separate shells in one body (default: a body per shell)");
    c->add_option("--scale", o->import.scale, "Scale a mesh file's coordinates by S")
        ->check(positiveNumber())
        ->type_name("S");
    c->callback([o, &status] { status = info(*o); });
}

} // namespace pbd::cli
