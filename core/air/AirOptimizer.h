#pragma once
// Topological optimisation of the air mesh (Air Meshes §4, eq. 4), so the air never locks when
// objects rotate or slide past each other: poor air tets are replaced by better ones through
// edge removal (the ring of tets around an edge becomes the best triangulation of the ring,
// found by dynamic programming; a ring of 3 is the 3-2 flip) and multi-face removal (the faces
// sandwiched between two vertices a and b give way to the ring of tets around a new edge ab;
// one face is the 2-3 flip), after Shewchuk, "Two discrete optimization algorithms for the
// topological improvement of tetrahedral meshes" (2002). The quality is
// q = 12/sqrt(2) V / l_rms^3.
//
// A free air point (a Steiner point the tessellation added, not on any surface) can also be
// removed, by contracting it onto a neighbour (Klingner and Shewchuk's vertex removal).
//
// Only air tets are ever removed, and no edge or face of a body (any body's triangles, cloth
// included) is removed, so the bodies, the cloth sheets and the container box keep their faces.
// A change is made only when the worst new tet is better than the worst tet it replaces, so
// every tet made is positive and the air's total volume is unchanged (the new tets fill exactly
// the cavity of the old ones).
//
// In a 2D scene (air triangles in the xy plane) a pass flips the edge between two air
// triangles where that raises their worse quality q = 4 sqrt(3) A / (l1^2 + l2^2 + l3^2)
// (Air Meshes eq. 3), never a body's edge or a rope's segment.
//
// The optimiser keeps the face adjacency of the air tets up to date flip by flip; a pass only
// compacts the array at its end. It works on scene.air.tets in place and rebuilds its
// adjacency only when the air it was built for changed in size behind its back.

#include "core/scene/Scene.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pbd {

struct AirOptimizationOptions {
    // Air tets with a quality below this are improved; the better ones are left alone.
    Real qualityThreshold = 0.3;
    // A change must raise the worst quality of the tets it touches by at least this much.
    Real minimumGain = 1e-6;
    // No tet worse than this is made: a nearly flat new tet would only invert at the next
    // step, and the air projection leaves degenerate ones to their neighbours.
    Real worstMade = 3e-4;
    // Tets worse than this (inverted beyond rounding) are left to the air projection.
    Real worstRemovable = -1e-9;
    // A free air point is contracted away only from a tet worse than this that no flip
    // improves (a needle or a sliver pressed flat).
    Real contractBelow = 0.05;
    // A free air point is contracted away even from a star this inverted (pressed onto a
    // vertex, its needles are inverted by a hair that no projection removes).
    Real worstContracted = -1e-3;
    // Air tets touching a body tet worse than this are left alone: next to a crushed or
    // inverted body the air's shape no longer says which side things are on (a body squashed
    // flat overlaps its neighbours), and only the air's connectivity remembers it.
    Real crushedBody = 0.02;
    // A tet no change improved is tried again after this many passes, or sooner when a tet
    // around one of its corners changed or its quality fell by a tenth (0: every pass). Most
    // candidates of a large air are slivers no flip can mend, against the bodies' faces: in
    // air-xl 14,000 of 15,000 were tried and failed again every pass, unchanged.
    int retryAfter = 8;
    int maxRing = 8;   // edge removal: tets around the edge, at most
    int maxFaces = 12; // multi-face removal: faces removed at once, at most
};

struct AirOptimizationStatistics {
    std::size_t candidates = 0;        // air tets below the quality threshold at the start
    std::size_t deferred = 0;          // candidates not tried: unchanged since they last failed
    std::size_t edgeRemovals = 0;      // including the 3-2 flips
    std::size_t flips32 = 0;           // edge removals with a ring of 3
    std::size_t multiFaceRemovals = 0; // including the 2-3 flips
    std::size_t flips23 = 0;           // multi-face removals of a single face
    std::size_t contractions = 0;      // free air points contracted onto a neighbour
    std::size_t frozenVertices = 0;    // vertices of crushed body tets, not touched
    std::size_t tetsBefore = 0;
    std::size_t tetsAfter = 0;
    Real minQualityBefore = 0;
    Real minQualityAfter = 0;
    double milliseconds = 0;

    std::size_t changes() const { return edgeRemovals + multiFaceRemovals + contractions; }
};

// The vertex-face pairs of the air, for the second, conventional pass after the air
// projection (Air Meshes §4.3: keep a distance epsilon between surfaces, with friction). For
// every air tet, each face that is solid (on the air's boundary, that is a body's surface or the
// container, or a cloth triangle) opposite a vertex that is solid too (a body's particle or an
// immovable container corner; not one of the air's free points) and of another body than the
// face (a body's own corner often lies in the plane of its own face across the air), with the
// face wound so that the vertex is on its positive side: (particle, face) is a positive tet.
struct AirContactPair {
    Index particle = 0;
    Triangle face{};
};
// `adjacency`, when given, is the air's face adjacency (AirOptimizer::adjacency), which saves
// building it.
std::vector<AirContactPair> airContactPairs(const Scene& scene,
                                            const std::vector<std::int32_t>* adjacency = nullptr);

// The worst quality of the air: the lowest q = 12/sqrt(2) V / l_rms^3 of its tets (eq. 4), or
// in 2D the lowest 4 sqrt(3) A / (l1^2 + l2^2 + l3^2) of its triangles (eq. 3); 1 without air.
Real worstAirQuality(const Scene& scene);

class AirOptimizer {
public:
    AirOptimizer();
    ~AirOptimizer();
    AirOptimizer(const AirOptimizer&) = delete;
    AirOptimizer& operator=(const AirOptimizer&) = delete;

    // One optimisation pass over scene.air.tets at the scene's current positions. The first
    // call (and any call after the air changed size outside the optimiser) builds the
    // adjacency and the set of fixed body edges and faces.
    AirOptimizationStatistics optimize(Scene& scene, const AirOptimizationOptions& options = {});

    // Everything inconsistent between the kept adjacency and scene.air.tets (neighbours that
    // do not point back or do not share the face); empty when consistent. For tests.
    std::vector<std::string> checkAdjacency(const Scene& scene) const;
    // The kept face adjacency (4 entries per air tet: the tet across the face opposite each
    // corner, -1 on the air's boundary) if it is the scene's current air's, else null.
    const std::vector<std::int32_t>* adjacency(const Scene& scene) const;
    // How many times the adjacency was built from scratch.
    std::size_t rebuilds() const { return rebuilds_; }

    // What the passes remember of each other (AirOptimizationOptions::retryAfter): the
    // candidates that failed in the last passes and when, the last pass that changed something
    // around each particle. A run resumed from a kept frame restores it, so it goes on as the
    // whole run did.
    struct Memory {
        std::uint32_t pass = 0;
        std::size_t tets = 0; // the air it was taken for
        struct Failed {
            std::int32_t tet;
            std::uint32_t pass;
            Real quality;
        };
        std::vector<Failed> failed;         // those a later pass may still defer
        std::vector<std::uint32_t> changed; // per particle (0: not within the last passes)
        std::size_t bytes() const;
    };
    std::shared_ptr<const Memory> memory(const AirOptimizationOptions& options = {}) const;
    // Taken up by the next pass (null: nothing remembered).
    void setMemory(std::shared_ptr<const Memory> memory);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    struct Planar; // the 2D pass
    std::unique_ptr<Planar> planar_;
    std::size_t rebuilds_ = 0;
    // setMemory's, until the next pass takes it up (a null inside: nothing remembered).
    std::optional<std::shared_ptr<const Memory>> pendingMemory_;
};

} // namespace pbd
