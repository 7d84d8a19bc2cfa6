#pragma once
// The repair ladder: what turns a user's broken surface into one TetGen accepts. Each rung runs
// only when the checks (meshing/SurfaceCheck.h) ask for it, and is reported per body:
//   stitch            border vertices closer than a tolerance merged (cracks closed)
//   degenerate        zero-area and duplicate triangles removed
//   non_manifold      a vertex or edge where separate surfaces meet gets one copy per surface
//   orient            triangles wound consistently, closed pieces outward
//   fill_holes        holes filled when every hole of the body is small (a body with a larger
//                     opening is cloth and keeps it)
//   self_intersections  crossing regions removed and refilled (CGAL PMP, experimental)
//   wrap              a body meant as a solid that is still not a closed 2-manifold bounding a
//                     volume is replaced by its alpha wrap (CGAL::alpha_wrap_3), with the
//                     wrap's distance to the original and the volume change reported.

#include "core/scene/Scene.h"
#include "meshing/SurfaceCheck.h"

#include <string>
#include <vector>

namespace pbd {

enum class WrapMode {
    Auto,   // bodies meant as solids (closed, or open only by small holes) still broken at the end
    Always, // every body with a surface (a cage around anything)
    Never,
};

struct RepairOptions {
    bool dropDegenerate = true; // remove zero-area triangles
    bool orientOutward = true;  // make triangles agree with their neighbours, closed pieces outward
    // Border vertices closer than this fraction of the body's mean edge length are merged,
    // which closes small cracks (0 disables stitching).
    double stitchTolerance = 0.05;
    bool splitNonManifold = true;
    // A hole is small when its border is at most this fraction of the body's bounding-box
    // diagonal long (0 disables filling).
    double maxHole = 0.3;
    bool removeSelfIntersections = true;
    WrapMode wrap = WrapMode::Auto;
    // m; 0 = the body's bounding-box diagonal / 50, but not below the whole scene's / 500
    double wrapAlpha = 0;
    double wrapOffset = 0; // m; 0 = alpha / 30
};

struct WrapReport {
    double alpha = 0, offset = 0; // m, as used
    // One-sided Hausdorff distances (m), each within hausdorffError: how far the wrap strays
    // from the original surface, and how far the original's farthest point lies from the wrap
    // (filled concavities, inner faces of overlapping parts).
    double wrapToOriginal = 0;
    double originalToWrap = 0;
    double hausdorffError = 0;
    // The enclosed volume (signed sum) of what was wrapped: the body after the other rungs, or
    // the closed parts of crossing bodies added up (overlaps counted twice), m^3.
    double volumeBefore = 0;
    double volumeAfter = 0;
    std::size_t trianglesBefore = 0, trianglesAfter = 0;
};

struct BodyRepair {
    std::string body;
    // The rungs that ran, in order (the names above), and what each did: one line each, naming
    // the body.
    std::vector<std::string> rungs;
    std::vector<std::string> actions;
    bool wrapped = false;
    WrapReport wrap; // when wrapped
    // After the ladder: closed, manifold, outward and not crossing itself.
    bool solid = false;
    bool ran(const std::string& rung) const;
};

struct RepairReport {
    std::vector<std::string> actions; // every body's lines, in order
    std::vector<BodyRepair> bodies;   // one per body with a surface to repair
};

// Bodies whose surfaces cross each other (game and CAD models are built of overlapping parts).
enum class OverlapMode {
    Wrap,  // each group of crossing bodies becomes one body, the alpha wrap of them all
    Union, // ... their boolean union (CGAL corefinement) when every part bounds a volume, else
           // the wrap
    Keep,  // left as they are: meshing refuses the crossing
};

struct MergedOverlap {
    std::string body;               // the merged body (named after its first part)
    std::vector<std::string> parts; // the bodies it replaced, in scene order
    bool united = false;            // by the boolean union; else wrapped
    WrapReport wrap;                // when wrapped
    std::string action;             // one line naming the parts and what was done
};

// Merges each group of bodies that cross one another or lie one inside another (the
// intersections and nested bodies of `checks`, from checkSurfaces) and that holds at least one
// closed body; crossings among open bodies (cloth) only are left to be reported. The merged
// body takes the place of the group's first body; particles are renumbered (the scene must have
// no constraints or air yet).
std::vector<MergedOverlap> mergeOverlaps(Scene& scene, const SurfaceReport& checks,
                                         OverlapMode mode, const RepairOptions& options = {});

// Runs the ladder on every body with triangles and no tets. A body that gains or loses vertices
// gets its particles renumbered (the scene must have no constraints or air yet, as prepare's
// input); otherwise particles are not removed (a stitched vertex simply stops being referenced).
// Triangle UVs follow their triangles; new triangles get zero UVs, a wrapped body none.
RepairReport repairSurfaces(Scene& scene, const RepairOptions& options = {});

} // namespace pbd
