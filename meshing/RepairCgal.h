#pragma once
// Internal to meshing/: the rungs of the repair ladder (meshing/SurfaceRepair.h) that CGAL's
// Polygon Mesh Processing and 3D Alpha Wrapping do. One translation unit (RepairCgal.cpp)
// instantiates them: each costs tens of seconds and over a gigabyte to compile.

#include "core/base/LinearAlgebra.h"

#include <array>
#include <functional>
#include <vector>

namespace pbd::cgal {

// Triangles, as indices into `loop`, that close the hole the closed polyline `loop` borders
// (Liepa's minimal-area triangulation, restricted to a 3D Delaunay triangulation). Empty when
// none is found.
std::vector<std::array<int, 3>> triangulateHole(const std::vector<Vec3>& loop);

// CGAL's (experimental) self-intersection removal on a closed, oriented, manifold surface: the
// crossing regions are removed and refilled. `origin[t]` is the input triangle each output
// triangle keeps, or -1 for a new one. False when the surface cannot be built as a halfedge mesh
// or still intersects itself afterwards; then the inputs are left as they were.
bool removeSelfIntersections(std::vector<Vec3>& points, std::vector<Triangle>& triangles,
                             std::vector<long>& origin);

struct Wrap {
    std::vector<Vec3> points;
    std::vector<Triangle> triangles; // closed, 2-manifold, outward
    double volume = 0;               // m^3
    // One-sided Hausdorff distances, to within hausdorffError (CGAL's bounded-error Hausdorff
    // distance): how far the wrap strays from the input, and how far the input's farthest point
    // (a filled concavity, an inner face of overlapping parts) lies from the wrap.
    double wrapToInput = 0;
    double inputToWrap = 0;
    double hausdorffError = 0;
    bool cancelled = false;
};

// The alpha wrap (CGAL::alpha_wrap_3) of a triangle soup: a watertight, 2-manifold surface
// around it, `offset` (m) off the input, with no cavity narrower than `alpha` (m). With
// `measure` false the Hausdorff distances are left at 0 (they cost more than a coarse wrap).
// `keepGoing` is asked every few thousand facets the wrap treats; false stops it (the result
// is empty, and `cancelled` set).
Wrap alphaWrap(const std::vector<Vec3>& points, const std::vector<Triangle>& triangles,
               double alpha, double offset, bool measure = true,
               const std::function<bool()>& keepGoing = {});

// The boolean union of two closed, outward surfaces that do not cross themselves (CGAL PMP
// corefinement), into `points` and `triangles`. False when either is not such a surface or the
// union fails; then the inputs are left as they were.
bool unite(std::vector<Vec3>& points, std::vector<Triangle>& triangles,
           const std::vector<Vec3>& otherPoints, const std::vector<Triangle>& otherTriangles);

} // namespace pbd::cgal
