#include "core/solver/SelfCollision.h"

#include "core/base/InstructionSets.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <immintrin.h>
#include <limits>

namespace pbd {

Vec3 closestBarycentric(const Vec3& q, const Vec3& a, const Vec3& b, const Vec3& c) {
    // Regions of Ericson's closest-point test (Real-Time Collision Detection §5.1.5).
    const Vec3 ab = b - a, ac = c - a, aq = q - a;
    const Real d1 = ab.dot(aq), d2 = ac.dot(aq);
    if (d1 <= 0 && d2 <= 0) {
        return {1, 0, 0};
    }
    const Vec3 bq = q - b;
    const Real d3 = ab.dot(bq), d4 = ac.dot(bq);
    if (d3 >= 0 && d4 <= d3) {
        return {0, 1, 0};
    }
    const Real vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0) {
        const Real v = d1 / (d1 - d3);
        return {1 - v, v, 0};
    }
    const Vec3 cq = q - c;
    const Real d5 = ab.dot(cq), d6 = ac.dot(cq);
    if (d6 >= 0 && d5 <= d6) {
        return {0, 0, 1};
    }
    const Real vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0) {
        const Real w = d2 / (d2 - d6);
        return {1 - w, 0, w};
    }
    const Real va = d3 * d6 - d5 * d4;
    if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
        const Real w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return {0, 1 - w, w};
    }
    const Real denom = 1 / (va + vb + vc);
    const Real v = vb * denom, w = vc * denom;
    return {1 - v - w, v, w};
}

namespace {

// How far the search reaches, in thicknesses: a pair is a contact when the particle ends within
// this of the triangle (or crosses it). 4 kept `sample`'s cloth from passing through itself (3
// pairs of its triangles crossing after 120 steps against 63) but made cloth-xl, whose
// thickness is half its edge, blow up within 100 steps: the reach then takes in the two-ring
// of a bent sheet.
constexpr Real kReach = 2;

PBD_KERNEL_INLINE std::uint64_t cellKey(std::int64_t i, std::int64_t j, std::int64_t k) {
    // Spatial hash of Teschner et al. 2003, as PBD §4.3 suggests.
    return static_cast<std::uint64_t>((i * 73856093) ^ (j * 19349663) ^ (k * 83492791));
}

} // namespace

std::vector<SelfContact> findSelfContacts(const std::vector<Triangle>& triangles,
                                          const std::vector<Vec3>& x, const std::vector<Vec3>& p,
                                          Real thickness) {
    SelfCollisionWorkspace workspace;
    return findSelfContacts(triangles, x, p, thickness, workspace);
}

namespace {

// The cells of a uniform grid (edge `cell`) a box overlaps, as hash buckets.
struct GridCells {
    Real cell;
    std::uint64_t mask;
    PBD_KERNEL_INLINE Eigen::Vector3<std::int64_t> of(const Vec3& v) const {
        return {static_cast<std::int64_t>(std::floor(v.x() / cell)),
                static_cast<std::int64_t>(std::floor(v.y() / cell)),
                static_cast<std::int64_t>(std::floor(v.z() / cell))};
    }
    // Blocks of 4 x 4 x 4 cells are hashed, and a block's cells are its 64 buckets in a row:
    // cells side by side are side by side in memory (a query reads a few runs of buckets, not a
    // bucket anywhere for each cell), and the cells of a run along z are consecutive buckets.
    PBD_KERNEL_INLINE std::uint64_t bucket(std::int64_t i, std::int64_t j, std::int64_t k) const {
        const std::uint64_t inBlock =
            static_cast<std::uint64_t>(((i & 3) << 4) | ((j & 3) << 2) | (k & 3));
        return ((cellKey(i >> 2, j >> 2, k >> 2) << 6) | inBlock) & mask;
    }
    template <class F> PBD_KERNEL_INLINE void forEach(const Bounds& b, F&& f) const {
        const auto lo = of(b.min);
        const auto hi = of(b.max);
        for (auto i = lo.x(); i <= hi.x(); ++i) {
            for (auto j = lo.y(); j <= hi.y(); ++j) {
                for (auto k = lo.z(); k <= hi.z(); ++k) {
                    f(bucket(i, j, k));
                }
            }
        }
    }
    // The same cells as runs of consecutive buckets, f(first, last) with last included.
    template <class F> PBD_KERNEL_INLINE void forEachRun(const Bounds& b, F&& f) const {
        const auto lo = of(b.min);
        const auto hi = of(b.max);
        for (auto i = lo.x(); i <= hi.x(); ++i) {
            for (auto j = lo.y(); j <= hi.y(); ++j) {
                for (auto k = lo.z(); k <= hi.z();) {
                    const auto end = std::min(hi.z(), (k | 3)); // the run's last cell in its block
                    f(bucket(i, j, k), bucket(i, j, end));
                    k = end + 1;
                }
            }
        }
    }
    // The cells a box spans, in floating point: finite for any box (a far or non-finite one
    // gives a huge number or NaN, never an overflowed integer). `of` and `forEach` only see
    // boxes this has bounded.
    PBD_KERNEL_INLINE double span(const Bounds& b) const {
        double cells = 1;
        for (int k = 0; k < 3; ++k) {
            cells *= std::floor(b.max[k] / cell) - std::floor(b.min[k] / cell) + 1;
        }
        return cells;
    }
    PBD_KERNEL_INLINE bool fits(const Bounds& b, double most) const {
        return span(b) <= most;
    } // false for NaN
};

PBD_KERNEL_INLINE bool finiteBox(const Bounds& b) {
    return b.min.allFinite() && b.max.allFinite();
}

// A box in floats that holds the box in doubles: each bound moved outwards by four units in
// its last place of the float (a float is within half a unit of the double) and by the
// smallest normal float (bounds near zero), without a library call; a bound beyond the floats'
// range becomes the largest float or infinity on its own side.
struct FloatBox {
    float bound[6]; // lower x, y, z, upper x, y, z
    PBD_KERNEL_INLINE explicit FloatBox(const Bounds& b) {
        constexpr double kMost = std::numeric_limits<float>::max();
        constexpr float kUlps = 0x1p-21f, kTiny = std::numeric_limits<float>::min();
        for (int k = 0; k < 3; ++k) {
            const float lo = float(std::clamp(b.min[k], -kMost, kMost));
            const float hi = float(std::clamp(b.max[k], -kMost, kMost));
            bound[k] = lo - (std::abs(lo) * kUlps + kTiny);
            bound[3 + k] = hi + (std::abs(hi) * kUlps + kTiny);
        }
    }
};

PBD_KERNEL_INLINE Bounds sweptBox(const Vec3& x, const Vec3& p) {
    Bounds b;
    b.add(x);
    b.add(p);
    return b;
}

PBD_KERNEL_INLINE Bounds grownBox(const Triangle& triangle, const std::vector<Vec3>& x,
                                  const std::vector<Vec3>& p, Real thickness) {
    Bounds b;
    for (Index v : triangle) {
        b.add(x[v]);
        b.add(p[v]);
    }
    b.min -= Vec3::Constant(kReach / 2 * thickness);
    b.max += Vec3::Constant(kReach / 2 * thickness);
    return b;
}

// The surface's vertices, sorted: listed again only when the triangles changed (tearing, a new
// scene); sorting cloth-xl's 773,000 corners every substep cost 5% of its step.
void listVertices(const std::vector<Triangle>& triangles, SelfCollisionWorkspace& ws) {
    if (ws.verticesOf == triangles && !ws.vertices.empty()) {
        return;
    }
    std::vector<Index>& vertices = ws.vertices;
    vertices.clear();
    for (const Triangle& t : triangles) {
        vertices.insert(vertices.end(), t.begin(), t.end());
    }
    std::sort(vertices.begin(), vertices.end());
    vertices.erase(std::unique(vertices.begin(), vertices.end()), vertices.end());
    ws.verticesOf = triangles;
}

// The hash table of Teschner et al. as a counting sort over the vertices' swept boxes: a bucket
// per hashed cell, its vertices listed contiguously, in the order of `vertices`. Built in parts
// over `vertices`: each counts its entries per bucket, the buckets are placed with the parts'
// entries in part order, then each part writes its own. The work is compiled twice in a
// portable build (core/base/InstructionSets.h): the cells' floor() is a library call without
// SSE4.1.

PBD_KERNEL_INLINE bool hashable(const Bounds& b, const GridCells& grid) {
    return finiteBox(b) && grid.fits(b, kMaxVertexCells);
}

std::pair<std::size_t, std::size_t> partOf(const SelfCollisionWorkspace& ws, int part) {
    const std::size_t n = ws.vertices.size(), parts = ws.parts.size();
    return {n * std::size_t(part) / parts, n * std::size_t(part + 1) / parts};
}

PBD_KERNEL_INLINE void beginGrid(const std::vector<Triangle>& triangles, const std::vector<Vec3>& x,
                                 const std::vector<Vec3>& p, Real thickness, int parts,
                                 SelfCollisionWorkspace& ws) {
    ws.table.clear();
    ws.wide.clear();
    ws.wideBoxes.clear();
    // At most kMostGridParts parts: each has a count per bucket (a megabyte for cloth-xl), and
    // placing the buckets goes through every part's counts on one thread.
    ws.parts.resize(std::size_t(std::clamp(parts, 1, kMostGridParts)));
    ws.x = &x;
    ws.p = &p;
    if (triangles.empty() || !(thickness > 0)) {
        ws.vertices.clear();
        ws.verticesOf.clear();
        return;
    }
    listVertices(triangles, ws);
    // Cells about the grown box of two triangles that share an edge (queried together): a query
    // visits a few cells, each holding the few vertices of the surface that cross it. (Cells of
    // one triangle's box, two thirds of this, made cloth-xl's step 6% slower: each cell visited
    // costs more than the entries it holds; `drape` and `sample` are the same either way.) The
    // mean edge from at most 4,096 triangles spread over the list: the cell size changes how
    // fast the search is, never what it finds.
    Real edges = 0;
    std::size_t measured = 0;
    const std::size_t stride = std::max<std::size_t>(1, triangles.size() / 4096);
    for (std::size_t t = 0; t < triangles.size(); t += stride) {
        const Real e = (x[triangles[t][1]] - x[triangles[t][0]]).norm();
        if (std::isfinite(e)) { // a non-finite particle must not make every cell infinite
            edges += e;
            ++measured;
        }
    }
    ws.cell =
        1.5 * (edges / static_cast<Real>(std::max<std::size_t>(1, measured)) + kReach * thickness);
    // Buckets for about two entries a vertex (most vertices enter one or two cells).
    std::size_t buckets = 64; // a block's cells at least
    while (buckets < 2 * ws.vertices.size()) {
        buckets <<= 1;
    }
    ws.mask = buckets - 1;
    ws.start.assign(buckets + 1, 0);
}

PBD_KERNEL_INLINE void countGrid(int part, SelfCollisionWorkspace& ws) {
    if (std::size_t(part) >= ws.parts.size()) {
        return; // beyond kMostGridParts
    }
    SelfCollisionWorkspace::Part& mine = ws.parts[std::size_t(part)];
    mine.wide.clear();
    mine.wideBoxes.clear();
    if (ws.vertices.empty()) {
        return;
    }
    const std::vector<Vec3>& x = *ws.x;
    const std::vector<Vec3>& p = *ws.p;
    const GridCells grid{ws.cell, ws.mask};
    mine.fill.assign(ws.mask + 1, 0);
    const auto [first, last] = partOf(ws, part);
    for (std::size_t i = first; i < last; ++i) {
        const Index v = ws.vertices[i];
        const Bounds b = sweptBox(x[v], p[v]);
        if (hashable(b, grid)) {
            grid.forEach(b, [&](std::uint64_t bucket) { ++mine.fill[bucket]; });
        } else if (finiteBox(b)) {
            mine.wide.push_back(v);
            mine.wideBoxes.push_back(b);
        } // else no contact can be worked out for it: neither hashed nor tested
    }
}

void placeGrid(SelfCollisionWorkspace& ws) {
    if (ws.vertices.empty()) {
        return;
    }
    // Bucket by bucket, part by part: each part's count becomes where it writes.
    const std::size_t buckets = ws.mask + 1;
    Index placed = 0;
    for (std::size_t b = 0; b < buckets; ++b) {
        ws.start[b] = placed;
        for (SelfCollisionWorkspace::Part& part : ws.parts) {
            const Index count = part.fill[b];
            part.fill[b] = placed;
            placed += count;
        }
    }
    ws.start[buckets] = placed;
    ws.table.resize(placed);
    for (std::vector<float>& bound : ws.tableBoxes) {
        bound.resize(placed);
    }
    for (const SelfCollisionWorkspace::Part& part : ws.parts) {
        ws.wide.insert(ws.wide.end(), part.wide.begin(), part.wide.end());
        ws.wideBoxes.insert(ws.wideBoxes.end(), part.wideBoxes.begin(), part.wideBoxes.end());
    }
}

PBD_KERNEL_INLINE void fillGrid(int part, SelfCollisionWorkspace& ws) {
    if (ws.vertices.empty() || std::size_t(part) >= ws.parts.size()) {
        return;
    }
    const std::vector<Vec3>& x = *ws.x;
    const std::vector<Vec3>& p = *ws.p;
    const GridCells grid{ws.cell, ws.mask};
    std::vector<Index>& fill = ws.parts[std::size_t(part)].fill;
    const auto [first, last] = partOf(ws, part);
    for (std::size_t i = first; i < last; ++i) {
        const Index v = ws.vertices[i];
        const Bounds b = sweptBox(x[v], p[v]);
        if (!hashable(b, grid)) {
            continue;
        }
        const FloatBox fb(b);
        grid.forEach(b, [&](std::uint64_t bucket) {
            const Index at = fill[bucket]++;
            for (int k = 0; k < 6; ++k) {
                ws.tableBoxes[std::size_t(k)][at] = fb.bound[k];
            }
            ws.table[at] = v;
        });
    }
}

} // namespace

void beginSelfCollisionGrid(const std::vector<Triangle>& triangles, const std::vector<Vec3>& x,
                            const std::vector<Vec3>& p, Real thickness, int parts,
                            SelfCollisionWorkspace& ws) {
    PBDLAB_WIDE_PATH(beginGrid(triangles, x, p, thickness, parts, ws));
}
void countSelfCollisionGrid(int part, SelfCollisionWorkspace& ws) {
    PBDLAB_WIDE_PATH(countGrid(part, ws));
}
void placeSelfCollisionGrid(SelfCollisionWorkspace& ws) {
    placeGrid(ws);
}
void fillSelfCollisionGrid(int part, SelfCollisionWorkspace& ws) {
    PBDLAB_WIDE_PATH(fillGrid(part, ws));
}

void buildSelfCollisionGrid(const std::vector<Triangle>& triangles, const std::vector<Vec3>& x,
                            const std::vector<Vec3>& p, Real thickness,
                            SelfCollisionWorkspace& ws) {
    beginSelfCollisionGrid(triangles, x, p, thickness, 1, ws);
    countSelfCollisionGrid(0, ws);
    placeSelfCollisionGrid(ws);
    fillSelfCollisionGrid(0, ws);
}

Bounds selfCollisionBox(const Triangle& triangle, const std::vector<Vec3>& x,
                        const std::vector<Vec3>& p, Real thickness) {
    return grownBox(triangle, x, p, thickness);
}

__attribute__((noinline)) bool selfContactBetween(Index q, const Triangle& tri,
                                                  const std::vector<Vec3>& x,
                                                  const std::vector<Vec3>& p, Real thickness,
                                                  SelfContact& contact) {
    if (tri[0] == q || tri[1] == q || tri[2] == q) {
        return false;
    }
    // Side at the start of the step, from the closest point at the current positions.
    const Vec3 bx = closestBarycentric(x[q], x[tri[0]], x[tri[1]], x[tri[2]]);
    const Vec3 cx = bx[0] * x[tri[0]] + bx[1] * x[tri[1]] + bx[2] * x[tri[2]];
    const Vec3 nx = (x[tri[1]] - x[tri[0]]).cross(x[tri[2]] - x[tri[0]]);
    if (!(nx.squaredNorm() > 0)) {
        return false;
    }
    const Real sideDistance = (x[q] - cx).dot(nx.normalized());
    if ((x[q] - cx).norm() >
        kReach * thickness + (p[q] - x[q]).norm() + (p[tri[0]] - x[tri[0]]).norm()) {
        return false;
    }
    const Vec3 bp = closestBarycentric(p[q], p[tri[0]], p[tri[1]], p[tri[2]]);
    const Vec3 cp = bp[0] * p[tri[0]] + bp[1] * p[tri[1]] + bp[2] * p[tri[2]];
    const Vec3 np = (p[tri[1]] - p[tri[0]]).cross(p[tri[2]] - p[tri[0]]);
    const bool near = (p[q] - cp).norm() < kReach * thickness && bp.minCoeff() > 1e-6;
    const bool crossed =
        np.squaredNorm() > 0 && sideDistance * (p[q] - cp).dot(np) < 0 && bp.minCoeff() > 1e-6;
    if (!near && !crossed) {
        return false;
    }
    contact = {q, tri, bp, sideDistance >= 0 ? 1.0 : -1.0};
    return true;
}

namespace {

// Whether a vertex's swept box overlaps a query box, without a branch.
struct Overlap {
    Real lo[3], hi[3];
    explicit Overlap(const Bounds& b)
        : lo{b.min.x(), b.min.y(), b.min.z()}
        , hi{b.max.x(), b.max.y(), b.max.z()} {}
    PBD_KERNEL_INLINE bool operator()(const Bounds& vb) const {
        return (vb.max.x() >= lo[0]) & (vb.max.y() >= lo[1]) & (vb.max.z() >= lo[2]) &
               (vb.min.x() <= hi[0]) & (vb.min.y() <= hi[1]) & (vb.min.z() <= hi[2]);
    }
};

// Whether two triangles share an edge (two of their corners).
PBD_KERNEL_INLINE bool shareEdge(const Triangle& a, const Triangle& b) {
    int shared = 0;
    for (Index u : a) {
        shared += (u == b[0]) | (u == b[1]) | (u == b[2]) ? 1 : 0;
    }
    return shared >= 2;
}

// Whether table entry i's box overlaps the query's (both in floats, rounded outwards).
PBD_KERNEL_INLINE bool overlapsFloat(const SelfCollisionWorkspace& ws, const FloatBox& q, Index i) {
    const auto& b = ws.tableBoxes;
    return (b[3][i] >= q.bound[0]) & (b[4][i] >= q.bound[1]) & (b[5][i] >= q.bound[2]) &
           (b[0][i] <= q.bound[3]) & (b[1][i] <= q.bound[4]) & (b[2][i] <= q.bound[5]);
}

constexpr Index kScanLanes = 8;

// Entries [i, last) eight at a time while eight remain, with AVX2 (the caller checks the CPU has
// it): each group's overlapping entries written to candidates[kept...] in order (a permutation
// of the eight looked up by the mask; up to eight slots past the kept ones are written).
// Returns the new count; i is left at the first entry not scanned.
__attribute__((target("avx2,popcnt"))) std::size_t scanEight(const SelfCollisionWorkspace& ws,
                                                             const FloatBox& q, Index& i,
                                                             Index last, Index* candidates,
                                                             std::size_t kept) {
    // The lanes to keep for each 8-bit mask, in order, four bits each.
    static const auto order = [] {
        std::array<std::uint32_t, 256> table{};
        for (unsigned mask = 0; mask < 256; ++mask) {
            std::uint32_t packed = 0;
            int slot = 0;
            for (unsigned lane = 0; lane < 8; ++lane) {
                if (mask & (1u << lane)) {
                    packed |= lane << (4 * slot++);
                }
            }
            table[mask] = packed;
        }
        return table;
    }();
    const auto& b = ws.tableBoxes;
    const __m256 loX = _mm256_set1_ps(q.bound[0]), loY = _mm256_set1_ps(q.bound[1]),
                 loZ = _mm256_set1_ps(q.bound[2]), hiX = _mm256_set1_ps(q.bound[3]),
                 hiY = _mm256_set1_ps(q.bound[4]), hiZ = _mm256_set1_ps(q.bound[5]);
    const __m256i nibbles = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
    for (; i + kScanLanes <= last; i += kScanLanes) {
        __m256 in = _mm256_cmp_ps(_mm256_loadu_ps(&b[3][i]), loX, _CMP_GE_OQ);
        in = _mm256_and_ps(in, _mm256_cmp_ps(_mm256_loadu_ps(&b[4][i]), loY, _CMP_GE_OQ));
        in = _mm256_and_ps(in, _mm256_cmp_ps(_mm256_loadu_ps(&b[5][i]), loZ, _CMP_GE_OQ));
        in = _mm256_and_ps(in, _mm256_cmp_ps(_mm256_loadu_ps(&b[0][i]), hiX, _CMP_LE_OQ));
        in = _mm256_and_ps(in, _mm256_cmp_ps(_mm256_loadu_ps(&b[1][i]), hiY, _CMP_LE_OQ));
        in = _mm256_and_ps(in, _mm256_cmp_ps(_mm256_loadu_ps(&b[2][i]), hiZ, _CMP_LE_OQ));
        const unsigned mask = unsigned(_mm256_movemask_ps(in));
        const __m256i lanes = _mm256_and_si256(
            _mm256_srlv_epi32(_mm256_set1_epi32(int(order[mask])), nibbles), _mm256_set1_epi32(15));
        const __m256i entries =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ws.table.data() + i));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(candidates + kept),
                            _mm256_permutevar8x32_epi32(entries, lanes));
        kept += std::size_t(_mm_popcnt_u32(mask));
    }
    return kept;
}

// The vertices whose swept boxes overlap `box` (with `eight`, scanned by scanEight), written
// to candidates[0, returned): from the
// hash's buckets under the box (or every vertex, for a box spanning too many cells) and the
// wide vertices. A vertex may come twice (in two of the buckets). Each entry is written and kept
// when its box overlaps, without a branch; `candidates` only grows, with room for a bucket made
// before it is scanned.
PBD_KERNEL_INLINE std::size_t scanHash(const Bounds& box, const std::vector<Vec3>& x,
                                       const std::vector<Vec3>& p, const SelfCollisionWorkspace& ws,
                                       std::vector<Index>& candidates, bool eight) {
    const GridCells grid{ws.cell, ws.mask};
    const Overlap overlapping(box);
    const auto makeRoom = [&](std::size_t needed) {
        if (candidates.size() < needed) {
            candidates.resize(std::max(needed, 2 * candidates.size()));
        }
    };
    std::size_t kept = 0;
    if (!grid.fits(box, kMaxTriangleCells)) { // a corner flung far: every vertex
        makeRoom(ws.vertices.size());
        for (Index v : ws.vertices) { // the wide ones too, found twice
            candidates[kept] = v;
            kept += overlapping(sweptBox(x[v], p[v])) ? 1 : 0;
        }
    } else {
        const FloatBox query(box);
        grid.forEachRun(box, [&](std::uint64_t firstBucket, std::uint64_t lastBucket) {
            const Index first = ws.start[firstBucket], last = ws.start[lastBucket + 1];
            makeRoom(kept + (last - first) + kScanLanes);
            // Another cell may share the bucket: keep only vertices whose swept box may overlap
            // (stored with the entry: no gather), eight at a time where the CPU has AVX2.
            Index i = first;
            if (eight) {
                kept = scanEight(ws, query, i, last, candidates.data(), kept);
            }
            for (; i < last; ++i) {
                candidates[kept] = ws.table[i];
                kept += overlapsFloat(ws, query, i) ? 1 : 0;
            }
        });
    }
    makeRoom(kept + ws.wide.size());
    for (std::size_t w = 0; w < ws.wide.size(); ++w) {
        candidates[kept] = ws.wide[w];
        kept += overlapping(ws.wideBoxes[w]) ? 1 : 0;
    }
    return kept;
}

// querySelfContacts' work, compiled twice in a portable build (the scans and the plane test;
// selfContactBetween is not inlined, so the pair test has the same bits on every CPU).
PBD_KERNEL_INLINE bool queryRange(const std::vector<Triangle>& triangles,
                                  const std::vector<Vec3>& x, const std::vector<Vec3>& p,
                                  Real thickness, const SelfCollisionWorkspace& ws,
                                  std::size_t firstTriangle, std::size_t lastTriangle,
                                  std::vector<Index>& candidates,
                                  std::vector<SelfContact>& contacts, std::size_t limit) {
    lastTriangle = std::min(lastTriangle, triangles.size());
    // The hash's scan eight entries at a time (scanEight) where the CPU has AVX2.
    const bool eight = isa::activeLevel() >= isa::Level::Avx2;
    for (std::size_t t = firstTriangle; t < lastTriangle;) {
        Bounds boxes[2] = {grownBox(triangles[t], x, p, thickness), {}};
        if (!finiteBox(boxes[0])) {
            ++t;
            continue; // a corner gone non-finite: no contact can be worked out (and a cloth
                      // gone NaN would otherwise test every triangle against every vertex)
        }
        // Two triangles in a row that share an edge (the two halves of a grid's quad) have
        // nearly the same box: one scan of the hash serves both, each then keeping the
        // vertices its own box overlaps. Half the scans on a cloth, the same contacts.
        Bounds box = boxes[0];
        std::size_t end = t + 1;
        if (t + 1 < lastTriangle && shareEdge(triangles[t], triangles[t + 1])) {
            boxes[1] = grownBox(triangles[t + 1], x, p, thickness);
            if (finiteBox(boxes[1])) {
                box.add(boxes[1]);
                end = t + 2;
            }
        }
        const std::size_t begin = t;
        const std::size_t pooled = scanHash(box, x, p, ws, candidates, eight);
        if (candidates.size() < 2 * pooled) { // the second half for each triangle's own list
            candidates.resize(2 * pooled);
        }
        for (; t < end; ++t) {
            const Triangle& tri = triangles[t];
            const Overlap overlapping(boxes[t - begin]);
            // A contact needs the closest point at the end of the substep strictly inside the
            // triangle, where it is the projection onto its plane: a candidate whose projection
            // is clearly outside (a neighbour in the sheet, nearly all of them) is left out
            // here, by two dot products, before the exact tests below.
            const Vec3 e1 = p[tri[1]] - p[tri[0]], e2 = p[tri[2]] - p[tri[0]];
            const Vec3 n = e1.cross(e2);
            const Real nn = n.squaredNorm();
            const bool flat = nn > 1e-6 * e1.squaredNorm() * e2.squaredNorm(); // not a sliver:
            const Vec3 d1 = flat ? Vec3(e2.cross(n) / nn) : Vec3::Zero();      // small rounding
            const Vec3 d2 = flat ? Vec3(n.cross(e1) / nn) : Vec3::Zero();
            const Vec3& origin = p[tri[0]];
            const auto first = candidates.begin() + std::ptrdiff_t(pooled);
            std::size_t kept = 0;
            for (std::size_t c = 0; c < pooled; ++c) {
                const Index q = candidates[c];
                const Vec3 r = p[q] - origin;
                const Real b1 = r.dot(d1), b2 = r.dot(d2);
                constexpr Real kOutside = -0.01;
                const bool outside = (b1 < kOutside) | (b2 < kOutside) | (1 - b1 - b2 < kOutside);
                first[std::ptrdiff_t(kept)] = q;
                kept += overlapping(sweptBox(x[q], p[q])) & !outside ? 1 : 0;
            }
            const auto found = first + std::ptrdiff_t(kept);
            std::sort(first, found);
            const auto distinct = std::unique(first, found);
            for (auto it = first; it != distinct; ++it) {
                const Index q = *it;
                // selfContactBetween refuses a corner too; its three corners are among every
                // triangle's candidates, and this saves them the call.
                if (tri[0] == q || tri[1] == q || tri[2] == q) {
                    continue;
                }
                SelfContact contact;
                if (selfContactBetween(q, tri, x, p, thickness, contact)) {
                    if (contacts.size() >= limit) {
                        return false;
                    }
                    contacts.push_back(contact);
                }
            }
        }
    }
    return true;
}

} // namespace

bool querySelfContacts(const std::vector<Triangle>& triangles, const std::vector<Vec3>& x,
                       const std::vector<Vec3>& p, Real thickness, const SelfCollisionWorkspace& ws,
                       std::size_t firstTriangle, std::size_t lastTriangle,
                       std::vector<Index>& candidates, std::vector<SelfContact>& contacts,
                       std::size_t limit) {
    if (ws.vertices.empty()) {
        return true;
    }
    bool complete = true;
    PBDLAB_WIDE_PATH(complete = queryRange(triangles, x, p, thickness, ws, firstTriangle,
                                           lastTriangle, candidates, contacts, limit));
    return complete;
}

void orderSelfContacts(std::vector<SelfContact>& contacts) {
    std::stable_sort(
        contacts.begin(), contacts.end(),
        [](const SelfContact& a, const SelfContact& b) { return a.particle < b.particle; });
}

std::vector<SelfContact> findSelfContacts(const std::vector<Triangle>& triangles,
                                          const std::vector<Vec3>& x, const std::vector<Vec3>& p,
                                          Real thickness, SelfCollisionWorkspace& ws) {
    std::vector<SelfContact> contacts;
    buildSelfCollisionGrid(triangles, x, p, thickness, ws);
    querySelfContacts(triangles, x, p, thickness, ws, 0, triangles.size(), ws.candidates, contacts);
    orderSelfContacts(contacts);
    return contacts;
}

} // namespace pbd
