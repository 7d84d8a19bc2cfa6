#pragma once
// The rigid step's own parts, shared by the files of its stages (not part of the interface):
// the SIMD lanes the contacts are solved in, the batches, the joint rows, and the state one
// step carries from stage to stage (RigidSolver::Step). The stages:
//   RigidSolver.cpp         the step: bodies in, the substeps, velocities back, sleeping last
//   RigidDetection.cpp      broadphase, narrowphase with the manifold cache, stack heights
//   RigidContactSolver.cpp  colours, batches, warm start, sweeps, shock propagation, impulses
//   RigidJointSolver.cpp    the joints' rows and their solve
//   RigidIntegration.cpp    positions and orientations, substep moves, free flight
//   RigidIslands.cpp        islands and sleep

#include "core/base/PhaseRunner.h"
#include "core/rigid/RigidSolver.h"

// The lane types are only ever used inside inline functions, so the ABI GCC warns about for
// 32-byte vectors without AVX (-Wpsabi) never applies.
#pragma GCC diagnostic ignored "-Wpsabi"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

namespace pbd {
namespace rigid {

// splitmix64: a small, portable generator, so that the row order is the same everywhere.
struct SplitMix {
    std::uint64_t state;
    std::uint64_t next() {
        std::uint64_t z = (state += kIncrement);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    static constexpr std::uint64_t kIncrement = 0x9E3779B97F4A7C15ull; // what a draw adds
};

inline Mat3 skew(const Vec3& r) {
    Mat3 s;
    s << 0, -r.z(), r.y(), r.z(), 0, -r.x(), -r.y(), r.x(), 0;
    return s;
}

// Two unit tangents perpendicular to n, the same for the same n (so that friction impulses
// warm-start along the same directions).
inline void tangents(const Vec3& n, Vec3& t1, Vec3& t2) {
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

// Box2D v3's soft constraint (Catto, "Solver2D"): a spring of frequency hertz and damping ratio
// zeta, stepped implicitly with h: the bias rate applied to the error, and how much of the rigid
// row's impulse and of its accumulated impulse it takes.
struct Softness {
    Real biasRate = 0, massScale = 1, impulseScale = 0;
};
inline Softness makeSoft(Real hertz, Real zeta, Real h) {
    if (hertz <= 0) {
        return {};
    }
    const Real omega = 2 * M_PI * hertz;
    const Real a1 = 2 * zeta + h * omega;
    const Real a2 = h * omega * a1;
    const Real a3 = 1 / (1 + a2);
    return {omega / a1, a2 * a3, a3};
}

inline Quat turned(const Quat& q, const Vec3& angle) {
    const Real a = angle.norm();
    return a > 0 ? Quat(Eigen::AngleAxisd(a, angle / a)) * q : q;
}

// A contact manifold's rows: one normal row per point, bounded [0, inf), and its friction at the
// centre of its points: two tangent rows bounded by mu times the manifold's total normal
// impulse, and a twist row about the normal. (Per-point friction rows would leave
// self-balancing tangential impulses that no sweep sees, which warm starting carries from step
// to step until they use up the friction and stacks creep.)
//
// Eight manifolds are solved side by side, one per SIMD lane: within a colour no two manifolds
// share a dynamic body, so the lanes are independent and the sweep is still Gauss-Seidel (in
// colour order). Slot s of a lane holds the point LaneSources::slotPoint[lane][s] (a padding
// slot has zero mass and never pushes). All lanes sweep their rows in the batch's order `rows` (0-3
// the normal slots, 4-6 friction along t1, t2 and the twist). The constraints are built straight
// into the lanes.
// Eight lanes of floats (one AVX register): the batches are streamed from memory every sweep,
// and in floats they are half the size; velocities stay doubles between batches.
constexpr int kRigidLanes = 8;
// Aligned to its size in every compile: without AVX, GCC aligns a 32-byte vector to 16 only, and
// the AVX2 copy of the sweeps (core/base/InstructionSets.h) reads the same batches as the
// baseline copy lays them out.
using D4 = float __attribute__((vector_size(kRigidLanes * sizeof(float)), aligned(32)));
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
// to = v, a lane vector at a time. A plain assignment of the struct GCC copies through the
// stack, the 96 bytes as 64 + 32 read right after the three 32-byte writes that made them:
// a read that spans two writes waits for them to reach the cache (building pyramid-100's
// batches: 4.5% of its samples at one instruction, building 15.2% -> 14.5% of them).
inline void put(V4& to, const V4& v) {
    to.x = v.x;
    to.y = v.y;
    to.z = v.z;
}
inline D4 dot(const V4& a, const V4& b) {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}
inline V4 cross(const V4& a, const V4& b) {
    return V4{a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
// A symmetric inverse inertia (xx, yy, zz, xy, xz, yz) times a vector, in the lanes. The
// batches keep the bodies' inverse inertia rather than its products with every arm: the sweeps
// stream the batches from memory, and the products cost less than their bytes.
inline V4 inertiaTimes(const D4 (&i)[6], const V4& v) {
    return V4{i[0] * v.x + i[3] * v.y + i[4] * v.z, i[3] * v.x + i[1] * v.y + i[5] * v.z,
              i[4] * v.x + i[5] * v.y + i[2] * v.z};
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

struct SweepRecord {
    D4 value;
};

struct LaneBatch {
    LaneBatch() {} // left uninitialised: building a batch writes every field
    int a[kRigidLanes], b[kRigidLanes];
    std::uint8_t movesA, movesB; // bit l: lane l's body moves (its record is written back)
    std::uint8_t stiff;          // bit l: lane l holds a body that cannot move (Step::softness[1])
    std::array<std::uint8_t, 7> rows;
    D4 wa, wb, mu, twistRadius;
    V4 n, t1;  // the normal and the first tangent; the second is n x t1
    V4 raN[4]; // r_a x n of each slot; r_b x n is that plus normalShift (the same point)
    D4 inertiaA[6], inertiaB[6]; // inverse inertia (xx, yy, zz, xy, xz, yz), as the masses scaled
    // sep: the bias (the wanted separating speed) of the single solve, or, with substeps or
    // soft contacts, the separation at the step's start, which the bodies' moves then update.
    D4 massN[4], sep[4], lambdaN[4];
    D4 gap[4]; // the separation of now (substeps, soft contacts): sep and the bodies' moves
    V4 centreA, centreB; // the bodies' arms to the centre of the points (friction, twist)
    D4 massT1, massT2, massTwist, lambdaT1, lambdaT2, lambdaTwist;
};

// Where a batch's lanes come from, apart from the batch (the sweeps do not read it): each lane's
// manifold (manifolds_, -1 for a padding lane) and the point in each of its slots.
struct LaneSources {
    int manifold[kRigidLanes];
    std::uint8_t slotPoint[kRigidLanes][4];
};

// A lane's bit of a batch's byte, as a mask: ((LaneInts{} + bits) & kLaneBits) != 0.
using LaneInts = int __attribute__((vector_size(kRigidLanes * sizeof(int)), aligned(32)));
inline constexpr LaneInts kLaneBits{1, 2, 4, 8, 16, 32, 64, 128};

// Soft contacts' settings in the lanes (Softness).
struct SoftLanes {
    D4 biasRate, massScale, impulseScale;
};

// What r x n gains from body a's arm to body b's: (x_a - x_b) x n, the same for every point of
// a lane (the arms to the centre differ by it too).
inline V4 normalShift(const V4& centreA, const V4& centreB, const V4& n) {
    return cross(centreB - centreA, n);
}

struct JointConstraint {
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

// The parts a colour of `count` batches is swept in on `threads` threads (one per thread, at
// most 64, at least 16 batches each): the substeps' phases sweep part j of a colour on thread
// j, and the batches are built by the same split, so a thread builds what it sweeps.
inline int colourParts(std::size_t count, int threads) {
    return int(std::clamp<std::size_t>(count / 16, 1, std::size_t(std::min(64, threads))));
}

// The most parts inParts makes on this team: two per thread, at most 64 (runPhases claims them
// by the bits of one word). Per-part tallies are sized by it.
inline std::size_t mostParts(const ThreadTeam* team) {
    return std::min<std::size_t>(64, 2 * std::size_t(team ? team->count : 1));
}

// run(part, begin, end) over [0, count) in parts of at least `smallest` (the same parts for the
// same count), on the team's threads, or on this one without a team of several; returns the
// number of parts.
template <class Run>
int inParts(ThreadTeam* team, std::size_t count, std::size_t smallest, Run&& run) {
    const bool several = team && team->count > 1;
    const int parts =
        several ? int(std::clamp<std::size_t>(count / smallest, 1, mostParts(team))) : 1;
    const auto one = [&](int part) {
        run(part, count * std::size_t(part) / std::size_t(parts),
            count * std::size_t(part + 1) / std::size_t(parts));
    };
    if (parts == 1) {
        one(0);
    } else {
        struct Phase {
            int parts;
        };
        runPhases(team->arena, team->count, std::vector<Phase>{{parts}},
                  [&](const Phase&, int part) { one(part); });
    }
    return parts;
}

} // namespace rigid

// What one step carries from stage to stage: its inputs, and what the stages make for the ones
// after them (the sweep order, the colours, the bodies a constraint acts on).
struct RigidSolver::Step {
    std::vector<RigidBody>& bodies;
    const std::vector<RigidJoint>& joints;
    const RigidSettings& settings;
    Vec3 gravity;
    Real h;  // the step
    Real hs; // a substep
    int n;   // bodies; index n is the world
    int substeps;
    bool soft;     // soft contacts (RigidSettings::contactHertz)
    bool track;    // the separations follow the bodies (substeps, soft contacts)
    bool stacking; // stack stabilisation on: heights_ are made
    bool shock;    // ... by shock propagation
    // The threads the batches are built and the substeps run on (none: the calling thread).
    ThreadTeam* team = nullptr;
    int threads() const { return team ? team->count : 1; }
    rigid::SplitMix random;
    // Bodies some constraint acts on: they turn by the solved omega; the others fly free and
    // turn exactly through L.
    std::vector<char> touched;
    // The manifolds by colour, in the sweep order; the ones left out of the colours; the joints
    // in the sweep order.
    std::array<std::vector<std::uint32_t>, 64> byColour;
    std::vector<std::uint32_t> overflow, jointOrder;
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
    // The separations of now follow the bodies' moves: after the moves, the next sweep takes
    // them afresh, and the sweeps after it read them.
    bool movesTaken = true;
    // Settings in the lanes.
    rigid::D4 slopLanes, invHs, correctionLanes, maxPush, stepLanes;
    // Soft contacts between bodies that both move [0], and with one that cannot [1] (stiffer).
    rigid::SoftLanes softness[2];

    bool awake(int i) const { return bodies[i].isDynamic() && !bodies[i].sleeping; }

    template <class Run> int inParts(std::size_t count, std::size_t smallest, Run&& run) const {
        return rigid::inParts(team, count, smallest, run);
    }

    // A body's velocity in the sweeps' records, and back.
    static Velocity load(const std::vector<rigid::SweepRecord>& records, int i) {
        const rigid::D4& r = records[std::size_t(i)].value;
        return Velocity{rigid::recordFirst(r), rigid::recordSecond(r)};
    }
    static void store(std::vector<rigid::SweepRecord>& records, int i, const Velocity& u) {
        records[std::size_t(i)].value = rigid::bodyRecord(u.v, u.w);
    }
};

} // namespace pbd
