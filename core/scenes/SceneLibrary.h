#pragma once
// The scenes PBD Lab generates itself, by name: used by the GUI, the CLI, tests and benchmarks.

#include "core/base/Result.h"
#include "core/scene/Scene.h"

#include <string>
#include <string_view>
#include <vector>

namespace pbd {

struct SceneInfo {
    std::string name;
    std::string description;
};

// All generated scenes, in the order the GUI lists them. The first is the default sample.
const std::vector<SceneInfo>& sceneCatalogue();

// Builds the named scene, or says which names exist.
Result<Scene> makeScene(std::string_view name);

} // namespace pbd
