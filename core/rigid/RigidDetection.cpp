// Contact detection for the rigid step: the broadphase's kept pairs, the narrowphase with the
// manifold cache (warm start by feature, the refresh of resting pairs, aggressive sleep), and
// the bodies' heights in the contact graph for stack stabilisation.
#include "core/base/InstructionSets.h"
#include "core/rigid/RigidStep.h"

#include <algorithm>
#include <cassert>
#include <climits>
#include <cmath>
#include <cstddef>

namespace pbd {

using namespace rigid;

namespace {

std::uint64_t pairKey(int bodyA, int shapeA, int bodyB, int shapeB) {
    return std::uint64_t(bodyA) << 44 | std::uint64_t(shapeA & 0xFFF) << 32 |
           std::uint64_t(bodyB) << 12 | std::uint64_t(shapeB & 0xFFF);
}

// Whether two bounding boxes overlap (touching counts).
bool boundsOverlap(const Bounds& a, const Bounds& b) {
    return !(b.min.x() > a.max.x() || a.min.x() > b.max.x() || b.min.y() > a.max.y() ||
             a.min.y() > b.max.y() || b.min.z() > a.max.z() || a.min.z() > b.max.z());
}

} // namespace

// Broadphase (Box2D's fat bounds, on a uniform grid): each shape keeps bounds enlarged by a
// tenth of its size, and the pairs of shapes whose enlarged bounds overlap are kept from step
// to step. Only a shape whose bounds left its enlarged ones is enlarged again and paired
// afresh, through a grid of cells twice as large as the typical shape: it meets those filed in
// its own and the 26 neighbouring cells, and the large ones (a ground), which meet all. The
// candidates are the kept pairs whose bounds overlap: the same as testing every pair.
void RigidSolver::broadphase(const std::vector<RigidBody>& bodies,
                             const std::vector<RigidJoint>& joints, const RigidSettings& settings,
                             ThreadTeam* team) {
    const int n = int(bodies.size());
    const Vec3 fatten = Vec3::Constant(0.5 * settings.contactMargin);
    // Each body's first proxy: the bodies' proxies are worked out in parts on the team's threads
    // (on one, pyramid-100's 5,050 boxes took 0.15 ms a step).
    std::vector<std::uint32_t>& first = proxyFirst_;
    first.resize(std::size_t(n) + 1);
    std::size_t count = 0;
    for (int i = 0; i < n; ++i) {
        first[std::size_t(i)] = std::uint32_t(count);
        count += bodies[i].shapes.size();
    }
    first[std::size_t(n)] = std::uint32_t(count);
    const bool sized = proxyPairsValid_ && proxies_.size() == count;
    proxies_.resize(count);
    reproxied_.resize(count);
    const auto within = [](const Bounds& inner, const Bounds& outer) {
        return (inner.min.array() >= outer.min.array()).all() &&
               (inner.max.array() <= outer.max.array()).all();
    };
    // Per part: whether every proxy is the same body's same shape as last step, and whether
    // any was enlarged again.
    std::vector<std::uint8_t> sameIn(mostParts(team), 1), movedIn(mostParts(team), 0);
    inParts(team, std::size_t(n), 512, [&](int part, std::size_t begin, std::size_t end) {
        bool same = sized, moved = false;
        for (std::size_t i = begin; i < end; ++i) {
            const RigidBody& body = bodies[i];
            // A body's record (about 400 bytes) and its shapes (an allocation of their own)
            // are read here once a step: fetched 16 and 8 bodies ahead. Without, the load of
            // the shapes' address and then of the shape missed the caches for every body
            // (pyramid-100: most of this loop; the detection 1.47 -> 1.27 ms on one thread).
            if (i + 16 < end) {
                __builtin_prefetch(&bodies[i + 16].shapes);
                __builtin_prefetch(&bodies[i + 16].x);
            }
            if (i + 8 < end) {
                __builtin_prefetch(bodies[i + 8].shapes.data());
                __builtin_prefetch(reinterpret_cast<const char*>(bodies[i + 8].shapes.data()) + 64);
                __builtin_prefetch(reinterpret_cast<const char*>(bodies[i + 8].shapes.data()) +
                                   128);
            }
            for (int s = 0; s < int(body.shapes.size()); ++s) {
                const std::size_t k = first[i] + std::size_t(s);
                BroadProxy& p = proxies_[k];
                const bool kept = sized && p.body == int(i) && p.shape == s;
                same = same && kept;
                p.body = int(i);
                p.shape = s;
                p.tight = shapeBounds(body, body.shapes[std::size_t(s)]);
                p.tight.min -= fatten;
                p.tight.max += fatten;
                const bool again = !kept || !within(p.tight, p.fat);
                if (again) {
                    const Vec3 grow = Vec3::Constant(0.1 * (p.tight.max - p.tight.min).maxCoeff());
                    p.fat = {p.tight.min - grow, p.tight.max + grow};
                    moved = true;
                }
                reproxied_[k] = again ? 1 : 0;
            }
        }
        sameIn[std::size_t(part)] = same;
        movedIn[std::size_t(part)] = moved;
    });
    const bool same = std::all_of(sameIn.begin(), sameIn.end(), [](std::uint8_t v) { return v; });
    const bool anyMoved =
        std::any_of(movedIn.begin(), movedIn.end(), [](std::uint8_t v) { return v; });
    if (!same) {
        std::fill(reproxied_.begin(), reproxied_.end(), 1);
        proxyPairs_.clear();
    }
    proxyPairsValid_ = true;
    if (anyMoved) { // every proxy when they are not the same
        repairProxies();
    }
    stats_.reproxied =
        std::size_t(std::count(reproxied_.begin(), reproxied_.end(), std::uint8_t(1)));

    std::vector<std::pair<int, int>> jointPairs;
    for (const RigidJoint& j : joints) {
        if (!j.collideConnected && j.bodyA >= 0 && j.bodyB >= 0) {
            jointPairs.push_back({std::min(j.bodyA, j.bodyB), std::max(j.bodyA, j.bodyB)});
        }
    }
    std::sort(jointPairs.begin(), jointPairs.end());
    // The kept pairs whose bounds overlap, in parts, each part's in order, then joined.
    std::vector<std::vector<Candidate>>& partCandidates = partCandidates_;
    partCandidates.resize(mostParts(team));
    const int parts =
        inParts(team, proxyPairs_.size(), 2048, [&](int part, std::size_t begin, std::size_t end) {
            // The part's own vector while it grows (its record beside the other parts' would
            // pass its cache line back and forth), its storage kept from step to step.
            std::vector<Candidate> out;
            out.swap(partCandidates[std::size_t(part)]);
            out.clear();
            for (std::size_t k = begin; k < end; ++k) {
                const ProxyPair& pair = proxyPairs_[k];
                const BroadProxy &p = proxies_[pair.p], &q = proxies_[pair.q];
                if (!boundsOverlap(p.tight, q.tight)) {
                    continue;
                }
                if (!bodies[p.body].isDynamic() && !bodies[q.body].isDynamic()) {
                    continue;
                }
                const bool swap = q.body < p.body;
                const Candidate c{pair.key, swap ? q.body : p.body, swap ? q.shape : p.shape,
                                  swap ? p.body : q.body, swap ? p.shape : q.shape};
                if (!jointPairs.empty() &&
                    std::binary_search(jointPairs.begin(), jointPairs.end(), std::pair{c.a, c.b})) {
                    continue;
                }
                out.push_back(c);
            }
            out.swap(partCandidates[std::size_t(part)]);
        });
    candidates_.clear();
    for (int part = 0; part < parts; ++part) {
        const std::vector<Candidate>& found = partCandidates[std::size_t(part)];
        candidates_.insert(candidates_.end(), found.begin(), found.end());
    }
}

// The pairs of the shapes enlarged again: their old pairs dropped, new ones found in a grid of
// all the enlarged bounds and merged in (by key).
void RigidSolver::repairProxies() {
    std::erase_if(proxyPairs_, [&](const ProxyPair& pair) {
        return reproxied_[pair.p] != 0 || reproxied_[pair.q] != 0;
    });
    std::vector<ProxyPair> fresh;
    const auto consider = [&](std::uint32_t p, std::uint32_t q) {
        const BroadProxy &a = proxies_[p], &b = proxies_[q];
        if (a.body == b.body || (reproxied_[q] && q < p) || !boundsOverlap(a.fat, b.fat)) {
            return; // a pair of two enlarged ones is taken from the lower's side
        }
        const bool swap = b.body < a.body;
        const std::uint64_t key = swap ? pairKey(b.body, b.shape, a.body, a.shape)
                                       : pairKey(a.body, a.shape, b.body, b.shape);
        fresh.push_back({key, std::min(p, q), std::max(p, q)});
    };
    // The fresh pairs, by key, merged into the kept ones.
    const auto mergeFresh = [&] {
        const auto byKey = [](const ProxyPair& x, const ProxyPair& y) { return x.key < y.key; };
        std::sort(fresh.begin(), fresh.end(), byKey);
        const std::size_t kept = proxyPairs_.size();
        proxyPairs_.insert(proxyPairs_.end(), fresh.begin(), fresh.end());
        std::inplace_merge(proxyPairs_.begin(), proxyPairs_.begin() + std::ptrdiff_t(kept),
                           proxyPairs_.end(), byKey);
    };
    // A few enlarged again (a body at rest that crept out of its enlarged bounds): each
    // against every proxy, the same pairs as the grid finds, without filing and sorting them
    // all (pyramid-100: 2 or 3 of its 5,051 a step, 0.06 ms a step through the grid).
    constexpr std::size_t kFewEnlarged = 8;
    std::vector<std::uint32_t> enlarged;
    for (std::uint32_t p = 0; p < proxies_.size() && enlarged.size() <= kFewEnlarged; ++p) {
        if (reproxied_[p]) {
            enlarged.push_back(p);
        }
    }
    if (enlarged.size() <= kFewEnlarged) {
        for (const std::uint32_t p : enlarged) {
            for (std::uint32_t q = 0; q < proxies_.size(); ++q) {
                if (q != p) {
                    consider(p, q);
                }
            }
        }
        mergeFresh();
        return;
    }
    // The cell size: twice the median of the enlarged shapes' largest extents.
    std::vector<Real> extents;
    extents.reserve(proxies_.size());
    for (const BroadProxy& p : proxies_) {
        extents.push_back((p.fat.max - p.fat.min).maxCoeff());
    }
    Real cell = 1;
    if (!extents.empty()) {
        auto middle = extents.begin() + std::ptrdiff_t(extents.size() / 2);
        std::nth_element(extents.begin(), middle, extents.end());
        cell = std::max<Real>(2 * *middle, 1e-6);
        if (!std::isfinite(cell)) {
            cell = 1;
        }
    }
    const auto cellKey = [](std::int64_t x, std::int64_t y, std::int64_t z) {
        const auto wrap = [](std::int64_t v) { return std::uint64_t(v + (1 << 20)) & 0x1FFFFF; };
        return wrap(x) << 42 | wrap(y) << 21 | wrap(z);
    };
    // Clamped: a body a hostile file puts at 1e24 m shares a far cell instead of overflowing.
    const auto cellOf = [&](Real v) {
        const Real f = std::floor(v / cell);
        return std::int64_t(f > 0x1p40 ? 0x1p40 : f < -0x1p40 ? -0x1p40 : f == f ? f : 0);
    };
    struct Filed {
        std::uint64_t cell;
        std::uint32_t proxy;
    };
    std::vector<Filed> filed;
    filed.reserve(proxies_.size());
    std::vector<std::uint32_t> large;
    const auto isLarge = [&](const Bounds& b) {
        return (b.max - b.min).maxCoeff() > cell || !b.min.allFinite() || !b.max.allFinite();
    };
    for (std::uint32_t i = 0; i < proxies_.size(); ++i) {
        const Bounds& b = proxies_[i].fat;
        if (isLarge(b)) {
            large.push_back(i);
            continue;
        }
        const Vec3 c = 0.5 * (b.min + b.max);
        filed.push_back({cellKey(cellOf(c.x()), cellOf(c.y()), cellOf(c.z())), i});
    }
    std::sort(filed.begin(), filed.end(), [](const Filed& x, const Filed& y) {
        return x.cell < y.cell || (x.cell == y.cell && x.proxy < y.proxy);
    });
    for (std::uint32_t p = 0; p < proxies_.size(); ++p) {
        if (!reproxied_[p]) {
            continue;
        }
        const Bounds& b = proxies_[p].fat;
        if (isLarge(b)) {
            for (std::uint32_t q = 0; q < proxies_.size(); ++q) {
                if (q != p) {
                    consider(p, q);
                }
            }
            continue;
        }
        const Vec3 centre = 0.5 * (b.min + b.max);
        const std::int64_t cx = cellOf(centre.x()), cy = cellOf(centre.y()),
                           cz = cellOf(centre.z());
        for (int dx = -1; dx <= 1; ++dx) {
            for (int dy = -1; dy <= 1; ++dy) {
                // The cells along z follow each other in the key order: a search finds the
                // first, and the next is where its range ends.
                auto it = filed.begin();
                std::uint64_t next = ~std::uint64_t(0);
                for (int dz = -1; dz <= 1; ++dz) {
                    const std::uint64_t key = cellKey(cx + dx, cy + dy, cz + dz);
                    if (key != next) {
                        it = std::lower_bound(
                            filed.begin(), filed.end(), key,
                            [](const Filed& f, std::uint64_t k) { return f.cell < k; });
                    }
                    for (; it != filed.end() && it->cell == key; ++it) {
                        if (it->proxy != p) {
                            consider(p, it->proxy);
                        }
                    }
                    next = key + 1;
                }
            }
        }
        for (const std::uint32_t q : large) {
            if (q != p) {
                consider(p, q);
            }
        }
    }
    mergeFresh();
}

void RigidSolver::detect(std::vector<RigidBody>& bodies, const std::vector<RigidJoint>& joints,
                         const RigidSettings& settings, ThreadTeam* team) {
    const int n = int(bodies.size());
    broadphase(bodies, joints, settings, team);
    const auto active = [&](int i) { return bodies[i].isDynamic() && !bodies[i].sleeping; };
    const auto resting = [&](int i) {
        return !bodies[i].isDynamic() ? bodies[i].motion == RigidMotion::Static
                                      : bodies[i].restTime >= settings.aggressiveSleepTime;
    };
    const std::vector<Candidate>& candidates = candidates_;
    stats_.candidatePairs = candidates.size();
    const auto cached = [&](std::uint64_t key) -> const CachedManifold* {
        auto it =
            std::lower_bound(previous_.begin(), previous_.end(), key,
                             [](const CachedManifold& m, std::uint64_t k) { return m.key < k; });
        return it != previous_.end() && it->key == key ? &*it : nullptr;
    };
    // The last step's impulses of the points with the same features (source 004: warm
    // starting by feature IDs), taken along now so that building the rows need not look back.
    const auto carryImpulses = [](const CachedManifold& old,
                                  CachedManifold& out) PBD_INLINE_LAMBDA {
        out.warm = 0x10;
        out.frictionImpulse = old.frictionImpulse;
        const RigidManifold &m = out.manifold, &om = old.manifold;
        for (int k = 0; k < m.count; ++k) {
            out.normalImpulse[std::size_t(k)] = 0;
            for (int j = 0; j < om.count; ++j) {
                if (om.points[j].feature == m.points[k].feature) {
                    out.normalImpulse[std::size_t(k)] = old.normalImpulse[std::size_t(j)];
                    out.warm |= std::uint8_t(1u << k);
                    break;
                }
            }
        }
    };
    const auto narrow = [&](const Candidate& c, CachedManifold& out) {
        out.key = c.key;
        RigidManifold& m = out.manifold;
        m.bodyA = c.a;
        m.bodyB = c.b;
        m.shapeA = c.sa;
        m.shapeB = c.sb;
        const RigidBody &A = bodies[c.a], &B = bodies[c.b];
        out.xA = out.madeXA = A.x;
        out.xB = out.madeXB = B.x;
        out.madeQA = A.q;
        out.madeQB = B.q;
        const RigidShape &sA = A.shapes[c.sa], &sB = B.shapes[c.sb];
        const bool touching =
            collideShapes(sA, shapePose(A, sA), sB, shapePose(B, sB), settings.contactMargin, m);
        out.made = m;
        return touching;
    };
    // A manifold carried with its bodies (persistent manifolds): while the pair's relative pose
    // is within the refresh tolerances of the one it was made in, each point moves with both
    // bodies; its separation is the distance between the two bodies' material points along the
    // normal (turned with A), and its position their midpoint. refreshable says whether the
    // pair is still within the tolerances; refreshInto writes the carried manifold.
    const Real half = std::sin(0.5 * settings.refreshAngle);
    const auto refreshable = [&](const Candidate& c, const CachedManifold& old) PBD_INLINE_LAMBDA {
        if (settings.refreshDistance <= 0 || settings.refreshAngle <= 0) {
            return false;
        }
        const RigidBody &A = bodies[c.a], &B = bodies[c.b];
        const Quat turnA = A.q * old.madeQA.conjugate(), turnB = B.q * old.madeQB.conjugate();
        const Vec3 drift = (B.x - A.x) - turnA * (old.madeXB - old.madeXA);
        if (drift.squaredNorm() > settings.refreshDistance * settings.refreshDistance) {
            return false;
        }
        const Quat relative = turnA.conjugate() * turnB;
        return relative.vec().squaredNorm() <= half * half;
    };
    // out: a copy of the old one (what it was made from, its impulses: the same features),
    // moved with its bodies. `out` may be `old` itself (in place): then only what moves is
    // written.
    const auto refreshInto = [&](const Candidate& c, const CachedManifold& old,
                                 CachedManifold& out) PBD_INLINE_LAMBDA {
        const RigidBody &A = bodies[c.a], &B = bodies[c.b];
        const Quat turnA = A.q * old.madeQA.conjugate(), turnB = B.q * old.madeQB.conjugate();
        if (&out != &old) {
            out = old;
        }
        out.warm = std::uint8_t(0x10 | ((1u << old.made.count) - 1));
        out.xA = A.x;
        out.xB = B.x;
        RigidManifold& m = out.manifold;
        m.count = old.made.count;
        const Mat3 RA = turnA.toRotationMatrix(), RB = turnB.toRotationMatrix();
        m.normal = RA * old.made.normal;
        for (int k = 0; k < m.count; ++k) {
            const RigidContactPoint& p = old.made.points[k];
            const Vec3 onA = A.x + RA * (p.position - old.madeXA);
            const Vec3 onB = B.x + RB * (p.position - old.madeXB);
            m.points[k] = p;
            m.points[k].position = 0.5 * (onA + onB);
            m.points[k].separation = p.separation + m.normal.dot(onB - onA);
        }
    };
    // Pairs with an awake dynamic body are detected (or, under aggressive sleep, kept while
    // both rest); pairs of sleeping bodies keep their last manifold, so that islands stay whole
    // and wake together.
    std::vector<char> done(candidates.size(), 0);
    // Into manifolds_, whose storage is kept from step to step (it swaps with previous_), every
    // element written over.
    std::vector<CachedManifold>& found = manifolds_;
    // In two passes over the candidates, each in parts on the team's threads: first what each
    // becomes (kept under aggressive sleep, carried with its bodies, or detected afresh, which
    // the first pass does, and touching or not) and the last step's manifold of the pair;
    // then, at its place in key order, each kept or carried one written. The same manifolds in
    // the same order as one pass on one thread.
    enum Fate : std::uint8_t { kSkip, kReused, kRefreshed, kMade };
    std::vector<std::uint8_t>& fates = candidateFates_;
    std::vector<const CachedManifold*>& olds = candidateOlds_;
    fates.assign(candidates.size(), kSkip);
    olds.assign(candidates.size(), nullptr);
    const std::size_t count = candidates.size();
    // Both passes in the same parts (the same count), each part's fresh manifolds its own.
    constexpr std::size_t kSmallest = 512;
    const std::size_t most = mostParts(team);
    std::vector<std::vector<std::pair<std::size_t, CachedManifold>>> made(most);
    std::vector<std::size_t> reusedIn(most, 0), refreshedIn(most, 0);
    // Each pass compiled twice in a portable build (core/base/InstructionSets.h): the carried
    // manifolds' rotations are most of the detection in a scene at rest.
    const auto passOne = [&](int part, std::size_t begin, std::size_t end) PBD_INLINE_LAMBDA {
        if (begin == end) {
            return;
        }
        // Counted and listed in the part's own variables, stored at the end (bumped in the
        // shared arrays, the parts passed their cache lines back and forth).
        std::size_t reused = 0, refreshed = 0;
        std::vector<std::pair<std::size_t, CachedManifold>> fresh;
        // The last step's manifolds of these keys, walked along in key order.
        std::size_t walk = std::size_t(
            std::lower_bound(previous_.begin(), previous_.end(), candidates[begin].key,
                             [](const CachedManifold& m, std::uint64_t k) { return m.key < k; }) -
            previous_.begin());
        const auto cachedNext = [&](std::uint64_t key) -> const CachedManifold* {
            while (walk < previous_.size() && previous_[walk].key < key) {
                ++walk;
            }
            return walk < previous_.size() && previous_[walk].key == key ? &previous_[walk]
                                                                         : nullptr;
        };
        for (std::size_t i = begin; i < end; ++i) {
            const Candidate& c = candidates[i];
            if (!active(c.a) && !active(c.b)) {
                continue;
            }
            done[i] = 1;
            const CachedManifold* old = cachedNext(c.key);
            olds[i] = old;
            if (old && settings.aggressiveSleep && resting(c.a) && resting(c.b)) {
                fates[i] = kReused;
                ++reused;
                continue;
            }
            if (old && refreshable(c, *old)) {
                fates[i] = kRefreshed;
                ++refreshed;
                continue;
            }
            CachedManifold m;
            if (narrow(c, m)) {
                if (old) {
                    carryImpulses(*old, m);
                }
                fates[i] = kMade;
                fresh.emplace_back(i, std::move(m));
            }
        }
        reusedIn[std::size_t(part)] = reused;
        refreshedIn[std::size_t(part)] = refreshed;
        made[std::size_t(part)] = std::move(fresh);
    };
    const int parts =
        inParts(team, count, kSmallest, [&](int part, std::size_t begin, std::size_t end) {
            PBDLAB_WIDE_PATH(passOne(part, begin, end));
        });
    // Where each goes.
    std::vector<std::uint32_t>& at = candidatePlaces_;
    at.resize(count);
    std::size_t total = 0;
    for (std::size_t i = 0; i < count; ++i) {
        at[i] = std::uint32_t(total);
        total += fates[i] != kSkip ? 1 : 0;
    }
    for (int part = 0; part < parts; ++part) {
        stats_.reusedManifolds += reusedIn[std::size_t(part)];
        stats_.refreshedManifolds += refreshedIn[std::size_t(part)];
    }
    // Where every body is awake and every pair of the last step is this step's at the same
    // place (a scene at rest: the same pairs), each is written over its old self, in place: a
    // carried manifold then writes only what moved, not its whole record into another array
    // (pyramid-100: 10,000 records of 650 bytes). The same manifolds as written into the other
    // array; no pair is left to find among the last step's (below), none to wake.
    const bool anyAsleep = std::any_of(bodies.begin(), bodies.end(), [](const RigidBody& b) {
        return b.isDynamic() && b.sleeping;
    });
    bool inPlace = !anyAsleep && total == previous_.size();
    for (std::size_t i = 0; i < count && inPlace; ++i) {
        inPlace = fates[i] == kSkip || olds[i] == previous_.data() + at[i];
    }
    if (inPlace) {
        std::swap(found, previous_);
    } else {
        found.resize(total);
    }
    const auto passTwo = [&](int part, std::size_t begin, std::size_t end) PBD_INLINE_LAMBDA {
        auto next = made[std::size_t(part)].begin();
        for (std::size_t i = begin; i < end; ++i) {
            if (fates[i] == kSkip) {
                continue; // no place of its own: at[i] may be one past the end (UBSan)
            }
            const Candidate& c = candidates[i];
            CachedManifold& out = found[at[i]];
            switch (fates[i]) {
            case kReused: {
                // The same points, normal and lever arms; only the separations follow the
                // bodies' small moves since, so the slop is kept.
                const CachedManifold& old = *olds[i];
                if (&out != &old) {
                    out = old;
                }
                const Vec3 moveA = bodies[c.a].x - old.xA, moveB = bodies[c.b].x - old.xB;
                RigidManifold& m = out.manifold;
                for (int k = 0; k < m.count; ++k) {
                    m.points[k].separation += m.normal.dot(moveB - moveA);
                    m.points[k].position += 0.5 * (moveA + moveB);
                }
                out.xA = bodies[c.a].x;
                out.xB = bodies[c.b].x;
                break;
            }
            case kRefreshed:
                refreshInto(c, *olds[i], out);
                break;
            case kMade:
                out = std::move(next->second);
                ++next;
                break;
            default:
                break;
            }
        }
    };
    inParts(team, count, kSmallest, [&](int part, std::size_t begin, std::size_t end) {
        PBDLAB_WIDE_PATH(passTwo(part, begin, end));
    });
    // What the passes wrote is in key order (the candidates are); what is appended below
    // may not be.
    bool appended = false;
    for (std::size_t i = 0; i < candidates.size() && !inPlace; ++i) {
        if (!done[i]) {
            if (const CachedManifold* old = cached(candidates[i].key)) {
                appended = true;
                found.push_back(*old);
                done[i] = 2;
            }
        }
    }
    if (settings.sleeping && anyAsleep) {
        // Wake every island with an awake member: union over the touching pairs and joints
        // (none to wake while every body is awake).
        UnionFind islands(bodies.size());
        for (const CachedManifold& m : found) {
            if (bodies[m.manifold.bodyA].isDynamic() && bodies[m.manifold.bodyB].isDynamic()) {
                islands.unite(m.manifold.bodyA, m.manifold.bodyB);
            }
        }
        for (const RigidJoint& j : joints) {
            if (j.bodyA >= 0 && bodies[j.bodyA].isDynamic() && bodies[j.bodyB].isDynamic()) {
                islands.unite(j.bodyA, j.bodyB);
            }
        }
        std::vector<char> awakeRoot(bodies.size(), 0);
        for (int i = 0; i < n; ++i) {
            if (active(i)) {
                awakeRoot[islands.find(i)] = 1;
            }
        }
        bool woke = false;
        for (int i = 0; i < n; ++i) {
            if (bodies[i].isDynamic() && bodies[i].sleeping && awakeRoot[islands.find(i)]) {
                bodies[i].sleeping = false;
                bodies[i].restTime = 0;
                woke = true;
            }
        }
        if (woke) {
            // The kept manifolds of woken pairs are detected afresh.
            std::vector<CachedManifold> refreshed;
            for (CachedManifold& m : found) {
                const int a = m.manifold.bodyA, b = m.manifold.bodyB;
                const bool stale = !bodies[a].sleeping || !bodies[b].sleeping;
                const auto it =
                    std::lower_bound(candidates.begin(), candidates.end(), m.key,
                                     [](const Candidate& c, std::uint64_t k) { return c.key < k; });
                const std::size_t ci = std::size_t(it - candidates.begin());
                if (stale && it != candidates.end() && it->key == m.key && done[ci] == 2) {
                    done[ci] = 3;
                    continue;
                }
                refreshed.push_back(std::move(m));
            }
            found = std::move(refreshed);
            appended = true;
            for (std::size_t i = 0; i < candidates.size(); ++i) {
                const Candidate& c = candidates[i];
                if ((done[i] == 0 || done[i] == 3) && (active(c.a) || active(c.b))) {
                    CachedManifold m;
                    if (narrow(c, m)) {
                        if (const CachedManifold* old = cached(c.key)) {
                            carryImpulses(*old, m);
                        }
                        found.push_back(m);
                    }
                }
            }
        }
    }
    const auto byKey = [](const CachedManifold& x, const CachedManifold& y) {
        return x.key < y.key;
    };
    assert(appended || std::is_sorted(found.begin(), found.end(), byKey));
    if (appended && !std::is_sorted(found.begin(), found.end(), byKey)) {
        std::sort(found.begin(), found.end(), byKey);
    }
}

void RigidSolver::computeHeights() {
    // Height: the shortest path in the contact graph to a static or kinematic body (source 004,
    // "物体の高さ"); bodies not resting on anything keep INT_MAX. Every manifold touches (its
    // points are what made it one).
    const std::vector<std::uint8_t>& motion = bodyMotion_;
    const int n = int(motion.size());
    heights_.assign(n, INT_MAX);
    // The contact graph's adjacency, packed (each body's neighbours from first[i] on).
    std::vector<int>& first = adjacencyFirst_;
    std::vector<int>& neighbours = adjacency_;
    first.assign(std::size_t(n) + 1, 0);
    for (const auto& [a, b] : manifoldBodies_) {
        ++first[std::size_t(a) + 1];
        ++first[std::size_t(b) + 1];
    }
    std::partial_sum(first.begin(), first.end(), first.begin());
    neighbours.resize(std::size_t(first.back()));
    std::vector<int> fill(first.begin(), first.end() - 1);
    for (const auto& [a, b] : manifoldBodies_) {
        neighbours[std::size_t(fill[std::size_t(a)]++)] = b;
        neighbours[std::size_t(fill[std::size_t(b)]++)] = a;
    }
    // Breadth first: each body enters the queue once, so the queue is an array read in order.
    std::vector<int>& queue = heightQueue_;
    queue.clear();
    for (int i = 0; i < n; ++i) {
        if (motion[std::size_t(i)] != kDynamicMotion) {
            heights_[i] = 0;
            queue.push_back(i);
        }
    }
    stats_.maxHeight = 0;
    for (std::size_t head = 0; head < queue.size(); ++head) {
        const int i = queue[head];
        for (int k = first[std::size_t(i)]; k < first[std::size_t(i) + 1]; ++k) {
            const int j = neighbours[std::size_t(k)];
            if (heights_[j] == INT_MAX) {
                heights_[j] = heights_[i] + 1;
                stats_.maxHeight = std::max(stats_.maxHeight, heights_[j]);
                queue.push_back(j);
            }
        }
    }
}

} // namespace pbd
