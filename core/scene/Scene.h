#pragma once
// A scene: the particles of all bodies, the bodies that own them, the constraints between them
// and the settings it is simulated with.

#include "core/anim/Character.h"
#include "core/constraints/ConstraintGroups.h"
#include "core/constraints/Constraints.h"
#include "core/rigid/RigidBody.h"
#include "core/scene/Body.h"
#include "core/scene/Embedding.h"
#include "core/scene/Particles.h"
#include "core/solver/Colliders.h"
#include "core/solver/SolverSettings.h"

#include <string>
#include <vector>

namespace pbd {

// The tessellated air between and around the bodies (Air Meshes §4): tets that share their
// vertices with the bodies' surfaces. The particles that belong to the air alone (the bounding
// box and any interior Steiner points) are [firstParticle, firstParticle + particleCount).
struct AirMesh {
    std::vector<Tetrahedron> tets; // global particle indices; positive signed volume
    // 2D scenes (everything in the xy plane, the paper's proof of concept): the air is
    // triangles, counter-clockwise seen from +z.
    std::vector<Triangle> triangles;
    Index firstParticle = 0;
    Index particleCount = 0;

    bool empty() const { return tets.empty() && triangles.empty(); }
    // Air elements: the tets, then the triangles.
    std::size_t size() const { return tets.size() + triangles.size(); }
};

struct Scene {
    std::string name;
    std::string description;
    Particles particles;
    std::vector<Body> bodies;
    ConstraintSet constraints;
    // The groups the constraints are authored in (core/constraints/ConstraintGroups.h); every
    // element's `group` indexes this.
    std::vector<ConstraintGroup> constraintGroups;
    std::vector<Collider> colliders;
    AirMesh air;
    // Rigid bodies (§5) and the joints between them; stepped with the particles, each substep.
    std::vector<RigidBody> rigidBodies;
    std::vector<RigidJoint> rigidJoints;
    // Particles held at points of rigid bodies (two-way: the bodies feel the pull).
    std::vector<RigidAttachment> rigidAttachments;
    SolverSettings solver;
    // Render meshes that cage tets carry (core/scene/Embedding.h): drawn and exported in place
    // of the cage, never simulated themselves.
    std::vector<EmbeddedMesh> embedded;
    // Animated characters (core/anim): each moves its mesh collider (Character::collider) to
    // its pose at every substep's time, with the skin's velocities.
    std::vector<Character> characters;

    Bounds bounds() const;
    Bounds bounds(const Body& body) const;
    std::size_t triangleCount() const;
    std::size_t tetCount() const;
};

// Adds `character` and the mesh collider it moves (its skin at `time`, at rest until a solver
// steps it); returns the character's index.
int addCharacter(Scene& scene, Character character, Real friction = 0.5, Real time = 0);
// Puts every character's collider at its skin at `time` (after loading a scene, or to show a
// time without stepping); a message naming a character whose collider is missing or not its
// mesh, "" when all are connected.
std::string connectCharacters(Scene& scene, Real time = 0);
// Only the colliders' vertices, to the skin at `time` (a view following the timeline).
void poseCharacters(Scene& scene, Real time);

// Everything wrong with a scene's data, each problem naming the body and the element
// (indices out of range, non-finite positions, inverted tets, UVs not matching triangles).
// Empty when the scene is consistent.
std::vector<std::string> validateScene(const Scene& scene);

// Whether body b carries one of the scene's embedded meshes (it is a cage).
bool carriesEmbedded(const Scene& scene, std::size_t body);

// "particle 12 (vertex 3 of body 'cloth')", "particle 80 (of the air mesh)": for messages.
std::string describeParticle(const Scene& scene, std::size_t particle);

// "the simulation diverged: ..." naming the first particle or rigid body with a non-finite
// state ("diverged in step N: ..." when given the step); "" when all are finite.
std::string divergence(const Scene& scene, std::size_t step = 0);

} // namespace pbd
