// pbdlab-cli: PBD Lab without a display, for scripts, batch preparation and benchmarks.

#include "core/Mass.h"
#include "core/SceneLibrary.h"
#include "core/Version.h"
#include "meshing/LibraryVersions.h"
#include "meshing/MeshImport.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace {

using nlohmann::json;

constexpr const char* kUsage = R"(Usage: pbdlab-cli [--help] [--version] COMMAND [ARGS]

Commands:
  scenes [--json]                  List the scenes PBD Lab generates itself.
  info SCENE|MESH [--json] [--scale S]
                                   Load a generated scene or import a mesh file (.obj, .ply,
                                   .stl, .off, .gltf, .glb) and report its bodies, element
                                   counts, size, mass and any problems found.

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
        for (const pbd::SceneInfo& info : pbd::sceneCatalogue()) {
            list.push_back({{"name", info.name}, {"description", info.description}});
        }
        std::cout << list.dump(2) << '\n';
    } else {
        for (const pbd::SceneInfo& info : pbd::sceneCatalogue()) {
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
    pbd::Result<pbd::Scene> generated = pbd::makeScene(input);
    if (generated) {
        scene = std::move(generated).value();
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
        for (const std::string& w : warnings) {
            std::cout << "warning: " << w << '\n';
        }
        for (const std::string& p : problems) {
            std::cout << "problem: " << p << '\n';
        }
    }
    return problems.empty() ? 0 : 1;
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
    return usageError("unknown command '" + std::string(command) + "'");
}
