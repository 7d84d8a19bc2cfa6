#pragma once
// Where a surface is broken, element by element, for a user to look at (the window's Problems
// dock draws each on the mesh, selects and frames it): holes as loops of border edges, edges and
// vertices that are not manifold, faces wound against their neighbours, degenerate triangles,
// and triangles that cross (within a body or between two). The counts are in SurfaceCheck.h;
// this says where.

#include "meshing/SurfaceCheck.h"

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace pbd {

struct SurfaceProblem {
    enum class Kind {
        Hole,              // a loop (or chain) of border edges
        NonManifoldEdge,   // an edge of more than two triangles
        NonManifoldVertex, // surfaces that meet at a single point
        FlippedFaces,      // triangles wound against their neighbours, or a body wound inward
        Degenerate,        // a triangle of zero area
        SelfIntersection,  // two triangles of one body that cross
        BodiesCross,       // two triangles of different bodies that cross
        BodyInside,        // a body wholly inside another that it does not cross
    };
    Kind kind = Kind::Hole;
    std::size_t body = 0; // the scene's body (for crossings, the first of the two)
    std::string text;     // names the body and the particles or triangles
    // What to draw, in particles of the scene: points, edges and triangles.
    std::vector<Index> points;
    std::vector<std::array<Index, 2>> edges;
    std::vector<Triangle> triangles;
};

std::string_view toString(SurfaceProblem::Kind kind);

// The problems of the scene's surfaces; `report` is checkSurfaces(scene) (its intersections and
// nested bodies are used). At most `limit` crossing pairs are listed one by one; the rest are
// counted in one more entry that holds them all.
std::vector<SurfaceProblem> locateSurfaceProblems(const Scene& scene, const SurfaceReport& report,
                                                  std::size_t limit = 200);

// The box around a problem's elements.
Bounds problemBounds(const Scene& scene, const SurfaceProblem& problem);

} // namespace pbd
