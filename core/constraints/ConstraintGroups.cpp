#include "core/constraints/ConstraintGroups.h"

#include "core/constraints/ConstraintBuilders.h"
#include "core/scene/Scene.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

namespace pbd {

int materialComponents(ConstraintType type) {
    switch (type) {
    case ConstraintType::StrainTriangle:
        return 3;
    case ConstraintType::StrainTet:
        return 6;
    default:
        return 1;
    }
}

bool materialIsModulus(ConstraintType type) {
    switch (type) {
    case ConstraintType::Distance:
    case ConstraintType::DihedralBending:
    case ConstraintType::Attachment:
    case ConstraintType::Pressure:
        return false;
    default:
        return true;
    }
}

std::string_view materialComponentName(ConstraintType type, int k) {
    static constexpr std::string_view kTriangle[3] = {"stretch u", "stretch v", "shear uv"};
    static constexpr std::string_view kTet[6] = {"stretch x", "stretch y", "stretch z",
                                                 "shear xy",  "shear xz",  "shear yz"};
    if (type == ConstraintType::StrainTriangle && k >= 0 && k < 3) {
        return kTriangle[k];
    }
    if (type == ConstraintType::StrainTet && k >= 0 && k < 6) {
        return kTet[k];
    }
    return {};
}

std::string_view materialUnit(ConstraintType type) {
    switch (type) {
    case ConstraintType::Distance:
    case ConstraintType::Attachment:
        return "m/N";
    case ConstraintType::DihedralBending:
        return "1/(N m)";
    case ConstraintType::StrainTriangle:
    case ConstraintType::Area:
    case ConstraintType::PlanarArea:
        return "N/m";
    case ConstraintType::StrainTet:
    case ConstraintType::Volume:
        return "Pa";
    case ConstraintType::Pressure:
        return "m^5/N";
    }
    return {};
}

std::string_view groupTypeLabel(ConstraintType type) {
    switch (type) {
    case ConstraintType::Distance:
        return "stretch";
    case ConstraintType::DihedralBending:
        return "bending";
    case ConstraintType::StrainTriangle:
        return "strain";
    case ConstraintType::StrainTet:
        return "strain (tets)";
    case ConstraintType::Area:
        return "area";
    case ConstraintType::Volume:
        return "volume";
    case ConstraintType::PlanarArea:
        return "area (2D)";
    case ConstraintType::Attachment:
        return "attachments";
    case ConstraintType::Pressure:
        return "pressure";
    }
    return {};
}

int restStretchComponents(ConstraintType type) {
    return type == ConstraintType::StrainTriangle ? 2 : type == ConstraintType::StrainTet ? 3 : 0;
}

namespace {

Real elementCompliance(const ConstraintGroup& g, int k, Real measure) {
    if (!g.enabled) {
        return kFreeCompliance;
    }
    return materialIsModulus(g.type) ? complianceOf(g.material[k], measure) : g.material[k];
}

// The body owning particle p (bodies' ranges are disjoint), or -1.
int ownerOf(const Scene& scene, Index p) {
    for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
        const Body& body = scene.bodies[b];
        if (p >= body.firstParticle && p < body.firstParticle + body.particleCount) {
            return int(b);
        }
    }
    return -1;
}

// The material an element has, as a group would hold it (the modulus back from the compliance).
Real materialOf(ConstraintType type, Real compliance, Real measure) {
    if (!materialIsModulus(type)) {
        return compliance;
    }
    if (compliance == 0) {
        return std::numeric_limits<Real>::infinity();
    }
    if (compliance >= kFreeCompliance) {
        return 0;
    }
    return 1.0 / (compliance * measure);
}

// Materials equal to 6 significant digits fall into one group (a builder's modulus comes back
// from alpha and the measure with rounding).
long long materialKey(Real v) {
    if (!std::isfinite(v) || v == 0) {
        return v == 0 ? 0 : (v > 0 ? 1LL << 62 : -(1LL << 62));
    }
    const int e = int(std::floor(std::log10(std::abs(v))));
    return (long long)(e)*10000000LL +
           (long long)std::llround(std::abs(v) / std::pow(10.0, e) * 1e5);
}

std::string groupName(const Scene& scene, int body, ConstraintType type) {
    std::string name = body >= 0 ? scene.bodies[std::size_t(body)].name : std::string("scene");
    name.append(" ").append(groupTypeLabel(type));
    return name;
}

// A name not used by another group yet.
std::string uniqueName(const std::vector<ConstraintGroup>& groups, std::string name) {
    auto used = [&](const std::string& n) {
        return std::any_of(groups.begin(), groups.end(),
                           [&](const ConstraintGroup& g) { return g.name == n; });
    };
    if (!used(name)) {
        return name;
    }
    for (int i = 2;; ++i) {
        const std::string candidate = name + " " + std::to_string(i);
        if (!used(candidate)) {
            return candidate;
        }
    }
}

// Replaces each component's modulus in `group` by a value within a few ulps (or its 12-digit
// rounding) for which complianceOf gives every element of group `index` in `b` exactly the
// compliance it has, when such a value exists.
template <class Batch> void recoverModuli(const Batch& b, int index, ConstraintGroup& group) {
    std::vector<std::size_t> elements;
    for (std::size_t e = 0; e < b.size(); ++e) {
        if (b.group[e] == index) {
            elements.push_back(e);
        }
    }
    for (int k = 0; k < Batch::kComponents; ++k) {
        const Real m0 = group.material[k];
        if (!std::isfinite(m0) || !(m0 > 0)) {
            continue; // hard or free: exact already
        }
        auto exact = [&](Real m) {
            return std::all_of(elements.begin(), elements.end(), [&](std::size_t e) {
                return complianceOf(m, b.measure[e]) == b.compliance[k][e];
            });
        };
        std::vector<Real> candidates;
        const Real scale = std::pow(10.0, std::floor(std::log10(m0)) - 11);
        candidates.push_back(std::round(m0 / scale) * scale);
        candidates.push_back(m0);
        Real up = m0, down = m0;
        for (int i = 0; i < 16; ++i) {
            up = std::nextafter(up, std::numeric_limits<Real>::infinity());
            down = std::nextafter(down, 0.0);
            candidates.push_back(up);
            candidates.push_back(down);
        }
        for (Real m : candidates) {
            if (exact(m)) {
                group.material[k] = m;
                break;
            }
        }
    }
}

using GroupKey = std::tuple<int, int, std::vector<long long>>; // body, type, material keys

} // namespace

int findOrAddGroup(Scene& scene, int body, ConstraintType type, Real compliance,
                   const std::string& name) {
    for (std::size_t g = 0; g < scene.constraintGroups.size(); ++g) {
        const ConstraintGroup& group = scene.constraintGroups[g];
        if (group.type == type && group.body == body && group.enabled &&
            group.material[0] == compliance && (name.empty() || group.name == name)) {
            return int(g);
        }
    }
    ConstraintGroup g = defaultConstraintGroup(type);
    g.type = type;
    g.body = body;
    g.material[0] = compliance;
    g.name = uniqueName(scene.constraintGroups, name.empty() ? groupName(scene, body, type) : name);
    scene.constraintGroups.push_back(std::move(g));
    return int(scene.constraintGroups.size()) - 1;
}

int bodyOfParticle(const Scene& scene, Index p) {
    return ownerOf(scene, p);
}

std::size_t ensureConstraintGroups(Scene& scene, bool applyToElements) {
    ConstraintSet& set = scene.constraints;
    const std::size_t before = scene.constraintGroups.size();
    // Two passes over the ungrouped elements: the first finds the groups they need, which are
    // then made in the order of their keys (body, type, material), so the groups do not depend
    // on the order of the elements (coloured or not); the second gives each element its group.
    std::map<GroupKey, ConstraintGroup> needed;
    std::map<GroupKey, int> index;
    bool assigning = false;
    // The group of an element of `type` whose first particle is p (-1 in the first pass).
    auto groupFor = [&](ConstraintType type, Index p, const std::vector<Real>& material,
                        const std::vector<Real>& stiffness) {
        const int body = ownerOf(scene, p);
        std::vector<long long> key;
        for (Real v : material) {
            key.push_back(materialKey(v));
        }
        for (Real v : stiffness) {
            key.push_back(materialKey(v));
        }
        GroupKey groupKey{body, int(type), std::move(key)};
        if (assigning) {
            return index.at(groupKey);
        }
        const auto [it, fresh] = needed.try_emplace(std::move(groupKey));
        if (fresh) {
            ConstraintGroup& g = it->second;
            g.type = type;
            g.body = body;
            for (std::size_t k = 0; k < material.size(); ++k) {
                g.material[k] = material[k];
                g.pbdStiffness[k] = stiffness[k];
            }
        }
        return -1;
    };
    std::vector<Real> material, stiffness;
    for (int pass = 0; pass < 2; ++pass) {
        if (pass == 1) {
            for (auto& [key, g] : needed) {
                g.name = uniqueName(scene.constraintGroups, groupName(scene, g.body, g.type));
                index.emplace(key, int(scene.constraintGroups.size()));
                scene.constraintGroups.push_back(std::move(g));
            }
            assigning = true;
        }
        forEachTypedBatch(set, [&](auto& b, ConstraintType type) {
            const int K = std::decay_t<decltype(b)>::kComponents;
            for (std::size_t e = 0; e < b.size(); ++e) {
                if (b.group[e] >= 0) {
                    continue;
                }
                material.assign(K, 0);
                stiffness.assign(K, 0);
                for (int k = 0; k < K; ++k) {
                    material[k] = materialOf(type, b.compliance[k][e], b.measure[e]);
                    stiffness[k] = b.stiffness[k][e];
                }
                const int g = groupFor(type, b.particles[e][0], material, stiffness);
                if (assigning) {
                    b.group[e] = g;
                }
            }
        });
        Attachments& a = set.attachments;
        for (std::size_t i = 0; i < a.size(); ++i) {
            if (a.group[i] < 0) {
                const int g =
                    groupFor(ConstraintType::Attachment, a.particle[i], {a.compliance[i]}, {1});
                if (assigning) {
                    a.group[i] = g;
                }
            }
        }
    }
    for (PressureConstraint& p : set.pressure) {
        if (p.group < 0) {
            ConstraintGroup g;
            g.type = ConstraintType::Pressure;
            g.body = p.particles.empty() ? -1 : ownerOf(scene, p.particles.front());
            g.name = uniqueName(scene.constraintGroups,
                                groupName(scene, g.body, ConstraintType::Pressure));
            g.material[0] = p.compliance;
            g.pbdStiffness[0] = p.stiffness;
            g.pressure = p.pressure;
            p.group = int(scene.constraintGroups.size());
            scene.constraintGroups.push_back(g);
        }
    }
    // Strain groups take the rest stretch of their first element; each modulus is the one that
    // gives every element its compliance back bit for bit, where there is one (the builders'
    // modulus, found near the first element's), so grouping a scene does not change it.
    for (std::size_t g = before; g < scene.constraintGroups.size(); ++g) {
        ConstraintGroup& group = scene.constraintGroups[g];
        if (materialIsModulus(group.type)) {
            forEachTypedBatch(set, [&](const auto& b, ConstraintType type) {
                if (type == group.type) {
                    recoverModuli(b, int(g), group);
                }
            });
        }
        auto restOf = [&](const auto& b) {
            for (std::size_t e = 0; e < b.size(); ++e) {
                if (b.group[e] == int(g)) {
                    for (int k = 0; k < restStretchComponents(group.type); ++k) {
                        group.restStretch[k] = b.rest[k][e];
                    }
                    return;
                }
            }
        };
        if (group.type == ConstraintType::StrainTriangle) {
            restOf(set.strainTriangles);
        } else if (group.type == ConstraintType::StrainTet) {
            restOf(set.strainTets);
        }
        if (applyToElements) {
            applyConstraintGroup(set, int(g), group);
        }
    }
    return scene.constraintGroups.size() - before;
}

void recomputeMeasures(ConstraintSet& set, const std::vector<Vec3>& x) {
    auto edges = [&](const Tetrahedron& t) {
        Mat3 Q;
        Q << x[t[1]] - x[t[0]], x[t[2]] - x[t[0]], x[t[3]] - x[t[0]];
        return std::abs(Q.determinant());
    };
    auto area = [&](const std::array<Index, 3>& t) {
        return 0.5 * (x[t[1]] - x[t[0]]).cross(x[t[2]] - x[t[0]]).norm();
    };
    std::fill(set.distance.measure.begin(), set.distance.measure.end(), 1.0);
    std::fill(set.bending.measure.begin(), set.bending.measure.end(), 1.0);
    for (std::size_t e = 0; e < set.strainTriangles.size(); ++e) {
        set.strainTriangles.measure[e] = area(set.strainTriangles.particles[e]);
    }
    for (std::size_t e = 0; e < set.strainTets.size(); ++e) {
        set.strainTets.measure[e] = edges(set.strainTets.particles[e]) / 6.0;
    }
    for (std::size_t e = 0; e < set.volume.size(); ++e) {
        set.volume.measure[e] = 6.0 / (36.0 * edges(set.volume.particles[e]));
    }
    for (std::size_t e = 0; e < set.area.size(); ++e) {
        const Real a = area(set.area.particles[e]);
        set.area.measure[e] = 1.0 / (64.0 * a * a * a);
    }
    for (std::size_t e = 0; e < set.planarArea.size(); ++e) {
        set.planarArea.measure[e] = 1.0 / (4.0 * area(set.planarArea.particles[e]));
    }
}

void applyConstraintGroup(ConstraintSet& set, int index, const ConstraintGroup& g) {
    if (g.type == ConstraintType::Attachment) {
        Attachments& a = set.attachments;
        for (std::size_t i = 0; i < a.size(); ++i) {
            if (a.group[i] == index) {
                a.compliance[i] = elementCompliance(g, 0, 1);
            }
        }
        return;
    }
    if (g.type == ConstraintType::Pressure) {
        for (PressureConstraint& p : set.pressure) {
            if (p.group == index) {
                p.compliance = elementCompliance(g, 0, 1);
                p.stiffness = g.enabled ? g.pbdStiffness[0] : 0;
                p.pressure = g.pressure;
            }
        }
        return;
    }
    forEachTypedBatch(set, [&](auto& b, ConstraintType type) {
        if (type != g.type) {
            return;
        }
        const int K = std::decay_t<decltype(b)>::kComponents;
        for (std::size_t e = 0; e < b.size(); ++e) {
            if (b.group[e] != index) {
                continue;
            }
            for (int k = 0; k < K; ++k) {
                b.compliance[k][e] = elementCompliance(g, k, b.measure[e]);
                b.stiffness[k][e] = g.enabled ? g.pbdStiffness[k] : 0;
            }
            if constexpr (std::is_same_v<std::decay_t<decltype(b)>, StrainTriangleConstraints> ||
                          std::is_same_v<std::decay_t<decltype(b)>, StrainTetConstraints>) {
                for (int k = 0; k < restStretchComponents(type); ++k) {
                    b.rest[k][e] = g.restStretch[k];
                }
            }
        }
    });
}

std::size_t constraintGroupSize(const ConstraintSet& set, int index) {
    std::size_t n = 0;
    forEachBatch(set, [&](const auto& b) {
        n += std::size_t(std::count(b.group.begin(), b.group.end(), index));
    });
    n += std::size_t(std::count(set.attachments.group.begin(), set.attachments.group.end(), index));
    for (const PressureConstraint& p : set.pressure) {
        n += p.group == index;
    }
    return n;
}

void removeConstraintGroup(Scene& scene, int index) {
    if (index < 0 || std::size_t(index) >= scene.constraintGroups.size()) {
        return;
    }
    ConstraintSet& set = scene.constraints;
    auto renumber = [&](int& g) { g -= g > index; };
    forEachBatch(set, [&](auto& b) {
        std::vector<Index> keep;
        keep.reserve(b.size());
        for (std::size_t e = 0; e < b.size(); ++e) {
            if (b.group[e] != index) {
                keep.push_back(Index(e));
            }
        }
        if (keep.size() != b.size()) {
            reorderElements(b, keep);
            b.colourOffsets.clear();
        }
        std::for_each(b.group.begin(), b.group.end(), renumber);
    });
    Attachments& a = set.attachments;
    Attachments kept;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a.group[i] != index) {
            kept.add(a.particle[i], a.target[i], a.compliance[i], a.targetVelocity[i]);
            kept.group.back() = a.group[i] - (a.group[i] > index);
        }
    }
    a = std::move(kept);
    std::erase_if(set.pressure, [&](const PressureConstraint& p) { return p.group == index; });
    for (PressureConstraint& p : set.pressure) {
        renumber(p.group);
    }
    set.colourCount = 0; // colour again
    scene.constraintGroups.erase(scene.constraintGroups.begin() + index);
}

ConstraintGroup defaultConstraintGroup(ConstraintType type) {
    ConstraintGroup g;
    g.type = type;
    switch (type) {
    case ConstraintType::Distance:
        g.material[0] = 0; // inextensible
        break;
    case ConstraintType::DihedralBending:
        g.material[0] = 1.0;
        g.pbdStiffness[0] = 0.1;
        break;
    case ConstraintType::StrainTriangle: {
        const StrainTriangleMaterial m;
        g.material = {m.stretchU, m.stretchV, m.shear, 0, 0, 0};
        break;
    }
    case ConstraintType::StrainTet: {
        const StrainTetMaterial m;
        g.material = {m.stretch[0], m.stretch[1], m.stretch[2], m.shear[0], m.shear[1], m.shear[2]};
        break;
    }
    case ConstraintType::Area:
        g.material[0] = 1e4;
        break;
    case ConstraintType::Volume:
        g.material[0] = 1e6;
        break;
    case ConstraintType::PlanarArea:
        g.material[0] = 1e5;
        break;
    case ConstraintType::Attachment:
    case ConstraintType::Pressure:
        g.material[0] = 0;
        break;
    }
    return g;
}

std::vector<ConstraintType> groupTypesFor(const Scene& scene, int body) {
    std::vector<ConstraintType> types;
    if (body < 0 || std::size_t(body) >= scene.bodies.size()) {
        return types;
    }
    const Body& b = scene.bodies[std::size_t(body)];
    if (b.kind == BodyKind::Collider) {
        return types;
    }
    if (!b.triangles.empty() || !b.tets.empty()) {
        types.push_back(ConstraintType::Distance);
    }
    if (b.tets.empty() && !b.triangles.empty()) {
        types.push_back(ConstraintType::DihedralBending);
        types.push_back(ConstraintType::StrainTriangle);
        types.push_back(ConstraintType::Area);
        types.push_back(ConstraintType::Pressure);
    }
    if (!b.tets.empty()) {
        types.push_back(ConstraintType::StrainTet);
        types.push_back(ConstraintType::Volume);
    }
    return types;
}

Result<int> addConstraintGroup(Scene& scene, int body, ConstraintType type) {
    if (body < 0 || std::size_t(body) >= scene.bodies.size()) {
        return Error{"there is no body " + std::to_string(body) + " to add constraints to"};
    }
    const Body& b = scene.bodies[std::size_t(body)];
    const std::vector<ConstraintType> types = groupTypesFor(scene, body);
    if (std::find(types.begin(), types.end(), type) == types.end()) {
        return Error{"body '" + b.name + "' (" + std::string(toString(b.kind)) + ") cannot have " +
                     std::string(groupTypeLabel(type)) + " constraints"};
    }
    for (const ConstraintGroup& g : scene.constraintGroups) {
        if (g.body == body && g.type == type) {
            return Error{"body '" + b.name + "' has " + std::string(groupTypeLabel(type)) +
                         " constraints already (group '" + g.name + "')"};
        }
    }
    ConstraintGroup g = defaultConstraintGroup(type);
    g.body = body;
    g.name = uniqueName(scene.constraintGroups, groupName(scene, body, type));
    ConstraintSet& set = scene.constraints;
    const int index = int(scene.constraintGroups.size());
    // Everything the builder appends gets the new group.
    std::array<std::size_t, 7> sizes{};
    int batch = 0;
    forEachBatch(set, [&](const auto& bt) { sizes[std::size_t(batch++)] = bt.size(); });
    const std::size_t pressures = set.pressure.size();
    std::size_t added = 0;
    switch (type) {
    case ConstraintType::Distance:
        added = addEdgeDistances(set, scene.particles, b, g.material[0], g.pbdStiffness[0]);
        break;
    case ConstraintType::DihedralBending:
        added = addDihedralBending(set, scene.particles, b, g.material[0], g.pbdStiffness[0]);
        break;
    case ConstraintType::StrainTriangle: {
        StrainTriangleMaterial m;
        m.stretchU = g.material[0];
        m.stretchV = g.material[1];
        m.shear = g.material[2];
        added = addStrainTriangles(set, scene.particles, b, m).added;
        break;
    }
    case ConstraintType::StrainTet: {
        StrainTetMaterial m;
        m.stretch = {g.material[0], g.material[1], g.material[2]};
        m.shear = {g.material[3], g.material[4], g.material[5]};
        added = addStrainTets(set, scene.particles, b, m).added;
        break;
    }
    case ConstraintType::Area:
        added = addTriangleAreas(set, scene.particles, b, g.material[0], g.pbdStiffness[0]).added;
        break;
    case ConstraintType::Volume:
        added = addTetVolumes(set, scene.particles, b, g.material[0], g.pbdStiffness[0]).added;
        break;
    case ConstraintType::Pressure: {
        const Result<std::size_t> r =
            addPressure(set, scene.particles, b, g.pressure, g.material[0], g.pbdStiffness[0]);
        if (!r) {
            return Error{r.error()};
        }
        added = 1;
        break;
    }
    default:
        break;
    }
    if (added == 0) {
        return Error{"body '" + b.name + "' gave no " + std::string(groupTypeLabel(type)) +
                     " constraints (no usable elements)"};
    }
    batch = 0;
    forEachBatch(set, [&](auto& bt) {
        for (std::size_t e = sizes[std::size_t(batch)]; e < bt.size(); ++e) {
            bt.group[e] = index;
        }
        ++batch;
    });
    for (std::size_t i = pressures; i < set.pressure.size(); ++i) {
        set.pressure[i].group = index;
    }
    set.colourCount = 0;
    scene.constraintGroups.push_back(g);
    return index;
}

namespace {

std::optional<Real> parseReal(std::string_view text) {
    const std::string s(text);
    char* end = nullptr;
    const Real v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v)) {
        return std::nullopt;
    }
    return v;
}

std::string underscored(std::string_view name) {
    std::string s(name);
    std::replace(s.begin(), s.end(), ' ', '_');
    return s;
}

// One KEY=VALUE of editConstraintGroup on `g`; an error message or "".
std::string setField(ConstraintGroup& g, std::string_view key, std::string_view value) {
    const int K = materialComponents(g.type);
    const bool modulus = materialIsModulus(g.type);
    const std::string k(key), v(value);
    auto number = [&](Real lo, bool open, Real hi, Real& target, const char* what) {
        const auto x = parseReal(value);
        if (!x || (open ? !(*x > lo) : !(*x >= lo)) || !(*x <= hi)) {
            return "'" + v + "' is not " + what;
        }
        target = *x;
        return std::string();
    };
    auto material = [&](Real& target) {
        if (modulus && (v == "rigid" || v == "inf" || v == "infinity")) {
            target = std::numeric_limits<Real>::infinity();
            return std::string();
        }
        return number(0, false, std::numeric_limits<Real>::max(), target,
                      modulus ? "a modulus (a number >= 0 or 'rigid')"
                              : "a compliance (a number >= 0; 0 = hard)");
    };
    if (k == "enabled") {
        if (v != "on" && v != "off") {
            return "enabled is on or off, not '" + v + "'";
        }
        g.enabled = v == "on";
        return "";
    }
    if (K == 1 && k == (modulus ? "modulus" : "compliance")) {
        return material(g.material[0]);
    }
    if (k == "pbd") {
        Real x = 0;
        const std::string e = number(0, false, 1, x, "a PBD stiffness in [0, 1]");
        std::fill_n(g.pbdStiffness.begin(), K, x);
        return e;
    }
    for (int c = 0; c < K && K > 1; ++c) {
        const std::string name = underscored(materialComponentName(g.type, c));
        if (k == name) {
            return material(g.material[c]);
        }
        if (k == "pbd_" + name) {
            return number(0, false, 1, g.pbdStiffness[c], "a PBD stiffness in [0, 1]");
        }
    }
    const char* axes = g.type == ConstraintType::StrainTriangle ? "uv" : "xyz";
    for (int c = 0; c < restStretchComponents(g.type); ++c) {
        if (k == std::string("rest_") + axes[c]) {
            return number(0, true, std::numeric_limits<Real>::max(), g.restStretch[c],
                          "a rest stretch (> 0)");
        }
    }
    if (k == "pressure" && g.type == ConstraintType::Pressure) {
        return number(0, true, std::numeric_limits<Real>::max(), g.pressure, "a pressure (> 0)");
    }
    std::string keys = "enabled, pbd";
    if (K == 1) {
        keys += modulus ? ", modulus" : ", compliance";
    }
    for (int c = 0; c < K && K > 1; ++c) {
        keys += ", " + underscored(materialComponentName(g.type, c));
    }
    for (int c = 0; c < restStretchComponents(g.type); ++c) {
        keys += std::string(", rest_") + axes[c];
    }
    if (g.type == ConstraintType::Pressure) {
        keys += ", pressure";
    }
    return "group '" + g.name + "' has no '" + k + "' (it has " + keys + ")";
}

} // namespace

Result<int> editConstraintGroup(Scene& scene, std::string_view spec) {
    const std::size_t colon = spec.rfind(':');
    if (colon == std::string_view::npos) {
        return Error{std::string("'").append(spec).append("' is not NAME:KEY=VALUE")};
    }
    const std::string name(spec.substr(0, colon));
    int index = -1;
    for (std::size_t g = 0; g < scene.constraintGroups.size(); ++g) {
        if (scene.constraintGroups[g].name == name) {
            index = int(g);
        }
    }
    if (index < 0) {
        std::string names;
        for (const ConstraintGroup& g : scene.constraintGroups) {
            names += (names.empty() ? "'" : ", '") + g.name + "'";
        }
        return Error{"there is no constraint group '" + name + "' (the scene has " +
                     (names.empty() ? std::string("none") : names) + ")"};
    }
    ConstraintGroup g = scene.constraintGroups[std::size_t(index)];
    std::string_view rest = spec.substr(colon + 1);
    while (!rest.empty()) {
        const std::size_t comma = rest.find(',');
        const std::string_view item = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        const std::size_t eq = item.find('=');
        if (eq == std::string_view::npos) {
            return Error{std::string("'").append(item).append("' is not KEY=VALUE")};
        }
        if (const std::string e = setField(g, item.substr(0, eq), item.substr(eq + 1));
            !e.empty()) {
            return Error{e};
        }
    }
    scene.constraintGroups[std::size_t(index)] = g;
    applyConstraintGroup(scene.constraints, index, g);
    return index;
}

std::vector<std::string> validateConstraintGroups(const Scene& scene) {
    std::vector<std::string> problems;
    const int n = int(scene.constraintGroups.size());
    auto check = [&](int g, std::string_view what, std::size_t e) {
        if (g < -1 || g >= n) {
            problems.push_back(std::string(what) + " " + std::to_string(e) + " is in group " +
                               std::to_string(g) + ", but there are " + std::to_string(n) +
                               " groups");
        }
    };
    forEachTypedBatch(scene.constraints, [&](const auto& b, ConstraintType type) {
        if (b.group.size() != b.size() || b.measure.size() != b.size()) {
            problems.push_back(std::string(toString(type)) + " constraints: group or measure " +
                               "arrays do not match the elements");
            return;
        }
        for (std::size_t e = 0; e < b.size(); ++e) {
            check(b.group[e], toString(type), e);
            if (b.group[e] >= 0 && b.group[e] < n &&
                scene.constraintGroups[std::size_t(b.group[e])].type != type) {
                problems.push_back(std::string(toString(type)) + " constraint " +
                                   std::to_string(e) + " is in group '" +
                                   scene.constraintGroups[std::size_t(b.group[e])].name +
                                   "' of another type");
            }
        }
    });
    for (std::size_t i = 0; i < scene.constraints.attachments.group.size(); ++i) {
        check(scene.constraints.attachments.group[i], "attachment", i);
    }
    for (std::size_t i = 0; i < scene.constraints.pressure.size(); ++i) {
        check(scene.constraints.pressure[i].group, "pressure constraint", i);
    }
    for (const ConstraintGroup& g : scene.constraintGroups) {
        if (g.body >= int(scene.bodies.size()) || g.body < -1) {
            problems.push_back("constraint group '" + g.name + "' names body " +
                               std::to_string(g.body) + ", which does not exist");
        }
        for (int k = 0; k < materialComponents(g.type); ++k) {
            if (std::isnan(g.material[k]) || g.material[k] < 0 ||
                !(g.pbdStiffness[k] >= 0 && g.pbdStiffness[k] <= 1)) {
                problems.push_back("constraint group '" + g.name + "': component " +
                                   std::to_string(k) + " needs a material >= 0 and a PBD " +
                                   "stiffness in [0, 1]");
            }
        }
    }
    return problems;
}

} // namespace pbd
