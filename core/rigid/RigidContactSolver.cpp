// The rigid step's contact solver (ALGORITHMS §5, source 004): the manifolds coloured so that
// no two of a colour share a dynamic body, their rows built eight manifolds to a batch (one per
// SIMD lane), warm start, the projected Gauss-Seidel sweeps, shock propagation, and the impulses
// kept for the next step.
#include "core/base/InstructionSets.h"
#include "core/rigid/RigidStep.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <numeric>

namespace pbd {

using namespace rigid;

namespace {

// The lanes' body records in (velocities, or the moves) and the velocities back out: a
// transpose of eight records each way. Within a batch no two lanes share a body that moves,
// so every store is its lane's own; a body that cannot move is stored back unchanged (its
// lanes' inverse mass and inertia are zero).
//
// Each record is moved as two halves (floats 0-3 and 4-7), lane l's in the lower half of a
// vector and lane l + 4's in the upper: the halves go in and out with plain 16-byte loads and
// stores (an insert from memory, an extract to memory), so only the shuffles within the
// vectors' halves are left, 12 in and 14 out where a whole 8 x 8 transpose takes 24 each way
// on the one shuffle port (pyramid-100 on one thread: 2-3% of its step, once the batches were
// small). The values are the transpose's, moved, not computed.
struct LaneBodies {
    V4 va, wa, vb, wb;
    V4 shift; // normalShift of the batch
};
using Half = float __attribute__((vector_size(4 * sizeof(float))));
#define PBD_SV(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
// Within each half: the lower (LO) or upper (HI) pairs of a and b interleaved, and the lower
// (LO2) or upper (HI2) pairs of a then b.
#define PBD_LO 0, 8, 1, 9, 4, 12, 5, 13
#define PBD_HI 2, 10, 3, 11, 6, 14, 7, 15
#define PBD_LO2 0, 1, 8, 9, 4, 5, 12, 13
#define PBD_HI2 2, 3, 10, 11, 6, 7, 14, 15
PBD_KERNEL_INLINE Half halfAt(const SweepRecord& r, int which) {
    Half h;
    std::memcpy(&h, reinterpret_cast<const float*>(&r.value) + 4 * which, sizeof h);
    return h;
}
PBD_KERNEL_INLINE void putHalf(SweepRecord& r, int which, Half h) {
    std::memcpy(reinterpret_cast<float*>(&r.value) + 4 * which, &h, sizeof h);
}
PBD_KERNEL_INLINE void gatherRecords(const std::vector<SweepRecord>& records,
                                     const int (&index)[kRigidLanes], V4& first, V4& second) {
    D4 x[4], y[4];
    for (int i = 0; i < 4; ++i) {
        const SweepRecord& p = records[std::size_t(index[i])];
        const SweepRecord& q = records[std::size_t(index[i + 4])];
        x[i] = PBD_SV(halfAt(p, 0), halfAt(q, 0), 0, 1, 2, 3, 4, 5, 6, 7);
        y[i] = PBD_SV(halfAt(p, 1), halfAt(q, 1), 0, 1, 2, 3, 4, 5, 6, 7);
    }
    const D4 t0 = PBD_SV(x[0], x[1], PBD_LO), t1 = PBD_SV(x[0], x[1], PBD_HI);
    const D4 t2 = PBD_SV(x[2], x[3], PBD_LO), t3 = PBD_SV(x[2], x[3], PBD_HI);
    const D4 u0 = PBD_SV(y[0], y[1], PBD_LO), u2 = PBD_SV(y[2], y[3], PBD_LO);
    first = {PBD_SV(t0, t2, PBD_LO2), PBD_SV(t0, t2, PBD_HI2), PBD_SV(t1, t3, PBD_LO2)};
    second = {PBD_SV(t1, t3, PBD_HI2), PBD_SV(u0, u2, PBD_LO2), PBD_SV(u0, u2, PBD_HI2)};
}
// Only the lanes whose body moves (bit l of `moves`) are written back: a body that cannot move
// (the ground, a padding lane's world) may sit in several batches of one colour, which threads
// sweep at once. Floats 6 and 7 of a record are written zero.
PBD_KERNEL_INLINE void scatterRecords(std::vector<SweepRecord>& records,
                                      const int (&index)[kRigidLanes], std::uint8_t moves,
                                      const V4& first, const V4& second) {
    const D4 zero{};
    const D4 t0 = PBD_SV(first.x, first.y, PBD_LO), t1 = PBD_SV(first.x, first.y, PBD_HI);
    const D4 t2 = PBD_SV(first.z, second.x, PBD_LO), t3 = PBD_SV(first.z, second.x, PBD_HI);
    const D4 u0 = PBD_SV(second.y, second.z, PBD_LO), u1 = PBD_SV(second.y, second.z, PBD_HI);
    // Lanes i (lower halves) and i + 4 (upper): floats 0-3 in lo[i], 4-7 in hi[i].
    const D4 lo[4] = {PBD_SV(t0, t2, PBD_LO2), PBD_SV(t0, t2, PBD_HI2), PBD_SV(t1, t3, PBD_LO2),
                      PBD_SV(t1, t3, PBD_HI2)};
    const D4 hi[4] = {PBD_SV(u0, zero, PBD_LO2), PBD_SV(u0, zero, PBD_HI2),
                      PBD_SV(u1, zero, PBD_LO2), PBD_SV(u1, zero, PBD_HI2)};
    for (int i = 0; i < 4; ++i) {
        if ((moves >> i) & 1u) {
            SweepRecord& r = records[std::size_t(index[i])];
            putHalf(r, 0, PBD_SV(lo[i], lo[i], 0, 1, 2, 3));
            putHalf(r, 1, PBD_SV(hi[i], hi[i], 0, 1, 2, 3));
        }
        if ((moves >> (i + 4)) & 1u) {
            SweepRecord& r = records[std::size_t(index[i + 4])];
            putHalf(r, 0, PBD_SV(lo[i], lo[i], 4, 5, 6, 7));
            putHalf(r, 1, PBD_SV(hi[i], hi[i], 4, 5, 6, 7));
        }
    }
}
#undef PBD_SV
#undef PBD_LO
#undef PBD_HI
#undef PBD_LO2
#undef PBD_HI2
PBD_KERNEL_INLINE void gather(const std::vector<SweepRecord>& fv, const LaneBatch& L,
                              LaneBodies& s) {
    gatherRecords(fv, L.a, s.va, s.wa);
    gatherRecords(fv, L.b, s.vb, s.wb);
}
PBD_KERNEL_INLINE void scatter(std::vector<SweepRecord>& fv, const LaneBatch& L,
                               const LaneBodies& s) {
    scatterRecords(fv, L.a, L.movesA, s.va, s.wa);
    scatterRecords(fv, L.b, L.movesB, s.vb, s.wb);
}

} // namespace

void RigidSolver::colourManifolds(Step& st) {
    const std::vector<RigidJoint>& joints = st.joints;
    const RigidSettings& settings = st.settings;
    const int n = st.n;
    SplitMix& random = st.random;
    std::array<std::vector<std::uint32_t>, 64>& byColour = st.byColour;
    std::vector<std::uint32_t>& overflow = st.overflow;
    std::vector<std::uint32_t>& jointOrder = st.jointOrder;
    const auto awake = [&](int i) { return st.awake(i); };
    // What the bodies' records will say (prepareBodies; the colours are made before them): an
    // awake body of mass moves.
    const auto movable = [&](int i) { return awake(i) && st.bodies[i].inverseMass > 0; };
    // The order the constraints are swept in, drawn once per step (source 004, Permutation:
    // the rows are permuted, then the solver starts): the manifolds and joints in a random
    // order (the order they take their colours in, and the joints' order), and each batch's
    // and each lane's rows in a random order.
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
    // What the colouring reads, compact (it visits the manifolds in a random order): each
    // manifold's bodies (listManifoldBodies), and per body whether it is awake (1) and
    // movable (2).
    const std::vector<std::pair<int, int>>& pairs = manifoldBodies_;
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
        // A constraint acts on both bodies (it is swept, in a colour or after them).
        st.touched[std::size_t(a)] = st.touched[std::size_t(b)] = 1;
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
    // Each colour's manifolds grouped by region: the first body that moves, by blocks of
    // kRegionBodies bodies (a counting sort, stable, so the colouring's random order stays
    // within a region). A colour's manifolds are independent, so this changes nothing of the
    // solve but which manifolds share a batch, and a scene of fewer bodies keeps its order. A
    // body's manifolds then sit at about the same place in every colour: the batches a thread
    // takes of one colour touch mostly the bodies it had in the colour before, whose records
    // stay in its core's cache (pyramid-100 on two threads: 4.52 -> 3.69 ms a step; they
    // went from core to core, 16 passes a step).
    constexpr std::uint32_t kRegionBodies = 256;
    std::vector<std::uint32_t>& counts = colourCounts_;
    std::vector<std::uint32_t>& sorted = colourSorted_;
    const auto keyOf = [&](std::uint32_t group) {
        const auto [a, b] = pairs[group];
        const bool movesA = flags[std::size_t(a)] & 2, movesB = flags[std::size_t(b)] & 2;
        return std::uint32_t(movesA && movesB ? std::min(a, b) : movesA ? a : b) / kRegionBodies;
    };
    for (std::vector<std::uint32_t>& colour : byColour) {
        if (std::size_t(n) <= kRegionBodies || colour.size() <= std::size_t(kRigidLanes)) {
            continue;
        }
        counts.assign(std::size_t(n) / kRegionBodies + 2, 0);
        for (const std::uint32_t group : colour) {
            ++counts[keyOf(group) + 1];
        }
        for (std::size_t i = 1; i < counts.size(); ++i) {
            counts[i] += counts[i - 1];
        }
        sorted.resize(colour.size());
        for (const std::uint32_t group : colour) {
            sorted[counts[keyOf(group)]++] = group;
        }
        colour.swap(sorted);
    }
}

// The batches planned in order (each colour's manifolds eight at a time, then the ones left out
// of the colours one by one), then built, on the step's threads when there are several (but
// not with shock propagation, whose lane levels are listed in order). Each batch draws its
// random row order from the step's generator where the batches before it leave it: SplitMix
// moves on by a constant per draw, so the plan says where that is, and the batches come out
// the same to the bit on any number of threads.
void RigidSolver::buildBatches(Step& st) {
    const bool permute = st.settings.permuteRows;
    const std::uint64_t start = st.random.state;
    std::uint64_t draws = 0;
    batchPlan_.clear();
    colourBatchEnds_.clear();
    const auto plan = [&](const std::uint32_t* lanes, int count) {
        batchPlan_.push_back({lanes, count, start + draws * SplitMix::kIncrement});
        // The rows' order (6 draws), then each lane's points (3 draws each).
        draws += permute ? std::uint64_t(6 + 3 * count) : 0;
    };
    for (const std::vector<std::uint32_t>& colour : st.byColour) {
        for (std::size_t first = 0; first < colour.size(); first += kRigidLanes) {
            plan(colour.data() + first,
                 int(std::min<std::size_t>(kRigidLanes, colour.size() - first)));
        }
        if (!colour.empty()) {
            colourBatchEnds_.push_back(std::uint32_t(batchPlan_.size()));
        }
    }
    uncolouredBatches_ = batchPlan_.size();
    stats_.uncoloured = st.overflow.size();
    for (const std::uint32_t& mi : st.overflow) {
        plan(&mi, 1);
    }
    st.random.state = start + draws * SplitMix::kIncrement;
    batches_.resize(batchPlan_.size());
    laneSources_.resize(batchPlan_.size());
    const std::size_t count = batches_.size();
    std::vector<BuildCounts> counts(mostParts(st.team));
    // Each part counts into its own variables, stored once (not bumped in a shared array,
    // whose cache line the parts would pass back and forth).
    const int threads = st.threads();
    if (st.shock || threads <= 1) {
        inParts(st.shock ? nullptr : st.team, count, 64,
                [&](int part, std::size_t begin, std::size_t end) {
                    BuildCounts own;
                    PBDLAB_WIDEST_PATH(buildLaneBatches(st, begin, end, own));
                    counts[std::size_t(part)] = own;
                });
    } else {
        // Thread j builds part j of every colour (colourParts), the part it then sweeps: the
        // batches it writes stay in its core for the first warm start, and their manifolds
        // and bodies are those of its part of the scene (the regions, colourManifolds). The
        // batches left out of the colours on the first.
        struct Phase {
            int parts;
        };
        runPhases(
            st.team->arena, threads, std::vector<Phase>{{threads}}, [&](const Phase&, int part) {
                BuildCounts own;
                std::size_t first = 0;
                for (const std::uint32_t end : colourBatchEnds_) {
                    const std::size_t inColour = end - first;
                    const int parts = colourParts(inColour, threads);
                    if (part < parts) {
                        PBDLAB_WIDEST_PATH(buildLaneBatches(
                            st, first + inColour * std::size_t(part) / std::size_t(parts),
                            first + inColour * std::size_t(part + 1) / std::size_t(parts), own));
                    }
                    first = end;
                }
                if (part == 0) {
                    PBDLAB_WIDEST_PATH(
                        buildLaneBatches(st, uncolouredBatches_, batches_.size(), own));
                }
                counts[std::size_t(part)] = own;
            });
    }
    for (const BuildCounts& c : counts) {
        stats_.manifolds += c.manifolds;
        stats_.warmStarted += c.warmStarted;
        stats_.points += c.points;
        stats_.rows += c.rows;
    }
    // Shock propagation visits the lanes from the ground up.
    std::stable_sort(
        st.laneLevels.begin(), st.laneLevels.end(),
        [](const Step::LaneLevel& x, const Step::LaneLevel& y) { return x.level < y.level; });
}

PBD_KERNEL_INLINE void RigidSolver::buildLaneBatches(Step& st, std::size_t begin, std::size_t end,
                                                     BuildCounts& counts) {
    const RigidSettings& settings = st.settings;
    const int n = st.n;
    const Real h = st.h;
    const bool track = st.track, stacking = st.stacking, shock = st.shock;
    std::vector<Step::LaneLevel>& laneLevels = st.laneLevels;
    SplitMix random{0};

    // Builds up to eight manifolds' rows into batch L, one per lane (source 004: contact normal
    // rows [0, inf) and friction bounded by mu·lambda_n; warm start by feature ID). What each
    // lane reads of its manifold and bodies is gathered first, the arms in doubles (they are
    // differences of positions); then the rows are made eight lanes at a time, and every field
    // of the batch is written (a padding lane or slot gets zero mass and never pushes).
    const auto buildBatch = [&](LaneBatch& L, LaneSources& S, std::uint32_t batchIndex,
                                const std::uint32_t* lanes, int count) PBD_INLINE_LAMBDA {
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
        V4 normal{zero, zero + 1.0f, zero}, centreA{}, centreB{}, armA[4]{};
        D4 valid[4]{}, sep[4]{}, lambdaN[4]{}, inertiaA[6]{}, inertiaB[6]{};
        D4 wa{}, wb{}, mu{}, points{};
        D4 lambdaT1{}, lambdaT2{}, lambdaTwist{};
        L.movesA = L.movesB = L.stiff = 0;
        for (int l = 0; l < kRigidLanes; ++l) {
            S.manifold[l] = -1;
            L.a[l] = L.b[l] = n; // a padding lane reads and writes nothing that moves
            std::iota(S.slotPoint[l], S.slotPoint[l] + 4, std::uint8_t(0));
        }
        for (int l = 0; l < count; ++l) {
            const std::uint32_t mi = lanes[l];
            const CachedManifold& cm = manifolds_[mi];
            const RigidManifold& m = cm.manifold;
            ++counts.manifolds;
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
            S.manifold[l] = int(mi);
            L.a[l] = m.bodyA;
            L.b[l] = m.bodyB;
            L.movesA |= std::uint8_t(sa.inverseMass > 0 ? 1u << l : 0u);
            L.movesB |= std::uint8_t(sb.inverseMass > 0 ? 1u << l : 0u);
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
            L.stiff |= std::uint8_t(sa.inverseMass == 0 || sb.inverseMass == 0 ? 1u << l : 0u);
            std::uint8_t* slots = S.slotPoint[l];
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
                    ++counts.warmStarted;
                }
            }
            counts.points += std::size_t(m.count);
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
            counts.rows += std::size_t(m.count) + (mu[l] > 0 ? 3 : 0);
        }

        // The rows, eight lanes at a time.
        const auto inverseOrZero = [&](D4 k) { return k > zero ? one / k : zero; };
        put(L.n, normal);
        L.wa = wa;
        L.wb = wb;
        L.mu = mu;
        L.lambdaT1 = lambdaT1;
        L.lambdaT2 = lambdaT2;
        L.lambdaTwist = lambdaTwist;
        D4 radius = zero;
        const V4 shift = normalShift(centreA, centreB, normal);
        for (int slot = 0; slot < 4; ++slot) {
            const V4 raN = cross(armA[slot], normal), rbN = raN + shift;
            const V4 iaN = inertiaTimes(inertiaA, raN), ibN = inertiaTimes(inertiaB, rbN);
            put(L.raN[slot], raN);
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
        const V4 iaT1 = inertiaTimes(inertiaA, raT1), ibT1 = inertiaTimes(inertiaB, rbT1),
                 iaT2 = inertiaTimes(inertiaA, raT2), ibT2 = inertiaTimes(inertiaB, rbT2);
        const V4 iaTwist = inertiaTimes(inertiaA, normal), ibTwist = inertiaTimes(inertiaB, normal);
        put(L.t1, t1);
        put(L.centreA, centreA);
        put(L.centreB, centreB);
        for (int k = 0; k < 6; ++k) {
            L.inertiaA[k] = inertiaA[k];
            L.inertiaB[k] = inertiaB[k];
        }
        L.massT1 = inverseOrZero(wa + wb + dot(raT1, iaT1) + dot(rbT1, ibT1));
        L.massT2 = inverseOrZero(wa + wb + dot(raT2, iaT2) + dot(rbT2, ibT2));
        L.massTwist = inverseOrZero(dot(normal, iaTwist) + dot(normal, ibTwist));
    };
    // The manifolds are fetched a batch ahead of their building (the part read: every line up
    // to `warm`, wherever the record starts in its first line). Always inlined: a helper left
    // out of line whose only effect is a prefetch is taken for one without effects, and GCC 12
    // drops its calls (so it did here, in both copies, until session 50).
    const auto prefetch = [&](std::uint32_t mi) PBD_INLINE_LAMBDA {
        const char* p = reinterpret_cast<const char*>(&manifolds_[mi]);
        for (std::size_t at = 0; at <= offsetof(CachedManifold, warm) + 63; at += 64) {
            __builtin_prefetch(p + at);
        }
    };
    for (std::size_t k = begin; k < end; ++k) {
        if (k + 1 < end) {
            const BatchPlan& next = batchPlan_[k + 1];
            for (int l = 0; l < next.count; ++l) {
                prefetch(next.lanes[l]);
            }
        }
        const BatchPlan& planned = batchPlan_[k];
        random.state = planned.randomState;
        buildBatch(batches_[k], laneSources_[k], std::uint32_t(k), planned.lanes, planned.count);
    }
}

// Warm start (source 004): every row's impulse applied once, at the start of each substep.
void RigidSolver::warmStart(Step&) {
    warmStartRange(0, batches_.size());
}

void RigidSolver::warmStartRange(std::size_t begin, std::size_t end) {
    PBDLAB_WIDEST_PATH(warmStartBatches(begin, end));
}

PBD_KERNEL_INLINE void RigidSolver::warmStartBatches(std::size_t begin, std::size_t end) {
    std::vector<SweepRecord>& fv = sweepVelocities_;
    const D4 zero{};
    for (std::size_t k = begin; k < end; ++k) {
        LaneBatch& L = batches_[k];
        LaneBodies s;
        gather(fv, L, s);
        V4 &va = s.va, &wa = s.wa, &vb = s.vb, &wb = s.wb;
        const V4 shift = normalShift(L.centreA, L.centreB, L.n);
        D4 normal = zero;
        for (int r = 0; r < 4; ++r) {
            normal += L.lambdaN[r];
            wa -= inertiaTimes(L.inertiaA, L.raN[r]) * L.lambdaN[r];
            wb += inertiaTimes(L.inertiaB, L.raN[r] + shift) * L.lambdaN[r];
        }
        const V4 t2 = cross(L.n, L.t1);
        const V4 linear = L.n * normal + L.t1 * L.lambdaT1 + t2 * L.lambdaT2;
        va -= linear * L.wa;
        vb += linear * L.wb;
        wa -= inertiaTimes(L.inertiaA, cross(L.centreA, L.t1)) * L.lambdaT1 +
              inertiaTimes(L.inertiaA, cross(L.centreA, t2)) * L.lambdaT2 +
              inertiaTimes(L.inertiaA, L.n) * L.lambdaTwist;
        wb += inertiaTimes(L.inertiaB, cross(L.centreB, L.t1)) * L.lambdaT1 +
              inertiaTimes(L.inertiaB, cross(L.centreB, t2)) * L.lambdaT2 +
              inertiaTimes(L.inertiaB, L.n) * L.lambdaTwist;
        scatter(fv, L, s);
    }
}

void RigidSolver::sweep(Step& st, bool withBias, Real hj) {
    sweepRange(st, withBias, !st.movesTaken, 0, batches_.size());
    st.movesTaken = true;
    solveJoints(st, hj);
}

void RigidSolver::sweepRange(Step& st, bool withBias, bool takeMoves, std::size_t begin,
                             std::size_t end) {
    // Two batches at once (sweepBatches) want the 32 registers of AVX-512 VL: pyramid-100 on
    // two threads 3.90 -> 3.68 ms, on one 5.96 -> 5.80 (six alternated runs), the same bits.
    PBDLAB_WIDEST_PATH(sweepBatches(st, withBias, takeMoves, begin, end));
}

// Batches [begin, end) swept once; with takeMoves, their separations of now are first taken
// afresh from the bodies' moves (the first sweep after the positions moved).
PBD_KERNEL_INLINE void RigidSolver::sweepBatches(Step& st, bool withBias, bool takeMoves,
                                                 std::size_t begin, std::size_t end) {
    const bool track = st.track, soft = st.soft;
    std::vector<SweepRecord>& fv = sweepVelocities_;
    const D4 zero{};
    const D4 one = zero + 1.0f;
    const D4 slopLanes = st.slopLanes, invHs = st.invHs, correctionLanes = st.correctionLanes,
             maxPush = st.maxPush;
    // The wanted separating speed of normal slot r, its mass scale and its impulse scale; with
    // useBias false (relax) only a gap may still close.
    struct RowBias {
        D4 bias, massScale, impulseScale;
    };
    const auto rowBias = [&](const LaneBatch& L, int r, bool useBias) PBD_INLINE_LAMBDA -> RowBias {
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
            // The lane's softness: stiffer against a body that cannot move.
            const auto stiff = ((LaneInts{} + int(L.stiff)) & kLaneBits) != 0;
            const SoftLanes &loose = st.softness[0], &firm = st.softness[1];
            D4 push = -(stiff ? firm.biasRate : loose.biasRate) * s1;
            push = push < maxPush ? push : maxPush;
            return {apart ? approach : push,
                    apart ? one : (stiff ? firm.massScale : loose.massScale),
                    apart ? zero : (stiff ? firm.impulseScale : loose.impulseScale)};
        }
        // The source's rigid correction, on the separation of now.
        const D4 hard =
            (s > zero ? -(s + correctionLanes * slopLanes) : -correctionLanes * (s + slopLanes)) *
            invHs;
        return {useBias ? hard : (hard < zero ? hard : zero), one, zero};
    };
    // A batch's bodies in, and their separations of now.
    const auto takeBodies = [&](LaneBatch& L, LaneBodies& s) PBD_INLINE_LAMBDA {
        gather(fv, L, s);
        s.shift = normalShift(L.centreA, L.centreB, L.n);
        if (track && takeMoves) {
            V4 ma, ta, mb, tb;
            gatherRecords(sweepMoves_, L.a, ma, ta);
            gatherRecords(sweepMoves_, L.b, mb, tb);
            for (int r = 0; r < 4; ++r) {
                L.gap[r] =
                    L.sep[r] + dot(L.n, mb - ma) + dot(L.raN[r] + s.shift, tb) - dot(L.raN[r], ta);
            }
        }
    };
    // Row r of batch L (0-3 the normal slots, 4-5 the tangents, 6 the twist).
    const auto solveRow = [&](LaneBatch& L, LaneBodies& s, std::uint8_t r,
                              bool useBias) PBD_INLINE_LAMBDA {
        V4 &va = s.va, &wa = s.wa, &vb = s.vb, &wb = s.wb;
        if (r < 4) {
            const RowBias rb = rowBias(L, r, useBias);
            const V4 rbN = L.raN[r] + s.shift;
            const D4 vn = dot(L.n, vb - va) + dot(rbN, wb) - dot(L.raN[r], wa);
            D4 next = L.lambdaN[r] - L.massN[r] * rb.massScale * (vn - rb.bias) -
                      rb.impulseScale * L.lambdaN[r];
            next = next > zero ? next : zero;
            const D4 d = next - L.lambdaN[r];
            L.lambdaN[r] = next;
            va -= L.n * (L.wa * d);
            wa -= inertiaTimes(L.inertiaA, L.raN[r]) * d;
            vb += L.n * (L.wb * d);
            wb += inertiaTimes(L.inertiaB, rbN) * d;
            return;
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
            wa -= inertiaTimes(L.inertiaA, L.n) * d;
            wb += inertiaTimes(L.inertiaB, L.n) * d;
            return;
        }
        const bool first = r == 4;
        const V4 t = first ? L.t1 : cross(L.n, L.t1);
        const V4 ra = cross(L.centreA, t), rb = cross(L.centreB, t);
        D4& lambda = first ? L.lambdaT1 : L.lambdaT2;
        const D4 vt = dot(t, vb - va) + dot(rb, wb) - dot(ra, wa);
        const D4 bound = L.mu * support;
        const D4 next = clampLanes(lambda - (first ? L.massT1 : L.massT2) * vt, -bound, bound);
        const D4 d = next - lambda;
        lambda = next;
        va -= t * (L.wa * d);
        wa -= inertiaTimes(L.inertiaA, ra) * d;
        vb += t * (L.wb * d);
        wb += inertiaTimes(L.inertiaB, rb) * d;
    };
    const auto solveAlone = [&](LaneBatch& L) PBD_INLINE_LAMBDA {
        LaneBodies s1;
        takeBodies(L, s1);
        for (const std::uint8_t r : L.rows) {
            solveRow(L, s1, r, withBias);
        }
        scatter(fv, L, s1);
    };
    // Two batches of one colour at once: they share no body that moves, so each is solved
    // exactly as alone, and the processor works on one's rows while the other's wait on their
    // chain of updates (each row reads the velocities the row before it wrote). The batches
    // left out of the colours are each a colour of their own.
    std::size_t k = begin;
    for (const std::uint32_t colourEnd : colourBatchEnds_) {
        if (colourEnd <= k) {
            continue;
        }
        const std::size_t stop = std::min<std::size_t>(colourEnd, end);
        for (; k + 1 < stop; k += 2) {
            LaneBatch &L1 = batches_[k], &L2 = batches_[k + 1];
            LaneBodies s1, s2;
            takeBodies(L1, s1);
            takeBodies(L2, s2);
            for (std::size_t i = 0; i < L1.rows.size(); ++i) {
                solveRow(L1, s1, L1.rows[i], withBias);
                solveRow(L2, s2, L2.rows[i], withBias);
            }
            scatter(fv, L1, s1);
            scatter(fv, L2, s2);
        }
        if (k < stop) {
            solveAlone(batches_[k++]);
        }
    }
    for (; k < end; ++k) {
        solveAlone(batches_[k]);
    }
}

// Shock propagation (source 004; Guendelman03): layer by layer from the ground up, the
// contacts are solved again with the lower body of each held (infinite mass), so the
// support reaches the top of a stack in one pass. Serial, in doubles, on the lanes' rows.
void RigidSolver::propagateShock(Step& st) {
    const RigidSettings& settings = st.settings;
    const Real hs = st.hs;
    const bool track = st.track;
    using LaneLevel = Step::LaneLevel;
    std::vector<LaneLevel>& laneLevels = st.laneLevels;
    std::vector<SweepRecord>& fv = sweepVelocities_;
    const auto load = [&](int i) { return Step::load(fv, i); };
    const auto store = [&](int i, const Velocity& u) { Step::store(fv, i, u); };
    const auto effectiveMass = [](Real wa, Real wb, const Vec3& ja, const Vec3& iaj, const Vec3& jb,
                                  const Vec3& ibj) {
        const Real inverse = wa + wb + ja.dot(iaj) + jb.dot(ibj);
        return inverse > 0 ? 1 / inverse : 0;
    };
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
                const V4 shift = normalShift(L.centreA, L.centreB, L.n);
                Velocity A = load(a), B = load(b);
                const auto solveRow = [&](const Vec3& dir, const Vec3& ja, const Vec3& jb, Vec3 iaj,
                                          Vec3 ibj, Real bias, float& lambda, Real lo, Real hi,
                                          bool linear) {
                    if (side == 1) {
                        iaj.setZero();
                    } else if (side == 2) {
                        ibj.setZero();
                    }
                    const Real la = linear ? wa : 0, lb = linear ? wb : 0;
                    const Real mass = effectiveMass(la, lb, ja, iaj, jb, ibj);
                    const Real v = (linear ? dir.dot(B.v - A.v) : 0) + jb.dot(B.w) - ja.dot(A.w);
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
                                          lane(L.raN[r] + shift, l).dot(recordSecond(mb)) -
                                          lane(L.raN[r], l).dot(recordSecond(ma));
                        bias = sNow > 0 ? -(sNow + settings.correction * settings.slop) / hs
                                        : -settings.correction * (sNow + settings.slop) / hs;
                    }
                    solveRow(normal, lane(L.raN[r], l), lane(L.raN[r] + shift, l),
                             lane(inertiaTimes(L.inertiaA, L.raN[r]), l),
                             lane(inertiaTimes(L.inertiaB, L.raN[r] + shift), l), bias,
                             own.normal[r], 0, std::numeric_limits<Real>::infinity(), true);
                    support += own.normal[r];
                }
                // Friction up to mu times the pass's own push.
                const Real bound = L.mu[l] * support;
                if (bound > 0) {
                    const V4 t2 = cross(L.n, L.t1);
                    const V4 ra1 = cross(L.centreA, L.t1), rb1 = cross(L.centreB, L.t1),
                             ra2 = cross(L.centreA, t2), rb2 = cross(L.centreB, t2);
                    solveRow(lane(L.t1, l), lane(ra1, l), lane(rb1, l),
                             lane(inertiaTimes(L.inertiaA, ra1), l),
                             lane(inertiaTimes(L.inertiaB, rb1), l), 0, own.friction[0], -bound,
                             bound, true);
                    solveRow(lane(t2, l), lane(ra2, l), lane(rb2, l),
                             lane(inertiaTimes(L.inertiaA, ra2), l),
                             lane(inertiaTimes(L.inertiaB, rb2), l), 0, own.friction[1], -bound,
                             bound, true);
                    const Real twist = bound * L.twistRadius[l];
                    solveRow(normal, normal, normal, lane(inertiaTimes(L.inertiaA, L.n), l),
                             lane(inertiaTimes(L.inertiaB, L.n), l), 0, own.friction[2], -twist,
                             twist, false);
                }
                store(a, A);
                store(b, B);
            }
        }
        begin = end;
    }
}

// Store the impulses for the next step's warm start (and the report, contacts()).
void RigidSolver::storeImpulses(Step& st) {
    solved_.assign(manifolds_.size(), 0);
    reportSubsteps_ = st.substeps;
    contactsStale_ = true;
    // The manifolds are written in a random order: each is fetched two batches ahead.
    const auto fetchForWriting = [&](const LaneSources& S) {
        for (const int mi : S.manifold) {
            if (mi >= 0) {
                const char* p = reinterpret_cast<const char*>(&manifolds_[std::size_t(mi)]);
                __builtin_prefetch(p + offsetof(CachedManifold, manifold.count), 1);
                __builtin_prefetch(p + offsetof(CachedManifold, normalImpulse), 1);
                __builtin_prefetch(p + offsetof(CachedManifold, frictionImpulse) + sizeof(Vec3) - 1,
                                   1);
            }
        }
    };
    // Each manifold is in one lane of one batch: the batches in parts on the team's threads.
    st.inParts(batches_.size(), 64, [&](int, std::size_t begin, std::size_t end) {
        for (std::size_t k = begin; k < end; ++k) {
            const LaneBatch& L = batches_[k];
            const LaneSources& S = laneSources_[k];
            if (k + 2 < end) {
                fetchForWriting(laneSources_[k + 2]);
            }
            for (int l = 0; l < kRigidLanes; ++l) {
                if (S.manifold[l] < 0) {
                    continue;
                }
                CachedManifold& cm = manifolds_[std::size_t(S.manifold[l])];
                for (int slot = 0; slot < 4; ++slot) {
                    if (S.slotPoint[l][slot] < cm.manifold.count) {
                        cm.normalImpulse[S.slotPoint[l][slot]] = L.lambdaN[slot][l];
                    }
                }
                cm.frictionImpulse = Vec3(L.lambdaT1[l], L.lambdaT2[l], L.lambdaTwist[l]);
                solved_[std::size_t(S.manifold[l])] = 1;
            }
        }
    });
}

} // namespace pbd
