#pragma once
// Self-collision (PBD §4.3): a particle q against a triangle (p1, p2, p3) of any cloth body or
// soft-body surface (takesPartInSelfCollision), kept `thickness` away on the side it came from:
// C = s (q - sum_i b_i p_i)·n - h >= 0, with n the triangle's unit normal, b the barycentric
// coordinates of q's closest point and s = +-1 the side. Candidate pairs come from a spatial hash
// of the particles' swept boxes (a particle mostly in one cell; blocks of 4 x 4 x 4 cells hashed,
// their cells side by side), queried with each triangle's swept box grown by the thickness (two
// triangles in a row that share an edge in one scan), once per substep (a triangle is never a
// candidate for its own corners); a candidate whose end position projects clearly outside the
// triangle is dropped before the exact test.

#include "core/base/LinearAlgebra.h"

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

namespace pbd {

struct SelfContact {
    Index particle = 0;
    Triangle triangle{};
    Vec3 barycentric = Vec3::Zero();
    Real side = 1;
};

// Buffers reused from substep to substep (allocating the hash table anew each time costs more
// than filling it).
struct SelfCollisionWorkspace {
    std::vector<Index> start, table, vertices, candidates;
    // Per table entry, its vertex's swept box in floats rounded outwards (a box never shrinks):
    // the lower corner's x, y, z, then the upper corner's, each an array of its own so that a
    // scan tests eight entries at once. Only a first filter: a triangle tests each vertex it
    // keeps again on its box in doubles.
    std::array<std::vector<float>, 6> tableBoxes;
    std::vector<Triangle> verticesOf; // the triangles `vertices` was listed from
    // Vertices whose swept box spans more than kMaxVertexCells cells (a particle flung far in
    // one substep), kept out of the hash and tested by every triangle, with their boxes. A
    // vertex (or triangle) whose box is not finite takes part in no contact.
    std::vector<Index> wide;
    std::vector<Bounds> wideBoxes;
    Real cell = 0;
    std::uint64_t mask = 0;
    // The build in parts: each part's share of `vertices`, its entries per bucket (then where
    // it writes them) and its wide vertices. A cache line each: the parts grow their own lists
    // at once, and lists side by side would pass the line back and forth.
    struct alignas(64) Part {
        std::vector<Index> fill, wide;
        std::vector<Bounds> wideBoxes;
    };
    std::vector<Part> parts;
    const std::vector<Vec3>* x = nullptr;
    const std::vector<Vec3>* p = nullptr;
};

// A vertex's swept box enters at most this many cells of the hash (and a triangle's query visits
// at most kMaxTriangleCells of them, or else tests every vertex): memory and time stay bounded
// however far a particle moves in a substep (a runaway once asked for 24 GB of hash entries).
constexpr double kMaxVertexCells = 64;
constexpr double kMaxTriangleCells = 4096;

// The two halves of findSelfContacts, so the queries can run in parallel: the hash of the
// particles' swept boxes (and the triangles' boxes, the list of surface vertices ws.vertices),
// then the contacts with triangles [first, last) appended to `contacts`, by triangle and then
// by particle, so parts run in order give the same list as one.
void buildSelfCollisionGrid(const std::vector<Triangle>& triangles, const std::vector<Vec3>& x,
                            const std::vector<Vec3>& p, Real thickness,
                            SelfCollisionWorkspace& workspace);
// buildSelfCollisionGrid in `parts` parts, for the solver's threads: begin on one thread, then
// count (every part, at once), place (one thread), fill (every part); the same hash as one
// build. Parts from kMostGridParts on have nothing to do. x and p must outlive the fill.
constexpr int kMostGridParts = 8;
void beginSelfCollisionGrid(const std::vector<Triangle>& triangles, const std::vector<Vec3>& x,
                            const std::vector<Vec3>& p, Real thickness, int parts,
                            SelfCollisionWorkspace& workspace);
void countSelfCollisionGrid(int part, SelfCollisionWorkspace& workspace);
void placeSelfCollisionGrid(SelfCollisionWorkspace& workspace);
void fillSelfCollisionGrid(int part, SelfCollisionWorkspace& workspace);
// At most `limit` contacts are appended (a cloth collapsed into itself finds millions, and
// would take the memory with them); false when the limit stopped the query.
bool querySelfContacts(const std::vector<Triangle>& triangles, const std::vector<Vec3>& x,
                       const std::vector<Vec3>& p, Real thickness,
                       const SelfCollisionWorkspace& workspace, std::size_t firstTriangle,
                       std::size_t lastTriangle, std::vector<Index>& candidates,
                       std::vector<SelfContact>& contacts,
                       std::size_t limit = std::numeric_limits<std::size_t>::max());

// Puts contacts found by triangle into the order they are projected in: by particle (stably, so
// a particle's triangles stay in order). A particle's contacts one after the other converge much
// better in the Gauss-Seidel sweep than spread through the list (a cloth lying on a soft torus
// jitters at a median 0.30 m/s the other way, 0.085 m/s this way; tst_core_colliders).
void orderSelfContacts(std::vector<SelfContact>& contacts);

// Contacts between the particles of `triangles` moving from x to p and those triangles (not the
// ones the particle belongs to), where the particle ends within 2 h of a triangle or crosses it.
std::vector<SelfContact> findSelfContacts(const std::vector<Triangle>& triangles,
                                          const std::vector<Vec3>& x, const std::vector<Vec3>& p,
                                          Real thickness, SelfCollisionWorkspace& workspace);
std::vector<SelfContact> findSelfContacts(const std::vector<Triangle>& triangles,
                                          const std::vector<Vec3>& x, const std::vector<Vec3>& p,
                                          Real thickness);

// The pair test itself: whether particle q (not a corner of `triangle`), moving from x[q] to
// p[q], is a contact of the triangle (it ends within 2 h of a point strictly inside it, or
// crosses it), and if so the contact. The search finds every pair this accepts whose particle's
// swept box overlaps the triangle's selfCollisionBox, and no other.
bool selfContactBetween(Index q, const Triangle& triangle, const std::vector<Vec3>& x,
                        const std::vector<Vec3>& p, Real thickness, SelfContact& contact);
// A triangle's swept box (from x to p) grown by the thickness.
Bounds selfCollisionBox(const Triangle& triangle, const std::vector<Vec3>& x,
                        const std::vector<Vec3>& p, Real thickness);

// Barycentric coordinates of the point of triangle (a, b, c) closest to q.
Vec3 closestBarycentric(const Vec3& q, const Vec3& a, const Vec3& b, const Vec3& c);

} // namespace pbd
