#include "core/SceneLibrary.h"

#include "core/PrimitiveMeshes.h"

namespace pbd {

namespace {

Scene makeSample() {
    Scene scene;
    scene.name = "sample";
    scene.description = "A 40x40 cloth sheet with UV coordinates above a tetrahedral torus";
    TetTorusSpec torus;
    torus.center = Vec3(0, 0.25, 0);
    scene.bodies.push_back(makeTetTorus(scene.particles, torus, "torus"));
    ClothSheetSpec sheet;
    sheet.center = Vec3(0, 0.8, 0);
    scene.bodies.push_back(makeClothSheet(scene.particles, sheet, "cloth"));
    return scene;
}

struct Entry {
    SceneInfo info;
    Scene (*make)();
};

const std::vector<Entry>& entries() {
    static const std::vector<Entry> list = {
        {{"sample", "A 40x40 cloth sheet with UV coordinates above a tetrahedral torus"},
         &makeSample},
    };
    return list;
}

} // namespace

const std::vector<SceneInfo>& sceneCatalogue() {
    static const std::vector<SceneInfo> infos = [] {
        std::vector<SceneInfo> v;
        for (const Entry& e : entries()) {
            v.push_back(e.info);
        }
        return v;
    }();
    return infos;
}

Result<Scene> makeScene(std::string_view name) {
    for (const Entry& e : entries()) {
        if (e.info.name == name) {
            return e.make();
        }
    }
    std::string known;
    for (const Entry& e : entries()) {
        known += (known.empty() ? "" : ", ") + e.info.name;
    }
    return Error{"unknown scene '" + std::string(name) + "' (available: " + known + ")"};
}

} // namespace pbd
