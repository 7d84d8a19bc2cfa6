#include "meshing/AirScenes.h"

#include "core/constraints/ConstraintBuilders.h"
#include "core/constraints/ConstraintGroups.h"
#include "core/scenes/PrimitiveMeshes.h"
#include "meshing/AirMeshing2D.h"
#include "meshing/DancerScene.h"
#include "meshing/Prepare.h"
#include "meshing/SurfaceAssembly.h"

#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>

namespace pbd {

namespace {

// Appends the surface of a generated tet box as a bare surface body.
void addBoxSurface(Scene& scene, const Vec3& center, const Vec3& size, const std::string& name) {
    Particles scratch;
    TetBoxSpec spec;
    spec.vertices = {3, 3, 2};
    spec.size = size;
    spec.center = center;
    appendSurfaceOf(scene, makeTetBox(scratch, spec, name), scratch, name);
}

// Names a generated scene after its catalogue entry and sets the step all air scenes use.
void describe(Scene& scene, const std::string& name, int iterations) {
    scene.name = name;
    for (const SceneInfo& info : airSceneCatalogue()) {
        if (info.name == name) {
            scene.description = info.description;
        }
    }
    scene.solver.timeStep = 0.005;
    scene.solver.iterations = iterations;
}

// The bulk modulus of the air scenes' solid bodies: a stiff rubber. prepare's default (1 MPa,
// a foam: elastic waves at 32 m/s) lets a box landing at 2.4 m/s lose about 5% of its volume,
// as a foam would (strain ~ v / c); at 100 MPa bodies keep their volume within 2% through the
// landings (issue 25; docs/air-meshes.md).
constexpr Real kAirSceneBulkModulus = 1e8; // Pa

// Tetrahedralizes the raw surfaces (as TetGen meshes them, no quality refinement), tessellates
// the air with `air`, adds masses, material frames when asked (cloth with UVs) and default
// constraints (tet bodies of stiff rubber), and names the scene. The 3D air scenes differ only
// in their bodies and options.
Result<Scene> prepareAirScene(const Scene& raw, const AirOptions& air, int iterations,
                              bool frames = false) {
    PrepareOptions options;
    options.tetrahedralize = true;
    options.tet.radiusEdgeRatio = 0;
    options.air = true;
    options.airOptions = air;
    options.frames = frames;
    options.defaultConstraints = true;
    PrepareResult r = prepareScene(raw, options);
    if (!r.report.ok()) {
        return Error{raw.name + ": " + r.report.error};
    }
    Scene scene = std::move(r.scene);
    for (const Body& body : scene.bodies) {
        if (body.kind != BodyKind::TetBody) {
            continue;
        }
        const std::string spec =
            body.name + " volume:modulus=" + std::to_string(kAirSceneBulkModulus);
        if (Result<int> edited = editConstraintGroup(scene, spec); !edited) {
            return Error{raw.name + ": " + edited.error()};
        }
    }
    describe(scene, raw.name, iterations);
    return scene;
}

Result<Scene> airBoxes() {
    // Ten boxes in a loose pyramid (4, 3, 2, 1), each layer shifted a little, like Fig. 5.
    Scene raw;
    raw.name = "air-boxes";
    const Real size = 0.4;
    const Real gap = 0.06;
    int n = 0;
    for (int layer = 0; layer < 4; ++layer) {
        const int count = 4 - layer;
        for (int i = 0; i < count; ++i) {
            const Real x = (i - (count - 1) / 2.0) * (size + gap) + 0.03 * ((layer % 2) ? 1 : -1);
            const Real y = size / 2 + gap + layer * (size + gap);
            addBoxSurface(raw, Vec3(x, y, 0), Vec3::Constant(size), "box-" + std::to_string(++n));
        }
    }
    AirOptions air;
    air.margin = 0.15;
    air.boxSubdivisions = 10;
    Result<Scene> scene = prepareAirScene(raw, air, 10);
    if (scene) {
        // The staggered pyramid stands with the optimisation on only with this much friction:
        // the air's contact friction is weaker than Coulomb's at rest (see the README).
        scene.value().solver.airFriction = 1.0;
    }
    return scene;
}

// A closed icosphere surface (an icosahedron subdivided `levels` times) as a surface body.
void addSphereSurface(Scene& scene, const Vec3& center, Real radius, int levels,
                      const std::string& name) {
    const Real t = (1 + std::sqrt(5.0)) / 2;
    std::vector<Vec3> v = {{-1, t, 0}, {1, t, 0}, {-1, -t, 0}, {1, -t, 0},
                           {0, -1, t}, {0, 1, t}, {0, -1, -t}, {0, 1, -t},
                           {t, 0, -1}, {t, 0, 1}, {-t, 0, -1}, {-t, 0, 1}};
    std::vector<Triangle> f = {{0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11},
                               {1, 5, 9},  {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
                               {3, 9, 4},  {3, 4, 2},  {3, 2, 6},   {3, 6, 8},  {3, 8, 9},
                               {4, 9, 5},  {2, 4, 11}, {6, 2, 10},  {8, 6, 7},  {9, 8, 1}};
    for (Vec3& p : v) {
        p.normalize();
    }
    for (int level = 0; level < levels; ++level) {
        std::map<std::pair<Index, Index>, Index> middle;
        auto mid = [&](Index a, Index b) {
            const auto key = std::minmax(a, b);
            auto [it, inserted] = middle.try_emplace({key.first, key.second}, Index(v.size()));
            if (inserted) {
                v.push_back((v[a] + v[b]).normalized());
            }
            return it->second;
        };
        std::vector<Triangle> finer;
        for (const Triangle& tri : f) {
            const Index ab = mid(tri[0], tri[1]), bc = mid(tri[1], tri[2]),
                        ca = mid(tri[2], tri[0]);
            finer.push_back({tri[0], ab, ca});
            finer.push_back({tri[1], bc, ab});
            finer.push_back({tri[2], ca, bc});
            finer.push_back({ab, bc, ca});
        }
        f = std::move(finer);
    }
    Body body;
    body.name = name;
    body.kind = BodyKind::Surface;
    body.firstParticle = Index(scene.particles.size());
    for (const Vec3& p : v) {
        scene.particles.add(center + radius * p, 0.0);
    }
    for (Triangle tri : f) {
        for (Index& i : tri) {
            i += body.firstParticle;
        }
        body.triangles.push_back(tri);
    }
    body.particleCount = Index(v.size());
    scene.bodies.push_back(std::move(body));
}

// Four bodies of different shapes stacked like the Bremen town musicians: a wide box, a lying
// torus, a ball and a small box on top.
Result<Scene> bremen() {
    Scene raw;
    raw.name = "bremen";
    addBoxSurface(raw, Vec3(0, 0.25, 0), Vec3(1.2, 0.4, 0.8), "donkey");
    {
        Particles scratch;
        TetTorusSpec spec;
        spec.majorRadius = 0.3;
        spec.minorRadius = 0.1;
        spec.segments = 16;
        spec.sides = 8;
        spec.rings = 1;
        spec.center = Vec3(0, 0.62, 0);
        appendSurfaceOf(raw, makeTetTorus(scratch, spec, "dog"), scratch, "dog");
    }
    addSphereSurface(raw, Vec3(0, 0.98, 0), 0.22, 1, "cat");
    addBoxSurface(raw, Vec3(0, 1.36, 0), Vec3(0.25, 0.25, 0.25), "rooster");
    AirOptions air;
    air.margin = 0.15;
    air.boxSubdivisions = 8;
    return prepareAirScene(raw, air, 10);
}

// Boxes of 0.2 m in an nx x ny x nz lattice 0.5 m apart, their air refined by a volume bound
// (with the boxes' vertices alone, as the paper tessellates, the air spans the 0.3 m gaps
// between boxes meshed at 2.5 cm in slivers that lock within 100 steps: 10,115 inverted at step
// 400 with surfaces of 13 x 13 vertices a face). The optimisation stays on (every step, the
// default): unlike the paper's dancer, whose layers barely move against each other, these boxes
// fall 0.3 m onto each other, the large relative motion Air Meshes §4 says needs it. Off, the
// free points the volume bound adds are pressed into the squashed layers between the boxes and
// locked there (docs/air-meshes.md). Two substeps: boxes landing at 2.4 m/s on boxes already at
// rest are stopped over two projections, not one; with one, a landing box kept 97.3% of its
// volume (98.9% with two).
Result<Scene> boxLatticeInAir(const std::string& name, int nx, int ny, int nz, Real maxVolume) {
    Scene raw;
    raw.name = name;
    int n = 0;
    for (int i = 0; i < nx; ++i) {
        for (int j = 0; j < ny; ++j) {
            for (int k = 0; k < nz; ++k) {
                addBoxSurface(raw, Vec3(i * 0.5, 0.15 + j * 0.5, k * 0.5), Vec3::Constant(0.2),
                              "box-" + std::to_string(++n));
            }
        }
    }
    AirOptions air;
    air.margin = 0.2;
    air.boxSubdivisions = 16;
    air.maxVolume = maxVolume;
    Result<Scene> scene = prepareAirScene(raw, air, 20);
    if (scene) {
        scene.value().solver.substeps = 2;
    }
    return scene;
}

// A synthetic benchmark at the scale of the paper's dancer (165,000 air tets): 64 boxes.
Result<Scene> airDancerScale() {
    return boxLatticeInAir("air-dancer-scale", 4, 4, 4, 1.05e-4);
}

// Production scale (issue 31): 256 boxes in more than 1,000,000 air tets.
Result<Scene> airXl() {
    return boxLatticeInAir("air-xl", 8, 4, 8, 7.5e-5);
}

// An open tube of cloth around the y axis (segments around, rings along), with UVs that unroll
// it (u around, v along, in metres).
void addClothTube(Scene& scene, const Vec3& centre, Real radius, Real height, int segments,
                  int rings, const std::string& name) {
    constexpr Real kPi = 3.14159265358979323846;
    Body body;
    body.name = name;
    body.kind = BodyKind::Surface;
    body.firstParticle = Index(scene.particles.size());
    for (int j = 0; j <= rings; ++j) {
        for (int i = 0; i < segments; ++i) {
            const Real angle = 2 * kPi * i / segments;
            scene.particles.add(centre + Vec3(radius * std::cos(angle),
                                              height * (Real(j) / rings - 0.5),
                                              radius * std::sin(angle)),
                                0.0);
        }
    }
    body.particleCount = Index((rings + 1) * segments);
    const Real circumference = 2 * kPi * radius;
    const auto at = [&](int i, int j) {
        return body.firstParticle + Index(j * segments + (i % segments));
    };
    const auto uv = [&](int i, int j) {
        return Vec2(circumference * i / segments, height * j / rings);
    };
    for (int j = 0; j < rings; ++j) {
        for (int i = 0; i < segments; ++i) {
            // Outward normals: counter-clockwise seen from outside the tube.
            body.triangles.push_back({at(i, j), at(i, j + 1), at(i + 1, j)});
            body.triangleUVs.push_back({uv(i, j), uv(i, j + 1), uv(i + 1, j)});
            body.triangles.push_back({at(i + 1, j), at(i, j + 1), at(i + 1, j + 1)});
            body.triangleUVs.push_back({uv(i + 1, j), uv(i, j + 1), uv(i + 1, j + 1)});
        }
    }
    scene.bodies.push_back(std::move(body));
}

// Three cloth tubes around a square post, with air between them (Air Meshes §4: layered cloth,
// where rotations are small and the optimisation is off). The post is driven sideways at
// 5 cm/s through tubes that float (no gravity), so the post pushes the inner tube into the
// others and drags them along, and only the air between them keeps them apart.
Result<Scene> layeredCloth() {
    Scene raw;
    raw.name = "layered-cloth";
    addBoxSurface(raw, Vec3(0, 0, 0), Vec3(0.24, 0.6, 0.24), "post");
    const Real radii[] = {0.2, 0.25, 0.3};
    for (int k = 0; k < 3; ++k) {
        addClothTube(raw, Vec3(0, 0, 0), radii[k], 0.5, 24, 8, "layer-" + std::to_string(k + 1));
    }
    AirOptions air;
    air.margin = 0.6;
    air.boxSubdivisions = 6;
    Result<Scene> made = prepareAirScene(raw, air, 10, true);
    if (!made) {
        return made;
    }
    Scene scene = std::move(made).value();
    scene.solver.airOptimizationInterval = 0; // layered cloth: the air keeps the layers' order
    const Vec3 velocity(0.05, 0, 0);
    const Body& post = scene.bodies[0];
    for (Index i = post.firstParticle; i < post.firstParticle + post.particleCount; ++i) {
        scene.constraints.attachments.add(i, scene.particles.positions[i], 0, velocity);
        scene.particles.velocities[i] = velocity;
    }
    scene.solver.gravity = Vec3::Zero(); // the tubes float: only the post moves them
    return scene;
}

// The paper's 2D proof of concept (Fig. 2): 60 soft boxes (two triangles each, signed area and
// edge constraints) in ten columns and six rows, and a rope pinned at both ends above them,
// all in the xy plane, with the air between them as triangles.
Result<Scene> airBoxes2D() {
    Scene scene;
    scene.name = "air-boxes-2d";
    const Real size = 0.1, gap = 0.03;
    const Real density = 100; // kg/m^2
    int n = 0;
    for (int row = 0; row < 6; ++row) {
        for (int column = 0; column < 10; ++column) {
            const Real x = column * (size + gap) + (row % 2 ? 0.02 : -0.02);
            const Real y = gap + row * (size + gap);
            Body box;
            box.name = "box-" + std::to_string(++n);
            box.kind = BodyKind::TetBody; // a 2D solid: its triangles
            box.firstParticle = Index(scene.particles.size());
            const Real inverseMass = 4.0 / (density * size * size);
            for (const Vec3& corner : {Vec3(x, y, 0), Vec3(x + size, y, 0),
                                       Vec3(x + size, y + size, 0), Vec3(x, y + size, 0)}) {
                scene.particles.add(corner, inverseMass);
            }
            box.particleCount = 4;
            const Index f = box.firstParticle;
            box.triangles = {{f, f + 1, f + 2}, {f, f + 2, f + 3}};
            scene.bodies.push_back(box);
            addEdgeDistances(scene.constraints, scene.particles, scene.bodies.back(), 1e-6);
            addPlanarAreas(scene.constraints, scene.particles, scene.bodies.back(), 1e5);
        }
    }
    RopeSpec rope;
    rope.particles = 40;
    const Real top = 6 * (size + gap) + 0.1;
    rope.start = Vec3(-0.05, top, 0);
    rope.end = Vec3(10 * (size + gap) + 0.02, top, 0);
    rope.mass = 0.5;
    scene.bodies.push_back(makeRope(scene.particles, rope, "rope"));
    const Body& r = scene.bodies.back();
    const Real segment = (rope.end - rope.start).norm() / (rope.particles - 1);
    for (Index i = r.firstParticle; i + 1 < r.firstParticle + r.particleCount; ++i) {
        scene.constraints.distance.add(i, i + 1, 1.4 * segment, 1e-6); // slack: it drapes
    }
    scene.particles.inverseMasses[r.firstParticle] = 0; // pinned at both ends
    scene.particles.inverseMasses[r.firstParticle + r.particleCount - 1] = 0;
    Air2DOptions air;
    air.margin = 0.08;
    air.boxSubdivisions = 12;
    if (Result<Air2DReport> made = tessellateAir2D(scene, air); !made) {
        return Error{scene.name + ": " + made.error()};
    }
    describe(scene, scene.name, 20);
    return scene;
}

} // namespace

const std::vector<SceneInfo>& airSceneCatalogue() {
    static const std::vector<SceneInfo> scenes = {
        {"air-boxes", "Ten boxes of tets stacked in a container of air (Air Meshes, Fig. 5)"},
        {"bremen", "Four stacked bodies of different shapes in air (Air Meshes, Fig. 8)"},
        {"air-boxes-2d", "60 boxes and a rope in a rectangle, in the plane: the paper's 2D "
                         "proof of concept (Air Meshes, Fig. 2)"},
        {"layered-cloth", "Three cloth tubes in air around a post driven sideways (Air Meshes "
                          "§4: layered cloth, optimisation off)"},
        {"air-dancer-scale", "64 boxes in about 165,000 air tets: the air at the paper's "
                             "dancer's scale, for benchmarks"},
        {"air-xl", "256 boxes falling onto each other in over a million air tets: the air at "
                   "production scale, for benchmarks"},
    };
    return scenes;
}

namespace {

Result<Scene> makeAirSceneUngrouped(std::string_view name) {
    if (name == "air-boxes") {
        return airBoxes();
    }
    if (name == "bremen") {
        return bremen();
    }
    if (name == "air-dancer-scale") {
        return airDancerScale();
    }
    if (name == "air-xl") {
        return airXl();
    }
    if (name == "air-boxes-2d") {
        return airBoxes2D();
    }
    if (name == "layered-cloth") {
        return layeredCloth();
    }
    return Error{"unknown air scene '" + std::string(name) + "'"};
}

} // namespace

Result<Scene> makeAirScene(std::string_view name) {
    Result<Scene> scene = makeAirSceneUngrouped(name);
    if (scene) {
        ensureConstraintGroups(*scene);
    }
    return scene;
}

const std::vector<SceneInfo>& allScenes() {
    static const std::vector<SceneInfo> all = [] {
        std::vector<SceneInfo> v = sceneCatalogue();
        const auto& air = airSceneCatalogue();
        v.insert(v.end(), air.begin(), air.end());
        const auto& characters = characterSceneCatalogue();
        v.insert(v.end(), characters.begin(), characters.end());
        return v;
    }();
    return all;
}

Result<Scene> makeAnyScene(std::string_view name) {
    for (const SceneInfo& info : airSceneCatalogue()) {
        if (info.name == name) {
            return makeAirScene(name);
        }
    }
    for (const SceneInfo& info : characterSceneCatalogue()) {
        if (info.name == name) {
            return makeCharacterScene(name);
        }
    }
    Result<Scene> core = makeScene(name);
    if (core || name.find_first_of("./") != std::string_view::npos) {
        return core;
    }
    std::string names;
    for (const SceneInfo& info : allScenes()) {
        names += (names.empty() ? "" : ", ") + info.name;
    }
    return Error{"unknown scene '" + std::string(name) + "' (PBD Lab generates " + names + ")"};
}

void squashY(Scene& scene) {
    // The bodies are squashed onto the lowest body vertex; the container (the air's own,
    // pinned particles) stays, or there would be no room to recover into.
    Real floor = std::numeric_limits<Real>::infinity();
    for (const Body& b : scene.bodies) {
        for (Index i = b.firstParticle; i < b.firstParticle + b.particleCount; ++i) {
            floor = std::min(floor, scene.particles.positions[i].y());
        }
    }
    for (const Body& b : scene.bodies) {
        for (Index i = b.firstParticle; i < b.firstParticle + b.particleCount; ++i) {
            if (!(scene.particles.inverseMasses[i] > 0)) {
                continue; // pinned (a rope's ends): it could never come back
            }
            scene.particles.positions[i].y() = floor;
            scene.particles.velocities[i] = Vec3::Zero();
        }
    }
}

} // namespace pbd
