#pragma once
// Generated input surfaces for the meshing tests: closed boxes and tori as bare triangle
// surfaces (as an importer would deliver them) and cloth sheets.

#include "core/scene/Scene.h"
#include "core/scenes/PrimitiveMeshes.h"
#include "meshing/SurfaceAssembly.h"

namespace pbd::test {

inline void addBoxSurface(Scene& scene, const Vec3& center, const Vec3& size,
                          const std::string& name, int cells = 2) {
    Particles scratch;
    TetBoxSpec spec;
    spec.vertices = {cells + 1, cells + 1, cells + 1};
    spec.size = size;
    spec.center = center;
    const Body solid = makeTetBox(scratch, spec, name);
    appendSurfaceOf(scene, solid, scratch, name);
}

inline void addTorusSurface(Scene& scene, const Vec3& center, const std::string& name) {
    Particles scratch;
    TetTorusSpec spec;
    spec.center = center;
    const Body solid = makeTetTorus(scratch, spec, name);
    appendSurfaceOf(scene, solid, scratch, name);
}

inline void addSheet(Scene& scene, const Vec3& center, Real size, int vertices,
                     const std::string& name) {
    ClothSheetSpec spec;
    spec.columns = vertices;
    spec.rows = vertices;
    spec.width = size;
    spec.depth = size;
    spec.center = center;
    Body sheet = makeClothSheet(scene.particles, spec, name);
    sheet.kind = BodyKind::Cloth;
    scene.bodies.push_back(std::move(sheet));
}

// Two boxes (4 x 4 squares per face) one above the other with a cloth sheet between them.
inline Scene twoBoxesAndCloth() {
    Scene scene;
    scene.name = "two-boxes-cloth";
    addBoxSurface(scene, Vec3(0, 0, 0), Vec3(1, 1, 1), "lower", 4);
    addBoxSurface(scene, Vec3(0.2, 2, 0), Vec3(1, 0.8, 1.2), "upper", 4);
    addSheet(scene, Vec3(0, 1, 0), 1.6, 6, "sheet");
    return scene;
}

} // namespace pbd::test
