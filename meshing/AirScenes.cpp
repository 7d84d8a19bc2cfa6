#include "meshing/AirScenes.h"

#include "core/PrimitiveMeshes.h"
#include "meshing/Prepare.h"

#include <unordered_map>

namespace pbd {

namespace {

// Appends the boundary surface of a generated tet box as a bare surface body.
void addBoxSurface(Scene& scene, const Vec3& center, const Vec3& size, const std::string& name) {
    Particles scratch;
    TetBoxSpec spec;
    spec.vertices = {3, 3, 2};
    spec.size = size;
    spec.center = center;
    const Body solid = makeTetBox(scratch, spec, name);
    Body body;
    body.name = name;
    body.kind = BodyKind::Surface;
    body.firstParticle = Index(scene.particles.size());
    std::unordered_map<Index, Index> local;
    for (const Triangle& t : solid.triangles) {
        Triangle out;
        for (int k = 0; k < 3; ++k) {
            auto [it, inserted] = local.try_emplace(t[k], Index(scene.particles.size()));
            if (inserted) {
                scene.particles.add(scratch.positions[t[k]], 0.0);
            }
            out[k] = it->second;
        }
        body.triangles.push_back(out);
    }
    body.particleCount = Index(scene.particles.size()) - body.firstParticle;
    scene.bodies.push_back(std::move(body));
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
    PrepareOptions options;
    options.tetrahedralize = true;
    options.tet.radiusEdgeRatio = 0; // the boxes as TetGen meshes them: about 25 tets each
    options.air = true;
    options.airOptions.margin = 0.15;
    options.airOptions.boxSubdivisions = 10;
    options.defaultConstraints = true;
    PrepareResult r = prepareScene(raw, options);
    if (!r.report.ok()) {
        return Error{"air-boxes: " + r.report.error};
    }
    Scene scene = std::move(r.scene);
    scene.name = "air-boxes";
    scene.description = "Ten boxes of tets in a loose pyramid inside a container of air: the "
                        "air keeps them apart and remembers their order (Air Meshes, Fig. 5)";
    scene.solver.timeStep = 0.005;
    scene.solver.iterations = 10;
    return scene;
}

// A synthetic benchmark at the scale of the paper's dancer (165,000 air tets): 64 small boxes in
// a 4 x 4 x 4 lattice, the air refined by a volume bound until it has that many tets.
Result<Scene> airDancerScale() {
    Scene raw;
    raw.name = "air-dancer-scale";
    int n = 0;
    for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 4; ++j) {
            for (int k = 0; k < 4; ++k) {
                addBoxSurface(raw, Vec3(i * 0.5, 0.15 + j * 0.5, k * 0.5), Vec3::Constant(0.2),
                              "box-" + std::to_string(++n));
            }
        }
    }
    PrepareOptions options;
    options.tetrahedralize = true;
    options.tet.radiusEdgeRatio = 0;
    options.air = true;
    options.airOptions.margin = 0.2;
    options.airOptions.boxSubdivisions = 16;
    options.airOptions.maxVolume = 1.05e-4;
    options.defaultConstraints = true;
    PrepareResult r = prepareScene(raw, options);
    if (!r.report.ok()) {
        return Error{"air-dancer-scale: " + r.report.error};
    }
    Scene scene = std::move(r.scene);
    scene.name = "air-dancer-scale";
    scene.description = "64 boxes in a lattice inside a fine air mesh of the paper's dancer's "
                        "size (about 165,000 air tets), for benchmarking the air";
    scene.solver.timeStep = 0.005;
    scene.solver.iterations = 20;
    return scene;
}

} // namespace

const std::vector<SceneInfo>& airSceneCatalogue() {
    static const std::vector<SceneInfo> scenes = {
        {"air-boxes", "Ten boxes of tets stacked in a container of air (Air Meshes, Fig. 5)"},
        {"air-dancer-scale", "64 boxes in about 165,000 air tets: the air at the paper's "
                             "dancer's scale, for benchmarks"},
    };
    return scenes;
}

Result<Scene> makeAirScene(std::string_view name) {
    if (name == "air-boxes") {
        return airBoxes();
    }
    if (name == "air-dancer-scale") {
        return airDancerScale();
    }
    return Error{"unknown air scene '" + std::string(name) + "'"};
}

const std::vector<SceneInfo>& allScenes() {
    static const std::vector<SceneInfo> all = [] {
        std::vector<SceneInfo> v = sceneCatalogue();
        const auto& air = airSceneCatalogue();
        v.insert(v.end(), air.begin(), air.end());
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
            scene.particles.positions[i].y() = floor;
            scene.particles.velocities[i] = Vec3::Zero();
        }
    }
}

} // namespace pbd
