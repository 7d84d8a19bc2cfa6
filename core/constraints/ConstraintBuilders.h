#pragma once
// Building constraint batches from a body's topology and rest positions (the particles' current
// positions are taken as the rest state). Stiffnesses are physical moduli turned into per-element
// XPBD compliance, so results do not depend on the mesh resolution; an infinite modulus (kRigid)
// gives compliance 0 (a hard constraint) and a modulus of 0 a constraint that does nothing.
// `pbdStiffness` is the k in [0, 1] used by classic PBD.

#include "core/base/Result.h"
#include "core/constraints/Constraints.h"
#include "core/scene/Body.h"
#include "core/scene/Particles.h"

#include <limits>
#include <string>
#include <vector>

namespace pbd {

inline constexpr Real kRigid = std::numeric_limits<Real>::infinity();
// The compliance given to a modulus of 0: large enough that the constraint does nothing, finite
// so that alpha~ lambda stays a number.
inline constexpr Real kFreeCompliance = 1e30;

// The XPBD compliance of an element of size `measure` (area, volume; see each builder) for a
// modulus: 1 / (modulus * measure); 0 (hard) for an infinite modulus, kFreeCompliance for 0.
Real complianceOf(Real modulus, Real measure);

// One distance constraint per unique edge of the body's triangles (or tets when it has any).
// Compliance in m/N.
std::size_t addEdgeDistances(ConstraintSet& set, const Particles& particles, const Body& body,
                             Real compliance, Real pbdStiffness = 1);

// One bending constraint per interior edge shared by exactly two triangles, of the set's bending
// model (set.bending.model), its rest angle (or isometric weights and rest curvature) from the
// current shape. Compliance in 1/(N m): per radian squared near flat, whatever the model.
std::size_t addDihedralBending(ConstraintSet& set, const Particles& particles, const Body& body,
                               Real compliance, Real pbdStiffness = 1);

// An isometric hinge this much curved at rest or less counts as flat (|v| = 2 sin(theta / 2)).
inline constexpr Real kFlatHinge = 1e-6;

// A hinge's rest data under `model`, from its four positions in that model's particle order:
// the rest angle, or for the isometric model the rest curvature |v| and the weights.
struct HingeRest {
    Real rest = 0;
    std::array<Real, 3> weight{};
};
HingeRest hingeRest(BendingModel model, const std::array<Vec3, 4>& x);

// Gives every hinge of the set `model`: its particles in the model's order and its rest data
// from `rest` (the positions taken as the rest state, as the builder above does); compliance,
// stiffness, group, measure and colour stay, lambda restarts. Hinges added later follow it too.
void setBendingModel(ConstraintSet& set, const std::vector<Vec3>& rest, BendingModel model);

// The model `name` names (toString's names), or a message naming it and the choices.
Result<BendingModel> bendingModelNamed(std::string_view name);

struct StrainTriangleMaterial {
    Real stretchU = 1e4; // N/m along the warp (u) direction
    Real stretchV = 1e4; // N/m along the weft (v) direction
    Real shear = 1e3;    // N/m
    bool normalisedShear = true;
    std::array<Real, 3> pbdStiffness{1, 1, 1};
};

// The material frame of a triangle from its UVs (SBD §3.3, eq. 37-38): Q^-1 (column-major 2x2)
// so that F = P Q^-1 measures strain along u and v. `fromUVs` is false when the UVs were
// degenerate (or absent) and the frame follows the first edge instead.
struct TriangleMaterialFrame {
    std::array<Real, 4> qInverse{};
    Real restArea = 0;
    bool fromUVs = false;
    bool valid = false; // false for a zero-area triangle
};
TriangleMaterialFrame triangleMaterialFrame(const Vec3& x0, const Vec3& x1, const Vec3& x2,
                                            const Vec2* uv);

struct BuildReport {
    std::size_t added = 0;
    std::vector<std::string> warnings; // each names the body and the element
};

BuildReport addStrainTriangles(ConstraintSet& set, const Particles& particles, const Body& body,
                               const StrainTriangleMaterial& material);

struct StrainTetMaterial {
    std::array<Real, 3> stretch{1e5, 1e5, 1e5}; // Pa, along the material x, y, z axes
    std::array<Real, 3> shear{3e4, 3e4, 3e4};   // Pa, for xy, xz, yz
    bool normalisedShear = true;
    std::array<Real, 6> pbdStiffness{1, 1, 1, 1, 1, 1};
};
BuildReport addStrainTets(ConstraintSet& set, const Particles& particles, const Body& body,
                          const StrainTetMaterial& material);

// Volume (bulk modulus in Pa) and area (membrane modulus in N/m) preservation. `restScale` is
// the generalised rest s1 s2 s3 of SBD §3.4 (det F the constraint drives toward; 1 keeps the
// rest volume, 1.2 swells the body by 20%).
BuildReport addTetVolumes(ConstraintSet& set, const Particles& particles, const Body& body,
                          Real bulkModulus, Real pbdStiffness = 1, Real restScale = 1);
// 2D scenes: a signed area constraint per triangle of a body lying in the xy plane (wound
// counter-clockwise seen from +z), with the 2D modulus (N/m) like addTriangleAreas.
BuildReport addPlanarAreas(ConstraintSet& set, const Particles& particles, const Body& body,
                           Real modulus, Real pbdStiffness = 1);
BuildReport addTriangleAreas(ConstraintSet& set, const Particles& particles, const Body& body,
                             Real modulus, Real pbdStiffness = 1);

// Pressure on the body's triangle surface (PBD eq. 14-15), which must be closed: every edge in
// exactly two triangles, opposite ways. `pressure` is k_pressure (1 keeps the rest volume).
// Fails with a message naming the first open or non-manifold edge.
Result<std::size_t> addPressure(ConstraintSet& set, const Particles& particles, const Body& body,
                                Real pressure, Real compliance = 0, Real pbdStiffness = 1);

} // namespace pbd
