#pragma once
// Continuous collision as a guarantee: surfaces that start a substep without crossing each other
// end it without crossing. Two triangle meshes can only come to cross where a vertex touches a
// triangle or an edge touches an edge on the way, so every such pair is followed along the
// straight moves from the substep's start to its end (conservative advancement: the pair's
// distance can close no faster than the primitives' largest relative move, so the test steps
// through time by distance / that bound, and a pair that comes within kTouch counts as
// touching; one that does not clear the substep in kMostAdvances steps, as surfaces sliding past
// each other close by do, counts as touching unless the cubic of its signed volume shows it
// stays on one side of the other's plane, farther than kTouch). The particles of touching pairs are
// joined in impact zones (Bridson, Fedkiw and Anderson 2002; Harmon et al. 2008), and each zone
// moves as one, by its members' weighted mean move: a translation, within which nothing can
// touch, since everything began apart. What a zone moves into joins it, round after round, until
// no pair touches; as the fail-safe, particles of pairs still touching keep their start
// positions. The solver weighs a particle in contact with a moving collider kSkinWeight times
// its mass.
//
// Vertices that cannot be held (pins; a character's skin, which the solver adds as vertices
// after its particles) move as they are told and join no zone: a zone touching one of their
// triangles or edges moves at least as far as they do along the direction between the two at
// the start, less half their distance then (so the two stay at least half their start's
// distance apart, or 0.1 mm), starting from their mean move and moved onto those half-spaces
// by cyclic projections. A zone
// they close in on from both sides (cloth caught in a fold of the skin) has no such move: it
// moves by their mean move and its pairs count as unresolved. Pairs of such vertices alone are
// not followed (a skin folding through itself).
//
// Triangles that already cross at the start are let go: a pair whose primitives both belong to
// triangles that cross at the start is not followed, so the contacts, the air and the
// constraints can take them apart (followed, the crossing would be held).
//
// The pairs: those of triangles that share a corner from a list made once (most dismissed by a
// bound in floats on their moves against each other: a fold through a neighbour takes more
// than a substep's moves); the others from a tree over the triangles in Morton order,
// refitted, searched with the swept boxes grown by a margin, and the list kept while the
// vertices stay within half the margin of where they were (less the surface's mean move), the
// triangles of those that strayed searched afresh. A pair of triangles that a fixed axis keeps
// apart over the move (trianglesStayApart: layers sliding over each other, along their
// normals) tests none of its primitives, nor one whose corners all moved as one zone.

#include "core/base/ClosestPoints.h"
#include "core/base/LinearAlgebra.h"
#include "core/base/Marks.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace pbd {

struct ContinuousCollisionStatistics {
    std::size_t pairs = 0;      // primitive pairs whose swept boxes overlap, followed in time
    std::size_t touching = 0;   // of them, the pairs that would touch (over every round)
    std::size_t held = 0;       // particles held back from their own move (moved with a zone)
    std::size_t unresolved = 0; // touching pairs the zones and the fail-safe left touching
    std::size_t tangled = 0;    // pairs of triangles crossing at the start, let go
    std::size_t tied = 0;       // tets (setTies) the moves would have inverted, kept whole
    int rounds = 0;
    std::size_t lists = 0; // times the candidate pairs were listed anew (the tree's search)
    double milliseconds = 0;

    // Another's counts and time added, the most rounds kept.
    void add(const ContinuousCollisionStatistics& o) {
        pairs += o.pairs;
        touching += o.touching;
        held += o.held;
        unresolved += o.unresolved;
        tangled += o.tangled;
        tied += o.tied;
        rounds = rounds > o.rounds ? rounds : o.rounds;
        lists += o.lists;
        milliseconds += o.milliseconds;
    }
};

// How much more a particle in contact with a moving collider weighs in its zone's mean.
constexpr Real kSkinWeight = 20;
// Closer than this a vertex touches a triangle, an edge an edge, m.
constexpr Real kTouch = 1e-7;
// Rounds of zones before the fail-safe holds what still touches.
constexpr int kMostZoneRounds = 64;
// A pair that has not cleared the substep after this many steps of conservative advancement
// (one that grazes without touching takes many) is decided by the side it keeps.
constexpr int kMostAdvances = 64;

// Whether point p, moving from p0 to p1, touches triangle (a, b, c), whose corners move from
// a0.. to a1.., within the move (all straight, at constant speed).
bool vertexTriangleTouch(const Vec3& p0, const Vec3& p1, const Vec3& a0, const Vec3& a1,
                         const Vec3& b0, const Vec3& b1, const Vec3& c0, const Vec3& c1);
// Whether segment (a, b) touches segment (c, d) within the move.
bool edgeEdgeTouch(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1, const Vec3& c0,
                   const Vec3& c1, const Vec3& d0, const Vec3& d1);

// Whether two triangles moving straight from p0 to p1 and from q0 to q1 (corners) stay farther
// than kTouch apart along one fixed axis over the whole move, so that no vertex of one touches
// the other and no edges touch: the first's normal at the start, the second's, or the direction
// between their centres at the start. False says nothing (they may still stay apart).
bool trianglesStayApart(const std::array<const Vec3*, 3>& p0, const std::array<const Vec3*, 3>& p1,
                        const std::array<const Vec3*, 3>& q0, const std::array<const Vec3*, 3>& q1);

// Whether triangles (a, b, c) and (d, e, f) cross: an edge of one passes through the other
// (in doubles, not exactly; triangles that only touch or lie in one plane do not count).
bool trianglesCross(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d, const Vec3& e,
                    const Vec3& f);

class ContinuousCollision {
public:
    // The surfaces to keep apart (global particle indices; any number of bodies, one list).
    // Their order, tree and edges are worked out again (at the next apply) only when the list
    // changes.
    void setTriangles(const std::vector<Triangle>& triangles);

    // The particles move from x0 to x1. The particles of pairs that would touch on the way
    // are joined in zones, and each zone moves by its members' mean wanted move, weighted by
    // `weights` (per particle; equal without), round after round as zones meet, until no pair
    // touches; once the zones can do no more (or after kMostZoneRounds) the particles of pairs
    // still touching are put back at x0. Only particles `holdable` allows (inverse mass > 0 for
    // the substep) are moved; the others bound their zones' moves (above). Runs its tests with
    // TBB in the calling arena; the result does not depend on the threads.
    //
    // With ties (setTies), a tet whose corners are all vertices of these surfaces and all held
    // (in a zone, or listed in `checkFirst`: held by an earlier apply), positive at x0, that
    // the moves would turn inside out at x1 (by more than rounding) joins its corners in one
    // zone, which moves them by one translation: it keeps its volume. The tets around
    // `checkFirst` are looked at before the first round, those around every vertex a round
    // moves after it; a tet with a corner not held is left to whatever moves that corner.
    ContinuousCollisionStatistics apply(const std::vector<Vec3>& x0, std::vector<Vec3>& x1,
                                        const std::vector<std::uint8_t>& holdable,
                                        const std::vector<Real>* weights = nullptr,
                                        const std::vector<Index>* checkFirst = nullptr);

    // Tets (particle indices; the air between the surfaces) the zones must not invert, read at
    // each apply until set again (nullptr: none). The list must outlive those applies.
    // `version` names what it holds: set again with the same list, size and version, the ties
    // built from it stay (the solver sets them every substep, and its air changes only in the
    // optimisation after a step's substeps: building them again was 1% of the dancer's step).
    void setTies(const std::vector<Tetrahedron>* tets, std::uint64_t version) {
        const std::size_t count = tets ? tets->size() : 0;
        if (tets != ties_ || version != tiesVersion_ || count != tiesCount_) {
            tiesBuilt_ = false;
        }
        ties_ = tets;
        tiesVersion_ = version;
        tiesCount_ = count;
    }

    // Per particle, whether the last apply held it (sized to the particles).
    const std::vector<std::uint8_t>& held() const { return held_; }

    // A box in floats, rounded outwards from the doubles it holds.
    struct Box {
        float lo[3], hi[3];
    };

private:
    // Triangles per leaf of the tree, and the depth to which its first levels are tasks. Leaves
    // of 16 (tested four boxes at a time) visit a quarter of the pairs of nodes that leaves of 4
    // did (the dancer's list of pairs: 2.4 million pairs of nodes, 18.7 ms of its 22 ms, with
    // leaves of 4); 8 and 24 were no faster.
    static constexpr Index kLeafSize = 16;
    static constexpr int kTaskDepth = 9;
    struct Node {
        Box box;
        Index begin = 0, end = 0; // its triangles
        Index left = 0;           // its children (left, left + 1); 0 for a leaf
        Index leaf = 0;           // a leaf's boxes in leafBoxes_
    };
    // A leaf's triangles' boxes side by side (the last refitTree's), a slot it does not use
    // empty: one box is tested against all four at once.
    struct alignas(16) LeafBoxes {
        float lo[3][kLeafSize], hi[3][kLeafSize];
    };
    std::vector<LeafBoxes> leafBoxes_;
    // Bit k set where `box` overlaps the leaf's k-th box, of its first `count` (the triangles
    // it holds).
    static unsigned overlapLeaf(const Box& box, const LeafBoxes& leaf, Index count);
    struct Sphere {
        Vec3 centre;         // of a triangle at the start
        Real radius, travel; // its corners' farthest from the centre, and farthest move
        Vec3 move;           // its corners' mean move
        Real spread;         // their farthest move from that mean
    };
    // The sphere of local triangle f for the moves from x0_ to x1_.
    Sphere sphereOf(Index f) const;
    void order(const std::vector<Vec3>& x0);
    void refit(const std::vector<Vec3>& x0, const std::vector<Vec3>& x1);
    bool candidatesHold();
    // Makes the list of candidate pairs; true when it leaves the tree refitted to boxes_ (a list
    // without a margin searches the swept boxes themselves).
    bool listCandidates();
    void refitTree(const std::vector<Box>& boxes);
    // The same where only `triangles` changed their boxes since the last refit.
    void refitTreeAt(const std::vector<Index>& triangles, const std::vector<Box>& boxes);
    void refitLeaf(Node& node, const std::vector<Box>& boxes);
    void refitInnerNodes();
    bool neighbours(Index a, Index b) const {
        const Triangle& A = local_[a];
        const Triangle& B = local_[b];
        for (Index v : A) {
            if (v == B[0] || v == B[1] || v == B[2]) {
                return true;
            }
        }
        return false;
    }
    // trianglesStayApart for local triangles a and b, moving from x0_ to x1_.
    bool stayApart(Index a, Index b) const {
        const Triangle& A = local_[a];
        const Triangle& B = local_[b];
        return trianglesStayApart(
            {&x0_[A[0]], &x0_[A[1]], &x0_[A[2]]}, {&x1_[A[0]], &x1_[A[1]], &x1_[A[2]]},
            {&x0_[B[0]], &x0_[B[1]], &x0_[B[2]]}, {&x1_[B[0]], &x1_[B[1]], &x1_[B[2]]});
    }
    // visit(g) for every triangle g whose box overlaps f's and that shares no corner with it.
    template <class Visit> void partners(Index f, Visit&& visit) const;
    // visit(a, b), a < b, for every pair of triangles under `node` whose `boxes` overlap; and
    // for every pair of one under p and one under q (the nodes' boxes refitted to `boxes`).
    template <class Visit>
    void selfPairs(Index node, const std::vector<Box>& boxes, Visit&& visit) const;
    template <class Visit>
    void crossPairs(Index p, Index q, const std::vector<Box>& boxes, Visit&& visit) const;
    // The primitive pairs triangles a and b test: vertexTriangle(vertex, triangle) and
    // edgeEdge(e0, e1, f0, f1), those of the vertices and edges each owns that share no corner.
    template <class VertexTriangle, class EdgeEdge>
    void forEachPrimitivePair(Index a, Index b, VertexTriangle&& vertexTriangle,
                              EdgeEdge&& edgeEdge) const;

    std::vector<Triangle> triangles_; // as given (global particle indices)
    Index mostParticle_ = 0;          // the largest index they name
    bool ordered_ = false;
    // Per triangle as given, whether no corner can be held when it was put in order; local
    // triangles from fixedBegin_ on are those, and a node of the tree holds only one kind.
    std::vector<std::uint8_t> orderedFixed_;
    Index fixedBegin_ = 0;
    bool fixedNode(const Node& n) const { return n.begin >= fixedBegin_; }
    // Local numbering (order): the surface's vertices (global_: their particles) and triangles.
    std::vector<Index> global_;
    std::vector<Index> localOf_; // by particle: its local vertex, or kNone
    std::vector<Triangle> local_;
    // Per triangle, which of its corners (bits 0-2) and edges (bits 3-5, edge k from corner k to
    // k + 1) it tests: each vertex and edge belongs to one triangle of those that hold it, so
    // a pair of primitives is tested once, by the pair of their triangles (whose swept boxes
    // overlap whenever the primitives' do).
    std::vector<std::uint8_t> owns_;
    std::vector<Index> vertexTriangleStart_, vertexTriangles_; // per vertex, its triangles
    std::vector<Node> nodes_;
    std::vector<Index> leafOf_; // per triangle, its leaf's node
    Marks leavesRefitted_;
    // Triangles sharing a corner: per triangle, and their primitive pairs.
    std::vector<Index> adjacentStart_, adjacentOf_;
    std::vector<std::array<Index, 2>> adjacentVF_; // (vertex, triangle)
    std::vector<std::array<Index, 4>> adjacentEE_; // (e0, e1, f0, f1)
    Real meanEdge_ = 0;
    // The other pairs that may touch (listCandidates), per triangle too, and what they hold for.
    std::vector<std::pair<Index, Index>> candidates_;
    std::vector<Vec3> xb_; // where the vertices were when listed
    Real margin_ = 0;
    bool built_ = false;
    int appliesSinceList_ = 2, listsWithoutMargin_ = 0;
    static constexpr int kShortestMarginPause = 8, kLongestMarginPause = 512;
    int marginPause_ = kShortestMarginPause; // lists without the margin after one that failed
    std::vector<std::uint8_t> escaped_;      // per triangle: a vertex beyond the list's reach
    std::vector<Index> escapedList_;

    // Per apply, by local index.
    std::vector<Vec3> x0_, x1_;
    std::vector<Box> vertexBoxes_; // each vertex's swept box, grown by kTouch
    std::vector<std::uint8_t> moves_;
    std::vector<Real> travel_; // how far each vertex moves
    std::vector<Box> boxes_;   // each triangle's: its corners' boxes
    std::vector<Sphere> spheres_;
    // The same in floats for the first test of the neighbours' pairs: per vertex its start and
    // move (w), and its move (packedMoves_); per triangle its centre and radius plus move (w),
    // and its corners' mean move and radius plus their largest move from that mean
    // (packedSphereMoves_): neighbours in a sheet that moves as one move little against each
    // other, however far the sheet goes. floatSlack_ bounds their rounding.
    struct Packed {
        float x, y, z, w;
    };
    std::vector<Packed> packed_, packedMoves_, packedSpheres_, packedSphereMoves_;
    float floatSlack_ = 0;
    std::vector<std::uint8_t> queried_;
    std::vector<std::uint8_t> held_; // by particle
    // Zones of the current apply (union-find over local vertices) and the moves wanted.
    std::vector<Index> zone_;
    std::vector<std::uint8_t> zoned_;
    std::vector<Vec3> wanted_, zoneSum_; // by a zone's root: its members' weighted moves
    std::vector<Real> zoneWeight_;
    std::vector<Vec3> fixedSum_; // by a zone's root: the moves of its members that cannot be held
    std::vector<Index> fixedCount_;
    std::vector<std::array<Index, 5>> fixedPairs_; // touching pairs with such members
    std::vector<Vec3> zoneMove_;                   // by a zone's root
    void moveZones(std::vector<Index>& members, const std::vector<Real>* weights);
    std::vector<std::uint8_t> fixed_, fixedTriangle_; // cannot be held (by vertex, all corners)
    std::vector<std::pair<Index, Index>> fresh_;      // the escaped triangles' pairs
    std::vector<std::uint8_t> tangled_;               // of a triangle crossing another at the start
    // The pairs of vertices, one of each triangle of a pair crossing at the start (sorted): a
    // primitive pair with such a pair of vertices across it is let go (not followed), so the
    // crossing can come apart; the rest of the triangles near it are followed as any others.
    std::vector<std::uint64_t> tangledPairs_;
    static std::uint64_t vertexPair(Index a, Index b) {
        return std::uint64_t(std::min(a, b)) << 32 | std::max(a, b);
    }
    bool tangledPair(Index a, Index b) const {
        return std::binary_search(tangledPairs_.begin(), tangledPairs_.end(), vertexPair(a, b));
    }
    // Whether a vertex and a triangle, or two edges, are let go.
    bool letGoVertexTriangle(Index p, Index a, Index b, Index c) const {
        return tangledPair(p, a) || tangledPair(p, b) || tangledPair(p, c);
    }
    bool letGoEdges(Index e0, Index e1, Index f0, Index f1) const {
        return tangledPair(e0, f0) || tangledPair(e0, f1) || tangledPair(e1, f0) ||
               tangledPair(e1, f1);
    }
    // Ties (setTies): per local vertex, the tets it is a corner of whose corners are all local
    // (tieStart_, tieOf_; built at the apply after setTies or order), their corners as local
    // vertices, and a mark per tie for one search.
    const std::vector<Tetrahedron>* ties_ = nullptr;
    std::uint64_t tiesVersion_ = 0;
    std::size_t tiesCount_ = 0;
    bool tiesBuilt_ = false;
    std::vector<std::uint32_t> tieStart_, tieOf_;
    std::vector<std::array<Index, 4>> tieLocal_;
    Marks tieSeen_;
    std::vector<std::uint8_t> heldBefore_; // by local vertex: in the apply's checkFirst
    void buildTies();
    // The ties around `vertices` (local) that x1_ turns inside out and x0_ does not, sorted.
    void findInvertedTies(const std::vector<Index>& vertices, std::vector<std::uint32_t>& out);
    std::size_t tangledTriangles_ = 0;
    std::vector<Box> startBoxes_; // each triangle's at the start
    // Whether tangled_ holds for the last apply's start; whether this apply starts where the
    // last one started, or where it ended; and whether that end can cross nowhere (it started
    // uncrossed and left nothing touching).
    bool tangledKnown_ = false, startAsBefore_ = false, startAtLastEnd_ = false;
    bool endUncrossed_ = false;
    // Whether the last apply ran through (its end stands: x1_); per vertex, whether its end
    // differs from that one's (refit), and whether it was in a touching pair in the apply.
    bool lastRanThrough_ = false;
    std::vector<std::uint8_t> endChanged_, touched_;
    // refit's: per vertex, whether it made the vertex's data again (vertexChanged_), and whether
    // a zone moved the vertex since (stale_: its floats and its triangles' spheres are of the
    // end before); and whether order numbered the vertices anew since the last refit.
    std::vector<std::uint8_t> vertexChanged_, stale_;
    bool reordered_ = true;
    void markTangled();
    template <class States, class Visit>
    void forEachCandidate(States& states, std::size_t grain, Visit&& visit) const;
};

} // namespace pbd
