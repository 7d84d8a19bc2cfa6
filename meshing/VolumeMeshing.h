#pragma once
// Tetrahedralization of closed bodies and tessellation of the air between and around all bodies
// (Air Meshes §4), both through TetGen in a child process (TetgenProcess.h), and the material
// frames of triangles (from UVs, SBD §3.3) and tets (global or from the nearest surface, §3.6).

#include "core/base/Result.h"
#include "core/scene/Scene.h"
#include "meshing/TetgenProcess.h"

#include <functional>
#include <string>
#include <vector>

namespace pbd {

struct TetOptions {
    double radiusEdgeRatio = 1.5; // TetGen's quality bound (q); 0 = no quality refinement
    double maxVolume = 0;         // m^3 per tet (a); 0 = no limit
    double timeoutSeconds = 300;  // per TetGen run
    TetgenFault fault = TetgenFault::None;
};

struct BodyTetReport {
    std::string body;
    std::size_t tets = 0;
    std::size_t steinerPoints = 0;    // interior vertices TetGen added
    std::size_t surfaceTriangles = 0; // of the input surface
    std::size_t surfacePreserved = 0; // input triangles found as tet faces
    std::size_t inverted = 0;         // tets TetGen returned with negative orientation
    double seconds = 0;
    std::size_t peakMemoryBytes = 0; // of TetGen's process
};

// A point strictly inside a closed, outward-wound surface, or an error when none is found
// (checked with the generalised winding number).
Result<Vec3> interiorPoint(const std::vector<Vec3>& positions,
                           const std::vector<Triangle>& triangles);

// Tetrahedralizes the listed bodies (closed, outward-wound surfaces) with TetGen's p, Y (the
// surface triangles are kept exactly, no Steiner points on them), q and a switches. Each
// body's particles become its surface vertices followed by the interior points; the body
// becomes a TetBody whose triangles stay its render and collision surface. Scenes with
// constraints are refused (meshing comes before authoring). progress covers the whole call.
Result<std::vector<BodyTetReport>> tetrahedralizeBodies(Scene& scene,
                                                        const std::vector<std::size_t>& bodies,
                                                        const TetOptions& options,
                                                        const ProgressCallback& progress = {});

struct AirOptions {
    double margin = 0.25;       // box margin as a fraction of the scene's largest extent
    int boxSubdivisions = 4;    // segments per box edge
    double radiusEdgeRatio = 0; // quality for air tets; 0 keeps the air as coarse as TetGen can
    double maxVolume = 0;       // m^3 per air tet; 0 = no limit (refining adds free air points)
    // Local air meshes: keep only air tets whose centroid or a corner lies within this distance
    // (m) of the surfaces of `localBodies` (all bodies when empty). 0 keeps all the air.
    double localDistance = 0;
    std::vector<std::string> localBodies;
    // Only the air between the bodies: the tets that touch the container are left out (a
    // garment's layers and a character's legs move as a whole; the box would stay behind).
    bool dropContainer = false;
    // When set, only the tets it accepts, given their centroid and whether all four corners
    // are fixed (the air inside a skirt, and not inside the character's legs, where nothing
    // moves).
    std::function<bool(const Vec3& centroid, bool fixed)> keep;
    double timeoutSeconds = 300;
    TetgenFault fault = TetgenFault::None;
};

struct AirReport {
    std::size_t tets = 0;
    std::size_t boxVertices = 0;    // pinned: the container
    std::size_t steinerPoints = 0;  // free air-only vertices (no momentum)
    std::size_t sharedVertices = 0; // air vertices that are body vertices
    std::size_t inverted = 0;       // tets TetGen returned with negative orientation
    std::size_t droppedByDistance = 0;
    std::size_t droppedByFilter = 0; // AirOptions::dropContainer and keep
    double volume = 0;
    double seconds = 0;
    std::size_t peakMemoryBytes = 0; // of TetGen's process
};

// Tessellates the space inside a box around all bodies: closed bodies (tet bodies and closed
// surfaces) are holes, open surfaces (cloth) are internal facets. Air tets share the bodies'
// surface vertices; air-only vertices are appended after the bodies' particles.
Result<AirReport> tessellateAir(Scene& scene, const AirOptions& options,
                                const ProgressCallback& progress = {});

enum class TetFrameMode { Global, NearestSurface };

struct FrameReport {
    std::size_t triangleFrames = 0;    // triangles with a frame
    std::size_t fromUVs = 0;           // of those, from their UVs
    std::size_t degenerateUV = 0;      // fell back to an edge frame
    std::size_t tetFrames = 0;         // tets given a frame from the nearest surface
    std::vector<std::string> warnings; // naming body and element
};

// Triangle frames come from UVs where the body has them (counted and checked); tet frames are
// set per `mode` (Global clears them: the world axes).
FrameReport assignMaterialFrames(Scene& scene, TetFrameMode mode);

// The orthonormal frame [u, v, n] of a triangle: u along the UV u direction (or the first edge
// when the UVs are degenerate or absent), n the normal. fromUVs tells which.
Mat3 triangleFrame(const Vec3& x0, const Vec3& x1, const Vec3& x2, const Vec2* uv,
                   bool* fromUVs = nullptr);

} // namespace pbd
