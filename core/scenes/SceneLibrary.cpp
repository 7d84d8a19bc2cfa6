#include "core/scenes/SceneLibrary.h"

#include "core/constraints/ConstraintBuilders.h"
#include "core/scenes/Ground.h"
#include "core/scenes/PrimitiveMeshes.h"
#include "core/scenes/RigidScenes.h"

namespace pbd {

namespace {

constexpr Real kClothBendingCompliance = 5e3;   // 1/(N m): a soft, draping cloth
constexpr Real kClothBendingPbdStiffness = 0.1; // the same cloth under classic PBD

// What PBD Lab is for, in one scene: anisotropic cloth (strain-based triangles whose material
// axes come from its UVs, stiff along the warp, soft across it) falls on a soft strain-based tet
// torus resting on the ground; two of its corners come down on a rigid block and a rigid ball,
// which the particles meet through the two-way coupling. Self-collision keeps the cloth on the
// torus's surface. Everything settles in view.
constexpr const char* kSampleDescription =
    "Anisotropic cloth (material axes from its UVs) draping over a soft tet torus, a rigid block "
    "and a rigid ball on the ground";
Scene makeSample() {
    Scene scene;
    scene.name = "sample";
    scene.description = kSampleDescription;
    scene.solver.timeStep = 1.0 / 120;
    scene.solver.substeps = 2;
    scene.solver.iterations = 10;
    scene.solver.collisionMargin = 0.005;
    scene.solver.selfCollision = true;
    scene.solver.clothThickness = 0.01;

    TetTorusSpec torus;
    torus.majorRadius = 0.45;
    torus.minorRadius = 0.18;
    torus.center = Vec3(0, torus.minorRadius + scene.solver.collisionMargin, 0);
    scene.bodies.push_back(makeTetTorus(scene.particles, torus, "torus"));
    StrainTetMaterial rubber;
    rubber.stretch = {2e5, 2e5, 2e5};
    rubber.shear = {6e4, 6e4, 6e4};
    (void)addStrainTets(scene.constraints, scene.particles, scene.bodies.back(), rubber);

    ClothSheetSpec sheet;
    sheet.columns = 48;
    sheet.rows = 48;
    sheet.width = 2;
    sheet.depth = 2;
    sheet.center = Vec3(0, 0.7, 0);
    scene.bodies.push_back(makeClothSheet(scene.particles, sheet, "cloth"));
    StrainTriangleMaterial woven;
    woven.stretchU = 2e4; // the warp holds
    woven.stretchV = 2e3; // the weft gives: the cloth stretches across, not along
    woven.shear = 5e2;
    (void)addStrainTriangles(scene.constraints, scene.particles, scene.bodies.back(), woven);
    addDihedralBending(scene.constraints, scene.particles, scene.bodies.back(),
                       kClothBendingCompliance, kClothBendingPbdStiffness);

    const Real slop = scene.solver.rigid.slop;
    scene.rigidBodies.push_back(
        boxBody("block", Vec3(0.15, 0.15, 0.15), Vec3(0.68, 0.15 - slop, 0.68)));
    RigidBody ball;
    ball.name = "ball";
    ball.shapes.push_back(RigidShape::sphere(0.14));
    ball.x = Vec3(-0.7, 0.14 - slop, 0.7);
    finishRigidBody(ball);
    scene.rigidBodies.push_back(ball);
    addGround(scene, 0); // a static rigid ground: the rigid bodies and the particles meet it
    return scene;
}

// The cloth benchmark sheet: 50 x 50 vertices, 1 m square, horizontal at y = 1, held at the two
// corners of its -z edge.
constexpr Real kClothSize = 2.0; // m; 1 x 5 iterations overstretch a smaller sheet at its pins
Scene makeClothBase(const char* name, const char* description) {
    Scene scene;
    scene.name = name;
    scene.description = description;
    ClothSheetSpec sheet;
    sheet.columns = 50;
    sheet.rows = 50;
    sheet.width = kClothSize;
    sheet.depth = kClothSize;
    sheet.center = Vec3(0, 2.5, 0);
    scene.bodies.push_back(makeClothSheet(scene.particles, sheet, "cloth"));
    const Body& body = scene.bodies.back();
    for (Index corner : {body.firstParticle, body.firstParticle + Index(sheet.columns - 1)}) {
        scene.constraints.attachments.add(corner, scene.particles.positions[corner]);
    }
    scene.solver.timeStep = 0.005;
    scene.solver.substeps = 1;
    scene.solver.iterations = 5;
    return scene;
}

Scene makeCloth() {
    Scene scene = makeClothBase(
        "cloth", "A 50x50 cloth held at two corners: distance and dihedral bending constraints");
    const Body& body = scene.bodies.back();
    addEdgeDistances(scene.constraints, scene.particles, body, 0.0);
    addDihedralBending(scene.constraints, scene.particles, body, kClothBendingCompliance,
                       kClothBendingPbdStiffness);
    return scene;
}

// The cloth benchmarks' strain-based material: 10 kN/m along u and v, 1 kN/m shear.
void addBenchmarkStrainTriangles(Scene& scene, const Body& body) {
    StrainTriangleMaterial material;
    material.stretchU = 1e4;
    material.stretchV = 1e4;
    material.shear = 1e3;
    (void)addStrainTriangles(scene.constraints, scene.particles, body, material);
}

Scene makeClothSbd() {
    Scene scene = makeClothBase("cloth-sbd", "The 50x50 cloth with strain-based triangles (SBD), "
                                             "material axes from its UVs, and dihedral bending");
    const Body& body = scene.bodies.back();
    addBenchmarkStrainTriangles(scene, body);
    addDihedralBending(scene.constraints, scene.particles, body, kClothBendingCompliance,
                       kClothBendingPbdStiffness);
    return scene;
}

// The tet benchmark: a 10 x 10 x 40 vertex bar (0.25 x 0.25 x 1 m) along z, clamped at z = min,
// sagging under gravity; strain-based tets with rubber-like moduli.
Scene makeTetBar() {
    Scene scene;
    scene.name = "tetbar";
    scene.description = "A 10x10x40 tet bar clamped at one end: strain-based tetrahedra (SBD)";
    TetBoxSpec box;
    box.center = Vec3(0, 1, 0);
    scene.bodies.push_back(makeTetBox(scene.particles, box, "bar"));
    const Body& body = scene.bodies.back();
    const Real zMin = box.center.z() - 0.5 * box.size.z();
    for (Index i = body.firstParticle; i < body.firstParticle + body.particleCount; ++i) {
        if (scene.particles.positions[i].z() < zMin + 1e-9) {
            scene.constraints.attachments.add(i, scene.particles.positions[i]);
        }
    }
    StrainTetMaterial material;
    material.stretch = {1e6, 1e6, 1e6};
    material.shear = {3e5, 3e5, 3e5};
    (void)addStrainTets(scene.constraints, scene.particles, body, material);
    // 1 substep x 5 iterations at 5 ms let the bar's tip fall through (the constraints cannot
    // carry the load 40 vertices back to the clamp in 5 sweeps, and strain constraints do not
    // resist inversion); 2 ms steps keep it standing.
    scene.solver.timeStep = 0.002;
    scene.solver.substeps = 1;
    scene.solver.iterations = 5;
    return scene;
}

// The XPBD article's rope: a horizontal chain of 30 particles with compliant distance
// constraints, held at its first particle.
Scene makeRopeScene() {
    Scene scene;
    scene.name = "rope";
    scene.description = "A rope of 30 particles with compliant distance constraints (XPBD)";
    RopeSpec spec;
    scene.bodies.push_back(makeRope(scene.particles, spec, "rope"));
    const Body& body = scene.bodies.back();
    for (Index i = body.firstParticle; i + 1 < body.firstParticle + body.particleCount; ++i) {
        const Real rest = (scene.particles.positions[i + 1] - scene.particles.positions[i]).norm();
        scene.constraints.distance.add(i, i + 1, rest, 2e-4);
    }
    scene.constraints.attachments.add(body.firstParticle,
                                      scene.particles.positions[body.firstParticle]);
    scene.solver.timeStep = 1.0 / 60;
    scene.solver.substeps = 1;
    scene.solver.iterations = 10;
    return scene;
}

// A square cloth of n x n vertices, `size` m wide, level at `height`, above a sphere of `radius`
// resting on the ground (friction 0.3 and 0.5), self-collision on: `drape` and `cloth-xl`.
Scene clothOverSphere(int n, Real size, Real height, Real radius) {
    Scene scene;
    ClothSheetSpec sheet;
    sheet.columns = n;
    sheet.rows = n;
    sheet.width = size;
    sheet.depth = size;
    sheet.center = Vec3(0, height, 0);
    scene.bodies.push_back(makeClothSheet(scene.particles, sheet, "cloth"));
    addGround(scene, 0);
    scene.colliders.push_back(Collider::sphere(Vec3(0, radius, 0), radius));
    scene.colliders.back().friction = 0.3;
    scene.solver.timeStep = 1.0 / 120;
    scene.solver.iterations = 5;
    scene.solver.selfCollision = true;
    return scene;
}

// Cloth falling onto a sphere resting on the ground: collisions with friction.
Scene makeDrape() {
    Scene scene = clothOverSphere(40, 1.6, 1.2, 0.5);
    scene.name = "drape";
    scene.description =
        "A cloth falling onto a sphere on the ground: colliders with friction, self-collision";
    const Body& body = scene.bodies.back();
    addEdgeDistances(scene.constraints, scene.particles, body, 0.0);
    addDihedralBending(scene.constraints, scene.particles, body, kClothBendingCompliance,
                       kClothBendingPbdStiffness);
    scene.solver.substeps = 2;
    scene.solver.collisionMargin = 0.01;
    scene.solver.clothThickness = 0.01;
    return scene;
}

// Production scale (issue 31): a 3 m cloth of 360 x 360 vertices (257,762 triangles) falling
// onto a sphere on the ground with self-collision, as `drape` at 80 times its size; distance
// and bending, or (sbd) strain-based triangles with material axes from the UVs.
Scene makeClothXl(bool sbd) {
    Scene scene = clothOverSphere(360, 3.0, 1.4, 0.6);
    scene.name = sbd ? "cloth-xl-sbd" : "cloth-xl"; // described in the catalogue below
    const Body& body = scene.bodies.back();
    if (sbd) {
        addBenchmarkStrainTriangles(scene, body);
    } else {
        addEdgeDistances(scene.constraints, scene.particles, body, 0.0);
    }
    addDihedralBending(scene.constraints, scene.particles, body, kClothBendingCompliance,
                       kClothBendingPbdStiffness);
    scene.solver.substeps = 1;
    // 10 iterations: at 5 the 130,000-particle sheet stretches like rubber down the sphere, the
    // excess piles up in a ring at its foot, and the self-contacts there double every step
    // from step 70 (922,000 at step 80, 20 s a step); at 10 it drapes for 300 steps and more.
    // The strain triangles need 20: at 10 the same happened when the sheet reached the ground
    // (454 self-contacts at step 65, 574,000 at step 77, stopped as a runaway at step 84,
    // whatever their stiffness, 1e4 to 1e6 N/m); at 20 (or 2 substeps of 10) it drapes for 300
    // steps with at most 641 self-contacts and no pair of triangles crossing.
    scene.solver.iterations = sbd ? 20 : 10;
    scene.solver.collisionMargin = 0.005;
    scene.solver.clothThickness = 0.004; // the vertices are 8.4 mm apart
    return scene;
}
Scene makeClothXlDistance() {
    return makeClothXl(false);
}
Scene makeClothXlSbd() {
    return makeClothXl(true);
}

// Production scale (issue 31): a 1 m block of 60 x 60 x 60 vertices (1,026,895 strain-based
// tets and their volumes) dropped 5 cm onto the ground.
Scene makeTetXl() {
    Scene scene;
    scene.name = "tet-xl"; // described in the catalogue below
    TetBoxSpec box;
    box.vertices = {60, 60, 60};
    box.size = Vec3(1, 1, 1);
    box.center = Vec3(0, 0.55, 0);
    scene.bodies.push_back(makeTetBox(scene.particles, box, "block"));
    const Body& body = scene.bodies.back();
    StrainTetMaterial material;
    material.stretch = {1e6, 1e6, 1e6};
    material.shear = {3e5, 3e5, 3e5};
    (void)addStrainTets(scene.constraints, scene.particles, body, material);
    (void)addTetVolumes(scene.constraints, scene.particles, body, 1e7);
    addGround(scene, 0);
    scene.solver.timeStep = 0.005;
    scene.solver.substeps = 1;
    scene.solver.iterations = 5;
    return scene;
}

// A sheet held along one edge and pulled away along the other until it tears (PBD §5).
Scene makeTear() {
    Scene scene;
    scene.name = "tear";
    scene.description = "A sheet pulled apart by its two edges until it tears";
    ClothSheetSpec sheet;
    sheet.columns = 40;
    sheet.rows = 30;
    sheet.width = 1.2;
    sheet.depth = 0.9;
    sheet.center = Vec3(0, 1, 0);
    scene.bodies.push_back(makeClothSheet(scene.particles, sheet, "sheet"));
    const Body& body = scene.bodies.back();
    addEdgeDistances(scene.constraints, scene.particles, body, 1e-4);
    addDihedralBending(scene.constraints, scene.particles, body, kClothBendingCompliance,
                       kClothBendingPbdStiffness);
    for (Index i = body.firstParticle; i < body.firstParticle + body.particleCount; ++i) {
        const Vec3 x = scene.particles.positions[i];
        if (x.x() < -0.5 * sheet.width + 1e-9) {
            scene.constraints.attachments.add(i, x);
        } else if (x.x() > 0.5 * sheet.width - 1e-9) {
            scene.constraints.attachments.add(i, x, 0.0, Vec3(0.4, 0, 0));
        }
    }
    scene.solver.timeStep = 1.0 / 120;
    scene.solver.substeps = 1;
    scene.solver.iterations = 10;
    scene.solver.tearingStretch = 1.6;
    return scene;
}

struct Entry {
    SceneInfo info;
    Scene (*make)();
};

const std::vector<Entry>& entries() {
    static const std::vector<Entry> list = {
        {{"sample", kSampleDescription}, &makeSample},
        {{"cloth", "A 50x50 cloth held at two corners: distance and dihedral bending constraints"},
         &makeCloth},
        {{"cloth-sbd", "The 50x50 cloth with strain-based triangles (SBD), material axes from "
                       "its UVs, and dihedral bending"},
         &makeClothSbd},
        {{"tetbar", "A 10x10x40 tet bar clamped at one end: strain-based tetrahedra (SBD)"},
         &makeTetBar},
        {{"rope", "A rope of 30 particles with compliant distance constraints (XPBD)"},
         &makeRopeScene},
        {{"drape",
          "A cloth falling onto a sphere on the ground: colliders with friction, self-collision"},
         &makeDrape},
        {{"tear", "A sheet pulled apart by its two edges until it tears"}, &makeTear},
        {{"pyramid", "A wall pyramid of 210 boxes (base 20) on the ground: rigid stacking"},
         [] { return makeRigidPyramid(20); }},
        {{"pyramid-100", "A wall pyramid of 5,050 boxes (base 100): the rigid benchmark"},
         [] { return makeRigidPyramid(100); }},
        {{"stack", "A vertical stack of 10 boxes on the ground"},
         [] { return makeRigidStack(10); }},
        {{"chain", "10 capsule links on ball joints with a weight 100 times a link's mass"},
         [] { return makeRigidChain(10, 100); }},
        {{"chain-hinged", "The chain on hinges about z (a planar swing), the weight 100 times a "
                          "link's mass"},
         [] { return makeRigidChain(10, 100, true); }},
        {{"spinning-top",
          "A T-handle spinning about its intermediate axis in zero gravity (Dzhanibekov)"},
         &makeSpinningTop},
        {{"cloth-xl", "A 3 m cloth of 257,762 triangles falling onto a sphere on the ground, with "
                      "self-collision: the cloth benchmark at production scale"},
         &makeClothXlDistance},
        {{"cloth-xl-sbd", "cloth-xl with strain-based triangles (SBD), material axes from its UVs"},
         &makeClothXlSbd},
        {{"tet-xl", "A 1 m block of 1,026,895 strain-based tets dropped onto the ground: the tet "
                    "benchmark at production scale"},
         &makeTetXl},
        {{"cloth-on-rigid", "A cloth hung from a moving bar, draped over a block and weighted by "
                            "a ball: particles and rigid bodies coupled both ways"},
         &makeClothOnRigid},
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
            Scene scene = e.make();
            if (scene.description.empty()) {
                scene.description = e.info.description;
            }
            ensureConstraintGroups(scene);
            return scene;
        }
    }
    std::string known;
    for (const Entry& e : entries()) {
        known += (known.empty() ? "" : ", ") + e.info.name;
    }
    return Error{"unknown scene '" + std::string(name) + "' (available: " + known + ")"};
}

} // namespace pbd
