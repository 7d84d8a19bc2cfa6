#pragma once
// A body: a named set of particles with the topology that simulates and renders them.

#include "core/base/LinearAlgebra.h"

#include <string>
#include <string_view>
#include <vector>

namespace pbd {

enum class BodyKind {
    Cloth,    // a triangle sheet
    TetBody,  // a deformable solid: tetrahedra plus their boundary surface (in a 2D scene, its
              // triangles in the xy plane)
    Collider, // static or animated geometry that others collide with
    Surface,  // an imported triangle surface whose role (cloth, tet body, collider) is not set yet
};

std::string_view toString(BodyKind kind);

struct Body {
    std::string name;
    BodyKind kind = BodyKind::Cloth;
    Index firstParticle = 0; // the body's particles are [firstParticle, firstParticle + count)
    Index particleCount = 0;
    std::vector<Triangle> triangles; // global particle indices; counter-clockwise seen from outside
    std::vector<Tetrahedron> tets;   // global particle indices; positive signed volume
    // Texture coordinates per triangle corner (parallel to triangles), so a UV seam does not
    // split a simulation vertex. Empty when the body has no UVs.
    std::vector<std::array<Vec2, 3>> triangleUVs;
    // Material axes per tet (parallel to tets): the columns are the x, y, z axes strain is
    // measured along (SBD §3.6). Empty means the world axes.
    std::vector<Mat3> tetFrames;

    bool hasUVs() const { return !triangleUVs.empty(); }
};

// Whether self-collision (SolverSettings::selfCollision) keeps the body's triangles apart from
// the others': a cloth's, and a 3D soft body's boundary surface (a 2D body's triangles are its
// elements, in one plane).
inline bool takesPartInSelfCollision(const Body& body) {
    return body.kind == BodyKind::Cloth || (body.kind == BodyKind::TetBody && !body.tets.empty());
}

} // namespace pbd
