#include "core/scene/Scene.h"

#include "core/scene/Topology.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace pbd {

Bounds Scene::bounds() const {
    Bounds b;
    for (const Body& body : bodies) {
        b.add(bounds(body));
    }
    // Rigid bodies that move; static ones (a ground) only when nothing else is there, so that
    // a 200 m ground does not set the view.
    Bounds fixed;
    for (const RigidBody& r : rigidBodies) {
        for (const RigidShape& shape : r.shapes) {
            (r.motion == RigidMotion::Static ? fixed : b).add(shapeBounds(r, shape));
        }
    }
    if (b.empty()) {
        b.add(fixed);
    }
    return b;
}

Bounds Scene::bounds(const Body& body) const {
    Bounds b;
    for (Index i = body.firstParticle; i < body.firstParticle + body.particleCount; ++i) {
        b.add(particles.positions[i]);
    }
    return b;
}

std::size_t Scene::triangleCount() const {
    std::size_t n = 0;
    for (const Body& body : bodies) {
        n += body.triangles.size();
    }
    return n;
}

std::size_t Scene::tetCount() const {
    std::size_t n = 0;
    for (const Body& body : bodies) {
        n += body.tets.size();
    }
    return n;
}

namespace {

template <std::size_t N>
void checkElements(const Body& body, const std::vector<std::array<Index, N>>& elements,
                   const char* what, std::vector<std::string>& problems) {
    const Index first = body.firstParticle;
    const Index last = body.firstParticle + body.particleCount;
    for (std::size_t e = 0; e < elements.size(); ++e) {
        for (Index v : elements[e]) {
            if (v < first || v >= last) {
                std::ostringstream s;
                s << "body '" << body.name << "': " << what << ' ' << e << " uses particle " << v
                  << ", outside the body's range [" << first << ", " << last << ")";
                problems.push_back(s.str());
                break;
            }
        }
    }
}

} // namespace

std::string describeParticle(const Scene& scene, std::size_t i) {
    std::string s = "particle " + std::to_string(i);
    for (const Body& b : scene.bodies) {
        if (i >= b.firstParticle && i - b.firstParticle < b.particleCount) {
            return s + " (vertex " + std::to_string(i - b.firstParticle) + " of body '" + b.name +
                   "')";
        }
    }
    const AirMesh& air = scene.air;
    if (i >= air.firstParticle && i - air.firstParticle < air.particleCount) {
        return s + " (of the air mesh)";
    }
    return s;
}

bool carriesEmbedded(const Scene& scene, std::size_t body) {
    const Body& b = scene.bodies.at(body);
    for (const EmbeddedMesh& m : scene.embedded) {
        for (const Tetrahedron& c : m.corners) {
            if (c[0] >= b.firstParticle && c[0] < b.firstParticle + b.particleCount) {
                return true;
            }
        }
    }
    return false;
}

int addCharacter(Scene& scene, Character character, Real friction, Real time) {
    refineCharacter(character);
    Collider collider =
        Collider::mesh(skinCharacter(character, time), characterTriangles(character));
    collider.name = character.name;
    collider.friction = friction;
    collider.velocities.assign(collider.vertices.size(), Vec3::Zero());
    character.collider = int(scene.colliders.size());
    scene.colliders.push_back(std::move(collider));
    scene.characters.push_back(std::move(character));
    return int(scene.characters.size()) - 1;
}

std::string connectCharacters(Scene& scene, Real time) {
    for (const Character& c : scene.characters) {
        if (c.collider < 0 || c.collider >= int(scene.colliders.size()) ||
            scene.colliders[std::size_t(c.collider)].shape != ColliderShape::Mesh ||
            scene.colliders[std::size_t(c.collider)].triangles.size() != c.triangleCount()) {
            return "character '" + c.name + "' moves collider " + std::to_string(c.collider) +
                   ", which is not a mesh of its " + std::to_string(c.triangleCount()) +
                   " triangles";
        }
    }
    for (Character& c : scene.characters) {
        refineCharacter(c); // the levels are not saved: made from the meshes
        Collider& collider = scene.colliders[std::size_t(c.collider)];
        collider.triangles = characterTriangles(c);
        collider.velocities.assign(c.vertexCount(), Vec3::Zero());
    }
    poseCharacters(scene, time);
    return {};
}

void poseCharacters(Scene& scene, Real time) {
    std::vector<Affine3> scratch;
    for (const Character& c : scene.characters) {
        if (c.collider >= 0 && std::size_t(c.collider) < scene.colliders.size()) {
            skinCharacter(c, time, scene.colliders[std::size_t(c.collider)].vertices, scratch);
        }
    }
}

std::vector<std::string> validateScene(const Scene& scene) {
    std::vector<std::string> problems;
    for (const Character& c : scene.characters) {
        if (std::string problem = checkCharacter(c); !problem.empty()) {
            problems.push_back(problem);
        } else if (c.collider < 0 || c.collider >= int(scene.colliders.size()) ||
                   scene.colliders[std::size_t(c.collider)].vertices.size() != c.vertexCount()) {
            problems.push_back("character '" + c.name + "' has no collider of its " +
                               std::to_string(c.vertexCount()) + " vertices");
        }
        if (c.body >= int(scene.bodies.size()) ||
            (c.body >= 0 && scene.bodies[std::size_t(c.body)].kind != BodyKind::Collider)) {
            problems.push_back("character '" + c.name + "' drives body " + std::to_string(c.body) +
                               ", which is not a collider body");
        }
    }
    const Particles& p = scene.particles;
    if (p.velocities.size() != p.size() || p.inverseMasses.size() != p.size() ||
        (!p.forces.empty() && p.forces.size() != p.size())) {
        problems.push_back("particle arrays have different lengths");
        return problems;
    }
    for (std::size_t i = 0; i < p.size(); ++i) {
        if (!p.positions[i].allFinite()) {
            problems.push_back(describeParticle(scene, i) + " has a non-finite position");
        }
        if (!std::isfinite(p.inverseMasses[i]) || p.inverseMasses[i] < 0) {
            std::ostringstream s;
            s << describeParticle(scene, i) << " has an invalid inverse mass " << p.inverseMasses[i]
              << (std::isinf(p.inverseMasses[i]) ? " (zero mass: a density of 0?)" : "");
            problems.push_back(s.str());
        }
    }
    for (const Body& body : scene.bodies) {
        if (std::size_t(body.firstParticle) + body.particleCount > p.size()) {
            problems.push_back("body '" + body.name + "' refers to particles beyond the scene's " +
                               std::to_string(p.size()));
            continue;
        }
        checkElements(body, body.triangles, "triangle", problems);
        checkElements(body, body.tets, "tetrahedron", problems);
        if (body.hasUVs() && body.triangleUVs.size() != body.triangles.size()) {
            problems.push_back("body '" + body.name + "' has UVs for " +
                               std::to_string(body.triangleUVs.size()) + " triangles but " +
                               std::to_string(body.triangles.size()) + " triangles");
        }
        if (!body.tetFrames.empty() && body.tetFrames.size() != body.tets.size()) {
            problems.push_back("body '" + body.name + "' has material frames for " +
                               std::to_string(body.tetFrames.size()) + " tets but " +
                               std::to_string(body.tets.size()) + " tets");
        }
        if (!problems.empty()) {
            continue; // volumes below would index out of range
        }
        for (std::size_t t = 0; t < body.tets.size(); ++t) {
            const Tetrahedron& tet = body.tets[t];
            const Real v = signedVolume(p.positions[tet[0]], p.positions[tet[1]],
                                        p.positions[tet[2]], p.positions[tet[3]]);
            if (!(v > 0)) {
                std::ostringstream s;
                s << "body '" << body.name << "': tetrahedron " << t << " has non-positive volume "
                  << v;
                problems.push_back(s.str());
            }
        }
    }
    const AirMesh& air = scene.air;
    if (std::size_t(air.firstParticle) + air.particleCount > p.size()) {
        problems.push_back("the air mesh refers to particles beyond the scene's " +
                           std::to_string(p.size()));
    }
    for (std::size_t t = 0; t < air.tets.size(); ++t) {
        const Tetrahedron& tet = air.tets[t];
        if (std::any_of(tet.begin(), tet.end(), [&](Index i) { return i >= p.size(); })) {
            problems.push_back("air tetrahedron " + std::to_string(t) +
                               " refers to a particle beyond the scene's " +
                               std::to_string(p.size()));
            break;
        }
        const Real v = signedVolume(p.positions[tet[0]], p.positions[tet[1]], p.positions[tet[2]],
                                    p.positions[tet[3]]);
        if (!(v > 0)) {
            std::ostringstream s;
            s << "air tetrahedron " << t << " has non-positive volume " << v;
            problems.push_back(s.str());
        }
    }
    if (!air.tets.empty() && !air.triangles.empty()) {
        problems.push_back("the air mesh has both tets and (2D) triangles");
    }
    for (std::size_t t = 0; t < air.triangles.size(); ++t) {
        const Triangle& tri = air.triangles[t];
        if (std::any_of(tri.begin(), tri.end(), [&](Index i) { return i >= p.size(); })) {
            problems.push_back("air triangle " + std::to_string(t) +
                               " refers to a particle beyond the scene's " +
                               std::to_string(p.size()));
            break;
        }
        const Vec3 a = p.positions[tri[1]] - p.positions[tri[0]];
        const Vec3 b = p.positions[tri[2]] - p.positions[tri[0]];
        if (!(a.x() * b.y() - a.y() * b.x() > 0)) {
            problems.push_back("air triangle " + std::to_string(t) +
                               " is not counter-clockwise in the xy plane");
        }
    }
    // Constraints must refer to existing particles; a solver would read out of range otherwise.
    const std::size_t n = p.size();
    auto checkBatch = [&](const auto& batch, ConstraintType type) {
        for (std::size_t e = 0; e < batch.particles.size(); ++e) {
            for (Index i : batch.particles[e]) {
                if (i >= n) {
                    problems.push_back(std::string(toString(type)) + " constraint " +
                                       std::to_string(e) + " refers to particle " +
                                       std::to_string(i) + " of " + std::to_string(n));
                    return;
                }
            }
        }
        // A negative or NaN compliance would make the step's denominator vanish or flip.
        for (std::size_t k = 0; k < batch.compliance.size(); ++k) {
            for (std::size_t e = 0; e < batch.compliance[k].size() && e < batch.size(); ++e) {
                const Real alpha = batch.compliance[k][e];
                if (!(alpha >= 0)) {
                    std::ostringstream s;
                    s << toString(type) << " constraint " << e << " (on "
                      << describeParticle(scene, batch.particles[e][0]) << ") has compliance "
                      << alpha << "; it must be 0 (rigid) or positive";
                    problems.push_back(s.str());
                    return;
                }
            }
        }
    };
    const ConstraintSet& c = scene.constraints;
    forEachTypedBatch(c, checkBatch);
    for (std::size_t a = 0; a < c.attachments.size(); ++a) {
        if (c.attachments.particle[a] >= n) {
            problems.push_back("attachment " + std::to_string(a) + " refers to particle " +
                               std::to_string(c.attachments.particle[a]) + " of " +
                               std::to_string(n));
        } else if (a < c.attachments.compliance.size() && !(c.attachments.compliance[a] >= 0)) {
            std::ostringstream s;
            s << "attachment " << a << " (on " << describeParticle(scene, c.attachments.particle[a])
              << ") has compliance " << c.attachments.compliance[a]
              << "; it must be 0 (a pin) or positive";
            problems.push_back(s.str());
        }
    }
    for (const PressureConstraint& pc : c.pressure) {
        for (Index i : pc.particles) {
            if (i >= n) {
                problems.push_back("pressure on '" + pc.body + "' refers to particle " +
                                   std::to_string(i) + " of " + std::to_string(n));
                break;
            }
        }
    }
    for (std::size_t i = 0; i < scene.rigidBodies.size(); ++i) {
        const RigidBody& r = scene.rigidBodies[i];
        const std::string name = "rigid body " + std::to_string(i) + " '" + r.name + "'";
        if (r.shapes.empty()) {
            problems.push_back(name + " has no shape");
        }
        if (!r.x.allFinite() || !r.q.coeffs().allFinite() || !r.v.allFinite() || !r.L.allFinite() ||
            !r.omega.allFinite()) {
            problems.push_back(name + " has a non-finite position, orientation or velocity");
        }
        if (r.isDynamic() && !(r.mass > 0 && std::isfinite(r.mass))) {
            problems.push_back(name + " is dynamic but has no mass (density " +
                               std::to_string(r.density) + ")");
        }
    }
    for (std::size_t j = 0; j < scene.rigidJoints.size(); ++j) {
        const RigidJoint& joint = scene.rigidJoints[j];
        const int count = int(scene.rigidBodies.size());
        if (joint.bodyA < -1 || joint.bodyA >= count || joint.bodyB < -1 || joint.bodyB >= count ||
            joint.bodyA == joint.bodyB) {
            problems.push_back("joint " + std::to_string(j) + " refers to bodies " +
                               std::to_string(joint.bodyA) + " and " + std::to_string(joint.bodyB) +
                               " of " + std::to_string(count));
        }
    }
    for (std::size_t a = 0; a < scene.rigidAttachments.size(); ++a) {
        const RigidAttachment& r = scene.rigidAttachments[a];
        if (r.particle >= p.size() || r.body < 0 ||
            std::size_t(r.body) >= scene.rigidBodies.size()) {
            problems.push_back("rigid attachment " + std::to_string(a) + " joins particle " +
                               std::to_string(r.particle) + " of " + std::to_string(p.size()) +
                               " to rigid body " + std::to_string(r.body) + " of " +
                               std::to_string(scene.rigidBodies.size()));
        }
    }
    const SolverSettings& s = scene.solver;
    if (!(s.timeStep > 0) || !std::isfinite(s.timeStep) || s.substeps < 1 || s.iterations < 1) {
        problems.push_back("solver settings need a positive time step, substeps and iterations");
    }
    for (const Collider& collider : scene.colliders) {
        if (std::string problem = checkCollider(collider); !problem.empty()) {
            problems.push_back(std::move(problem));
        }
    }
    for (std::string& problem : validateConstraintGroups(scene)) {
        problems.push_back(std::move(problem));
    }
    for (const EmbeddedMesh& mesh : scene.embedded) {
        for (std::string& problem : validateEmbedded(mesh, p.size())) {
            problems.push_back(std::move(problem));
        }
    }
    return problems;
}

std::string divergence(const Scene& scene, std::size_t step) {
    const std::string diverged =
        "the simulation diverged" + (step > 0 ? " in step " + std::to_string(step) : "") + ": ";
    for (std::size_t i = 0; i < scene.particles.size(); ++i) {
        if (!scene.particles.positions[i].allFinite()) {
            return diverged + describeParticle(scene, i) + " has a non-finite position";
        }
    }
    for (const RigidBody& b : scene.rigidBodies) {
        if (!b.x.allFinite() || !b.q.coeffs().allFinite() || !b.v.allFinite() || !b.L.allFinite()) {
            return diverged + "rigid body '" + b.name + "' has a non-finite position or velocity";
        }
    }
    return "";
}

} // namespace pbd
