// pbdlab-cli scenes: the scenes PBD Lab generates itself.

#include "app/cli/Command.h"
#include "meshing/AirScenes.h"
#include "meshing/SceneJson.h"

#include <iostream>
#include <nlohmann/json.hpp>

namespace pbd::cli {

void addScenesCommand(CLI::App& cli, int& status) {
    auto* c = cli.add_subcommand("scenes", "List the scenes PBD Lab generates itself.");
    auto asJson = std::make_shared<bool>(false);
    c->add_flag("--json", *asJson, "A JSON array of {name, description}");
    c->callback([asJson, &status] {
        if (*asJson) {
            nlohmann::json list = nlohmann::json::array();
            for (const SceneInfo& info : allScenes()) {
                list.push_back({{"name", info.name}, {"description", info.description}});
            }
            std::cout << sceneio::dumpJson(list, 2) << '\n';
        } else {
            for (const SceneInfo& info : allScenes()) {
                std::cout << info.name << "\t" << info.description << '\n';
            }
        }
        status = kSuccess;
    });
}

} // namespace pbd::cli
