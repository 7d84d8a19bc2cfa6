#pragma once
// Attachments authored from a selection of particles (the window's vertex selection): held at
// their place, held on a collider's surface, tied to the nearest particles of another body, or
// carried by a rigid body. Made from the scene's current positions, taken as the rest state,
// and put in constraint groups (core/constraints/ConstraintGroups.h) so that their compliance is
// edited like any group's. Particles already attached the same way are left as they are.

#include "core/base/Result.h"
#include "core/scene/Scene.h"

#include <vector>

namespace pbd {

struct AttachResult {
    int group = -1;          // the constraint group the new constraints are in (-1: rigid)
    std::size_t added = 0;   // constraints made
    std::size_t skipped = 0; // particles already attached this way
};

// Each particle held at its position (compliance 0: pinned there; > 0: a soft spring).
Result<AttachResult> attachToPoints(Scene& scene, const std::vector<Index>& particles,
                                    Real compliance = 0);
// Each particle held at the closest point of collider `collider`'s surface.
Result<AttachResult> attachToCollider(Scene& scene, const std::vector<Index>& particles,
                                      int collider, Real compliance = 0);
// A body of kind Collider made of the skin triangles `triangles` (indices into
// characterTriangles) of character `character`: one particle per skin vertex they use, without
// mass, each pinned to its skin vertex (a CharacterPin on a corner), so the solver moves it with
// the skin every substep. It is the character's kinematic boundary for the air (Air Meshes:
// the air between a skirt and the legs); the character's collider still does the contacts.
// Returns the body's index; Character::body names it.
Result<std::size_t> addSkinBody(Scene& scene, int character, const std::vector<Index>& triangles,
                                const std::string& name);

// Each particle tied by a distance constraint (its rest length the distance now) to the
// nearest particle of body `body`, in a group of the scene named "A to B".
Result<AttachResult> attachToBody(Scene& scene, const std::vector<Index>& particles, int body,
                                  Real compliance = 0);
// Each particle carried by rigid body `rigidBody` at the body point it is at now (two-way).
Result<AttachResult> attachToRigidBody(Scene& scene, const std::vector<Index>& particles,
                                       int rigidBody, Real compliance = 0);

// Each particle held where it is, relative to the closest point of character `character`'s
// skin as it is now, and carried along as the character moves (CharacterPin: the skin triangle,
// the point in it and the offset). `triangles`, when not empty, are the skin triangles to ride
// on (a waistband on the hips, not on a hand that hangs beside them).
Result<AttachResult> attachToCharacter(Scene& scene, const std::vector<Index>& particles,
                                       int character, Real compliance = 0,
                                       const std::vector<Index>& triangles = {});

} // namespace pbd
