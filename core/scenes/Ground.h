#pragma once
// The ground PBD Lab puts under opened meshes and new scenes, so that they come to rest in view
// rather than fall forever: a plane collider named "ground" under the particles or, in a scene
// with rigid bodies, a static rigid box named "ground" whose top face is that plane (rigid bodies
// meet rigid bodies, not colliders; the particles meet the box through the coupling).

#include "core/scene/Scene.h"

namespace pbd {

inline constexpr const char* kGroundName = "ground";

// Whether the scene has a ground: a plane collider or a static rigid body named "ground".
bool hasGround(const Scene& scene);
// Where a ground goes: the lowest point of the bodies and the moving rigid bodies (0 when
// there is none).
Real groundHeight(const Scene& scene);
// Adds a ground whose surface is the plane y = height (friction 0.5), unless there is one.
void addGround(Scene& scene, Real height);
// Removes the ground plane and the static ground body, if any.
void removeGround(Scene& scene);

} // namespace pbd
