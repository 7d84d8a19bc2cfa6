#include "core/scene/Embedding.h"

#include "core/solver/SelfCollision.h"

#include <algorithm>
#include <cmath>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace pbd {

void embeddedPositions(const EmbeddedMesh& mesh, const std::vector<Vec3>& positions,
                       std::vector<Vec3>& out) {
    const std::size_t n = mesh.corners.size();
    out.resize(n);
    const auto carry = [&](std::size_t begin, std::size_t end) {
        for (std::size_t v = begin; v < end; ++v) {
            const Tetrahedron& c = mesh.corners[v];
            const std::array<Real, 4>& w = mesh.weights[v];
            out[v] = w[0] * positions[c[0]] + w[1] * positions[c[1]] + w[2] * positions[c[2]] +
                     w[3] * positions[c[3]];
        }
    };
    if (n < 20000) {
        carry(0, n);
        return;
    }
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 4096),
                      [&](const tbb::blocked_range<std::size_t>& r) { carry(r.begin(), r.end()); });
}

namespace {

// A uniform grid over the tets' boxes: each cell lists the tets whose box touches it.
class TetGrid {
public:
    TetGrid(const std::vector<Vec3>& x, const std::vector<Tetrahedron>& tets) {
        Bounds all;
        for (const Tetrahedron& t : tets) {
            for (Index v : t) {
                all.add(x[v]);
            }
        }
        min_ = all.min;
        const Vec3 size = all.size().cwiseMax(1e-12);
        // About two tets per cell, at most 8 million cells.
        const double cells = std::clamp(double(tets.size()) / 2, 1.0, 8e6);
        h_ = std::cbrt(size.prod() / cells);
        h_ = std::max(h_, size.maxCoeff() / 400);
        for (int a = 0; a < 3; ++a) {
            n_[a] = std::max(1, int(std::ceil(size[a] / h_)));
        }
        start_.assign(std::size_t(n_[0]) * n_[1] * n_[2] + 1, 0);
        const auto visit = [&](const Tetrahedron& t, auto&& f) {
            Bounds b;
            for (Index v : t) {
                b.add(x[v]);
            }
            const std::array<int, 3> lo = cell(b.min), hi = cell(b.max);
            for (int k = lo[2]; k <= hi[2]; ++k) {
                for (int j = lo[1]; j <= hi[1]; ++j) {
                    for (int i = lo[0]; i <= hi[0]; ++i) {
                        f(index(i, j, k));
                    }
                }
            }
        };
        for (const Tetrahedron& t : tets) {
            visit(t, [&](std::size_t c) { ++start_[c + 1]; });
        }
        for (std::size_t c = 1; c < start_.size(); ++c) {
            start_[c] += start_[c - 1];
        }
        items_.resize(start_.back());
        std::vector<std::size_t> fill(start_.begin(), start_.end() - 1);
        for (std::size_t t = 0; t < tets.size(); ++t) {
            visit(tets[t], [&](std::size_t c) { items_[fill[c]++] = std::uint32_t(t); });
        }
    }

    // The cell of p, clamped into the grid.
    std::array<int, 3> cell(const Vec3& p) const {
        std::array<int, 3> c{};
        for (int a = 0; a < 3; ++a) {
            const double f = std::floor((p[a] - min_[a]) / h_);
            c[a] = int(std::clamp(f, 0.0, double(n_[a] - 1)));
        }
        return c;
    }
    bool contains(const Vec3& p) const {
        for (int a = 0; a < 3; ++a) {
            if (!(p[a] >= min_[a] && p[a] <= min_[a] + n_[a] * h_)) {
                return false;
            }
        }
        return true;
    }
    std::size_t index(int i, int j, int k) const {
        return (std::size_t(k) * n_[1] + j) * n_[0] + i;
    }
    template <typename F> void forEach(std::size_t c, F&& f) const {
        for (std::size_t i = start_[c]; i < start_[c + 1]; ++i) {
            f(items_[i]);
        }
    }
    double cellSize() const { return h_; }
    const std::array<int, 3>& dims() const { return n_; }

private:
    Vec3 min_;
    double h_ = 1;
    std::array<int, 3> n_{1, 1, 1};
    std::vector<std::size_t> start_;
    std::vector<std::uint32_t> items_;
};

// The point of tet t closest to p (p is outside it): its weights and squared distance.
std::pair<std::array<Real, 4>, Real> closestInTet(const std::vector<Vec3>& x, const Tetrahedron& t,
                                                  const Vec3& p) {
    static constexpr int kFaces[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};
    std::array<Real, 4> best{};
    Real bestDistance = std::numeric_limits<Real>::infinity();
    for (const auto& f : kFaces) {
        const Vec3 w = closestBarycentric(p, x[t[f[0]]], x[t[f[1]]], x[t[f[2]]]);
        const Vec3 q = w[0] * x[t[f[0]]] + w[1] * x[t[f[1]]] + w[2] * x[t[f[2]]];
        const Real d = (p - q).squaredNorm();
        if (d < bestDistance) {
            bestDistance = d;
            best = {0, 0, 0, 0};
            for (int k = 0; k < 3; ++k) {
                best[std::size_t(f[k])] = w[k];
            }
        }
    }
    return {best, bestDistance};
}

} // namespace

TetBinding bindToTets(const std::vector<Vec3>& x, const std::vector<Tetrahedron>& tets,
                      const std::vector<Vec3>& points) {
    TetBinding b;
    b.corners.resize(points.size());
    b.weights.resize(points.size());
    if (tets.empty()) {
        return b;
    }
    const TetGrid grid(x, tets);
    // Per tet: the inverse of its edge matrix, for barycentric coordinates.
    std::vector<Mat3> inverse(tets.size());
    tbb::parallel_for(std::size_t(0), tets.size(), [&](std::size_t t) {
        Mat3 e;
        e << x[tets[t][1]] - x[tets[t][0]], x[tets[t][2]] - x[tets[t][0]],
            x[tets[t][3]] - x[tets[t][0]];
        inverse[t] = e.inverse();
    });
    const auto weightsIn = [&](std::uint32_t t, const Vec3& p) {
        const Vec3 w = inverse[t] * (p - x[tets[t][0]]);
        return std::array<Real, 4>{1 - w.x() - w.y() - w.z(), w.x(), w.y(), w.z()};
    };
    std::vector<Real> outsideDistance(points.size(), 0);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, points.size(), 1024), [&](const auto& r) {
        for (std::size_t i = r.begin(); i < r.end(); ++i) {
            const Vec3& p = points[i];
            // Inside: of the tets whose box holds p, the one p is deepest in (on a shared face
            // either would do; this choice does not depend on the order of the tets).
            Real deepest = -std::numeric_limits<Real>::infinity();
            std::uint32_t holder = 0;
            std::array<Real, 4> holderWeights{};
            if (grid.contains(p)) {
                const auto c = grid.cell(p);
                grid.forEach(grid.index(c[0], c[1], c[2]), [&](std::uint32_t t) {
                    const std::array<Real, 4> w = weightsIn(t, p);
                    const Real least = std::min({w[0], w[1], w[2], w[3]});
                    if (least > deepest || (least == deepest && t < holder)) {
                        deepest = least;
                        holder = t;
                        holderWeights = w;
                    }
                });
            }
            if (deepest >= -1e-12) {
                b.corners[i] = tets[holder];
                b.weights[i] = holderWeights;
                continue;
            }
            // Outside: the nearest tet, searched in rings of cells around p's (clamped) cell;
            // ring r's cells lie at least (r - 1) cells from it, and so from p.
            const auto c = grid.cell(p);
            const auto& n = grid.dims();
            const int rings = std::max({n[0], n[1], n[2]});
            Real best = std::numeric_limits<Real>::infinity();
            std::array<Real, 4> bestWeights{};
            std::uint32_t bestTet = 0;
            const auto consider = [&](std::uint32_t t) {
                const auto [w, d] = closestInTet(x, tets[t], p);
                if (d < best || (d == best && t < bestTet)) {
                    best = d;
                    bestTet = t;
                    bestWeights = w;
                }
            };
            for (int ring = 0; ring <= rings; ++ring) {
                for (int k = c[2] - ring; k <= c[2] + ring; ++k) {
                    for (int j = c[1] - ring; j <= c[1] + ring; ++j) {
                        for (int ii = c[0] - ring; ii <= c[0] + ring; ++ii) {
                            const bool shell = std::abs(k - c[2]) == ring ||
                                               std::abs(j - c[1]) == ring ||
                                               std::abs(ii - c[0]) == ring;
                            if (!shell || ii < 0 || j < 0 || k < 0 || ii >= n[0] || j >= n[1] ||
                                k >= n[2]) {
                                continue;
                            }
                            grid.forEach(grid.index(ii, j, k), consider);
                        }
                    }
                }
                const Real reach = ring * grid.cellSize();
                if (best <= reach * reach) {
                    break;
                }
            }
            b.corners[i] = tets[bestTet];
            b.weights[i] = bestWeights;
            outsideDistance[i] = std::sqrt(best);
        }
    });
    for (Real d : outsideDistance) {
        if (d > 0) {
            ++b.outside;
            b.largestOutsideDistance = std::max(b.largestOutsideDistance, d);
        }
    }
    return b;
}

std::vector<std::string> validateEmbedded(const EmbeddedMesh& mesh, std::size_t particleCount) {
    std::vector<std::string> problems;
    const std::string who = "embedded mesh '" + mesh.name + "': ";
    const std::size_t n = mesh.restPositions.size();
    if (mesh.corners.size() != n || mesh.weights.size() != n) {
        problems.push_back(who + std::to_string(n) + " vertices but " +
                           std::to_string(mesh.corners.size()) + " bindings and " +
                           std::to_string(mesh.weights.size()) + " weights");
        return problems;
    }
    for (std::size_t t = 0; t < mesh.triangles.size() && problems.empty(); ++t) {
        for (Index v : mesh.triangles[t]) {
            if (v >= n) {
                problems.push_back(who + "triangle " + std::to_string(t) + " uses vertex " +
                                   std::to_string(v) + " of " + std::to_string(n));
                break;
            }
        }
    }
    if (!mesh.triangleUVs.empty() && mesh.triangleUVs.size() != mesh.triangles.size()) {
        problems.push_back(who + std::to_string(mesh.triangleUVs.size()) + " UV triangles for " +
                           std::to_string(mesh.triangles.size()) + " triangles");
    }
    for (std::size_t v = 0; v < n; ++v) {
        const Tetrahedron& c = mesh.corners[v];
        const std::array<Real, 4>& w = mesh.weights[v];
        if (std::any_of(c.begin(), c.end(), [&](Index p) { return p >= particleCount; })) {
            problems.push_back(who + "vertex " + std::to_string(v) +
                               " is carried by a particle beyond the scene's " +
                               std::to_string(particleCount));
            break;
        }
        const Real sum = w[0] + w[1] + w[2] + w[3];
        if (!std::isfinite(sum) || std::abs(sum - 1) > 1e-9 || !mesh.restPositions[v].allFinite()) {
            problems.push_back(who + "vertex " + std::to_string(v) +
                               " has weights that are not finite or do not sum to 1");
            break;
        }
    }
    return problems;
}

} // namespace pbd
