#pragma once
// The rigid-body scenes PBD Lab generates (§5): stacking, joints and free flight, each a
// standard test of a rigid solver.

#include "core/scene/Scene.h"

namespace pbd {

// A static ground box whose top face is the plane y = 0.
RigidBody rigidGround(Real halfSize = 100);
// A dynamic box of the given half extents centred at `position` (density 1000 kg/m^3).
RigidBody boxBody(std::string name, const Vec3& halfExtents, const Vec3& position);

// A wall pyramid of 1 m boxes: `base` boxes in the bottom row, one fewer in each row above
// (base 20: 210 boxes; base 100: 5,050).
Scene makeRigidPyramid(int base);
// A vertical stack of `count` 1 m boxes on the ground.
Scene makeRigidStack(int count);
// `links` capsules hanging from the world by ball joints (hinges with `hinged`), the last
// carrying a sphere `massRatio` times as heavy as a link, released from horizontal.
Scene makeRigidChain(int links, Real massRatio, bool hinged = false);
// A T-handle spinning about its intermediate axis with omega = (10, 1, 0) rad/s in zero
// gravity: it flips over and over (the Dzhanibekov effect).
Scene makeSpinningTop();
// A cloth hanging from a kinematic bar that moves sideways, draped over a dynamic block and
// weighted at a far corner by a dynamic ball: attachments and contacts both ways.
Scene makeClothOnRigid();

} // namespace pbd
