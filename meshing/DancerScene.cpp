#include "meshing/DancerScene.h"

#include "core/constraints/ConstraintGroups.h"
#include "meshing/CharacterImport.h"

#include <cstdio>
#include <cstdlib>

namespace pbd {

DancerSpec dancerSpec(std::string_view name) {
    DancerSpec spec;
    // The character's hands hang 3.5 cm beside its hips at the start: three layers 8 mm apart
    // over 8 mm of ease, flaring a little, pass between them.
    spec.skirt.layers = 3;
    spec.skirt.segments = 128;
    spec.skirt.rows = 63; // 3 x 128 x 62 x 2 = 47,616 triangles (the paper: 47,000)
    spec.skirt.length = 0.45;
    spec.skirt.layerGap = 0.008;
    spec.skirt.ease = 0.008;
    spec.skirt.flare = 1.08;
    // The clip's first pose has the hands against the hips; at 0.3 s the skirt fits clear of
    // the skin and the dance is calm (2.9 s fits too, but the loop's end is a fast move).
    spec.edits = "start=0.3";
    if (name == "dancer-small") {
        spec.skirt.layers = 2;
        spec.skirt.segments = 48;
        spec.skirt.rows = 16;
    }
    return spec;
}

Result<Scene> makeDancer(const DancerSpec& spec, const std::string& name) {
    std::string file = spec.file;
    if (file.empty()) {
        const char* models = std::getenv("ASSIMP_MODELS");
        file =
            std::string(models != nullptr && *models != 0 ? models : "/usr/share/assimp/models") +
            "/X/BCN_Epileptic.X";
    }
    Result<ImportedCharacter> read = importCharacter(file);
    if (!read) {
        return Error{"the " + name + " scene needs the dancing character " + file +
                     " (Debian's assimp-testmodels): " + read.error()};
    }
    Character character = std::move(read->character);
    // Feet on the ground at the start, then the scene's own edits.
    Bounds rest;
    for (const Vec3& v : skinCharacter(character, 0)) {
        rest.add(v);
    }
    character.placement.pretranslate(Vec3(0, -rest.min.y(), 0));
    if (std::string problem = editCharacter(character, spec.edits); !problem.empty()) {
        return Error{problem};
    }
    const Real waistHeight = (character.placement * Vec3(0, spec.waist, 0)).y();
    Scene scene;
    scene.name = name;
    char start[32];
    std::snprintf(start, sizeof start, "%.1f", character.start);
    scene.description = "A dancing character (" + character.name + ", " +
                        std::to_string(character.triangleCount()) + " triangles) in a skirt of " +
                        std::to_string(spec.skirt.layers) + " layers, from " + start +
                        " s into its dance (Air Meshes, Fig. 1)";
    Collider ground = Collider::plane(Vec3::Zero(), Vec3::UnitY());
    ground.name = "ground";
    scene.colliders.push_back(ground);
    const int c = addCharacter(scene, std::move(character), 0.5);
    SkirtSpec skirt = spec.skirt;
    skirt.waistHeight = waistHeight;
    if (Result<std::size_t> added = addSkirt(scene, c, skirt); !added) {
        return Error{added.error()};
    }
    SolverSettings& s = scene.solver;
    s.timeStep = 1.0 / 60;
    s.substeps = 2;
    s.iterations = 10; // the paper's cloth iterations
    s.selfCollision = true;
    // Below half a triangle's height (the paper's skirt has 7 mm edges): a thicker cloth finds
    // contacts between neighbouring triangles of one flat sheet and pushes the sheet apart.
    s.clothThickness = 0.002;
    s.collisionMargin = 0.003;
    ensureConstraintGroups(scene);
    return scene;
}

const std::vector<SceneInfo>& characterSceneCatalogue() {
    static const std::vector<SceneInfo> scenes = {
        {"dancer", "A dancing character in a skirt of three layers, 47,616 triangles, pinned at "
                   "the waist (Air Meshes, Fig. 1; needs assimp-testmodels)"},
        {"dancer-small", "The dancer in a skirt of two coarse layers, for tests"},
    };
    return scenes;
}

Result<Scene> makeCharacterScene(std::string_view name) {
    for (const SceneInfo& info : characterSceneCatalogue()) {
        if (info.name == name) {
            return makeDancer(dancerSpec(name), std::string(name));
        }
    }
    return Error{"unknown character scene '" + std::string(name) + "'"};
}

} // namespace pbd
