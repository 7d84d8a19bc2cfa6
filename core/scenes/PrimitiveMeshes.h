#pragma once
// Bodies generated procedurally: the project's own sample and test geometry.

#include "core/scene/Body.h"
#include "core/scene/Particles.h"

namespace pbd {

// A rectangular cloth sheet in the xz plane, `columns` x `rows` vertices, with UVs running
// from (0,0) to (1,1) along x and z. Triangles alternate their diagonal so the sheet has no
// preferred shear direction, and face +y.
struct ClothSheetSpec {
    int columns = 40;
    int rows = 40;
    Real width = 1.6; // along x, m
    Real depth = 1.6; // along z, m
    Vec3 center = Vec3::Zero();
    Real arealDensity = 0.2; // kg/m^2
};
Body makeClothSheet(Particles& particles, const ClothSheetSpec& spec, std::string name);

// A solid torus around the y axis, tetrahedralised with conforming tets: the tube's cross-section
// is a disk of `rings` concentric rings with `sides` vertices each around a centre vertex, swept
// through `segments` stations around the major circle. Each triangular prism between two stations
// is split into three tets by the global vertex order, so neighbouring prisms agree on every
// shared quad's diagonal. The boundary surface is stored as the body's triangles.
struct TetTorusSpec {
    Real majorRadius = 0.5; // m
    Real minorRadius = 0.2; // m
    int segments = 32;
    int sides = 12;
    int rings = 2;
    Vec3 center = Vec3::Zero();
    Real density = 1000; // kg/m^3
};
Body makeTetTorus(Particles& particles, const TetTorusSpec& spec, std::string name);

// A box of tets, vertices[0] x vertices[1] x vertices[2] vertices along x, y, z, each cell split
// into five tets (alternating so the mesh is conforming); boundary surface as triangles.
struct TetBoxSpec {
    std::array<int, 3> vertices{10, 10, 40};
    Vec3 size = Vec3(0.25, 0.25, 1.0); // m
    Vec3 center = Vec3::Zero();
    Real density = 1000; // kg/m^3
};
Body makeTetBox(Particles& particles, const TetBoxSpec& spec, std::string name);

// A chain of equally spaced particles from start to end (no triangles): the XPBD article's rope.
struct RopeSpec {
    int particles = 30;
    Vec3 start = Vec3(0, 1, 0);
    Vec3 end = Vec3(1.5, 1, 0);
    Real mass = 1.5; // kg, the whole rope
};
Body makeRope(Particles& particles, const RopeSpec& spec, std::string name);

} // namespace pbd
