#pragma once
// Constraint groups: the unit users author constraints in. A group is the constraints of one type
// generated for one body (its stretch, its bending, its strain...), with one material: enabled,
// the XPBD compliance or modulus per component, the classic-PBD stiffness per component, and for
// strain the rest stretch s_i (SBD §3.4). Every batch element (core/constraints/Constraints.h)
// records its group and its measure, so a group's material can be changed on any state, coloured or
// not, and gives each element the same compliance the builders
// (core/constraints/ConstraintBuilders.h) would.

#include "core/base/Result.h"
#include "core/constraints/Constraints.h"

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace pbd {

struct Scene;

struct ConstraintGroup {
    std::string name;
    ConstraintType type = ConstraintType::Distance;
    int body = -1; // the body it belongs to (index into Scene::bodies), -1: none (the scene's)
    bool enabled = true; // a disabled group's constraints do nothing (compliance free, k = 0)
    // Per component (materialComponents(type)). Where materialIsModulus(type), the modulus the
    // element compliances follow (alpha = complianceOf(material, measure); infinity = hard);
    // otherwise the compliance alpha itself (distances, bending, attachments, pressure).
    std::array<Real, 6> material{};
    std::array<Real, 6> pbdStiffness{1, 1, 1, 1, 1, 1}; // k in [0, 1] per component
    // Strain groups: the rest stretch along u and v (triangles) or x, y, z (tets); 1 = rest.
    std::array<Real, 3> restStretch{1, 1, 1};
    Real pressure = 1; // pressure groups: k_pressure (1 keeps the rest volume)

    bool operator==(const ConstraintGroup&) const = default;
};

// Scalar components a group of this type has a material for (a strain tet 6, most 1).
int materialComponents(ConstraintType type);
bool materialIsModulus(ConstraintType type);
// "stretch u", "shear xy", ...; empty for one-component types.
std::string_view materialComponentName(ConstraintType type, int component);
// The unit of the material: "m/N", "N/m", "Pa", ...
std::string_view materialUnit(ConstraintType type);
// What users call the type: "stretch", "bending", "strain", "area", "volume"...
std::string_view groupTypeLabel(ConstraintType type);
// Rest stretch components of a strain group (2 for triangles, 3 for tets, else 0).
int restStretchComponents(ConstraintType type);

// Puts every constraint without a group (group -1) into one: one group per type and body
// (the body owning the element's first particle, -1 for the air's or none), split further where
// elements' materials differ. Each new group's material is its first element's, applied to all
// its elements (unless `applyToElements` is false: then the elements keep their compliances,
// for files whose measures were recomputed). Returns the number of groups added.
std::size_t ensureConstraintGroups(Scene& scene, bool applyToElements = true);

// Sets every batch element's measure from `positions` taken as its rest state, as the builders
// do (for files that did not store the measures).
void recomputeMeasures(ConstraintSet& set, const std::vector<Vec3>& positions);

// Sets the material of every element of group `index` in `set` from `group`.
void applyConstraintGroup(ConstraintSet& set, int index, const ConstraintGroup& group);

// Elements (a strain triangle counts once) of group `index`.
std::size_t constraintGroupSize(const ConstraintSet& set, int index);

// Removes group `index` and its constraints; later groups move down by one.
void removeConstraintGroup(Scene& scene, int index);

// Generates a group of `type` for body `body` from the scene's current positions (taken as the
// rest state) with the defaults below, and appends it. Fails with a message naming the body
// when it has nothing to build from (bending on a tet body, volume on a cloth, pressure on an
// open surface) or when the group exists already.
Result<int> addConstraintGroup(Scene& scene, int body, ConstraintType type);
// The enabled group of one-component `type` on `body` (-1: the scene's) whose compliance is
// `compliance`, or a new one (named "BODY attachments", or `name` when given, made unique);
// returns its index. For constraints authored one by one (attachments from a selection).
int findOrAddGroup(Scene& scene, int body, ConstraintType type, Real compliance,
                   const std::string& name = {});
// The body owning particle p, or -1.
int bodyOfParticle(const Scene& scene, Index p);

// The types a body can have groups of (by its topology), in menu order.
std::vector<ConstraintType> groupTypesFor(const Scene& scene, int body);
// The default material of a new group of `type`.
ConstraintGroup defaultConstraintGroup(ConstraintType type);

// Edits groups the way `pbdlab-cli simulate --group` does: `spec` is NAME:KEY=VALUE[,KEY=VALUE]
// with KEY one of enabled (on|off), modulus or compliance (one-component groups), a component
// ("stretch_u", "shear_xy", ...; a number >= 0, or "rigid" for moduli), pbd or pbd_COMPONENT
// (in [0, 1]), rest_u, rest_v, rest_x, rest_y, rest_z (> 0), pressure (> 0). The edited group
// is applied to the scene's constraints. Fails with a message naming what is wrong (an unknown
// group lists the groups there are).
Result<int> editConstraintGroup(Scene& scene, std::string_view spec);

// Problems with the groups: element group indices out of range, groups naming missing bodies,
// components without a usable value. Empty when consistent.
std::vector<std::string> validateConstraintGroups(const Scene& scene);

} // namespace pbd
