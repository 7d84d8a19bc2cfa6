#include "core/RigidSolver.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <climits>
#include <cmath>
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

// One contact point's normal row (the bodies, normal and inverse masses are its manifold's,
// in its FrictionConstraint).
struct RigidSolver::PointConstraint {
    Vec3 raN, rbN; // r x n
    Vec3 iaN, ibN; // I^-1 (r x n), scaled
    Real massN;
    Real bias;
    Real lambdaN;
    int manifold, point;
};

// The friction of one manifold, at the centre of its points: two tangent rows bounded by
// mu times the manifold's total normal impulse, and a twist row about the normal. Per-point
// friction rows would leave self-balancing tangential impulses that no sweep sees, which warm
// starting carries from step to step until they use up the friction and stacks creep.
struct RigidSolver::FrictionConstraint {
    int a, b;
    int firstPoint, pointCount;
    Vec3 n, t1, t2;
    Vec3 raT1, rbT1, raT2, rbT2;
    Vec3 iaT1, ibT1, iaT2, ibT2, iaTwist, ibTwist;
    Real wa, wb;
    Real massT1, massT2, massTwist;
    Real mu, twistRadius;
    Real lambdaT1, lambdaT2, lambdaTwist;
    // The manifold's rows in the order they are swept: 0-3 the points' normals, 4-6 friction
    // along t1, t2 and the twist.
    std::array<std::uint8_t, 7> rows;
    int rowCount;
};

// Four manifolds solved side by side, one per SIMD lane: within a colour no two manifolds share
// a dynamic body, so the lanes are independent and the sweep is still Gauss-Seidel (in colour
// order). Each lane holds one manifold's rows as FrictionConstraint and PointConstraint do;
// slot s of a lane holds the point slotPoint[lane][s] (a padding slot has zero mass and never
// pushes). All lanes sweep their rows in the batch's order `rows` (0-3 the normal slots, 4-6
// friction along t1, t2 and the twist).
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
} // namespace

struct RigidSolver::LaneBatch {
    int a[kRigidLanes], b[kRigidLanes];
    int friction[kRigidLanes]; // the lane's FrictionConstraint, -1 for a padding lane
    std::uint8_t slotPoint[kRigidLanes][4];
    std::array<std::uint8_t, 7> rows;
    D4 wa, wb, mu, twistRadius;
    V4 n, t1, t2;
    V4 raN[4], rbN[4], iaN[4], ibN[4];
    D4 massN[4], bias[4], lambdaN[4];
    V4 raT1, rbT1, raT2, rbT2, iaT1, ibT1, iaT2, ibT2, iaTwist, ibTwist;
    D4 massT1, massT2, massTwist, lambdaT1, lambdaT2, lambdaTwist;
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
    stats_ = {};
    steps_ = 0;
    maxJointError_ = 0;
}

void RigidSolver::detect(std::vector<RigidBody>& bodies, const std::vector<RigidJoint>& joints,
                         const RigidSettings& settings) {
    const int n = int(bodies.size());
    // Broadphase: sort and sweep the shapes' bounds along x.
    struct Proxy {
        Bounds bounds;
        int body, shape;
    };
    std::vector<Proxy> proxies;
    const Vec3 fatten = Vec3::Constant(0.5 * settings.contactMargin);
    for (int i = 0; i < n; ++i) {
        for (int s = 0; s < int(bodies[i].shapes.size()); ++s) {
            Bounds b = shapeBounds(bodies[i], bodies[i].shapes[s]);
            b.min -= fatten;
            b.max += fatten;
            proxies.push_back({b, i, s});
        }
    }
    std::sort(proxies.begin(), proxies.end(), [](const Proxy& p, const Proxy& q) {
        return p.bounds.min.x() < q.bounds.min.x() ||
               (p.bounds.min.x() == q.bounds.min.x() &&
                (p.body < q.body || (p.body == q.body && p.shape < q.shape)));
    });
    std::vector<std::pair<int, int>> jointPairs;
    for (const RigidJoint& j : joints) {
        if (!j.collideConnected && j.bodyA >= 0 && j.bodyB >= 0) {
            jointPairs.push_back({std::min(j.bodyA, j.bodyB), std::max(j.bodyA, j.bodyB)});
        }
    }
    std::sort(jointPairs.begin(), jointPairs.end());
    const auto active = [&](int i) { return bodies[i].isDynamic() && !bodies[i].sleeping; };
    const auto resting = [&](int i) {
        return !bodies[i].isDynamic() ? bodies[i].motion == RigidMotion::Static
                                      : bodies[i].restTime >= settings.aggressiveSleepTime;
    };
    struct Candidate {
        std::uint64_t key;
        int a, sa, b, sb;
    };
    std::vector<Candidate> candidates;
    for (std::size_t i = 0; i < proxies.size(); ++i) {
        const Proxy& p = proxies[i];
        for (std::size_t j = i + 1; j < proxies.size(); ++j) {
            const Proxy& q = proxies[j];
            if (q.bounds.min.x() > p.bounds.max.x()) {
                break;
            }
            if (p.body == q.body || q.bounds.min.y() > p.bounds.max.y() ||
                p.bounds.min.y() > q.bounds.max.y() || q.bounds.min.z() > p.bounds.max.z() ||
                p.bounds.min.z() > q.bounds.max.z()) {
                continue;
            }
            if (!bodies[p.body].isDynamic() && !bodies[q.body].isDynamic()) {
                continue;
            }
            const bool swap = q.body < p.body;
            Candidate c{0, swap ? q.body : p.body, swap ? q.shape : p.shape, swap ? p.body : q.body,
                        swap ? p.shape : q.shape};
            if (std::binary_search(jointPairs.begin(), jointPairs.end(), std::pair{c.a, c.b})) {
                continue;
            }
            c.key = pairKey(c.a, c.sa, c.b, c.sb);
            candidates.push_back(c);
        }
    }
    std::sort(candidates.begin(), candidates.end(),
              [](const Candidate& x, const Candidate& y) { return x.key < y.key; });
    stats_.candidatePairs = candidates.size();
    const auto cached = [&](std::uint64_t key) -> const CachedManifold* {
        auto it =
            std::lower_bound(previous_.begin(), previous_.end(), key,
                             [](const CachedManifold& m, std::uint64_t k) { return m.key < k; });
        return it != previous_.end() && it->key == key ? &*it : nullptr;
    };
    const auto narrow = [&](const Candidate& c, CachedManifold& out) {
        out.key = c.key;
        RigidManifold& m = out.manifold;
        m.bodyA = c.a;
        m.bodyB = c.b;
        m.shapeA = c.sa;
        m.shapeB = c.sb;
        const RigidBody &A = bodies[c.a], &B = bodies[c.b];
        out.xA = A.x;
        out.xB = B.x;
        const RigidShape &sA = A.shapes[c.sa], &sB = B.shapes[c.sb];
        return collideShapes(sA, shapePose(A, sA), sB, shapePose(B, sB), settings.contactMargin, m);
    };
    // Pairs with an awake dynamic body are detected (or, under aggressive sleep, kept while
    // both rest); pairs of sleeping bodies keep their last manifold, so that islands stay whole
    // and wake together.
    std::vector<char> done(candidates.size(), 0);
    std::vector<CachedManifold> found;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        const Candidate& c = candidates[i];
        if (!active(c.a) && !active(c.b)) {
            continue;
        }
        done[i] = 1;
        if (settings.aggressiveSleep && resting(c.a) && resting(c.b)) {
            if (const CachedManifold* old = cached(c.key)) {
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
        CachedManifold m;
        if (narrow(c, m)) {
            found.push_back(m);
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
                        found.push_back(m);
                    }
                }
            }
        }
    }
    std::sort(found.begin(), found.end(),
              [](const CachedManifold& x, const CachedManifold& y) { return x.key < y.key; });
    manifolds_ = std::move(found);
}

void RigidSolver::computeHeights(const std::vector<RigidBody>& bodies) {
    // Height: the shortest path in the contact graph to a static or kinematic body (source 004,
    // "物体の高さ"); bodies not resting on anything keep INT_MAX.
    const int n = int(bodies.size());
    heights_.assign(n, INT_MAX);
    std::vector<std::vector<int>> neighbours(n);
    for (const CachedManifold& m : manifolds_) {
        if (m.manifold.count > 0) {
            neighbours[m.manifold.bodyA].push_back(m.manifold.bodyB);
            neighbours[m.manifold.bodyB].push_back(m.manifold.bodyA);
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
        for (int j : neighbours[i]) {
            if (heights_[j] == INT_MAX) {
                heights_[j] = heights_[i] + 1;
                stats_.maxHeight = std::max(stats_.maxHeight, heights_[j]);
                queue.push_back(j);
            }
        }
    }
}

void RigidSolver::step(std::vector<RigidBody>& bodies, const std::vector<RigidJoint>& joints,
                       const RigidSettings& settings, const Vec3& gravity, Real h) {
    const Clock::time_point start = Clock::now();
    stats_ = {};
    const int n = int(bodies.size());
    ++steps_;

    // Velocities: gravity, and omega from L with the current inertia (§5 step 3-4; no external
    // torques).
    for (RigidBody& b : bodies) {
        if (b.isDynamic() && !b.sleeping) {
            b.v += h * gravity;
            b.omega = b.inverseInertiaWorld() * b.L;
        }
    }

    previous_ = std::move(manifolds_);
    manifolds_.clear();
    detect(bodies, joints, settings);
    const bool stacking = settings.stabilisation != StackStabilisation::Off;
    if (stacking) {
        computeHeights(bodies);
    }
    stats_.detectionMilliseconds = millisecondsSince(start);
    const Clock::time_point solveStart = Clock::now();

    // Solver bodies (inverse masses) and their velocities, apart: the sweeps touch only the
    // velocities, which then stay in the cache. Index n is the world.
    solverBodies_.assign(n + 1, SolverBody{});
    velocities_.assign(std::size_t(n) + 1, Velocity{Vec3::Zero(), Vec3::Zero()});
    std::vector<Vec3> omegaBefore(n, Vec3::Zero());
    std::vector<Mat3> inertiaBefore(n, Mat3::Zero());
    for (int i = 0; i < n; ++i) {
        const RigidBody& b = bodies[i];
        SolverBody& s = solverBodies_[i];
        Velocity& u = velocities_[std::size_t(i)];
        if (b.isDynamic() && !b.sleeping) {
            u = {b.v, b.omega};
            s.inverseMass = b.inverseMass;
            s.inverseInertia = b.inverseInertiaWorld();
            inertiaBefore[i] = b.inertiaWorld();
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

    // The order the constraints are swept in, drawn once per step (source 004, Permutation:
    // the rows are permuted, then the solver starts): the manifolds and joints in a random
    // order (the order they take their colours in, and the joints' order), and each
    // manifold's rows in a random order.
    SplitMix random{steps_ * 0x2545F4914F6CDD1Dull};
    const std::uint32_t manifoldCount = std::uint32_t(manifolds_.size());
    std::vector<std::uint32_t> groupOrder(manifoldCount + joints.size());
    std::iota(groupOrder.begin(), groupOrder.end(), 0u);
    if (settings.permuteRows) {
        for (std::size_t i = groupOrder.size(); i > 1; --i) {
            std::swap(groupOrder[i - 1], groupOrder[random.next() % i]);
        }
    }
    constexpr std::uint32_t kJoint = 0x80000000u, kSkipped = 0xFFFFFFFFu;
    std::vector<std::uint32_t> groupEntry(groupOrder.size(), kSkipped);

    // Contact constraints.
    std::vector<PointConstraint>& points = points_;
    std::vector<FrictionConstraint>& frictions = frictions_;
    points.clear();
    frictions.clear();
    std::vector<int> manifoldLevel; // per friction constraint: the lower body's height
    std::vector<int> manifoldLower; // 0: none, 1: A is the lower body, 2: B is
    const auto effectiveMass = [](Real wa, Real wb, const Vec3& ja, const Vec3& iaj, const Vec3& jb,
                                  const Vec3& ibj) {
        const Real inverse = wa + wb + ja.dot(iaj) + jb.dot(ibj);
        return inverse > 0 ? 1 / inverse : 0;
    };
    // Each manifold's entry in the last step's (both sorted by key: one merge).
    std::vector<int> previousOf(manifoldCount, -1);
    for (std::size_t i = 0, j = 0; i < manifoldCount && j < previous_.size();) {
        if (manifolds_[i].key < previous_[j].key) {
            ++i;
        } else if (previous_[j].key < manifolds_[i].key) {
            ++j;
        } else {
            previousOf[i++] = int(j++);
        }
    }
    // Built in the manifolds' own order (reading them front to back); the sweep order is
    // groupOrder's, through the colours and batches below.
    for (std::uint32_t group = 0; group < manifoldCount; ++group) {
        const int mi = int(group);
        CachedManifold& cm = manifolds_[mi];
        const RigidManifold& m = cm.manifold;
        if (!awake(m.bodyA) && !awake(m.bodyB)) {
            continue;
        }
        ++stats_.manifolds;
        // Warm start: the last step's impulses of the same features (source 004, Warm Start).
        const bool hasOld = settings.warmStart && previousOf[std::size_t(mi)] >= 0;
        const CachedManifold* old =
            hasOld ? &previous_[std::size_t(previousOf[std::size_t(mi)])] : nullptr;
        const RigidBody &A = bodies[m.bodyA], &B = bodies[m.bodyB];
        const SolverBody &sa = solverBodies_[m.bodyA], &sb = solverBodies_[m.bodyB];
        Real scaleA = 1, scaleB = 1;
        int lower = 0, level = 0;
        if (stacking) {
            const int ha = heights_[m.bodyA], hb = heights_[m.bodyB];
            level = std::min(ha, hb);
            lower = ha < hb ? 1 : hb < ha ? 2 : 0;
            if (settings.stabilisation == StackStabilisation::WeightAmplification) {
                // The lower body counts c times heavier in this contact (source 004, WA法).
                if (lower == 1) {
                    scaleA = 1 / settings.weightAmplification;
                } else if (lower == 2) {
                    scaleB = 1 / settings.weightAmplification;
                }
            }
        }
        const Real wa = sa.inverseMass * scaleA, wb = sb.inverseMass * scaleB;
        const Mat3 ia = sa.inverseInertia * scaleA, ib = sb.inverseInertia * scaleB;
        FrictionConstraint f;
        f.a = m.bodyA;
        f.b = m.bodyB;
        f.firstPoint = int(points.size());
        f.pointCount = m.count;
        f.n = m.normal;
        f.wa = wa;
        f.wb = wb;
        Vec3 centre = Vec3::Zero();
        for (int k = 0; k < m.count; ++k) {
            const RigidContactPoint& p = m.points[k];
            centre += p.position / Real(m.count);
            PointConstraint c;
            c.manifold = mi;
            c.point = k;
            const Vec3 ra = p.position - A.x, rb = p.position - B.x;
            c.raN = ra.cross(m.normal);
            c.rbN = rb.cross(m.normal);
            c.iaN = ia * c.raN;
            c.ibN = ib * c.rbN;
            c.massN = effectiveMass(wa, wb, c.raN, c.iaN, c.rbN, c.ibN);
            // v_error = k (d - d_slop)/h (source 004, Slop), on both sides of the slop: deeper
            // is pushed out, shallower may sink in, so a resting body settles at the slop. Apart
            // (a speculative contact), the gap may also close within the step.
            const Real depth = -p.separation;
            c.bias = settings.correction * (std::max<Real>(depth, 0) - settings.slop) / h +
                     std::min<Real>(depth, 0) / h;
            c.lambdaN = 0;
            if (hasOld) {
                const RigidManifold& om = old->manifold;
                for (int j = 0; j < om.count; ++j) {
                    if (om.points[j].feature == p.feature) {
                        c.lambdaN = old->normalImpulse[j];
                        ++stats_.warmStarted;
                        break;
                    }
                }
            }
            points.push_back(c);
        }
        f.twistRadius = 0;
        for (int k = 0; k < m.count; ++k) {
            f.twistRadius += (m.points[k].position - centre).norm() / Real(m.count);
        }
        tangents(f.n, f.t1, f.t2);
        const Vec3 ra = centre - A.x, rb = centre - B.x;
        f.raT1 = ra.cross(f.t1);
        f.rbT1 = rb.cross(f.t1);
        f.raT2 = ra.cross(f.t2);
        f.rbT2 = rb.cross(f.t2);
        f.iaT1 = ia * f.raT1;
        f.ibT1 = ib * f.rbT1;
        f.iaT2 = ia * f.raT2;
        f.ibT2 = ib * f.rbT2;
        f.iaTwist = ia * f.n;
        f.ibTwist = ib * f.n;
        f.massT1 = effectiveMass(wa, wb, f.raT1, f.iaT1, f.rbT1, f.ibT1);
        f.massT2 = effectiveMass(wa, wb, f.raT2, f.iaT2, f.rbT2, f.ibT2);
        f.massTwist = effectiveMass(0, 0, f.n, f.iaTwist, f.n, f.ibTwist);
        f.mu = std::sqrt(std::max<Real>(A.friction, 0) * std::max<Real>(B.friction, 0));
        // Friction warm-starts at a share of its last impulse: in a stack, friction couples at
        // a box's top and bottom balanced by its normal impulses are invisible to the sweeps,
        // and carried in full from step to step they grow until the stack sways.
        const Real share = hasOld ? settings.frictionWarmStart : 0;
        f.lambdaT1 = hasOld ? share * old->frictionImpulse.x() : 0;
        f.lambdaT2 = hasOld ? share * old->frictionImpulse.y() : 0;
        f.lambdaTwist = hasOld ? share * old->frictionImpulse.z() : 0;
        f.rowCount = 0;
        for (int k = 0; k < m.count; ++k) {
            f.rows[f.rowCount++] = std::uint8_t(k);
        }
        if (f.mu > 0) {
            for (std::uint8_t r : {4, 5, 6}) {
                f.rows[f.rowCount++] = r;
            }
        }
        if (settings.permuteRows) {
            for (int i = f.rowCount; i > 1; --i) {
                std::swap(f.rows[i - 1], f.rows[random.next() % std::uint64_t(i)]);
            }
        }
        groupEntry[group] = std::uint32_t(frictions.size());
        frictions.push_back(f);
        manifoldLevel.push_back(level);
        manifoldLower.push_back(lower);
    }
    stats_.points = points.size();

    // Joint constraints.
    std::vector<JointConstraint>& jointRows = jointRows_;
    jointRows.clear();
    for (const std::uint32_t group : groupOrder) {
        if (group < manifoldCount) {
            continue;
        }
        const RigidJoint& j = joints[group - manifoldCount];
        const int a = j.bodyA < 0 ? n : j.bodyA, b = j.bodyB < 0 ? n : j.bodyB;
        if ((a == n || !awake(a)) && (b == n || !awake(b))) {
            continue;
        }
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
        c.linearBias = settings.jointCorrection / h * error;
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
            c.angularBias =
                settings.jointCorrection / h * Vec3(u1.dot(misalignment), u2.dot(misalignment), 0);
            const Real k1 = axisA.dot(angularK * axisA);
            c.axialMass = k1 > 0 ? 1 / k1 : 0;
            if (j.limit) {
                const Real angle = hingeAngle(bodies, j);
                // Speculative limits: active near the bound, allowing the approach that is left.
                const Real toLower = angle - j.lowerAngle, toUpper = j.upperAngle - angle;
                c.lowerActive = toLower < 0.1;
                c.upperActive = toUpper < 0.1;
                c.lowerBias = toLower < 0 ? settings.jointCorrection * toLower / h : toLower / h;
                c.upperBias = toUpper < 0 ? settings.jointCorrection * toUpper / h : toUpper / h;
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
            c.angularBias = settings.jointCorrection / h * 2 * turn.vec();
        }
        groupEntry[group] = kJoint | std::uint32_t(jointRows.size());
        jointRows.push_back(c);
    }

    // The sweep order: a manifold by its friction constraint's index, a joint flagged.
    order_.clear();
    stats_.rows = 0;
    for (const std::uint32_t group : groupOrder) {
        const std::uint32_t entry = groupEntry[group];
        if (entry == kSkipped) {
            continue;
        }
        order_.push_back(entry);
        if (entry & kJoint) {
            const JointConstraint& c = jointRows[entry & ~kJoint];
            stats_.rows += 3 + c.angularRows + (c.lowerActive || c.upperActive) + c.joint->motor;
        } else {
            stats_.rows += std::size_t(frictions[entry].rowCount);
        }
    }

    std::vector<Velocity>& sb = velocities_;
    const auto applyImpulse = [&](int a, int b, Real wa, Real wb, const Vec3& dir, const Vec3& ia,
                                  const Vec3& ib, Real impulse) {
        sb[a].v -= wa * impulse * dir;
        sb[a].w -= impulse * ia;
        sb[b].v += wb * impulse * dir;
        sb[b].w += impulse * ib;
    };
    const auto relative = [&](int a, int b, const Vec3& dir, const Vec3& ja, const Vec3& jb) {
        return dir.dot(sb[b].v - sb[a].v) + jb.dot(sb[b].w) - ja.dot(sb[a].w);
    };
    const auto solveNormal = [&](const FrictionConstraint& f, PointConstraint& c) {
        const Real vn = relative(f.a, f.b, f.n, c.raN, c.rbN);
        const Real next = std::max<Real>(c.lambdaN - c.massN * (vn - c.bias), 0);
        applyImpulse(f.a, f.b, f.wa, f.wb, f.n, c.iaN, c.ibN, next - c.lambdaN);
        c.lambdaN = next;
    };
    const auto solveFriction = [&](FrictionConstraint& f, int which) {
        Real support = 0;
        for (int k = 0; k < f.pointCount; ++k) {
            support += points[f.firstPoint + k].lambdaN;
        }
        if (which == 3) {
            // Twist: the relative spin about the normal, bounded by mu N times the patch's mean
            // radius.
            const Real spin = f.n.dot(sb[f.b].w - sb[f.a].w);
            const Real bound = f.mu * support * f.twistRadius;
            const Real next = std::clamp(f.lambdaTwist - f.massTwist * spin, -bound, bound);
            applyImpulse(f.a, f.b, 0, 0, f.n, f.iaTwist, f.ibTwist, next - f.lambdaTwist);
            f.lambdaTwist = next;
            return;
        }
        const Vec3& t = which == 1 ? f.t1 : f.t2;
        const Vec3& ja = which == 1 ? f.raT1 : f.raT2;
        const Vec3& jb = which == 1 ? f.rbT1 : f.rbT2;
        Real& lambda = which == 1 ? f.lambdaT1 : f.lambdaT2;
        const Real mass = which == 1 ? f.massT1 : f.massT2;
        const Real vt = relative(f.a, f.b, t, ja, jb);
        const Real bound = f.mu * support;
        const Real next = std::clamp(lambda - mass * vt, -bound, bound);
        applyImpulse(f.a, f.b, f.wa, f.wb, t, which == 1 ? f.iaT1 : f.iaT2,
                     which == 1 ? f.ibT1 : f.ibT2, next - lambda);
        lambda = next;
    };
    const auto applyJointLinear = [&](JointConstraint& c, const Vec3& impulse) {
        sb[c.a].v -= c.wa * impulse;
        sb[c.a].w -= c.ia * c.ra.cross(impulse);
        sb[c.b].v += c.wb * impulse;
        sb[c.b].w += c.ib * c.rb.cross(impulse);
    };
    const auto applyJointAngular = [&](JointConstraint& c, const Vec3& angular) {
        sb[c.a].w -= c.ia * angular;
        sb[c.b].w += c.ib * angular;
    };
    const auto solveJoint = [&](JointConstraint& c, int part) {
        if (part == 0) {
            const Vec3 cdot = sb[c.b].v + sb[c.b].w.cross(c.rb) - sb[c.a].v - sb[c.a].w.cross(c.ra);
            const Vec3 impulse = -(c.linearMass * (cdot + c.linearBias));
            c.linearImpulse += impulse;
            applyJointLinear(c, impulse);
        } else if (part == 1) {
            const Vec3 relativeW = sb[c.b].w - sb[c.a].w;
            Vec3 cdot = c.angularAxes * relativeW;
            if (c.angularRows == 2) {
                cdot.z() = 0;
            }
            const Vec3 impulse = -(c.angularMass * (cdot + c.angularBias));
            c.angularImpulse += impulse;
            applyJointAngular(c, c.angularAxes.transpose() * impulse);
        } else if (part == 2) {
            const Real wAxis = c.axis.dot(sb[c.b].w - sb[c.a].w);
            if (c.lowerActive) {
                // Row: +axis·(wB - wA) >= -lowerBias.
                const Real next =
                    std::max<Real>(c.lowerImpulse - c.axialMass * (wAxis + c.lowerBias), 0);
                const Real delta = next - c.lowerImpulse;
                c.lowerImpulse = next;
                applyJointAngular(c, delta * c.axis);
            }
            if (c.upperActive) {
                const Real w2 = c.axis.dot(sb[c.b].w - sb[c.a].w);
                // Row: -axis·(wB - wA) >= -upperBias.
                const Real next =
                    std::max<Real>(c.upperImpulse - c.axialMass * (-w2 + c.upperBias), 0);
                const Real delta = next - c.upperImpulse;
                c.upperImpulse = next;
                applyJointAngular(c, -delta * c.axis);
            }
        } else {
            const RigidJoint& j = *c.joint;
            const Real wAxis = c.axis.dot(sb[c.b].w - sb[c.a].w);
            const Real bound = j.maxMotorTorque * h;
            const Real next =
                std::clamp(c.motorImpulse - c.axialMass * (wAxis - j.motorSpeed), -bound, bound);
            applyJointAngular(c, (next - c.motorImpulse) * c.axis);
            c.motorImpulse = next;
        }
    };

    // Warm start (source 004, Warm Start).
    for (FrictionConstraint& f : frictions) {
        for (int k = 0; k < f.pointCount; ++k) {
            const PointConstraint& c = points[f.firstPoint + k];
            if (c.lambdaN != 0) {
                applyImpulse(f.a, f.b, f.wa, f.wb, f.n, c.iaN, c.ibN, c.lambdaN);
            }
        }
        applyImpulse(f.a, f.b, f.wa, f.wb, f.t1, f.iaT1, f.ibT1, f.lambdaT1);
        applyImpulse(f.a, f.b, f.wa, f.wb, f.t2, f.iaT2, f.ibT2, f.lambdaT2);
        applyImpulse(f.a, f.b, 0, 0, f.n, f.iaTwist, f.ibTwist, f.lambdaTwist);
    }

    const auto visit = [&](const std::uint32_t entry) {
        if (entry & kJoint) {
            JointConstraint& c = jointRows[entry & ~kJoint];
            solveJoint(c, 0);
            if (c.angularRows > 0) {
                solveJoint(c, 1);
            }
            if (c.lowerActive || c.upperActive) {
                solveJoint(c, 2);
            }
            if (c.joint->motor) {
                solveJoint(c, 3);
            }
            return;
        }
        // A manifold beyond the colours, row by row (the batches below solve the others).
        FrictionConstraint& f = frictions[entry];
        for (int k = 0; k < f.rowCount; ++k) {
            const int r = f.rows[k];
            if (r < 4) {
                solveNormal(f, points[f.firstPoint + r]);
            } else {
                solveFriction(f, r - 3);
            }
        }
    };
    // Colours: each manifold, in the sweep order, takes the first colour in which neither of
    // its dynamic bodies has a manifold yet (at most 64; the rest are swept one by one after
    // them, with the joints). Then eight manifolds of a colour to a batch.
    colours_.assign(std::size_t(n) + 1, 0);
    std::array<std::vector<std::uint32_t>, 64> byColour;
    serial_.clear();
    const auto movable = [&](int i) { return solverBodies_[std::size_t(i)].inverseMass > 0; };
    for (const std::uint32_t entry : order_) {
        if (entry & kJoint) {
            serial_.push_back(entry);
            continue;
        }
        const FrictionConstraint& f = frictions[entry];
        const std::uint64_t used = (movable(f.a) ? colours_[std::size_t(f.a)] : 0) |
                                   (movable(f.b) ? colours_[std::size_t(f.b)] : 0);
        if (used == ~std::uint64_t(0)) {
            serial_.push_back(entry);
            continue;
        }
        const int colour = std::countr_one(used);
        byColour[std::size_t(colour)].push_back(entry);
        for (int body : {f.a, f.b}) {
            if (movable(body)) {
                colours_[std::size_t(body)] |= std::uint64_t(1) << colour;
            }
        }
    }
    batches_.clear();
    for (const std::vector<std::uint32_t>& colour : byColour) {
        for (std::size_t first = 0; first < colour.size(); first += kRigidLanes) {
            LaneBatch& L = batches_.emplace_back();
            std::memset(static_cast<void*>(&L), 0, sizeof(L));
            // The rows' order (source 004, Permutation), shared by the four lanes; each lane's
            // points are placed in the normal slots in an order of its own.
            std::iota(L.rows.begin(), L.rows.end(), std::uint8_t(0));
            if (settings.permuteRows) {
                for (int i = 7; i > 1; --i) {
                    std::swap(L.rows[std::size_t(i - 1)],
                              L.rows[std::size_t(random.next() % std::uint64_t(i))]);
                }
            }
            for (int l = 0; l < kRigidLanes; ++l) {
                const bool used = first + std::size_t(l) < colour.size();
                const int fi = used ? int(colour[first + std::size_t(l)]) : -1;
                L.friction[l] = fi;
                L.a[l] = L.b[l] = n; // a padding lane reads and writes nothing that moves
                std::uint8_t* slots = L.slotPoint[l];
                std::iota(slots, slots + 4, std::uint8_t(0));
                if (!used) {
                    continue;
                }
                const FrictionConstraint& f = frictions[std::size_t(fi)];
                if (settings.permuteRows) {
                    for (int i = 4; i > 1; --i) {
                        std::swap(slots[i - 1], slots[random.next() % std::uint64_t(i)]);
                    }
                }
                L.a[l] = f.a;
                L.b[l] = f.b;
                L.wa[l] = f.wa;
                L.wb[l] = f.wb;
                L.mu[l] = f.mu;
                L.twistRadius[l] = f.twistRadius;
                setLane(L.n, l, f.n);
                setLane(L.t1, l, f.t1);
                setLane(L.t2, l, f.t2);
                for (int slot = 0; slot < 4; ++slot) {
                    if (slots[slot] >= f.pointCount) {
                        continue; // zero mass: never pushes
                    }
                    const PointConstraint& c = points[std::size_t(f.firstPoint + slots[slot])];
                    setLane(L.raN[slot], l, c.raN);
                    setLane(L.rbN[slot], l, c.rbN);
                    setLane(L.iaN[slot], l, c.iaN);
                    setLane(L.ibN[slot], l, c.ibN);
                    L.massN[slot][l] = c.massN;
                    L.bias[slot][l] = c.bias;
                    L.lambdaN[slot][l] = c.lambdaN;
                }
                setLane(L.raT1, l, f.raT1);
                setLane(L.rbT1, l, f.rbT1);
                setLane(L.raT2, l, f.raT2);
                setLane(L.rbT2, l, f.rbT2);
                setLane(L.iaT1, l, f.iaT1);
                setLane(L.ibT1, l, f.ibT1);
                setLane(L.iaT2, l, f.iaT2);
                setLane(L.ibT2, l, f.ibT2);
                setLane(L.iaTwist, l, f.iaTwist);
                setLane(L.ibTwist, l, f.ibTwist);
                L.massT1[l] = f.massT1;
                L.massT2[l] = f.massT2;
                L.massTwist[l] = f.massTwist;
                L.lambdaT1[l] = f.lambdaT1;
                L.lambdaT2[l] = f.lambdaT2;
                L.lambdaTwist[l] = f.lambdaTwist;
            }
        }
    }
    // The batches' impulses to and from the constraints (for shock propagation, which works on
    // the constraints, the warm start of the next step and the contacts reported).
    const auto syncImpulses = [&](bool toBatches) {
        for (LaneBatch& L : batches_) {
            for (int l = 0; l < kRigidLanes; ++l) {
                if (L.friction[l] < 0) {
                    continue;
                }
                FrictionConstraint& f = frictions[std::size_t(L.friction[l])];
                for (int slot = 0; slot < 4; ++slot) {
                    if (L.slotPoint[l][slot] < f.pointCount) {
                        Real& lambda =
                            points[std::size_t(f.firstPoint + L.slotPoint[l][slot])].lambdaN;
                        toBatches ? void(L.lambdaN[slot][l] = lambda)
                                  : void(lambda = L.lambdaN[slot][l]);
                    }
                }
                if (toBatches) {
                    L.lambdaT1[l] = f.lambdaT1;
                    L.lambdaT2[l] = f.lambdaT2;
                    L.lambdaTwist[l] = f.lambdaTwist;
                } else {
                    f.lambdaT1 = L.lambdaT1[l];
                    f.lambdaT2 = L.lambdaT2[l];
                    f.lambdaTwist = L.lambdaTwist[l];
                }
            }
        }
    };
    const auto solveBatch = [&](LaneBatch& L) {
        V4 va, wa, vb, wb;
        for (int l = 0; l < kRigidLanes; ++l) {
            const Velocity& A = sb[std::size_t(L.a[l])];
            const Velocity& B = sb[std::size_t(L.b[l])];
            setLane(va, l, A.v);
            setLane(wa, l, A.w);
            setLane(vb, l, B.v);
            setLane(wb, l, B.w);
        }
        const V4 va0 = va, wa0 = wa, vb0 = vb, wb0 = wb;
        const D4 zero{};
        for (const std::uint8_t r : L.rows) {
            if (r < 4) {
                const D4 vn = dot(L.n, vb - va) + dot(L.rbN[r], wb) - dot(L.raN[r], wa);
                D4 next = L.lambdaN[r] - L.massN[r] * (vn - L.bias[r]);
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
        for (int l = 0; l < kRigidLanes; ++l) {
            if (L.friction[l] < 0) {
                continue;
            }
            // The change, in floats, added to the doubles (none where nothing pushed).
            const auto change = [l](const V4& now, const V4& before) {
                return Vec3(double(now.x[l] - before.x[l]), double(now.y[l] - before.y[l]),
                            double(now.z[l] - before.z[l]));
            };
            if (movable(L.a[l])) {
                Velocity& A = sb[std::size_t(L.a[l])];
                A.v += change(va, va0);
                A.w += change(wa, wa0);
            }
            if (movable(L.b[l])) {
                Velocity& B = sb[std::size_t(L.b[l])];
                B.v += change(vb, vb0);
                B.w += change(wb, wb0);
            }
        }
    };
    const auto sweep = [&] {
        for (LaneBatch& L : batches_) {
            solveBatch(L);
        }
        for (const std::uint32_t entry : serial_) {
            visit(entry);
        }
    };
    for (int it = 0; it < settings.iterations; ++it) {
        sweep();
    }
    // The batches keep their impulses through the relax sweeps; shock propagation works on the
    // constraints.
    const bool shock = settings.stabilisation == StackStabilisation::ShockPropagation;
    if (shock || settings.relaxIterations <= 0) {
        syncImpulses(false);
    }

    if (shock) {
        // Layer by layer from the ground up, the lower body of each contact held (infinite
        // mass): the support reaches the top of a stack in one pass (source 004, Shock
        // Propagation; Guendelman03).
        std::vector<std::uint32_t> byLevel(frictions.size());
        std::iota(byLevel.begin(), byLevel.end(), 0u);
        std::stable_sort(byLevel.begin(), byLevel.end(), [&](std::uint32_t x, std::uint32_t y) {
            return manifoldLevel[x] < manifoldLevel[y];
        });
        const auto held = [&](auto c, int lowerSide) {
            if (lowerSide == 1) {
                c.wa = 0;
            } else if (lowerSide == 2) {
                c.wb = 0;
            }
            return c;
        };
        for (std::size_t begin = 0; begin < byLevel.size();) {
            std::size_t end = begin;
            while (end < byLevel.size() &&
                   manifoldLevel[byLevel[end]] == manifoldLevel[byLevel[begin]]) {
                ++end;
            }
            for (int pass = 0; pass < 2; ++pass) {
                for (std::size_t k = begin; k < end; ++k) {
                    FrictionConstraint& f = frictions[byLevel[k]];
                    const int side = manifoldLower[byLevel[k]];
                    const FrictionConstraint heldF = held(f, side);
                    for (int p = 0; p < f.pointCount; ++p) {
                        PointConstraint& original = points[f.firstPoint + p];
                        PointConstraint c = original;
                        if (side == 1) {
                            c.iaN.setZero();
                        } else if (side == 2) {
                            c.ibN.setZero();
                        }
                        c.massN = effectiveMass(heldF.wa, heldF.wb, c.raN, c.iaN, c.rbN, c.ibN);
                        solveNormal(heldF, c);
                        original.lambdaN = c.lambdaN;
                    }
                    if (f.mu > 0) {
                        FrictionConstraint g = heldF;
                        if (side == 1) {
                            g.iaT1.setZero();
                            g.iaT2.setZero();
                            g.iaTwist.setZero();
                        } else if (side == 2) {
                            g.ibT1.setZero();
                            g.ibT2.setZero();
                            g.ibTwist.setZero();
                        }
                        g.massT1 = effectiveMass(g.wa, g.wb, g.raT1, g.iaT1, g.rbT1, g.ibT1);
                        g.massT2 = effectiveMass(g.wa, g.wb, g.raT2, g.iaT2, g.rbT2, g.ibT2);
                        g.massTwist = effectiveMass(0, 0, g.n, g.iaTwist, g.n, g.ibTwist);
                        for (int which = 1; which <= 3; ++which) {
                            solveFriction(g, which);
                        }
                        f.lambdaT1 = g.lambdaT1;
                        f.lambdaT2 = g.lambdaT2;
                        f.lambdaTwist = g.lambdaTwist;
                    }
                }
            }
            begin = end;
        }
    }

    // Positions (§5 step 1): x += h v and R turned by h omega. Omega is taken at the middle of
    // the turn, omega_mid = I_mid^-1 L with I_mid = R_mid I' R_mid^T (a few fixed-point rounds):
    // with L exact in free flight this keeps the kinetic energy, where turning by the omega of
    // the step's start gains energy every step.
    const auto turn = [](const Quat& q, const Vec3& angle) {
        const Real a = angle.norm();
        return a > 0 ? Quat(Eigen::AngleAxisd(a, angle / a)) * q : q;
    };
    for (int i = 0; i < n; ++i) {
        RigidBody& b = bodies[i];
        if (awake(i)) {
            b.x += h * sb[i].v;
            const Vec3 L = sb[i].w == omegaBefore[i]
                               ? b.L
                               : Vec3(b.L + inertiaBefore[i] * (sb[i].w - omegaBefore[i]));
            Vec3 w = sb[i].w;
            for (int round = 0; round < 4; ++round) {
                const Mat3 R = turn(b.q, 0.5 * h * w).toRotationMatrix();
                const Vec3 next = R * (b.inverseInertiaBody * (R.transpose() * L));
                const bool settled = (next - w).squaredNorm() <= 1e-28 * next.squaredNorm();
                w = next;
                if (settled) {
                    break;
                }
            }
            b.q = turn(b.q, h * w).normalized();
        } else if (b.motion == RigidMotion::Kinematic) {
            b.x += h * b.v;
            b.q = turn(b.q, h * b.omega).normalized();
        }
    }

    // Relax: sweeps without the push out, so the velocity it took does not stay in the bodies
    // as energy (Catto's relax iterations, Box2D v3); the penetration has been corrected in the
    // positions above. Speculative contacts keep their allowed approach.
    if (settings.relaxIterations > 0) {
        for (PointConstraint& c : points) {
            c.bias = std::min<Real>(c.bias, 0);
        }
        for (LaneBatch& L : batches_) {
            for (D4& bias : L.bias) {
                bias = bias < 0 ? bias : D4{};
            }
        }
        if (shock) {
            syncImpulses(true); // changed by shock propagation
        }
        for (JointConstraint& c : jointRows) {
            c.linearBias.setZero();
            c.angularBias.setZero();
            c.lowerBias = std::max<Real>(c.lowerBias, 0);
            c.upperBias = std::max<Real>(c.upperBias, 0);
        }
        for (int it = 0; it < settings.relaxIterations; ++it) {
            sweep();
        }
        syncImpulses(false);
    }

    // Store the impulses for the next step's warm start, and report the contacts (each point
    // with its share of the manifold's friction).
    contacts_.clear();
    for (const FrictionConstraint& f : frictions) {
        Real support = 0;
        for (int k = 0; k < f.pointCount; ++k) {
            support += points[f.firstPoint + k].lambdaN;
        }
        const Vec3 friction = f.lambdaT1 * f.t1 + f.lambdaT2 * f.t2;
        for (int k = 0; k < f.pointCount; ++k) {
            const PointConstraint& c = points[f.firstPoint + k];
            CachedManifold& cm = manifolds_[c.manifold];
            cm.normalImpulse[c.point] = c.lambdaN;
            cm.frictionImpulse = Vec3(f.lambdaT1, f.lambdaT2, f.lambdaTwist);
            const RigidContactPoint& p = cm.manifold.points[c.point];
            const Real share = support > 0 ? c.lambdaN / support : 1.0 / f.pointCount;
            contacts_.push_back(
                {f.a, f.b, p.position, f.n, p.separation, c.lambdaN, share * friction, p.feature});
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
