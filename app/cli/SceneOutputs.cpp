#include "app/cli/SceneOutputs.h"

#include "meshing/CookedAsset.h"
#include "meshing/Export.h"
#include "meshing/ProjectFile.h"

#include <functional>

namespace pbd::cli {

bool SceneOutputs::any() const {
    return !(project.empty() && asset.empty() && vtu.empty() && msh.empty() && tetgen.empty());
}

std::vector<std::string> SceneOutputs::paths() const {
    return {project, asset, vtu, msh, tetgen};
}

void addSceneOutputs(CLI::App& c, SceneOutputs& o, const std::string& extraProjectNames) {
    c.add_option("-o,--out" + extraProjectNames, o.project, "Write a project")
        ->type_name("PROJECT.json");
    c.add_option("--asset", o.asset, "Write a cooked asset")->type_name("FILE");
    c.add_option("--vtu", o.vtu, "Write a VTK unstructured grid")->type_name("FILE");
    c.add_option("--msh", o.msh, "Write a Gmsh 4.1 mesh")->type_name("FILE");
    c.add_option("--tetgen", o.tetgen, "Write TetGen .node/.ele/.face")->type_name("PREFIX");
}

Result<bool> writeSceneOutputs(const Scene& scene, const SceneOutputs& o, int indent) {
    using Writer = std::function<Result<bool>(const std::string&)>;
    const std::pair<const std::string*, Writer> writers[] = {
        {&o.project,
         [&](const std::string& f) {
             return writeFileAtomically(f, projectToJson(scene, indent < 0 ? 1 : indent));
         }},
        {&o.asset, [&](const std::string& f) { return exportCookedAsset(scene, f, indent); }},
        {&o.vtu, [&](const std::string& f) { return exportVtu(scene, f); }},
        {&o.msh, [&](const std::string& f) { return exportMsh(scene, f); }},
        {&o.tetgen, [&](const std::string& f) { return exportTetgen(scene, f); }},
    };
    for (const auto& [target, write] : writers) {
        if (target->empty()) {
            continue;
        }
        if (Result<bool> written = write(*target); !written) {
            return written;
        }
    }
    return true;
}

} // namespace pbd::cli
