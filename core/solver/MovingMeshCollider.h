#pragma once
// Contacts with a moving triangle-mesh collider (an animated character's skin), rebuilt every
// substep: the triangles in a uniform grid, and per vertex its angle-weighted normal. Unlike a
// static mesh collider (closed; inside or out by ray parity over all triangles) the skin may be
// open (a character's separate body, head and hands), so a point's side is the sign of its
// offset along the pseudo-normal of the closest feature (Baerentzen and Aanaes 2005: the face's
// normal inside a face, the interpolated vertex normals on an edge or corner), and the search
// reaches only `reach` beyond the margin: a particle the skin swallowed deeper than that is
// given up, not pulled through the body to a far side. A point whose closest feature is on an
// opening's rim (a character's separate torso ends at the hips) is outside: no side can be told
// there, and taking it for inside pushes cloth into the body. Nor is a point inside deeper than
// the caller says it can have come (`deepest`: a particle seen outside a substep before, plus its
// path and the skin's travel since): near an opening the pseudo-normals' side is not continuous,
// and a particle that came round a rim behind a face would be taken for centimetres deep and
// pushed through the surface.

#include "core/base/LinearAlgebra.h"
#include "core/solver/Colliders.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace pbd {

class MovingMeshCollider {
public:
    // The collider's current vertices and triangles; `reach` how deep inside a particle may be
    // and still be pushed out (0: twice the mean edge length).
    void build(const Collider& collider, Real reach = 0);
    bool empty() const { return triangles_ == nullptr || triangles_->empty(); }
    const Bounds& bounds() const { return bounds_; }
    Real reach() const { return reach_; }

    static constexpr Real kAnyDepth = std::numeric_limits<Real>::infinity();
    // As contactFor (Colliders.h) for the particle moving x -> p, with the surface's velocity
    // at the contact point (zero when the collider has no vertex velocities). Neither x nor p
    // is inside deeper than `deepest`; where that is finite, the searches reach only as far as
    // it or the contact distance. `clearance`, if given, says what the search of x saw: its
    // distance outside the surface, or at least that far outside where a bounded search found
    // nothing (> 0); nothing within minus the distance searched (< 0); or 0 (inside, or on it).
    bool contact(const Vec3& x, const Vec3& p, Real margin, Vec3& q, Vec3& n, Vec3& velocity,
                 Real* clearance = nullptr, Real deepest = kAnyDepth) const;
    // The signed distance of x to the surface within the reach (false beyond it); a point
    // deeper than `deepest` behind the closest feature counts as outside.
    bool closest(const Vec3& x, Real reach, SurfacePoint& s, Vec3& velocity,
                 Real deepest = kAnyDepth) const;

private:
    template <class F> void visit(const Bounds& box, F&& f) const;
    Vec3 velocityAt(const Triangle& t, const Vec3& w) const;
    // Vertex v's angle-weighted normal, made when a search first needs it after a build (few
    // searches end on an edge or a corner; the acos of every corner of a subdivided skin was
    // most of a build): each thread keeps those it made, the same bits whichever makes them.
    Vec3 vertexNormal(Index v) const;

    const std::vector<Vec3>* vertices_ = nullptr;
    const std::vector<Triangle>* triangles_ = nullptr;
    const std::vector<Vec3>* velocities_ = nullptr;
    std::uint64_t generation_ = 0;              // this build's, unique in the program
    std::vector<Index> cornerStart_, cornerOf_; // vertex -> its corners 3 f + k, f ascending
    std::vector<char> border_; // per vertex: on an edge of one triangle only (an opening)
    std::size_t borderTriangles_ = 0;
    std::vector<Vec3> faceNormals_;
    // Each triangle's bounding box: a candidate farther than the best so far is skipped.
    std::vector<Vec3> faceMin_, faceMax_;
    Bounds bounds_;
    Real cell_ = 1;
    Real inverseCell_ = 1;
    Real reach_ = 0;
    Eigen::Vector3i dims_ = Eigen::Vector3i::Ones();
    std::vector<Index> cellStart_; // CSR: the triangles of cell c are [cellStart_[c], [c + 1])
    std::vector<Index> cellTriangles_;
};

} // namespace pbd
