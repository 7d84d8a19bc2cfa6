#pragma once
// Self-collision (PBD §4.3): a particle q against a triangle (p1, p2, p3) of any cloth body or
// soft-body surface (takesPartInSelfCollision), kept `thickness` away on the side it came from:
// C = s (q - sum_i b_i p_i)·n - h >= 0, with n the triangle's unit normal, b the barycentric
// coordinates of q's closest point and s = +-1 the side. Candidate pairs come from a spatial hash
// of the triangles' swept boxes, once per substep.

#include "core/base/LinearAlgebra.h"

#include <cstdint>
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
    std::vector<Bounds> boxes;
    std::vector<Index> start, fill, table, vertices, candidates;
    std::vector<Triangle> verticesOf; // the triangles `vertices` was listed from
    Real cell = 0;
    std::uint64_t mask = 0;
};

// The two halves of findSelfContacts, so the queries can run in parallel: the hash of the
// triangles' swept boxes (and the list of cloth vertices, ws.vertices), then the contacts of
// vertices ws.vertices[first, last) appended to `contacts`.
void buildSelfCollisionGrid(const std::vector<Triangle>& triangles, const std::vector<Vec3>& x,
                            const std::vector<Vec3>& p, Real thickness,
                            SelfCollisionWorkspace& workspace);
void querySelfContacts(const std::vector<Triangle>& triangles, const std::vector<Vec3>& x,
                       const std::vector<Vec3>& p, Real thickness,
                       const SelfCollisionWorkspace& workspace, std::size_t firstVertex,
                       std::size_t lastVertex, std::vector<Index>& candidates,
                       std::vector<SelfContact>& contacts);

// Contacts between the particles of `triangles` moving from x to p and those triangles (not the
// ones the particle belongs to), where the particle ends within 2 h of a triangle or crosses it.
std::vector<SelfContact> findSelfContacts(const std::vector<Triangle>& triangles,
                                          const std::vector<Vec3>& x, const std::vector<Vec3>& p,
                                          Real thickness, SelfCollisionWorkspace& workspace);
std::vector<SelfContact> findSelfContacts(const std::vector<Triangle>& triangles,
                                          const std::vector<Vec3>& x, const std::vector<Vec3>& p,
                                          Real thickness);

// Barycentric coordinates of the point of triangle (a, b, c) closest to q.
Vec3 closestBarycentric(const Vec3& q, const Vec3& a, const Vec3& b, const Vec3& c);

} // namespace pbd
