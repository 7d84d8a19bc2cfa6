#include "meshing/SceneJson.h"

#include <fstream>
#include <sstream>

namespace pbd::sceneio {

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
                {"substeps", r.substeps},
                {"relaxIterations", r.relaxIterations},
                {"contactHertz", r.contactHertz},
                {"contactDampingRatio", r.contactDampingRatio},
                {"maxPushVelocity", r.maxPushVelocity},
                {"refreshDistance", r.refreshDistance},
                {"refreshAngle", r.refreshAngle},
                {"slop", r.slop},
                {"correction", r.correction},
                {"contactMargin", r.contactMargin},
                {"jointCorrection", r.jointCorrection},
                {"warmStart", r.warmStart},
                {"separatePush", r.separatePush},
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
    r.substeps = getOr<int>(j, "substeps", r.substeps, w);
    if (r.substeps < 1) {
        throw FormatError{w + ".substeps: needs a whole number >= 1, not " +
                          std::to_string(r.substeps)};
    }
    r.relaxIterations = getOr<int>(j, "relaxIterations", r.relaxIterations, w);
    r.contactHertz = getOr<Real>(j, "contactHertz", r.contactHertz, w);
    r.contactDampingRatio = getOr<Real>(j, "contactDampingRatio", r.contactDampingRatio, w);
    r.maxPushVelocity = getOr<Real>(j, "maxPushVelocity", r.maxPushVelocity, w);
    r.refreshDistance = getOr<Real>(j, "refreshDistance", r.refreshDistance, w);
    r.refreshAngle = getOr<Real>(j, "refreshAngle", r.refreshAngle, w);
    if (!(r.contactHertz >= 0) || !(r.contactDampingRatio >= 0) || !(r.maxPushVelocity > 0)) {
        throw FormatError{w + ": contactHertz and contactDampingRatio need values >= 0 and "
                              "maxPushVelocity one > 0"};
    }
    r.slop = getOr<Real>(j, "slop", r.slop, w);
    r.correction = getOr<Real>(j, "correction", r.correction, w);
    r.contactMargin = getOr<Real>(j, "contactMargin", r.contactMargin, w);
    r.jointCorrection = getOr<Real>(j, "jointCorrection", r.jointCorrection, w);
    r.warmStart = getOr<bool>(j, "warmStart", r.warmStart, w);
    r.separatePush = getOr<bool>(j, "separatePush", r.separatePush, w);
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
                {"continuousCollision", s.continuousCollision},
                {"clothThickness", s.clothThickness},
                {"tearingStretch", s.tearingStretch},
                {"maxTearsPerStep", s.maxTearsPerStep},
                {"airOptimizationInterval", s.airOptimizationInterval},
                {"airIterations", s.airIterations},
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
    s.continuousCollision = getOr<bool>(j, "continuousCollision", s.continuousCollision, w);
    s.clothThickness = getOr<Real>(j, "clothThickness", s.clothThickness, w);
    s.tearingStretch = getOr<Real>(j, "tearingStretch", s.tearingStretch, w);
    s.maxTearsPerStep = getOr<int>(j, "maxTearsPerStep", s.maxTearsPerStep, w);
    s.airOptimizationInterval =
        getOr<int>(j, "airOptimizationInterval", s.airOptimizationInterval, w);
    s.airIterations = getOr<int>(j, "airIterations", s.airIterations, w);
    if (s.airIterations < -1) {
        throw FormatError{w + ".airIterations: -1 (as the constraints), 0 (off) or more, not " +
                          std::to_string(s.airIterations)};
    }
    s.airQualityThreshold = getOr<Real>(j, "airQualityThreshold", s.airQualityThreshold, w);
    s.airContactDistance = getOr<Real>(j, "airContactDistance", s.airContactDistance, w);
    s.airFriction = getOr<Real>(j, "airFriction", s.airFriction, w);
    s.threads = getOr<int>(j, "threads", s.threads, w);
    if (j.contains("rigid")) {
        s.rigid = rigidSettingsFromJson(j["rigid"], w + ".rigid");
    }
    return s;
}

json attachmentsToJson(const Attachments& a, bool groups) {
    json j{{"particle", a.particle},
           {"target", flat(a.target)},
           {"targetVelocity", flat(a.targetVelocity)},
           {"compliance", a.compliance}};
    if (groups) {
        j["group"] = a.group;
    }
    return j;
}

Attachments attachmentsFromJson(const json& a, const std::string& w) {
    Attachments out;
    const auto particle = get<std::vector<Index>>(a, "particle", w);
    const auto target = toVecs(at(a, "target", w), w + ".target");
    const auto velocity = toVecs(at(a, "targetVelocity", w), w + ".targetVelocity");
    const auto compliance = get<std::vector<Real>>(a, "compliance", w);
    if (target.size() != particle.size() || velocity.size() != particle.size() ||
        compliance.size() != particle.size()) {
        throw FormatError{w + ": particle, target, targetVelocity and compliance differ in length"};
    }
    for (std::size_t i = 0; i < particle.size(); ++i) {
        out.add(particle[i], target[i], compliance[i], velocity[i]);
    }
    if (a.contains("group")) {
        out.group = get<std::vector<int>>(a, "group", w);
        if (out.group.size() != particle.size()) {
            throw FormatError{w + ".group: one group per attachment expected"};
        }
    }
    return out;
}

json pressureToJson(const std::vector<PressureConstraint>& pressure, bool groups) {
    json out = json::array();
    for (const PressureConstraint& p : pressure) {
        json j{{"body", p.body},
               {"particles", p.particles},
               {"triangles", flat(p.localTriangles)},
               {"restVolume6", p.restVolume6},
               {"pressure", p.pressure},
               {"compliance", p.compliance},
               {"stiffness", p.stiffness}};
        if (groups) {
            j["group"] = p.group;
        }
        out.push_back(j);
    }
    return out;
}

std::vector<PressureConstraint> pressureFromJson(const json& j, const std::string& where) {
    std::vector<PressureConstraint> out;
    for (std::size_t i = 0; i < j.size(); ++i) {
        const std::string w = where + "[" + std::to_string(i) + "]";
        const json& p = j[i];
        PressureConstraint pc;
        pc.body = getOr<std::string>(p, "body", "", w);
        pc.particles = get<std::vector<Index>>(p, "particles", w);
        pc.localTriangles = toElements<3>(at(p, "triangles", w), w + ".triangles");
        for (const Triangle& t : pc.localTriangles) {
            for (Index v : t) {
                if (v >= pc.particles.size()) {
                    throw FormatError{w + ": a triangle refers to local vertex " +
                                      std::to_string(v) + " of " +
                                      std::to_string(pc.particles.size())};
                }
            }
        }
        pc.restVolume6 = get<Real>(p, "restVolume6", w);
        pc.pressure = get<Real>(p, "pressure", w);
        pc.compliance = get<Real>(p, "compliance", w);
        pc.stiffness = get<Real>(p, "stiffness", w);
        pc.group = getOr<int>(p, "group", -1, w);
        out.push_back(std::move(pc));
    }
    return out;
}

void rigidToJson(const Scene& scene, json& j) {
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
}

void rigidFromJson(const json& j, Scene& scene, const std::string& w) {
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
}

json uvsToJson(const std::vector<std::array<Vec2, 3>>& uvs) {
    std::vector<Real> flatUVs;
    flatUVs.reserve(6 * uvs.size());
    for (const auto& corners : uvs) {
        for (const Vec2& uv : corners) {
            flatUVs.push_back(uv.x());
            flatUVs.push_back(uv.y());
        }
    }
    return flatUVs;
}

std::vector<std::array<Vec2, 3>> uvsFromJson(const json& object, std::size_t triangles,
                                             const std::string& where) {
    const auto uv = get<std::vector<Real>>(object, "uvs", where);
    if (uv.size() != 6 * triangles) {
        throw FormatError{where + ".uvs: expected 6 numbers per triangle"};
    }
    std::vector<std::array<Vec2, 3>> out(triangles);
    for (std::size_t t = 0; t < triangles; ++t) {
        for (int c = 0; c < 3; ++c) {
            out[t][c] = Vec2(uv[6 * t + 2 * c], uv[6 * t + 2 * c + 1]);
        }
    }
    return out;
}

void embeddedToJson(const Scene& scene, json& j) {
    if (scene.embedded.empty()) {
        return;
    }
    json all = json::array();
    for (const EmbeddedMesh& m : scene.embedded) {
        std::vector<Real> weights;
        weights.reserve(4 * m.weights.size());
        for (const auto& w : m.weights) {
            weights.insert(weights.end(), w.begin(), w.end());
        }
        all.push_back(json{{"name", m.name},
                           {"vertices", flat(m.restPositions)},
                           {"triangles", flat(m.triangles)},
                           {"uvs", uvsToJson(m.triangleUVs)},
                           {"corners", flat(m.corners)},
                           {"weights", weights},
                           {"outsideVertices", m.outsideVertices},
                           {"largestOutsideDistance", m.largestOutsideDistance}});
    }
    j["embedded"] = all;
}

void embeddedFromJson(const json& j, Scene& scene, const std::string& w) {
    if (!j.contains("embedded")) {
        return;
    }
    const json& all = j["embedded"];
    for (std::size_t i = 0; i < all.size(); ++i) {
        const std::string ew = w + ".embedded[" + std::to_string(i) + "]";
        const json& e = all[i];
        EmbeddedMesh m;
        m.name = get<std::string>(e, "name", ew);
        m.restPositions = toVecs(at(e, "vertices", ew), ew + ".vertices");
        m.triangles = toElements<3>(at(e, "triangles", ew), ew + ".triangles");
        m.corners = toElements<4>(at(e, "corners", ew), ew + ".corners");
        const auto weights = get<std::vector<Real>>(e, "weights", ew);
        if (m.corners.size() != m.restPositions.size() ||
            weights.size() != 4 * m.restPositions.size()) {
            throw FormatError{ew + ": expected 4 corners and 4 weights per vertex"};
        }
        m.weights.resize(m.restPositions.size());
        for (std::size_t v = 0; v < m.weights.size(); ++v) {
            for (std::size_t k = 0; k < 4; ++k) {
                m.weights[v][k] = weights[4 * v + k];
            }
        }
        if (e.contains("uvs") && !e["uvs"].empty()) {
            m.triangleUVs = uvsFromJson(e, m.triangles.size(), ew);
        }
        m.outsideVertices = getOr<std::size_t>(e, "outsideVertices", 0, ew);
        m.largestOutsideDistance = getOr<Real>(e, "largestOutsideDistance", 0, ew);
        scene.embedded.push_back(std::move(m));
    }
}

namespace {

json affineJson(const Affine3& a) {
    json out = json::array();
    for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 4; ++c) {
            out.push_back(a.matrix()(r, c));
        }
    }
    return out;
}

Affine3 toAffine(const json& j, const std::string& w) {
    const auto r = j.get<std::vector<Real>>();
    if (r.size() != 12) {
        throw FormatError{w + ": expected 12 numbers (3 rows of an affine transform)"};
    }
    Affine3 a = Affine3::Identity();
    for (int k = 0; k < 12; ++k) {
        a.matrix()(k / 4, k % 4) = r[std::size_t(k)];
    }
    return a;
}

json quatsJson(const std::vector<Quat>& qs) {
    json out = json::array();
    for (const Quat& q : qs) {
        for (Real v : {q.w(), q.x(), q.y(), q.z()}) {
            out.push_back(v);
        }
    }
    return out;
}

std::vector<Quat> toQuats(const json& j, const std::string& w) {
    const auto r = j.get<std::vector<Real>>();
    if (r.size() % 4 != 0) {
        throw FormatError{w + ": expected quaternions, 4 numbers each (w, x, y, z)"};
    }
    std::vector<Quat> out;
    for (std::size_t i = 0; i < r.size(); i += 4) {
        out.emplace_back(r[i], r[i + 1], r[i + 2], r[i + 3]);
    }
    return out;
}

// Pins as [attachment, triangle, b0, b1, b2, offset x, y, z] each.
json pinsJson(const std::vector<CharacterPin>& pins) {
    json out = json::array();
    for (const CharacterPin& p : pins) {
        out.push_back({p.attachment, p.triangle, p.barycentric[0], p.barycentric[1],
                       p.barycentric[2], p.offset[0], p.offset[1], p.offset[2]});
    }
    return out;
}

std::vector<CharacterPin> toPins(const json& j, const std::string& w) {
    std::vector<CharacterPin> pins;
    for (std::size_t i = 0; i < j.size(); ++i) {
        const auto r = j[i].get<std::vector<Real>>();
        if (r.size() != 8 || r[0] < 0 || r[1] < 0 || r[0] != std::floor(r[0]) ||
            r[1] != std::floor(r[1]) || r[0] > 4e9 || r[1] > 4e9) {
            throw FormatError{w + "[" + std::to_string(i) +
                              "]: expected attachment, triangle, 3 barycentric coordinates and "
                              "3 offsets"};
        }
        pins.push_back({Index(r[0]), Index(r[1]), Vec3(r[2], r[3], r[4]), Vec3(r[5], r[6], r[7])});
    }
    return pins;
}

} // namespace

void charactersToJson(const Scene& scene, json& j) {
    if (scene.characters.empty()) {
        return;
    }
    json all = json::array();
    for (const Character& c : scene.characters) {
        json nodes = json::array();
        for (const CharacterNode& n : c.nodes) {
            nodes.push_back({{"name", n.name}, {"parent", n.parent}, {"rest", affineJson(n.rest)}});
        }
        json clips = json::array();
        for (const AnimationClip& clip : c.clips) {
            json tracks = json::array();
            for (const NodeTrack& t : clip.tracks) {
                tracks.push_back({{"node", t.node},
                                  {"positionTimes", t.positionTimes},
                                  {"positions", flat(t.positions)},
                                  {"rotationTimes", t.rotationTimes},
                                  {"rotations", quatsJson(t.rotations)},
                                  {"scaleTimes", t.scaleTimes},
                                  {"scales", flat(t.scales)}});
            }
            clips.push_back({{"name", clip.name}, {"duration", clip.duration}, {"tracks", tracks}});
        }
        json meshes = json::array();
        for (const CharacterMesh& m : c.meshes) {
            json bones = json::array();
            for (const SkinBone& b : m.bones) {
                bones.push_back({{"node", b.node}, {"offset", affineJson(b.offset)}});
            }
            meshes.push_back({{"name", m.name},
                              {"node", m.node},
                              {"vertices", flat(m.vertices)},
                              {"triangles", flat(m.triangles)},
                              {"bones", bones},
                              {"weightStart", m.weightStart},
                              {"weightBone", m.weightBone},
                              {"weight", m.weight}});
        }
        all.push_back({{"name", c.name},
                       {"source", c.source},
                       {"nodes", nodes},
                       {"clips", clips},
                       {"meshes", meshes},
                       {"placement", affineJson(c.placement)},
                       {"clip", c.clip},
                       {"start", c.start},
                       {"speed", c.speed},
                       {"end", c.end},
                       {"wrap", c.wrap == ClipWrap::Loop ? "loop" : "clamp"},
                       {"subdivisions", c.subdivisions},
                       {"collider", c.collider},
                       {"body", c.body},
                       {"pins", pinsJson(c.pins)}});
    }
    j["characters"] = all;
}

void charactersFromJson(const json& j, Scene& scene, const std::string& w) {
    if (!j.contains("characters")) {
        return;
    }
    const json& all = j["characters"];
    for (std::size_t i = 0; i < all.size(); ++i) {
        const std::string cw = w + ".characters[" + std::to_string(i) + "]";
        const json& e = all[i];
        Character c;
        c.name = get<std::string>(e, "name", cw);
        c.source = getOr<std::string>(e, "source", "", cw);
        const json& nodes = at(e, "nodes", cw);
        for (std::size_t k = 0; k < nodes.size(); ++k) {
            const std::string nw = cw + ".nodes[" + std::to_string(k) + "]";
            c.nodes.push_back({get<std::string>(nodes[k], "name", nw),
                               get<int>(nodes[k], "parent", nw),
                               toAffine(at(nodes[k], "rest", nw), nw + ".rest")});
        }
        const json& clips = at(e, "clips", cw);
        for (std::size_t k = 0; k < clips.size(); ++k) {
            const std::string kw = cw + ".clips[" + std::to_string(k) + "]";
            AnimationClip clip;
            clip.name = get<std::string>(clips[k], "name", kw);
            clip.duration = get<Real>(clips[k], "duration", kw);
            const json& tracks = at(clips[k], "tracks", kw);
            for (std::size_t t = 0; t < tracks.size(); ++t) {
                const std::string tw = kw + ".tracks[" + std::to_string(t) + "]";
                const json& tj = tracks[t];
                NodeTrack track;
                track.node = get<int>(tj, "node", tw);
                track.positionTimes = get<std::vector<Real>>(tj, "positionTimes", tw);
                track.positions = toVecs(at(tj, "positions", tw), tw + ".positions");
                track.rotationTimes = get<std::vector<Real>>(tj, "rotationTimes", tw);
                track.rotations = toQuats(at(tj, "rotations", tw), tw + ".rotations");
                track.scaleTimes = get<std::vector<Real>>(tj, "scaleTimes", tw);
                track.scales = toVecs(at(tj, "scales", tw), tw + ".scales");
                clip.tracks.push_back(std::move(track));
            }
            c.clips.push_back(std::move(clip));
        }
        const json& meshes = at(e, "meshes", cw);
        for (std::size_t k = 0; k < meshes.size(); ++k) {
            const std::string mw = cw + ".meshes[" + std::to_string(k) + "]";
            const json& mj = meshes[k];
            CharacterMesh m;
            m.name = get<std::string>(mj, "name", mw);
            m.node = get<int>(mj, "node", mw);
            m.vertices = toVecs(at(mj, "vertices", mw), mw + ".vertices");
            m.triangles = toElements<3>(at(mj, "triangles", mw), mw + ".triangles");
            const json& bones = at(mj, "bones", mw);
            for (std::size_t b = 0; b < bones.size(); ++b) {
                const std::string bw = mw + ".bones[" + std::to_string(b) + "]";
                m.bones.push_back(
                    {get<int>(bones[b], "node", bw), toAffine(at(bones[b], "offset", bw), bw)});
            }
            m.weightStart = get<std::vector<Index>>(mj, "weightStart", mw);
            m.weightBone = get<std::vector<int>>(mj, "weightBone", mw);
            m.weight = get<std::vector<Real>>(mj, "weight", mw);
            c.meshes.push_back(std::move(m));
        }
        c.placement = toAffine(at(e, "placement", cw), cw + ".placement");
        c.clip = get<int>(e, "clip", cw);
        c.start = get<Real>(e, "start", cw);
        c.speed = get<Real>(e, "speed", cw);
        c.end = getOr<Real>(e, "end", 0, cw); // projects before session 55 have none
        const std::string wrap = get<std::string>(e, "wrap", cw);
        if (wrap != "loop" && wrap != "clamp") {
            throw FormatError{cw + ".wrap: expected 'loop' or 'clamp', not '" + wrap + "'"};
        }
        c.wrap = wrap == "loop" ? ClipWrap::Loop : ClipWrap::Clamp;
        c.subdivisions = getOr<int>(e, "subdivisions", 0, cw); // none before session 57
        c.collider = get<int>(e, "collider", cw);
        c.body = getOr<int>(e, "body", -1, cw);
        if (c.body < -1 || c.body >= int(scene.bodies.size())) {
            throw FormatError{cw + ".body: " + std::to_string(c.body) + " is not a body"};
        }
        if (e.contains("pins")) {
            c.pins = toPins(e["pins"], cw + ".pins");
        }
        for (const CharacterPin& pin : c.pins) {
            if (pin.attachment >= scene.constraints.attachments.size()) {
                throw FormatError{cw + ".pins: attachment " + std::to_string(pin.attachment) +
                                  " does not exist"};
            }
        }
        if (std::string problem = checkCharacter(c); !problem.empty()) {
            throw FormatError{cw + ": " + problem};
        }
        refineCharacter(c);
        scene.characters.push_back(std::move(c));
    }
    if (std::string problem = connectCharacters(scene); !problem.empty()) {
        throw FormatError{w + ": " + problem};
    }
}

} // namespace pbd::sceneio

namespace pbd {

Result<std::string> readTextFile(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return Error{"cannot open " + quotedPath(path)};
    }
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string quotedPath(const std::filesystem::path& path) {
    std::string quoted = "'"; // built in steps: GCC 12 warns (-Wrestrict) on "'" + string
    quoted += path.string();
    quoted += '\'';
    return quoted;
}

Result<nlohmann::json> parseJson(const std::string& text, const std::string& origin) {
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
        return Error{origin + " is empty"};
    }
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        // nlohmann says "parse error at line L, column C: syntax error while parsing value -
        // REASON; last read: '...'": the place and the reason, without the echo of the input.
        const std::string what = e.what();
        std::string place = "byte " + std::to_string(e.byte), reason;
        if (const std::size_t at = what.find("at line "); at != std::string::npos) {
            place = what.substr(at + 3, what.find(':', at) - at - 3);
        }
        if (const std::size_t dash = what.find(" - "); dash != std::string::npos) {
            reason = what.substr(dash + 3, what.find("; last read") - dash - 3);
        }
        if (e.byte == text.size() + 1 || reason.find("unexpected end of input") == 0) {
            reason = "the file ends early (it is truncated)";
        }
        return Error{origin + " is not valid JSON (" + place + (reason.empty() ? "" : ": ") +
                     reason + ")"};
    } catch (const nlohmann::json::exception& e) {
        // out_of_range: a number too large for a double ("1e999"), or nesting too deep.
        std::string what = e.what();
        if (const std::size_t end = what.find("] "); end != std::string::npos) {
            what.erase(0, end + 2); // nlohmann's "[json.exception.out_of_range.406] "
        }
        if (what.size() > 100) {
            what = what.substr(0, 100) + "...";
        }
        return Error{origin + " is not valid JSON: " + what};
    }
}

} // namespace pbd
