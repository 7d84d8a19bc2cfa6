#pragma once
// Validation of the bodies' triangle surfaces before they are tetrahedralized: a report per
// body (closed or open, manifold, orientation, degenerate and self-intersecting triangles,
// components, UV coverage) and between bodies. Every problem is a message that names the body
// and the element. The repairs are in meshing/SurfaceRepair.h.

#include "core/scene/Scene.h"

#include <string>
#include <vector>

namespace pbd {

struct BodySurfaceReport {
    std::string body;
    std::size_t vertices = 0; // particles referenced by the surface
    std::size_t triangles = 0;
    std::size_t boundaryEdges = 0;       // edges in one triangle (0 for a closed surface)
    std::size_t nonManifoldEdges = 0;    // edges in more than two triangles
    std::size_t nonManifoldVertices = 0; // vertices whose triangles form more than one fan
    std::size_t inconsistentEdges = 0;   // interior edges both triangles traverse the same way
    std::size_t degenerateTriangles = 0; // zero area (collinear or repeated corners)
    std::size_t selfIntersections = 0;   // pairs of this body's triangles that cross
    std::size_t components = 0;          // edge-connected pieces
    double signedVolume = 0;             // of a closed surface: positive when wound outward
    double area = 0;
    double uvCoverage = 0;                 // fraction of triangles with a usable UV frame
    std::size_t degenerateUVTriangles = 0; // triangles whose UVs have zero area

    bool closed() const { return triangles > 0 && boundaryEdges == 0 && nonManifoldEdges == 0; }
    bool manifold() const { return nonManifoldEdges == 0 && nonManifoldVertices == 0; }
    bool outward() const { return closed() && inconsistentEdges == 0 && signedVolume > 0; }
};

struct TriangleIntersection {
    std::size_t bodyA = 0, triangleA = 0; // body index in the scene, triangle index in the body
    std::size_t bodyB = 0, triangleB = 0;
    // A body against a character's skin where the skin crosses itself (B's triangle crosses
    // another of the skins': a knee or a hip crease folding through itself as the character
    // bends, or two of its meshes overlapping where they meet). Cloth caught in a fold has no
    // place that crosses neither side: the pair says more about the character's animation
    // than about the simulation.
    bool atSkinFold = false;
};

struct SurfaceReport {
    std::vector<BodySurfaceReport> bodies;
    std::vector<TriangleIntersection> intersections; // within and between bodies
    std::vector<std::string> problems; // what stops tetrahedralization, naming body and element
    std::vector<std::string> warnings; // what is suspicious but can be meshed
    // Bodies wholly inside a closed body that their surfaces do not cross, as (inner, outer),
    // the innermost outer for each (found with the intersections): no air reaches them, and
    // tetrahedralized they would overlap it. A problem for meshing, like crossing bodies.
    std::vector<std::pair<std::size_t, std::size_t>> nested;

    // Pairs of different bodies that cross each other.
    std::size_t bodyIntersections() const;
};

// Checks every body with triangles.
// Self-intersections are found with CGAL's exact predicates, unless `intersections` is false
// (then selfIntersections stays 0 and no pair is listed).
SurfaceReport checkSurfaces(const Scene& scene, bool intersections = true);

// All pairs of triangles that intersect other than at a shared vertex or edge, over every
// body's surface (implemented with CGAL in SelfIntersections.cpp). Degenerate triangles are
// skipped; they are reported on their own. With `characters`, each character's skin (its
// collider as posed now) counts too, as body bodies.size() + k, against the bodies only (a
// character's own meshes overlap where they meet), its pairs marked atSkinFold where the skin's
// triangle crosses the skins themselves.
std::vector<TriangleIntersection> findIntersections(const Scene& scene, bool characters = false);
// How many of `pairs` are atSkinFold.
std::size_t countAtSkinFolds(const std::vector<TriangleIntersection>& pairs);
// A body's name, or a character's for the indices past the bodies.
std::string intersectionBodyName(const Scene& scene, std::size_t body);

} // namespace pbd
