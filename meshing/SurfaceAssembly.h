#pragma once
// Turns the triangle soup a file format delivers into a body: corners welded by position so
// that UV seams and per-face normals do not split simulation vertices, UVs kept per corner.

#include "core/Body.h"
#include "core/Particles.h"

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

} // namespace pbd
