#pragma once
// Rigid shapes as triangle surfaces, for exports that carry rigid bodies as meshes moved by
// their poses (glTF node animation, ParaView's rigid block). Boxes and hulls by their faces
// (fans of the counter-clockwise loops), spheres and capsules as latitude-longitude meshes.
// Triangles wind counter-clockwise seen from outside.

#include "core/rigid/RigidBody.h"

#include <vector>

namespace pbd {

struct ShapeMesh {
    std::vector<Vec3> vertices;
    std::vector<Triangle> triangles;
};

// The shape's surface in its body's frame (the shape's pose applied); `segments` around a
// sphere's or capsule's axis (at least 4).
void appendShapeMesh(const RigidShape& shape, int segments, ShapeMesh& out);
// All the body's shapes, in the body frame (the world is x + q * vertex).
ShapeMesh rigidBodyMesh(const RigidBody& body, int segments = 16);

} // namespace pbd
