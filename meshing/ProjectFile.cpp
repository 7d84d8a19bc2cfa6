#include "meshing/ProjectFile.h"

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

void checkSize(const std::vector<Real>& v, std::size_t size, const std::string& where) {
    if (v.size() != size) {
        throw FormatError{where + ": " + std::to_string(v.size()) + " values for " +
                          std::to_string(size) + " elements"};
    }
}

// A material value: a number, or "infinity" (a hard constraint's modulus; JSON has no inf).
json material(Real v) {
    return std::isinf(v) ? json("infinity") : json(v);
}
Real materialFrom(const json& v, const std::string& where) {
    if (v.is_string() && v.get<std::string>() == "infinity") {
        return std::numeric_limits<Real>::infinity();
    }
    if (!v.is_number()) {
        throw FormatError{where + ": expected a number or \"infinity\""};
    }
    return v.get<Real>();
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
                        {"compliance", c.attachments.compliance},
                        {"group", c.attachments.group}};
    json pressure = json::array();
    for (const PressureConstraint& p : c.pressure) {
        pressure.push_back({{"body", p.body},
                            {"particles", p.particles},
                            {"triangles", flat(p.localTriangles)},
                            {"restVolume6", p.restVolume6},
                            {"pressure", p.pressure},
                            {"compliance", p.compliance},
                            {"stiffness", p.stiffness},
                            {"group", p.group}});
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
        if (a.contains("group")) {
            c.attachments.group = get<std::vector<int>>(a, "group", w);
            if (c.attachments.group.size() != particle.size()) {
                throw FormatError{w + ".group: one group per attachment expected"};
            }
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
            pc.group = getOr<int>(p, "group", -1, w);
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

json matrixJson(const Mat3& m) {
    return flat(m);
}

Mat3 toMatrix(const json& j, const std::string& w) {
    const auto r = j.get<std::vector<Real>>();
    if (r.size() != 9) {
        throw FormatError{w + ": expected 9 numbers"};
    }
    Mat3 m;
    for (int k = 0; k < 9; ++k) {
        m(k % 3, k / 3) = r[k];
    }
    return m;
}

json quatJson(const Quat& q) {
    return json::array({q.w(), q.x(), q.y(), q.z()});
}

Quat toQuat(const json& j, const std::string& w) {
    const auto r = j.get<std::vector<Real>>();
    if (r.size() != 4) {
        throw FormatError{w + ": expected a quaternion (w, x, y, z)"};
    }
    return Quat(r[0], r[1], r[2], r[3]);
}

json rigidBodyToJson(const RigidBody& b) {
    json shapes = json::array();
    for (const RigidShape& s : b.shapes) {
        json shape{{"type", toString(s.type)},    {"halfExtents", vec(s.halfExtents)},
                   {"radius", s.radius},          {"halfHeight", s.halfHeight},
                   {"position", vec(s.position)}, {"rotation", matrixJson(s.rotation)}};
        if (s.type == RigidShapeType::Hull) {
            shape["vertices"] = flat(s.polyhedron->vertices);
        }
        shapes.push_back(shape);
    }
    // Mass properties are stored as computed, so that a body loads back bit for bit.
    return json{{"name", b.name},
                {"motion", toString(b.motion)},
                {"shapes", shapes},
                {"density", b.density},
                {"friction", b.friction},
                {"mass", b.mass},
                {"inverseMass", b.inverseMass},
                {"inertia", matrixJson(b.inertiaBody)},
                {"inverseInertia", matrixJson(b.inverseInertiaBody)},
                {"x", vec(b.x)},
                {"q", quatJson(b.q)},
                {"v", vec(b.v)},
                {"L", vec(b.L)},
                {"omega", vec(b.omega)},
                {"sleeping", b.sleeping},
                {"restTime", b.restTime}};
}

RigidBody rigidBodyFromJson(const json& j, const std::string& w) {
    RigidBody b;
    b.name = getOr<std::string>(j, "name", "", w);
    b.motion = parseEnum<RigidMotion, 3>(get<std::string>(j, "motion", w), w + ".motion");
    const json& shapes = at(j, "shapes", w);
    for (std::size_t i = 0; i < shapes.size(); ++i) {
        const std::string sw = w + ".shapes[" + std::to_string(i) + "]";
        const json& sj = shapes[i];
        const auto type =
            parseEnum<RigidShapeType, 4>(get<std::string>(sj, "type", sw), sw + ".type");
        RigidShape s;
        switch (type) {
        case RigidShapeType::Sphere:
            s = RigidShape::sphere(get<Real>(sj, "radius", sw));
            break;
        case RigidShapeType::Capsule:
            s = RigidShape::capsule(get<Real>(sj, "radius", sw), get<Real>(sj, "halfHeight", sw));
            break;
        case RigidShapeType::Box:
            s = RigidShape::box(toVec(at(sj, "halfExtents", sw), sw + ".halfExtents"));
            break;
        case RigidShapeType::Hull: {
            Result<RigidShape> hull =
                RigidShape::hull(toVecs(at(sj, "vertices", sw), sw + ".vertices"));
            if (!hull) {
                throw FormatError{sw + ": " + hull.error()};
            }
            s = std::move(hull).value();
            break;
        }
        }
        s.position = toVec(at(sj, "position", sw), sw + ".position");
        s.rotation = toMatrix(at(sj, "rotation", sw), sw + ".rotation");
        b.shapes.push_back(std::move(s));
    }
    b.density = get<Real>(j, "density", w);
    b.friction = get<Real>(j, "friction", w);
    b.mass = get<Real>(j, "mass", w);
    b.inverseMass = get<Real>(j, "inverseMass", w);
    b.inertiaBody = toMatrix(at(j, "inertia", w), w + ".inertia");
    b.inverseInertiaBody = toMatrix(at(j, "inverseInertia", w), w + ".inverseInertia");
    b.x = toVec(at(j, "x", w), w + ".x");
    b.q = toQuat(at(j, "q", w), w + ".q");
    b.v = toVec(at(j, "v", w), w + ".v");
    b.L = toVec(at(j, "L", w), w + ".L");
    b.omega = toVec(at(j, "omega", w), w + ".omega");
    b.sleeping = getOr<bool>(j, "sleeping", false, w);
    b.restTime = getOr<Real>(j, "restTime", 0, w);
    return b;
}

json rigidJointToJson(const RigidJoint& r) {
    return json{{"type", toString(r.type)},
                {"name", r.name},
                {"bodyA", r.bodyA},
                {"bodyB", r.bodyB},
                {"anchorA", vec(r.anchorA)},
                {"anchorB", vec(r.anchorB)},
                {"axisA", vec(r.axisA)},
                {"axisB", vec(r.axisB)},
                {"referenceA", vec(r.referenceA)},
                {"referenceB", vec(r.referenceB)},
                {"restRotation", quatJson(r.restRotation)},
                {"limit", r.limit},
                {"lowerAngle", r.lowerAngle},
                {"upperAngle", r.upperAngle},
                {"motor", r.motor},
                {"motorSpeed", r.motorSpeed},
                {"maxMotorTorque", r.maxMotorTorque},
                {"collideConnected", r.collideConnected}};
}

RigidJoint rigidJointFromJson(const json& j, const std::string& w) {
    RigidJoint r;
    r.type = parseEnum<RigidJointType, 3>(get<std::string>(j, "type", w), w + ".type");
    r.name = getOr<std::string>(j, "name", "", w);
    r.bodyA = get<int>(j, "bodyA", w);
    r.bodyB = get<int>(j, "bodyB", w);
    r.anchorA = toVec(at(j, "anchorA", w), w + ".anchorA");
    r.anchorB = toVec(at(j, "anchorB", w), w + ".anchorB");
    r.axisA = toVec(at(j, "axisA", w), w + ".axisA");
    r.axisB = toVec(at(j, "axisB", w), w + ".axisB");
    r.referenceA = toVec(at(j, "referenceA", w), w + ".referenceA");
    r.referenceB = toVec(at(j, "referenceB", w), w + ".referenceB");
    r.restRotation = toQuat(at(j, "restRotation", w), w + ".restRotation");
    r.limit = get<bool>(j, "limit", w);
    r.lowerAngle = get<Real>(j, "lowerAngle", w);
    r.upperAngle = get<Real>(j, "upperAngle", w);
    r.motor = get<bool>(j, "motor", w);
    r.motorSpeed = get<Real>(j, "motorSpeed", w);
    r.maxMotorTorque = get<Real>(j, "maxMotorTorque", w);
    r.collideConnected = getOr<bool>(j, "collideConnected", false, w);
    return r;
}

json rigidSettingsToJson(const RigidSettings& r) {
    return json{{"iterations", r.iterations},
                {"relaxIterations", r.relaxIterations},
                {"slop", r.slop},
                {"correction", r.correction},
                {"contactMargin", r.contactMargin},
                {"jointCorrection", r.jointCorrection},
                {"warmStart", r.warmStart},
                {"frictionWarmStart", r.frictionWarmStart},
                {"permuteRows", r.permuteRows},
                {"stabilisation", toString(r.stabilisation)},
                {"weightAmplification", r.weightAmplification},
                {"sleeping", r.sleeping},
                {"sleepLinearSpeed", r.sleepLinearSpeed},
                {"sleepAngularSpeed", r.sleepAngularSpeed},
                {"sleepTime", r.sleepTime},
                {"aggressiveSleep", r.aggressiveSleep},
                {"aggressiveSleepTime", r.aggressiveSleepTime}};
}

RigidSettings rigidSettingsFromJson(const json& j, const std::string& w) {
    RigidSettings r;
    r.iterations = getOr<int>(j, "iterations", r.iterations, w);
    r.relaxIterations = getOr<int>(j, "relaxIterations", r.relaxIterations, w);
    r.slop = getOr<Real>(j, "slop", r.slop, w);
    r.correction = getOr<Real>(j, "correction", r.correction, w);
    r.contactMargin = getOr<Real>(j, "contactMargin", r.contactMargin, w);
    r.jointCorrection = getOr<Real>(j, "jointCorrection", r.jointCorrection, w);
    r.warmStart = getOr<bool>(j, "warmStart", r.warmStart, w);
    r.frictionWarmStart = getOr<Real>(j, "frictionWarmStart", r.frictionWarmStart, w);
    r.permuteRows = getOr<bool>(j, "permuteRows", r.permuteRows, w);
    if (j.contains("stabilisation")) {
        r.stabilisation = parseEnum<StackStabilisation, 3>(get<std::string>(j, "stabilisation", w),
                                                           w + ".stabilisation");
    }
    r.weightAmplification = getOr<Real>(j, "weightAmplification", r.weightAmplification, w);
    r.sleeping = getOr<bool>(j, "sleeping", r.sleeping, w);
    r.sleepLinearSpeed = getOr<Real>(j, "sleepLinearSpeed", r.sleepLinearSpeed, w);
    r.sleepAngularSpeed = getOr<Real>(j, "sleepAngularSpeed", r.sleepAngularSpeed, w);
    r.sleepTime = getOr<Real>(j, "sleepTime", r.sleepTime, w);
    r.aggressiveSleep = getOr<bool>(j, "aggressiveSleep", r.aggressiveSleep, w);
    r.aggressiveSleepTime = getOr<Real>(j, "aggressiveSleepTime", r.aggressiveSleepTime, w);
    return r;
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
                {"exactAngularMomentum", s.exactAngularMomentum},
                {"selfCollision", s.selfCollision},
                {"clothThickness", s.clothThickness},
                {"tearingStretch", s.tearingStretch},
                {"maxTearsPerStep", s.maxTearsPerStep},
                {"airOptimizationInterval", s.airOptimizationInterval},
                {"airQualityThreshold", s.airQualityThreshold},
                {"airContactDistance", s.airContactDistance},
                {"airFriction", s.airFriction},
                {"rigid", rigidSettingsToJson(s.rigid)},
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
    s.exactAngularMomentum = getOr<bool>(j, "exactAngularMomentum", s.exactAngularMomentum, w);
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
    if (j.contains("rigid")) {
        s.rigid = rigidSettingsFromJson(j["rigid"], w + ".rigid");
    }
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
    if (!scene.rigidBodies.empty()) {
        json rigid = json::array();
        for (const RigidBody& b : scene.rigidBodies) {
            rigid.push_back(rigidBodyToJson(b));
        }
        j["rigidBodies"] = rigid;
        json rigidJoints = json::array();
        for (const RigidJoint& r : scene.rigidJoints) {
            rigidJoints.push_back(rigidJointToJson(r));
        }
        j["rigidJoints"] = rigidJoints;
        json attachments = json::array();
        for (const RigidAttachment& a : scene.rigidAttachments) {
            attachments.push_back(json{{"particle", a.particle},
                                       {"body", a.body},
                                       {"local", vec(a.local)},
                                       {"compliance", a.compliance}});
        }
        j["rigidAttachments"] = attachments;
    }
    j["constraints"] = constraintsToJson(scene.constraints);
    json groups = json::array();
    for (const ConstraintGroup& g : scene.constraintGroups) {
        groups.push_back(groupToJson(g));
    }
    j["constraintGroups"] = groups;
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
        if (j.contains("rigidBodies")) {
            for (std::size_t i = 0; i < j["rigidBodies"].size(); ++i) {
                scene.rigidBodies.push_back(rigidBodyFromJson(
                    j["rigidBodies"][i], w + ".rigidBodies[" + std::to_string(i) + "]"));
            }
        }
        if (j.contains("rigidJoints")) {
            for (std::size_t i = 0; i < j["rigidJoints"].size(); ++i) {
                scene.rigidJoints.push_back(rigidJointFromJson(
                    j["rigidJoints"][i], w + ".rigidJoints[" + std::to_string(i) + "]"));
            }
        }
        if (j.contains("rigidAttachments")) {
            for (std::size_t i = 0; i < j["rigidAttachments"].size(); ++i) {
                const std::string aw = w + ".rigidAttachments[" + std::to_string(i) + "]";
                const json& a = j["rigidAttachments"][i];
                scene.rigidAttachments.push_back(
                    {get<Index>(a, "particle", aw), get<int>(a, "body", aw),
                     toVec(at(a, "local", aw), aw + ".local"), get<Real>(a, "compliance", aw)});
            }
        }
        if (j.contains("constraints")) {
            scene.constraints = constraintsFromJson(j["constraints"], w + ".constraints");
        }
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
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return Error{"cannot open '" + path.string() + "'"};
    }
    std::ostringstream text;
    text << in.rdbuf();
    return projectFromJson(text.str(), "'" + path.string() + "'");
}

} // namespace pbd
