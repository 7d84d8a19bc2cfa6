#include "meshing/ProjectFile.h"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

namespace pbd {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A load error with the JSON path where it happened.
struct FormatError {
    std::string message;
};

json vec(const Vec3& v) {
    return json::array({v.x(), v.y(), v.z()});
}

json flat(const std::vector<Vec3>& v) {
    json a = json::array();
    for (const Vec3& p : v) {
        a.push_back(p.x());
        a.push_back(p.y());
        a.push_back(p.z());
    }
    return a;
}

json flat(const Mat3& m) {
    json a = json::array();
    for (int k = 0; k < 9; ++k) {
        a.push_back(m(k % 3, k / 3));
    }
    return a;
}

template <std::size_t N> json flat(const std::vector<std::array<Index, N>>& elements) {
    json a = json::array();
    for (const auto& e : elements) {
        for (Index i : e) {
            a.push_back(i);
        }
    }
    return a;
}

template <std::size_t K> json arrays(const std::array<std::vector<Real>, K>& values) {
    json a = json::array();
    for (const auto& v : values) {
        a.push_back(v);
    }
    return a;
}

const json& at(const json& object, const char* key, const std::string& where) {
    if (!object.is_object() || !object.contains(key)) {
        throw FormatError{where + ": missing '" + key + "'"};
    }
    return object[key];
}

template <class T> T get(const json& object, const char* key, const std::string& where) {
    try {
        return at(object, key, where).get<T>();
    } catch (const json::exception&) {
        throw FormatError{where + ": '" + key + "' has the wrong type"};
    }
}

template <class T>
T getOr(const json& object, const char* key, T fallback, const std::string& where) {
    return object.contains(key) ? get<T>(object, key, where) : fallback;
}

Vec3 toVec(const json& a, const std::string& where) {
    if (!a.is_array() || a.size() != 3) {
        throw FormatError{where + ": expected 3 numbers"};
    }
    return Vec3(a[0].get<Real>(), a[1].get<Real>(), a[2].get<Real>());
}

std::vector<Vec3> toVecs(const json& a, const std::string& where) {
    const auto v = a.get<std::vector<Real>>();
    if (v.size() % 3 != 0) {
        throw FormatError{where + ": the number of coordinates is not a multiple of 3"};
    }
    std::vector<Vec3> out(v.size() / 3);
    for (std::size_t i = 0; i < out.size(); ++i) {
        out[i] = Vec3(v[3 * i], v[3 * i + 1], v[3 * i + 2]);
    }
    return out;
}

template <std::size_t N>
std::vector<std::array<Index, N>> toElements(const json& a, const std::string& where) {
    const auto v = a.get<std::vector<Index>>();
    if (v.size() % N != 0) {
        throw FormatError{where + ": the number of indices is not a multiple of " +
                          std::to_string(N)};
    }
    std::vector<std::array<Index, N>> out(v.size() / N);
    for (std::size_t i = 0; i < out.size(); ++i) {
        for (std::size_t k = 0; k < N; ++k) {
            out[i][k] = v[N * i + k];
        }
    }
    return out;
}

template <std::size_t K>
void toArrays(const json& a, std::array<std::vector<Real>, K>& out, std::size_t size,
              const std::string& where) {
    if (!a.is_array() || a.size() != K) {
        throw FormatError{where + ": expected " + std::to_string(K) + " arrays"};
    }
    for (std::size_t k = 0; k < K; ++k) {
        out[k] = a[k].get<std::vector<Real>>();
        if (out[k].size() != size) {
            throw FormatError{where + ": array " + std::to_string(k) + " has " +
                              std::to_string(out[k].size()) + " values for " +
                              std::to_string(size) + " elements"};
        }
    }
}

template <class Enum, int Count> Enum parseEnum(const std::string& text, const std::string& where) {
    for (int i = 0; i < Count; ++i) {
        if (toString(Enum(i)) == text) {
            return Enum(i);
        }
    }
    throw FormatError{where + ": unknown value '" + text + "'"};
}

std::string_view toString(BendingModel m) {
    return m == BendingModel::Bridson ? "bridson" : "pbd-appendix";
}

template <class Batch> json batchCommon(const Batch& b) {
    return json{{"particles", flat(b.particles)},
                {"compliance", arrays(b.compliance)},
                {"stiffness", arrays(b.stiffness)}};
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
}

void checkSize(const std::vector<Real>& v, std::size_t size, const std::string& where) {
    if (v.size() != size) {
        throw FormatError{where + ": " + std::to_string(v.size()) + " values for " +
                          std::to_string(size) + " elements"};
    }
}

json constraintsToJson(const ConstraintSet& c) {
    json j;
    json distance = batchCommon(c.distance);
    distance["restLength"] = c.distance.restLength;
    j["distance"] = distance;
    json bending = batchCommon(c.bending);
    bending["restAngle"] = c.bending.restAngle;
    bending["model"] = toString(c.bending.model);
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
    j["attachments"] = {{"particle", c.attachments.particle},
                        {"target", flat(c.attachments.target)},
                        {"targetVelocity", flat(c.attachments.targetVelocity)},
                        {"compliance", c.attachments.compliance}};
    json pressure = json::array();
    for (const PressureConstraint& p : c.pressure) {
        pressure.push_back({{"body", p.body},
                            {"particles", p.particles},
                            {"triangles", flat(p.localTriangles)},
                            {"restVolume6", p.restVolume6},
                            {"pressure", p.pressure},
                            {"compliance", p.compliance},
                            {"stiffness", p.stiffness}});
    }
    j["pressure"] = pressure;
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
        c.bending.model = model == "bridson" ? BendingModel::Bridson : BendingModel::PbdAppendix;
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
        const std::string w = where + ".attachments";
        const json& a = j["attachments"];
        const auto particle = get<std::vector<Index>>(a, "particle", w);
        const auto target = toVecs(at(a, "target", w), w + ".target");
        const auto velocity = toVecs(at(a, "targetVelocity", w), w + ".targetVelocity");
        const auto compliance = get<std::vector<Real>>(a, "compliance", w);
        if (target.size() != particle.size() || velocity.size() != particle.size() ||
            compliance.size() != particle.size()) {
            throw FormatError{w + ": arrays of different lengths"};
        }
        for (std::size_t i = 0; i < particle.size(); ++i) {
            c.attachments.add(particle[i], target[i], compliance[i], velocity[i]);
        }
    }
    if (j.contains("pressure")) {
        for (std::size_t i = 0; i < j["pressure"].size(); ++i) {
            const std::string w = where + ".pressure[" + std::to_string(i) + "]";
            const json& p = j["pressure"][i];
            PressureConstraint pc;
            pc.body = get<std::string>(p, "body", w);
            pc.particles = get<std::vector<Index>>(p, "particles", w);
            pc.localTriangles = toElements<3>(at(p, "triangles", w), w + ".triangles");
            for (const Triangle& t : pc.localTriangles) {
                for (Index v : t) {
                    if (v >= pc.particles.size()) {
                        throw FormatError{w + ": a triangle refers to local vertex " +
                                          std::to_string(v)};
                    }
                }
            }
            pc.restVolume6 = get<Real>(p, "restVolume6", w);
            pc.pressure = get<Real>(p, "pressure", w);
            pc.compliance = get<Real>(p, "compliance", w);
            pc.stiffness = get<Real>(p, "stiffness", w);
            c.pressure.push_back(std::move(pc));
        }
    }
    return c;
}

json colliderToJson(const Collider& c) {
    json j{{"shape", toString(c.shape)},
           {"name", c.name},
           {"center", vec(c.center)},
           {"normal", vec(c.normal)},
           {"radius", c.radius},
           {"halfExtents", vec(c.halfExtents)},
           {"rotation", flat(c.rotation)},
           {"a", vec(c.a)},
           {"b", vec(c.b)},
           {"friction", c.friction},
           {"restitution", c.restitution}};
    if (c.shape == ColliderShape::Mesh) {
        j["vertices"] = flat(c.vertices);
        j["triangles"] = flat(c.triangles);
    }
    return j;
}

Collider colliderFromJson(const json& j, const std::string& w) {
    Collider c;
    c.shape = parseEnum<ColliderShape, 5>(get<std::string>(j, "shape", w), w + ".shape");
    c.name = getOr<std::string>(j, "name", "", w);
    c.center = toVec(at(j, "center", w), w + ".center");
    c.normal = toVec(at(j, "normal", w), w + ".normal");
    c.radius = get<Real>(j, "radius", w);
    c.halfExtents = toVec(at(j, "halfExtents", w), w + ".halfExtents");
    const auto r = get<std::vector<Real>>(j, "rotation", w);
    if (r.size() != 9) {
        throw FormatError{w + ".rotation: expected 9 numbers"};
    }
    for (int k = 0; k < 9; ++k) {
        c.rotation(k % 3, k / 3) = r[k];
    }
    c.a = toVec(at(j, "a", w), w + ".a");
    c.b = toVec(at(j, "b", w), w + ".b");
    c.friction = get<Real>(j, "friction", w);
    c.restitution = get<Real>(j, "restitution", w);
    if (c.shape == ColliderShape::Mesh) {
        c.vertices = toVecs(at(j, "vertices", w), w + ".vertices");
        c.triangles = toElements<3>(at(j, "triangles", w), w + ".triangles");
    }
    return c;
}

json solverToJson(const SolverSettings& s) {
    return json{{"method", toString(s.method)},
                {"timeStep", s.timeStep},
                {"substeps", s.substeps},
                {"iterations", s.iterations},
                {"gravity", vec(s.gravity)},
                {"globalDamping", s.globalDamping},
                {"constraintDamping", s.constraintDamping},
                {"collisionMargin", s.collisionMargin},
                {"selfCollision", s.selfCollision},
                {"clothThickness", s.clothThickness},
                {"tearingStretch", s.tearingStretch},
                {"maxTearsPerStep", s.maxTearsPerStep},
                {"airOptimizationInterval", s.airOptimizationInterval},
                {"airQualityThreshold", s.airQualityThreshold},
                {"airContactDistance", s.airContactDistance},
                {"airFriction", s.airFriction},
                {"threads", s.threads}};
}

SolverSettings solverFromJson(const json& j, const std::string& w) {
    SolverSettings s;
    s.method = get<std::string>(j, "method", w) == "pbd" ? SolverMethod::Pbd : SolverMethod::Xpbd;
    s.timeStep = get<Real>(j, "timeStep", w);
    s.substeps = get<int>(j, "substeps", w);
    s.iterations = get<int>(j, "iterations", w);
    s.gravity = toVec(at(j, "gravity", w), w + ".gravity");
    s.globalDamping = getOr<Real>(j, "globalDamping", s.globalDamping, w);
    s.constraintDamping = getOr<Real>(j, "constraintDamping", s.constraintDamping, w);
    s.collisionMargin = getOr<Real>(j, "collisionMargin", s.collisionMargin, w);
    s.selfCollision = getOr<bool>(j, "selfCollision", s.selfCollision, w);
    s.clothThickness = getOr<Real>(j, "clothThickness", s.clothThickness, w);
    s.tearingStretch = getOr<Real>(j, "tearingStretch", s.tearingStretch, w);
    s.maxTearsPerStep = getOr<int>(j, "maxTearsPerStep", s.maxTearsPerStep, w);
    s.airOptimizationInterval =
        getOr<int>(j, "airOptimizationInterval", s.airOptimizationInterval, w);
    s.airQualityThreshold = getOr<Real>(j, "airQualityThreshold", s.airQualityThreshold, w);
    s.airContactDistance = getOr<Real>(j, "airContactDistance", s.airContactDistance, w);
    s.airFriction = getOr<Real>(j, "airFriction", s.airFriction, w);
    s.threads = getOr<int>(j, "threads", s.threads, w);
    return s;
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
            json uvs = json::array();
            for (const auto& corners : b.triangleUVs) {
                for (const Vec2& uv : corners) {
                    uvs.push_back(uv.x());
                    uvs.push_back(uv.y());
                }
            }
            body["uvs"] = uvs;
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
    j["constraints"] = constraintsToJson(scene.constraints);
    j["solver"] = solverToJson(scene.solver);
    return j.dump(indent);
}

Result<Scene> projectFromJson(const std::string& text, const std::string& origin) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error& e) {
        return Error{origin + " is not valid JSON (byte " + std::to_string(e.byte) + ")"};
    }
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
                const auto uv = b["uvs"].get<std::vector<Real>>();
                if (uv.size() != 6 * body.triangles.size()) {
                    throw FormatError{bw + ".uvs: expected 6 numbers per triangle"};
                }
                body.triangleUVs.resize(body.triangles.size());
                for (std::size_t t = 0; t < body.triangles.size(); ++t) {
                    for (int c = 0; c < 3; ++c) {
                        body.triangleUVs[t][c] = Vec2(uv[6 * t + 2 * c], uv[6 * t + 2 * c + 1]);
                    }
                }
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
        if (j.contains("constraints")) {
            scene.constraints = constraintsFromJson(j["constraints"], w + ".constraints");
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
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return Error{"cannot open '" + path.string() + "'"};
    }
    std::ostringstream text;
    text << in.rdbuf();
    return projectFromJson(text.str(), "'" + path.string() + "'");
}

} // namespace pbd
