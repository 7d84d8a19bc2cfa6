#include "core/solver/ContinuousCollision.h"

#include "core/base/ClosestPoints.h"
#include "core/base/Morton.h"
#include "core/scene/Topology.h"
#include "core/solver/SelfCollision.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <unordered_map>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace pbd {

namespace {

constexpr Index kNone = std::numeric_limits<Index>::max();
// A zone that a surface that cannot be held pushes may close in on it by half their distance,
// but not below this, m: a gap halved every substep would vanish.
constexpr Real kKept = 1e-4;

// The distance from p to triangle (a, b, c): NaN for a triangle gone degenerate, which the
// callers take as touching.
Real triangleDistance(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
    const Vec3 w = closestBarycentric(p, a, b, c);
    return (p - (w[0] * a + w[1] * b + w[2] * c)).norm();
}

enum class Advance { Apart, Touch, Undecided };

// Conservative advancement of a distance d(t), t in [0, 1], that changes no faster than
// `bound`: Touch when it comes within kTouch, Undecided when its steps do not clear the move.
template <class Distance> Advance advance(Real bound, Distance&& distance) {
    if (!(bound > 0)) {
        return Advance::Apart; // neither primitive moves relative to the other: the start is apart
    }
    Real t = 0;
    for (int step = 0; step < kMostAdvances; ++step) {
        const Real d = distance(t);
        if (!(d > kTouch)) {
            return Advance::Touch;
        }
        t += d / bound;
        if (t >= 1) {
            return Advance::Apart;
        }
    }
    return Advance::Undecided;
}

// Whether four points moving straight from q0[k] to q1[k] stay strictly on one side of one
// another's planes by more than kTouch over the whole move: det(q1 - q0, q2 - q0, q3 - q0) is a
// cubic in t whose Bernstein coefficients bound it (Tang et al. 2010's deforming
// non-penetration filter), and the distance between the plane of q0's partners and q0 (or
// between the lines q0 q1 and q2 q3) is that determinant over a cross product's length, at most
// `crossBound`. So when every coefficient exceeds kTouch * crossBound (or all fall below minus
// that), the two primitives never come within kTouch. Conservative advancement cannot prove
// this for surfaces that slide past each other close by (the dancer's hems resting on one
// another: thousands of pairs a substep ran out of steps and were held).
bool staySides(const std::array<Vec3, 4>& q0, const std::array<Vec3, 4>& q1, Real crossBound) {
    Vec3 u0[3], u1[3];
    for (int k = 0; k < 3; ++k) {
        u0[k] = q0[k + 1] - q0[0];
        u1[k] = q1[k + 1] - q1[0];
    }
    const auto det = [](const Vec3& a, const Vec3& b, const Vec3& c) { return a.dot(b.cross(c)); };
    const Real b0 = det(u0[0], u0[1], u0[2]);
    const Real b1 =
        (det(u1[0], u0[1], u0[2]) + det(u0[0], u1[1], u0[2]) + det(u0[0], u0[1], u1[2])) / 3;
    const Real b2 =
        (det(u1[0], u1[1], u0[2]) + det(u1[0], u0[1], u1[2]) + det(u0[0], u1[1], u1[2])) / 3;
    const Real b3 = det(u1[0], u1[1], u1[2]);
    // Twice kTouch: the coefficients' rounding is many orders below it at any scale where
    // kTouch means anything.
    const Real margin = 2 * kTouch * crossBound;
    return (b0 > margin && b1 > margin && b2 > margin && b3 > margin) ||
           (b0 < -margin && b1 < -margin && b2 < -margin && b3 < -margin);
}

// Whether the points `near` stay farther than kTouch from the points `far` along the direction
// c over the whole move (near below, far above, or the other way round): each point's height
// along c is linear in t, so the gap between the lowest of one group and the highest of the
// other is concave and least at t = 0 or 1. c need not be of unit length (no root, no
// division): the heights scale by |c|, so the test is gap > 0 and gap^2 > (2 kTouch)^2 |c|^2.
// A fixed axis separates pairs the cubic cannot: nearly parallel edges sliding along each
// other, a vertex beside a triangle; and whole triangles (trianglesStayApart).
template <std::size_t A, std::size_t B>
bool separatedAlong(const Vec3& c, const std::array<const Vec3*, A>& near0,
                    const std::array<const Vec3*, A>& near1, const std::array<const Vec3*, B>& far0,
                    const std::array<const Vec3*, B>& far1) {
    const Real c2 = c.squaredNorm();
    if (!(c2 > 0) || !std::isfinite(c2)) {
        return false;
    }
    Real below = std::numeric_limits<Real>::infinity(), above = below;
    for (int t = 0; t < 2; ++t) {
        const auto& group = t == 0 ? near0 : near1;
        const auto& other = t == 0 ? far0 : far1;
        Real nearLo = std::numeric_limits<Real>::infinity(), nearHi = -nearLo;
        Real farLo = nearLo, farHi = -nearLo;
        for (const Vec3* q : group) {
            const Real h = c.dot(*q);
            nearLo = std::min(nearLo, h);
            nearHi = std::max(nearHi, h);
        }
        for (const Vec3* q : other) {
            const Real h = c.dot(*q);
            farLo = std::min(farLo, h);
            farHi = std::max(farHi, h);
        }
        below = std::min(below, farLo - nearHi); // far above near
        above = std::min(above, nearLo - farHi); // near above far
    }
    const Real gap = std::max(below, above);
    return gap > 0 && gap * gap > 4 * kTouch * kTouch * c2;
}

// The longest a segment moving straight from (a0, b0) to (a1, b1) gets.
Real longest(const Vec3& a0, const Vec3& b0, const Vec3& a1, const Vec3& b1) {
    return std::max((b0 - a0).norm(), (b1 - a1).norm());
}

// Whether segment p-q passes through the inside of triangle (a, b, c) (its ends strictly on
// either side, the line strictly inside each edge: a pass through an edge or a corner, which
// only moves of measure zero make, does not count).
bool segmentPierces(const Vec3& p, const Vec3& q, const Vec3& a, const Vec3& b, const Vec3& c) {
    const Real dp = signedVolume(a, b, c, p), dq = signedVolume(a, b, c, q);
    if (!((dp > 0 && dq < 0) || (dp < 0 && dq > 0))) {
        return false;
    }
    const Real s1 = signedVolume(p, q, a, b), s2 = signedVolume(p, q, b, c),
               s3 = signedVolume(p, q, c, a);
    return (s1 > 0 && s2 > 0 && s3 > 0) || (s1 < 0 && s2 < 0 && s3 < 0);
}

} // namespace

bool trianglesCross(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d, const Vec3& e,
                    const Vec3& f) {
    return segmentPierces(a, b, d, e, f) || segmentPierces(b, c, d, e, f) ||
           segmentPierces(c, a, d, e, f) || segmentPierces(d, e, a, b, c) ||
           segmentPierces(e, f, a, b, c) || segmentPierces(f, d, a, b, c);
}

bool trianglesStayApart(const std::array<const Vec3*, 3>& p0, const std::array<const Vec3*, 3>& p1,
                        const std::array<const Vec3*, 3>& q0,
                        const std::array<const Vec3*, 3>& q1) {
    // Layers sliding over each other are apart along their normals, triangles of one sheet
    // (sharing no corner) along the line between them: of the dancer's pairs of triangles whose
    // swept boxes overlap, all but about one in 600, three in four by the first normal.
    const Vec3 &a = *p0[0], &b = *p0[1], &c = *p0[2], &d = *q0[0], &e = *q0[1], &f = *q0[2];
    return separatedAlong<3, 3>((b - a).cross(c - a), p0, p1, q0, q1) ||
           separatedAlong<3, 3>((e - d).cross(f - d), p0, p1, q0, q1) ||
           separatedAlong<3, 3>(d + e + f - a - b - c, p0, p1, q0, q1);
}

bool vertexTriangleTouch(const Vec3& p0, const Vec3& p1, const Vec3& a0, const Vec3& a1,
                         const Vec3& b0, const Vec3& b1, const Vec3& c0, const Vec3& c1) {
    const Vec3 dp = p1 - p0, da = a1 - a0, db = b1 - b0, dc = c1 - c0;
    // For fixed barycentric weights the distance changes at |dp - sum w_i d_i|, at most the
    // largest of |dp - d_i|; so does its minimum over the weights.
    const Real bound = std::max({(dp - da).norm(), (dp - db).norm(), (dp - dc).norm()});
    const Advance verdict = advance(bound, [&](Real t) {
        return triangleDistance(p0 + t * dp, a0 + t * da, b0 + t * db, c0 + t * dc);
    });
    if (verdict != Advance::Undecided) {
        return verdict == Advance::Touch;
    }
    // |(b - a) x (c - a)| <= |b - a| |c - a|, each at most its longer end.
    if (staySides({p0, a0, b0, c0}, {p1, a1, b1, c1},
                  longest(a0, b0, a1, b1) * longest(a0, c0, a1, c1))) {
        return false;
    }
    // Along the direction from the triangle's closest point to the vertex, at either end.
    for (int end = 0; end < 2; ++end) {
        const Vec3 &p = end ? p1 : p0, &a = end ? a1 : a0, &b = end ? b1 : b0, &c = end ? c1 : c0;
        const Vec3 w = closestBarycentric(p, a, b, c);
        const Vec3 n = p - (w[0] * a + w[1] * b + w[2] * c);
        if (separatedAlong<1, 3>(n, {&p0}, {&p1}, {&a0, &b0, &c0}, {&a1, &b1, &c1})) {
            return false;
        }
    }
    return true;
}

bool edgeEdgeTouch(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1, const Vec3& c0,
                   const Vec3& c1, const Vec3& d0, const Vec3& d1) {
    const Vec3 da = a1 - a0, db = b1 - b0, dc = c1 - c0, dd = d1 - d0;
    const Real bound =
        std::max({(da - dc).norm(), (da - dd).norm(), (db - dc).norm(), (db - dd).norm()});
    const Advance verdict = advance(bound, [&](Real t) {
        return segmentDistance(a0 + t * da, b0 + t * db, c0 + t * dc, d0 + t * dd);
    });
    if (verdict != Advance::Undecided) {
        return verdict == Advance::Touch;
    }
    // The segments are no closer than their lines: det(b - a, c - a, d - a) / |(b - a) x (d - c)|.
    if (staySides({a0, b0, c0, d0}, {a1, b1, c1, d1},
                  longest(a0, b0, a1, b1) * longest(c0, d0, c1, d1))) {
        return false;
    }
    // Along the direction between the closest points, at either end.
    for (int end = 0; end < 2; ++end) {
        const Vec3 &a = end ? a1 : a0, &b = end ? b1 : b0, &c = end ? c1 : c0, &d = end ? d1 : d0;
        Real s = 0, t = 0;
        closestSegmentParameters(a, b, c, d, s, t);
        const Vec3 n = (c + t * (d - c)) - (a + s * (b - a));
        if (separatedAlong<2, 2>(n, {&a0, &b0}, {&a1, &b1}, {&c0, &d0}, {&c1, &d1})) {
            return false;
        }
    }
    return true;
}

namespace {

// A float box that holds the double one (rounded outwards by a relative step, cheaper than
// nextafter and never less).
ContinuousCollision::Box outwardBox(const Vec3& lo, const Vec3& hi) {
    ContinuousCollision::Box b;
    if (!lo.allFinite() || !hi.allFinite()) { // empty: in no pair (a run gone non-finite)
        constexpr float kInf = std::numeric_limits<float>::infinity();
        return {{kInf, kInf, kInf}, {-kInf, -kInf, -kInf}};
    }
    for (int k = 0; k < 3; ++k) {
        const float l = float(lo[k]), h = float(hi[k]);
        b.lo[k] = l - (std::abs(l) * 1.2e-7f + 1e-30f);
        b.hi[k] = h + (std::abs(h) * 1.2e-7f + 1e-30f);
        if (!std::isfinite(b.lo[k]) || !std::isfinite(b.hi[k])) {
            // Beyond floats (a run blown up to 1e38 m): empty too. Infinite, the box met the
            // empty slots of the tree's leaves and named triangles that are not there.
            constexpr float kInf = std::numeric_limits<float>::infinity();
            return {{kInf, kInf, kInf}, {-kInf, -kInf, -kInf}};
        }
    }
    return b;
}

ContinuousCollision::Box merged(const ContinuousCollision::Box& a,
                                const ContinuousCollision::Box& b) {
    ContinuousCollision::Box m;
    for (int k = 0; k < 3; ++k) {
        m.lo[k] = std::min(a.lo[k], b.lo[k]);
        m.hi[k] = std::max(a.hi[k], b.hi[k]);
    }
    return m;
}

// Without branches: most boxes tested in the tree's leaves are near, and which way each
// comparison goes is not predictable.
bool overlap(const ContinuousCollision::Box& a, const ContinuousCollision::Box& b) {
    return (a.lo[0] <= b.hi[0]) & (b.lo[0] <= a.hi[0]) & (a.lo[1] <= b.hi[1]) &
           (b.lo[1] <= a.hi[1]) & (a.lo[2] <= b.hi[2]) & (b.lo[2] <= a.hi[2]);
}

} // namespace

void ContinuousCollision::setTriangles(const std::vector<Triangle>& triangles) {
    if (triangles == triangles_) {
        return;
    }
    triangles_ = triangles;
    mostParticle_ = 0;
    for (const Triangle& t : triangles_) {
        mostParticle_ = std::max({mostParticle_, t[0], t[1], t[2]});
    }
    ordered_ = false; // put in order at the next apply, from the positions then
    tangledKnown_ = false;
}

// The triangles in the order of their centres along a Morton curve (at x0), those whose
// corners cannot be held (a character's skin: orderedFixed_) after the others, the surface's
// vertices numbered in the order the triangles first name them, and a tree over that order:
// the tree's nodes are halves of ranges (the first split where the skin begins, so no node
// holds both and a skin moving through the cloth does not swell the cloth's nodes), so it is
// refitted, never rebuilt, as the surface moves, and the vertices and triangles a pair of nodes
// names lie close together in memory.
void ContinuousCollision::order(const std::vector<Vec3>& x0) {
    const std::size_t m = triangles_.size();
    Bounds all;
    std::vector<Vec3> centres(m);
    for (std::size_t f = 0; f < m; ++f) {
        const Triangle& t = triangles_[f];
        centres[f] = (x0[t[0]] + x0[t[1]] + x0[t[2]]) / 3;
        if (centres[f].allFinite()) {
            all.add(centres[f]);
        }
    }
    std::vector<std::size_t> sorted(m);
    if (all.empty()) {
        std::iota(sorted.begin(), sorted.end(), std::size_t(0));
    } else {
        sorted = mortonOrder(centres, all.min, all.max);
    }
    fixedBegin_ = Index(std::stable_partition(sorted.begin(), sorted.end(),
                                              [&](std::size_t f) { return !orderedFixed_[f]; }) -
                        sorted.begin());
    tiesBuilt_ = false; // the ties name local vertices
    reordered_ = true;  // and so does what refit keeps
    // Local vertices and triangles.
    localOf_.assign(std::size_t(mostParticle_) + 1, kNone);
    global_.clear();
    local_.assign(m, {});
    for (std::size_t k = 0; k < m; ++k) {
        const Triangle& t = triangles_[sorted[k]];
        for (int c = 0; c < 3; ++c) {
            Index& local = localOf_[t[std::size_t(c)]];
            if (local == kNone) {
                local = Index(global_.size());
                global_.push_back(t[std::size_t(c)]);
            }
            local_[k][std::size_t(c)] = local;
        }
    }
    const std::size_t n = global_.size();
    // Each vertex and edge to the first triangle that holds it.
    owns_.assign(m, 0);
    std::vector<std::uint8_t> vertexTaken(n, 0);
    std::unordered_map<std::uint64_t, bool> edgeTaken;
    edgeTaken.reserve(2 * m);
    vertexTriangleStart_.assign(n + 1, 0);
    for (std::size_t f = 0; f < m; ++f) {
        const Triangle& t = local_[f];
        for (int k = 0; k < 3; ++k) {
            const Index v = t[std::size_t(k)];
            ++vertexTriangleStart_[v + 1];
            if (!vertexTaken[v]) {
                vertexTaken[v] = 1;
                owns_[f] |= std::uint8_t(1u << k);
            }
            const Index w = t[std::size_t((k + 1) % 3)];
            const std::uint64_t edge = std::uint64_t(std::min(v, w)) << 32 | std::max(v, w);
            if (edgeTaken.emplace(edge, true).second) {
                owns_[f] |= std::uint8_t(8u << k);
            }
        }
    }
    for (std::size_t i = 0; i < n; ++i) {
        vertexTriangleStart_[i + 1] += vertexTriangleStart_[i];
    }
    vertexTriangles_.assign(vertexTriangleStart_.back(), 0);
    std::vector<Index> fill(vertexTriangleStart_.begin(), vertexTriangleStart_.end() - 1);
    for (std::size_t f = 0; f < m; ++f) {
        for (Index v : local_[f]) {
            vertexTriangles_[fill[v]++] = Index(f);
        }
    }
    // Pairs of triangles that share a corner, and the pairs of their primitives that share
    // none (a vertex and a triangle, two edges): always near, so tested from this fixed list,
    // most by a sphere's bound alone (a fold through a neighbour takes more than a substep's
    // moves). The pairs of all other triangles come from the tree.
    adjacentStart_.assign(m + 1, 0);
    adjacentOf_.clear();
    adjacentVF_.clear();
    adjacentEE_.clear();
    {
        std::vector<Index> near;
        for (std::size_t a = 0; a < m; ++a) {
            near.clear();
            for (Index v : local_[a]) {
                for (Index k = vertexTriangleStart_[v]; k < vertexTriangleStart_[v + 1]; ++k) {
                    if (vertexTriangles_[k] != a) {
                        near.push_back(vertexTriangles_[k]);
                    }
                }
            }
            std::sort(near.begin(), near.end());
            near.erase(std::unique(near.begin(), near.end()), near.end());
            adjacentOf_.insert(adjacentOf_.end(), near.begin(), near.end());
            adjacentStart_[a + 1] = Index(adjacentOf_.size());
            for (Index b : near) {
                if (b > a) {
                    forEachPrimitivePair(
                        Index(a), b,
                        [&](Index p, Index f) {
                            adjacentVF_.push_back({p, f});
                        },
                        [&](Index e0, Index e1, Index f0, Index f1) {
                            adjacentEE_.push_back({e0, e1, f0, f1});
                        });
                }
            }
        }
    }
    Real edges = 0;
    for (const Triangle& t : local_) {
        edges += (x0[global_[t[0]]] - x0[global_[t[1]]]).norm() +
                 (x0[global_[t[1]]] - x0[global_[t[2]]]).norm() +
                 (x0[global_[t[2]]] - x0[global_[t[0]]]).norm();
    }
    meanEdge_ = m > 0 && std::isfinite(edges) ? edges / Real(3 * m) : 0;
    built_ = false;
    // The tree: node 0 the root, each node's children after it.
    nodes_.clear();
    leafOf_.assign(m, 0);
    struct Range {
        Index begin, end, node;
    };
    std::vector<Range> todo;
    Index leaves = 0;
    if (m > 0) {
        nodes_.push_back({});
        todo.push_back({0, Index(m), 0});
    }
    while (!todo.empty()) {
        const Range r = todo.back();
        todo.pop_back();
        Node& node = nodes_[r.node];
        node.begin = r.begin;
        node.end = r.end;
        if (r.end - r.begin <= kLeafSize) {
            node.left = 0; // a leaf
            node.leaf = leaves++;
            for (Index f = r.begin; f < r.end; ++f) {
                leafOf_[f] = r.node;
            }
            continue;
        }
        const Index mid = r.begin < fixedBegin_ && fixedBegin_ < r.end
                              ? fixedBegin_
                              : r.begin + (r.end - r.begin) / 2;
        const Index left = Index(nodes_.size());
        nodes_.push_back({});
        nodes_.push_back({});
        nodes_[r.node].left = left;
        todo.push_back({r.begin, mid, left});
        todo.push_back({mid, r.end, left + 1});
    }
    leafBoxes_.resize(leaves);
    ordered_ = true;
    tangledKnown_ = false; // by the local numbering
    lastRanThrough_ = false;
}

template <class VertexTriangle, class EdgeEdge>
void ContinuousCollision::forEachPrimitivePair(Index a, Index b, VertexTriangle&& vertexTriangle,
                                               EdgeEdge&& edgeEdge) const {
    const Triangle& A = local_[a];
    const Triangle& B = local_[b];
    const std::uint8_t ownsA = owns_[a], ownsB = owns_[b];
    auto in = [](Index v, const Triangle& t) { return v == t[0] || v == t[1] || v == t[2]; };
    for (int i = 0; i < 3; ++i) {
        if ((ownsA & (1u << i)) && !in(A[std::size_t(i)], B)) {
            vertexTriangle(A[std::size_t(i)], b);
        }
        if ((ownsB & (1u << i)) && !in(B[std::size_t(i)], A)) {
            vertexTriangle(B[std::size_t(i)], a);
        }
    }
    if (!(ownsA & 0x38) || !(ownsB & 0x38)) {
        return;
    }
    for (int i = 0; i < 3; ++i) {
        if (!(ownsA & (8u << i))) {
            continue;
        }
        const Index e0 = A[std::size_t(i)], e1 = A[std::size_t((i + 1) % 3)];
        for (int j = 0; j < 3; ++j) {
            if (!(ownsB & (8u << j))) {
                continue;
            }
            const Index f0 = B[std::size_t(j)], f1 = B[std::size_t((j + 1) % 3)];
            if (f0 != e0 && f0 != e1 && f1 != e0 && f1 != e1) {
                edgeEdge(e0, e1, f0, f1);
            }
        }
    }
}

ContinuousCollision::Sphere ContinuousCollision::sphereOf(Index f) const {
    const Triangle& t = local_[f];
    const Vec3 c = (x0_[t[0]] + x0_[t[1]] + x0_[t[2]]) / 3;
    const Vec3 d[3] = {x1_[t[0]] - x0_[t[0]], x1_[t[1]] - x0_[t[1]], x1_[t[2]] - x0_[t[2]]};
    const Vec3 mean = (d[0] + d[1] + d[2]) / 3;
    return {c,
            std::sqrt(std::max({(x0_[t[0]] - c).squaredNorm(), (x0_[t[1]] - c).squaredNorm(),
                                (x0_[t[2]] - c).squaredNorm()})),
            std::max({travel_[t[0]], travel_[t[1]], travel_[t[2]]}), mean,
            std::sqrt(std::max({(d[0] - mean).squaredNorm(), (d[1] - mean).squaredNorm(),
                                (d[2] - mean).squaredNorm()}))};
}

void ContinuousCollision::refit(const std::vector<Vec3>& x0, const std::vector<Vec3>& x1) {
    const std::size_t n = global_.size(), m = local_.size();
    // Whether this start is the last apply's (a cycle of the solver's mending) or its end (the
    // next substep).
    std::atomic<bool> sameStart = x0_.size() == n, lastEnd = x1_.size() == n;
    endChanged_.assign(n, 1);
    const bool known = x1_.size() == n; // the last apply's end, to tell what moved since
    // What the last refit made of a vertex (and of a triangle of such vertices) stands where
    // its start and end are those bits again and no round moved it since (stale_): the hold
    // cycles' applies start where the last one did and move few ends.
    const bool reuse = known && !reordered_ && stale_.size() == n && boxes_.size() == m;
    reordered_ = false;
    stale_.resize(n);
    vertexChanged_.resize(n);
    x0_.resize(n);
    x1_.resize(n);
    vertexBoxes_.resize(n);
    moves_.resize(n);
    travel_.resize(n);
    packed_.resize(n);
    packedMoves_.resize(n);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 2048), [&](const auto& r) {
        bool same = true, last = true;
        for (std::size_t i = r.begin(); i < r.end(); ++i) {
            const Vec3& a = x0[global_[i]];
            const Vec3& b = x1[global_[i]];
            same = same && x0_[i] == a;
            last = last && x1_[i] == a;
            endChanged_[i] = !known || x1_[i] != b;
            vertexChanged_[i] = !reuse || stale_[i] ||
                                std::memcmp(&x0_[i], &a, sizeof(Vec3)) != 0 ||
                                std::memcmp(&x1_[i], &b, sizeof(Vec3)) != 0;
            if (!vertexChanged_[i]) {
                continue;
            }
            stale_[i] = 0;
            x0_[i] = a;
            x1_[i] = b;
            vertexBoxes_[i] =
                outwardBox(a.cwiseMin(b).array() - kTouch, a.cwiseMax(b).array() + kTouch);
            moves_[i] = a != b;
            travel_[i] = (b - a).norm();
            packed_[i] = {float(a.x()), float(a.y()), float(a.z()), float(travel_[i])};
            packedMoves_[i] = {float(b.x() - a.x()), float(b.y() - a.y()), float(b.z() - a.z()),
                               0.0f};
        }
        if (!same) {
            sameStart = false;
        }
        if (!last) {
            lastEnd = false;
        }
    });
    startAsBefore_ = sameStart;
    startAtLastEnd_ = lastEnd;
    boxes_.resize(m);
    spheres_.resize(m);
    packedSpheres_.resize(m);
    packedSphereMoves_.resize(m);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, m, 2048), [&](const auto& r) {
        for (std::size_t f = r.begin(); f < r.end(); ++f) {
            const Triangle& t = local_[f];
            if (reuse && !(vertexChanged_[t[0]] | vertexChanged_[t[1]] | vertexChanged_[t[2]])) {
                continue;
            }
            boxes_[f] = merged(merged(vertexBoxes_[t[0]], vertexBoxes_[t[1]]), vertexBoxes_[t[2]]);
            // The sphere round the start: a lower bound of a point's distance, cheaper than the
            // distance itself (most pairs are neighbours too far apart for their moves).
            const Sphere& sphere = spheres_[f] = sphereOf(Index(f));
            const Vec3& c = sphere.centre;
            const Vec3& mean = sphere.move;
            packedSpheres_[f] = {float(c.x()), float(c.y()), float(c.z()),
                                 float(sphere.radius + sphere.travel)};
            packedSphereMoves_[f] = {float(mean.x()), float(mean.y()), float(mean.z()),
                                     float(sphere.radius + sphere.spread)};
        }
    });
    // What the floats' rounding may take off a distance they bound: a few of their units of
    // the largest coordinate.
    Real largest = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (x0_[i].allFinite()) {
            largest = std::max(largest, x0_[i].cwiseAbs().maxCoeff());
        }
    }
    floatSlack_ = float(1e-6 * (1 + largest));
}

// The tree's boxes refitted to `boxes`: the leaves (nearly all of the work: a leaf writes its
// sixteen slots) on every thread, then the inner nodes, children after their parents (the nodes
// in reverse). On one thread it was 3% of the dancer's step with continuous collision (three
// refits a substep and more in the hold cycles).
void ContinuousCollision::refitTree(const std::vector<Box>& boxes) {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, nodes_.size(), 512), [&](const auto& r) {
        for (std::size_t k = r.begin(); k < r.end(); ++k) {
            if (nodes_[k].left == 0) {
                refitLeaf(nodes_[k], boxes);
            }
        }
    });
    refitInnerNodes();
}

void ContinuousCollision::refitLeaf(Node& node, const std::vector<Box>& boxes) {
    Box b = boxes[node.begin];
    for (Index f = node.begin + 1; f < node.end; ++f) {
        b = merged(b, boxes[f]);
    }
    node.box = b;
    LeafBoxes& leaf = leafBoxes_[node.leaf];
    for (Index slot = 0; slot < kLeafSize; ++slot) {
        const Index f = node.begin + slot;
        for (int a = 0; a < 3; ++a) {
            leaf.lo[a][slot] =
                f < node.end ? boxes[f].lo[a] : std::numeric_limits<float>::infinity();
            leaf.hi[a][slot] =
                f < node.end ? boxes[f].hi[a] : -std::numeric_limits<float>::infinity();
        }
    }
}

void ContinuousCollision::refitInnerNodes() {
    for (std::size_t k = nodes_.size(); k-- > 0;) {
        Node& node = nodes_[k];
        if (node.left != 0) {
            node.box = merged(nodes_[node.left].box, nodes_[node.left + 1].box);
        }
    }
}

// The rounds change the boxes of the triangles around the vertices they move, about 900 of
// the dancer's 53,000 in each of its 12 rounds a substep: refitting every leaf each round was 2%
// of its step.
void ContinuousCollision::refitTreeAt(const std::vector<Index>& triangles,
                                      const std::vector<Box>& boxes) {
    if (4 * triangles.size() > local_.size()) {
        refitTree(boxes);
        return;
    }
    leavesRefitted_.begin(nodes_.size());
    for (Index f : triangles) {
        const Index k = leafOf_[f];
        if (leavesRefitted_.mark(k)) {
            refitLeaf(nodes_[k], boxes);
        }
    }
    refitInnerNodes();
}

unsigned ContinuousCollision::overlapLeaf(const Box& box, const LeafBoxes& leaf, Index count) {
    static_assert(kLeafSize % 4 == 0 && kLeafSize < 32,
                  "a leaf's boxes are tested by fours, its slots are bits");
#if defined(__SSE2__)
    __m128 lo[3], hi[3];
    for (int a = 0; a < 3; ++a) {
        lo[a] = _mm_set1_ps(box.lo[a]);
        hi[a] = _mm_set1_ps(box.hi[a]);
    }
    unsigned mask = 0;
    for (Index k = 0; k < count; k += 4) {
        __m128 in = _mm_cmple_ps(_mm_load_ps(leaf.lo[0] + k), hi[0]);
        in = _mm_and_ps(in, _mm_cmpge_ps(_mm_load_ps(leaf.hi[0] + k), lo[0]));
        for (int a = 1; a < 3; ++a) {
            in = _mm_and_ps(in, _mm_cmple_ps(_mm_load_ps(leaf.lo[a] + k), hi[a]));
            in = _mm_and_ps(in, _mm_cmpge_ps(_mm_load_ps(leaf.hi[a] + k), lo[a]));
        }
        mask |= unsigned(_mm_movemask_ps(in)) << k;
    }
    return mask & ((1u << count) - 1); // not the slots past the leaf's triangles
#else
    unsigned mask = 0;
    for (Index k = 0; k < count; ++k) {
        bool in = true;
        for (int a = 0; a < 3; ++a) {
            in = in && leaf.lo[a][k] <= box.hi[a] && box.lo[a] <= leaf.hi[a][k];
        }
        mask |= unsigned(in) << k;
    }
    return mask;
#endif
}

// The pairs of triangles that share no corner and may touch: those whose swept boxes, grown by
// half the margin, overlapped when the list was made (at xb_). A pair of triangles whose
// vertices all stay within half the margin of where they were then, less the surface's mean
// move since (a cloth falling as one keeps its list), is on it if its swept boxes overlap now.
// The triangles with a vertex farther (escaped_) find their pairs in the tree afresh.
// Returns false when the list should be made anew: none yet, or an eighth of the triangles
// escaped.
bool ContinuousCollision::candidatesHold() {
    const std::size_t n = global_.size(), m = local_.size();
    if (!built_ || xb_.size() != n) {
        return false;
    }
    Vec3 mean = Vec3::Zero();
    for (std::size_t i = 0; i < n; ++i) {
        mean += (x0_[i] - xb_[i]) + (x1_[i] - xb_[i]);
    }
    mean /= Real(2 * std::max<std::size_t>(n, 1));
    if (!mean.allFinite()) {
        return false;
    }
    const Real reach = margin_ / 2;
    std::vector<std::uint8_t> far(n);
    for (std::size_t i = 0; i < n; ++i) {
        far[i] = !((x0_[i] - xb_[i] - mean).cwiseAbs().maxCoeff() <= reach &&
                   (x1_[i] - xb_[i] - mean).cwiseAbs().maxCoeff() <= reach);
    }
    escaped_.assign(m, 0);
    escapedList_.clear();
    for (std::size_t f = 0; f < m; ++f) {
        const Triangle& t = local_[f];
        if (far[t[0]] | far[t[1]] | far[t[2]]) {
            escaped_[f] = 1;
            escapedList_.push_back(Index(f));
        }
    }
    return escapedList_.size() <= m / 8;
}

bool ContinuousCollision::listCandidates() {
    const std::size_t m = local_.size();
    // The margin: half an edge; none for the next 8 lists where a list with it held for no more
    // than its own substep (a surface that turns as it moves, as a skirt on a dancer does: a
    // mean move does not take out a turn, and the grown boxes' pairs cost more than the
    // searches they would save), twice as many each time that happens again in a row, up to
    // 512 (the dancer: 41 of its 371 lists had the margin with a pause of 8, and those cost
    // 4% of its continuous collision).
    if (margin_ > 0) {
        if (appliesSinceList_ <= 1) {
            listsWithoutMargin_ = marginPause_;
            marginPause_ = std::min(2 * marginPause_, kLongestMarginPause);
        } else {
            marginPause_ = kShortestMarginPause;
        }
    }
    margin_ = listsWithoutMargin_ > 0 ? 0 : meanEdge_ / 2;
    listsWithoutMargin_ = std::max(0, listsWithoutMargin_ - 1);
    appliesSinceList_ = 0;
    xb_ = x0_;
    escaped_.assign(m, 0);
    escapedList_.clear();
    // The tree's boxes: each triangle's swept box grown by half the margin (without one, the
    // swept boxes themselves, which the apply's searches read too).
    std::vector<Box> grownBoxes;
    if (margin_ > 0) {
        grownBoxes.resize(m);
        const float half = float(margin_ / 2) * (1 + 1e-6f);
        for (std::size_t f = 0; f < m; ++f) {
            grownBoxes[f] = boxes_[f];
            for (int k = 0; k < 3; ++k) {
                grownBoxes[f].lo[k] -= half;
                grownBoxes[f].hi[k] += half;
            }
        }
    }
    const std::vector<Box>& grown = margin_ > 0 ? grownBoxes : boxes_;
    refitTree(grown);
    // The tree against itself, its top levels as tasks.
    std::vector<std::pair<Index, Index>> tasks;
    {
        std::vector<std::pair<Index, int>> self;
        if (!nodes_.empty()) {
            self.push_back({0, 0});
        }
        while (!self.empty()) {
            const auto [node, depth] = self.back();
            self.pop_back();
            const Node& nd = nodes_[node];
            if (nd.left == 0 || depth == kTaskDepth) {
                tasks.push_back({node, node});
                continue;
            }
            tasks.push_back({nd.left, nd.left + 1});
            self.push_back({nd.left, depth + 1});
            self.push_back({nd.left + 1, depth + 1});
        }
    }
    tbb::enumerable_thread_specific<std::vector<std::pair<Index, Index>>> found;
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, tasks.size(), 1), [&](const auto& r) {
        auto& list = found.local();
        // A list for this substep alone (no margin) leaves out the pairs that stay apart along
        // an axis over its moves (nearly all: listed, each is tested again in the first round).
        // Such a pair cannot cross at the start either (markTangled), and a later apply keeps
        // this list only for triangles that have not moved from it since (candidatesHold).
        auto visit = [&](Index a, Index b) {
            if (!neighbours(a, b) && (margin_ > 0 || !stayApart(a, b))) {
                list.push_back({std::min(a, b), std::max(a, b)});
            }
        };
        for (std::size_t k = r.begin(); k < r.end(); ++k) {
            if (tasks[k].first == tasks[k].second) {
                selfPairs(tasks[k].first, grown, visit);
            } else {
                crossPairs(tasks[k].first, tasks[k].second, grown, visit);
            }
        }
    });
    candidates_.clear();
    for (const auto& list : found) {
        candidates_.insert(candidates_.end(), list.begin(), list.end());
    }
    built_ = true;
    return margin_ == 0;
}

template <class Visit> void ContinuousCollision::partners(Index f, Visit&& visit) const {
    Index stack[128];
    int top = 0;
    stack[top++] = 0;
    const Box& box = boxes_[f];
    const bool fixed = f >= fixedBegin_;
    while (top > 0) {
        const Node& n = nodes_[stack[--top]];
        if (!overlap(n.box, box) || (fixed && fixedNode(n))) {
            continue;
        }
        if (n.left == 0) {
            // The tree is refitted to boxes_ wherever it is searched.
            for (unsigned in = overlapLeaf(box, leafBoxes_[n.leaf], n.end - n.begin); in != 0;
                 in &= in - 1) {
                const Index g = n.begin + Index(std::countr_zero(in));
                if (g != f && !neighbours(f, g)) {
                    visit(g);
                }
            }
        } else {
            stack[top++] = n.left;
            stack[top++] = n.left + 1;
        }
    }
}

template <class Visit>
void ContinuousCollision::selfPairs(Index node, const std::vector<Box>& boxes,
                                    Visit&& visit) const {
    const Node& n = nodes_[node];
    if (fixedNode(n)) {
        return; // pairs that nothing could change
    }
    if (n.left == 0) {
        // leafBoxes_ hold `boxes` (refitTree): each triangle against the leaf's later ones.
        const LeafBoxes& leaf = leafBoxes_[n.leaf];
        for (Index a = n.begin; a < n.end; ++a) {
            const unsigned later = ~((2u << (a - n.begin)) - 1);
            for (unsigned in = overlapLeaf(boxes[a], leaf, n.end - n.begin) & later; in != 0;
                 in &= in - 1) {
                visit(a, n.begin + Index(std::countr_zero(in)));
            }
        }
        return;
    }
    selfPairs(n.left, boxes, visit);
    selfPairs(n.left + 1, boxes, visit);
    crossPairs(n.left, n.left + 1, boxes, visit);
}

template <class Visit>
void ContinuousCollision::crossPairs(Index p, Index q, const std::vector<Box>& boxes,
                                     Visit&& visit) const {
    const Node& a = nodes_[p];
    const Node& b = nodes_[q];
    if (!overlap(a.box, b.box) || (fixedNode(a) && fixedNode(b))) {
        return;
    }
    if (a.left == 0 && b.left == 0) {
        // leafBoxes_ hold `boxes` (refitTree): a's triangles that overlap b's box, each
        // against b's.
        const LeafBoxes& leaf = leafBoxes_[b.leaf];
        for (unsigned near = overlapLeaf(b.box, leafBoxes_[a.leaf], a.end - a.begin); near != 0;
             near &= near - 1) {
            const Index f = a.begin + Index(std::countr_zero(near));
            for (unsigned in = overlapLeaf(boxes[f], leaf, b.end - b.begin); in != 0;
                 in &= in - 1) {
                visit(f, b.begin + Index(std::countr_zero(in)));
            }
        }
        return;
    }
    // Down the larger (or the one that is not a leaf).
    if (b.left == 0 || (a.left != 0 && a.end - a.begin >= b.end - b.begin)) {
        crossPairs(a.left, q, boxes, visit);
        crossPairs(a.left + 1, q, boxes, visit);
    } else {
        crossPairs(p, b.left, boxes, visit);
        crossPairs(p, b.left + 1, boxes, visit);
    }
}

// Each zone's move (zoneMove_, by root), for the zones of `members` (zone_ made to point at
// the roots): its members' weighted mean wanted move, a translation, so nothing within it that
// began apart touches. Its pairs with primitives that cannot be held (the skin, pins) replace
// that: the zone starts from those primitives' mean move and is moved onto one half-space per
// pair (along the direction from the primitive's closest point to the zone's at the start, at
// least as far as any of the primitive's vertices, less half their distance then, down to
// kKept), so the two stay apart; cyclic projections. A pair with vertices that can and cannot
// be held on one side (a cloth triangle with a pinned corner) has no such direction: a zone
// with such pairs and no half-spaces moves by the mean move of those that cannot be held.
void ContinuousCollision::moveZones(std::vector<Index>& members, const std::vector<Real>* weights) {
    // In the particles' and the pairs' order, whatever the threads listed them in: the same
    // sums.
    std::sort(members.begin(), members.end());
    std::sort(fixedPairs_.begin(), fixedPairs_.end());
    fixedPairs_.erase(std::unique(fixedPairs_.begin(), fixedPairs_.end()), fixedPairs_.end());
    for (Index i : members) {
        Index r = i;
        while (zone_[r] != r) {
            r = zone_[r];
        }
        zone_[i] = r;
        zoneSum_[r].setZero();
        zoneWeight_[r] = 0;
        fixedSum_[r].setZero();
        fixedCount_[r] = 0;
    }
    for (Index i : members) {
        const Index r = zone_[i];
        const Real w = weights ? (*weights)[global_[i]] : 1.0;
        zoneSum_[r] += w * (wanted_[i] - x0_[i]);
        zoneWeight_[r] += w;
    }
    struct Bound {
        Index zone;
        Vec3 normal;
        Real least;   // the zone's move along normal is at least this
        Vec3 move;    // the mean move of the pair's vertices that cannot be held
        Real largest; // and the longest of their moves
    };
    std::vector<Bound> bounds;
    for (const std::array<Index, 5>& pair : fixedPairs_) {
        const bool edges = pair[4] != 0;
        const std::size_t sideA = edges ? 2 : 1; // vertices [0, sideA) and [sideA, 4)
        Index r = kNone;
        int fixedA = 0, fixedB = 0;
        for (std::size_t j = 0; j < 4; ++j) {
            const Index i = pair[j];
            if (!fixed_[i]) {
                r = r == kNone ? zone_[i] : r;
            } else {
                (j < sideA ? fixedA : fixedB) += 1;
            }
        }
        const int sizeA = int(sideA), sizeB = 4 - int(sideA);
        const bool aFixed = fixedA == sizeA && fixedB == 0;
        const bool bFixed = fixedB == sizeB && fixedA == 0;
        Vec3 pointA, pointB;
        if (edges) {
            Real u = 0, v = 0;
            closestSegmentParameters(x0_[pair[0]], x0_[pair[1]], x0_[pair[2]], x0_[pair[3]], u, v);
            pointA = x0_[pair[0]] + u * (x0_[pair[1]] - x0_[pair[0]]);
            pointB = x0_[pair[2]] + v * (x0_[pair[3]] - x0_[pair[2]]);
        } else {
            const Vec3 w =
                closestBarycentric(x0_[pair[0]], x0_[pair[1]], x0_[pair[2]], x0_[pair[3]]);
            pointA = x0_[pair[0]];
            pointB = w[0] * x0_[pair[1]] + w[1] * x0_[pair[2]] + w[2] * x0_[pair[3]];
        }
        Vec3 normal = aFixed ? Vec3(pointB - pointA) : Vec3(pointA - pointB);
        const Real length = normal.norm();
        if (!(aFixed || bFixed) || !(length > 0) || !normal.allFinite()) {
            for (std::size_t j = 0; j < 4; ++j) {
                if (fixed_[pair[j]]) {
                    fixedSum_[r] += wanted_[pair[j]] - x0_[pair[j]];
                    ++fixedCount_[r];
                }
            }
            continue;
        }
        normal /= length;
        Real least = -std::numeric_limits<Real>::infinity(), largest = 0;
        Vec3 move = Vec3::Zero();
        for (std::size_t j = 0; j < 4; ++j) {
            if (fixed_[pair[j]]) {
                const Vec3 d = wanted_[pair[j]] - x0_[pair[j]];
                least = std::max(least, d.dot(normal));
                largest = std::max(largest, d.norm());
                move += d;
            }
        }
        // Half the start's distance may close, down to kKept.
        least -= std::max(Real(0), length - std::max(length / 2, kKept));
        bounds.push_back({r, normal, least, move / Real(aFixed ? sizeA : sizeB), largest});
    }
    for (Index i : members) {
        const Index r = zone_[i];
        if (i != r) {
            continue;
        }
        if (fixedCount_[r] > 0) {
            zoneMove_[r] = fixedSum_[r] / Real(fixedCount_[r]);
        } else if (zoneWeight_[r] > 0 && zoneSum_[r].allFinite()) {
            zoneMove_[r] = zoneSum_[r] / zoneWeight_[r];
        } else {
            zoneMove_[r].setZero();
        }
    }
    std::stable_sort(bounds.begin(), bounds.end(),
                     [](const Bound& a, const Bound& b) { return a.zone < b.zone; });
    // Projections onto half-spaces that meet at a sharp angle approach their corner without
    // reaching it: each aims this far beyond, m.
    constexpr int kSweeps = 64;
    constexpr Real kBeyond = 1e-9;
    for (std::size_t begin = 0; begin < bounds.size();) {
        std::size_t end = begin;
        while (end < bounds.size() && bounds[end].zone == bounds[begin].zone) {
            ++end;
        }
        // The zone starts from the mean move of the surfaces that push it, not its own (a zone
        // sliding along a surface a hair away would graze it for more steps than the test
        // takes), and is moved onto their half-spaces. Surfaces that close in on it from both
        // sides (cloth caught in a fold of the skin) leave no move, or only one far beyond
        // theirs: then it keeps their mean move (its pairs stay touching and count as
        // unresolved).
        Vec3& move = zoneMove_[bounds[begin].zone];
        Real reach = 0;
        Vec3 mean = Vec3::Zero();
        for (std::size_t k = begin; k < end; ++k) {
            reach = std::max(reach, bounds[k].largest);
            mean += bounds[k].move;
        }
        mean /= Real(end - begin);
        move = mean;
        bool met = false;
        for (int sweep = 0; sweep < kSweeps && !met; ++sweep) {
            met = true;
            for (std::size_t k = begin; k < end; ++k) {
                const Real gap = bounds[k].least - move.dot(bounds[k].normal);
                if (gap > 0) {
                    move += (gap + kBeyond) * bounds[k].normal;
                    met = false;
                }
            }
        }
        if (!met || !(move.norm() <= 2 * reach)) {
            move = mean;
        }
        begin = end;
    }
}

// visit(state, a, b), with each thread's own state from `states`, for the pairs of triangles
// sharing no corner this apply tests: the listed pairs of triangles still within the list's
// reach, then the escaped triangles' pairs searched afresh (fresh_).
template <class States, class Visit>
void ContinuousCollision::forEachCandidate(States& states, std::size_t grain, Visit&& visit) const {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, candidates_.size(), grain),
                      [&](const auto& r) {
                          auto& state = states.local();
                          for (std::size_t k = r.begin(); k < r.end(); ++k) {
                              const auto [a, b] = candidates_[k];
                              if (!(escaped_[a] | escaped_[b])) {
                                  visit(state, a, b);
                              }
                          }
                      });
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, fresh_.size(), grain), [&](const auto& r) {
        auto& state = states.local();
        for (std::size_t k = r.begin(); k < r.end(); ++k) {
            visit(state, fresh_[k].first, fresh_[k].second);
        }
    });
}

// Marks the vertices of every pair of candidate triangles (sharing no corner)
// that cross at the start.
void ContinuousCollision::markTangled() {
    tangled_.assign(global_.size(), 0);
    tangledTriangles_ = 0;
    startBoxes_.resize(local_.size());
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, local_.size(), 4096), [&](const auto& r) {
        for (std::size_t f = r.begin(); f < r.end(); ++f) {
            const Triangle& t = local_[f];
            startBoxes_[f] = outwardBox(x0_[t[0]].cwiseMin(x0_[t[1]]).cwiseMin(x0_[t[2]]),
                                        x0_[t[0]].cwiseMax(x0_[t[1]]).cwiseMax(x0_[t[2]]));
        }
    });
    tbb::enumerable_thread_specific<std::vector<Index>> found;
    auto check = [&](std::vector<Index>& list, Index a, Index b) {
        if (fixedTriangle_[a] & fixedTriangle_[b]) {
            return;
        }
        if (!overlap(startBoxes_[a], startBoxes_[b])) { // crossing triangles' boxes overlap
            return;
        }
        const Triangle& A = local_[a];
        const Triangle& B = local_[b];
        if (trianglesCross(x0_[A[0]], x0_[A[1]], x0_[A[2]], x0_[B[0]], x0_[B[1]], x0_[B[2]])) {
            list.insert(list.end(), {A[0], A[1], A[2], B[0], B[1], B[2]});
        }
    };
    forEachCandidate(found, 2048, check);
    tangledPairs_.clear();
    for (const std::vector<Index>& list : found) {
        tangledTriangles_ += list.size() / 3;
        for (Index i : list) {
            tangled_[i] = 1;
        }
        for (std::size_t k = 0; k + 5 < list.size(); k += 6) {
            for (int a = 0; a < 3; ++a) {
                for (int b = 3; b < 6; ++b) {
                    tangledPairs_.push_back(
                        vertexPair(list[k + std::size_t(a)], list[k + std::size_t(b)]));
                }
            }
        }
    }
    std::sort(tangledPairs_.begin(), tangledPairs_.end());
    tangledPairs_.erase(std::unique(tangledPairs_.begin(), tangledPairs_.end()),
                        tangledPairs_.end());
}

void ContinuousCollision::buildTies() {
    tiesBuilt_ = true;
    tieOf_.clear();
    tieLocal_.clear();
    if (!ties_) {
        return; // findInvertedTies reads nothing else
    }
    tieStart_.assign(global_.size() + 1, 0);
    for (const Tetrahedron& t : *ties_) {
        std::array<Index, 4> corners;
        bool local = true;
        for (int c = 0; c < 4 && local; ++c) {
            const Index g = t[std::size_t(c)];
            corners[std::size_t(c)] = g <= mostParticle_ ? localOf_[g] : kNone;
            local = corners[std::size_t(c)] != kNone;
        }
        if (local) {
            tieLocal_.push_back(corners);
            for (Index v : corners) {
                ++tieStart_[v + 1];
            }
        }
    }
    for (std::size_t v = 0; v < global_.size(); ++v) {
        tieStart_[v + 1] += tieStart_[v];
    }
    tieOf_.resize(tieStart_.back());
    std::vector<std::uint32_t> fill(tieStart_.begin(), tieStart_.end() - 1);
    for (std::size_t k = 0; k < tieLocal_.size(); ++k) {
        for (Index v : tieLocal_[k]) {
            tieOf_[fill[v]++] = std::uint32_t(k);
        }
    }
}

void ContinuousCollision::findInvertedTies(const std::vector<Index>& vertices,
                                           std::vector<std::uint32_t>& out) {
    out.clear();
    if (tieLocal_.empty()) {
        return;
    }
    tieSeen_.begin(tieLocal_.size());
    for (Index v : vertices) {
        for (std::uint32_t i = tieStart_[v]; i < tieStart_[v + 1]; ++i) {
            const std::uint32_t k = tieOf_[i];
            if (!tieSeen_.mark(k)) {
                continue;
            }
            const std::array<Index, 4>& t = tieLocal_[k];
            // Only where every corner is held (in a zone, or by an earlier apply): the solver's
            // mending moves the others.
            if (!((zoned_[t[0]] | heldBefore_[t[0]]) & (zoned_[t[1]] | heldBefore_[t[1]]) &
                  (zoned_[t[2]] | heldBefore_[t[2]]) & (zoned_[t[3]] | heldBefore_[t[3]]))) {
                continue;
            }
            // Inside out beyond rounding as the air counts it (a volume below -1e-9 of the
            // longest edge cubed), and not at the start (that the zones cannot keep).
            const Real after = signedVolume(x1_[t[0]], x1_[t[1]], x1_[t[2]], x1_[t[3]]);
            if (!(after < 0) || !(signedVolume(x0_[t[0]], x0_[t[1]], x0_[t[2]], x0_[t[3]]) > 0)) {
                continue;
            }
            Real longest = 0;
            for (int a = 0; a < 4; ++a) {
                for (int b = a + 1; b < 4; ++b) {
                    longest = std::max(
                        longest, (x1_[t[std::size_t(a)]] - x1_[t[std::size_t(b)]]).squaredNorm());
                }
            }
            if (after < -1e-9 * longest * std::sqrt(longest)) {
                out.push_back(k);
            }
        }
    }
    std::sort(out.begin(), out.end());
}

ContinuousCollisionStatistics ContinuousCollision::apply(const std::vector<Vec3>& x0,
                                                         std::vector<Vec3>& x1,
                                                         const std::vector<std::uint8_t>& holdable,
                                                         const std::vector<Real>* weights,
                                                         const std::vector<Index>* checkFirst) {
    const auto began = std::chrono::steady_clock::now();
    ContinuousCollisionStatistics stats;
    held_.assign(x1.size(), 0);
    const std::size_t m = triangles_.size();
    if (m == 0 || x0.size() <= mostParticle_ || x1.size() <= mostParticle_ ||
        holdable.size() <= mostParticle_) {
        lastRanThrough_ = false;
        return stats;
    }
    // The triangles whose corners cannot be held: the tree keeps them apart (order).
    bool classesChanged = orderedFixed_.size() != m;
    orderedFixed_.resize(m);
    for (std::size_t f = 0; f < m; ++f) {
        const Triangle& t = triangles_[f];
        const std::uint8_t fixed = !holdable[t[0]] & !holdable[t[1]] & !holdable[t[2]];
        classesChanged |= orderedFixed_[f] != fixed;
        orderedFixed_[f] = fixed;
    }
    if (!ordered_ || classesChanged) {
        order(x0);
    }
    refit(x0, x1);
    // Particles that cannot be held (pins, a character's skin) move as they are told: a pair of
    // them alone is not followed (nothing could change it: a skin folding through itself).
    bool sameFixed = fixed_.size() == global_.size();
    fixed_.resize(global_.size());
    for (std::size_t i = 0; i < fixed_.size(); ++i) {
        const std::uint8_t fixed = !holdable[global_[i]];
        sameFixed = sameFixed && fixed_[i] == fixed;
        fixed_[i] = fixed;
    }
    fixedTriangle_.resize(m);
    for (std::size_t f = 0; f < m; ++f) {
        const Triangle& t = local_[f];
        fixedTriangle_[f] = fixed_[t[0]] & fixed_[t[1]] & fixed_[t[2]];
    }
    // An apply from the last one's start (the solver's next hold cycle, after mending the air)
    // tests only the pairs of the vertices whose end moved since the last apply ended, or that
    // touched in it: every other pair was tested at these positions then and did not touch
    // (after the last round that moved one of its vertices), so it finds the same pairs a
    // whole test would.
    const bool incremental = startAsBefore_ && sameFixed && lastRanThrough_;
    lastRanThrough_ = false;
    std::vector<Index> seeds;
    bool treeOnSweptBoxes = false; // the tree refitted to boxes_ already
    if (incremental) {
        for (std::size_t i = 0; i < global_.size(); ++i) {
            if (endChanged_[i] | touched_[i]) {
                seeds.push_back(Index(i));
            }
        }
    } else {
        ++appliesSinceList_;
        if (!candidatesHold()) {
            treeOnSweptBoxes = listCandidates();
            stats.lists = 1;
        }
    }
    touched_.assign(global_.size(), 0);
    if (!treeOnSweptBoxes) {
        refitTree(boxes_); // for the fresh searches: the swept boxes of this substep
    }
    struct Local {
        std::vector<Index> pairsTouching;
        std::size_t pairs = 0, touchingPairs = 0;
    };
    zone_.resize(global_.size());
    for (std::size_t i = 0; i < zone_.size(); ++i) {
        zone_[i] = Index(i);
    }
    zoned_.assign(global_.size(), 0);
    zoneSum_.resize(global_.size());
    zoneWeight_.resize(global_.size());
    fixedSum_.resize(global_.size());
    zoneMove_.resize(global_.size());
    fixedCount_.resize(global_.size());
    std::vector<Index> members; // the zones' particles
    fixedPairs_.clear();
    wanted_ = x1_;
    tbb::enumerable_thread_specific<Local> locals;
    const std::vector<Vec3>& X0 = x0_;
    const std::vector<Vec3>& X1 = x1_;
    // A touching pair as five numbers: its four vertices and 0 for a vertex and a triangle
    // (p, t0, t1, t2), 1 for two edges (e0, e1, f0, f1).
    auto touched = [&](Local& local, Index p, Index q, Index u, Index v, Index edges) {
        ++local.touchingPairs;
        local.pairsTouching.insert(local.pairsTouching.end(), {p, q, u, v, edges});
    };
    auto vertexTriangle = [&](Local& local, Index p, Index f) {
        const Triangle& t = local_[f];
        if (!(moves_[p] | moves_[t[0]] | moves_[t[1]] | moves_[t[2]]) ||
            (fixed_[p] & fixedTriangle_[f]) ||
            ((tangled_[p] & (tangled_[t[0]] | tangled_[t[1]] | tangled_[t[2]])) &&
             letGoVertexTriangle(p, t[0], t[1], t[2]))) {
            return;
        }
        // Too far to touch for the moves: the largest, or the vertex's against the triangle's
        // (its move from their mean, and their farthest from that).
        const Sphere& sphere = spheres_[f];
        const Real gap = (X0[p] - sphere.centre).norm() - sphere.radius;
        if (gap > travel_[p] + sphere.travel + kTouch ||
            gap > (X1[p] - X0[p] - sphere.move).norm() + sphere.spread + kTouch ||
            !overlap(vertexBoxes_[p], boxes_[f])) {
            return;
        }
        ++local.pairs;
        if (vertexTriangleTouch(X0[p], X1[p], X0[t[0]], X1[t[0]], X0[t[1]], X1[t[1]], X0[t[2]],
                                X1[t[2]])) {
            touched(local, p, t[0], t[1], t[2], 0);
        }
    };
    auto edgeEdge = [&](Local& local, Index e0, Index e1, Index f0, Index f1) {
        if (!(moves_[e0] | moves_[e1] | moves_[f0] | moves_[f1]) ||
            (fixed_[e0] & fixed_[e1] & fixed_[f0] & fixed_[f1]) ||
            (((tangled_[e0] | tangled_[e1]) & (tangled_[f0] | tangled_[f1])) &&
             letGoEdges(e0, e1, f0, f1))) {
            return;
        }
        // The segments' spheres apart by more than their moves close: the largest moves, or
        // the edges' mean moves against each other and each one's ends' from its mean.
        const Real gap = (X0[e0] + X0[e1] - X0[f0] - X0[f1]).norm() / 2 -
                         (X0[e0] - X0[e1]).norm() / 2 - (X0[f0] - X0[f1]).norm() / 2;
        const Vec3 da = X1[e0] - X0[e0], db = X1[e1] - X0[e1], dc = X1[f0] - X0[f0],
                   dd = X1[f1] - X0[f1];
        if (gap >
                std::max(travel_[e0], travel_[e1]) + std::max(travel_[f0], travel_[f1]) + kTouch ||
            gap > ((da + db - dc - dd).norm() + (da - db).norm() + (dc - dd).norm()) / 2 + kTouch ||
            !overlap(merged(vertexBoxes_[e0], vertexBoxes_[e1]),
                     merged(vertexBoxes_[f0], vertexBoxes_[f1]))) {
            return;
        }
        ++local.pairs;
        if (edgeEdgeTouch(X0[e0], X1[e0], X0[e1], X1[e1], X0[f0], X1[f0], X0[f1], X1[f1])) {
            touched(local, e0, e1, f0, f1, 1);
        }
    };
    // Whether both triangles' corners all move with one zone, by its move from the start (the
    // zones' rounds: a translation, within which nothing that began apart can touch).
    auto movedAsOneZone = [&](Index a, Index b) {
        const Triangle& A = local_[a];
        const Triangle& B = local_[b];
        if (!(zoned_[A[0]] & zoned_[A[1]] & zoned_[A[2]] & zoned_[B[0]] & zoned_[B[1]] &
              zoned_[B[2]])) {
            return false;
        }
        const Index r = zone_[A[0]];
        for (const Triangle* t : {&A, &B}) {
            for (Index v : *t) {
                if (zone_[v] != r || x1_[v] != x0_[v] + zoneMove_[r]) {
                    return false;
                }
            }
        }
        return true;
    };
    // Triangles a and b's pairs of primitives; unless they share a corner, only when no fixed
    // axis keeps the two apart.
    auto testPair = [&](Local& local, Index a, Index b, bool sharingACorner) {
        if ((fixedTriangle_[a] & fixedTriangle_[b]) || !overlap(boxes_[a], boxes_[b]) ||
            movedAsOneZone(a, b)) {
            return;
        }
        if (!sharingACorner && stayApart(a, b)) {
            return;
        }
        forEachPrimitivePair(
            a, b, [&](Index p, Index f) { vertexTriangle(local, p, f); },
            [&](Index e0, Index e1, Index f0, Index f1) { edgeEdge(local, e0, e1, f0, f1); });
    };
    // The escaped triangles' partners, searched afresh.
    fresh_.clear();
    tbb::enumerable_thread_specific<std::vector<std::pair<Index, Index>>> freshPairs;
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, incremental ? 0 : escapedList_.size(), 16),
                      [&](const auto& r) {
                          auto& pairs = freshPairs.local();
                          for (std::size_t k = r.begin(); k < r.end(); ++k) {
                              const Index a = escapedList_[k];
                              partners(a, [&](Index b) {
                                  if (!escaped_[b] || a < b) {
                                      pairs.emplace_back(std::min(a, b), std::max(a, b));
                                  }
                              });
                          }
                      });
    for (const auto& pairs : freshPairs) {
        fresh_.insert(fresh_.end(), pairs.begin(), pairs.end());
    }
    // Triangles that already cross at the start are let go: their particles that can be held
    // are followed against nothing this substep, so the contacts, the air and the constraints
    // can take them apart (following them would keep them crossed).
    // Only where the start can cross: not the same start as the last apply's (whose marks
    // stand), nor the end of an apply that started uncrossed and left nothing touching.
    if (!tangledKnown_ || !startAsBefore_) {
        if (tangledKnown_ && startAtLastEnd_ && endUncrossed_) {
            tangled_.assign(global_.size(), 0);
            tangledTriangles_ = 0;
            tangledPairs_.clear();
        } else {
            markTangled();
        }
    }
    tangledKnown_ = true;
    stats.tangled = tangledTriangles_ / 2;
    // The triangles of `vertices` (just moved), with their neighbours and candidates: each
    // pair once, by its lower triangle when both are queried.
    std::vector<Index> query;
    queried_.assign(m, 0);
    auto testAround = [&](const std::vector<Index>& vertices) {
        for (Index i : vertices) {
            for (Index k = vertexTriangleStart_[i]; k < vertexTriangleStart_[i + 1]; ++k) {
                const Index f = vertexTriangles_[k];
                if (!queried_[f]) {
                    queried_[f] = 1;
                    query.push_back(f);
                }
            }
        }
        for (Index f : query) {
            const Triangle& t = local_[f];
            spheres_[f] = sphereOf(f);
            boxes_[f] = merged(merged(vertexBoxes_[t[0]], vertexBoxes_[t[1]]), vertexBoxes_[t[2]]);
        }
        refitTreeAt(query, boxes_); // a zone's move may leave its particles' first boxes
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, query.size(), 16), [&](const auto& r) {
            Local& local = locals.local();
            for (std::size_t k = r.begin(); k < r.end(); ++k) {
                const Index a = query[k];
                auto partner = [&](Index b, bool sharingACorner) {
                    if (!queried_[b] || a < b) {
                        testPair(local, std::min(a, b), std::max(a, b), sharingACorner);
                    }
                };
                for (Index j = adjacentStart_[a]; j < adjacentStart_[a + 1]; ++j) {
                    partner(adjacentOf_[j], true);
                }
                partners(a, [&](Index b) { partner(b, false); });
            }
        });
    };
    if (incremental) {
        testAround(seeds);
    } else {
        // The first round: the neighbours' primitives, then the other triangles' candidates.
        // The neighbours' pairs, most of them far apart for their moves: a first bound in floats
        // (rounded by at most floatSlack_) before anything else is read.
        const float slack = floatSlack_ + float(kTouch);
        tbb::parallel_for(
            tbb::blocked_range<std::size_t>(0, adjacentVF_.size(), 4096), [&](const auto& r) {
                Local& local = locals.local();
                for (std::size_t k = r.begin(); k < r.end(); ++k) {
                    const Index p = adjacentVF_[k][0], f = adjacentVF_[k][1];
                    const Packed& v = packed_[p];
                    const Packed& c = packedSpheres_[f];
                    const float dx = v.x - c.x, dy = v.y - c.y, dz = v.z - c.z;
                    const float d2 = dx * dx + dy * dy + dz * dz;
                    const float largest = c.w + v.w + slack;
                    if (d2 > largest * largest) {
                        continue;
                    }
                    // The vertex's move against the triangle's: its move from their mean move,
                    // and their largest from that (read only here: a still sheet needs none).
                    const Packed& mv = packedMoves_[p];
                    const Packed& mc = packedSphereMoves_[f];
                    const float mx = mv.x - mc.x, my = mv.y - mc.y, mz = mv.z - mc.z;
                    const float relative = mc.w + std::sqrt(mx * mx + my * my + mz * mz) + slack;
                    if (d2 > relative * relative) {
                        continue;
                    }
                    vertexTriangle(local, p, f);
                }
            });
        tbb::parallel_for(
            tbb::blocked_range<std::size_t>(0, adjacentEE_.size(), 4096), [&](const auto& r) {
                Local& local = locals.local();
                for (std::size_t k = r.begin(); k < r.end(); ++k) {
                    const auto& e = adjacentEE_[k];
                    const Packed& a = packed_[e[0]];
                    const Packed& b = packed_[e[1]];
                    const Packed& c = packed_[e[2]];
                    const Packed& d = packed_[e[3]];
                    // Twice the distance of the midpoints, against the sum of the
                    // lengths and twice the moves.
                    const float dx = a.x + b.x - c.x - d.x, dy = a.y + b.y - c.y - d.y,
                                dz = a.z + b.z - c.z - d.z;
                    auto length = [](const Packed& p, const Packed& q) {
                        return std::sqrt((p.x - q.x) * (p.x - q.x) + (p.y - q.y) * (p.y - q.y) +
                                         (p.z - q.z) * (p.z - q.z));
                    };
                    // Twice the moves: the largest, then the edges' mean moves apart and each
                    // one's ends' moves apart.
                    const float d2 = dx * dx + dy * dy + dz * dz;
                    const float lengths = length(a, b) + length(c, d) + 4 * slack;
                    const float largest = lengths + 2 * (std::max(a.w, b.w) + std::max(c.w, d.w));
                    if (d2 > largest * largest) {
                        continue;
                    }
                    const Packed& ma = packedMoves_[e[0]];
                    const Packed& mb = packedMoves_[e[1]];
                    const Packed& mc = packedMoves_[e[2]];
                    const Packed& md = packedMoves_[e[3]];
                    const float relative =
                        lengths +
                        std::sqrt((ma.x + mb.x - mc.x - md.x) * (ma.x + mb.x - mc.x - md.x) +
                                  (ma.y + mb.y - mc.y - md.y) * (ma.y + mb.y - mc.y - md.y) +
                                  (ma.z + mb.z - mc.z - md.z) * (ma.z + mb.z - mc.z - md.z)) +
                        length(ma, mb) + length(mc, md);
                    if (d2 > relative * relative) {
                        continue;
                    }
                    edgeEdge(local, e[0], e[1], e[2], e[3]);
                }
            });
        forEachCandidate(locals, 1024,
                         [&](Local& local, Index a, Index b) { testPair(local, a, b, false); });
    }
    std::vector<Index> moved;
    std::vector<Index> touchingNow;     // this round's touching pairs, five numbers each
    std::vector<std::uint32_t> tiesNow; // the ties the moves so far turn inside out
    if (!tiesBuilt_) {
        buildTies();
    }
    heldBefore_.assign(tieLocal_.empty() ? 0 : global_.size(), 0);
    if (checkFirst && !tieLocal_.empty()) {
        std::vector<Index> local;
        for (Index g : *checkFirst) {
            const Index i = g <= mostParticle_ ? localOf_[g] : kNone;
            if (i != kNone && !fixed_[i] && !heldBefore_[i]) {
                local.push_back(i);
                heldBefore_[i] = 1;
            }
        }
        findInvertedTies(local, tiesNow);
    }
    // Particle i joins the zones' members and, unless `to` is kNone, to's zone (union by lower
    // root: the same zones whatever order the threads listed the pairs in); whether anything
    // changed.
    auto join = [&](Index i, Index to) {
        bool joined = false;
        if (!zoned_[i]) {
            zoned_[i] = 1;
            members.push_back(i);
            joined = true;
        }
        if (to == kNone) {
            return joined;
        }
        Index ra = to, rb = i;
        while (zone_[ra] != ra) {
            ra = zone_[ra];
        }
        while (zone_[rb] != rb) {
            rb = zone_[rb];
        }
        if (ra != rb) {
            zone_[std::max(ra, rb)] = std::min(ra, rb);
            joined = true;
        }
        return joined;
    };
    bool failSafe = false;
    while (true) {
        ++stats.rounds;
        touchingNow.clear();
        for (Local& l : locals) {
            touchingNow.insert(touchingNow.end(), l.pairsTouching.begin(), l.pairsTouching.end());
            l.pairsTouching.clear();
            stats.pairs += l.pairs;
            stats.touching += l.touchingPairs;
            l.pairs = l.touchingPairs = 0;
        }
        for (Index f : query) {
            queried_[f] = 0;
        }
        query.clear();
        if (touchingNow.empty() && tiesNow.empty()) {
            break;
        }
        // The particles of a touching pair that can be held join one zone (union by lower
        // root: the same zones whatever order the threads listed the pairs in); those that
        // cannot (the skin, pins) join none, so a zone stays where the surfaces touch, and the
        // pair is kept to bound its zone's move.
        bool changed = false;
        for (std::size_t k = 0; k + 4 < touchingNow.size(); k += 5) {
            const std::array<Index, 5> pair{touchingNow[k], touchingNow[k + 1], touchingNow[k + 2],
                                            touchingNow[k + 3], touchingNow[k + 4]};
            Index first = kNone;
            bool fixedMember = false;
            for (int j = 0; j < 4; ++j) {
                const Index i = pair[std::size_t(j)];
                touched_[i] = 1;
                if (fixed_[i]) {
                    fixedMember = true;
                    continue;
                }
                changed |= join(i, first);
                first = first == kNone ? i : first;
            }
            if (fixedMember) {
                fixedPairs_.push_back(pair);
                changed = true;
            }
        }
        // A tie's corners (none fixed) join one zone: moved by one translation, it keeps the
        // volume it started with.
        stats.tied += tiesNow.size();
        for (std::uint32_t k : tiesNow) {
            const std::array<Index, 4>& t = tieLocal_[k];
            for (Index i : t) {
                touched_[i] = 1;
                changed |= join(i, t[0]);
            }
        }
        moved.clear();
        auto moveTo = [&](Index i, const Vec3& target) {
            moved.push_back(i);
            x1_[i] = target;
            x1[global_[i]] = target;
            held_[global_[i]] = 1;
            stale_[i] = 1; // its floats and its triangles' spheres are made again at the next refit
            moves_[i] = target != x0_[i];
            travel_[i] = (target - x0_[i]).norm();
            vertexBoxes_[i] = outwardBox(x0_[i].cwiseMin(target).array() - kTouch,
                                         x0_[i].cwiseMax(target).array() + kTouch);
        };
        if (!failSafe && changed && stats.rounds < kMostZoneRounds) {
            moveZones(members, weights);
            for (Index i : members) {
                const Vec3 target = x0_[i] + zoneMove_[zone_[i]];
                if (target.allFinite() && target != x1_[i]) {
                    moveTo(i, target);
                }
            }
        }
        if (moved.empty()) {
            // The fail-safe, once the zones can do no more (or after kMostZoneRounds): the
            // particles of pairs still touching stay where they started, but for pairs a
            // particle that cannot be held moves in, which the start would not keep apart.
            failSafe = true;
            for (std::size_t k = 0; k + 4 < touchingNow.size(); k += 5) {
                bool pushed = false;
                for (int j = 0; j < 4; ++j) {
                    const Index i = touchingNow[k + std::size_t(j)];
                    pushed |= fixed_[i] && moves_[i];
                }
                // A pair already touching at the start is not kept apart by it either.
                const Index* q = &touchingNow[k];
                const Real start =
                    q[4] ? segmentDistance(x0_[q[0]], x0_[q[1]], x0_[q[2]], x0_[q[3]])
                         : triangleDistance(x0_[q[0]], x0_[q[1]], x0_[q[2]], x0_[q[3]]);
                pushed |= !(start > kTouch);
                for (int j = 0; j < 4 && !pushed; ++j) {
                    const Index i = touchingNow[k + std::size_t(j)];
                    if (!fixed_[i] && x1_[i] != x0_[i]) {
                        moveTo(i, x0_[i]);
                    }
                }
            }
            if (moved.empty()) {
                stats.unresolved = touchingNow.size() / 5;
                break;
            }
        }
        if (!tieLocal_.empty()) {
            findInvertedTies(moved, tiesNow);
        }
        testAround(moved);
    }
    for (Index g : global_) {
        stats.held += held_[g];
    }
    endUncrossed_ = tangledTriangles_ == 0 && stats.unresolved == 0;
    lastRanThrough_ = true;
    stats.milliseconds =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
    return stats;
}

} // namespace pbd
