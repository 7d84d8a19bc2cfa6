#include "core/rigid/RigidSolver.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <deque>
#include <limits>
#include <numeric>

namespace pbd {

std::string_view toString(StackStabilisation s) {
    switch (s) {
    case StackStabilisation::Off:
        return "off";
    case StackStabilisation::ShockPropagation:
        return "shock-propagation";
    case StackStabilisation::WeightAmplification:
        return "weight-amplification";
    }
    return "?";
}

namespace {

using Clock = std::chrono::steady_clock;

double millisecondsSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// splitmix64: a small, portable generator, so that the row order is the same everywhere.
struct SplitMix {
    std::uint64_t state;
    std::uint64_t next() {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
};

std::uint64_t pairKey(int bodyA, int shapeA, int bodyB, int shapeB) {
    return std::uint64_t(bodyA) << 44 | std::uint64_t(shapeA & 0xFFF) << 32 |
           std::uint64_t(bodyB) << 12 | std::uint64_t(shapeB & 0xFFF);
}

Mat3 skew(const Vec3& r) {
    Mat3 s;
    s << 0, -r.z(), r.y(), r.z(), 0, -r.x(), -r.y(), r.x(), 0;
    return s;
}

// Whether two bounding boxes overlap (touching counts).
bool boundsOverlap(const Bounds& a, const Bounds& b) {
    return !(b.min.x() > a.max.x() || a.min.x() > b.max.x() || b.min.y() > a.max.y() ||
             a.min.y() > b.max.y() || b.min.z() > a.max.z() || a.min.z() > b.max.z());
}

// Two unit tangents perpendicular to n, the same for the same n (so that friction impulses
// warm-start along the same directions).
void tangents(const Vec3& n, Vec3& t1, Vec3& t2) {
    if (std::abs(n.x()) >= 0.57735) {
        t1 = Vec3(n.y(), -n.x(), 0).normalized();
    } else {
        t1 = Vec3(0, n.z(), -n.y()).normalized();
    }
    t2 = n.cross(t1);
}

struct UnionFind {
    std::vector<int> parent;
    explicit UnionFind(std::size_t n)
        : parent(n) {
        std::iota(parent.begin(), parent.end(), 0);
    }
    int find(int i) {
        while (parent[i] != i) {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        return i;
    }
    void unite(int a, int b) {
        a = find(a);
        b = find(b);
        if (a != b) {
            parent[std::max(a, b)] = std::min(a, b);
        }
    }
};

} // namespace

// A contact manifold's rows: one normal row per point, bounded [0, inf), and its friction at the
// centre of its points: two tangent rows bounded by mu times the manifold's total normal
// impulse, and a twist row about the normal. (Per-point friction rows would leave
// self-balancing tangential impulses that no sweep sees, which warm starting carries from step
// to step until they use up the friction and stacks creep.)
//
// Eight manifolds are solved side by side, one per SIMD lane: within a colour no two manifolds
// share a dynamic body, so the lanes are independent and the sweep is still Gauss-Seidel (in
// colour order). Slot s of a lane holds the point slotPoint[lane][s] (a padding slot has zero
// mass and never pushes). All lanes sweep their rows in the batch's order `rows` (0-3 the
// normal slots, 4-6 friction along t1, t2 and the twist). The constraints are built straight
// into the lanes.
namespace {
// Eight lanes of floats (one AVX register): the batches are streamed from memory every sweep,
// and in floats they are half the size; velocities stay doubles between batches.
constexpr int kRigidLanes = 8;
using D4 = float __attribute__((vector_size(kRigidLanes * sizeof(float))));
struct V4 {
    D4 x, y, z;
};
inline V4 operator-(const V4& a, const V4& b) {
    return {a.x - b.x, a.y - b.y, a.z - b.z};
}
inline V4 operator+(const V4& a, const V4& b) {
    return {a.x + b.x, a.y + b.y, a.z + b.z};
}
inline V4& operator+=(V4& a, const V4& b) {
    a.x += b.x;
    a.y += b.y;
    a.z += b.z;
    return a;
}
inline V4& operator-=(V4& a, const V4& b) {
    a.x -= b.x;
    a.y -= b.y;
    a.z -= b.z;
    return a;
}
inline V4 operator*(const V4& a, D4 s) {
    return {a.x * s, a.y * s, a.z * s};
}
inline D4 dot(const V4& a, const V4& b) {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}
inline D4 clampLanes(D4 v, D4 lo, D4 hi) {
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
}
inline void setLane(V4& to, int l, const Vec3& v) {
    to.x[l] = float(v.x());
    to.y[l] = float(v.y());
    to.z[l] = float(v.z());
}
// A body's record in the sweeps: two vectors (v and omega, or the move and the turn) in the
// first six of eight floats, so that eight bodies are one 8x8 transpose away from the lanes.
inline D4 bodyRecord(const Vec3& first, const Vec3& second) {
    return D4{float(first.x()),
              float(first.y()),
              float(first.z()),
              float(second.x()),
              float(second.y()),
              float(second.z()),
              0.0f,
              0.0f};
}
inline Vec3 recordFirst(const D4& r) {
    return {double(r[0]), double(r[1]), double(r[2])};
}
inline Vec3 recordSecond(const D4& r) {
    return {double(r[3]), double(r[4]), double(r[5])};
}
// Rows to columns (and back): r[i][j] becomes r[j][i].
[[gnu::always_inline]] inline void transpose8(D4 r[8]) {
    using Mask = int __attribute__((vector_size(kRigidLanes * sizeof(int))));
    const Mask lo{0, 8, 1, 9, 4, 12, 5, 13}, hi{2, 10, 3, 11, 6, 14, 7, 15};
    const Mask lo2{0, 1, 8, 9, 4, 5, 12, 13}, hi2{2, 3, 10, 11, 6, 7, 14, 15};
    const Mask lo4{0, 1, 2, 3, 8, 9, 10, 11}, hi4{4, 5, 6, 7, 12, 13, 14, 15};
    D4 t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = __builtin_shuffle(r[i], r[i + 1], lo);
        t[i + 1] = __builtin_shuffle(r[i], r[i + 1], hi);
    }
    for (int i = 0; i < 8; i += 4) {
        u[i] = __builtin_shuffle(t[i], t[i + 2], lo2);
        u[i + 1] = __builtin_shuffle(t[i], t[i + 2], hi2);
        u[i + 2] = __builtin_shuffle(t[i + 1], t[i + 3], lo2);
        u[i + 3] = __builtin_shuffle(t[i + 1], t[i + 3], hi2);
    }
    for (int i = 0; i < 4; ++i) {
        r[i] = __builtin_shuffle(u[i], u[i + 4], lo4);
        r[i + 4] = __builtin_shuffle(u[i], u[i + 4], hi4);
    }
}
} // namespace

struct RigidSolver::SweepRecord {
    D4 value;
};

struct RigidSolver::LaneBatch {
    LaneBatch() {} // left uninitialised: building a batch writes every field
    int a[kRigidLanes], b[kRigidLanes];
    int manifold[kRigidLanes]; // the lane's manifold (manifolds_), -1 for a padding lane
    std::uint8_t slotPoint[kRigidLanes][4];
    std::array<std::uint8_t, 7> rows;
    D4 wa, wb, mu, twistRadius;
    V4 n, t1, t2;
    V4 raN[4], rbN[4], iaN[4], ibN[4];
    // sep: the bias (the wanted separating speed) of the single solve, or, with substeps or
    // soft contacts, the separation at the step's start, which the bodies' moves then update.
    D4 massN[4], sep[4], lambdaN[4];
    D4 gap[4]; // the separation of now (substeps, soft contacts): sep and the bodies' moves
    V4 raT1, rbT1, raT2, rbT2, iaT1, ibT1, iaT2, ibT2, iaTwist, ibTwist;
    D4 massT1, massT2, massTwist, lambdaT1, lambdaT2, lambdaTwist;
    D4 biasRate, massScale, impulseScale; // soft contacts
};

struct RigidSolver::JointConstraint {
    const RigidJoint* joint;
    int a, b;
    Vec3 ra, rb;
    Real wa, wb;
    Mat3 ia, ib;
    Mat3 linearMass;
    Vec3 linearBias;
    Vec3 linearImpulse = Vec3::Zero();
    int angularRows = 0;
    Eigen::Matrix<Real, 3, 3> angularAxes; // rows
    Mat3 angularMass;
    Vec3 angularBias;
    Vec3 angularImpulse = Vec3::Zero();
    Vec3 axis = Vec3::Zero(); // hinge axis (world)
    Real axialMass = 0;
    bool lowerActive = false, upperActive = false;
    Real lowerBias = 0, upperBias = 0;
    Real lowerImpulse = 0, upperImpulse = 0;
    Real motorImpulse = 0;
};

RigidSolver::RigidSolver() = default;
RigidSolver::~RigidSolver() = default;
RigidSolver::RigidSolver(RigidSolver&&) noexcept = default;
RigidSolver& RigidSolver::operator=(RigidSolver&&) noexcept = default;

void RigidSolver::reset() {
    manifolds_.clear();
    previous_.clear();
    contacts_.clear();
    contactsStale_ = false;
    solved_.clear();
    proxies_.clear();
    proxyPairs_.clear();
    proxyPairsValid_ = false;
    stats_ = {};
    steps_ = 0;
    maxJointError_ = 0;
}

// Broadphase (Box2D's fat bounds, on a uniform grid): each shape keeps bounds enlarged by a
// tenth of its size, and the pairs of shapes whose enlarged bounds overlap are kept from step
// to step. Only a shape whose bounds left its enlarged ones is enlarged again and paired
// afresh, through a grid of cells twice as large as the typical shape: it meets those filed in
// its own and the 26 neighbouring cells, and the large ones (a ground), which meet all. The
// candidates are the kept pairs whose bounds overlap: the same as testing every pair.
void RigidSolver::broadphase(const std::vector<RigidBody>& bodies,
                             const std::vector<RigidJoint>& joints, const RigidSettings& settings) {
    const int n = int(bodies.size());
    const Vec3 fatten = Vec3::Constant(0.5 * settings.contactMargin);
    std::size_t count = 0;
    for (const RigidBody& b : bodies) {
        count += b.shapes.size();
    }
    bool same = proxyPairsValid_ && proxies_.size() == count;
    proxies_.resize(count);
    reproxied_.assign(count, 0);
    bool anyMoved = false;
    const auto within = [](const Bounds& inner, const Bounds& outer) {
        return (inner.min.array() >= outer.min.array()).all() &&
               (inner.max.array() <= outer.max.array()).all();
    };
    for (int i = 0, k = 0; i < n; ++i) {
        for (int s = 0; s < int(bodies[i].shapes.size()); ++s, ++k) {
            BroadProxy& p = proxies_[std::size_t(k)];
            same = same && p.body == i && p.shape == s;
            p.body = i;
            p.shape = s;
            p.tight = shapeBounds(bodies[i], bodies[i].shapes[std::size_t(s)]);
            p.tight.min -= fatten;
            p.tight.max += fatten;
            if (!same || !within(p.tight, p.fat)) {
                const Vec3 grow = Vec3::Constant(0.1 * (p.tight.max - p.tight.min).maxCoeff());
                p.fat = {p.tight.min - grow, p.tight.max + grow};
                reproxied_[std::size_t(k)] = 1;
                anyMoved = true;
            }
        }
    }
    if (!same) {
        std::fill(reproxied_.begin(), reproxied_.end(), 1);
        proxyPairs_.clear();
    }
    proxyPairsValid_ = true;
    if (anyMoved) {
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
    candidates_.clear();
    for (const ProxyPair& pair : proxyPairs_) {
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
        candidates_.push_back(c);
    }
}

// The pairs of the shapes enlarged again: their old pairs dropped, new ones found in a grid of
// all the enlarged bounds and merged in (by key).
void RigidSolver::repairProxies() {
    std::erase_if(proxyPairs_, [&](const ProxyPair& pair) {
        return reproxied_[pair.p] != 0 || reproxied_[pair.q] != 0;
    });
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
    const auto cellOf = [&](Real v) { return std::int64_t(std::floor(v / cell)); };
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
    const auto byKey = [](const ProxyPair& x, const ProxyPair& y) { return x.key < y.key; };
    std::sort(fresh.begin(), fresh.end(), byKey);
    const std::size_t kept = proxyPairs_.size();
    proxyPairs_.insert(proxyPairs_.end(), fresh.begin(), fresh.end());
    std::inplace_merge(proxyPairs_.begin(), proxyPairs_.begin() + std::ptrdiff_t(kept),
                       proxyPairs_.end(), byKey);
}

void RigidSolver::detect(std::vector<RigidBody>& bodies, const std::vector<RigidJoint>& joints,
                         const RigidSettings& settings) {
    const int n = int(bodies.size());
    broadphase(bodies, joints, settings);
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
    // The same for keys asked in increasing order: one walk along previous_.
    std::size_t walk = 0;
    const auto cachedNext = [&](std::uint64_t key) -> const CachedManifold* {
        while (walk < previous_.size() && previous_[walk].key < key) {
            ++walk;
        }
        return walk < previous_.size() && previous_[walk].key == key ? &previous_[walk] : nullptr;
    };
    // The last step's impulses of the points with the same features (source 004: warm
    // starting by feature IDs), taken along now so that building the rows need not look back.
    const auto carryImpulses = [](const CachedManifold& old, CachedManifold& out) {
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
    // normal (turned with A), and its position their midpoint.
    // Returns the kept manifold moved with its bodies (appended to found), or null when the
    // pair moved beyond the tolerances.
    const Real half = std::sin(0.5 * settings.refreshAngle);
    const auto refresh = [&](const Candidate& c, const CachedManifold& old) -> CachedManifold* {
        if (settings.refreshDistance <= 0 || settings.refreshAngle <= 0) {
            return nullptr;
        }
        const RigidBody &A = bodies[c.a], &B = bodies[c.b];
        const Quat turnA = A.q * old.madeQA.conjugate(), turnB = B.q * old.madeQB.conjugate();
        const Vec3 drift = (B.x - A.x) - turnA * (old.madeXB - old.madeXA);
        if (drift.squaredNorm() > settings.refreshDistance * settings.refreshDistance) {
            return nullptr;
        }
        const Quat relative = turnA.conjugate() * turnB;
        if (relative.vec().squaredNorm() > half * half) {
            return nullptr;
        }
        // A copy of the old one (what it was made from, its impulses: the same features).
        CachedManifold& out = manifolds_.emplace_back(old);
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
        ++stats_.refreshedManifolds;
        return &out;
    };
    // Pairs with an awake dynamic body are detected (or, under aggressive sleep, kept while
    // both rest); pairs of sleeping bodies keep their last manifold, so that islands stay whole
    // and wake together.
    std::vector<char> done(candidates.size(), 0);
    // Into manifolds_, whose storage is kept from step to step (it swaps with previous_).
    std::vector<CachedManifold>& found = manifolds_;
    found.clear();
    if (found.capacity() < candidates.size()) {
        found.reserve(candidates.size() + candidates.size() / 2); // room to grow without moving
    }
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        const Candidate& c = candidates[i];
        if (!active(c.a) && !active(c.b)) {
            continue;
        }
        done[i] = 1;
        if (settings.aggressiveSleep && resting(c.a) && resting(c.b)) {
            if (const CachedManifold* old = cachedNext(c.key)) {
                // The same points, normal and lever arms; only the separations follow the
                // bodies' small moves since, so the slop is kept.
                CachedManifold kept = *old;
                const Vec3 moveA = bodies[c.a].x - old->xA, moveB = bodies[c.b].x - old->xB;
                RigidManifold& m = kept.manifold;
                for (int k = 0; k < m.count; ++k) {
                    m.points[k].separation += m.normal.dot(moveB - moveA);
                    m.points[k].position += 0.5 * (moveA + moveB);
                }
                kept.xA = bodies[c.a].x;
                kept.xB = bodies[c.b].x;
                found.push_back(kept);
                ++stats_.reusedManifolds;
                continue;
            }
        }
        const CachedManifold* old = cachedNext(c.key);
        if (old && refresh(c, *old)) {
            continue;
        }
        CachedManifold& m = found.emplace_back();
        if (narrow(c, m)) {
            if (old) {
                carryImpulses(*old, m);
            }
        } else {
            found.pop_back();
        }
    }
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        if (!done[i]) {
            if (const CachedManifold* old = cached(candidates[i].key)) {
                found.push_back(*old);
                done[i] = 2;
            }
        }
    }
    if (settings.sleeping) {
        // Wake every island with an awake member: union over the touching pairs and joints.
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
    if (!std::is_sorted(found.begin(), found.end(), byKey)) {
        std::sort(found.begin(), found.end(), byKey);
    }
}

void RigidSolver::computeHeights(const std::vector<RigidBody>& bodies) {
    // Height: the shortest path in the contact graph to a static or kinematic body (source 004,
    // "物体の高さ"); bodies not resting on anything keep INT_MAX.
    const int n = int(bodies.size());
    heights_.assign(n, INT_MAX);
    // The contact graph's adjacency, packed (each body's neighbours from first[i] on).
    std::vector<int>& first = adjacencyFirst_;
    std::vector<int>& neighbours = adjacency_;
    first.assign(std::size_t(n) + 1, 0);
    for (const CachedManifold& m : manifolds_) {
        if (m.manifold.count > 0) {
            ++first[std::size_t(m.manifold.bodyA) + 1];
            ++first[std::size_t(m.manifold.bodyB) + 1];
        }
    }
    std::partial_sum(first.begin(), first.end(), first.begin());
    neighbours.resize(std::size_t(first.back()));
    std::vector<int> fill(first.begin(), first.end() - 1);
    for (const CachedManifold& m : manifolds_) {
        if (m.manifold.count > 0) {
            neighbours[std::size_t(fill[std::size_t(m.manifold.bodyA)]++)] = m.manifold.bodyB;
            neighbours[std::size_t(fill[std::size_t(m.manifold.bodyB)]++)] = m.manifold.bodyA;
        }
    }
    std::deque<int> queue;
    for (int i = 0; i < n; ++i) {
        if (!bodies[i].isDynamic()) {
            heights_[i] = 0;
            queue.push_back(i);
        }
    }
    stats_.maxHeight = 0;
    while (!queue.empty()) {
        const int i = queue.front();
        queue.pop_front();
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

namespace {

// Box2D v3's soft constraint (Catto, "Solver2D"): a spring of frequency hertz and damping ratio
// zeta, stepped implicitly with h: the bias rate applied to the error, and how much of the rigid
// row's impulse and of its accumulated impulse it takes.
struct Softness {
    Real biasRate = 0, massScale = 1, impulseScale = 0;
};
Softness makeSoft(Real hertz, Real zeta, Real h) {
    if (hertz <= 0) {
        return {};
    }
    const Real omega = 2 * M_PI * hertz;
    const Real a1 = 2 * zeta + h * omega;
    const Real a2 = h * omega * a1;
    const Real a3 = 1 / (1 + a2);
    return {omega / a1, a2 * a3, a3};
}

Quat turned(const Quat& q, const Vec3& angle) {
    const Real a = angle.norm();
    return a > 0 ? Quat(Eigen::AngleAxisd(a, angle / a)) * q : q;
}

} // namespace

// The contact points of the manifolds solved in the last step, each with its share of the
// manifold's friction; impulses over the step (per substep times the substeps). Made when
// first asked for.
const std::vector<RigidContact>& RigidSolver::contacts() const {
    if (!contactsStale_) {
        return contacts_;
    }
    contactsStale_ = false;
    contacts_.clear();
    for (std::size_t mi = 0; mi < manifolds_.size() && mi < solved_.size(); ++mi) {
        if (!solved_[mi]) {
            continue;
        }
        const CachedManifold& cm = manifolds_[mi];
        const RigidManifold& m = cm.manifold;
        Real support = 0;
        for (int k = 0; k < m.count; ++k) {
            support += cm.normalImpulse[std::size_t(k)];
        }
        Vec3 t1, t2;
        tangents(m.normal, t1, t2);
        const Vec3 friction =
            reportSubsteps_ * (cm.frictionImpulse.x() * t1 + cm.frictionImpulse.y() * t2);
        for (int k = 0; k < m.count; ++k) {
            const RigidContactPoint& p = m.points[k];
            const Real lambda = cm.normalImpulse[std::size_t(k)];
            const Real share = support > 0 ? lambda / support : 1.0 / m.count;
            contacts_.push_back({m.bodyA, m.bodyB, p.position, m.normal, p.separation,
                                 reportSubsteps_ * lambda, share * friction, p.feature});
        }
    }
    return contacts_;
}

void RigidSolver::step(std::vector<RigidBody>& bodies, const std::vector<RigidJoint>& joints,
                       const RigidSettings& settings, const Vec3& gravity, Real h) {
    const Clock::time_point start = Clock::now();
    stats_ = {};
    const int n = int(bodies.size());
    ++steps_;
    const int substeps = std::max(settings.substeps, 1);
    const Real hs = h / substeps;
    const bool soft = settings.contactHertz > 0;
    // The separations follow the bodies (substeps, soft contacts), or the biases are fixed at
    // the step's start (the source's single solve).
    const bool track = substeps > 1 || soft;

    std::swap(previous_, manifolds_);
    manifolds_.clear();
    detect(bodies, joints, settings);
    const bool stacking = settings.stabilisation != StackStabilisation::Off;
    const bool shock = settings.stabilisation == StackStabilisation::ShockPropagation;
    if (stacking) {
        computeHeights(bodies);
    }
    stats_.detectionMilliseconds = millisecondsSince(start);
    const Clock::time_point solveStart = Clock::now();

    // Solver bodies (inverse masses) and their velocities, apart: the sweeps touch only the
    // velocities, which then stay in the cache. Index n is the world.
    solverBodies_.assign(std::size_t(n) + 1, SolverBody{});
    velocities_.assign(std::size_t(n) + 1, Velocity{Vec3::Zero(), Vec3::Zero()});
    std::vector<Vec3>& omegaBefore = omegaBefore_;
    std::vector<Mat3>& inertiaBefore = inertiaBefore_;
    omegaBefore.assign(std::size_t(n), Vec3::Zero());
    inertiaBefore.assign(std::size_t(n), Mat3::Zero());
    for (int i = 0; i < n; ++i) {
        RigidBody& b = bodies[i];
        SolverBody& s = solverBodies_[i];
        s.x = b.x;
        s.friction = b.friction;
        s.height = stacking ? heights_[std::size_t(i)] : 0;
        Velocity& u = velocities_[std::size_t(i)];
        if (b.isDynamic() && !b.sleeping) {
            // omega from L with the current inertia (§5 step 3-4; no external torques).
            // Gravity is added per substep.
            const Mat3 R = b.rotation();
            s.inverseInertia = R * b.inverseInertiaBody * R.transpose();
            inertiaBefore[i] = R * b.inertiaBody * R.transpose();
            b.omega = s.inverseInertia * b.L;
            u = {b.v, b.omega};
            s.inverseMass = b.inverseMass;
            ++stats_.awakeBodies;
        } else if (b.motion == RigidMotion::Kinematic) {
            u = {b.v, b.omega};
        }
        omegaBefore[i] = u.w;
        if (b.isDynamic() && b.sleeping) {
            ++stats_.sleepingBodies;
        }
    }
    const auto awake = [&](int i) { return bodies[i].isDynamic() && !bodies[i].sleeping; };
    const auto movable = [&](int i) { return solverBodies_[std::size_t(i)].inverseMass > 0; };
    // Bodies some constraint acts on: they turn by the solved omega; the others fly free and
    // turn exactly through L (below).
    std::vector<char> touched(std::size_t(n) + 1, 0);

    // The order the constraints are swept in, drawn once per step (source 004, Permutation:
    // the rows are permuted, then the solver starts): the manifolds and joints in a random
    // order (the order they take their colours in, and the joints' order), and each batch's
    // and each lane's rows in a random order.
    SplitMix random{steps_ * 0x2545F4914F6CDD1Dull};
    const std::uint32_t manifoldCount = std::uint32_t(manifolds_.size());
    std::vector<std::uint32_t> groupOrder(manifoldCount + joints.size());
    std::iota(groupOrder.begin(), groupOrder.end(), 0u);
    if (settings.permuteRows) {
        for (std::size_t i = groupOrder.size(); i > 1; --i) {
            std::swap(groupOrder[i - 1], groupOrder[random.next() % i]);
        }
    }

    // Colours: each manifold, in the sweep order, takes the first colour in which neither of
    // its dynamic bodies has a manifold yet (at most 64; the rest are swept one by one after
    // them). Then eight manifolds of a colour to a batch.
    colours_.assign(std::size_t(n) + 1, 0);
    std::array<std::vector<std::uint32_t>, 64> byColour;
    std::vector<std::uint32_t> overflow, jointOrder;
    // What the colouring reads, compact (it visits the manifolds in a random order): each
    // manifold's bodies, and per body whether it is awake (1) and movable (2).
    std::vector<std::pair<int, int>>& pairs = manifoldBodies_;
    pairs.resize(manifoldCount);
    for (std::uint32_t mi = 0; mi < manifoldCount; ++mi) {
        pairs[mi] = {manifolds_[mi].manifold.bodyA, manifolds_[mi].manifold.bodyB};
    }
    std::vector<std::uint8_t>& flags = bodyFlags_;
    flags.assign(std::size_t(n), 0);
    for (int i = 0; i < n; ++i) {
        flags[std::size_t(i)] = std::uint8_t((awake(i) ? 1 : 0) | (movable(i) ? 2 : 0));
    }
    for (const std::uint32_t group : groupOrder) {
        if (group >= manifoldCount) {
            jointOrder.push_back(group - manifoldCount);
            continue;
        }
        const auto [a, b] = pairs[group];
        const std::uint8_t fa = flags[std::size_t(a)], fb = flags[std::size_t(b)];
        if (!((fa | fb) & 1)) {
            continue;
        }
        const std::uint64_t used =
            ((fa & 2) ? colours_[std::size_t(a)] : 0) | ((fb & 2) ? colours_[std::size_t(b)] : 0);
        if (used == ~std::uint64_t(0)) {
            overflow.push_back(group);
            continue;
        }
        const int colour = std::countr_one(used);
        byColour[std::size_t(colour)].push_back(group);
        const std::uint64_t bit = std::uint64_t(1) << colour;
        if (fa & 2) {
            colours_[std::size_t(a)] |= bit;
        }
        if (fb & 2) {
            colours_[std::size_t(b)] |= bit;
        }
    }

    const auto effectiveMass = [](Real wa, Real wb, const Vec3& ja, const Vec3& iaj, const Vec3& jb,
                                  const Vec3& ibj) {
        const Real inverse = wa + wb + ja.dot(iaj) + jb.dot(ibj);
        return inverse > 0 ? 1 / inverse : 0;
    };
    const Softness dynamicSoft =
        makeSoft(std::min(settings.contactHertz, 0.25 / hs), settings.contactDampingRatio, hs);
    const Softness staticSoft =
        makeSoft(std::min(2 * settings.contactHertz, 0.25 / hs), settings.contactDampingRatio, hs);
    // For shock propagation: per batch lane, the lower body's height and which body is lower
    // (0: none, 1: A, 2: B).
    struct LaneLevel {
        int level;
        std::uint32_t batch;
        std::uint8_t lane, lower;
        // The shock pass's own impulses (normal per slot, friction along t1, t2, twist).
        float normal[4] = {}, friction[3] = {};
    };
    std::vector<LaneLevel> laneLevels;
    stats_.rows = 0;

    // Builds up to eight manifolds' rows into batch L, one per lane (source 004: contact normal
    // rows [0, inf) and friction bounded by mu·lambda_n; warm start by feature ID). What each
    // lane reads of its manifold and bodies is gathered first, the arms in doubles (they are
    // differences of positions); then the rows are made eight lanes at a time, and every field
    // of the batch is written (a padding lane or slot gets zero mass and never pushes).
    const auto buildBatch = [&](LaneBatch& L, std::uint32_t batchIndex, const std::uint32_t* lanes,
                                int count) {
        const D4 zero{}, one = zero + 1.0f;
        // The rows' order (source 004, Permutation), shared by the lanes; each lane's points
        // are placed in the normal slots in an order of its own.
        std::iota(L.rows.begin(), L.rows.end(), std::uint8_t(0));
        if (settings.permuteRows) {
            for (int i = 7; i > 1; --i) {
                std::swap(L.rows[std::size_t(i - 1)],
                          L.rows[std::size_t(random.next() % std::uint64_t(i))]);
            }
        }
        V4 normal{zero, zero + 1.0f, zero}, centreA{}, centreB{}, armA[4]{}, armB[4]{};
        D4 valid[4]{}, sep[4]{}, lambdaN[4]{}, inertiaA[6]{}, inertiaB[6]{};
        D4 wa{}, wb{}, mu{}, points{}, biasRate{}, massScale{}, impulseScale{};
        D4 lambdaT1{}, lambdaT2{}, lambdaTwist{};
        for (int l = 0; l < kRigidLanes; ++l) {
            L.manifold[l] = -1;
            L.a[l] = L.b[l] = n; // a padding lane reads and writes nothing that moves
            std::iota(L.slotPoint[l], L.slotPoint[l] + 4, std::uint8_t(0));
        }
        for (int l = 0; l < count; ++l) {
            const std::uint32_t mi = lanes[l];
            const CachedManifold& cm = manifolds_[mi];
            const RigidManifold& m = cm.manifold;
            ++stats_.manifolds;
            const std::uint8_t warm = settings.warmStart ? cm.warm : 0;
            const SolverBody &sa = solverBodies_[m.bodyA], &sb = solverBodies_[m.bodyB];
            Real scaleA = 1, scaleB = 1;
            if (stacking) {
                const int ha = sa.height, hb = sb.height;
                const int lower = ha < hb ? 1 : hb < ha ? 2 : 0;
                if (settings.stabilisation == StackStabilisation::WeightAmplification) {
                    // The lower body counts c times heavier in this contact (source 004, WA法).
                    if (lower == 1) {
                        scaleA = 1 / settings.weightAmplification;
                    } else if (lower == 2) {
                        scaleB = 1 / settings.weightAmplification;
                    }
                } else if (shock) {
                    laneLevels.push_back(
                        {std::min(ha, hb), batchIndex, std::uint8_t(l), std::uint8_t(lower)});
                }
            }
            touched[std::size_t(m.bodyA)] = touched[std::size_t(m.bodyB)] = 1;
            L.manifold[l] = int(mi);
            L.a[l] = m.bodyA;
            L.b[l] = m.bodyB;
            wa[l] = float(sa.inverseMass * scaleA);
            wb[l] = float(sb.inverseMass * scaleB);
            const auto setInertia = [l](D4* to, const Mat3& i, Real scale) {
                to[0][l] = float(scale * i(0, 0));
                to[1][l] = float(scale * i(1, 1));
                to[2][l] = float(scale * i(2, 2));
                to[3][l] = float(scale * i(0, 1));
                to[4][l] = float(scale * i(0, 2));
                to[5][l] = float(scale * i(1, 2));
            };
            setInertia(inertiaA, sa.inverseInertia, scaleA);
            setInertia(inertiaB, sb.inverseInertia, scaleB);
            setLane(normal, l, m.normal);
            const Softness& softness =
                sa.inverseMass == 0 || sb.inverseMass == 0 ? staticSoft : dynamicSoft;
            biasRate[l] = float(softness.biasRate);
            massScale[l] = float(softness.massScale);
            impulseScale[l] = float(softness.impulseScale);
            std::uint8_t* slots = L.slotPoint[l];
            if (settings.permuteRows) {
                for (int i = 4; i > 1; --i) {
                    std::swap(slots[i - 1], slots[random.next() % std::uint64_t(i)]);
                }
            }
            Vec3 centre = Vec3::Zero();
            for (int k = 0; k < m.count; ++k) {
                centre += m.points[k].position / Real(m.count);
            }
            points[l] = float(m.count);
            setLane(centreA, l, centre - sa.x);
            setLane(centreB, l, centre - sb.x);
            for (int slot = 0; slot < 4; ++slot) {
                if (slots[slot] >= m.count) {
                    continue; // zero mass: never pushes
                }
                const RigidContactPoint& p = m.points[slots[slot]];
                valid[slot][l] = 1;
                setLane(armA[slot], l, p.position - sa.x);
                setLane(armB[slot], l, p.position - sb.x);
                if (track) {
                    sep[slot][l] = float(p.separation);
                } else {
                    // v_error = k (d - d_slop)/h (source 004, Slop), on both sides of the slop:
                    // deeper is pushed out, shallower may sink in, so a resting body settles at
                    // the slop. Apart (a speculative contact), the gap may also close within
                    // the step.
                    const Real depth = -p.separation;
                    sep[slot][l] =
                        float(settings.correction * (std::max<Real>(depth, 0) - settings.slop) / h +
                              std::min<Real>(depth, 0) / h);
                }
                if (warm & (1u << slots[slot])) {
                    // Warm start: the last step's impulse of the same features (source 004).
                    lambdaN[slot][l] = float(cm.normalImpulse[slots[slot]]);
                    ++stats_.warmStarted;
                }
            }
            stats_.points += std::size_t(m.count);
            mu[l] =
                float(std::sqrt(std::max<Real>(sa.friction, 0) * std::max<Real>(sb.friction, 0)));
            // Friction warm-starts at a share of its last impulse: in a stack, friction couples
            // at a box's top and bottom balanced by its normal impulses are invisible to the
            // sweeps, and carried in full from step to step they grow until the stack sways.
            if (warm & 0x10) {
                const Real share = settings.frictionWarmStart;
                lambdaT1[l] = float(share * cm.frictionImpulse.x());
                lambdaT2[l] = float(share * cm.frictionImpulse.y());
                lambdaTwist[l] = float(share * cm.frictionImpulse.z());
            }
            stats_.rows += std::size_t(m.count) + (mu[l] > 0 ? 3 : 0);
        }

        // The rows, eight lanes at a time.
        const auto cross = [](const V4& a, const V4& b) {
            return V4{a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
        };
        // A symmetric inverse inertia (xx, yy, zz, xy, xz, yz) times a vector.
        const auto times = [](const D4(&i)[6], const V4& v) {
            return V4{i[0] * v.x + i[3] * v.y + i[4] * v.z, i[3] * v.x + i[1] * v.y + i[5] * v.z,
                      i[4] * v.x + i[5] * v.y + i[2] * v.z};
        };
        const auto inverseOrZero = [&](D4 k) { return k > zero ? one / k : zero; };
        L.n = normal;
        L.wa = wa;
        L.wb = wb;
        L.mu = mu;
        L.biasRate = biasRate;
        L.massScale = massScale;
        L.impulseScale = impulseScale;
        L.lambdaT1 = lambdaT1;
        L.lambdaT2 = lambdaT2;
        L.lambdaTwist = lambdaTwist;
        D4 radius = zero;
        for (int slot = 0; slot < 4; ++slot) {
            const V4 raN = cross(armA[slot], normal), rbN = cross(armB[slot], normal);
            const V4 iaN = times(inertiaA, raN), ibN = times(inertiaB, rbN);
            L.raN[slot] = raN;
            L.rbN[slot] = rbN;
            L.iaN[slot] = iaN;
            L.ibN[slot] = ibN;
            L.massN[slot] =
                valid[slot] > zero ? inverseOrZero(wa + wb + dot(raN, iaN) + dot(rbN, ibN)) : zero;
            L.sep[slot] = sep[slot];
            L.gap[slot] = sep[slot];
            L.lambdaN[slot] = lambdaN[slot];
            const V4 off = armA[slot] - centreA;
            D4 distance = dot(off, off);
            for (int l = 0; l < kRigidLanes; ++l) {
                distance[l] = std::sqrt(distance[l]);
            }
            radius += valid[slot] * distance;
        }
        L.twistRadius = points > zero ? radius / points : zero;
        // tangents() in the lanes: two unit tangents perpendicular to n, the same for the same n
        // (so that friction impulses warm-start along the same directions).
        const D4 ax = normal.x < zero ? -normal.x : normal.x;
        D4 lengthX = normal.x * normal.x + normal.y * normal.y,
           lengthZ = normal.y * normal.y + normal.z * normal.z;
        for (int l = 0; l < kRigidLanes; ++l) {
            lengthX[l] = 1 / std::sqrt(lengthX[l]);
            lengthZ[l] = 1 / std::sqrt(lengthZ[l]);
        }
        const auto alongX = ax >= zero + 0.57735f;
        const V4 t1{alongX ? normal.y * lengthX : zero,
                    alongX ? -normal.x * lengthX : normal.z * lengthZ,
                    alongX ? zero : -normal.y * lengthZ};
        const V4 t2 = cross(normal, t1);
        const V4 raT1 = cross(centreA, t1), rbT1 = cross(centreB, t1), raT2 = cross(centreA, t2),
                 rbT2 = cross(centreB, t2);
        const V4 iaT1 = times(inertiaA, raT1), ibT1 = times(inertiaB, rbT1),
                 iaT2 = times(inertiaA, raT2), ibT2 = times(inertiaB, rbT2);
        const V4 iaTwist = times(inertiaA, normal), ibTwist = times(inertiaB, normal);
        L.t1 = t1;
        L.t2 = t2;
        L.raT1 = raT1;
        L.rbT1 = rbT1;
        L.raT2 = raT2;
        L.rbT2 = rbT2;
        L.iaT1 = iaT1;
        L.ibT1 = ibT1;
        L.iaT2 = iaT2;
        L.ibT2 = ibT2;
        L.iaTwist = iaTwist;
        L.ibTwist = ibTwist;
        L.massT1 = inverseOrZero(wa + wb + dot(raT1, iaT1) + dot(rbT1, ibT1));
        L.massT2 = inverseOrZero(wa + wb + dot(raT2, iaT2) + dot(rbT2, ibT2));
        L.massTwist = inverseOrZero(dot(normal, iaTwist) + dot(normal, ibTwist));
    };
    // The manifolds are fetched a batch ahead of their building (the part read: up to the
    // impulses).
    const auto prefetch = [&](std::uint32_t mi) {
        const char* p = reinterpret_cast<const char*>(&manifolds_[mi]);
        for (std::size_t at = 0; at <= offsetof(CachedManifold, warm); at += 64) {
            __builtin_prefetch(p + at);
        }
    };
    batches_.clear();
    for (const std::vector<std::uint32_t>& colour : byColour) {
        for (std::size_t first = 0; first < colour.size(); first += kRigidLanes) {
            const int count = int(std::min<std::size_t>(kRigidLanes, colour.size() - first));
            for (std::size_t next = first + kRigidLanes;
                 next < std::min(colour.size(), first + 2 * kRigidLanes); ++next) {
                prefetch(colour[next]);
            }
            const std::uint32_t index = std::uint32_t(batches_.size());
            buildBatch(batches_.emplace_back(), index, colour.data() + first, count);
        }
    }
    for (const std::uint32_t mi : overflow) {
        const std::uint32_t index = std::uint32_t(batches_.size());
        buildBatch(batches_.emplace_back(), index, &mi, 1);
    }

    // Joint constraints, from the bodies' current poses; rebuilt every substep.
    std::vector<JointConstraint>& jointRows = jointRows_;
    const auto buildJoints = [&](Real hj) {
        jointRows.clear();
        for (const std::uint32_t index : jointOrder) {
            const RigidJoint& j = joints[index];
            const int a = j.bodyA < 0 ? n : j.bodyA, b = j.bodyB < 0 ? n : j.bodyB;
            if ((a == n || !awake(a)) && (b == n || !awake(b))) {
                continue;
            }
            touched[std::size_t(a)] = touched[std::size_t(b)] = 1;
            JointConstraint c;
            c.joint = &j;
            c.a = a;
            c.b = b;
            const SolverBody &sa = solverBodies_[a], &sb = solverBodies_[b];
            const Quat qa = a == n ? Quat::Identity() : bodies[a].q;
            const Quat qb = b == n ? Quat::Identity() : bodies[b].q;
            const Vec3 xa = a == n ? Vec3::Zero() : bodies[a].x;
            const Vec3 xb = b == n ? Vec3::Zero() : bodies[b].x;
            c.ra = qa * j.anchorA;
            c.rb = qb * j.anchorB;
            c.wa = sa.inverseMass;
            c.wb = sb.inverseMass;
            c.ia = sa.inverseInertia;
            c.ib = sb.inverseInertia;
            const Mat3 Sa = skew(c.ra), Sb = skew(c.rb);
            const Mat3 K = (c.wa + c.wb) * Mat3::Identity() - Sa * c.ia * Sa - Sb * c.ib * Sb;
            c.linearMass = K.inverse();
            const Vec3 error = (xb + c.rb) - (xa + c.ra);
            c.linearBias = settings.jointCorrection / hj * error;
            const Mat3 angularK = c.ia + c.ib;
            if (j.type == RigidJointType::Hinge) {
                const Vec3 axisA = qa * j.axisA, axisB = qb * j.axisB;
                c.axis = axisA;
                const Vec3 u1 = axisA.unitOrthogonal(), u2 = axisA.cross(u1);
                c.angularRows = 2;
                c.angularAxes.row(0) = u1.transpose();
                c.angularAxes.row(1) = u2.transpose();
                c.angularAxes.row(2).setZero();
                Eigen::Matrix2d k2;
                k2 << u1.dot(angularK * u1), u1.dot(angularK * u2), u2.dot(angularK * u1),
                    u2.dot(angularK * u2);
                c.angularMass.setZero();
                c.angularMass.topLeftCorner<2, 2>() = k2.inverse();
                const Vec3 misalignment = axisA.cross(axisB);
                c.angularBias = settings.jointCorrection / hj *
                                Vec3(u1.dot(misalignment), u2.dot(misalignment), 0);
                const Real k1 = axisA.dot(angularK * axisA);
                c.axialMass = k1 > 0 ? 1 / k1 : 0;
                if (j.limit) {
                    const Real angle = hingeAngle(bodies, j);
                    // Speculative limits: active near the bound, allowing the approach that is
                    // left.
                    const Real toLower = angle - j.lowerAngle, toUpper = j.upperAngle - angle;
                    c.lowerActive = toLower < 0.1;
                    c.upperActive = toUpper < 0.1;
                    c.lowerBias =
                        toLower < 0 ? settings.jointCorrection * toLower / hj : toLower / hj;
                    c.upperBias =
                        toUpper < 0 ? settings.jointCorrection * toUpper / hj : toUpper / hj;
                }
            } else if (j.type == RigidJointType::Fixed) {
                c.angularRows = 3;
                c.angularAxes.setIdentity();
                c.angularMass = angularK.inverse();
                // The rotation that takes B's current orientation to the kept one, as a vector.
                Quat turn = qb * (qa * j.restRotation).conjugate();
                if (turn.w() < 0) {
                    turn.coeffs() = -turn.coeffs();
                }
                c.angularBias = settings.jointCorrection / hj * 2 * turn.vec();
            }
            jointRows.push_back(c);
        }
    };
    buildJoints(hs);
    // With substeps, the bodies a constraint acts on and the kinematic ones move in floats,
    // which the sweeps read: each substep adds h_s v and h_s omega to the body's move and turn
    // since the step's start (sweepMoves_) and turns its orientation's turn (turns_, from the
    // identity: q += (angle/2, 0) q, normalised). The poses take them at the end of the step,
    // and the jointed bodies' every substep (the joints are rebuilt from them). Free bodies
    // fall and turn in doubles once, at the end.
    std::vector<int>& substepped = substepped_;
    std::vector<int>& jointed = jointed_;
    substepped.clear();
    jointed.clear();
    if (track) {
        turns_.assign(std::size_t(n), SubstepTurn{});
        startOrientations_.resize(std::size_t(n));
        for (int i = 0; i < n; ++i) {
            startOrientations_[std::size_t(i)] = bodies[i].q;
            if ((awake(i) && touched[std::size_t(i)]) ||
                bodies[i].motion == RigidMotion::Kinematic) {
                substepped.push_back(i);
            }
        }
        for (const JointConstraint& c : jointRows) {
            for (const int i : {c.a, c.b}) {
                if (i < n && (awake(i) || bodies[i].motion == RigidMotion::Kinematic)) {
                    jointed.push_back(i);
                }
            }
        }
        // A link between two joints is posed once per substep.
        std::sort(jointed.begin(), jointed.end());
        jointed.erase(std::unique(jointed.begin(), jointed.end()), jointed.end());
    }
    const auto poseAfterSubsteps = [&](int i) {
        const SubstepTurn& t = turns_[std::size_t(i)];
        const Quat turn(double(t.w), double(t.x), double(t.y), double(t.z));
        return std::pair<Vec3, Quat>(solverBodies_[std::size_t(i)].x +
                                         recordFirst(sweepMoves_[std::size_t(i)].value),
                                     (turn * startOrientations_[std::size_t(i)]).normalized());
    };
    for (const JointConstraint& c : jointRows) {
        stats_.rows += 3 + std::size_t(c.angularRows) + (c.lowerActive || c.upperActive) +
                       std::size_t(c.joint->motor);
    }

    // The velocities in the sweeps: floats, in the records of the lanes (sweepVelocities_);
    // velocities_ keeps the doubles, which the bodies a constraint acts on take back after the
    // sweeps (syncToDoubles; with substeps once, at the end of the step) and the free ones keep.
    std::vector<Velocity>& sb = velocities_;
    std::vector<SweepRecord>& fv = sweepVelocities_;
    fv.resize(std::size_t(n) + 1);
    for (int i = 0; i <= n; ++i) {
        fv[std::size_t(i)].value = bodyRecord(sb[std::size_t(i)].v, sb[std::size_t(i)].w);
    }
    if (track) {
        sweepMoves_.assign(std::size_t(n) + 1, SweepRecord{});
    }
    const auto load = [&](int i) {
        const D4& r = fv[std::size_t(i)].value;
        return Velocity{recordFirst(r), recordSecond(r)};
    };
    const auto store = [&](int i, const Velocity& u) {
        fv[std::size_t(i)].value = bodyRecord(u.v, u.w);
    };
    const auto syncToDoubles = [&] {
        for (int i = 0; i < n; ++i) {
            if (touched[std::size_t(i)] && movable(i)) {
                sb[std::size_t(i)] = load(i);
            }
        }
    };
    const auto solveJoint = [&](JointConstraint& c, Real hj) {
        Velocity A = load(c.a), B = load(c.b);
        const auto applyJointLinear = [&](const Vec3& impulse) {
            A.v -= c.wa * impulse;
            A.w -= c.ia * c.ra.cross(impulse);
            B.v += c.wb * impulse;
            B.w += c.ib * c.rb.cross(impulse);
        };
        const auto applyJointAngular = [&](const Vec3& angular) {
            A.w -= c.ia * angular;
            B.w += c.ib * angular;
        };
        {
            const Vec3 cdot = B.v + B.w.cross(c.rb) - A.v - A.w.cross(c.ra);
            const Vec3 impulse = -(c.linearMass * (cdot + c.linearBias));
            c.linearImpulse += impulse;
            applyJointLinear(impulse);
        }
        if (c.angularRows > 0) {
            const Vec3 relativeW = B.w - A.w;
            Vec3 cdot = c.angularAxes * relativeW;
            if (c.angularRows == 2) {
                cdot.z() = 0;
            }
            const Vec3 impulse = -(c.angularMass * (cdot + c.angularBias));
            c.angularImpulse += impulse;
            applyJointAngular(c.angularAxes.transpose() * impulse);
        }
        if (c.lowerActive) {
            const Real wAxis = c.axis.dot(B.w - A.w);
            // Row: +axis·(wB - wA) >= -lowerBias.
            const Real next =
                std::max<Real>(c.lowerImpulse - c.axialMass * (wAxis + c.lowerBias), 0);
            const Real delta = next - c.lowerImpulse;
            c.lowerImpulse = next;
            applyJointAngular(delta * c.axis);
        }
        if (c.upperActive) {
            const Real wAxis = c.axis.dot(B.w - A.w);
            // Row: -axis·(wB - wA) >= -upperBias.
            const Real next =
                std::max<Real>(c.upperImpulse - c.axialMass * (-wAxis + c.upperBias), 0);
            const Real delta = next - c.upperImpulse;
            c.upperImpulse = next;
            applyJointAngular(-delta * c.axis);
        }
        if (c.joint->motor) {
            const RigidJoint& j = *c.joint;
            const Real wAxis = c.axis.dot(B.w - A.w);
            const Real bound = j.maxMotorTorque * hj;
            const Real next =
                std::clamp(c.motorImpulse - c.axialMass * (wAxis - j.motorSpeed), -bound, bound);
            applyJointAngular((next - c.motorImpulse) * c.axis);
            c.motorImpulse = next;
        }
        store(c.a, A);
        store(c.b, B);
    };

    // The lanes' body records in (velocities, or the moves) and the velocities back out: a
    // transpose of eight records each way. Within a batch no two lanes share a body that moves,
    // so every store is its lane's own; a body that cannot move is stored back unchanged (its
    // lanes' inverse mass and inertia are zero).
    struct LaneBodies {
        V4 va, wa, vb, wb;
    };
    const auto gatherRecords = [](const std::vector<SweepRecord>& records,
                                  const int(&index)[kRigidLanes], V4& first, V4& second) {
        D4 r[kRigidLanes];
        for (int l = 0; l < kRigidLanes; ++l) {
            r[l] = records[std::size_t(index[l])].value;
        }
        transpose8(r);
        first = {r[0], r[1], r[2]};
        second = {r[3], r[4], r[5]};
    };
    const auto scatterRecords = [](std::vector<SweepRecord>& records,
                                   const int(&index)[kRigidLanes], const V4& first,
                                   const V4& second) {
        D4 r[kRigidLanes] = {first.x, first.y, first.z, second.x, second.y, second.z, {}, {}};
        transpose8(r);
        for (int l = 0; l < kRigidLanes; ++l) {
            records[std::size_t(index[l])].value = r[l];
        }
    };
    const auto gather = [&](const LaneBatch& L, LaneBodies& s) {
        gatherRecords(fv, L.a, s.va, s.wa);
        gatherRecords(fv, L.b, s.vb, s.wb);
    };
    const auto scatter = [&](const LaneBatch& L, const LaneBodies& s) {
        scatterRecords(fv, L.a, s.va, s.wa);
        scatterRecords(fv, L.b, s.vb, s.wb);
    };
    const D4 zero{};
    const D4 slopLanes = zero + float(settings.slop);
    const D4 invHs = zero + float(1 / hs);
    const D4 correctionLanes = zero + float(settings.correction);
    const D4 maxPush = zero + float(settings.maxPushVelocity);
    const D4 one = zero + 1.0f;
    const D4 stepLanes = zero + float(hs);
    // The wanted separating speed of normal slot r, its mass scale and its impulse scale; with
    // useBias false (relax) only a gap may still close.
    struct RowBias {
        D4 bias, massScale, impulseScale;
    };
    const auto rowBias = [&](const LaneBatch& L, int r, bool useBias) -> RowBias {
        if (!track) {
            return {L.sep[r], one, zero};
        }
        const D4 s = L.gap[r];
        if (soft) {
            const D4 s1 = s + slopLanes;
            const auto apart = s1 > zero;
            const D4 approach = -s1 * invHs;
            if (!useBias) {
                return {apart ? approach : zero, one, zero};
            }
            D4 push = -L.biasRate * s1;
            push = push < maxPush ? push : maxPush;
            return {apart ? approach : push, apart ? one : L.massScale,
                    apart ? zero : L.impulseScale};
        }
        // The source's rigid correction, on the separation of now.
        const D4 hard =
            (s > zero ? -(s + correctionLanes * slopLanes) : -correctionLanes * (s + slopLanes)) *
            invHs;
        return {useBias ? hard : (hard < zero ? hard : zero), one, zero};
    };
    // The separations of now follow the bodies' moves: after the moves, the next sweep takes
    // them afresh, and the sweeps after it read them.
    bool movesTaken = true;
    const auto solveBatch = [&](LaneBatch& L, bool useBias) {
        LaneBodies s;
        gather(L, s);
        if (track && !movesTaken) {
            V4 ma, ta, mb, tb;
            gatherRecords(sweepMoves_, L.a, ma, ta);
            gatherRecords(sweepMoves_, L.b, mb, tb);
            for (int r = 0; r < 4; ++r) {
                L.gap[r] = L.sep[r] + dot(L.n, mb - ma) + dot(L.rbN[r], tb) - dot(L.raN[r], ta);
            }
        }
        V4 &va = s.va, &wa = s.wa, &vb = s.vb, &wb = s.wb;
        for (const std::uint8_t r : L.rows) {
            if (r < 4) {
                const RowBias rb = rowBias(L, r, useBias);
                const D4 vn = dot(L.n, vb - va) + dot(L.rbN[r], wb) - dot(L.raN[r], wa);
                D4 next = L.lambdaN[r] - L.massN[r] * rb.massScale * (vn - rb.bias) -
                          rb.impulseScale * L.lambdaN[r];
                next = next > zero ? next : zero;
                const D4 d = next - L.lambdaN[r];
                L.lambdaN[r] = next;
                va -= L.n * (L.wa * d);
                wa -= L.iaN[r] * d;
                vb += L.n * (L.wb * d);
                wb += L.ibN[r] * d;
                continue;
            }
            const D4 support = L.lambdaN[0] + L.lambdaN[1] + L.lambdaN[2] + L.lambdaN[3];
            if (r == 6) {
                // Twist: the relative spin about the normal, bounded by mu N times the patch's
                // mean radius.
                const D4 bound = L.mu * support * L.twistRadius;
                const D4 next =
                    clampLanes(L.lambdaTwist - L.massTwist * dot(L.n, wb - wa), -bound, bound);
                const D4 d = next - L.lambdaTwist;
                L.lambdaTwist = next;
                wa -= L.iaTwist * d;
                wb += L.ibTwist * d;
                continue;
            }
            const bool first = r == 4;
            const V4& t = first ? L.t1 : L.t2;
            D4& lambda = first ? L.lambdaT1 : L.lambdaT2;
            const D4 vt = dot(t, vb - va) + dot(first ? L.rbT1 : L.rbT2, wb) -
                          dot(first ? L.raT1 : L.raT2, wa);
            const D4 bound = L.mu * support;
            const D4 next = clampLanes(lambda - (first ? L.massT1 : L.massT2) * vt, -bound, bound);
            const D4 d = next - lambda;
            lambda = next;
            va -= t * (L.wa * d);
            wa -= (first ? L.iaT1 : L.iaT2) * d;
            vb += t * (L.wb * d);
            wb += (first ? L.ibT1 : L.ibT2) * d;
        }
        scatter(L, s);
    };
    // Warm start (source 004): every row's impulse applied once, at the start of each substep.
    const auto warmStartBatch = [&](LaneBatch& L) {
        LaneBodies s;
        gather(L, s);
        V4 &va = s.va, &wa = s.wa, &vb = s.vb, &wb = s.wb;
        D4 normal = zero;
        for (int r = 0; r < 4; ++r) {
            normal += L.lambdaN[r];
            wa -= L.iaN[r] * L.lambdaN[r];
            wb += L.ibN[r] * L.lambdaN[r];
        }
        const V4 linear = L.n * normal + L.t1 * L.lambdaT1 + L.t2 * L.lambdaT2;
        va -= linear * L.wa;
        vb += linear * L.wb;
        wa -= L.iaT1 * L.lambdaT1 + L.iaT2 * L.lambdaT2 + L.iaTwist * L.lambdaTwist;
        wb += L.ibT1 * L.lambdaT1 + L.ibT2 * L.lambdaT2 + L.ibTwist * L.lambdaTwist;
        scatter(L, s);
    };
    const auto sweep = [&](bool useBias, Real hj) {
        for (LaneBatch& L : batches_) {
            solveBatch(L, useBias);
        }
        movesTaken = true;
        for (JointConstraint& c : jointRows) {
            solveJoint(c, hj);
        }
    };

    // Shock propagation (source 004; Guendelman03): layer by layer from the ground up, the
    // contacts are solved again with the lower body of each held (infinite mass), so the
    // support reaches the top of a stack in one pass. Serial, in doubles, on the lanes' rows.
    std::stable_sort(laneLevels.begin(), laneLevels.end(),
                     [](const LaneLevel& x, const LaneLevel& y) { return x.level < y.level; });
    const auto propagateShock = [&] {
        const auto lane = [](const V4& v, int l) {
            return Vec3(double(v.x[l]), double(v.y[l]), double(v.z[l]));
        };
        // With the lower body held, the pass may only push: its impulses are its own, from
        // zero, never taking back what the sweeps applied to both bodies (which, taken from
        // the upper body alone, would pull it down by the whole weight it carries).
        for (LaneLevel& level : laneLevels) {
            std::fill(std::begin(level.normal), std::end(level.normal), 0.0f);
            std::fill(std::begin(level.friction), std::end(level.friction), 0.0f);
        }
        for (std::size_t begin = 0; begin < laneLevels.size();) {
            std::size_t end = begin;
            while (end < laneLevels.size() && laneLevels[end].level == laneLevels[begin].level) {
                ++end;
            }
            for (int pass = 0; pass < 2; ++pass) {
                for (std::size_t k = begin; k < end; ++k) {
                    LaneLevel& own = laneLevels[k];
                    LaneBatch& L = batches_[own.batch];
                    const int l = own.lane, side = own.lower;
                    const int a = L.a[l], b = L.b[l];
                    const Real wa = side == 1 ? 0 : L.wa[l], wb = side == 2 ? 0 : L.wb[l];
                    const Vec3 normal = lane(L.n, l);
                    Velocity A = load(a), B = load(b);
                    const auto solveRow = [&](const Vec3& dir, const Vec3& ja, const Vec3& jb,
                                              Vec3 iaj, Vec3 ibj, Real bias, float& lambda, Real lo,
                                              Real hi, bool linear) {
                        if (side == 1) {
                            iaj.setZero();
                        } else if (side == 2) {
                            ibj.setZero();
                        }
                        const Real la = linear ? wa : 0, lb = linear ? wb : 0;
                        const Real mass = effectiveMass(la, lb, ja, iaj, jb, ibj);
                        const Real v =
                            (linear ? dir.dot(B.v - A.v) : 0) + jb.dot(B.w) - ja.dot(A.w);
                        const Real next = std::clamp(lambda - mass * (v - bias), lo, hi);
                        const Real d = next - lambda;
                        lambda = float(next);
                        A.v -= la * d * dir;
                        A.w -= d * iaj;
                        B.v += lb * d * dir;
                        B.w += d * ibj;
                    };
                    Real support = 0;
                    for (int r = 0; r < 4; ++r) {
                        if (L.massN[r][l] == 0) {
                            continue;
                        }
                        Real bias = L.sep[r][l];
                        if (track) {
                            const D4 &ma = sweepMoves_[std::size_t(a)].value,
                                     &mb = sweepMoves_[std::size_t(b)].value;
                            const Real sNow = L.sep[r][l] +
                                              normal.dot(recordFirst(mb) - recordFirst(ma)) +
                                              lane(L.rbN[r], l).dot(recordSecond(mb)) -
                                              lane(L.raN[r], l).dot(recordSecond(ma));
                            bias = sNow > 0 ? -(sNow + settings.correction * settings.slop) / hs
                                            : -settings.correction * (sNow + settings.slop) / hs;
                        }
                        solveRow(normal, lane(L.raN[r], l), lane(L.rbN[r], l), lane(L.iaN[r], l),
                                 lane(L.ibN[r], l), bias, own.normal[r], 0,
                                 std::numeric_limits<Real>::infinity(), true);
                        support += own.normal[r];
                    }
                    // Friction up to mu times the pass's own push.
                    const Real bound = L.mu[l] * support;
                    if (bound > 0) {
                        solveRow(lane(L.t1, l), lane(L.raT1, l), lane(L.rbT1, l), lane(L.iaT1, l),
                                 lane(L.ibT1, l), 0, own.friction[0], -bound, bound, true);
                        solveRow(lane(L.t2, l), lane(L.raT2, l), lane(L.rbT2, l), lane(L.iaT2, l),
                                 lane(L.ibT2, l), 0, own.friction[1], -bound, bound, true);
                        const Real twist = bound * L.twistRadius[l];
                        solveRow(normal, normal, normal, lane(L.iaTwist, l), lane(L.ibTwist, l), 0,
                                 own.friction[2], -twist, twist, false);
                    }
                    store(a, A);
                    store(b, B);
                }
            }
            begin = end;
        }
    };

    // Positions (§5 step 1): x += h v and R turned by h omega. In the single solve, omega is
    // taken at the middle of the turn, omega_mid = I_mid^-1 L with I_mid = R_mid I' R_mid^T (a
    // few fixed-point rounds): with L exact in free flight this keeps the kinetic energy, where
    // turning by the omega of the step's start gains energy every step. With substeps, the
    // bodies a constraint acts on turn by the solved omega every substep, and free bodies turn
    // this way once, at the end.
    const auto turnThroughL = [&](RigidBody& b, int i) {
        const Vec3 L = sb[i].w == omegaBefore[i]
                           ? b.L
                           : Vec3(b.L + inertiaBefore[i] * (sb[i].w - omegaBefore[i]));
        Vec3 w = sb[i].w;
        for (int round = 0; round < 4; ++round) {
            const Mat3 R = turned(b.q, 0.5 * h * w).toRotationMatrix();
            const Vec3 next = R * (b.inverseInertiaBody * (R.transpose() * L));
            const bool settled = (next - w).squaredNorm() <= 1e-28 * next.squaredNorm();
            w = next;
            if (settled) {
                break;
            }
        }
        b.q = turned(b.q, h * w).normalized();
    };
    const auto integratePositions = [&] {
        if (track) {
            movesTaken = false;
            for (const int i : substepped) {
                D4& move = sweepMoves_[std::size_t(i)].value;
                const D4 angle = stepLanes * fv[std::size_t(i)].value;
                move += angle;
                // The source's R += h [omega]x R for a quaternion, q += (angle/2, 0) q,
                // normalised: a substep's turn (small), without the sine and cosine of the
                // exact one.
                const float x = 0.5f * angle[3], y = 0.5f * angle[4], z = 0.5f * angle[5];
                SubstepTurn& t = turns_[std::size_t(i)];
                const float qx = t.x + t.w * x + (y * t.z - z * t.y);
                const float qy = t.y + t.w * y + (z * t.x - x * t.z);
                const float qz = t.z + t.w * z + (x * t.y - y * t.x);
                const float qw = t.w - (x * t.x + y * t.y + z * t.z);
                const float norm = 1 / std::sqrt(qx * qx + qy * qy + qz * qz + qw * qw);
                t = {qx * norm, qy * norm, qz * norm, qw * norm};
            }
            for (const int i : jointed) {
                std::tie(bodies[i].x, bodies[i].q) = poseAfterSubsteps(i);
            }
            return;
        }
        for (int i = 0; i < n; ++i) {
            RigidBody& b = bodies[i];
            if (awake(i)) {
                b.x += h * sb[i].v;
                turnThroughL(b, i);
            } else if (b.motion == RigidMotion::Kinematic) {
                b.x += h * sb[i].v;
                b.q = turned(b.q, h * b.omega).normalized();
            }
        }
    };

    // The substeps (one for the source's single solve): gravity, warm start, sweeps, shock
    // propagation, positions, relax.
    // Split push (see RigidSettings::separatePush); the soft step has its own.
    const bool split = settings.separatePush && settings.warmStart && !soft;
    const D4 fall = bodyRecord(hs * gravity, Vec3::Zero());
    for (int sub = 0; sub < substeps; ++sub) {
        if (track) {
            for (const int i : substepped) {
                if (movable(i)) {
                    fv[std::size_t(i)].value += fall;
                }
            }
        } else {
            for (int i = 0; i < n; ++i) {
                if (awake(i)) {
                    sb[std::size_t(i)].v += hs * gravity;
                    fv[std::size_t(i)].value =
                        bodyRecord(sb[std::size_t(i)].v, sb[std::size_t(i)].w);
                }
            }
        }
        if (sub > 0) {
            buildJoints(hs);
        }
        for (LaneBatch& L : batches_) {
            warmStartBatch(L);
        }
        if (split) {
            // The velocities first, without the push out of penetrations: the sweeps' own
            // speculative approach stays; joints keep their correction.
            constexpr std::size_t kSaved = 11; // per batch: 4 biases, then 7 impulses
            static_assert(sizeof(LaneBlock) == sizeof(D4) && alignof(LaneBlock) >= alignof(D4));
            pushSaved_.resize(batches_.size() * kSaved);
            D4* saved = reinterpret_cast<D4*>(pushSaved_.data());
            for (std::size_t k = 0; k < batches_.size(); ++k) {
                LaneBatch& L = batches_[k];
                for (int r = 0; r < 4; ++r) {
                    saved[k * kSaved + std::size_t(r)] = L.sep[r];
                    if (!track) {
                        L.sep[r] = L.sep[r] < zero ? L.sep[r] : zero;
                    }
                }
            }
            for (int it = 0; it < settings.iterations; ++it) {
                sweep(false, hs);
            }
            if (shock) {
                propagateShock();
            }
            // Then the push, from there. It moves the positions only: the velocities and the
            // impulses are put back afterwards.
            pushVelocities_ = fv;
            for (std::size_t k = 0; k < batches_.size(); ++k) {
                LaneBatch& L = batches_[k];
                D4* at = saved + k * kSaved;
                for (int r = 0; r < 4; ++r) {
                    L.sep[r] = at[r];
                    at[4 + r] = L.lambdaN[r];
                }
                at[8] = L.lambdaT1;
                at[9] = L.lambdaT2;
                at[10] = L.lambdaTwist;
            }
            for (int it = 0; it < settings.relaxIterations; ++it) {
                sweep(true, hs);
            }
            if (!track) {
                syncToDoubles();
            }
            integratePositions();
            fv.swap(pushVelocities_);
            for (std::size_t k = 0; k < batches_.size(); ++k) {
                LaneBatch& L = batches_[k];
                const D4* at = saved + k * kSaved;
                for (int r = 0; r < 4; ++r) {
                    L.lambdaN[r] = at[4 + r];
                }
                L.lambdaT1 = at[8];
                L.lambdaT2 = at[9];
                L.lambdaTwist = at[10];
            }
            if (!track) {
                syncToDoubles();
            }
            continue;
        }
        for (int it = 0; it < settings.iterations; ++it) {
            sweep(true, hs);
        }
        if (shock) {
            propagateShock();
        }
        if (!track) {
            syncToDoubles();
        }
        integratePositions();
        // Relax: sweeps without the push out, so the velocity it took does not stay in the
        // bodies as energy (Catto's relax iterations, Box2D v3); the penetration has been
        // corrected in the positions above. Speculative contacts keep their allowed approach.
        if (settings.relaxIterations > 0) {
            if (!track) {
                for (LaneBatch& L : batches_) {
                    for (D4& bias : L.sep) {
                        bias = bias < zero ? bias : zero;
                    }
                }
            }
            for (JointConstraint& c : jointRows) {
                c.linearBias.setZero();
                c.angularBias.setZero();
                c.lowerBias = std::max<Real>(c.lowerBias, 0);
                c.upperBias = std::max<Real>(c.upperBias, 0);
            }
            for (int it = 0; it < settings.relaxIterations; ++it) {
                sweep(false, hs);
            }
            if (!track) {
                syncToDoubles();
            }
        }
    }
    if (track) {
        for (const int i : substepped) {
            std::tie(bodies[i].x, bodies[i].q) = poseAfterSubsteps(i);
        }
        syncToDoubles();
        // The free bodies, substep by substep in doubles: they fall, and turn through L.
        for (int i = 0; i < n; ++i) {
            if (awake(i) && !touched[std::size_t(i)]) {
                Velocity& u = sb[std::size_t(i)];
                for (int sub = 0; sub < substeps; ++sub) {
                    u.v += hs * gravity;
                    bodies[i].x += hs * u.v;
                }
                turnThroughL(bodies[i], i);
            }
        }
    }

    // Store the impulses for the next step's warm start (and the report, contacts()).
    solved_.assign(manifoldCount, 0);
    reportSubsteps_ = substeps;
    contactsStale_ = true;
    // The manifolds are written in a random order: each is fetched two batches ahead.
    const auto fetchForWriting = [&](const LaneBatch& L) {
        for (const int mi : L.manifold) {
            if (mi >= 0) {
                const char* p = reinterpret_cast<const char*>(&manifolds_[std::size_t(mi)]);
                __builtin_prefetch(p + offsetof(CachedManifold, manifold.count), 1);
                __builtin_prefetch(p + offsetof(CachedManifold, normalImpulse), 1);
                __builtin_prefetch(p + offsetof(CachedManifold, frictionImpulse) + sizeof(Vec3) - 1,
                                   1);
            }
        }
    };
    for (std::size_t k = 0; k < batches_.size(); ++k) {
        const LaneBatch& L = batches_[k];
        if (k + 2 < batches_.size()) {
            fetchForWriting(batches_[k + 2]);
        }
        for (int l = 0; l < kRigidLanes; ++l) {
            if (L.manifold[l] < 0) {
                continue;
            }
            CachedManifold& cm = manifolds_[std::size_t(L.manifold[l])];
            for (int slot = 0; slot < 4; ++slot) {
                if (L.slotPoint[l][slot] < cm.manifold.count) {
                    cm.normalImpulse[L.slotPoint[l][slot]] = L.lambdaN[slot][l];
                }
            }
            cm.frictionImpulse = Vec3(L.lambdaT1[l], L.lambdaT2[l], L.lambdaTwist[l]);
            solved_[std::size_t(L.manifold[l])] = 1;
        }
    }

    // Velocities back; L changes by I (omega_after - omega_before), exactly zero without
    // contacts or joints, so |L| is kept bit for bit in free flight. Then omega for the new
    // orientation (§5 steps 2-4), so views and energies see the current one.
    for (int i = 0; i < n; ++i) {
        RigidBody& b = bodies[i];
        if (!awake(i)) {
            continue;
        }
        const Velocity& s = sb[i];
        b.v = s.v;
        if (s.w != omegaBefore[i]) {
            b.L += inertiaBefore[i] * (s.w - omegaBefore[i]);
        }
        b.omega = b.inverseInertiaWorld() * b.L;
    }

    maxJointError_ = 0;
    for (const RigidJoint& j : joints) {
        const auto anchors = jointAnchors(bodies, j);
        maxJointError_ = std::max(maxJointError_, (anchors[0] - anchors[1]).norm());
    }

    // Sleeping per island (source 004, スリープ).
    UnionFind islands(n);
    for (const CachedManifold& m : manifolds_) {
        const int a = m.manifold.bodyA, b = m.manifold.bodyB;
        if (bodies[a].isDynamic() && bodies[b].isDynamic()) {
            islands.unite(a, b);
        }
    }
    for (const RigidJoint& j : joints) {
        if (j.bodyA >= 0 && j.bodyB >= 0 && bodies[j.bodyA].isDynamic() &&
            bodies[j.bodyB].isDynamic()) {
            islands.unite(j.bodyA, j.bodyB);
        }
    }
    std::vector<Real> islandRest(n, std::numeric_limits<Real>::infinity());
    std::vector<char> islandPinnedAwake(n, 0);
    for (int i = 0; i < n; ++i) {
        RigidBody& b = bodies[i];
        if (!b.isDynamic()) {
            continue;
        }
        const int root = islands.find(i);
        if (root == i) {
            ++stats_.islands;
        }
        if (b.sleeping) {
            continue;
        }
        const bool still =
            b.v.norm() < settings.sleepLinearSpeed && b.omega.norm() < settings.sleepAngularSpeed;
        b.restTime = still ? b.restTime + h : 0;
        islandRest[root] = std::min(islandRest[root], b.restTime);
    }
    // Bodies jointed to the world or to a kinematic body stay awake with a moving driver.
    for (const RigidJoint& j : joints) {
        for (int side : {j.bodyA, j.bodyB}) {
            if (side >= 0 && bodies[side].isDynamic()) {
                const int other = side == j.bodyA ? j.bodyB : j.bodyA;
                if (other >= 0 && bodies[other].motion == RigidMotion::Kinematic) {
                    islandPinnedAwake[islands.find(side)] = 1;
                }
            }
        }
    }
    for (const CachedManifold& m : manifolds_) {
        const int a = m.manifold.bodyA, b = m.manifold.bodyB;
        if (bodies[a].motion == RigidMotion::Kinematic && bodies[b].isDynamic()) {
            islandPinnedAwake[islands.find(b)] = 1;
        }
        if (bodies[b].motion == RigidMotion::Kinematic && bodies[a].isDynamic()) {
            islandPinnedAwake[islands.find(a)] = 1;
        }
    }
    if (settings.sleeping) {
        for (int i = 0; i < n; ++i) {
            RigidBody& b = bodies[i];
            const int root = islands.find(i);
            if (b.isDynamic() && !b.sleeping && !islandPinnedAwake[root] &&
                islandRest[root] >= settings.sleepTime) {
                b.sleeping = true;
                b.v.setZero();
                b.L.setZero();
                b.omega.setZero();
            }
        }
    }
    stats_.solveMilliseconds = millisecondsSince(solveStart);
}

} // namespace pbd
