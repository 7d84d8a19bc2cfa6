#include "meshing/ProjectFile.h"

#include "meshing/CookedAsset.h"
#include "meshing/SceneJson.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

namespace pbd {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace sceneio;

namespace {

template <class Batch> json batchCommon(const Batch& b) {
    return json{{"particles", flat(b.particles)},
                {"compliance", arrays(b.compliance)},
                {"stiffness", arrays(b.stiffness)},
                {"group", b.group},
                {"measure", b.measure}};
}

template <class Batch> void readCommon(const json& j, Batch& b, const std::string& where) {
    b = Batch{};
    const auto particles =
        toElements<Batch::kParticles>(at(j, "particles", where), where + ".particles");
    for (const auto& p : particles) {
        b.addElement(p);
    }
    toArrays(at(j, "compliance", where), b.compliance, b.size(), where + ".compliance");
    toArrays(at(j, "stiffness", where), b.stiffness, b.size(), where + ".stiffness");
    // Format 2: each element's constraint group and measure (format 1 files get them from
    // ensureConstraintGroups and recomputeMeasures after loading).
    if (j.contains("group")) {
        b.group = get<std::vector<int>>(j, "group", where);
        b.measure = get<std::vector<Real>>(j, "measure", where);
        if (b.group.size() != b.size() || b.measure.size() != b.size()) {
            throw FormatError{where + ": group or measure arrays do not match the elements"};
        }
    }
}

json groupToJson(const ConstraintGroup& g) {
    const int K = materialComponents(g.type);
    json m = json::array(), k = json::array();
    for (int i = 0; i < K; ++i) {
        m.push_back(material(g.material[i]));
        k.push_back(g.pbdStiffness[i]);
    }
    json j{{"name", g.name}, {"type", toString(g.type)}, {"body", g.body}, {"enabled", g.enabled},
           {"material", m},  {"pbdStiffness", k}};
    if (restStretchComponents(g.type) > 0) {
        j["restStretch"] = std::vector<Real>(g.restStretch.begin(),
                                             g.restStretch.begin() + restStretchComponents(g.type));
    }
    if (g.type == ConstraintType::Pressure) {
        j["pressure"] = g.pressure;
    }
    return j;
}

ConstraintGroup groupFromJson(const json& j, const std::string& w) {
    ConstraintGroup g;
    g.name = get<std::string>(j, "name", w);
    g.type = parseEnum<ConstraintType, kConstraintTypeCount>(get<std::string>(j, "type", w),
                                                             w + ".type");
    g.body = get<int>(j, "body", w);
    g.enabled = getOr<bool>(j, "enabled", true, w);
    const int K = materialComponents(g.type);
    const json& m = at(j, "material", w);
    const auto k = get<std::vector<Real>>(j, "pbdStiffness", w);
    if (!m.is_array() || int(m.size()) != K || int(k.size()) != K) {
        throw FormatError{w + ": a " + std::string(toString(g.type)) + " group has " +
                          std::to_string(K) + " material and PBD stiffness values"};
    }
    for (int i = 0; i < K; ++i) {
        g.material[i] = materialFrom(m[i], w + ".material");
        g.pbdStiffness[i] = k[i];
    }
    if (restStretchComponents(g.type) > 0) {
        const auto s = get<std::vector<Real>>(j, "restStretch", w);
        if (int(s.size()) != restStretchComponents(g.type)) {
            throw FormatError{w + ".restStretch: expected " +
                              std::to_string(restStretchComponents(g.type)) + " values"};
        }
        std::copy(s.begin(), s.end(), g.restStretch.begin());
    }
    g.pressure = getOr<Real>(j, "pressure", 1.0, w);
    return g;
}

json constraintsToJson(const ConstraintSet& c) {
    json j;
    json distance = batchCommon(c.distance);
    distance["restLength"] = c.distance.restLength;
    j["distance"] = distance;
    json bending = batchCommon(c.bending);
    bending["restAngle"] = c.bending.restAngle;
    bending["model"] = toString(c.bending.model);
    if (c.bending.model == BendingModel::Isometric) {
        bending["weight"] = arrays(c.bending.weight);
    }
    j["bending"] = bending;
    json strainTriangles = batchCommon(c.strainTriangles);
    strainTriangles["qInverse"] = arrays(c.strainTriangles.qInverse);
    strainTriangles["rest"] = arrays(c.strainTriangles.rest);
    strainTriangles["normalisedShear"] = c.strainTriangles.normalisedShear;
    j["strainTriangles"] = strainTriangles;
    json strainTets = batchCommon(c.strainTets);
    strainTets["qInverse"] = arrays(c.strainTets.qInverse);
    strainTets["rest"] = arrays(c.strainTets.rest);
    strainTets["normalisedShear"] = c.strainTets.normalisedShear;
    j["strainTets"] = strainTets;
    json area = batchCommon(c.area);
    area["restValue"] = c.area.restValue;
    j["area"] = area;
    json volume = batchCommon(c.volume);
    volume["restValue"] = c.volume.restValue;
    j["volume"] = volume;
    json planarArea = batchCommon(c.planarArea);
    planarArea["restValue"] = c.planarArea.restValue;
    j["planarArea"] = planarArea;
    j["attachments"] = attachmentsToJson(c.attachments, true);
    j["pressure"] = pressureToJson(c.pressure, true);
    return j;
}

ConstraintSet constraintsFromJson(const json& j, const std::string& where) {
    ConstraintSet c;
    if (j.contains("distance")) {
        const std::string w = where + ".distance";
        readCommon(j["distance"], c.distance, w);
        c.distance.restLength = get<std::vector<Real>>(j["distance"], "restLength", w);
        checkSize(c.distance.restLength, c.distance.size(), w + ".restLength");
    }
    if (j.contains("bending")) {
        const std::string w = where + ".bending";
        readCommon(j["bending"], c.bending, w);
        c.bending.restAngle = get<std::vector<Real>>(j["bending"], "restAngle", w);
        checkSize(c.bending.restAngle, c.bending.size(), w + ".restAngle");
        const std::string model = getOr<std::string>(j["bending"], "model", "bridson", w);
        const auto known = bendingModelFromString(model);
        if (!known) {
            throw FormatError{w + ".model: unknown bending model '" + model +
                              "' (bridson, pbd-appendix or isometric)"};
        }
        c.bending.model = *known;
        if (c.bending.model == BendingModel::Isometric) {
            toArrays(at(j["bending"], "weight", w), c.bending.weight, c.bending.size(),
                     w + ".weight");
            for (auto& l : c.bending.lambdaYZ) {
                l.assign(c.bending.size(), 0);
            }
        }
    }
    if (j.contains("strainTriangles")) {
        const std::string w = where + ".strainTriangles";
        const json& s = j["strainTriangles"];
        readCommon(s, c.strainTriangles, w);
        toArrays(at(s, "qInverse", w), c.strainTriangles.qInverse, c.strainTriangles.size(), w);
        toArrays(at(s, "rest", w), c.strainTriangles.rest, c.strainTriangles.size(), w);
        c.strainTriangles.normalisedShear = getOr<bool>(s, "normalisedShear", true, w);
    }
    if (j.contains("strainTets")) {
        const std::string w = where + ".strainTets";
        const json& s = j["strainTets"];
        readCommon(s, c.strainTets, w);
        toArrays(at(s, "qInverse", w), c.strainTets.qInverse, c.strainTets.size(), w);
        toArrays(at(s, "rest", w), c.strainTets.rest, c.strainTets.size(), w);
        c.strainTets.normalisedShear = getOr<bool>(s, "normalisedShear", true, w);
    }
    if (j.contains("area")) {
        const std::string w = where + ".area";
        readCommon(j["area"], c.area, w);
        c.area.restValue = get<std::vector<Real>>(j["area"], "restValue", w);
        checkSize(c.area.restValue, c.area.size(), w + ".restValue");
    }
    if (j.contains("planarArea")) {
        const std::string w = where + ".planarArea";
        readCommon(j["planarArea"], c.planarArea, w);
        c.planarArea.restValue = get<std::vector<Real>>(j["planarArea"], "restValue", w);
        checkSize(c.planarArea.restValue, c.planarArea.size(), w + ".restValue");
    }
    if (j.contains("volume")) {
        const std::string w = where + ".volume";
        readCommon(j["volume"], c.volume, w);
        c.volume.restValue = get<std::vector<Real>>(j["volume"], "restValue", w);
        checkSize(c.volume.restValue, c.volume.size(), w + ".restValue");
    }
    if (j.contains("attachments")) {
        c.attachments = attachmentsFromJson(j["attachments"], where + ".attachments");
    }
    if (j.contains("pressure")) {
        c.pressure = pressureFromJson(j["pressure"], where + ".pressure");
    }
    return c;
}

} // namespace

std::string projectToJson(const Scene& scene, int indent) {
    json j;
    j["format"] = "pbdlab-project";
    j["version"] = kProjectFormatVersion;
    j["name"] = scene.name;
    j["description"] = scene.description;
    const Particles& p = scene.particles;
    j["particles"] = {{"positions", flat(p.positions)},
                      {"velocities", flat(p.velocities)},
                      {"inverseMasses", p.inverseMasses}};
    if (!p.forces.empty()) {
        j["particles"]["forces"] = flat(p.forces);
    }
    json bodies = json::array();
    for (const Body& b : scene.bodies) {
        json body{{"name", b.name},
                  {"kind", toString(b.kind)},
                  {"firstParticle", b.firstParticle},
                  {"particleCount", b.particleCount},
                  {"triangles", flat(b.triangles)},
                  {"tets", flat(b.tets)}};
        if (b.hasUVs()) {
            body["uvs"] = uvsToJson(b.triangleUVs);
        }
        if (!b.tetFrames.empty()) {
            json frames = json::array();
            for (const Mat3& f : b.tetFrames) {
                for (const auto& v : flat(f)) {
                    frames.push_back(v);
                }
            }
            body["tetFrames"] = frames;
        }
        bodies.push_back(body);
    }
    j["bodies"] = bodies;
    j["air"] = {{"firstParticle", scene.air.firstParticle},
                {"particleCount", scene.air.particleCount},
                {"tets", flat(scene.air.tets)}};
    if (!scene.air.triangles.empty()) {
        j["air"]["triangles"] = flat(scene.air.triangles); // a 2D scene's air
    }
    json colliders = json::array();
    for (const Collider& c : scene.colliders) {
        colliders.push_back(colliderToJson(c));
    }
    j["colliders"] = colliders;
    rigidToJson(scene, j);
    embeddedToJson(scene, j);
    charactersToJson(scene, j);
    j["constraints"] = constraintsToJson(scene.constraints);
    json groups = json::array();
    for (const ConstraintGroup& g : scene.constraintGroups) {
        groups.push_back(groupToJson(g));
    }
    j["constraintGroups"] = groups;
    j["solver"] = solverToJson(scene.solver);
    return sceneio::dumpJson(j, indent);
}

Result<Scene> projectFromJson(const std::string& text, const std::string& origin) {
    Result<json> j = parseJson(text, origin);
    if (!j) {
        return Error{j.error()};
    }
    return sceneio::projectFromDocument(j.value(), origin);
}

Result<Scene> sceneio::projectFromDocument(const json& j, const std::string& origin) {
    Scene scene;
    try {
        const std::string w = origin;
        if (getOr<std::string>(j, "format", "", w) != "pbdlab-project") {
            return Error{origin + " is not a PBD Lab project (no \"format\": \"pbdlab-project\")"};
        }
        const int version = get<int>(j, "version", w);
        if (version > kProjectFormatVersion) {
            return Error{origin + " was written by a newer PBD Lab (format version " +
                         std::to_string(version) + ")"};
        }
        scene.name = getOr<std::string>(j, "name", "", w);
        scene.description = getOr<std::string>(j, "description", "", w);
        const json& p = at(j, "particles", w);
        scene.particles.positions = toVecs(at(p, "positions", w), w + ".particles.positions");
        scene.particles.velocities = toVecs(at(p, "velocities", w), w + ".particles.velocities");
        scene.particles.inverseMasses = get<std::vector<Real>>(p, "inverseMasses", w);
        if (p.contains("forces")) {
            scene.particles.forces = toVecs(p["forces"], w + ".particles.forces");
        }
        const json& bodies = at(j, "bodies", w);
        for (std::size_t i = 0; i < bodies.size(); ++i) {
            const std::string bw = w + ".bodies[" + std::to_string(i) + "]";
            const json& b = bodies[i];
            Body body;
            body.name = get<std::string>(b, "name", bw);
            body.kind = parseEnum<BodyKind, 4>(get<std::string>(b, "kind", bw), bw + ".kind");
            body.firstParticle = get<Index>(b, "firstParticle", bw);
            body.particleCount = get<Index>(b, "particleCount", bw);
            body.triangles = toElements<3>(at(b, "triangles", bw), bw + ".triangles");
            body.tets = toElements<4>(at(b, "tets", bw), bw + ".tets");
            if (b.contains("uvs")) {
                body.triangleUVs = uvsFromJson(b, body.triangles.size(), bw);
            }
            if (b.contains("tetFrames")) {
                const auto f = b["tetFrames"].get<std::vector<Real>>();
                if (f.size() != 9 * body.tets.size()) {
                    throw FormatError{bw + ".tetFrames: expected 9 numbers per tet"};
                }
                body.tetFrames.resize(body.tets.size());
                for (std::size_t t = 0; t < body.tets.size(); ++t) {
                    for (int k = 0; k < 9; ++k) {
                        body.tetFrames[t](k % 3, k / 3) = f[9 * t + k];
                    }
                }
            }
            scene.bodies.push_back(std::move(body));
        }
        if (j.contains("air")) {
            const json& a = j["air"];
            scene.air.firstParticle = get<Index>(a, "firstParticle", w + ".air");
            scene.air.particleCount = get<Index>(a, "particleCount", w + ".air");
            scene.air.tets = toElements<4>(at(a, "tets", w + ".air"), w + ".air.tets");
            if (a.contains("triangles")) {
                scene.air.triangles = toElements<3>(a["triangles"], w + ".air.triangles");
            }
        }
        if (j.contains("colliders")) {
            for (std::size_t i = 0; i < j["colliders"].size(); ++i) {
                scene.colliders.push_back(colliderFromJson(
                    j["colliders"][i], w + ".colliders[" + std::to_string(i) + "]"));
            }
        }
        rigidFromJson(j, scene, w);
        embeddedFromJson(j, scene, w);
        if (j.contains("constraints")) {
            scene.constraints = constraintsFromJson(j["constraints"], w + ".constraints");
        }
        charactersFromJson(j, scene, w); // after the attachments its pins name
        if (j.contains("constraintGroups")) {
            for (std::size_t i = 0; i < j["constraintGroups"].size(); ++i) {
                scene.constraintGroups.push_back(groupFromJson(
                    j["constraintGroups"][i], w + ".constraintGroups[" + std::to_string(i) + "]"));
            }
        } else {
            // Format 1: no groups or measures; the positions are the rest state a save writes.
            // The elements keep their compliances (the measures may differ in rounding).
            recomputeMeasures(scene.constraints, scene.particles.positions);
            ensureConstraintGroups(scene, false);
        }
        if (j.contains("solver")) {
            scene.solver = solverFromJson(j["solver"], w + ".solver");
        }
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
    return scene;
}

Result<bool> writeFileAtomically(const fs::path& path, const std::string& text) {
    const fs::path temporary = path.string() + ".saving";
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        if (!out) {
            return Error{"cannot write '" + temporary.string() + "'"};
        }
        out << text;
        out.flush();
        if (!out) {
            std::error_code ec;
            fs::remove(temporary, ec);
            return Error{"writing '" + path.string() + "' failed (disk full?)"};
        }
    }
    if (FILE* f = std::fopen(temporary.c_str(), "rb")) { // flush to disk before the rename
        ::fsync(fileno(f));
        std::fclose(f);
    }
    std::error_code ec;
    fs::rename(temporary, path, ec);
    if (ec) {
        fs::remove(temporary, ec);
        return Error{"cannot replace '" + path.string() + "': " + ec.message()};
    }
    return true;
}

Result<bool> saveProject(const Scene& scene, const fs::path& path) {
    return writeFileAtomically(path, projectToJson(scene, 1));
}

Result<Scene> loadProject(const fs::path& path) {
    Result<std::string> text = readTextFile(path);
    if (!text) {
        return Error{text.error()};
    }
    return projectFromJson(text.value(), quotedPath(path));
}

Result<Scene> loadSceneFile(const fs::path& path, bool* isAsset) {
    Result<std::string> text = readTextFile(path);
    if (!text) {
        return Error{text.error()};
    }
    const std::string origin = quotedPath(path);
    Result<json> j = parseJson(text.value(), origin);
    if (!j) {
        return Error{j.error()};
    }
    const json& document = j.value();
    const bool asset = document.is_object() && document.contains("format") &&
                       document["format"] == kCookedAssetFormat;
    if (isAsset) {
        *isAsset = asset;
    }
    if (asset) {
        return sceneio::cookedAssetFromDocument(document, origin);
    }
    return sceneio::projectFromDocument(document, origin);
}

} // namespace pbd
