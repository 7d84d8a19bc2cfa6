// The solver's air passes (Air Meshes §4): the sign check of the air tets, their projection
// (eq. 2), the contact-distance pass and friction across the air (§4.3). Members of Solver, kept
// apart from the constraint sweeps because they are a system of their own.

#include "core/base/InstructionSets.h"
#include "core/scene/Topology.h"
#include "core/solver/Solver.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

namespace pbd {

namespace {

// 6 V of an air tet at the predicted positions: (p1 - p0) . ((p2 - p0) x (p3 - p0)).
inline Real airDet(const SolverParticle* P, const Tetrahedron& t) {
    const SolverParticle& a = P[t[0]];
    const SolverParticle& b = P[t[1]];
    const SolverParticle& c = P[t[2]];
    const SolverParticle& d = P[t[3]];
    const Real bx = b.x - a.x, by = b.y - a.y, bz = b.z - a.z;
    const Real cx = c.x - a.x, cy = c.y - a.y, cz = c.z - a.z;
    const Real dx = d.x - a.x, dy = d.y - a.y, dz = d.z - a.z;
    return bx * (cy * dz - cz * dy) + by * (cz * dx - cx * dz) + bz * (cx * dy - cy * dx);
}

// The gradients of an air tet's C with respect to its corners, and its longest edge squared.
inline void airGradients(const SolverParticle* P, const Tetrahedron& t, Vec3* g, Real& longest) {
    const Vec3 p0(P[t[0]].x, P[t[0]].y, P[t[0]].z);
    const Vec3 e1 = Vec3(P[t[1]].x, P[t[1]].y, P[t[1]].z) - p0;
    const Vec3 e2 = Vec3(P[t[2]].x, P[t[2]].y, P[t[2]].z) - p0;
    const Vec3 e3 = Vec3(P[t[3]].x, P[t[3]].y, P[t[3]].z) - p0;
    g[1] = e2.cross(e3), g[2] = e3.cross(e1), g[3] = e1.cross(e2);
    g[0] = -(g[1] + g[2] + g[3]);
    longest = std::max({e1.squaredNorm(), e2.squaredNorm(), e3.squaredNorm(),
                        (e2 - e1).squaredNorm(), (e3 - e1).squaredNorm(), (e3 - e2).squaredNorm()});
}

// The same for a 2D air triangle (C = 2 A): gradients in the plane, longest edge squared.
inline void airGradients(const SolverParticle* P, const Triangle& t, Vec3* g, Real& longest) {
    const Vec3 p0(P[t[0]].x, P[t[0]].y, P[t[0]].z);
    const Vec3 e1 = Vec3(P[t[1]].x, P[t[1]].y, P[t[1]].z) - p0;
    const Vec3 e2 = Vec3(P[t[2]].x, P[t[2]].y, P[t[2]].z) - p0;
    g[1] = Vec3(e2.y(), -e2.x(), 0);
    g[2] = Vec3(-e1.y(), e1.x(), 0);
    g[0] = -(g[1] + g[2]);
    longest = std::max({e1.squaredNorm(), e2.squaredNorm(), (e2 - e1).squaredNorm()});
}

// 2 A of a 2D air triangle at the predicted positions: ((p1 - p0) x (p2 - p0)).z.
inline Real airCross(const SolverParticle* P, const Triangle& t) {
    const SolverParticle& a = P[t[0]];
    const SolverParticle& b = P[t[1]];
    const SolverParticle& c = P[t[2]];
    return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
}

// Whether none of an air tet's corners can move this substep (all on an animated skin, pinned
// or the container's): no projection can mend it, so it is neither checked nor projected; the
// step's tally counts it apart (AirStatistics::invertedFixed).
inline bool airFixed(const SolverParticle* P, const Tetrahedron& t) {
    return !(P[t[0]].w > 0) && !(P[t[1]].w > 0) && !(P[t[2]].w > 0) && !(P[t[3]].w > 0);
}

// Whether an air tet is inverted beyond rounding: C < -6e-9 l^3 (a volume below -1e-9 of its
// longest edge cubed, the measure of AirStatistics::invertedAfter). A free point pressed onto
// a body vertex (1e-7 m apart in air-dancer-scale) leaves the ring of needles around them at
// C = -1e-13 whichever way the projections turn; counting those, the rounds after the last
// iteration cycled between them until they ran out.
inline bool airInvertedBeyondRounding(const SolverParticle* P, const Tetrahedron& t) {
    const Real C = airDet(P, t);
    if (C >= 0) {
        return false;
    }
    Real longest = 0;
    for (int i = 0; i < 4; ++i) {
        for (int j = i + 1; j < 4; ++j) {
            const SolverParticle& a = P[t[i]];
            const SolverParticle& b = P[t[j]];
            const Real dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
            longest = std::max(longest, dx * dx + dy * dy + dz * dz);
        }
    }
    return !(C >= -6e-9 * longest * std::sqrt(longest)); // NaN counts as inverted
}

} // namespace

// The unilateral air constraint C = det[p1 - p0, p2 - p0, p3 - p0] >= 0 (Air Meshes eq. 2) is
// free while positive, so the common case is a sign check: each part checks its share of the
// air tets and remembers the inverted ones; projectAir then projects those in order.
void Solver::checkAir(int part, int parts) {
    const std::vector<Tetrahedron>& tets = scene_.air.tets;
    const std::vector<Triangle>& triangles = scene_.air.triangles;
    const SolverParticle* P = predicted_.data();
    const std::size_t nTets = tets.size();
    const std::size_t n = scene_.air.size();
    const std::size_t begin = n * std::size_t(part) / std::size_t(parts);
    const std::size_t end = n * std::size_t(part + 1) / std::size_t(parts);
    // The part's own list while it grows (its size beside the other parts' in airInverted_
    // would pass that cache line between the threads at every tet found), then put back.
    std::vector<std::uint32_t> inverted;
    inverted.swap(airInverted_[std::size_t(part)]);
    inverted.clear();
    // No prefetch: the air tets and their own points are numbered along a space-filling curve
    // (tessellateAir), so a tet's corners are mostly where the tets before it left them in the
    // caches. In TetGen's order they were four particles at random, and fetching the corners
    // of the tet 32 on took air-xl from 4.7 to 3.3-3.9 ns a check; in the curve's order, 2.2-3.2
    // ns without and 2.8-3.3 with.
    const std::size_t tetEnd = std::min(end, nTets);
    for (std::size_t t = begin; t < tetEnd; ++t) {
        if (!(airDet(P, tets[t]) >= 0) && !airFixed(P, tets[t])) { // flat is allowed: C >= 0
            inverted.push_back(std::uint32_t(t));
        }
    }
    for (std::size_t t = std::max(begin, nTets); t < end; ++t) {
        if (!(airCross(P, triangles[t - nTets]) >= 0)) {
            inverted.push_back(std::uint32_t(t));
        }
    }
    inverted.swap(airInverted_[std::size_t(part)]);
}

void Solver::endAirRound() {
    const auto now = std::chrono::steady_clock::now();
    airStatistics_.projectionMilliseconds +=
        std::chrono::duration<double, std::milli>(now - airProjectionStart_).count();
    airStatistics_.milliseconds +=
        std::chrono::duration<double, std::milli>(now - airRoundStart_).count();
    airRoundStart_ = now;
}

double Solver::measureAirCheck(int sweeps) {
    if (scene_.air.empty() || sweeps < 1) {
        return 0;
    }
    const std::size_t n = scene_.particles.size();
    predicted_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        const Vec3& p = scene_.particles.positions[i];
        predicted_[i] = {p.x(), p.y(), p.z(), scene_.particles.inverseMasses[i]};
    }
    airInverted_.resize(std::max<std::size_t>(airInverted_.size(), 1));
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < sweeps; ++k) {
        checkAir(0, 1); // writes the inverted list: nothing for the compiler to drop
    }
    const double ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    airInverted_[0].clear();
    return ns / (double(sweeps) * double(scene_.air.size()));
}

namespace {
constexpr int kAirRounds = 128;   // re-checks after the last iteration, at most
constexpr int kAirPasses = 8;     // sweeps over the inverted tets per check, at most
constexpr Real kAirSlack = 1e-10; // C after a projection, relative to the element's size
// The rounds after the last iteration raise it 4-fold per round up to this: a layer of air
// squashed flat between two bodies resting on each other (bremen's dog on the donkey) is a set
// of flat tets that the projections only pass a hair of inversion around; a target that grows
// opens the layer by that hair (about 0.1 mm for a metre-long tet) and the rounds end.
// bremen: 2 to 3 tets stayed inverted after some steps with 1e-6, none with 1e-5 or 1e-4;
// air-dancer-scale ended 1,000 steps with 6 inverted with 1e-5 (539 steps with any), with none
// with 1e-4 (2 steps with any).
constexpr Real kAirSlackMax = 1e-4;
// Rounds in which tet bodies move as one, after the rounds that leave tets inverted (projectAir).
constexpr int kAirSolidRounds = 32;
} // namespace

bool Solver::projectAir(bool last, bool friction, bool splitAirPairs) {
    projectAirPasses(kAirSlack);
    if (splitAirPairs) {
        return false; // the pairs are found in a phase of their own; projectAirContacts ends
    }
    if (!airPairs_.empty() && scene_.solver.airContactDistance > 0) {
        airPairsNear_.resize(1);
        findAirPairsNear(0, 1);
    }
    return projectAirContacts(last, friction);
}

bool Solver::projectAirContacts(bool last, bool friction) {
    if (!airPairs_.empty() && scene_.solver.airContactDistance > 0) {
        keepAirDistance();
    }
    if (!airWallContacts_.empty()) {
        keepAirWalls();
    }
    // Friction acts twice a substep: after the second-to-last iteration, on the separation the
    // contacts added in all before it, so that the bodies' constraints of the last iteration
    // spread over the body what it takes back at a corner; and after the last, on what that one
    // added. Applied once after the last on the whole sum (20-50 mm where a landing box's
    // corner was pushed 12 mm out of the floor), it took back a sliding corner's whole slip
    // alone and the body ended the step bent (air-xl: a box at 96.3% of its volume, a corner at
    // 11 m/s). Every iteration, it held the squashed memory experiments' flat air in place
    // (air-boxes-2d: 4 triangles inverted for good; bremen: inverted air to step 555).
    if (friction) {
        airStatistics_.contacts = applyAirFriction() + applyAirWallFriction();
    }
    // After the last iteration no air tet may stay inverted: projections can invert neighbours
    // that were fine when checked. One full check (checkAir, in parts like every iteration's),
    // then finishAir.
    return last && (airStatistics_.projections != 0 || airStatistics_.contacts != 0);
}

// After the last iteration's full check (airInverted_, its parts in element order): rounds that
// re-check only the elements around the corners the previous round moved (no other element
// can have changed sign).
void Solver::finishAir() {
    refreshAirIncidence();
    const std::size_t nTets = scene_.air.tets.size();
    const SolverParticle* P = predicted_.data();
    const auto inverted = [&](std::uint32_t e) {
        // 2D triangles keep the strict test: with no needles in 2D air the rounds end anyway,
        // and with the tolerance the squashed air-boxes-2d kept 7 triangles inverted. So does a
        // tet between solids alone: the air and the bodies tile the container, so two bodies
        // overlap exactly where air between them is negative, and the tolerance left flat air
        // between boxes resting face to face at C = -3e-11, through which they crossed by
        // nanometres (air-boxes: 3 crossing pairs at step 56; air-xl up to 20) while no air
        // counted as inverted. Only the needles around a free air point need the tolerance.
        if (e >= nTets) {
            return !(airCross(P, scene_.air.triangles[e - nTets]) >= 0);
        }
        const Tetrahedron& t = scene_.air.tets[e];
        if (airFixed(P, t)) {
            return false;
        }
        bool freePoint = false;
        for (Index v : t) {
            freePoint = freePoint || particleOwner_[v] == kFreeAir;
        }
        return freePoint ? airInvertedBeyondRounding(P, t) : !(airDet(P, t) >= 0);
    };
    std::vector<std::uint32_t>& found = airInverted_[0];
    for (std::size_t k = 1; k < airInverted_.size(); ++k) {
        found.insert(found.end(), airInverted_[k].begin(), airInverted_[k].end());
        airInverted_[k].clear();
    }
    runAirRounds(found, inverted, false);
    // Where three solids meet at a sliver the corner projections can cycle: a box tilted
    // against its neighbour on the floor, the tet between its bottom face and a floor point
    // beyond the face's low edge, and the tet between two of its corners, that floor point and
    // a light corner of the neighbour (air-xl before the walls: inverse mass 12 against 1.2-2,
    // the same 3-5 tets inverted after round 32 and after round 128). Projecting the first
    // turns the face, inverting the second, whose projection moves mostly the light corner
    // back. What the corner rounds leave is projected again with each tet body moving as one
    // (a translation with its whole mass). Not from the start: translations push each body
    // into whatever rests on its other side (bremen: air left inverted after 7 steps of 2,000,
    // none with the corner rounds first).
    if (!found.empty() && nTets > 0) {
        airBodyTravel_.assign(scene_.bodies.size(), 0);
        runAirRounds(found, inverted, true);
    }
    // A free point a body closed over keeps its star inverted whatever the rounds do: each
    // projection that mends one of its tets inverts another (bremen squashed flat and released
    // with the optimisation off: 5 air tets inverted to step 617 around one such point). It is
    // air, not matter, and belongs to no surface: it moves into its star's kernel, where every
    // tet around it is positive, and the rounds run once more.
    if (!found.empty() && nTets > 0 && relocateTrappedAirPoints(found)) {
        found.clear();
        checkAir(0, 1);
        runAirRounds(found, inverted, false);
    }
}

// Air tets inverted (beyond rounding) with every corner held by continuous collision this
// substep cannot be mended (airFixed), and a zone moves its particles by one translation from
// where they started: a tet inverted at the substep's start and held shut stays inverted from
// substep to substep while the holds last (the dancer: up to about 270 of them, between layers
// the skin presses together). Their held corners that can move get their inverse masses back
// for the mending that follows; the next hold cycle follows what it moves. Tets the holds
// inverted within this substep are left to the next one's projections (releasing those too
// mended more of the dancer's air but, in one run of six, left the cloth held whole, a
// million touching pairs a step).
void Solver::releaseShutAir(const std::vector<Index>& held) {
    refreshAirIncidence();
    const std::size_t nTets = scene_.air.tets.size();
    const SolverParticle* P = predicted_.data();
    const std::vector<Vec3>& x = scene_.particles.positions;
    auto startInverted = [&](std::uint32_t e) {
        const Tetrahedron& t = scene_.air.tets[e];
        return signedVolume(x[t[0]], x[t[1]], x[t[2]], x[t[3]]) < 0;
    };
    std::vector<std::uint32_t> shut;
    for (Index v : held) {
        for (std::uint32_t i = airIncidenceStart_[v]; i < airIncidenceStart_[v + 1]; ++i) {
            const std::uint32_t e = airIncidence_[i];
            if (e < nTets && airFixed(P, scene_.air.tets[e]) &&
                airInvertedBeyondRounding(P, scene_.air.tets[e]) && startInverted(e)) {
                shut.push_back(e);
            }
        }
    }
    std::sort(shut.begin(), shut.end());
    shut.erase(std::unique(shut.begin(), shut.end()), shut.end());
    for (std::uint32_t e : shut) {
        for (Index q : scene_.air.tets[e]) {
            if (q < holdable_.size() && holdable_[q]) { // not pinned nor on a skin
                predicted_[q].w = scene_.particles.inverseMasses[q];
            }
        }
    }
}

template <class Inverted>
void Solver::runAirRounds(std::vector<std::uint32_t>& found, const Inverted& inverted,
                          bool solids) {
    const std::size_t nTets = scene_.air.tets.size();
    Real slack = kAirSlack;
    const int rounds = solids ? kAirSolidRounds : kAirRounds;
    for (int round = 0; round < rounds && !found.empty(); ++round) {
        slack = std::min(4 * slack, kAirSlackMax);
        airMovedBodies_.clear();
        if (solids) {
            projectAirAsSolids(slack);
        } else {
            projectAirPasses(slack, true);
        }
        airMoved_.assign(found.begin(), found.end());
        // The contacts these projections made get their friction too (the slip of the whole
        // substep, as for the others); it moves their corners as well.
        if (!airContactTets_.empty()) {
            airMoved_.insert(airMoved_.end(), airContactTets_.begin(), airContactTets_.end());
            airStatistics_.contacts += applyAirFriction();
        }
        airSeen_.begin(scene_.air.size());
        found.clear();
        airCornerSeen_.begin(scene_.particles.size());
        const auto recheckAround = [&](Index v) {
            // Once per corner: the tets found inverted share most of theirs.
            if (!airCornerSeen_.mark(v)) {
                return;
            }
            for (std::uint32_t i = airIncidenceStart_[v]; i < airIncidenceStart_[v + 1]; ++i) {
                const std::uint32_t f = airIncidence_[i];
                if (airSeen_.mark(f) && inverted(f)) {
                    found.push_back(f);
                }
            }
        };
        for (std::uint32_t e : airMoved_) {
            const Index* corners =
                e < nTets ? scene_.air.tets[e].data() : scene_.air.triangles[e - nTets].data();
            const int n = e < nTets ? 4 : 3;
            for (int k = 0; k < n; ++k) {
                recheckAround(corners[k]);
            }
        }
        for (std::uint32_t b : airMovedBodies_) { // every air tet around a body moved whole
            const Body& body = scene_.bodies[b];
            for (Index v = body.firstParticle; v < body.firstParticle + body.particleCount; ++v) {
                recheckAround(v);
            }
        }
        std::sort(found.begin(), found.end()); // element order, as a full check gives
    }
}

bool Solver::relocateTrappedAirPoints(const std::vector<std::uint32_t>& found) {
    const std::size_t nTets = scene_.air.tets.size();
    SolverParticle* P = predicted_.data();
    std::vector<Index> points;
    for (std::uint32_t e : found) {
        if (e >= nTets) {
            continue;
        }
        for (Index v : scene_.air.tets[e]) {
            if (particleOwner_[v] == kFreeAir) {
                points.push_back(v);
            }
        }
    }
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    bool moved = false;
    struct Face {  // the face of a star tet opposite the free point
        Vec3 n;    // (b - a) x (c - a): the tet's C = n . (a - p)
        Vec3 a;    // its first corner
        Real want; // C aimed for: well above flat, relative to the face's size
    };
    std::vector<Face> faces;
    for (Index p : points) {
        // The star: every air tet around p, as C(p) = det[a - p, b - p, c - p] = n . (a - p)
        // with n = (b - a) x (c - a) for its other corners a, b, c in the tet's order
        // (affine in p, so each tet is a half-space and the star's kernel their intersection).
        faces.clear();
        for (std::uint32_t i = airIncidenceStart_[p]; i < airIncidenceStart_[p + 1]; ++i) {
            const std::uint32_t e = airIncidence_[i];
            if (e >= nTets) {
                continue;
            }
            // p to the first corner by an even permutation (the tet's sign stays).
            const Tetrahedron& o = scene_.air.tets[e];
            const Tetrahedron t = o[1] == p   ? Tetrahedron{o[1], o[0], o[3], o[2]}
                                  : o[2] == p ? Tetrahedron{o[2], o[3], o[0], o[1]}
                                  : o[3] == p ? Tetrahedron{o[3], o[2], o[1], o[0]}
                                              : o;
            const Vec3 a(P[t[1]].x, P[t[1]].y, P[t[1]].z);
            const Vec3 b(P[t[2]].x, P[t[2]].y, P[t[2]].z);
            const Vec3 c(P[t[3]].x, P[t[3]].y, P[t[3]].z);
            const Vec3 n = (b - a).cross(c - a);
            const Real size = std::sqrt(n.norm()); // an edge length
            faces.push_back({n, a, 1e-2 * size * size * size});
        }
        if (faces.empty()) {
            continue;
        }
        // Alternating projections onto the violated half-spaces (they converge when the
        // kernel is not empty), aiming well inside first and then nearer its boundary; kept
        // only if every tet of the star ends up positive.
        const Vec3 start(P[p].x, P[p].y, P[p].z);
        Vec3 x = start;
        bool positive = false;
        for (Real aim = 1; aim > 1e-7 && !positive; aim *= 0.01) {
            x = start;
            bool inside = false;
            for (int sweep = 0; sweep < 500 && !inside; ++sweep) {
                inside = true;
                for (const Face& f : faces) {
                    const Real c = f.n.dot(f.a - x);
                    const Real nn = f.n.squaredNorm();
                    if (c < aim * f.want && nn > 0) {
                        x -= f.n * ((aim * f.want - c) / nn);
                        inside = false;
                    }
                }
            }
            positive = x.allFinite();
            for (const Face& f : faces) {
                positive = positive && f.n.dot(f.a - x) > 0;
            }
        }
        if (positive && x != start) {
            P[p].x = x.x();
            P[p].y = x.y();
            P[p].z = x.z();
            moved = true;
            ++airStatistics_.relocatedPoints;
        }
    }
    return moved;
}

// Particle -> air elements (tets, then 2D triangles) incidence, rebuilt when the air changed.
// Built on the calling arena's threads, each counting and then filling a contiguous share of
// the elements: every particle's list is in element order, as one thread builds it.
void Solver::refreshAirIncidence() {
    const std::size_t n = scene_.particles.size();
    if (airIncidenceVersion_ == airTopologyVersion_ && airIncidenceElements_ == scene_.air.size() &&
        airIncidenceStart_.size() == n + 1) {
        return;
    }
    const std::size_t nTets = scene_.air.tets.size();
    const std::size_t elements = scene_.air.size();
    const auto visit = [&](std::size_t begin, std::size_t end, auto&& f) {
        for (std::size_t e = begin; e < std::min(end, nTets); ++e) {
            for (Index v : scene_.air.tets[e]) {
                f(v, std::uint32_t(e));
            }
        }
        for (std::size_t e = std::max(begin, nTets); e < end; ++e) {
            for (Index v : scene_.air.triangles[e - nTets]) {
                f(v, std::uint32_t(e));
            }
        }
    };
    const std::size_t parts = std::clamp<std::size_t>(
        std::size_t(tbb::this_task_arena::max_concurrency()), 1, elements / 4096 + 1);
    const auto range = [&](std::size_t part) {
        return std::pair{elements * part / parts, elements * (part + 1) / parts};
    };
    // Per part, per particle: its count, then where the part's entries for it begin.
    std::vector<std::vector<std::uint32_t>>& at = airIncidenceParts_;
    at.resize(parts);
    tbb::parallel_for(std::size_t(0), parts, [&](std::size_t part) {
        at[part].assign(n, 0);
        const auto [begin, end] = range(part);
        visit(begin, end, [&](Index v, std::uint32_t) { ++at[part][v]; });
    });
    airIncidenceStart_.resize(n + 1);
    std::uint32_t total = 0;
    for (std::size_t v = 0; v < n; ++v) {
        airIncidenceStart_[v] = total;
        for (std::size_t part = 0; part < parts; ++part) {
            const std::uint32_t count = at[part][v];
            at[part][v] = total;
            total += count;
        }
    }
    airIncidenceStart_[n] = total;
    airIncidence_.resize(total);
    tbb::parallel_for(std::size_t(0), parts, [&](std::size_t part) {
        const auto [begin, end] = range(part);
        visit(begin, end, [&](Index v, std::uint32_t e) { airIncidence_[at[part][v]++] = e; });
    });
    airIncidenceVersion_ = airTopologyVersion_;
    airIncidenceElements_ = scene_.air.size();
}

namespace {
// The point of plane (f0, f1, f2) nearest p in barycentric coordinates, for normal n of the
// face (its length twice the area): b1 = ((p - f0) x (f2 - f0)) . n / |n|^2, 1 at f1, and
// b2 = ((f1 - f0) x (p - f0)) . n / |n|^2, 1 at f2. (Until session 53 both had the wrong sign:
// a particle over the middle of a face counted as beside it and one past the face's first
// corner as over it.)
Vec3 planeBarycentric(const Vec3& p, const Vec3& f0, const Vec3& f1, const Vec3& f2,
                      const Vec3& n) {
    const Real n2 = n.squaredNorm();
    const Real b1 = (p - f0).cross(f2 - f0).dot(n) / n2;
    const Real b2 = (f1 - f0).cross(p - f0).dot(n) / n2;
    return Vec3(1 - b1 - b2, b1, b2);
}
Vec3 at(const SolverParticle& q) {
    return Vec3(q.x, q.y, q.z);
}
void move(SolverParticle& q, const Vec3& d) {
    q.x += d.x();
    q.y += d.y();
    q.z += d.z();
}
} // namespace

namespace {
// A particle counts as over a face while no barycentric coordinate is below -kOverFace: a hair,
// so that over the edge between two faces of a surface one of them holds it whatever the
// rounding. A margin that reaches past the face holds what is beside it: with 5%, a slab's
// vertex just under a sliding box's bottom counted as over the box's front face, 2 mm below its
// edge, and stopped the frictionless box (0.12 m slid of 0.47, tst_air_optimizer).
constexpr Real kOverFace = 0.001;

// A pair of the second pass that acts: C < 0, with the face's unit normal toward the particle's
// side and the particle's barycentric coordinates over the face.
struct AirPairState {
    Real C;
    Vec3 un, b;
};
bool airPairActs(const SolverParticle* P, const AirContactPair& pair, Real epsilon,
                 AirPairState& out) {
    const Vec3 p = at(P[pair.particle]), f0 = at(P[pair.face[0]]), f1 = at(P[pair.face[1]]),
               f2 = at(P[pair.face[2]]);
    const Vec3 n = (f1 - f0).cross(f2 - f0);
    const Real length = n.norm();
    if (!(length > 0)) {
        return false;
    }
    out.un = -n / length; // toward the particle's side: (p, face) is positive
    out.C = (p - f0).dot(out.un) - epsilon;
    if (out.C >= 0) {
        return false;
    }
    out.b = planeBarycentric(p, f0, f1, f2, n);
    return out.b.minCoeff() >= -kOverFace; // else beside the face: other pairs hold it
}

// The filter's epsilon squared, with a margin for its rounding.
PBD_KERNEL_INLINE Real airPairEpsilon2(Real epsilon) {
    return 1.0001 * epsilon * epsilon;
}

// Whether a pair may act (airPairActs decides): not when well clear of its face's plane, C >= 0
// told without a root or a division ((p - f0) . n <= -epsilon |n| with n the face's
// unnormalised normal), nor when well beside it (planeBarycentric's numerators against its
// margin). Without branches; markAirPairsNear's is compiled twice in a portable build (core/
// base/InstructionSets.h). Its margins hold whatever the rounding of either copy, and of
// markAirPairsNear's four lanes.
PBD_KERNEL_INLINE bool airPairMayAct(const SolverParticle* P, const AirContactPair& pair,
                                     Real epsilon2) {
    const SolverParticle& q = P[pair.particle];
    const SolverParticle& a = P[pair.face[0]];
    const SolverParticle& b = P[pair.face[1]];
    const SolverParticle& c = P[pair.face[2]];
    const Real px = q.x - a.x, py = q.y - a.y, pz = q.z - a.z; // p - f0
    const Real ux = b.x - a.x, uy = b.y - a.y, uz = b.z - a.z; // f1 - f0
    const Real vx = c.x - a.x, vy = c.y - a.y, vz = c.z - a.z; // f2 - f0
    const Real nx = uy * vz - uz * vy, ny = uz * vx - ux * vz, nz = ux * vy - uy * vx;
    const Real n2 = nx * nx + ny * ny + nz * nz;
    const Real d = px * nx + py * ny + pz * nz;
    const bool clear = (d < 0) & (d * d > epsilon2 * n2);
    // planeBarycentric's numerators: b1 = ((p - f0) x v) . n and b2 = (u x (p - f0)) . n.
    const Real b1 = (py * vz - pz * vy) * nx + (pz * vx - px * vz) * ny + (px * vy - py * vx) * nz;
    const Real b2 = (uy * pz - uz * py) * nx + (uz * px - ux * pz) * ny + (ux * py - uy * px) * nz;
    const Real beside = -(kOverFace + 1e-6) * n2 - 1e-9 * (std::abs(b1) + std::abs(b2));
    const bool away = (b1 < beside) | (b2 < beside) | (n2 - b1 - b2 < beside);
    return !(clear | away);
}

// Four doubles, the filter's lanes: pairs of SSE2 registers in the baseline copy, one AVX2
// register in PBDLAB_WIDE_PATH's.
using Four = double __attribute__((vector_size(4 * sizeof(double))));
using FourMask = decltype(Four{} < Four{});

// The points of four elements as coordinate lanes: each particle's (x, y, z, w) loaded whole,
// the four rows transposed.
struct FourPoints {
    Four x, y, z;
};
PBD_KERNEL_INLINE FourPoints pointsOf(const SolverParticle* P, Index a, Index b, Index c, Index d) {
    Four ra, rb, rc, rd;
    std::memcpy(&ra, &P[a], sizeof(Four));
    std::memcpy(&rb, &P[b], sizeof(Four));
    std::memcpy(&rc, &P[c], sizeof(Four));
    std::memcpy(&rd, &P[d], sizeof(Four));
    const Four t0 = __builtin_shufflevector(ra, rb, 0, 4, 2, 6);
    const Four t1 = __builtin_shufflevector(ra, rb, 1, 5, 3, 7);
    const Four t2 = __builtin_shufflevector(rc, rd, 0, 4, 2, 6);
    const Four t3 = __builtin_shufflevector(rc, rd, 1, 5, 3, 7);
    return {__builtin_shufflevector(t0, t2, 0, 1, 4, 5),
            __builtin_shufflevector(t1, t3, 0, 1, 4, 5),
            __builtin_shufflevector(t0, t2, 2, 3, 6, 7)};
}

// The same for `count` pairs, a byte each, four at a time (the remainder one by one): GCC left
// the loop of airPairMayAct scalar, and its points' loads and the arithmetic by lanes took the
// dancer's search from 8.5% of its samples to 5.3% (bench dancer --threads 2). The same four
// lanes for the air tets' sign check made it slower (3.2 -> 4.1 ns a check): it has less
// arithmetic a point.
PBD_KERNEL_INLINE void markAirPairsNear(const SolverParticle* P, const AirContactPair* pairs,
                                        std::size_t count, Real epsilon, std::uint8_t* maybe) {
    const Real epsilon2 = airPairEpsilon2(epsilon);
    std::size_t i = 0;
    for (; i + 4 <= count; i += 4) {
        const AirContactPair* r = pairs + i;
        const FourPoints q =
            pointsOf(P, r[0].particle, r[1].particle, r[2].particle, r[3].particle);
        const FourPoints a = pointsOf(P, r[0].face[0], r[1].face[0], r[2].face[0], r[3].face[0]);
        const FourPoints b = pointsOf(P, r[0].face[1], r[1].face[1], r[2].face[1], r[3].face[1]);
        const FourPoints c = pointsOf(P, r[0].face[2], r[1].face[2], r[2].face[2], r[3].face[2]);
        const Four px = q.x - a.x, py = q.y - a.y, pz = q.z - a.z;
        const Four ux = b.x - a.x, uy = b.y - a.y, uz = b.z - a.z;
        const Four vx = c.x - a.x, vy = c.y - a.y, vz = c.z - a.z;
        const Four nx = uy * vz - uz * vy, ny = uz * vx - ux * vz, nz = ux * vy - uy * vx;
        const Four n2 = nx * nx + ny * ny + nz * nz;
        const Four d = px * nx + py * ny + pz * nz;
        const FourMask clear = (d < 0) & (d * d > epsilon2 * n2);
        const Four b1 =
            (py * vz - pz * vy) * nx + (pz * vx - px * vz) * ny + (px * vy - py * vx) * nz;
        const Four b2 =
            (uy * pz - uz * py) * nx + (uz * px - ux * pz) * ny + (ux * py - uy * px) * nz;
        // No function takes or gives a Four: the baseline copy's ABI for one differs (-Wpsabi).
        const Four beside =
            -(kOverFace + 1e-6) * n2 - 1e-9 * ((b1 < 0 ? -b1 : b1) + (b2 < 0 ? -b2 : b2));
        const FourMask away = (b1 < beside) | (b2 < beside) | (n2 - b1 - b2 < beside);
        const FourMask skip = clear | away;
        for (int l = 0; l < 4; ++l) {
            maybe[i + std::size_t(l)] = std::uint8_t(skip[l] == 0);
        }
    }
    for (; i < count; ++i) {
        maybe[i] = std::uint8_t(airPairMayAct(P, pairs[i], epsilon2));
    }
}
} // namespace

// The second pass (Air Meshes §4.3): C = (p - f0) . n_hat - epsilon >= 0 for each vertex-face
// pair across the air whose vertex lies over its face (PBD eq. 12-13 with the face's point held
// by its barycentric coordinates, as in cloth self-collision).
//
// Which pairs act is found first, on every thread, on the positions the air's projections
// left (the full dancer holds 70,000 pairs, of which about 5% come near their face in an
// iteration: checked one by one between projections, the pass was 66 of its 390 ms a step on
// two threads).
void Solver::findAirPairsNear(int part, int parts) {
    // The part's own list while it grows, then put back (as checkAir's).
    std::vector<std::uint32_t> near;
    near.swap(airPairsNear_[std::size_t(part)]);
    near.clear();
    const Real epsilon = scene_.solver.airContactDistance;
    const SolverParticle* P = predicted_.data();
    const std::size_t n = airPairs_.size();
    const std::size_t begin = n * std::size_t(part) / std::size_t(parts);
    const std::size_t end = n * std::size_t(part + 1) / std::size_t(parts);
    AirPairState state;
    constexpr std::size_t kBlock = 512;
    std::uint8_t maybe[kBlock];
    for (std::size_t first = begin; first < end; first += kBlock) {
        const std::size_t count = std::min(kBlock, end - first);
        const AirContactPair* pairs = airPairs_.data() + first;
        PBDLAB_WIDE_PATH(markAirPairsNear(P, pairs, count, epsilon, maybe));
        for (std::size_t i = 0; i < count; ++i) {
            if (!maybe[i]) {
                continue;
            }
            const std::size_t k = first + i;
            const AirContactPair& pair = airPairs_[k];
            // A container point facing a body's face: with walls, they hold the body away from the
            // container instead. In air-xl such a pair (a floor point at the edge of a box's bottom
            // face) found the face 0.5 mm from it in every iteration of a substep and pushed it
            // 1.5 mm, against the box's own constraints and the air; the fight dented the box's
            // neighbour to 97.2% of its volume for a step (a corner at 22 m/s). Without the pair
            // that step keeps 99.96%. A body particle facing the container's face stays a pair
            // (skipping those too, air-boxes' boxes fell out of their layers in tst_core_air).
            if (airWalls_ && particleOwner_[pair.particle] == kContainer) {
                continue;
            }
            if (airPairActs(P, pair, epsilon, state)) {
                near.push_back(std::uint32_t(k));
            }
        }
    }
    near.swap(airPairsNear_[std::size_t(part)]);
}

void Solver::refreshAirPairIncidence() {
    const std::size_t n = scene_.particles.size();
    airPairIncidenceStart_.assign(n + 1, 0);
    for (const AirContactPair& pair : airPairs_) {
        ++airPairIncidenceStart_[pair.particle + 1];
        for (Index v : pair.face) {
            ++airPairIncidenceStart_[v + 1];
        }
    }
    for (std::size_t v = 0; v < n; ++v) {
        airPairIncidenceStart_[v + 1] += airPairIncidenceStart_[v];
    }
    airPairIncidence_.resize(airPairIncidenceStart_[n]);
    std::vector<std::uint32_t> fill(airPairIncidenceStart_.begin(),
                                    airPairIncidenceStart_.end() - 1);
    for (std::size_t k = 0; k < airPairs_.size(); ++k) {
        const AirContactPair& pair = airPairs_[k];
        airPairIncidence_[fill[pair.particle]++] = std::uint32_t(k);
        for (Index v : pair.face) {
            airPairIncidence_[fill[v]++] = std::uint32_t(k);
        }
    }
}

// The pairs found, in pair order, and with them every later pair of a particle that a projection
// moved: a pair whose points nothing moved since they were found acts as it did then, so this
// is the pass checking every pair in turn, to the bit. Counts the separation added per pair
// for friction.
void Solver::keepAirDistance() {
    const Real epsilon = scene_.solver.airContactDistance;
    SolverParticle* P = predicted_.data();
    AirPairState state;
    // The pairs to check, as bits in pair order: those found, and those a projection set.
    std::vector<std::uint64_t>& pending = airPairPending_;
    pending.assign((airPairs_.size() + 63) / 64, 0);
    for (const std::vector<std::uint32_t>& near : airPairsNear_) {
        for (const std::uint32_t k : near) {
            pending[k / 64] |= std::uint64_t(1) << (k % 64);
        }
    }
    // The pairs found act nearly all; the rest, set again by a projection, seldom (the full
    // dancer: 43 of 52 million checks a run act not): those go through the filter the search
    // uses first (markAirPairsNear's, no root or division; it passes every pair that acts).
    std::vector<std::uint64_t>& found = airPairFound_;
    found = pending;
    const Real epsilon2 = airPairEpsilon2(epsilon);
    // A particle's later pairs are set once a pass: set after the first of its pairs that acts,
    // they stay pending until their turn, after any later pair of it that acts (the pairs go in
    // order), so setting them again sets nothing new (a third of the pass's time went to it).
    airCornerSeen_.begin(scene_.particles.size());
    const auto recheckAfter = [&](std::uint32_t k, Index v) {
        if (!airCornerSeen_.mark(v)) {
            return;
        }
        for (std::uint32_t i = airPairIncidenceStart_[v]; i < airPairIncidenceStart_[v + 1]; ++i) {
            const std::uint32_t j = airPairIncidence_[i];
            if (j > k) {
                pending[j / 64] |= std::uint64_t(1) << (j % 64);
            }
        }
    };
    for (std::size_t word = 0; word < pending.size(); ++word) {
        while (pending[word] != 0) {
            const int bit = std::countr_zero(pending[word]);
            pending[word] &= pending[word] - 1;
            const std::uint32_t k = std::uint32_t(word * 64 + std::size_t(bit));
            const AirContactPair& pair = airPairs_[k];
            if ((airWalls_ && particleOwner_[pair.particle] == kContainer) ||
                (((found[word] >> bit) & 1) == 0 && !airPairMayAct(P, pair, epsilon2)) ||
                !airPairActs(P, pair, epsilon, state)) {
                continue;
            }
            SolverParticle& q = P[pair.particle];
            SolverParticle* f[3] = {&P[pair.face[0]], &P[pair.face[1]], &P[pair.face[2]]};
            const Vec3& b = state.b;
            const Real W =
                q.w + b[0] * b[0] * f[0]->w + b[1] * b[1] * f[1]->w + b[2] * b[2] * f[2]->w;
            if (!(W > 0)) {
                continue;
            }
            const Real dl = -state.C / W;
            move(q, (q.w * dl) * state.un);
            for (int i = 0; i < 3; ++i) {
                move(*f[i], (-f[i]->w * b[i] * dl) * state.un);
            }
            if (airPairGap_[k] == 0) {
                airPairsHeld_.push_back(k);
            }
            airPairGap_[k] -= state.C;
            recheckAfter(k, pair.particle);
            for (Index v : pair.face) {
                recheckAfter(k, v);
            }
        }
    }
}

// Bodies resting on the container's floor ended with no gap at all (air-dancer-scale: every
// box's lowest particle 2e-9 m above the floor after 1,000 steps): the second pass holds only
// a particle and a floor face that share an air tet, and the tessellation of the layer under
// a box rarely has one. The air there is flat, its sign a matter of rounding, and in air-xl the
// flat tets between two boxes' bottom edges and a floor point cycled through every round
// (docs/air-meshes.md). A box-shaped container is a set of planes: every body particle near one
// is held airContactDistance inside it directly.
void Solver::findAirWallContacts() {
    airWallContacts_.clear();
    const Real epsilon = scene_.solver.airContactDistance;
    const Particles& particles = scene_.particles;
    if (airWallsFor_ != particles.size()) {
        airWallsFor_ = particles.size();
        airWalls_ = false;
        Vec3 low = Vec3::Constant(std::numeric_limits<Real>::infinity());
        Vec3 high = -low;
        std::size_t count = 0;
        const Index first = scene_.air.firstParticle, end = first + scene_.air.particleCount;
        for (Index v = first; v < end; ++v) {
            if (!(particles.inverseMasses[v] > 0)) {
                low = low.cwiseMin(particles.positions[v]);
                high = high.cwiseMax(particles.positions[v]);
                ++count;
            }
        }
        const Vec3 size = high - low;
        bool box = count >= 8 && !scene_.air.tets.empty() && (size.array() > 0).all();
        const Real tolerance = 1e-9 * size.maxCoeff();
        for (Index v = first; v < end && box; ++v) {
            if (!(particles.inverseMasses[v] > 0)) {
                const Vec3& p = particles.positions[v];
                bool onAFace = false;
                for (int a = 0; a < 3; ++a) {
                    onAFace = onAFace || std::abs(p[a] - low[a]) <= tolerance ||
                              std::abs(p[a] - high[a]) <= tolerance;
                }
                box = onAFace;
            }
        }
        airWalls_ = box;
        airWallLow_ = low;
        airWallHigh_ = high;
    }
    if (!airWalls_ || !(epsilon > 0)) {
        return;
    }
    const SolverParticle* P = predicted_.data();
    for (const Body& body : scene_.bodies) {
        for (Index q = body.firstParticle; q < body.firstParticle + body.particleCount; ++q) {
            if (!(P[q].w > 0)) {
                continue;
            }
            const Vec3 p = at(P[q]);
            const Real reach = 2 * epsilon + (p - particles.positions[q]).norm();
            for (int a = 0; a < 3; ++a) {
                if (p[a] - airWallLow_[a] < reach) {
                    airWallContacts_.push_back({q, 2 * a, 0});
                }
                if (airWallHigh_[a] - p[a] < reach) {
                    airWallContacts_.push_back({q, 2 * a + 1, 0});
                }
            }
        }
    }
}

void Solver::keepAirWalls() {
    const Real epsilon = scene_.solver.airContactDistance;
    SolverParticle* P = predicted_.data();
    for (AirWallContact& c : airWallContacts_) {
        SolverParticle& q = P[c.particle];
        const int axis = c.wall / 2;
        Real& coordinate = axis == 0 ? q.x : axis == 1 ? q.y : q.z;
        const Real inward = c.wall % 2 == 0 ? 1 : -1; // the low wall pushes up the axis
        const Real C =
            inward * (coordinate - (inward > 0 ? airWallLow_ : airWallHigh_)[axis]) - epsilon;
        if (C < 0) {
            coordinate -= inward * C;
            c.gap -= C;
        }
    }
}

// The walls' friction, as the pairs' (applyAirFriction): the particle's tangential motion of
// the substep taken back up to mu times the separation the wall added.
std::size_t Solver::applyAirWallFriction() {
    const Real mu = scene_.solver.airFriction;
    SolverParticle* P = predicted_.data();
    const std::vector<Vec3>& x = scene_.particles.positions;
    std::size_t acted = 0;
    for (AirWallContact& c : airWallContacts_) {
        const Real gap = c.gap;
        c.gap = 0;
        if (!(gap > 0)) {
            continue;
        }
        ++acted;
        if (!(mu > 0)) {
            continue;
        }
        SolverParticle& q = P[c.particle];
        Vec3 tangential = at(q) - x[c.particle];
        tangential[c.wall / 2] = 0;
        const Real slide = tangential.norm();
        if (slide > 0) {
            move(q, -tangential * (std::min(slide, mu * gap) / slide));
        }
    }
    return acted;
}

// Coulomb friction on the pairs the second pass held (position-based: the relative tangential
// motion of the substep is taken back up to mu times the separation added, all of it while it
// is smaller: static friction).
std::size_t Solver::applyAirFriction() {
    const Real mu = scene_.solver.airFriction;
    SolverParticle* P = predicted_.data();
    const std::vector<Vec3>& x = scene_.particles.positions; // the start of the substep
    std::size_t acted = 0;
    // The pairs with a gap, in pair order: the friction rounds after the last iteration come
    // back here up to 128 times a substep, and the full dancer has 70,000 pairs to look through.
    std::sort(airPairsHeld_.begin(), airPairsHeld_.end());
    for (const std::uint32_t k : airPairsHeld_) {
        const Real gap = airPairGap_[k];
        if (!(gap > 0)) {
            continue;
        }
        airPairGap_[k] = 0;
        ++acted;
        if (!(mu > 0)) {
            continue;
        }
        const AirContactPair& pair = airPairs_[k];
        SolverParticle& q = P[pair.particle];
        SolverParticle* f[3] = {&P[pair.face[0]], &P[pair.face[1]], &P[pair.face[2]]};
        const Vec3 p = at(q), f0 = at(*f[0]), f1 = at(*f[1]), f2 = at(*f[2]);
        const Vec3 n = (f1 - f0).cross(f2 - f0);
        if (!(n.squaredNorm() > 0)) {
            continue;
        }
        const Vec3 un = n.normalized();
        const Vec3 b = planeBarycentric(p, f0, f1, f2, n).cwiseMax(0.0);
        const Real sum = b.sum();
        const Vec3 bb = sum > 0 ? Vec3(b / sum) : Vec3(1.0 / 3, 1.0 / 3, 1.0 / 3);
        const Vec3 rel = (p - x[pair.particle]) - bb[0] * (f0 - x[pair.face[0]]) -
                         bb[1] * (f1 - x[pair.face[1]]) - bb[2] * (f2 - x[pair.face[2]]);
        const Vec3 tangential = rel - rel.dot(un) * un;
        const Real slide = tangential.norm();
        if (!(slide > 0)) {
            continue;
        }
        const Vec3 take = tangential * (std::min(slide, mu * gap) / slide);
        const Real W =
            q.w + bb[0] * bb[0] * f[0]->w + bb[1] * bb[1] * f[1]->w + bb[2] * bb[2] * f[2]->w;
        if (!(W > 0)) {
            continue;
        }
        move(q, (-q.w / W) * take);
        for (int i = 0; i < 3; ++i) {
            move(*f[i], (f[i]->w * bb[i] / W) * take);
        }
    }
    airPairsHeld_.clear();
    // The contacts the air projection made: the same friction between the two solids' corners,
    // each side moving as one (by the mean of its corners' displacements).
    for (std::uint32_t t : airContactTets_) {
        const Real gap = airContactGap_[t];
        airContactGap_[t] = 0;
        ++acted;
        if (!(mu > 0) || !(gap > 0)) {
            continue;
        }
        // The element's corners and, now, the gradients of its C (a tet, or a 2D triangle).
        Index tet[4];
        Vec3 g[4];
        int corners = 4;
        const std::size_t nTets = scene_.air.tets.size();
        if (t < nTets) {
            std::copy(scene_.air.tets[t].begin(), scene_.air.tets[t].end(), tet);
            const Vec3 p0 = at(P[tet[0]]);
            const Vec3 e1 = at(P[tet[1]]) - p0, e2 = at(P[tet[2]]) - p0, e3 = at(P[tet[3]]) - p0;
            g[1] = e2.cross(e3), g[2] = e3.cross(e1), g[3] = e1.cross(e2);
            g[0] = -(g[1] + g[2] + g[3]);
        } else {
            const Triangle& tri = scene_.air.triangles[t - nTets];
            std::copy(tri.begin(), tri.end(), tet);
            corners = 3;
            Real longest = 0;
            airGradients(P, tri, g, longest);
        }
        const int first = particleOwner_[tet[0]];
        Vec3 dA = Vec3::Zero(), dB = Vec3::Zero(), gA = Vec3::Zero();
        Real wA = 0, wB = 0;
        int nA = 0, nB = 0;
        for (int k = 0; k < corners; ++k) {
            const SolverParticle& q = P[tet[k]];
            const Vec3 d = at(q) - x[tet[k]];
            if (particleOwner_[tet[k]] == first) {
                dA += d, wA += q.w, gA += g[k], ++nA;
            } else {
                dB += d, wB += q.w, ++nB;
            }
        }
        wA /= nA;
        wB /= nB;
        // The normal: the direction moving the first solid's corners grows the element.
        if (!(wA + wB > 0) || !(gA.squaredNorm() > 0)) {
            continue;
        }
        const Vec3 n = gA.normalized();
        const Vec3 rel = dA / nA - dB / nB;
        const Vec3 tangential = rel - rel.dot(n) * n;
        const Real slide = tangential.norm();
        if (!(slide > 0)) {
            continue;
        }
        const Vec3 take = tangential * (std::min(slide, mu * gap) / slide);
        for (int k = 0; k < corners; ++k) {
            SolverParticle& q = P[tet[k]];
            if (!(q.w > 0)) {
                continue;
            }
            if (particleOwner_[tet[k]] == first) {
                move(q, (-wA / (wA + wB)) * take);
            } else {
                move(q, (wB / (wA + wB)) * take);
            }
        }
    }
    airContactTets_.clear();
    airStatistics_.contactPairs = airPairs_.size();
    return acted;
}

// A projected air tet whose corners belong to exactly two solids (two bodies, or a body and
// the container) is a contact between them: the normal is the direction that moving the first
// solid's corners grows the tet, and the separation the projection added along it is summed
// for friction (applyAirFriction).
void Solver::noteAirContact(std::uint32_t t, const Index* tet, const Vec3* g, int corners, Real s) {
    int owner[4];
    int first = kNoOwner, second = kNoOwner;
    for (int k = 0; k < corners; ++k) {
        owner[k] = particleOwner_[tet[k]];
        if (owner[k] == kFreeAir) {
            return; // the air's own free point: no surface on that side
        }
        if (first == kNoOwner || owner[k] == first) {
            first = owner[k];
        } else if (second == kNoOwner || owner[k] == second) {
            second = owner[k];
        } else {
            return; // three solids meet: no single contact normal
        }
    }
    if (second == kNoOwner) {
        return;
    }
    Vec3 gA = Vec3::Zero(), dA = Vec3::Zero(), dB = Vec3::Zero();
    int nA = 0, nB = 0;
    const SolverParticle* P = predicted_.data();
    for (int k = 0; k < corners; ++k) {
        const Vec3 d = (s * P[tet[k]].w) * g[k];
        if (owner[k] == first) {
            gA += g[k];
            dA += d;
            ++nA;
        } else {
            dB += d;
            ++nB;
        }
    }
    const Real length = gA.norm();
    if (!(length > 0)) {
        return;
    }
    const Vec3 n = gA / length;
    const Real gap = (dA / nA - dB / nB).dot(n);
    if (!(gap > 0)) {
        return;
    }
    if (airContactGap_.size() != scene_.air.size()) {
        airContactGap_.assign(scene_.air.size(), 0);
    }
    if (airContactGap_[t] == 0) {
        airContactTets_.push_back(t);
    }
    airContactGap_[t] += gap;
}

void Solver::projectAirPasses(Real slackFactor, bool rounds) {
    const std::vector<Tetrahedron>& tets = scene_.air.tets;
    const std::size_t nTets = tets.size();
    SolverParticle* P = predicted_.data();
    // Gauss-Seidel over the inverted tets; a projection moves corners of neighbours, so the
    // list is swept again (a few times at most) until none of them is inverted.
    const int kMaxPasses = kAirPasses;
    const bool friction = scene_.solver.airFriction > 0;
    for (int pass = 0; pass < kMaxPasses; ++pass) {
        std::size_t projected = 0;
        for (const auto& part : airInverted_) {
            for (std::uint32_t t : part) {
                // The element's corners and the gradients of its C: a tet, or (2D) a triangle.
                Index corner[4];
                Vec3 g[4];
                int n = 4;
                Real C = 0, longest = 0, gradients = 0;
                if (t < nTets) {
                    const Tetrahedron& tet = tets[t];
                    C = airDet(P, tet);
                    if (C >= 0) {
                        continue; // fine, or fixed by an earlier projection
                    }
                    std::copy(tet.begin(), tet.end(), corner);
                    airGradients(P, tet, g, longest);
                    for (int k = 0; k < 4; ++k) {
                        gradients += g[k].squaredNorm();
                    }
                    // A degenerate tet (its corners nearly on a line: every face of near-zero
                    // area) has gradients too small to say which way is out; projecting it
                    // would take an unbounded step. Its neighbours carry the constraint instead.
                    if (gradients < 1e-6 * longest * longest) {
                        continue;
                    }
                } else {
                    const Triangle& tri = scene_.air.triangles[t - nTets];
                    C = airCross(P, tri);
                    if (C >= 0) {
                        continue;
                    }
                    n = 3;
                    std::copy(tri.begin(), tri.end(), corner);
                    airGradients(P, tri, g, longest);
                    for (int k = 0; k < 3; ++k) {
                        gradients += g[k].squaredNorm();
                    }
                    if (gradients < 1e-6 * longest) { // corners (nearly) on one point
                        continue;
                    }
                }
                Real denom = 0;
                for (int k = 0; k < n; ++k) {
                    denom += P[corner[k]].w * g[k].squaredNorm();
                }
                if (!(denom > 0)) {
                    continue; // all corners immovable
                }
                // Hard: onto C = slack, a hair above flat (1e-10 of the longest edge cubed, or
                // squared in 2D; more in the rounds after the last iteration). Onto C = 0
                // exactly, rounding leaves about half the flattened tets at C = -1e-19,
                // inverted to the sign check, and the rounds after the last iteration chased
                // them until they ran out (every step of air-dancer-scale).
                const Real slack =
                    n == 4 ? slackFactor * longest * std::sqrt(longest) : slackFactor * longest;
                Real step = (slack - C) / denom;
                Real largestStep = 0;
                for (int k = 0; k < n; ++k) {
                    largestStep = std::max(largestStep, step * P[corner[k]].w * g[k].norm());
                }
                // Never further than it is long; in the rounds after the last iteration, nor
                // than eight times its longest edge at the substep's start: where they cannot
                // mend a cluster (its corners held around it), each projection stretched its
                // tets further and the next moved farther (a probe build's dancer with
                // continuous collision: a particle from 33 m to 3e7 m between two rounds of
                // the mending after the holds, and on to 1e66 m). Not in the iterations, where
                // squashed air (air-boxes-2d) grows from almost nothing.
                Real reach = longest;
                if (rounds) {
                    const std::vector<Vec3>& x0 = scene_.particles.positions;
                    Real atStart = 0;
                    for (int a = 0; a < n; ++a) {
                        for (int b = a + 1; b < n; ++b) {
                            atStart =
                                std::max(atStart, (x0[corner[a]] - x0[corner[b]]).squaredNorm());
                        }
                    }
                    reach = std::min(reach, 16 * atStart);
                }
                const Real limit = 2 * std::sqrt(reach);
                if (largestStep > limit) {
                    step *= limit / largestStep;
                }
                for (int k = 0; k < n; ++k) {
                    SolverParticle& q = P[corner[k]];
                    move(q, (step * q.w) * g[k]);
                }
                if (friction) {
                    noteAirContact(t, corner, g, n, step);
                }
                ++projected;
            }
        }
        airStatistics_.projections += projected;
        if (projected == 0) {
            break;
        }
    }
}

// The projection of the late rounds after the last iteration: the corners of an inverted air
// tet are grouped by tet body, and each body moves as one, translated along the sum of its
// corners' gradients with its whole mass (C is affine in a translation of the corners it
// moves together: exact for a face against a point). Other corners (cloth, the air's free
// points, surfaces) move alone as in projectAirPasses; the container and pinned bodies stay.
void Solver::projectAirAsSolids(Real slackFactor) {
    const std::vector<Tetrahedron>& tets = scene_.air.tets;
    const std::size_t nTets = tets.size();
    const std::vector<Real>& w = scene_.particles.inverseMasses;
    if (airSolidWeight_.size() != scene_.bodies.size()) {
        airSolidWeight_.assign(scene_.bodies.size(), 0);
        for (std::size_t b = 0; b < scene_.bodies.size(); ++b) {
            const Body& body = scene_.bodies[b];
            if (body.kind != BodyKind::TetBody) {
                continue; // a sheet or a surface bends; only a solid moves as one
            }
            Real mass = 0;
            bool pinned = false;
            for (Index p = body.firstParticle; p < body.firstParticle + body.particleCount; ++p) {
                pinned = pinned || !(w[p] > 0);
                mass += w[p] > 0 ? 1 / w[p] : 0;
            }
            airSolidWeight_[b] = pinned || !(mass > 0) ? 0 : 1 / mass;
        }
    }
    // What the rounds mend is an overlap of a hair (micrometres in air-xl): no projection moves
    // a body further than the contact distance, and a body that has moved five times that in
    // these rounds moves corner by corner again. Unbounded, the translations of 256 boxes fed
    // each other round after round and threw air-xl apart in one step (1e38 m/s at step 550).
    const Real reach =
        scene_.solver.airContactDistance > 0 ? scene_.solver.airContactDistance : Real(1e-3);
    const Real budget = 5 * reach;
    airBodySeen_.begin(scene_.bodies.size());
    SolverParticle* P = predicted_.data();
    for (int pass = 0; pass < kAirPasses; ++pass) {
        std::size_t projected = 0;
        for (const auto& part : airInverted_) {
            for (std::uint32_t t : part) {
                if (t >= nTets) {
                    continue;
                }
                const Tetrahedron& tet = tets[t];
                const Real C = airDet(P, tet);
                if (C >= 0) {
                    continue;
                }
                Vec3 g[4];
                Real longest = 0;
                airGradients(P, tet, g, longest);
                Real gradients = 0;
                for (const Vec3& gk : g) {
                    gradients += gk.squaredNorm();
                }
                if (gradients < 1e-6 * longest * longest) {
                    continue; // degenerate: as in projectAirPasses
                }
                // Groups: a tet body moving as one, or a single corner.
                struct Group {
                    int body; // the body moved whole, or -1: the corner `particle` alone
                    Index particle;
                    Real weight;
                    Vec3 gradient;
                };
                Group groups[4];
                int count = 0;
                for (int k = 0; k < 4; ++k) {
                    const int owner = particleOwner_[tet[k]];
                    const bool whole = owner >= 0 && airSolidWeight_[std::size_t(owner)] > 0 &&
                                       airBodyTravel_[std::size_t(owner)] < budget;
                    int found = -1;
                    for (int j = 0; j < count && whole; ++j) {
                        found = groups[j].body == owner ? j : found;
                    }
                    if (found >= 0) {
                        groups[found].gradient += g[k];
                    } else {
                        groups[count++] = {
                            whole ? owner : -1, tet[k],
                            whole ? airSolidWeight_[std::size_t(owner)] : P[tet[k]].w, g[k]};
                    }
                }
                Real denom = 0;
                for (int j = 0; j < count; ++j) {
                    denom += groups[j].weight * groups[j].gradient.squaredNorm();
                }
                if (!(denom > 0)) {
                    continue;
                }
                const Real slack = slackFactor * longest * std::sqrt(longest);
                Real step = (slack - C) / denom;
                Real largestStep = 0;
                for (int j = 0; j < count; ++j) {
                    largestStep =
                        std::max(largestStep, step * groups[j].weight * groups[j].gradient.norm());
                }
                const Real limit = std::min(2 * std::sqrt(longest), reach);
                if (largestStep > limit) {
                    step *= limit / largestStep;
                }
                for (int j = 0; j < count; ++j) {
                    const Group& group = groups[j];
                    const Vec3 d = (step * group.weight) * group.gradient;
                    if (group.body < 0) {
                        move(P[group.particle], d);
                        continue;
                    }
                    airBodyTravel_[std::size_t(group.body)] += d.norm();
                    const Body& body = scene_.bodies[std::size_t(group.body)];
                    for (Index p = body.firstParticle; p < body.firstParticle + body.particleCount;
                         ++p) {
                        move(P[p], d);
                    }
                    if (airBodySeen_.mark(std::size_t(group.body))) {
                        airMovedBodies_.push_back(std::uint32_t(group.body));
                    }
                }
                ++projected;
            }
        }
        airStatistics_.projections += projected;
        if (projected == 0) {
            break;
        }
    }
}

} // namespace pbd
