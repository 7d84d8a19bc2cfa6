#include "core/constraints/Constraints.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <numeric>

namespace pbd {

std::string_view toString(ConstraintType type) {
    switch (type) {
    case ConstraintType::Distance:
        return "distance";
    case ConstraintType::DihedralBending:
        return "dihedral";
    case ConstraintType::StrainTriangle:
        return "strain_triangle";
    case ConstraintType::StrainTet:
        return "strain_tet";
    case ConstraintType::Area:
        return "area";
    case ConstraintType::Volume:
        return "volume";
    case ConstraintType::PlanarArea:
        return "planar_area";
    case ConstraintType::Attachment:
        return "attachment";
    case ConstraintType::Pressure:
        return "pressure";
    }
    return "unknown";
}

std::string_view toString(BendingModel model) {
    switch (model) {
    case BendingModel::Bridson:
        return "bridson";
    case BendingModel::PbdAppendix:
        return "pbd-appendix";
    case BendingModel::Isometric:
        return "isometric";
    }
    return "bridson";
}

std::optional<BendingModel> bendingModelFromString(std::string_view name) {
    for (BendingModel m :
         {BendingModel::Bridson, BendingModel::PbdAppendix, BendingModel::Isometric}) {
        if (name == toString(m)) {
            return m;
        }
    }
    return std::nullopt;
}

namespace {

template <class T> void permute(std::vector<T>& v, const std::vector<Index>& order) {
    std::vector<T> out;
    out.reserve(v.size());
    for (Index i : order) {
        out.push_back(v[i]);
    }
    v = std::move(out);
}
template <class T, std::size_t M>
void permute(std::array<std::vector<T>, M>& arrays, const std::vector<Index>& order) {
    for (auto& v : arrays) {
        permute(v, order);
    }
}

template <int N, int K>
void permuteCommon(ConstraintBatch<N, K>& b, const std::vector<Index>& order) {
    permute(b.particles, order);
    permute(b.compliance, order);
    permute(b.stiffness, order);
    permute(b.lambda, order);
    permute(b.colour, order);
    permute(b.group, order);
    permute(b.measure, order);
    for (auto& scale : b.pbdScale) {
        if (!scale.empty()) {
            permute(scale, order);
        }
    }
}

// Per particle, the set of colours already used by a constraint touching it. Up to 64 colours
// fit a bit mask; beyond that the overflow list is searched.
class ColourUse {
public:
    explicit ColourUse(std::size_t particles)
        : mask_(particles, 0)
        , overflow_(particles) {}

    template <std::size_t N> int firstFree(const std::array<Index, N>& p) const {
        std::uint64_t used = 0;
        for (Index i : p) {
            used |= mask_[i];
        }
        if (~used != 0) {
            return std::countr_zero(~used);
        }
        for (int c = 64;; ++c) {
            bool free = true;
            for (Index i : p) {
                const auto& o = overflow_[i];
                free = free && std::find(o.begin(), o.end(), c) == o.end();
            }
            if (free) {
                return c;
            }
        }
    }
    // The free colour below `limit` with the least work so far, so colours come out even (and,
    // for meshes numbered in space, spread evenly over the body); first-fit when none is free.
    template <std::size_t N>
    int leastLoadedFree(const std::array<Index, N>& p, const std::vector<double>& load,
                        int limit) const {
        std::uint64_t used = 0;
        for (Index i : p) {
            used |= mask_[i];
        }
        int best = -1;
        for (int c = 0; c < std::min(limit, 64); ++c) {
            if ((used & (std::uint64_t(1) << c)) == 0 && (best < 0 || load[c] < load[best])) {
                best = c;
            }
        }
        return best >= 0 ? best : firstFree(p);
    }

    template <std::size_t N> void take(const std::array<Index, N>& p, int colour) {
        for (Index i : p) {
            if (colour < 64) {
                mask_[i] |= std::uint64_t(1) << colour;
            } else {
                overflow_[i].push_back(colour);
            }
        }
    }

private:
    std::vector<std::uint64_t> mask_;
    std::vector<std::vector<int>> overflow_;
};

// limit = 0: first-fit; otherwise balanced over `limit` colours, `load` the work per colour.
template <class Batch>
void colourBatch(Batch& batch, ColourUse& use, std::vector<int>& colours, int& colourCount,
                 std::vector<double>& load, double cost, int limit) {
    colours.assign(batch.size(), 0);
    for (std::size_t e = 0; e < batch.size(); ++e) {
        const int c = limit > 0 ? use.leastLoadedFree(batch.particles[e], load, limit)
                                : use.firstFree(batch.particles[e]);
        use.take(batch.particles[e], c);
        colours[e] = c;
        colourCount = std::max(colourCount, c + 1);
        if (static_cast<std::size_t>(c) >= load.size()) {
            load.resize(static_cast<std::size_t>(c) + 1, 0.0);
        }
        load[static_cast<std::size_t>(c)] += cost;
    }
}

template <class Batch>
void sortByColour(Batch& batch, const std::vector<int>& colours, int colourCount) {
    std::vector<Index> order(batch.size());
    std::iota(order.begin(), order.end(), Index(0));
    std::stable_sort(order.begin(), order.end(),
                     [&](Index a, Index b) { return colours[a] < colours[b]; });
    batch.colour.assign(colours.begin(), colours.end());
    reorderElements(batch, order);
    batch.colourOffsets.assign(static_cast<std::size_t>(colourCount) + 1, 0);
    for (int c : colours) {
        ++batch.colourOffsets[static_cast<std::size_t>(c) + 1];
    }
    std::partial_sum(batch.colourOffsets.begin(), batch.colourOffsets.end(),
                     batch.colourOffsets.begin());
}

} // namespace

void reorderElements(DistanceConstraints& b, const std::vector<Index>& o) {
    permuteCommon(b, o);
    permute(b.restLength, o);
}
void reorderElements(BendingConstraints& b, const std::vector<Index>& o) {
    permuteCommon(b, o);
    permute(b.restAngle, o);
    if (b.model == BendingModel::Isometric) {
        permute(b.weight, o);
        permute(b.lambdaYZ, o);
    }
}
void reorderElements(StrainTriangleConstraints& b, const std::vector<Index>& o) {
    permuteCommon(b, o);
    permute(b.qInverse, o);
    permute(b.rest, o);
}
void reorderElements(StrainTetConstraints& b, const std::vector<Index>& o) {
    permuteCommon(b, o);
    permute(b.qInverse, o);
    permute(b.rest, o);
}
void reorderElements(AreaConstraints& b, const std::vector<Index>& o) {
    permuteCommon(b, o);
    permute(b.restValue, o);
}
void reorderElements(VolumeConstraints& b, const std::vector<Index>& o) {
    permuteCommon(b, o);
    permute(b.restValue, o);
}
void reorderElements(PlanarAreaConstraints& b, const std::vector<Index>& o) {
    permuteCommon(b, o);
    permute(b.restValue, o);
}

void DistanceConstraints::add(Index a, Index b, Real rest, Real alpha, Real k) {
    setMaterial(addElement({a, b}), 0, alpha, k);
    restLength.push_back(rest);
}

void BendingConstraints::add(const std::array<Index, 4>& p, Real rest, Real alpha, Real k) {
    setMaterial(addElement(p), 0, alpha, k);
    restAngle.push_back(rest);
}

void BendingConstraints::addIsometric(const std::array<Index, 4>& p,
                                      const std::array<Real, 3>& weights, Real rest, Real alpha,
                                      Real k) {
    add(p, rest, alpha, k);
    for (int i = 0; i < 3; ++i) {
        weight[i].push_back(weights[i]);
    }
    lambdaYZ[0].push_back(0);
    lambdaYZ[1].push_back(0);
}

void Attachments::add(Index p, const Vec3& t, Real alpha, const Vec3& velocity) {
    particle.push_back(p);
    target.push_back(t);
    targetVelocity.push_back(velocity);
    compliance.push_back(alpha);
    lambda.push_back(0);
    group.push_back(-1);
}

std::size_t ConstraintSet::batchElementCount() const {
    std::size_t n = 0;
    forEachBatch(*this, [&](const auto& b) { n += b.size(); });
    return n;
}

std::size_t ConstraintSet::elementCount() const {
    return batchElementCount() + attachments.size() + pressure.size();
}

std::size_t ConstraintSet::componentCount() const {
    std::size_t n = attachments.size() + pressure.size();
    forEachBatch(*this, [&](const auto& b) { n += b.componentCount(); });
    return n;
}

void colourConstraints(ConstraintSet& set, std::size_t particleCount) {
    // Two passes: first-fit finds how many colours the constraints need; the second spreads them
    // evenly over that many, so no colour is a sliver that costs a synchronisation and does
    // little work. Expensive elements go first, with the relative costs of the kernels.
    std::vector<int> cTets, cTris, cVol, cArea, cPlanar, cBend, cDist;
    int count = 0;
    int limit = 0;
    for (int pass = 0; pass < 2; ++pass) {
        ColourUse use(particleCount);
        std::vector<double> load(static_cast<std::size_t>(limit), 0.0);
        count = 0;
        colourBatch(set.strainTets, use, cTets, count, load, 16, limit);
        colourBatch(set.volume, use, cVol, count, load, 3, limit);
        colourBatch(set.strainTriangles, use, cTris, count, load, 6, limit);
        colourBatch(set.area, use, cArea, count, load, 2, limit);
        colourBatch(set.planarArea, use, cPlanar, count, load, 1, limit);
        colourBatch(set.bending, use, cBend, count, load, 4, limit);
        colourBatch(set.distance, use, cDist, count, load, 1, limit);
        limit = count;
    }
    sortByColour(set.strainTets, cTets, count);
    sortByColour(set.volume, cVol, count);
    sortByColour(set.strainTriangles, cTris, count);
    sortByColour(set.area, cArea, count);
    sortByColour(set.planarArea, cPlanar, count);
    sortByColour(set.bending, cBend, count);
    sortByColour(set.distance, cDist, count);
    set.colourCount = count;
    set.colouredElements = set.batchElementCount();
}

void sortByColour(ConstraintSet& set) {
    if (!set.isColoured()) {
        return;
    }
    forEachBatch(set, [&](auto& b) {
        const std::vector<int> colours = b.colour;
        sortByColour(b, colours, set.colourCount);
    });
}

bool ConstraintSet::isColoured() const {
    return colourCount > 0 && colouredElements == batchElementCount();
}

ColourRegions partitionColours(ConstraintSet& set, std::size_t particleCount, int regions) {
    ColourRegions out;
    out.regions = std::max(1, regions);
    const int R = out.regions;
    const std::size_t n = particleCount;
    // Owner of each particle: R equal ranges of particle indices. Contiguous ranges keep each
    // thread's particles in its own cache lines (spatial slabs cut across the storage order of a
    // row-major sheet and made every colour bounce the lines at the cut between the cores: 3x
    // slower). Meshes numbered in space (generated ones, TetGen's output) get compact regions.
    std::vector<int> owner(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
        owner[i] = static_cast<int>(i * static_cast<std::size_t>(R) / std::max<std::size_t>(n, 1));
    }
    out.colours = set.colourCount;
    const int colours = set.colourCount;
    int batchIndex = 0;
    forEachBatch(set, [&](auto& b) {
        auto& offsets = out.offsets[static_cast<std::size_t>(batchIndex++)];
        offsets.assign(static_cast<std::size_t>(R + 1) * colours + 1, 0);
        if (b.size() == 0) {
            return;
        }
        // Bucket index of each element: class-major, then colour.
        std::vector<std::size_t> bucket(b.size());
        std::vector<Index> counts(offsets.size(), 0);
        for (std::size_t e = 0; e < b.size(); ++e) {
            const int first = owner[b.particles[e][0]];
            bool same = true;
            for (Index p : b.particles[e]) {
                same = same && owner[p] == first;
            }
            const int cls = same ? first : R;
            bucket[e] =
                static_cast<std::size_t>(cls) * colours + static_cast<std::size_t>(b.colour[e]);
            ++counts[bucket[e] + 1];
        }
        std::partial_sum(counts.begin(), counts.end(), offsets.begin());
        std::vector<Index> order(b.size());
        std::iota(order.begin(), order.end(), Index(0));
        std::stable_sort(order.begin(), order.end(),
                         [&](Index x, Index y) { return bucket[x] < bucket[y]; });
        reorderElements(b, order);
        b.colourOffsets.clear();
    });
    return out;
}

bool coloursAreIndependent(const ConstraintSet& set, std::size_t particleCount) {
    // By each element's colour, so it holds in colour order and after partitionColours.
    std::vector<std::vector<std::pair<int, Index>>> byColour(
        static_cast<std::size_t>(std::max(set.colourCount, 0)));
    bool ok = true;
    int batchIndex = 0;
    forEachBatch(set, [&](const auto& b) {
        const int index = batchIndex++;
        if (b.colour.size() != b.size()) {
            ok = false;
            return;
        }
        for (std::size_t e = 0; e < b.size(); ++e) {
            const int c = b.colour[e];
            if (c < 0 || c >= set.colourCount) {
                ok = false;
                return;
            }
            byColour[static_cast<std::size_t>(c)].emplace_back(index, static_cast<Index>(e));
        }
    });
    std::vector<int> lastColour(particleCount, -1);
    int batch = 0;
    for (int c = 0; ok && c < set.colourCount; ++c) {
        for (const auto& entry : byColour[static_cast<std::size_t>(c)]) {
            const int bi = entry.first; // named, not bound: clang 14 cannot capture bindings
            const Index e = entry.second;
            batch = 0;
            forEachBatch(set, [&](const auto& b) {
                if (batch++ != bi) {
                    return;
                }
                for (Index p : b.particles[e]) {
                    ok = ok && lastColour[p] != c;
                    lastColour[p] = c;
                }
            });
        }
    }
    return ok;
}

} // namespace pbd
