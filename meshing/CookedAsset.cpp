#include "meshing/CookedAsset.h"

#include "meshing/ProjectFile.h"
#include "meshing/SceneJson.h"
#include "meshing/VolumeMeshing.h" // triangleFrame

namespace pbd {

using nlohmann::json;
using namespace sceneio;

namespace {

// Component-major arrays (as the batches hold them) to element-major: e's K values together.
template <std::size_t K> std::vector<Real> interleave(const std::array<std::vector<Real>, K>& a) {
    const std::size_t n = a[0].size();
    std::vector<Real> out(n * K);
    for (std::size_t e = 0; e < n; ++e) {
        for (std::size_t k = 0; k < K; ++k) {
            out[e * K + k] = a[k][e];
        }
    }
    return out;
}

template <std::size_t K>
void deinterleave(const json& j, const char* key, std::size_t n,
                  std::array<std::vector<Real>, K>& out, const std::string& w) {
    const auto v = get<std::vector<Real>>(j, key, w);
    if (v.size() != n * K) {
        throw FormatError{w + "." + key + ": " + std::to_string(v.size()) + " values for " +
                          std::to_string(n) + " elements of " + std::to_string(K)};
    }
    for (std::size_t k = 0; k < K; ++k) {
        out[k].resize(n);
        for (std::size_t e = 0; e < n; ++e) {
            out[k][e] = v[e * K + k];
        }
    }
}

template <class Batch> json elementsJson(const Batch& b) {
    return json{{"count", b.size()},
                {"particles", flat(b.particles)},
                {"compliance", interleave(b.compliance)},
                {"stiffness", interleave(b.stiffness)},
                {"colourOffsets", b.colourOffsets}};
}

// Reads a batch's elements; returns its colour ranges (empty when absent).
template <class Batch>
std::vector<Index> readElements(const json& j, Batch& b, const std::string& w) {
    b = Batch{};
    for (const auto& p : toElements<Batch::kParticles>(at(j, "particles", w), w + ".particles")) {
        b.addElement(p);
    }
    if (j.contains("count") && get<std::size_t>(j, "count", w) != b.size()) {
        throw FormatError{w + ".count: " + std::to_string(get<std::size_t>(j, "count", w)) +
                          " elements said, " + std::to_string(b.size()) + " given"};
    }
    deinterleave(j, "compliance", b.size(), b.compliance, w);
    deinterleave(j, "stiffness", b.size(), b.stiffness, w);
    std::vector<Index> offsets;
    if (j.contains("colourOffsets")) {
        for (const json& e : at(j, "colourOffsets", w)) {
            offsets.push_back(wholeNumber<Index>(e, w + ".colourOffsets"));
        }
    }
    return offsets;
}

json constraintsJson(const ConstraintSet& c) {
    json j;
    j["colours"] = c.colourCount;
    json distance = elementsJson(c.distance);
    distance["restLength"] = c.distance.restLength;
    j["distance"] = distance;
    json bending = elementsJson(c.bending);
    bending["restAngle"] = c.bending.restAngle;
    bending["model"] = toString(c.bending.model);
    if (c.bending.model == BendingModel::Isometric) {
        bending["weight"] = interleave(c.bending.weight);
    }
    j["bending"] = bending;
    json tris = elementsJson(c.strainTriangles);
    tris["qInverse"] = interleave(c.strainTriangles.qInverse);
    tris["rest"] = interleave(c.strainTriangles.rest);
    tris["normalisedShear"] = c.strainTriangles.normalisedShear;
    j["strainTriangles"] = tris;
    json tets = elementsJson(c.strainTets);
    tets["qInverse"] = interleave(c.strainTets.qInverse);
    tets["rest"] = interleave(c.strainTets.rest);
    tets["normalisedShear"] = c.strainTets.normalisedShear;
    j["strainTets"] = tets;
    json area = elementsJson(c.area);
    area["restValue"] = c.area.restValue;
    j["area"] = area;
    json volume = elementsJson(c.volume);
    volume["restValue"] = c.volume.restValue;
    j["volume"] = volume;
    json planar = elementsJson(c.planarArea);
    planar["restValue"] = c.planarArea.restValue;
    j["planarArea"] = planar;
    j["attachments"] = attachmentsToJson(c.attachments, false);
    j["attachments"]["count"] = c.attachments.size();
    j["pressure"] = pressureToJson(c.pressure, false);
    return j;
}

std::vector<Real> restArray(const json& j, const char* key, std::size_t n, const std::string& w) {
    auto v = get<std::vector<Real>>(j, key, w);
    checkSize(v, n, w + "." + key);
    return v;
}

// Gives a batch the colours its ranges say.
template <class Batch>
void applyColours(Batch& b, std::vector<Index> offsets, int colours, const std::string& w) {
    if (offsets.empty() && b.size() == 0) {
        offsets.assign(static_cast<std::size_t>(colours) + 1, 0); // an absent, empty batch
    }
    if (offsets.size() != static_cast<std::size_t>(colours) + 1 || offsets.front() != 0 ||
        offsets.back() != b.size()) {
        throw FormatError{w + ".colourOffsets: expected " + std::to_string(colours + 1) +
                          " offsets from 0 to " + std::to_string(b.size())};
    }
    b.colour.resize(b.size());
    for (int c = 0; c < colours; ++c) {
        if (offsets[c + 1] < offsets[c] || offsets[c + 1] > b.size()) {
            throw FormatError{w + ".colourOffsets: offset " + std::to_string(c + 1) +
                              " is smaller than the one before or past the end"};
        }
        for (Index e = offsets[c]; e < offsets[c + 1]; ++e) {
            b.colour[e] = c;
        }
    }
    b.colourOffsets = offsets;
}

// The batches' keys, in forEachBatch's order.
constexpr std::array<const char*, 7> kBatchKeys{
    "distance", "bending", "strainTriangles", "strainTets", "area", "volume", "planarArea"};

ConstraintSet constraintsFrom(const json& j, const std::string& where) {
    ConstraintSet c;
    const int colours = getOr<int>(j, "colours", 0, where);
    std::array<std::vector<Index>, 7> offsets;
    if (j.contains("distance")) {
        const std::string w = where + ".distance";
        offsets[0] = readElements(j["distance"], c.distance, w);
        c.distance.restLength = restArray(j["distance"], "restLength", c.distance.size(), w);
    }
    if (j.contains("bending")) {
        const std::string w = where + ".bending";
        offsets[1] = readElements(j["bending"], c.bending, w);
        c.bending.restAngle = restArray(j["bending"], "restAngle", c.bending.size(), w);
        const auto model = getOr<std::string>(j["bending"], "model", "bridson", w);
        const auto known = bendingModelFromString(model);
        if (!known) {
            throw FormatError{w + ".model: unknown value '" + model + "'"};
        }
        c.bending.model = *known;
        if (c.bending.model == BendingModel::Isometric) {
            deinterleave(j["bending"], "weight", c.bending.size(), c.bending.weight, w);
            for (auto& l : c.bending.lambdaYZ) {
                l.assign(c.bending.size(), 0);
            }
        }
    }
    if (j.contains("strainTriangles")) {
        const std::string w = where + ".strainTriangles";
        const json& s = j["strainTriangles"];
        offsets[2] = readElements(s, c.strainTriangles, w);
        deinterleave(s, "qInverse", c.strainTriangles.size(), c.strainTriangles.qInverse, w);
        deinterleave(s, "rest", c.strainTriangles.size(), c.strainTriangles.rest, w);
        c.strainTriangles.normalisedShear = getOr<bool>(s, "normalisedShear", true, w);
    }
    if (j.contains("strainTets")) {
        const std::string w = where + ".strainTets";
        const json& s = j["strainTets"];
        offsets[3] = readElements(s, c.strainTets, w);
        deinterleave(s, "qInverse", c.strainTets.size(), c.strainTets.qInverse, w);
        deinterleave(s, "rest", c.strainTets.size(), c.strainTets.rest, w);
        c.strainTets.normalisedShear = getOr<bool>(s, "normalisedShear", true, w);
    }
    if (j.contains("area")) {
        const std::string w = where + ".area";
        offsets[4] = readElements(j["area"], c.area, w);
        c.area.restValue = restArray(j["area"], "restValue", c.area.size(), w);
    }
    if (j.contains("volume")) {
        const std::string w = where + ".volume";
        offsets[5] = readElements(j["volume"], c.volume, w);
        c.volume.restValue = restArray(j["volume"], "restValue", c.volume.size(), w);
    }
    if (j.contains("planarArea")) {
        const std::string w = where + ".planarArea";
        offsets[6] = readElements(j["planarArea"], c.planarArea, w);
        c.planarArea.restValue = restArray(j["planarArea"], "restValue", c.planarArea.size(), w);
    }
    if (j.contains("attachments")) {
        c.attachments = attachmentsFromJson(j["attachments"], where + ".attachments");
    }
    if (j.contains("pressure")) {
        c.pressure = pressureFromJson(j["pressure"], where + ".pressure");
    }
    if (colours > 0) {
        int batch = 0;
        forEachBatch(c, [&](auto& b) {
            const int i = batch++;
            applyColours(b, offsets[i], colours, where + "." + kBatchKeys[i]);
        });
        c.colourCount = colours;
        c.colouredElements = c.batchElementCount();
    }
    return c;
}

json bodyJson(const Body& b, const Particles& particles) {
    json body{{"name", b.name},
              {"kind", toString(b.kind)},
              {"firstParticle", b.firstParticle},
              {"particleCount", b.particleCount},
              {"triangles", flat(b.triangles)},
              {"tets", flat(b.tets)}};
    if (b.hasUVs()) {
        std::vector<Real> frames;
        frames.reserve(9 * b.triangles.size());
        for (std::size_t t = 0; t < b.triangles.size(); ++t) {
            const Triangle& tri = b.triangles[t];
            const Mat3 frame =
                triangleFrame(particles.positions[tri[0]], particles.positions[tri[1]],
                              particles.positions[tri[2]], b.triangleUVs[t].data());
            for (int k = 0; k < 9; ++k) {
                frames.push_back(frame(k % 3, k / 3));
            }
        }
        body["uvs"] = uvsToJson(b.triangleUVs);
        body["triangleFrames"] = frames;
    }
    if (!b.tetFrames.empty()) {
        std::vector<Real> frames;
        frames.reserve(9 * b.tetFrames.size());
        for (const Mat3& f : b.tetFrames) {
            for (int k = 0; k < 9; ++k) {
                frames.push_back(f(k % 3, k / 3));
            }
        }
        body["tetFrames"] = frames;
    }
    return body;
}

Body bodyFrom(const json& b, const std::string& w) {
    Body body;
    body.name = get<std::string>(b, "name", w);
    body.kind = parseEnum<BodyKind, 4>(get<std::string>(b, "kind", w), w + ".kind");
    body.firstParticle = get<Index>(b, "firstParticle", w);
    body.particleCount = get<Index>(b, "particleCount", w);
    body.triangles = toElements<3>(at(b, "triangles", w), w + ".triangles");
    body.tets = toElements<4>(getOr<json>(b, "tets", json::array(), w), w + ".tets");
    if (b.contains("uvs")) {
        body.triangleUVs = uvsFromJson(b, body.triangles.size(), w);
    }
    if (b.contains("tetFrames")) {
        const auto f = get<std::vector<Real>>(b, "tetFrames", w);
        if (f.size() != 9 * body.tets.size()) {
            throw FormatError{w + ".tetFrames: expected 9 numbers per tet"};
        }
        body.tetFrames.resize(body.tets.size());
        for (std::size_t t = 0; t < body.tets.size(); ++t) {
            for (int k = 0; k < 9; ++k) {
                body.tetFrames[t](k % 3, k / 3) = f[9 * t + k];
            }
        }
    }
    return body;
}

} // namespace

std::string cookedAssetToJson(const Scene& scene, int indent) {
    // The loader's solve order is the colour order written here: colour (as the solver would)
    // or restore the colour order a partitioned set lost.
    ConstraintSet constraints = scene.constraints;
    if (!constraints.isColoured() && constraints.batchElementCount() > 0) {
        colourConstraints(constraints, scene.particles.size());
    } else {
        sortByColour(constraints);
    }
    json j;
    j["format"] = kCookedAssetFormat;
    j["version"] = kCookedAssetVersion;
    j["name"] = scene.name;
    j["units"] = {{"length", "m"}, {"mass", "kg"}, {"time", "s"}, {"angle", "rad"}};
    const Particles& p = scene.particles;
    j["particles"] = {{"count", p.size()},
                      {"positions", flat(p.positions)},
                      {"velocities", flat(p.velocities)},
                      {"inverseMasses", p.inverseMasses}};
    if (!p.forces.empty()) {
        j["particles"]["forces"] = flat(p.forces);
    }
    json bodies = json::array();
    for (const Body& b : scene.bodies) {
        bodies.push_back(bodyJson(b, p));
    }
    j["bodies"] = bodies;
    j["constraints"] = constraintsJson(constraints);
    j["air"] = {{"firstParticle", scene.air.firstParticle},
                {"particleCount", scene.air.particleCount},
                {"tets", flat(scene.air.tets)},
                {"triangles", flat(scene.air.triangles)}};
    json colliders = json::array();
    for (const Collider& c : scene.colliders) {
        colliders.push_back(colliderToJson(c));
    }
    j["colliders"] = colliders;
    rigidToJson(scene, j);
    embeddedToJson(scene, j);
    charactersToJson(scene, j);
    j["solver"] = solverToJson(scene.solver);
    return sceneio::dumpJson(j, indent);
}

Result<Scene> sceneio::cookedAssetFromDocument(const json& j, const std::string& origin) {
    Scene scene;
    const std::string& w = origin;
    try {
        if (getOr<std::string>(j, "format", "", w) != kCookedAssetFormat) {
            return Error{origin + " is not a PBD Lab cooked asset (no \"format\": \"" +
                         kCookedAssetFormat + "\")"};
        }
        const int version = get<int>(j, "version", w);
        if (version > kCookedAssetVersion) {
            return Error{origin + " was written by a newer PBD Lab (asset version " +
                         std::to_string(version) + ")"};
        }
        scene.name = getOr<std::string>(j, "name", "", w);
        const json& p = at(j, "particles", w);
        const std::string pw = w + ".particles";
        scene.particles.positions = toVecs(at(p, "positions", pw), pw + ".positions");
        scene.particles.velocities = toVecs(at(p, "velocities", pw), pw + ".velocities");
        scene.particles.inverseMasses = get<std::vector<Real>>(p, "inverseMasses", pw);
        if (p.contains("forces")) {
            scene.particles.forces = toVecs(p["forces"], pw + ".forces");
        }
        const std::size_t n = scene.particles.positions.size();
        if (scene.particles.velocities.size() != n || scene.particles.inverseMasses.size() != n ||
            (p.contains("count") && get<std::size_t>(p, "count", pw) != n)) {
            throw FormatError{w + ".particles: count, positions, velocities and inverseMasses "
                                  "do not agree"};
        }
        const json& bodies = at(j, "bodies", w);
        for (std::size_t i = 0; i < bodies.size(); ++i) {
            scene.bodies.push_back(bodyFrom(bodies[i], w + ".bodies[" + std::to_string(i) + "]"));
        }
        scene.constraints = constraintsFrom(at(j, "constraints", w), w + ".constraints");
        if (j.contains("air")) {
            const json& a = j["air"];
            scene.air.firstParticle = get<Index>(a, "firstParticle", w + ".air");
            scene.air.particleCount = get<Index>(a, "particleCount", w + ".air");
            scene.air.tets = toElements<4>(at(a, "tets", w + ".air"), w + ".air.tets");
            scene.air.triangles =
                toElements<3>(getOr<json>(a, "triangles", json::array(), w), w + ".air.triangles");
        }
        if (j.contains("colliders")) {
            for (std::size_t i = 0; i < j["colliders"].size(); ++i) {
                scene.colliders.push_back(colliderFromJson(
                    j["colliders"][i], w + ".colliders[" + std::to_string(i) + "]"));
            }
        }
        rigidFromJson(j, scene, w);
        embeddedFromJson(j, scene, w);
        charactersFromJson(j, scene, w);
        scene.solver = solverFromJson(at(j, "solver", w), w + ".solver");
    } catch (const FormatError& e) {
        return Error{e.message};
    } catch (const json::exception& e) {
        return Error{origin + ": " + e.what()};
    }
    const auto problems = validateScene(scene);
    if (!problems.empty()) {
        return Error{origin + ": " + problems.front() +
                     (problems.size() > 1
                          ? " (and " + std::to_string(problems.size() - 1) + " more problems)"
                          : "")};
    }
    if (scene.constraints.colourCount > 0 &&
        !coloursAreIndependent(scene.constraints, scene.particles.size())) {
        return Error{origin + ": constraints.colourOffsets: two constraints of one colour share "
                              "a particle"};
    }
    // Groups for editing (pbdlab-cli --group, the Properties dock); the elements keep their
    // compliances.
    recomputeMeasures(scene.constraints, scene.particles.positions);
    ensureConstraintGroups(scene, false);
    return scene;
}

Result<Scene> cookedAssetFromJson(const std::string& text, const std::string& origin) {
    Result<json> j = parseJson(text, origin);
    if (!j) {
        return Error{j.error()};
    }
    return sceneio::cookedAssetFromDocument(j.value(), origin);
}

Result<bool> exportCookedAsset(const Scene& scene, const std::filesystem::path& path, int indent) {
    return writeFileAtomically(path, cookedAssetToJson(scene, indent));
}

} // namespace pbd
