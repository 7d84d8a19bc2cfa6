#include "app/cli/ReportJson.h"

#include "core/solver/Solver.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace pbd::cli {

json boundsJson(const Bounds& b) {
    if (b.empty()) {
        return nullptr;
    }
    return {{"min", {b.min.x(), b.min.y(), b.min.z()}}, {"max", {b.max.x(), b.max.y(), b.max.z()}}};
}

json vec(const Vec3& v) {
    return {v.x(), v.y(), v.z()};
}

json rigidSettingsJson(const RigidSettings& r) {
    return {{"iterations", r.iterations},
            {"substeps", r.substeps},
            {"relax_iterations", r.relaxIterations},
            {"contact_hertz", r.contactHertz},
            {"contact_damping_ratio", r.contactDampingRatio},
            {"max_push_velocity", r.maxPushVelocity},
            {"slop", r.slop},
            {"correction", r.correction},
            {"warm_start", r.warmStart},
            {"separate_push", r.separatePush},
            {"permute_rows", r.permuteRows},
            {"stabilisation", std::string(toString(r.stabilisation))},
            {"weight_amplification", r.weightAmplification},
            {"sleeping", r.sleeping},
            {"aggressive_sleep", r.aggressiveSleep}};
}

json rigidJson(const Scene& scene, const Solver& solver) {
    json bodies = json::array();
    for (const RigidBody& b : scene.rigidBodies) {
        json shapes = json::array();
        for (const RigidShape& s : b.shapes) {
            shapes.push_back(std::string(toString(s.type)));
        }
        bodies.push_back({{"name", b.name},
                          {"motion", std::string(toString(b.motion))},
                          {"shapes", shapes},
                          {"mass", b.mass},
                          {"position", vec(b.x)},
                          {"orientation", {b.q.w(), b.q.x(), b.q.y(), b.q.z()}},
                          {"velocity", vec(b.v)},
                          {"angular_velocity", vec(b.omega)},
                          {"angular_momentum", vec(b.L)},
                          {"sleeping", b.sleeping}});
    }
    const RigidTotals t = rigidTotals(scene.rigidBodies, scene.solver.gravity);
    const RigidStatistics& st = solver.rigid().statistics();
    // The whole system's momenta (about the origin): the bodies' and the particles'.
    Vec3 linear = t.linearMomentum;
    Vec3 angular = t.angularMomentum;
    const Particles& p = scene.particles;
    for (std::size_t i = 0; i < p.size(); ++i) {
        if (p.inverseMasses[i] > 0) {
            const Vec3 momentum = p.velocities[i] / p.inverseMasses[i];
            linear += momentum;
            angular += p.positions[i].cross(momentum);
        }
    }
    return {{"bodies", bodies},
            {"joints", scene.rigidJoints.size()},
            {"linear_momentum", vec(t.linearMomentum)},
            {"angular_momentum", vec(t.angularMomentum)},
            {"linear_momentum_with_particles", vec(linear)},
            {"angular_momentum_with_particles", vec(angular)},
            {"kinetic_energy", t.kineticEnergy},
            {"potential_energy", t.potentialEnergy},
            {"energy", t.kineticEnergy + t.potentialEnergy},
            {"contacts", st.points},
            {"manifolds", st.manifolds},
            {"uncoloured", st.uncoloured},
            {"threads", st.threads},
            {"warm_started", st.warmStarted},
            {"awake", st.awakeBodies},
            {"sleeping", st.sleepingBodies},
            {"islands", st.islands},
            {"max_height", st.maxHeight},
            {"max_joint_error", solver.rigid().maxJointError()},
            {"settings", rigidSettingsJson(scene.solver.rigid)}};
}

json settingsJson(const SolverSettings& s) {
    return {{"method", std::string(toString(s.method))},
            {"dt", s.timeStep},
            {"substeps", s.substeps},
            {"iterations", s.iterations},
            {"threads", s.threads},
            {"gravity", {s.gravity.x(), s.gravity.y(), s.gravity.z()}},
            {"global_damping", s.globalDamping},
            {"exact_angular_momentum", s.exactAngularMomentum},
            {"self_collision", s.selfCollision},
            {"cloth_thickness", s.clothThickness},
            {"continuous_collision", s.continuousCollision}};
}

json collidersJson(const Scene& scene) {
    json out = json::array();
    for (const Collider& c : scene.colliders) {
        const Vec3 p = colliderPosition(c);
        json j{{"name", c.name},
               {"shape", std::string(toString(c.shape))},
               {"position", {p.x(), p.y(), p.z()}},
               {"friction", c.friction},
               {"restitution", c.restitution}};
        if (c.shape == ColliderShape::Sphere || c.shape == ColliderShape::Capsule) {
            j["radius"] = c.radius;
        }
        if (c.shape == ColliderShape::Plane) {
            j["normal"] = {c.normal.x(), c.normal.y(), c.normal.z()};
        }
        if (c.shape == ColliderShape::Box) {
            j["half_extents"] = {c.halfExtents.x(), c.halfExtents.y(), c.halfExtents.z()};
        }
        out.push_back(j);
    }
    return out;
}

json charactersJson(const Scene& scene, Real time) {
    json out = json::array();
    for (const Character& c : scene.characters) {
        json j{{"name", c.name},
               {"file", c.source},
               {"triangles", c.triangleCount()},
               {"subdivisions", c.subdivisions},
               {"collider", c.collider},
               {"clip", c.clip >= 0 ? json(c.clips[std::size_t(c.clip)].name) : json()},
               {"clip_time", c.clipTime(time)},
               {"start", c.start},
               {"speed", c.speed},
               {"end", c.end > 0 ? json(c.end) : json()},
               {"wrap", c.wrap == ClipWrap::Loop ? "loop" : "clamp"}};
        out.push_back(j);
    }
    return out;
}

json groupsJson(const Scene& scene) {
    json groups = json::array();
    for (std::size_t g = 0; g < scene.constraintGroups.size(); ++g) {
        const ConstraintGroup& group = scene.constraintGroups[g];
        const int K = materialComponents(group.type);
        json material = json::object(), stiffness = json::object();
        for (int k = 0; k < K; ++k) {
            std::string name = K == 1 ? (materialIsModulus(group.type) ? "modulus" : "compliance")
                                      : std::string(materialComponentName(group.type, k));
            std::replace(name.begin(), name.end(), ' ', '_');
            material[name] =
                std::isinf(group.material[k]) ? json("rigid") : json(group.material[k]);
            stiffness[name] = group.pbdStiffness[k];
        }
        const json pbdStiffness = K == 1 ? json(group.pbdStiffness[0]) : stiffness;
        json j{{"name", group.name},
               {"type", std::string(toString(group.type))},
               {"body",
                group.body >= 0 ? json(scene.bodies[std::size_t(group.body)].name) : json(nullptr)},
               {"enabled", group.enabled},
               {"constraints", constraintGroupSize(scene.constraints, int(g))},
               {"material", material},
               {"unit", std::string(materialUnit(group.type))},
               {"pbd_stiffness", pbdStiffness}};
        if (restStretchComponents(group.type) > 0) {
            j["rest_stretch"] =
                std::vector<double>(group.restStretch.begin(),
                                    group.restStretch.begin() + restStretchComponents(group.type));
        }
        groups.push_back(std::move(j));
    }
    return groups;
}

} // namespace pbd::cli
