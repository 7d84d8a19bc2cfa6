#pragma once
// Constraint batches: one structure-of-arrays per constraint type, so the solver runs a type's
// kernel over contiguous data (no virtual call per constraint). Every element stores its
// particles (global indices), its rest data, its compliance alpha (XPBD; units follow C),
// its stiffness k in [0, 1] (classic PBD) and the lambda accumulated in the current substep,
// which divided by h^2 estimates the constraint force (XPBD §3).
//
// `colourConstraints` gives every element a colour (constraints of one colour, across all
// batches, share no particle), sorts each batch by colour and sets `colourOffsets[c]` to where
// colour c starts. `partitionColours` then reorders the batches by thread region (see there),
// after which the colour ranges are in ColourRegions and colourOffsets is empty.

#include "core/base/LinearAlgebra.h"

#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pbd {

enum class ConstraintType {
    Distance,
    DihedralBending, // Bridson derivatives (SBD §3.8), PBD appendix form or isometric
    StrainTriangle,  // 3 constraints per triangle: stretch u, stretch v, shear uv
    StrainTet,       // 6 constraints per tet: stretch x3, shear x3
    Area,
    Volume,
    PlanarArea, // signed area of a triangle in the xy plane (2D scenes)
    Attachment, // soft attachment to a (moving) target point
    Pressure,   // the enclosed volume of a closed surface
};
inline constexpr int kConstraintTypeCount = 9;
std::string_view toString(ConstraintType type);

// Fields shared by all batches of N particles and K scalar constraints per element.
template <int N, int K> struct ConstraintBatch {
    static constexpr int kParticles = N;
    static constexpr int kComponents = K;
    std::vector<std::array<Index, N>> particles;
    std::array<std::vector<Real>, K> compliance; // alpha, per component
    std::array<std::vector<Real>, K> stiffness;  // k in [0, 1], per component (PBD)
    std::array<std::vector<Real>, K> lambda;     // accumulated per substep
    std::array<std::vector<Real>, K> pbdScale;   // solver cache: k' = 1 - (1 - k)^(1/n)
    std::vector<int> colour;                     // per element, once coloured
    std::vector<Index> colourOffsets;            // size colours + 1 while sorted by colour
    // Per element: the scene's constraint group (core/constraints/ConstraintGroups.h; -1 = none),
    // and the size its group's moduli are scaled by, alpha = 1 / (modulus * measure) (1 where the
    // group gives the compliance itself: distances, bending). Not read by the solver.
    std::vector<int> group;
    std::vector<Real> measure;

    std::size_t size() const { return particles.size(); }
    std::size_t componentCount() const { return particles.size() * K; }

    // Appends an element on `p` with compliance 0 (hard), stiffness 1 and lambda 0 in every
    // component, uncoloured; the caller appends its rest data. Returns its index.
    std::size_t addElement(const std::array<Index, N>& p) {
        particles.push_back(p);
        colour.push_back(0);
        group.push_back(-1);
        measure.push_back(1);
        for (int k = 0; k < K; ++k) {
            compliance[k].push_back(0);
            stiffness[k].push_back(1);
            lambda[k].push_back(0);
        }
        colourOffsets.clear();
        return particles.size() - 1;
    }
    // Sets component k's compliance and PBD stiffness of element e.
    void setMaterial(std::size_t e, int k, Real alpha, Real pbdStiffness) {
        compliance[k][e] = alpha;
        stiffness[k][e] = pbdStiffness;
    }
};

struct DistanceConstraints : ConstraintBatch<2, 1> {
    std::vector<Real> restLength; // m; C in m, alpha in m/N
    void add(Index a, Index b, Real rest, Real compliance, Real stiffness = 1);
};

// Bridson's signed dihedral angle (SBD §3.8), the PBD appendix's unsigned one, or the isometric
// (quadratic) model of Bergou et al. (ConstraintMath.h: no angle, square root or division, so
// two thirds of the cost; for cloth that stretches little).
enum class BendingModel { Bridson, PbdAppendix, Isometric };
std::string_view toString(BendingModel model);
// "bridson", "pbd-appendix", "isometric" (toString's names); nullopt for anything else.
std::optional<BendingModel> bendingModelFromString(std::string_view name);

struct BendingConstraints : ConstraintBatch<4, 1> {
    // Particles: wing tip 0, wing tip 1, edge start, edge end (see ConstraintMath.h); the
    // appendix's model has edge start, edge end, then the wing tips.
    BendingModel model = BendingModel::Bridson;
    // Dihedral models: the rest angle (rad; alpha in 1/(N m)). Isometric: |v| at rest, 0 where
    // the hinge is flat (2 sin(theta0 / 2)).
    std::vector<Real> restAngle;
    // Isometric only (empty for the others): the weights K_0, K_1, K_2 of particles 0..2 (1/m;
    // K_3 = -(K_0 + K_1 + K_2)), and the y and z of the hinge's lambda (lambda[0] is its x).
    std::array<std::vector<Real>, 3> weight;
    std::array<std::vector<Real>, 2> lambdaYZ;
    void add(const std::array<Index, 4>& p, Real restAngle, Real compliance, Real stiffness = 1);
    void addIsometric(const std::array<Index, 4>& p, const std::array<Real, 3>& weights, Real rest,
                      Real compliance, Real stiffness = 1);
    // lambda's size along the hinge's curvature (|lambda| for the isometric model).
    Real lambdaSize(std::size_t e) const {
        if (model != BendingModel::Isometric) {
            return lambda[0][e];
        }
        return std::sqrt(lambda[0][e] * lambda[0][e] + lambdaYZ[0][e] * lambdaYZ[0][e] +
                         lambdaYZ[1][e] * lambdaYZ[1][e]);
    }
};

// Strain-based triangles (SBD §3.3): particles (p0, p1, p2); Q^-1 from the material frame.
struct StrainTriangleConstraints : ConstraintBatch<3, 3> {
    std::array<std::vector<Real>, 4> qInverse; // column-major 2x2: c0 = (q[0], q[1]), c1 = ...
    std::array<std::vector<Real>, 3> rest;     // s_u, s_v, rest shear
    bool normalisedShear = true;
};

// Strain-based tetrahedra (SBD §3.1): particles (p0..p3); 3 stretch then shear 01, 02, 12.
struct StrainTetConstraints : ConstraintBatch<4, 6> {
    std::array<std::vector<Real>, 9> qInverse; // column-major 3x3
    std::array<std::vector<Real>, 6> rest;     // s_1, s_2, s_3, then rest shears
    bool normalisedShear = true;
};

struct AreaConstraints : ConstraintBatch<3, 1> {
    std::vector<Real> restValue; // |q1 x q2|^2
};

// 2D scenes (Air Meshes' proof of concept): C = ((p1 - p0) x (p2 - p0)).z - 2 A0, signed, so a
// triangle squashed flat (or inverted) is pushed back to its rest area, counter-clockwise.
struct PlanarAreaConstraints : ConstraintBatch<3, 1> {
    std::vector<Real> restValue; // 2 A0, the rest area doubled
};

struct VolumeConstraints : ConstraintBatch<4, 1> {
    std::vector<Real> restValue; // det(Q) = 6 V0 (times s1 s2 s3 for a generalised rest)
};

// A particle held at a target that moves with constant velocity: hard (compliance 0, the
// particle is moved onto the target and gets w = 0 for the step, PBD §3.1 "attachment") or soft
// (a zero-length XPBD spring to the target).
struct Attachments {
    std::vector<Index> particle;
    std::vector<Vec3> target;         // at time 0, m
    std::vector<Vec3> targetVelocity; // m/s
    std::vector<Real> compliance;     // m/N; 0 = hard pin
    std::vector<Real> lambda;
    std::vector<int> group; // the scene's constraint group, -1 = none
    void add(Index p, const Vec3& target, Real compliance = 0, const Vec3& velocity = Vec3::Zero());
    std::size_t size() const { return particle.size(); }
    Vec3 targetAt(std::size_t i, Real time) const { return target[i] + time * targetVelocity[i]; }
};

// Balloon pressure on a closed surface (PBD eq. 14-15): C = sum_t (p_t1 x p_t2)·p_t3 - k V6,
// where the sum is six times the enclosed volume and V6 its rest value; k > 1 inflates. One
// constraint over all the surface's particles, so it is solved serially.
struct PressureConstraint {
    std::string body;                     // the surface it acts on, for messages
    std::vector<Index> particles;         // unique, global indices
    std::vector<Triangle> localTriangles; // indices into `particles`, outward winding
    Real restVolume6 = 0;                 // 6 V0
    Real pressure = 1;                    // k_pressure
    Real compliance = 0;                  // 1/(N m^2)... XPBD alpha for C in m^3
    Real stiffness = 1;                   // PBD k
    Real lambda = 0;
    int group = -1; // the scene's constraint group, -1 = none
};

// C of a pressure constraint and grad C per particle of c.particles (the sum over each particle's
// triangles of the cross product of the other two corners, in winding order), at the positions
// `position(global index)` gives.
template <class Position>
Real evaluatePressure(const PressureConstraint& c, Position&& position, std::vector<Vec3>& grad) {
    grad.assign(c.particles.size(), Vec3::Zero());
    Real sum = 0;
    for (const Triangle& t : c.localTriangles) {
        const Vec3 a = position(c.particles[t[0]]);
        const Vec3 b = position(c.particles[t[1]]);
        const Vec3 d = position(c.particles[t[2]]);
        sum += a.cross(b).dot(d);
        grad[t[0]] += b.cross(d);
        grad[t[1]] += d.cross(a);
        grad[t[2]] += a.cross(b);
    }
    return sum - c.pressure * c.restVolume6;
}

struct ConstraintSet {
    DistanceConstraints distance;
    BendingConstraints bending;
    StrainTriangleConstraints strainTriangles;
    StrainTetConstraints strainTets;
    AreaConstraints area;
    VolumeConstraints volume;
    PlanarAreaConstraints planarArea;
    Attachments attachments;
    std::vector<PressureConstraint> pressure;
    int colourCount = 0;              // 0 until coloured
    std::size_t colouredElements = 0; // batch elements when last coloured

    // False when elements were added since the last colouring.
    bool isColoured() const;

    std::size_t elementCount() const;
    // Elements of the coloured batches (all but attachments and pressure).
    std::size_t batchElementCount() const;
    // Number of scalar constraints (a strain tet counts 6).
    std::size_t componentCount() const;
};

// Calls f(batch) for each coloured batch (const or not, as the set is), in the fixed order the
// solver, the colouring and ColourRegions use: distance, bending, strain triangles, strain tets,
// area, volume, planar area.
template <class Set, class F> void forEachBatch(Set& set, F&& f) {
    f(set.distance);
    f(set.bending);
    f(set.strainTriangles);
    f(set.strainTets);
    f(set.area);
    f(set.volume);
    f(set.planarArea);
}

// The same, as f(batch, its ConstraintType).
template <class Set, class F> void forEachTypedBatch(Set& set, F&& f) {
    f(set.distance, ConstraintType::Distance);
    f(set.bending, ConstraintType::DihedralBending);
    f(set.strainTriangles, ConstraintType::StrainTriangle);
    f(set.strainTets, ConstraintType::StrainTet);
    f(set.area, ConstraintType::Area);
    f(set.volume, ConstraintType::Volume);
    f(set.planarArea, ConstraintType::PlanarArea);
}

// Reorders a batch's elements: element i becomes the old element order[i]. A subset removes the
// others. Colour ranges are not updated: colour again afterwards.
void reorderElements(DistanceConstraints& b, const std::vector<Index>& order);
void reorderElements(BendingConstraints& b, const std::vector<Index>& order);
void reorderElements(StrainTriangleConstraints& b, const std::vector<Index>& order);
void reorderElements(StrainTetConstraints& b, const std::vector<Index>& order);
void reorderElements(AreaConstraints& b, const std::vector<Index>& order);
void reorderElements(VolumeConstraints& b, const std::vector<Index>& order);
void reorderElements(PlanarAreaConstraints& b, const std::vector<Index>& order);

// Greedy colouring of all batches together (one colour may hold several types), then every
// batch is sorted by colour, stably, so the order within a colour is the authoring order.
void colourConstraints(ConstraintSet& set, std::size_t particleCount);

// Sorts a coloured set's batches by their elements' colours again (stably), with the colour
// ranges in colourOffsets; undoes partitionColours. No-op when the set is not coloured.
void sortByColour(ConstraintSet& set);

// Domain decomposition for the parallel solve: particles are split into `regions` ranges of
// consecutive indices, and every element belongs to the region owning all its particles, or
// to the boundary (class `regions`) when they lie in more than one. Each batch is reordered by
// class, then colour, so a class's colours are contiguous and classes do not share cache lines.
// Regions share no particle, so a thread sweeps all colours of its region without waiting for
// the others; the boundary runs afterwards. With one region this is the plain colour order,
// which the solver uses, sharing each colour out among its threads (Solver::runSubstepPhases):
// the sweep order, and so the result, is then the same on any number of threads.
struct ColourRegions {
    int regions = 0; // 0 until partitioned
    int colours = 0;
    // Per batch (distance, bending, strain triangles, strain tets, area, volume, planar area):
    // the start of (class k, colour c) at k * colours + c, then the end of the batch.
    std::array<std::vector<Index>, 7> offsets;
    Index begin(int batch, int k, int colour) const {
        return offsets[batch][static_cast<std::size_t>(k) * colours + colour];
    }
    Index end(int batch, int k, int colour) const { return begin(batch, k, colour + 1); }
};
ColourRegions partitionColours(ConstraintSet& set, std::size_t particleCount, int regions);

// The particles of region k of R: the indices i with i R / n == k (see partitionColours).
inline std::pair<std::size_t, std::size_t> particleRange(int k, int R, std::size_t n) {
    const auto R_ = static_cast<std::size_t>(R);
    const auto k_ = static_cast<std::size_t>(k);
    return {(k_ * n + R_ - 1) / R_, ((k_ + 1) * n + R_ - 1) / R_};
}

// True when no two elements of one colour share a particle (used by tests and debug checks).
bool coloursAreIndependent(const ConstraintSet& set, std::size_t particleCount);

} // namespace pbd
