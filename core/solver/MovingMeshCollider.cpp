#include "core/solver/MovingMeshCollider.h"

#include "core/base/Marks.h"
#include "core/solver/SelfCollision.h"

#include <algorithm>
#include <atomic>
#include <cmath>

namespace pbd {

namespace {

// floor(v) as an int, for v within the int range (the grid's cells: v is clamped first); without
// SSE4.1 std::floor is a library call, and a build made 12 per triangle.
inline int floorToInt(Real v) {
    const int i = static_cast<int>(v);
    return i - (v < static_cast<Real>(i) ? 1 : 0);
}

// The cell of coordinate v (from the grid's corner) along an axis of `cells` cells, clamped
// into the grid: clamp(floor(v / cell), 0, cells - 1), v / cell as v times its inverse (the
// triangles' cells and a search's are worked out alike, and any rounding that keeps the order
// of coordinates finds the same triangles).
inline int cellOf(Real v, Real inverseCell, int cells) {
    const Real at = v * inverseCell;
    if (!(at > 0)) {
        return 0; // and NaN
    }
    return std::min(floorToInt(std::min(at, Real(cells))), cells - 1);
}

std::atomic<std::uint64_t> buildCount{0};

} // namespace

void MovingMeshCollider::build(const Collider& c, Real reach) {
    vertices_ = &c.vertices;
    triangles_ = &c.triangles;
    velocities_ = c.velocities.size() == c.vertices.size() ? &c.velocities : nullptr;
    generation_ = ++buildCount;
    const auto& x = c.vertices;
    bounds_ = Bounds{};
    for (const Vec3& v : x) {
        bounds_.add(v);
    }
    faceNormals_.resize(c.triangles.size());
    faceMin_.resize(c.triangles.size());
    faceMax_.resize(c.triangles.size());
    Real edges = 0;
    for (std::size_t f = 0; f < c.triangles.size(); ++f) {
        const Triangle& t = c.triangles[f];
        const Vec3 n = (x[t[1]] - x[t[0]]).cross(x[t[2]] - x[t[0]]);
        const Real len = n.norm();
        faceNormals_[f] = len > 0 ? Vec3(n / len) : Vec3::Zero();
        faceMin_[f] = x[t[0]].cwiseMin(x[t[1]]).cwiseMin(x[t[2]]);
        faceMax_[f] = x[t[0]].cwiseMax(x[t[1]]).cwiseMax(x[t[2]]);
        for (int k = 0; k < 3; ++k) {
            edges += (x[t[(k + 1) % 3]] - x[t[k]]).norm();
        }
    }
    // Rims: edges of one triangle. The topology is the same every substep; found once.
    if (border_.size() != x.size() || borderTriangles_ != c.triangles.size()) {
        // Each vertex's corners, triangle by triangle: the order its normal sums them in.
        cornerStart_.assign(x.size() + 1, 0);
        for (const Triangle& t : c.triangles) {
            for (const Index v : t) {
                ++cornerStart_[v + 1];
            }
        }
        for (std::size_t v = 0; v < x.size(); ++v) {
            cornerStart_[v + 1] += cornerStart_[v];
        }
        cornerOf_.resize(cornerStart_[x.size()]);
        std::vector<Index> fill(cornerStart_.begin(), cornerStart_.end() - 1);
        for (std::size_t f = 0; f < c.triangles.size(); ++f) {
            for (int k = 0; k < 3; ++k) {
                cornerOf_[fill[c.triangles[f][std::size_t(k)]]++] = Index(3 * f + std::size_t(k));
            }
        }
        std::vector<std::pair<Index, Index>> rimEdges;
        rimEdges.reserve(3 * c.triangles.size());
        for (const Triangle& t : c.triangles) {
            for (int k = 0; k < 3; ++k) {
                rimEdges.emplace_back(std::min(t[k], t[(k + 1) % 3]),
                                      std::max(t[k], t[(k + 1) % 3]));
            }
        }
        std::sort(rimEdges.begin(), rimEdges.end());
        border_.assign(x.size(), 0);
        for (std::size_t i = 0; i < rimEdges.size();) {
            std::size_t j = i;
            while (j < rimEdges.size() && rimEdges[j] == rimEdges[i]) {
                ++j;
            }
            if (j - i == 1) {
                border_[rimEdges[i].first] = border_[rimEdges[i].second] = 1;
            }
            i = j;
        }
        borderTriangles_ = c.triangles.size();
    }
    const Real meanEdge = c.triangles.empty() ? 1 : edges / Real(3 * c.triangles.size());
    reach_ = reach > 0 ? reach : 2 * meanEdge;
    // Cells of two mean edges, at most about four per triangle.
    cell_ = std::max(2 * meanEdge, Real(1e-6));
    const Vec3 size = bounds_.size();
    const auto cellsFor = [&](Real cell) {
        return Eigen::Vector3i(int(std::floor(size.x() / cell)) + 1,
                               int(std::floor(size.y() / cell)) + 1,
                               int(std::floor(size.z() / cell)) + 1);
    };
    dims_ = cellsFor(cell_);
    const double budget = 4.0 * double(std::max<std::size_t>(c.triangles.size(), 64));
    while (double(dims_.x()) * dims_.y() * dims_.z() > budget) {
        cell_ *= 1.25;
        dims_ = cellsFor(cell_);
    }
    const std::size_t cells = std::size_t(dims_.x()) * dims_.y() * dims_.z();
    cellStart_.assign(cells + 1, 0);
    inverseCell_ = 1 / cell_;
    const auto cellRange = [&](std::size_t f, Eigen::Vector3i& lo, Eigen::Vector3i& hi) {
        const Vec3 mn = faceMin_[f] - bounds_.min;
        const Vec3 mx = faceMax_[f] - bounds_.min;
        for (int a = 0; a < 3; ++a) {
            lo[a] = cellOf(mn[a], inverseCell_, dims_[a]);
            hi[a] = cellOf(mx[a], inverseCell_, dims_[a]);
        }
    };
    Eigen::Vector3i lo, hi;
    for (int pass = 0; pass < 2; ++pass) {
        std::vector<Index> fill;
        if (pass == 1) {
            for (std::size_t i = 0; i < cells; ++i) {
                cellStart_[i + 1] += cellStart_[i];
            }
            cellTriangles_.resize(cellStart_[cells]);
            fill.assign(cellStart_.begin(), cellStart_.end() - 1);
        }
        for (std::size_t f = 0; f < c.triangles.size(); ++f) {
            cellRange(f, lo, hi);
            for (int k = lo.z(); k <= hi.z(); ++k) {
                for (int j = lo.y(); j <= hi.y(); ++j) {
                    for (int i = lo.x(); i <= hi.x(); ++i) {
                        const std::size_t cell =
                            (std::size_t(k) * dims_.y() + std::size_t(j)) * dims_.x() +
                            std::size_t(i);
                        if (pass == 0) {
                            ++cellStart_[cell + 1];
                        } else {
                            cellTriangles_[fill[cell]++] = Index(f);
                        }
                    }
                }
            }
        }
    }
}

template <class F> void MovingMeshCollider::visit(const Bounds& box, F&& f) const {
    if ((box.min.array() > bounds_.max.array()).any() ||
        (box.max.array() < bounds_.min.array()).any()) {
        return;
    }
    Eigen::Vector3i lo, hi;
    for (int a = 0; a < 3; ++a) {
        lo[a] = cellOf(box.min[a] - bounds_.min[a], inverseCell_, dims_[a]);
        hi[a] = cellOf(box.max[a] - bounds_.min[a], inverseCell_, dims_[a]);
    }
    // A triangle in several cells is visited once: each visit stamps the triangles it saw
    // (a thread's stamps, a new stamp per visit). The callers break ties by triangle index, so
    // the order they come in does not matter.
    thread_local Marks seen;
    seen.begin(triangles_->size());
    const auto cellOf = [&](int i, int j, int k) {
        return (std::size_t(k) * dims_.y() + std::size_t(j)) * dims_.x() + std::size_t(i);
    };
    const auto visitCell = [&](std::size_t cell) {
        for (Index c = cellStart_[cell]; c < cellStart_[cell + 1]; ++c) {
            const Index t = cellTriangles_[c];
            if (seen.mark(t)) {
                f(t);
            }
        }
    };
    // The box's middle cell first: its triangles are the likely nearest, and a near best lets
    // the closest-point search skip most of the rest by their bounding boxes.
    visitCell(cellOf((lo.x() + hi.x()) / 2, (lo.y() + hi.y()) / 2, (lo.z() + hi.z()) / 2));
    for (int k = lo.z(); k <= hi.z(); ++k) {
        for (int j = lo.y(); j <= hi.y(); ++j) {
            for (int i = lo.x(); i <= hi.x(); ++i) {
                visitCell(cellOf(i, j, k));
            }
        }
    }
}

Vec3 MovingMeshCollider::vertexNormal(Index v) const {
    // This thread's normals of this build so far: a cache per collider it searched lately (at
    // most four; the one least lately built gives way to another).
    struct Cache {
        const MovingMeshCollider* owner = nullptr;
        std::uint64_t generation = 0;    // of the owner's build it last served
        std::vector<std::uint64_t> made; // per vertex: the build its normal is of
        std::vector<Vec3> normal;
    };
    constexpr std::size_t kCaches = 4;
    thread_local std::vector<Cache> caches;
    Cache* cache = nullptr;
    for (Cache& candidate : caches) {
        if (candidate.owner == this) {
            cache = &candidate;
        }
    }
    if (cache == nullptr) {
        if (caches.size() < kCaches) {
            cache = &caches.emplace_back();
        } else {
            cache = &*std::min_element(
                caches.begin(), caches.end(),
                [](const Cache& a, const Cache& b) { return a.generation < b.generation; });
        }
        cache->owner = this;
        cache->made.clear();
    }
    cache->generation = generation_;
    const std::size_t n = vertices_->size();
    if (cache->made.size() != n) {
        cache->made.assign(n, 0);
        cache->normal.resize(n);
    }
    if (cache->made[v] == generation_) {
        return cache->normal[v];
    }
    // The corners' angles times their faces' normals, summed face by face: as every vertex's
    // normal was made in the build before.
    const auto& x = *vertices_;
    Vec3 sum = Vec3::Zero();
    for (Index i = cornerStart_[v]; i < cornerStart_[v + 1]; ++i) {
        const Index f = cornerOf_[i] / 3;
        const int k = int(cornerOf_[i] % 3);
        const Triangle& t = (*triangles_)[f];
        const Vec3 e1 = x[t[(k + 1) % 3]] - x[t[k]], e2 = x[t[(k + 2) % 3]] - x[t[k]];
        const Real l1 = e1.norm(), l2 = e2.norm();
        if (l1 > 0 && l2 > 0) {
            const Real angle = std::acos(std::clamp(e1.dot(e2) / (l1 * l2), Real(-1), Real(1)));
            sum += angle * faceNormals_[f];
        }
    }
    const Real len = sum.norm();
    const Vec3 normal = len > 0 ? Vec3(sum / len) : Vec3::Zero();
    cache->made[v] = generation_;
    cache->normal[v] = normal;
    return normal;
}

Vec3 MovingMeshCollider::velocityAt(const Triangle& t, const Vec3& w) const {
    if (velocities_ == nullptr) {
        return Vec3::Zero();
    }
    const auto& v = *velocities_;
    return w[0] * v[t[0]] + w[1] * v[t[1]] + w[2] * v[t[2]];
}

bool MovingMeshCollider::closest(const Vec3& x, Real reach, SurfacePoint& s, Vec3& velocity,
                                 Real deepest) const {
    if (empty()) {
        return false;
    }
    const auto& vx = *vertices_;
    Bounds box;
    box.add(x - Vec3::Constant(reach));
    box.add(x + Vec3::Constant(reach));
    Real best = reach * reach;
    Index bestTriangle = 0;
    Vec3 bestW = Vec3::Zero();
    bool found = false;
    visit(box, [&](Index f) {
        // No nearer than its bounding box: farther than the best so far, it cannot win (a tie
        // still can, by index).
        const Vec3 gap = (faceMin_[f] - x).cwiseMax(x - faceMax_[f]).cwiseMax(0.0);
        if (gap.squaredNorm() > best) {
            return;
        }
        const Triangle& t = (*triangles_)[f];
        // No nearer than its plane either (a little slack: the plane's distance is rounded
        // otherwise than the point's, and a tie must still be seen).
        const Real plane = (x - vx[t[0]]).dot(faceNormals_[f]);
        if (plane * plane > best * (1 + 1e-9) + 1e-30) {
            return;
        }
        const Vec3 w = closestBarycentric(x, vx[t[0]], vx[t[1]], vx[t[2]]);
        const Vec3 q = w[0] * vx[t[0]] + w[1] * vx[t[1]] + w[2] * vx[t[2]];
        const Real d = (x - q).squaredNorm();
        // Ties (a shared edge or corner) go to the lower index, whatever order the cells gave.
        if (d < best || (found && d == best && f < bestTriangle)) {
            best = d;
            bestTriangle = f;
            bestW = w;
            found = true;
        }
    });
    if (!found) {
        return false;
    }
    const Triangle& t = (*triangles_)[bestTriangle];
    s.point = bestW[0] * vx[t[0]] + bestW[1] * vx[t[1]] + bestW[2] * vx[t[2]];
    // The pseudo-normal of the closest feature: the face's inside it, the vertex normals
    // interpolated on its edges and corners.
    const Real inner = 1e-9;
    Vec3 pseudo = faceNormals_[bestTriangle];
    if (bestW.minCoeff() <= inner) {
        const Vec3 blend = bestW[0] * vertexNormal(t[0]) + bestW[1] * vertexNormal(t[1]) +
                           bestW[2] * vertexNormal(t[2]);
        if (blend.squaredNorm() > 0) {
            pseudo = blend.normalized();
        }
    }
    bool rim = false;
    if (bestW.minCoeff() <= inner) {
        for (int k = 0; k < 3; ++k) {
            rim = rim || (bestW[k] > inner && border_[t[k]] != 0);
        }
    }
    const Vec3 offset = x - s.point;
    const Real d = offset.norm();
    const bool inside = !rim && offset.dot(pseudo) < 0 && d <= deepest;
    s.distance = inside ? -d : d;
    s.normal = d > 1e-12 ? Vec3((inside ? -1.0 : 1.0) * offset / d) : pseudo;
    velocity = velocityAt(t, bestW);
    return true;
}

bool MovingMeshCollider::contact(const Vec3& x, const Vec3& p, Real margin, Vec3& q, Vec3& n,
                                 Vec3& velocity, Real* clearance, Real deepest) const {
    // As contactFor: where x starts near the surface (or inside, up to the reach), the closest
    // point; where the path enters through a front face, the entry; where p ends near it, its
    // closest point. "Near" is the margin plus as much again or the path's length: the
    // constraint C >= 0 acts only when violated, so a contact found early costs nothing, but
    // one not found lets the other constraints (cloth hanging over an edge) pull the particle
    // through the surface after the search.
    const Real d0 = (p - x).norm();
    const Real near = margin + std::max(margin, d0);
    // How far to search: the reach, or, where the particle can be no deeper inside than
    // `deepest`, only as far as that and the contact distance (a little slack for rounding):
    // nothing farther can be a contact, nor be inside. Found nothing there, the point is outside
    // by more than that.
    const Real reach = near + reach_;
    const Real radius = std::min(reach, std::max(near, deepest) * (1 + 1e-9) + 1e-12);
    SurfacePoint s;
    const bool found = closest(x, radius, s, velocity, deepest);
    // What the search of x saw (as `clearance` says): outside by this much (a bounded search
    // that found nothing: at least the radius), inside or on it (0), nothing within the reach.
    const Real seen = found ? std::max<Real>(s.distance, 0) : radius < reach ? radius : -reach;
    if (clearance != nullptr) {
        *clearance = seen;
    }
    if (found && s.distance < near) {
        q = s.point;
        n = s.normal;
        return true;
    }
    const Vec3 d = p - x;
    Bounds path;
    path.add(x);
    path.add(p);
    Real best = 2;
    Index hitTriangle = 0;
    Vec3 hitW = Vec3::Zero();
    const auto& vx = *vertices_;
    visit(path, [&](Index f) {
        const Triangle& t = (*triangles_)[f];
        if (faceNormals_[f].dot(d) >= 0) {
            return; // only entering through a front face
        }
        Vec3 w;
        const Real hit = rayTriangle(x, d, vx[t[0]], vx[t[1]], vx[t[2]], &w);
        if (hit >= 0 && hit <= 1 && (hit < best || (hit == best && f < hitTriangle))) {
            best = hit;
            hitTriangle = f;
            hitW = w;
        }
    });
    if (best <= 1) {
        q = x + best * d;
        n = faceNormals_[hitTriangle];
        velocity = velocityAt((*triangles_)[hitTriangle], hitW);
        return true;
    }
    // p is no nearer the surface than x less the path: beyond the contact distance and the
    // depth it may be inside, its search cannot find a contact (the same answer without it;
    // a little slack for the distances' rounding).
    if (seen - d0 > std::max(deepest, near) * (1 + 1e-9) + 1e-12) {
        return false;
    }
    if (closest(p, radius, s, velocity, deepest) && s.distance < near) {
        q = s.point;
        n = s.normal;
        return true;
    }
    return false;
}

} // namespace pbd
