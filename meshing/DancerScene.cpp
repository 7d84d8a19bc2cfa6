#include "meshing/DancerScene.h"

#include "core/constraints/Attaching.h"
#include "core/constraints/ConstraintGroups.h"
#include "core/solver/Colliders.h"
#include "core/solver/MovingMeshCollider.h"
#include "meshing/CharacterImport.h"
#include "meshing/SurfaceCheck.h"
#include "meshing/VolumeMeshing.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>

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
        // It loops (five loops in long-runs, none running away), with self-collision and the
        // air as many iterations as the cloth (the spec's defaults).
        spec.skirt.layers = 2;
        spec.skirt.segments = 48;
        spec.skirt.rows = 16;
        return spec;
    }
    spec.iterations = 20;
    // 20 of the air, as the paper's dancer (session 55; with the air on the legs too it took
    // 40, and ran away with 20): with the air between the layers, 40 gave 1,982 crossing pairs
    // at most, 20 give 2,105 and the step 17% cheaper.
    spec.airIterations = 20;
    // The air between the layers only: the air that rode on the legs' skin was inverted by the
    // skinning where the legs fold through themselves (the hip crease, the knees) in the leap,
    // and tore the layers through each other (with 40 air iterations: at most 6,460 crossing
    // pairs against 1,982, 702 air tets inverted after a step against 20; docs/characters.md).
    spec.airMeshes.clear();
    spec.selfCollision = false;
    // The dance once, then a pose held: looping, the air inverted by the thousand at the loop's
    // second seam (step 380) and the skirt ran away; held, it comes to rest. Held at 2.9 s, not
    // at the clip's end (3.3 s), where the hands come back against the hips as they start it,
    // with no room for three layers between: a skirt held there crosses the hands in about 300
    // pairs of triangles for ever (docs/characters.md).
    spec.edits += ",wrap=clamp,end=2.9";
    return spec;
}

namespace {

// Whether a point is inside a skirt's outer layer: a horizontal ray from the skirt's axis
// through it meets the layer beyond it (below the hem, the hem's outline; above the waist, the
// waistband's). The layer's triangles are binned by their angle around the axis, so each point
// tests a few of them.
std::function<bool(const Vec3&)> insideOuterLayer(const Scene& scene, const Body& outer) {
    constexpr Real kPi = 3.14159265358979323846;
    constexpr int kBins = 256;
    const auto& x = scene.particles.positions;
    Vec3 axis = Vec3::Zero();
    for (Index i = outer.firstParticle; i < outer.firstParticle + outer.particleCount; ++i) {
        axis += x[i];
    }
    axis /= Real(std::max<Index>(1, outer.particleCount));
    const auto bin = [axis](const Vec3& p) {
        const Real angle = std::atan2(p.z() - axis.z(), p.x() - axis.x());
        return std::clamp(int((angle + kPi) / (2 * kPi) * kBins), 0, kBins - 1);
    };
    auto bins = std::make_shared<std::vector<std::vector<std::array<Vec3, 3>>>>(kBins);
    for (const Triangle& t : outer.triangles) {
        int lo = bin(x[t[0]]), hi = lo;
        for (int k = 1; k < 3; ++k) {
            const int b = bin(x[t[k]]);
            // The shorter way round (a triangle across the angle's seam wraps).
            if ((b - lo + kBins) % kBins <= kBins / 2 &&
                (b - lo + kBins) % kBins > (hi - lo + kBins) % kBins) {
                hi = b;
            } else if ((lo - b + kBins) % kBins <= kBins / 2 && (lo - b + kBins) % kBins > 0) {
                lo = b;
            }
        }
        for (int b = lo;; b = (b + 1) % kBins) {
            (*bins)[std::size_t(b)].push_back({x[t[0]], x[t[1]], x[t[2]]});
            if (b == hi) {
                break;
            }
        }
    }
    Real hem = std::numeric_limits<Real>::infinity();
    Real waist = -hem;
    for (Index i = outer.firstParticle; i < outer.firstParticle + outer.particleCount; ++i) {
        hem = std::min(hem, x[i].y());
        waist = std::max(waist, x[i].y());
    }
    // Below the hem, the hem's outline straight down (the air around the legs under the skirt,
    // which a knee brings up into it); above the waist, the waistband's straight up (the hips).
    hem += 1e-4;
    waist -= 1e-4;
    return [axis, bins, bin, hem, waist](Vec3 p) {
        p.y() = std::clamp(p.y(), hem, waist);
        const Vec3 o(axis.x(), p.y(), axis.z());
        const Vec3 d = p - o;
        if (d.squaredNorm() < 1e-12) {
            return true;
        }
        for (const auto& tri : (*bins)[std::size_t(bin(p))]) {
            if (rayTriangle(o, d, tri[0], tri[1], tri[2]) > 1) {
                return true;
            }
        }
        return false;
    };
}

// The skin of the spec's meshes between the hem (less airBelowHem) and the waist (less
// airBelowWaist) as a body riding on the skin, and the air around it and the skirt's layers;
// with no meshes, the air between the layers.
Result<AirReport> addDancerAir(Scene& scene, int character, const DancerSpec& spec,
                               Real waistHeight) {
    Real hem = waistHeight;
    for (const Body& body : scene.bodies) {
        hem = std::min(hem, scene.bounds(body).min.y());
    }
    AirOptions air;
    air.margin = 0.1;
    air.boxSubdivisions = 4;
    air.dropContainer = true;
    // The skirt's layers are the scene's bodies so far, innermost first.
    const auto insideSkirt = insideOuterLayer(scene, scene.bodies.back());
    if (spec.airMeshes.empty()) {
        // Between the layers: inside the outer layer's outline, outside the inner one's.
        const auto insideInner = insideOuterLayer(scene, scene.bodies.front());
        air.keep = [&](const Vec3& centroid, bool) {
            return insideSkirt(centroid) && !insideInner(centroid);
        };
        return tessellateAir(scene, air);
    }
    const Character& ch = scene.characters[std::size_t(character)];
    const Collider& skin = scene.colliders[std::size_t(ch.collider)];
    const Real low = hem - spec.airBelowHem;
    const Real high = waistHeight - spec.airBelowWaist;
    std::vector<Index> band;
    Index first = 0;
    for (const CharacterMesh& mesh : ch.meshes) {
        const bool chosen = std::find(spec.airMeshes.begin(), spec.airMeshes.end(), mesh.name) !=
                            spec.airMeshes.end();
        const Index count = Index(mesh.triangles.size() * ch.trianglesPerMeshTriangle());
        for (Index t = first; chosen && t < first + count; ++t) {
            const Triangle& tri = skin.triangles[t];
            if (std::all_of(tri.begin(), tri.end(), [&](Index v) {
                    return skin.vertices[v].y() >= low && skin.vertices[v].y() <= high;
                })) {
                band.push_back(t);
            }
        }
        first += count;
    }
    Result<std::size_t> legs = addSkinBody(scene, character, band, ch.name + " skin");
    if (!legs) {
        return Error{legs.error()};
    }
    // TetGen needs facets that do not cross: the legs' skin crosses itself where the thighs
    // meet, and those triangles are left out of the boundary (the air there reaches into the
    // legs, where nothing moves).
    Body& skinBody = scene.bodies[*legs];
    std::vector<char> crossing(skinBody.triangles.size(), 0);
    for (const TriangleIntersection& pair : findIntersections(scene)) {
        if (pair.bodyA == *legs) {
            crossing[pair.triangleA] = 1;
        }
        if (pair.bodyB == *legs) {
            crossing[pair.triangleB] = 1;
        }
    }
    std::vector<Triangle> kept;
    for (std::size_t t = 0; t < skinBody.triangles.size(); ++t) {
        if (crossing[t] == 0) {
            kept.push_back(skinBody.triangles[t]);
        }
    }
    skinBody.triangles = std::move(kept);
    // The air inside the outer layer, less the tets inside the legs (all their corners on the
    // skin, and their centroid under the legs' skin; the torso's, which overlaps the hips, has
    // no say): nothing there moves, and the skinning would only
    // deform them. Fixed tets outside the skin stay: they keep cloth off the skin there.
    Collider legsSkin;
    legsSkin.vertices = scene.particles.positions;
    legsSkin.triangles = skinBody.triangles;
    MovingMeshCollider skinSide;
    skinSide.build(legsSkin);
    air.keep = [&](const Vec3& centroid, bool fixed) {
        if (!insideSkirt(centroid)) {
            return false;
        }
        SurfacePoint s;
        Vec3 velocity;
        return !fixed || !skinSide.closest(centroid, 1.0, s, velocity) || s.distance > 0;
    };
    return tessellateAir(scene, air);
}

} // namespace

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
    if (spec.air) {
        if (Result<AirReport> air = addDancerAir(scene, c, spec, waistHeight); !air) {
            return Error{name + ": " + air.error()};
        }
    }
    SolverSettings& s = scene.solver;
    s.timeStep = 1.0 / 60;
    s.substeps = 2;
    s.iterations = spec.iterations;
    s.airIterations = spec.airIterations;
    s.selfCollision = spec.selfCollision;
    // Below half a triangle's height (the paper's skirt has 7 mm edges): a thicker cloth finds
    // contacts between neighbouring triangles of one flat sheet and pushes the sheet apart.
    s.clothThickness = 0.002;
    s.collisionMargin = 0.003;
    // The paper turns the optimisation off for its dancer, whose layers barely move against each
    // other; this one kicks its knees up into the skirt (a large relative motion, Air Meshes
    // §4), and without the pass the air between thigh and layers locks within a second.
    s.airOptimizationInterval = 1;
    ensureConstraintGroups(scene);
    return scene;
}

const std::vector<SceneInfo>& characterSceneCatalogue() {
    static const std::vector<SceneInfo> scenes = {
        {"dancer", "A dancing character in a skirt of three layers, 47,616 triangles, pinned at "
                   "the waist, with about 96,000 air tets between the layers and no other "
                   "self-collision (Air Meshes, Fig. 1; needs assimp-testmodels; the layers "
                   "cross while it leaps)"},
        {"dancer-small", "A dancing character (assimp-testmodels' BCN_Epileptic) in a skirt of two "
                         "layers with air between them and the legs (Air Meshes, Fig. 1, "
                         "small; the layers cross while it leaps)"},
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
