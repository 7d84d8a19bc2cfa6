#pragma once
// Turns the triangle soup a file format delivers into a body: corners welded by position so
// that UV seams and per-face normals do not split simulation vertices, UVs kept per corner.

#include "core/scene/Body.h"
#include "core/scene/Particles.h"
#include "core/scene/Scene.h"

#include <string>
#include <vector>

namespace pbd {

struct TriangleSoup {
    std::string name;
    std::vector<Vec3> corners; // 3 per triangle
    std::vector<Vec2> uvs;     // 3 per triangle, or empty
};

struct AssemblyReport {
    std::size_t weldedCorners = 0;     // corners merged into an existing vertex
    std::size_t droppedDegenerate = 0; // triangles that collapsed after welding
    std::size_t droppedNonFinite = 0;  // triangles with a NaN or infinite coordinate
};

// Appends the body's particles (inverse mass 0: roles and masses are assigned later) and
// returns the body. Corners closer than relativeTolerance times the soup's bounding-box
// diagonal become one vertex.
Body assembleBody(Particles& particles, const TriangleSoup& soup, double relativeTolerance,
                  AssemblyReport& report);

// The body's shells (its triangles connected through shared vertices), one body each: the
// body's particles are reordered in place, shell by shell, and the shells named NAME, NAME-2,
// NAME-3, ... in the order of their first triangle. One shell: the body itself, unchanged.
std::vector<Body> splitShells(Particles& particles, const Body& body);

// Appends the boundary surface of a generated solid (its triangles, with particles from `from`)
// to `scene` as a bare surface body named `name`: the particles become the surface's vertices
// only, as an importer would deliver them. Returns the new body.
Body& appendSurfaceOf(Scene& scene, const Body& solid, const Particles& from,
                      const std::string& name);

} // namespace pbd
