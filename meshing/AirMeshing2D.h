#pragma once
// The air of a 2D scene (Air Meshes' proof of concept: everything in the xy plane): a
// constrained Delaunay triangulation (CGAL) of a rectangle around all bodies, with every body's
// boundary edges and every rope's segments as constraints, whose triangles outside the bodies
// are the air. Air triangles share the bodies' and ropes' vertices; the rectangle's vertices
// are new, immovable particles.

#include "core/base/Result.h"
#include "core/scene/Scene.h"

namespace pbd {

struct Air2DOptions {
    Real margin = 0.1;       // of the scene's larger extent, on every side
    int boxSubdivisions = 8; // segments per side of the rectangle
};

struct Air2DReport {
    std::size_t triangles = 0; // air triangles
    std::size_t containerVertices = 0;
    std::size_t constrainedEdges = 0; // body boundary edges and rope segments
};

// Body triangles (wound counter-clockwise seen from +z) are solid; a body without triangles is
// a rope (a polyline through its particles in order). Every particle must lie in z = 0. Fails,
// naming the bodies, when boundaries or ropes cross.
Result<Air2DReport> tessellateAir2D(Scene& scene, const Air2DOptions& options = {});

} // namespace pbd
