#include "core/air/AirOptimizer.h"

#include "core/air/AirConnectivity.h"
#include "core/base/Marks.h"
#include "core/scene/Topology.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <utility>

namespace pbd {

namespace {

using namespace air;

constexpr Index kDead = std::numeric_limits<Index>::max();
constexpr Real kInfinity = std::numeric_limits<Real>::infinity();
constexpr int kMaxRing = 16;
constexpr std::size_t kMaxStar = 96; // contraction: tets around the free point, at most
constexpr Real kPi = 3.14159265358979323846;

int localIndex(const Tetrahedron& t, Index v) {
    for (int i = 0; i < 4; ++i) {
        if (t[i] == v) {
            return i;
        }
    }
    return -1;
}

// The vertex of t that is none of a, b, c.
Index otherVertex(const Tetrahedron& t, Index a, Index b, Index c) {
    for (Index v : t) {
        if (v != a && v != b && v != c) {
            return v;
        }
    }
    return kDead;
}

// Whether (p0, p1, p2, p3), a permutation of (0, 1, 2, 3), is even.
bool isEven(int p0, int p1, int p2, int p3) {
    const int p[4] = {p0, p1, p2, p3};
    int inversions = 0;
    for (int i = 0; i < 4; ++i) {
        for (int j = i + 1; j < 4; ++j) {
            inversions += p[i] > p[j];
        }
    }
    return inversions % 2 == 0;
}

// The angles the tets (a, b, r_k, r_k+1) turn through around edge ab, summed over the closed
// ring r: 2 pi when the ring winds once around the edge (an untangled neighbourhood), 4 pi or
// more when the tets, though each positive, overlap (the air folded over itself, as after
// bodies were squashed into each other).
Real ringAngle(const std::vector<Vec3>& x, Index a, Index b, const Index* ring, std::size_t m) {
    const Vec3 axis = (x[b] - x[a]).normalized();
    Real total = 0;
    for (std::size_t k = 0; k < m; ++k) {
        Vec3 u = x[ring[k]] - x[a];
        Vec3 v = x[ring[(k + 1) % m]] - x[a];
        u -= u.dot(axis) * axis;
        v -= v.dot(axis) * axis;
        total += std::atan2(axis.dot(u.cross(v)), u.dot(v));
    }
    return std::abs(total);
}

} // namespace

struct AirOptimizer::Impl {
    std::vector<std::int32_t> neighbours;
    // Every body triangle's edges and faces, each under its lowest particle: the particles'
    // ranges in fixedStart, the other ends (edges) and the other two corners (faces), sorted.
    // A scan of a few neighbours in one place: a binary search over all of them was a fifth of
    // the edge removals' time, waiting on memory (the full dancer's 80,000 edges).
    std::vector<std::uint32_t> fixedEdgeStart;
    std::vector<Index> fixedEdgeTo;
    FaceSet fixedFaces;
    std::size_t builtFor = std::numeric_limits<std::size_t>::max();

    // State of the pass.
    std::vector<Tetrahedron>* tets = nullptr;
    const std::vector<Vec3>* x = nullptr;
    AirOptimizationOptions options;
    std::vector<Real> quality;
    std::vector<std::int32_t> freeSlots;
    std::vector<std::uint8_t> frozen; // per particle: a corner of a crushed body tet
    bool anyFrozen = false;
    std::vector<std::uint8_t> freePoint; // per particle: one of the air's free points
    // Deferred retries (AirOptimizationOptions::retryAfter): per tet slot, the pass (counted
    // from 1) in which no change improved it, 0 for none, and its quality then; per particle,
    // the last pass that changed a tet around it.
    std::uint32_t pass = 0;
    std::vector<std::uint32_t> failedIn;
    std::vector<Real> failedQuality;
    std::vector<std::uint32_t> changedIn;

    // Whether tet t (listed as a candidate at the pass's start) still is one: alive, below the
    // quality threshold, and not so inverted that no change may remove it.
    bool candidate(std::int32_t t) const {
        const Real q = quality[std::size_t(t)];
        return (*tets)[std::size_t(t)][0] != kDead && q < options.qualityThreshold &&
               !(q < options.worstRemovable);
    }

    // Candidate t failed in this pass, at its quality now (what deferred weighs later).
    void fail(std::int32_t t) {
        failedIn[std::size_t(t)] = pass;
        failedQuality[std::size_t(t)] = quality[std::size_t(t)];
    }

    // Whether candidate t is left for a later pass: it failed in an earlier one, nothing
    // around it changed since, its quality has not fallen by a tenth, and its retry is not due.
    bool deferred(std::int32_t t) const {
        const std::size_t k = std::size_t(t);
        const std::uint32_t failed = failedIn[k];
        if (failed == 0 || options.retryAfter <= 0 ||
            pass - failed >= std::uint32_t(options.retryAfter) ||
            quality[k] < 0.9 * failedQuality[k]) {
            return false;
        }
        for (Index v : (*tets)[k]) {
            if (changedIn[v] >= failed) {
                return false;
            }
        }
        return true;
    }

    // A change to the mesh: tets removed and tets added.
    struct Change {
        Real newMin = -kInfinity;
        Real oldMin = 0;
        bool edgeRemoval = false;
        bool contraction = false;
        std::size_t size = 0; // ring size or faces removed
        std::vector<std::int32_t> removed;
        std::vector<Tetrahedron> added;
    };
    // What one thread's tries for a candidate need: the best change found and the searches'
    // scratch. The tries only read the mesh, so several threads try candidates at once.
    struct Node {
        std::array<Index, 3> p;              // wound so that (a, p0, p1, p2) is positive
        std::int32_t ta = kNone, tb = kNone; // the tets (a, face) and (face, b)
        int parentEdge = -1;                 // the edge shared with the parent, -1 at the root
    };
    struct Search {
        Change best;
        std::vector<Index> ring;
        std::vector<std::int32_t> ringTets;
        std::vector<Node> nodes;
        std::vector<std::int32_t> pointStar;
        Marks visited; // per tet: reached in this walk
    };
    Search applying; // the search of the thread that applies the changes

    // Scratch of the changes' checks (one thread).
    std::vector<std::int32_t> star;
    Marks visited; // per tet: reached in this walk
    std::vector<EdgeKey> oldEdges;
    std::vector<Triangle> addedFaces, outsideFaces, newFaces;
    std::vector<std::pair<Index, Index>> newEdges;

    void build(const Scene& scene) {
        neighbours = buildAdjacency(scene.air.tets);
        std::vector<EdgeKey> edges;
        std::vector<Triangle> faces;
        for (const Body& body : scene.bodies) {
            for (const Triangle& t : body.triangles) {
                faces.push_back(faceKey(t[0], t[1], t[2]));
                for (int k = 0; k < 3; ++k) {
                    edges.push_back(edgeKey(t[k], t[(k + 1) % 3]));
                }
            }
        }
        std::sort(edges.begin(), edges.end());
        edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
        std::sort(faces.begin(), faces.end());
        faces.erase(std::unique(faces.begin(), faces.end()), faces.end());
        // Sorted, they come grouped by their lowest particle already.
        const std::size_t n = scene.particles.size();
        fixedEdgeStart.assign(n + 1, 0);
        fixedEdgeTo.clear();
        for (EdgeKey e : edges) {
            ++fixedEdgeStart[std::size_t(e >> 32) + 1];
            fixedEdgeTo.push_back(Index(e & 0xffffffffu));
        }
        fixedFaces.build(faces, n);
        for (std::size_t v = 0; v < n; ++v) {
            fixedEdgeStart[v + 1] += fixedEdgeStart[v];
        }
        builtFor = scene.air.tets.size();
        failedIn.assign(builtFor, 0); // another air: nothing is known to have failed
        failedQuality.assign(builtFor, 0);
        changedIn.clear();
    }

    bool fixedEdge(Index a, Index b) const {
        const EdgeKey e = edgeKey(a, b);
        const std::size_t low = std::size_t(e >> 32);
        const Index high = Index(e & 0xffffffffu);
        if (low + 1 >= fixedEdgeStart.size()) {
            return false; // a particle after those the air was built with
        }
        for (std::uint32_t k = fixedEdgeStart[low]; k < fixedEdgeStart[low + 1]; ++k) {
            if (fixedEdgeTo[k] == high) {
                return true;
            }
        }
        return false;
    }
    bool fixedFace(Index a, Index b, Index c) const {
        return fixedFaces.contains(faceKey(a, b, c));
    }

    Real q(Index a, Index b, Index c, Index d) const {
        const std::vector<Vec3>& p = *x;
        return tetQuality(p[a], p[b], p[c], p[d]);
    }
    Real q(const Tetrahedron& t) const { return q(t[0], t[1], t[2], t[3]); }

    void consider(Search& search, Change&& change) const {
        if (anyFrozen) {
            for (std::int32_t r : change.removed) {
                for (Index v : (*tets)[std::size_t(r)]) {
                    if (frozen[v]) {
                        return;
                    }
                }
            }
        }
        if (change.newMin > change.oldMin + options.minimumGain &&
            change.newMin > search.best.newMin && change.newMin > options.worstMade) {
            search.best = std::move(change);
        }
    }

    // Edge removal of edge (a, b) of tet t: the ring of tets around the edge is replaced by
    // the best triangulation of the ring's polygon, each triangle coned to a and to b.
    void tryEdgeRemoval(Search& search, std::int32_t t, Index a, Index b) const {
        if (fixedEdge(a, b)) {
            return;
        }
        const std::vector<Tetrahedron>& T = *tets;
        search.ring.clear();
        search.ringTets.clear();
        Real oldMin = kInfinity;
        std::int32_t current = t;
        for (;;) {
            const Tetrahedron& tet = T[std::size_t(current)];
            const int ia = localIndex(tet, a);
            const int ib = localIndex(tet, b);
            if (ia < 0 || ib < 0) {
                return;
            }
            int ic = -1;
            int id = -1;
            for (int k = 0; k < 4; ++k) {
                if (k != ia && k != ib) {
                    (ic < 0 ? ic : id) = k;
                }
            }
            if (!isEven(ia, ib, ic, id)) {
                std::swap(ic, id); // (a, b, c, d) positive: the ring runs c -> d
            }
            search.ring.push_back(tet[std::size_t(ic)]);
            search.ringTets.push_back(current);
            oldMin = std::min(oldMin, quality[std::size_t(current)]);
            if (oldMin < options.worstRemovable) {
                return;
            }
            current = neighbours[4 * std::size_t(current) + std::size_t(ic)]; // across (a, b, d)
            if (current == kNone) {
                return; // the edge is on the air's boundary
            }
            if (current == t) {
                break;
            }
            if (int(search.ring.size()) >= std::min(options.maxRing, kMaxRing)) {
                return;
            }
        }
        const int m = int(search.ring.size());
        if (m < 3) {
            return;
        }
        // Klincsek's dynamic programme over the polygon r0 .. r(m-1): Q[i][j] is the best worst
        // quality of the triangulation of r_i .. r_j, each triangle (r_i, r_k, r_j) giving the
        // tets (a, r_i, r_k, r_j) and (r_i, r_k, r_j, b).
        // Only triangulations better than the target matter: anything at or below it counts as
        // a failure, which lets most candidates be dismissed after one quality each.
        const Real target =
            std::max({oldMin + options.minimumGain, search.best.newMin, options.worstMade});
        Real Q[kMaxRing][kMaxRing];
        int K[kMaxRing][kMaxRing];
        for (int i = 0; i + 1 < m; ++i) {
            Q[i][i + 1] = kInfinity;
        }
        for (int length = 2; length < m; ++length) {
            for (int i = 0; i + length < m; ++i) {
                const int j = i + length;
                Real bestValue = target;
                int bestK = i + 1;
                for (int k = i + 1; k < j; ++k) {
                    Real v = std::min(Q[i][k], Q[k][j]);
                    if (v <= bestValue) {
                        continue;
                    }
                    v = std::min(v, q(a, search.ring[std::size_t(i)], search.ring[std::size_t(k)],
                                      search.ring[std::size_t(j)]));
                    if (v <= bestValue) {
                        continue;
                    }
                    v = std::min(v, q(search.ring[std::size_t(i)], search.ring[std::size_t(k)],
                                      search.ring[std::size_t(j)], b));
                    if (v > bestValue) {
                        bestValue = v;
                        bestK = k;
                    }
                }
                Q[i][j] = bestValue;
                K[i][j] = bestK;
            }
        }
        Change change;
        change.newMin = Q[0][m - 1];
        change.oldMin = oldMin;
        if (!(change.newMin > target)) {
            return;
        }
        if (!(ringAngle(*x, a, b, search.ring.data(), search.ring.size()) < 3 * kPi)) {
            return; // the ring does not wind once around the edge: the air is folded here
        }
        change.edgeRemoval = true;
        change.size = std::size_t(m);
        change.removed = search.ringTets;
        std::array<std::pair<int, int>, kMaxRing> stack;
        int top = 0;
        stack[std::size_t(top++)] = {0, m - 1};
        while (top > 0) {
            const auto [i, j] = stack[std::size_t(--top)];
            if (j - i < 2) {
                continue;
            }
            const int k = K[i][j];
            const Index ri = search.ring[std::size_t(i)];
            const Index rk = search.ring[std::size_t(k)];
            const Index rj = search.ring[std::size_t(j)];
            change.added.push_back({a, ri, rk, rj});
            change.added.push_back({ri, rk, rj, b});
            stack[std::size_t(top++)] = {i, k};
            stack[std::size_t(top++)] = {k, j};
        }
        consider(search, std::move(change));
    }

    // Multi-face removal of the face opposite vertex f of tet t: with a = that vertex and b the
    // vertex across the face, the faces sandwiched between a and b (each with tets (a, face)
    // and (face, b)) are removed and the edge ab is made, with a ring of tets (a, b, edge)
    // around it, one per outer edge of the removed faces. Shewchuk chooses the faces by a
    // dynamic programme over the tree of sandwiched faces; with a target to beat, it reduces
    // to growing the tree only across the edges whose tet (a, b, edge) would not beat the
    // target (such an edge cannot stay on the ring, so the face beyond it must go too), and
    // giving up where no sandwiched face lies beyond such an edge. What grows is the smallest
    // set of faces whose removal beats the target, if any does.
    void tryMultiFace(Search& search, std::int32_t t, int f) const {
        const std::vector<Tetrahedron>& T = *tets;
        const Tetrahedron& tet = T[std::size_t(t)];
        const std::int32_t across = neighbours[4 * std::size_t(t) + std::size_t(f)];
        if (across == kNone) {
            return;
        }
        const Index a = tet[std::size_t(f)];
        const std::array<Index, 3> root{tet[std::size_t(kFace[f][0])],
                                        tet[std::size_t(kFace[f][1])],
                                        tet[std::size_t(kFace[f][2])]};
        const Index b = otherVertex(T[std::size_t(across)], root[0], root[1], root[2]);
        if (b == kDead || fixedFace(root[0], root[1], root[2])) {
            return;
        }
        const Real rootMin = std::min(quality[std::size_t(t)], quality[std::size_t(across)]);
        if (rootMin < options.worstRemovable) {
            return;
        }
        const Real target =
            std::max({rootMin + options.minimumGain, search.best.newMin, options.worstMade});
        search.nodes.clear();
        search.nodes.push_back({root, t, across, -1});
        const auto known = [&](std::int32_t tetIndex) {
            for (const Node& n : search.nodes) {
                if (n.ta == tetIndex || n.tb == tetIndex) {
                    return true;
                }
            }
            return false;
        };
        Change change;
        change.newMin = kInfinity;
        for (std::size_t n = 0; n < search.nodes.size(); ++n) {
            for (int e = 0; e < 3; ++e) {
                if (e == search.nodes[n].parentEdge) {
                    continue;
                }
                const Node node = search.nodes[n];
                const Index p = node.p[std::size_t(e)];
                const Index r = node.p[std::size_t((e + 1) % 3)];
                const Index s = node.p[std::size_t((e + 2) % 3)];
                const Real edgeQuality = q(a, b, p, r);
                if (edgeQuality > target) {
                    change.newMin = std::min(change.newMin, edgeQuality);
                    change.added.push_back({a, b, p, r}); // stays on the ring
                    continue;
                }
                // The face beyond edge pr must go too: it must be sandwiched and removable.
                if (int(search.nodes.size()) >= options.maxFaces || fixedEdge(p, r)) {
                    return;
                }
                const std::int32_t ta2 =
                    neighbours[4 * std::size_t(node.ta) +
                               std::size_t(localIndex(T[std::size_t(node.ta)], s))];
                const std::int32_t tb2 =
                    neighbours[4 * std::size_t(node.tb) +
                               std::size_t(localIndex(T[std::size_t(node.tb)], s))];
                if (ta2 == kNone || tb2 == kNone || known(ta2) || known(tb2)) {
                    return;
                }
                const Index xa = otherVertex(T[std::size_t(ta2)], a, p, r);
                const Index xb = otherVertex(T[std::size_t(tb2)], b, p, r);
                if (xa != xb || xa == a || xa == b || xa == kDead || fixedFace(p, r, xa) ||
                    quality[std::size_t(ta2)] < options.worstRemovable ||
                    quality[std::size_t(tb2)] < options.worstRemovable) {
                    return;
                }
                search.nodes.push_back({{r, p, xa}, ta2, tb2, 0}); // (a, r, p, xa) is positive
            }
        }
        // The new tets' edges around ab, in ring order, must wind once around it.
        if (change.added.size() >= 3) {
            // change.added lists ring edges in tree order; chain them into ring order.
            std::vector<Index> ordered{change.added[0][2], change.added[0][3]};
            for (std::size_t k = 1; k + 1 < change.added.size(); ++k) {
                for (const Tetrahedron& ringTet : change.added) {
                    if (ringTet[2] == ordered.back()) {
                        ordered.push_back(ringTet[3]);
                        break;
                    }
                }
            }
            if (ordered.size() != change.added.size() ||
                !(ringAngle(*x, a, b, ordered.data(), ordered.size()) < 3 * kPi)) {
                return;
            }
        }
        change.oldMin = kInfinity;
        for (const Node& node : search.nodes) {
            change.removed.push_back(node.ta);
            change.removed.push_back(node.tb);
            change.oldMin = std::min(
                {change.oldMin, quality[std::size_t(node.ta)], quality[std::size_t(node.tb)]});
        }
        change.edgeRemoval = false;
        change.size = search.nodes.size();
        consider(search, std::move(change));
    }

    // Contraction of the free air point p onto its neighbour `onto` across an edge of tet t
    // (vertex removal, in Klingner and Shewchuk's mesh improvement): the tets around the edge
    // go, and every other tet around p has p replaced by `onto`, coning p's cavity from it.
    // Flips cannot remove a vertex, and a free point (a Steiner point of the tessellation)
    // that two bodies press onto one of their vertices, or into the layer of air they squash
    // flat, leaves a ring of needles around it that no projection turns positive: each one it
    // fixes turns a neighbour (bremen, air-dancer-scale). A slightly inverted star (down to
    // worstContracted) may go, as long as every new tet beats the target.
    void tryContraction(Search& search, std::int32_t t, Index p, Index onto) const {
        if (!freePoint[p]) {
            return;
        }
        const std::vector<Tetrahedron>& T = *tets;
        search.visited.begin(T.size());
        search.pointStar.clear();
        search.pointStar.push_back(t);
        search.visited.mark(std::size_t(t));
        Real oldMin = kInfinity;
        for (std::size_t k = 0; k < search.pointStar.size(); ++k) {
            const std::int32_t s = search.pointStar[k];
            oldMin = std::min(oldMin, quality[std::size_t(s)]);
            if (oldMin < options.worstContracted || search.pointStar.size() > kMaxStar) {
                return;
            }
            const Tetrahedron& tet = T[std::size_t(s)];
            for (int i = 0; i < 4; ++i) {
                const std::int32_t n = neighbours[4 * std::size_t(s) + std::size_t(i)];
                if (tet[std::size_t(i)] == p) {
                    continue; // the face opposite p is on the star's boundary
                }
                if (n == kNone) {
                    return; // p on the air's boundary: not a free point's star
                }
                if (search.visited.mark(std::size_t(n))) {
                    search.pointStar.push_back(n);
                }
            }
        }
        const Real target =
            std::max({oldMin + options.minimumGain, search.best.newMin, options.worstMade});
        Change change;
        change.newMin = kInfinity;
        for (std::int32_t s : search.pointStar) {
            Tetrahedron made = T[std::size_t(s)];
            if (localIndex(made, onto) >= 0) {
                continue; // around edge pq: goes
            }
            made[std::size_t(localIndex(made, p))] = onto;
            const Real value = q(made);
            if (!(value > target)) {
                return;
            }
            change.newMin = std::min(change.newMin, value);
            change.added.push_back(made);
        }
        change.oldMin = oldMin;
        change.contraction = true;
        change.size = search.pointStar.size();
        change.removed = search.pointStar;
        consider(search, std::move(change));
    }

    // Every try for candidate t: the edge removals of its six edges, the multi-face removals
    // of its four faces, and, where no flip helps a nearly flat tet, the contractions of its
    // free points. The best is left in search.best (empty removed: none).
    void tryAll(Search& search, std::int32_t t, bool hasFreePoints) const {
        search.best = Change{};
        const Tetrahedron tet = (*tets)[std::size_t(t)];
        for (int i = 0; i < 4; ++i) {
            for (int j = i + 1; j < 4; ++j) {
                tryEdgeRemoval(search, t, tet[std::size_t(i)], tet[std::size_t(j)]);
            }
        }
        for (int f = 0; f < 4; ++f) {
            tryMultiFace(search, t, f);
        }
        // A free point goes only where no flip helps a nearly flat tet: contracting every free
        // point a flip could have served thinned air-dancer-scale's air from 165,000 tets to
        // 76,000 in 1,000 steps.
        if (hasFreePoints && search.best.removed.empty() &&
            quality[std::size_t(t)] < options.contractBelow) {
            for (int i = 0; i < 4; ++i) {
                for (int j = 0; j < 4; ++j) {
                    if (i != j) {
                        tryContraction(search, t, tet[std::size_t(i)], tet[std::size_t(j)]);
                    }
                }
            }
        }
    }

    // Tries made ahead for a candidate, with its zone: its corners and the corners across its
    // faces (every tet a try reads has one of them, and every neighbour it follows is across a
    // face with one).
    struct Tried {
        bool made = false;
        Change best;
        std::array<Index, 8> zone{};
    };
    void tryAhead(Search& search, std::int32_t t, bool hasFreePoints, Tried& out) const {
        const Tetrahedron& tet = (*tets)[std::size_t(t)];
        out.made = false;
        if (!candidate(t) || deferred(t)) {
            return; // left to the pass, which decides again
        }
        for (int f = 0; f < 4; ++f) {
            out.zone[std::size_t(f)] = tet[std::size_t(f)];
            const std::int32_t across = neighbours[4 * std::size_t(t) + std::size_t(f)];
            out.zone[std::size_t(4 + f)] =
                across == kNone ? tet[std::size_t(f)]
                                : otherVertex((*tets)[std::size_t(across)], tet[kFace[f][0]],
                                              tet[kFace[f][1]], tet[kFace[f][2]]);
        }
        tryAll(search, t, hasFreePoints);
        out.best = std::move(search.best);
        out.made = true;
    }

    // The particles whose tets the batch's changes so far removed or made.
    std::vector<std::uint32_t> touched;
    std::uint32_t batch = 0;
    void touch(const Change& change) {
        for (std::int32_t r : change.removed) {
            for (Index v : (*tets)[std::size_t(r)]) {
                touched[v] = batch;
            }
        }
        for (const Tetrahedron& a : change.added) {
            for (Index v : a) {
                touched[v] = batch;
            }
        }
    }
    bool touches(const std::array<Index, 8>& zone) const {
        for (Index v : zone) {
            if (v != kDead && touched[v] == batch) {
                return true;
            }
        }
        return false;
    }

    // Whether some live tet other than the removed ones has all of `vertices` (one or two
    // more besides `around`), searched among the tets around vertex `around` that are reachable
    // from `start` through faces containing `around`.
    template <std::size_t N>
    bool existsElsewhere(const Change& change, std::int32_t start, Index around,
                         const std::array<Index, N>& vertices) {
        const std::vector<Tetrahedron>& T = *tets;
        visited.begin(T.size());
        star.clear();
        star.push_back(start);
        visited.mark(std::size_t(start));
        for (std::size_t k = 0; k < star.size(); ++k) {
            const std::int32_t t = star[k];
            const Tetrahedron& tet = T[std::size_t(t)];
            const bool removed =
                std::find(change.removed.begin(), change.removed.end(), t) != change.removed.end();
            if (!removed && std::all_of(vertices.begin(), vertices.end(),
                                        [&](Index v) { return localIndex(tet, v) >= 0; })) {
                return true;
            }
            for (int i = 0; i < 4; ++i) {
                const std::int32_t n = neighbours[4 * std::size_t(t) + std::size_t(i)];
                if (tet[std::size_t(i)] != around && n != kNone && visited.mark(std::size_t(n))) {
                    star.push_back(n);
                }
            }
        }
        return false;
    }

    // The change keeps the air a simplicial complex: among the new tets every face is shared
    // by two of them or by one and the cavity's outside, and no new edge (nor a new face made
    // only of old edges) already exists elsewhere. In a valid mesh that follows from the new
    // tets being positive; after a rough step (bodies pressed into each other, air squashed)
    // the mesh can be tangled and this is what keeps a flip from making it non-manifold.
    template <typename Outside>
    bool keepsTheMeshSimple(const Change& change, const std::vector<Outside>& outside) {
        const std::vector<Tetrahedron>& T = *tets;
        addedFaces.clear();
        for (const Tetrahedron& t : change.added) {
            for (int i = 0; i < 4; ++i) {
                addedFaces.push_back(faceOpposite(t, i));
            }
        }
        outsideFaces.clear();
        for (const Outside& o : outside) {
            outsideFaces.push_back(o.key);
        }
        std::sort(addedFaces.begin(), addedFaces.end());
        std::sort(outsideFaces.begin(), outsideFaces.end());
        for (std::size_t k = 0; k < addedFaces.size();) {
            std::size_t end = k + 1;
            while (end < addedFaces.size() && addedFaces[end] == addedFaces[k]) {
                ++end;
            }
            const std::size_t inside = end - k;
            const auto [low, high] =
                std::equal_range(outsideFaces.begin(), outsideFaces.end(), addedFaces[k]);
            const std::ptrdiff_t out = high - low;
            if (!((inside == 1 && out == 1) || (inside == 2 && out == 0))) {
                return false;
            }
            k = end;
        }
        oldEdges.clear();
        for (std::int32_t r : change.removed) {
            const Tetrahedron& t = T[std::size_t(r)];
            for (int i = 0; i < 4; ++i) {
                for (int j = i + 1; j < 4; ++j) {
                    oldEdges.push_back(edgeKey(t[std::size_t(i)], t[std::size_t(j)]));
                }
            }
        }
        std::sort(oldEdges.begin(), oldEdges.end());
        const auto old = [&](Index u, Index v) {
            return std::binary_search(oldEdges.begin(), oldEdges.end(), edgeKey(u, v));
        };
        const auto removedTetWith = [&](Index v) {
            for (std::int32_t r : change.removed) {
                if (localIndex(T[std::size_t(r)], v) >= 0) {
                    return r;
                }
            }
            return kNone;
        };
        // The searches, each once (a new edge is in up to four new tets).
        newEdges.clear();
        newFaces.clear();
        for (const Tetrahedron& t : change.added) {
            for (int i = 0; i < 4; ++i) {
                for (int j = i + 1; j < 4; ++j) {
                    const Index u = t[std::size_t(i)];
                    const Index v = t[std::size_t(j)];
                    if (!old(u, v)) {
                        newEdges.push_back({u, v});
                    }
                }
            }
            for (int i = 0; i < 4; ++i) {
                const Index u = t[std::size_t(kFace[i][0])];
                const Index v = t[std::size_t(kFace[i][1])];
                const Index w = t[std::size_t(kFace[i][2])];
                if (old(u, v) && old(v, w) && old(w, u)) {
                    bool isOld = false;
                    for (std::int32_t r : change.removed) {
                        const Tetrahedron& o = T[std::size_t(r)];
                        isOld = isOld || (localIndex(o, u) >= 0 && localIndex(o, v) >= 0 &&
                                          localIndex(o, w) >= 0);
                    }
                    if (!isOld) {
                        newFaces.push_back({u, v, w});
                    }
                }
            }
        }
        std::sort(newEdges.begin(), newEdges.end());
        newEdges.erase(std::unique(newEdges.begin(), newEdges.end()), newEdges.end());
        for (const auto& [u, v] : newEdges) {
            if (existsElsewhere(change, removedTetWith(u), u, std::array<Index, 1>{v})) {
                return false;
            }
        }
        std::sort(newFaces.begin(), newFaces.end());
        newFaces.erase(std::unique(newFaces.begin(), newFaces.end()), newFaces.end());
        for (const Triangle& f : newFaces) {
            if (existsElsewhere(change, removedTetWith(f[0]), f[0],
                                std::array<Index, 2>{f[1], f[2]})) {
                return false;
            }
        }
        return true;
    }

    // Replaces the change's removed tets by its added ones, linking every new face to the
    // cavity's outside or to another new tet. Returns false (and changes nothing) when the
    // faces do not match up.
    bool apply(const Change& change) {
        std::vector<Tetrahedron>& T = *tets;
        struct Outside {
            Triangle key;
            std::int32_t tet; // the tet outside the cavity, or kNone on the air's boundary
            int local;        // its face index pointing into the cavity
            bool used = false;
        };
        std::vector<Outside> outside;
        const auto removed = [&](std::int32_t t) {
            return std::find(change.removed.begin(), change.removed.end(), t) !=
                   change.removed.end();
        };
        for (std::int32_t r : change.removed) {
            for (int i = 0; i < 4; ++i) {
                const std::int32_t n = neighbours[4 * std::size_t(r) + std::size_t(i)];
                if (n != kNone && removed(n)) {
                    continue;
                }
                int local = -1;
                if (n != kNone) {
                    for (int k = 0; k < 4; ++k) {
                        if (neighbours[4 * std::size_t(n) + std::size_t(k)] == r) {
                            local = k;
                        }
                    }
                    if (local < 0) {
                        return false;
                    }
                }
                outside.push_back({faceOpposite(T[std::size_t(r)], i), n, local});
            }
        }
        if (!keepsTheMeshSimple(change, outside)) {
            return false;
        }
        // links[4 s + i]: >= 0 an outside entry, <= -2 the new tet -(value + 2).
        const std::size_t count = change.added.size();
        std::vector<std::int32_t> links(4 * count, kNone);
        for (std::size_t s = 0; s < count; ++s) {
            for (int i = 0; i < 4; ++i) {
                if (links[4 * s + std::size_t(i)] != kNone) {
                    continue;
                }
                const Triangle key = faceOpposite(change.added[s], i);
                bool matched = false;
                for (std::size_t o = 0; o < outside.size() && !matched; ++o) {
                    if (!outside[o].used && outside[o].key == key) {
                        outside[o].used = true;
                        links[4 * s + std::size_t(i)] = std::int32_t(o);
                        matched = true;
                    }
                }
                for (std::size_t s2 = s + 1; s2 < count && !matched; ++s2) {
                    for (int j = 0; j < 4 && !matched; ++j) {
                        if (links[4 * s2 + std::size_t(j)] == kNone &&
                            faceOpposite(change.added[s2], j) == key) {
                            links[4 * s + std::size_t(i)] = -std::int32_t(s2) - 2;
                            links[4 * s2 + std::size_t(j)] = -std::int32_t(s) - 2;
                            matched = true;
                        }
                    }
                }
                if (!matched) {
                    return false;
                }
            }
        }
        for (const Outside& o : outside) {
            if (!o.used) {
                return false;
            }
        }
        // Slots: the removed tets' first, then free ones, then new ones at the end.
        std::vector<std::int32_t> slots;
        slots.reserve(count);
        for (std::size_t k = 0; k < count; ++k) {
            if (k < change.removed.size()) {
                slots.push_back(change.removed[k]);
            } else if (!freeSlots.empty()) {
                slots.push_back(freeSlots.back());
                freeSlots.pop_back();
            } else {
                slots.push_back(std::int32_t(T.size()));
                T.push_back({});
                neighbours.insert(neighbours.end(), 4, kNone);
                quality.push_back(0);
                failedIn.push_back(0);
                failedQuality.push_back(0);
            }
        }
        for (std::size_t k = count; k < change.removed.size(); ++k) {
            const std::int32_t r = change.removed[k];
            T[std::size_t(r)] = {kDead, kDead, kDead, kDead};
            std::fill_n(neighbours.begin() + 4 * std::ptrdiff_t(r), 4, kNone);
            quality[std::size_t(r)] = kInfinity;
            freeSlots.push_back(r);
        }
        for (std::size_t s = 0; s < count; ++s) {
            const std::int32_t slot = slots[s];
            T[std::size_t(slot)] = change.added[s];
            quality[std::size_t(slot)] = q(change.added[s]);
            failedIn[std::size_t(slot)] = 0;
            for (Index v : change.added[s]) {
                changedIn[v] = pass;
            }
            for (int i = 0; i < 4; ++i) {
                const std::int32_t link = links[4 * s + std::size_t(i)];
                std::int32_t neighbour = kNone;
                if (link >= 0) {
                    const Outside& o = outside[std::size_t(link)];
                    neighbour = o.tet;
                    if (o.tet != kNone) {
                        neighbours[4 * std::size_t(o.tet) + std::size_t(o.local)] = slot;
                    }
                } else {
                    neighbour = slots[std::size_t(-link - 2)];
                }
                neighbours[4 * std::size_t(slot) + std::size_t(i)] = neighbour;
            }
        }
        return true;
    }

    // Moves the last live tets into the holes so the array is dense again.
    void compact() {
        std::vector<Tetrahedron>& T = *tets;
        std::sort(freeSlots.begin(), freeSlots.end());
        for (std::int32_t hole : freeSlots) {
            while (!T.empty() && T.back()[0] == kDead) {
                T.pop_back();
            }
            if (std::size_t(hole) >= T.size()) {
                break;
            }
            const std::size_t last = T.size() - 1;
            T[std::size_t(hole)] = T[last];
            quality[std::size_t(hole)] = quality[last];
            failedIn[std::size_t(hole)] = failedIn[last];
            failedQuality[std::size_t(hole)] = failedQuality[last];
            for (int i = 0; i < 4; ++i) {
                const std::int32_t n = neighbours[4 * last + std::size_t(i)];
                neighbours[4 * std::size_t(hole) + std::size_t(i)] = n;
                if (n != kNone) {
                    for (int k = 0; k < 4; ++k) {
                        std::int32_t& back = neighbours[4 * std::size_t(n) + std::size_t(k)];
                        if (back == std::int32_t(last)) {
                            back = hole;
                        }
                    }
                }
            }
            T.pop_back();
        }
        while (!T.empty() && T.back()[0] == kDead) {
            T.pop_back();
        }
        freeSlots.clear();
        neighbours.resize(4 * T.size());
        quality.resize(T.size());
        failedIn.resize(T.size());
        failedQuality.resize(T.size());
    }
};

namespace {

using namespace air;

// 2 A of a triangle in the xy plane, counter-clockwise positive.
Real cross2(const std::vector<Vec3>& x, Index a, Index b, Index c) {
    return (x[b].x() - x[a].x()) * (x[c].y() - x[a].y()) -
           (x[b].y() - x[a].y()) * (x[c].x() - x[a].x());
}

// Quality of a triangle in the xy plane (Air Meshes eq. 3 with the erratum), signed:
// 4 sqrt(3) A / (l1^2 + l2^2 + l3^2), negative when clockwise.
Real planarQuality(const std::vector<Vec3>& x, Index a, Index b, Index c) {
    const Real sum =
        (x[b] - x[a]).squaredNorm() + (x[c] - x[b]).squaredNorm() + (x[a] - x[c]).squaredNorm();
    if (!(sum > 0)) {
        return 0;
    }
    return 4.0 * std::sqrt(3.0) * 0.5 * cross2(x, a, b, c) / sum;
}

} // namespace

// The 2D pass (the paper's proof of concept): flip the edge between two air triangles when
// the two new triangles' worse quality beats the old ones' worse quality. The edge adjacency
// is kept up to date flip by flip (a flip reuses the two triangles' slots).
struct AirOptimizer::Planar {
    std::vector<std::int32_t> neighbours;
    std::vector<EdgeKey> fixedEdges; // body triangle edges and rope segments
    std::size_t builtFor = std::numeric_limits<std::size_t>::max();

    void build(const Scene& scene) {
        neighbours = buildEdgeAdjacency(scene.air.triangles);
        fixedEdges.clear();
        for (const Body& body : scene.bodies) {
            for (const Triangle& t : body.triangles) {
                for (int k = 0; k < 3; ++k) {
                    fixedEdges.push_back(edgeKey(t[std::size_t(k)], t[std::size_t((k + 1) % 3)]));
                }
            }
            if (body.triangles.empty() && body.tets.empty()) { // a rope
                for (Index i = body.firstParticle; i + 1 < body.firstParticle + body.particleCount;
                     ++i) {
                    fixedEdges.push_back(edgeKey(i, i + 1));
                }
            }
        }
        std::sort(fixedEdges.begin(), fixedEdges.end());
        fixedEdges.erase(std::unique(fixedEdges.begin(), fixedEdges.end()), fixedEdges.end());
        builtFor = scene.air.triangles.size();
    }

    AirOptimizationStatistics pass(Scene& scene, const AirOptimizationOptions& options) {
        AirOptimizationStatistics stats;
        std::vector<Triangle>& T = scene.air.triangles;
        const std::vector<Vec3>& x = scene.particles.positions;
        stats.tetsBefore = T.size();
        std::vector<Real> quality(T.size());
        std::vector<std::int32_t> candidates;
        Real worst = kInfinity;
        for (std::size_t t = 0; t < T.size(); ++t) {
            quality[t] = planarQuality(x, T[t][0], T[t][1], T[t][2]);
            worst = std::min(worst, quality[t]);
            if (quality[t] < options.qualityThreshold) {
                candidates.push_back(std::int32_t(t));
            }
        }
        stats.minQualityBefore = worst;
        stats.candidates = candidates.size();
        std::sort(candidates.begin(), candidates.end(), [&](std::int32_t l, std::int32_t r) {
            return quality[std::size_t(l)] < quality[std::size_t(r)] ||
                   (quality[std::size_t(l)] == quality[std::size_t(r)] && l < r);
        });
        for (std::int32_t t : candidates) {
            const Real q0 = quality[std::size_t(t)];
            if (!(q0 < options.qualityThreshold) || q0 < options.worstRemovable) {
                continue;
            }
            // The best flip of one of t's three edges.
            int bestEdge = -1;
            Real bestQuality = -kInfinity;
            for (int i = 0; i < 3; ++i) {
                const std::int32_t u = neighbours[3 * std::size_t(t) + std::size_t(i)];
                if (u == kNone) {
                    continue;
                }
                const Triangle& tt = T[std::size_t(t)];
                const Index c = tt[std::size_t(i)], p = tt[std::size_t((i + 1) % 3)],
                            q = tt[std::size_t((i + 2) % 3)];
                if (std::binary_search(fixedEdges.begin(), fixedEdges.end(), edgeKey(p, q))) {
                    continue;
                }
                const Index d = otherCorner(T[std::size_t(u)], p, q);
                const Real oldMin = std::min(q0, quality[std::size_t(u)]);
                if (d == kDead || oldMin < options.worstRemovable) {
                    continue;
                }
                const Real newMin = std::min(planarQuality(x, c, p, d), planarQuality(x, c, d, q));
                if (newMin > oldMin + options.minimumGain && newMin > options.worstMade &&
                    newMin > bestQuality) {
                    bestQuality = newMin;
                    bestEdge = i;
                }
            }
            if (bestEdge >= 0) {
                flip(T, x, quality, t, bestEdge);
                ++stats.edgeRemovals;
            }
        }
        stats.tetsAfter = T.size();
        stats.minQualityAfter =
            quality.empty() ? 0 : *std::min_element(quality.begin(), quality.end());
        return stats;
    }

    static Index otherCorner(const Triangle& t, Index p, Index q) {
        for (Index v : t) {
            if (v != p && v != q) {
                return v;
            }
        }
        return kDead;
    }

    // Triangle t = (c, p, q) (corner i = c) and u = (d, q, p) across pq become t = (c, p, d)
    // and u = (c, d, q).
    void flip(std::vector<Triangle>& T, const std::vector<Vec3>& x, std::vector<Real>& quality,
              std::int32_t t, int i) {
        const std::int32_t u = neighbours[3 * std::size_t(t) + std::size_t(i)];
        const Triangle tt = T[std::size_t(t)], uu = T[std::size_t(u)];
        const Index c = tt[std::size_t(i)], p = tt[std::size_t((i + 1) % 3)],
                    q = tt[std::size_t((i + 2) % 3)];
        const Index d = otherCorner(uu, p, q);
        const auto across = [&](std::int32_t tri, const Triangle& corners, Index opposite) {
            for (int k = 0; k < 3; ++k) {
                if (corners[std::size_t(k)] == opposite) {
                    return neighbours[3 * std::size_t(tri) + std::size_t(k)];
                }
            }
            return kNone;
        };
        const std::int32_t tAcrossQ = across(t, tt, q); // edge (c, p)
        const std::int32_t tAcrossP = across(t, tt, p); // edge (q, c)
        const std::int32_t uAcrossQ = across(u, uu, q); // edge (p, d)
        const std::int32_t uAcrossP = across(u, uu, p); // edge (d, q)
        T[std::size_t(t)] = {c, p, d};
        T[std::size_t(u)] = {c, d, q};
        // Opposite c, p, d of t: (p, d) -> uAcrossQ, (d, c) -> u, (c, p) -> tAcrossQ.
        neighbours[3 * std::size_t(t) + 0] = uAcrossQ;
        neighbours[3 * std::size_t(t) + 1] = u;
        neighbours[3 * std::size_t(t) + 2] = tAcrossQ;
        // Opposite c, d, q of u: (d, q) -> uAcrossP, (q, c) -> tAcrossP, (c, d) -> t.
        neighbours[3 * std::size_t(u) + 0] = uAcrossP;
        neighbours[3 * std::size_t(u) + 1] = tAcrossP;
        neighbours[3 * std::size_t(u) + 2] = t;
        const auto repoint = [&](std::int32_t outer, std::int32_t from, std::int32_t to) {
            if (outer == kNone) {
                return;
            }
            for (int k = 0; k < 3; ++k) {
                std::int32_t& n = neighbours[3 * std::size_t(outer) + std::size_t(k)];
                if (n == from) {
                    n = to;
                }
            }
        };
        repoint(uAcrossQ, u, t); // edge (p, d) now belongs to t
        repoint(tAcrossP, t, u); // edge (q, c) now belongs to u
        quality[std::size_t(t)] = planarQuality(x, c, p, d);
        quality[std::size_t(u)] = planarQuality(x, c, d, q);
    }
};

AirOptimizer::AirOptimizer()
    : impl_(std::make_unique<Impl>())
    , planar_(std::make_unique<Planar>()) {}

AirOptimizer::~AirOptimizer() = default;

AirOptimizationStatistics AirOptimizer::optimize(Scene& scene,
                                                 const AirOptimizationOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    AirOptimizationStatistics stats;
    if (scene.air.tets.empty() && !scene.air.triangles.empty()) {
        if (planar_->builtFor != scene.air.triangles.size()) {
            planar_->build(scene);
            ++rebuilds_;
        }
        stats = planar_->pass(scene, options);
        stats.milliseconds =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
        return stats;
    }
    Impl& m = *impl_;
    std::vector<Tetrahedron>& T = scene.air.tets;
    stats.tetsBefore = T.size();
    if (T.empty()) {
        return stats;
    }
    if (m.builtFor != T.size()) {
        m.build(scene);
        ++rebuilds_;
    }
    if (pendingMemory_) {
        // A resumed run: the passes' memory as it was after the frame's pass.
        const std::shared_ptr<const Memory>& given = *pendingMemory_;
        const Memory* kept = given && given->tets == T.size() ? given.get() : nullptr;
        m.pass = kept ? kept->pass : 0;
        m.failedIn.assign(T.size(), 0);
        m.failedQuality.assign(T.size(), 0);
        m.changedIn.clear();
        if (kept) {
            for (const Memory::Failed& f : kept->failed) {
                m.failedIn[std::size_t(f.tet)] = f.pass;
                m.failedQuality[std::size_t(f.tet)] = f.quality;
            }
            m.changedIn = kept->changed;
        }
        pendingMemory_.reset();
    }
    m.tets = &T;
    m.x = &scene.particles.positions;
    m.options = options;
    m.quality.resize(T.size());
    // Every tet's quality, on the caller's threads (each is its own), then the candidates in
    // order.
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, T.size(), 16384),
                      [&](const tbb::blocked_range<std::size_t>& r) {
                          for (std::size_t t = r.begin(); t < r.end(); ++t) {
                              m.quality[t] = m.q(T[t]);
                          }
                      });
    std::vector<std::int32_t> candidates;
    Real worst = kInfinity;
    for (std::size_t t = 0; t < T.size(); ++t) {
        const Real q = m.quality[t];
        worst = std::min(worst, q);
        if (q < options.qualityThreshold) {
            candidates.push_back(std::int32_t(t));
        }
    }
    stats.minQualityBefore = worst;
    m.frozen.assign(scene.particles.size(), 0);
    m.anyFrozen = false;
    for (const Body& body : scene.bodies) {
        for (const Tetrahedron& t : body.tets) {
            if (m.q(t) < options.crushedBody) {
                for (Index v : t) {
                    stats.frozenVertices += m.frozen[v] == 0;
                    m.frozen[v] = 1;
                }
                m.anyFrozen = true;
            }
        }
    }
    stats.candidates = candidates.size();
    ++m.pass;
    m.changedIn.resize(scene.particles.size(), 0); // failedIn: sized by build and compact
    m.freePoint.assign(scene.particles.size(), 0);
    bool hasFreePoints = false;
    for (Index i = scene.air.firstParticle; i < scene.air.firstParticle + scene.air.particleCount;
         ++i) {
        m.freePoint[i] = scene.particles.inverseMasses[i] > 0;
        hasFreePoints = hasFreePoints || m.freePoint[i];
    }
    // Worst first (ties by index, so passes are deterministic).
    std::sort(candidates.begin(), candidates.end(), [&](std::int32_t l, std::int32_t r) {
        const Real ql = m.quality[std::size_t(l)];
        const Real qr = m.quality[std::size_t(r)];
        return ql < qr || (ql == qr && l < r);
    });
    // The candidates in batches: every thread tries the batch's candidates at once on the mesh
    // as it stands (the tries only read it), then one thread goes through them in order,
    // applying the best changes. A candidate's tries read only tets around its corners and the
    // corners across its faces (its zone): where no change applied earlier in the batch touched
    // a tet with a vertex in the zone, the tries made ahead found what they would find now and
    // are used; elsewhere they are made again. The same changes as one thread trying each
    // candidate after the last change, whatever the number of threads.
    const std::size_t batchSize = tbb::this_task_arena::max_concurrency() > 1 ? 512 : 0;
    std::vector<Impl::Tried> tried(batchSize);
    tbb::enumerable_thread_specific<Impl::Search> searches; // each thread's, for the pass
    if (m.touched.size() < scene.particles.size()) {
        m.touched.assign(scene.particles.size(), 0);
    }
    for (std::size_t first = 0; first < candidates.size();) {
        const std::size_t last =
            std::min(candidates.size(), first + std::max<std::size_t>(1, batchSize));
        if (batchSize > 0) {
            tbb::parallel_for(tbb::blocked_range<std::size_t>(first, last, 16),
                              [&](const tbb::blocked_range<std::size_t>& r) {
                                  Impl::Search& search = searches.local();
                                  for (std::size_t c = r.begin(); c < r.end(); ++c) {
                                      m.tryAhead(search, candidates[c], hasFreePoints,
                                                 tried[c - first]);
                                  }
                              });
        }
        if (++m.batch == 0) { // the stamps wrapped around: start afresh
            std::fill(m.touched.begin(), m.touched.end(), 0);
            m.batch = 1;
        }
        for (std::size_t c = first; c < last; ++c) {
            const std::int32_t t = candidates[c];
            if (!m.candidate(t)) {
                continue;
            }
            if (m.deferred(t)) {
                ++stats.deferred;
                continue;
            }
            Impl::Change& best = m.applying.best;
            if (batchSize > 0 && tried[c - first].made && !m.touches(tried[c - first].zone)) {
                best = std::move(tried[c - first].best);
            } else {
                m.tryAll(m.applying, t, hasFreePoints);
            }
            if (best.removed.empty()) {
                m.fail(t);
                continue;
            }
            m.touch(best); // before the change: the removed tets' corners
            if (!m.apply(best)) {
                m.fail(t);
                continue;
            }
            if (best.contraction) {
                ++stats.contractions;
            } else if (best.edgeRemoval) {
                ++stats.edgeRemovals;
                stats.flips32 += best.size == 3;
            } else {
                ++stats.multiFaceRemovals;
                stats.flips23 += best.size == 1;
            }
        }
        first = last;
    }
    m.compact();
    m.builtFor = T.size();
    stats.tetsAfter = T.size();
    stats.minQualityAfter = T.empty() ? 0 : *std::min_element(m.quality.begin(), m.quality.end());
    stats.milliseconds =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return stats;
}

std::size_t AirOptimizer::Memory::bytes() const {
    return sizeof(Memory) + failed.size() * sizeof(Failed) + changed.size() * sizeof(std::uint32_t);
}

std::shared_ptr<const AirOptimizer::Memory>
AirOptimizer::memory(const AirOptimizationOptions& options) const {
    const Impl& m = *impl_;
    auto kept = std::make_shared<Memory>();
    kept->pass = m.pass;
    kept->tets = m.failedIn.size();
    if (m.pass == 0 || options.retryAfter <= 0) {
        return kept;
    }
    // Older failures are retried anyway, and older changes compare with them as none.
    const std::uint32_t window = std::uint32_t(options.retryAfter);
    const std::uint32_t oldest = m.pass > window ? m.pass - window : 1;
    for (std::size_t t = 0; t < m.failedIn.size(); ++t) {
        if (m.failedIn[t] >= oldest) {
            kept->failed.push_back({std::int32_t(t), m.failedIn[t], m.failedQuality[t]});
        }
    }
    kept->changed.resize(m.changedIn.size());
    for (std::size_t v = 0; v < m.changedIn.size(); ++v) {
        kept->changed[v] = m.changedIn[v] >= oldest ? m.changedIn[v] : 0;
    }
    return kept;
}

void AirOptimizer::setMemory(std::shared_ptr<const Memory> memory) {
    pendingMemory_ = std::move(memory);
}

Real worstAirQuality(const Scene& scene) {
    const std::vector<Vec3>& x = scene.particles.positions;
    Real worst = 1;
    for (const Tetrahedron& t : scene.air.tets) {
        worst = std::min(worst, tetQuality(x[t[0]], x[t[1]], x[t[2]], x[t[3]]));
    }
    for (const Triangle& t : scene.air.triangles) {
        worst = std::min(worst, planarQuality(x, t[0], t[1], t[2]));
    }
    return worst;
}

const std::vector<std::int32_t>* AirOptimizer::adjacency(const Scene& scene) const {
    const Impl& m = *impl_;
    if (m.builtFor != scene.air.tets.size() || m.tets != &scene.air.tets) {
        return nullptr;
    }
    return &m.neighbours;
}

std::vector<std::string> AirOptimizer::checkAdjacency(const Scene& scene) const {
    std::vector<std::string> problems;
    if (scene.air.tets.empty() && !scene.air.triangles.empty()) {
        const Planar& p = *planar_;
        const std::vector<std::int32_t> fresh = buildEdgeAdjacency(scene.air.triangles);
        if (p.neighbours.size() != fresh.size()) {
            problems.push_back("the adjacency was built for another air");
            return problems;
        }
        for (std::size_t k = 0; k < fresh.size() && problems.size() < 10; ++k) {
            if (fresh[k] != p.neighbours[k]) {
                problems.push_back("air triangle " + std::to_string(k / 3) + " edge " +
                                   std::to_string(k % 3) + ": kept neighbour " +
                                   std::to_string(p.neighbours[k]) + ", rebuilt " +
                                   std::to_string(fresh[k]));
            }
        }
        return problems;
    }
    const Impl& m = *impl_;
    if (m.builtFor != scene.air.tets.size() || m.neighbours.size() != 4 * scene.air.tets.size()) {
        problems.push_back("the adjacency was built for " + std::to_string(m.builtFor) +
                           " air tets, the scene has " + std::to_string(scene.air.tets.size()));
        return problems;
    }
    const std::vector<std::int32_t> fresh = buildAdjacency(scene.air.tets);
    for (std::size_t k = 0; k < fresh.size() && problems.size() < 10; ++k) {
        if (fresh[k] != m.neighbours[k]) {
            problems.push_back("air tet " + std::to_string(k / 4) + " face " +
                               std::to_string(k % 4) + ": kept neighbour " +
                               std::to_string(m.neighbours[k]) + ", rebuilt " +
                               std::to_string(fresh[k]));
        }
    }
    return problems;
}

} // namespace pbd
