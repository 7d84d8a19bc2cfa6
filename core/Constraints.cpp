#include "core/Constraints.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <numeric>
#include <type_traits>

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
    case ConstraintType::Attachment:
        return "attachment";
    }
    return "unknown";
}

namespace {

template <int N, int K>
void pushCommon(ConstraintBatch<N, K>& b, const std::type_identity_t<std::array<Index, N>>& p) {
    b.particles.push_back(p);
    for (int k = 0; k < K; ++k) {
        b.compliance[k].push_back(0);
        b.stiffness[k].push_back(1);
        b.lambda[k].push_back(0);
    }
    b.colourOffsets.clear();
}

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
}

void permuteBatch(DistanceConstraints& b, const std::vector<Index>& o) {
    permuteCommon(b, o);
    permute(b.restLength, o);
}
void permuteBatch(BendingConstraints& b, const std::vector<Index>& o) {
    permuteCommon(b, o);
    permute(b.restAngle, o);
}
void permuteBatch(StrainTriangleConstraints& b, const std::vector<Index>& o) {
    permuteCommon(b, o);
    permute(b.qInverse, o);
    permute(b.rest, o);
}
void permuteBatch(StrainTetConstraints& b, const std::vector<Index>& o) {
    permuteCommon(b, o);
    permute(b.qInverse, o);
    permute(b.rest, o);
}
void permuteBatch(AreaConstraints& b, const std::vector<Index>& o) {
    permuteCommon(b, o);
    permute(b.restValue, o);
}
void permuteBatch(VolumeConstraints& b, const std::vector<Index>& o) {
    permuteCommon(b, o);
    permute(b.restValue, o);
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

template <class Batch>
void colourBatch(Batch& batch, ColourUse& use, std::vector<int>& colours, int& colourCount) {
    colours.assign(batch.size(), 0);
    for (std::size_t e = 0; e < batch.size(); ++e) {
        const int c = use.firstFree(batch.particles[e]);
        use.take(batch.particles[e], c);
        colours[e] = c;
        colourCount = std::max(colourCount, c + 1);
    }
}

template <class Batch>
void sortByColour(Batch& batch, const std::vector<int>& colours, int colourCount) {
    std::vector<Index> order(batch.size());
    std::iota(order.begin(), order.end(), Index(0));
    std::stable_sort(order.begin(), order.end(),
                     [&](Index a, Index b) { return colours[a] < colours[b]; });
    permuteBatch(batch, order);
    batch.colourOffsets.assign(static_cast<std::size_t>(colourCount) + 1, 0);
    for (int c : colours) {
        ++batch.colourOffsets[static_cast<std::size_t>(c) + 1];
    }
    std::partial_sum(batch.colourOffsets.begin(), batch.colourOffsets.end(),
                     batch.colourOffsets.begin());
}

template <class F> void forEachBatch(ConstraintSet& s, F&& f) {
    f(s.distance);
    f(s.bending);
    f(s.strainTriangles);
    f(s.strainTets);
    f(s.area);
    f(s.volume);
}
template <class F> void forEachBatch(const ConstraintSet& s, F&& f) {
    f(s.distance);
    f(s.bending);
    f(s.strainTriangles);
    f(s.strainTets);
    f(s.area);
    f(s.volume);
}

} // namespace

void DistanceConstraints::add(Index a, Index b, Real rest, Real alpha, Real k) {
    pushCommon(*this, {a, b});
    restLength.push_back(rest);
    compliance[0].back() = alpha;
    stiffness[0].back() = k;
}

void BendingConstraints::add(const std::array<Index, 4>& p, Real rest, Real alpha, Real k) {
    pushCommon(*this, p);
    restAngle.push_back(rest);
    compliance[0].back() = alpha;
    stiffness[0].back() = k;
}

void Attachments::add(Index p, const Vec3& t, Real alpha, const Vec3& velocity) {
    particle.push_back(p);
    target.push_back(t);
    targetVelocity.push_back(velocity);
    compliance.push_back(alpha);
    lambda.push_back(0);
}

std::size_t ConstraintSet::elementCount() const {
    std::size_t n = attachments.size();
    forEachBatch(*this, [&](const auto& b) { n += b.size(); });
    return n;
}

std::size_t ConstraintSet::componentCount() const {
    std::size_t n = attachments.size();
    forEachBatch(*this, [&](const auto& b) { n += b.componentCount(); });
    return n;
}

void colourConstraints(ConstraintSet& set, std::size_t particleCount) {
    ColourUse use(particleCount);
    int count = 0;
    // Colour the expensive elements first so they spread over the early, large colours.
    std::vector<int> cTets, cTris, cVol, cArea, cBend, cDist;
    colourBatch(set.strainTets, use, cTets, count);
    colourBatch(set.volume, use, cVol, count);
    colourBatch(set.strainTriangles, use, cTris, count);
    colourBatch(set.area, use, cArea, count);
    colourBatch(set.bending, use, cBend, count);
    colourBatch(set.distance, use, cDist, count);
    sortByColour(set.strainTets, cTets, count);
    sortByColour(set.volume, cVol, count);
    sortByColour(set.strainTriangles, cTris, count);
    sortByColour(set.area, cArea, count);
    sortByColour(set.bending, cBend, count);
    sortByColour(set.distance, cDist, count);
    set.colourCount = count;
}

bool coloursAreIndependent(const ConstraintSet& set, std::size_t particleCount) {
    std::vector<int> lastColour(particleCount, -1);
    for (int c = 0; c < set.colourCount; ++c) {
        bool ok = true;
        forEachBatch(set, [&](const auto& b) {
            if (b.colourOffsets.size() != static_cast<std::size_t>(set.colourCount) + 1) {
                ok = ok && b.size() == 0;
                return;
            }
            for (Index e = b.colourOffsets[c]; e < b.colourOffsets[c + 1]; ++e) {
                for (Index p : b.particles[e]) {
                    ok = ok && lastColour[p] != c;
                    lastColour[p] = c;
                }
            }
        });
        if (!ok) {
            return false;
        }
    }
    return true;
}

} // namespace pbd
