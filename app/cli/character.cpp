// pbdlab-cli character: what an animated character file holds (its skeleton, skinned meshes
// and clips) and where its skin goes over the chosen clip, read as `simulate --character` reads
// it.

#include "app/cli/Command.h"
#include "meshing/CharacterImport.h"
#include "meshing/SceneJson.h"

#include <iostream>
#include <nlohmann/json.hpp>

namespace pbd::cli {

namespace {

struct CharacterOptions {
    std::string spec;
    bool json = false;
    double sample = 0.05; // s between the poses the extent and the skin's speed are taken at
};

int character(const CharacterOptions& o) {
    Scene scene;
    std::vector<std::string> warnings;
    Result<int> added = addCharacterFromSpec(scene, o.spec, {}, &warnings);
    if (!added) {
        return inputProblem(added.error());
    }
    const Character& c = scene.characters[std::size_t(*added)];
    nlohmann::json meshes = nlohmann::json::array();
    std::size_t bones = 0;
    for (const CharacterMesh& m : c.meshes) {
        bones += m.bones.size();
        meshes.push_back({{"name", m.name},
                          {"node", c.nodes[std::size_t(m.node)].name},
                          {"vertices", m.vertices.size()},
                          {"triangles", m.triangles.size()},
                          {"bones", m.bones.size()}});
    }
    nlohmann::json clips = nlohmann::json::array();
    for (const AnimationClip& clip : c.clips) {
        clips.push_back(
            {{"name", clip.name}, {"duration", clip.duration}, {"tracks", clip.tracks.size()}});
    }
    // Over the clip played (one pass), sampled: where the skin reaches and how fast it moves.
    const Real duration =
        c.clip >= 0 ? c.clips[std::size_t(c.clip)].duration / std::max(std::abs(c.speed), 1e-9) : 0;
    Bounds rest, reach;
    Real fastest = 0;
    std::vector<Vec3> previous;
    std::vector<Affine3> scratch;
    std::vector<Vec3> skin;
    for (Real t = 0; t <= duration + 1e-9; t += o.sample) {
        skinCharacter(c, t, skin, scratch);
        for (std::size_t i = 0; i < skin.size(); ++i) {
            (t == 0 ? rest : reach).add(skin[i]);
            if (!previous.empty()) {
                fastest = std::max(fastest, (skin[i] - previous[i]).norm() / o.sample);
            }
        }
        previous = skin;
        if (duration == 0) {
            break;
        }
    }
    reach.add(rest);
    const auto box = [](const Bounds& b) {
        return nlohmann::json{{"min", sceneio::vec(b.min)}, {"max", sceneio::vec(b.max)}};
    };
    const nlohmann::json report = {{"name", c.name},
                                   {"file", c.source},
                                   {"nodes", c.nodes.size()},
                                   {"bones", bones},
                                   {"vertices", c.vertexCount()},
                                   {"triangles", c.triangleCount()},
                                   {"subdivisions", c.subdivisions},
                                   {"meshes", meshes},
                                   {"clips", clips},
                                   {"clip", c.clip >= 0
                                                ? nlohmann::json(c.clips[std::size_t(c.clip)].name)
                                                : nlohmann::json()},
                                   {"bounds_at_start", box(rest)},
                                   {"bounds_over_clip", box(reach)},
                                   {"fastest_skin_speed", fastest},
                                   {"warnings", warnings}};
    if (o.json) {
        std::cout << sceneio::dumpJson(report, 2) << '\n';
        return kSuccess;
    }
    std::cout << describeCharacter(c) << '\n';
    for (const CharacterMesh& m : c.meshes) {
        std::cout << "  mesh '" << m.name << "': " << m.vertices.size() << " vertices, "
                  << m.triangles.size() << " triangles, " << m.bones.size() << " bones\n";
    }
    const Vec3 size = rest.size();
    std::cout << "  at the start: " << size.x() << " x " << size.y() << " x " << size.z()
              << " m; the skin moves at up to " << fastest << " m/s over the clip\n";
    for (const std::string& w : warnings) {
        std::cout << "  warning: " << w << '\n';
    }
    return kSuccess;
}

} // namespace

void addCharacterCommand(CLI::App& cli, int& status) {
    auto o = std::make_shared<CharacterOptions>();
    auto* c = cli.add_subcommand(
        "character", "Show an animated character's skeleton, meshes and clips (glTF, FBX, "
                     "Collada, DirectX .x, ...), as simulate --character reads it.");
    c->add_option("file", o->spec,
                  "FILE[,KEY=VALUE...]: the file, then clip (name, index or none), up (x, y, z, "
                  "-x, -y, -z), scale, position ('x y z'), start, speed, end, wrap (loop|clamp), "
                  "friction")
        ->required();
    c->add_flag("--json", o->json, "Write the report as JSON");
    c->add_option("--sample", o->sample, "Seconds between the poses the report samples")
        ->check(positiveNumber());
    c->callback([o, &status] { status = character(*o); });
}

} // namespace pbd::cli
