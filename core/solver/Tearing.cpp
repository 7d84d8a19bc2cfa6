#include "core/solver/Tearing.h"

#include "core/constraints/ConstraintMath.h"

#include <algorithm>
#include <optional>
#include <set>

namespace pbd {

namespace {

std::array<Index, 3> sorted(const Triangle& t) {
    std::array<Index, 3> s = t;
    std::sort(s.begin(), s.end());
    return s;
}

bool contains(const Triangle& t, Index v) {
    return t[0] == v || t[1] == v || t[2] == v;
}

} // namespace

Index insertParticle(Scene& scene, std::size_t bodyIndex, const Vec3& position,
                     const Vec3& velocity, Real inverseMass) {
    Body& owner = scene.bodies[bodyIndex];
    const Index at = owner.firstParticle + owner.particleCount;
    auto shift = [at](Index& i) {
        if (i >= at) {
            ++i;
        }
    };
    for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
        Body& body = scene.bodies[b];
        if (b != bodyIndex && body.firstParticle >= at) {
            ++body.firstParticle;
        }
        for (Triangle& t : body.triangles) {
            std::for_each(t.begin(), t.end(), shift);
        }
        for (Tetrahedron& t : body.tets) {
            std::for_each(t.begin(), t.end(), shift);
        }
    }
    ConstraintSet& set = scene.constraints;
    forEachBatch(set, [&](auto& batch) {
        for (auto& element : batch.particles) {
            std::for_each(element.begin(), element.end(), shift);
        }
    });
    std::for_each(set.attachments.particle.begin(), set.attachments.particle.end(), shift);
    for (PressureConstraint& p : set.pressure) {
        std::for_each(p.particles.begin(), p.particles.end(), shift);
    }
    Particles& particles = scene.particles;
    particles.positions.insert(particles.positions.begin() + at, position);
    particles.velocities.insert(particles.velocities.begin() + at, velocity);
    particles.inverseMasses.insert(particles.inverseMasses.begin() + at, inverseMass);
    if (!particles.forces.empty()) {
        particles.forces.insert(particles.forces.begin() + at, Vec3::Zero());
    }
    ++owner.particleCount;
    set.colourCount = 0;
    return at;
}

namespace {

// Splits vertex v of body b by the plane through it with normal d. Returns the copy's index, or
// nothing when all the vertex's triangles lie on one side.
std::optional<Index> splitVertex(Scene& scene, std::size_t b, Index v, const Vec3& d) {
    Body& body = scene.bodies[b];
    const auto& x = scene.particles.positions;
    std::vector<std::size_t> below;
    std::size_t above = 0;
    Real areaBelow = 0;
    Real areaAll = 0;
    for (std::size_t t = 0; t < body.triangles.size(); ++t) {
        const Triangle& tri = body.triangles[t];
        if (!contains(tri, v)) {
            continue;
        }
        const Vec3 centroid = (x[tri[0]] + x[tri[1]] + x[tri[2]]) / 3.0;
        const Real area = 0.5 * (x[tri[1]] - x[tri[0]]).cross(x[tri[2]] - x[tri[0]]).norm();
        areaAll += area;
        if ((centroid - x[v]).dot(d) < 0) {
            below.push_back(t);
            areaBelow += area;
        } else {
            ++above;
        }
    }
    if (below.empty() || above == 0) {
        return std::nullopt;
    }
    // The vertex's mass is shared by the area on each side.
    const Real w = scene.particles.inverseMasses[v];
    const Real share = std::clamp(areaAll > 0 ? areaBelow / areaAll : 0.5, 0.05, 0.95);
    const Real wBelow = w > 0 ? w / share : 0;
    const Real wAbove = w > 0 ? w / (1 - share) : 0;
    const Vec3 position = x[v];
    const Vec3 velocity = scene.particles.velocities[v];
    const Index copy = insertParticle(scene, b, position, velocity, wBelow);
    scene.particles.inverseMasses[v] = wAbove;

    Body& torn = scene.bodies[b];
    std::set<std::array<Index, 3>> belowSet;
    std::set<std::array<Index, 3>> aboveSet;
    for (std::size_t t = 0; t < torn.triangles.size(); ++t) {
        if (contains(torn.triangles[t], v)) {
            aboveSet.insert(sorted(torn.triangles[t]));
        }
    }
    for (std::size_t t : below) {
        aboveSet.erase(sorted(torn.triangles[t]));
        belowSet.insert(sorted(torn.triangles[t]));
    }
    // Which side's triangles contain the pair (v, other)?
    auto sidesOfEdge = [&](Index other) {
        bool inBelow = false, inAbove = false;
        for (const auto& t : belowSet) {
            inBelow = inBelow || std::binary_search(t.begin(), t.end(), other);
        }
        for (const auto& t : aboveSet) {
            inAbove = inAbove || std::binary_search(t.begin(), t.end(), other);
        }
        return std::make_pair(inBelow, inAbove);
    };
    auto replaceV = [&](auto& element) {
        for (Index& i : element) {
            if (i == v) {
                i = copy;
            }
        }
    };
    ConstraintSet& set = scene.constraints;
    // Distance: follow the edge's triangles; an edge on the cut is duplicated.
    {
        auto& dist = set.distance;
        const std::size_t n = dist.size();
        for (std::size_t e = 0; e < n; ++e) {
            auto& p = dist.particles[e];
            if (p[0] != v && p[1] != v) {
                continue;
            }
            const Index other = p[0] == v ? p[1] : p[0];
            const auto [inBelow, inAbove] = sidesOfEdge(other);
            if (inBelow && !inAbove) {
                replaceV(p);
            } else if (inBelow && inAbove) {
                dist.add(p[0] == v ? copy : p[0], p[1] == v ? copy : p[1], dist.restLength[e],
                         dist.compliance[0][e], dist.stiffness[0][e]);
                dist.group.back() = dist.group[e];
                dist.measure.back() = dist.measure[e];
            }
        }
    }
    // Bending: a hinge follows its two triangles; across the cut it is removed.
    {
        auto& bend = set.bending;
        std::vector<Index> keep;
        for (std::size_t e = 0; e < bend.size(); ++e) {
            auto& p = bend.particles[e];
            if (std::find(p.begin(), p.end(), v) == p.end()) {
                keep.push_back(static_cast<Index>(e));
                continue;
            }
            // The hinge's triangles: Bridson's and the isometric (wingA, wingB, u, v), the
            // appendix's (u, v, wingA, wingB).
            const bool bridson = bend.model != BendingModel::PbdAppendix;
            const Triangle t1 = {bridson ? p[0] : p[2], bridson ? p[2] : p[0],
                                 bridson ? p[3] : p[1]};
            const Triangle t2 = {bridson ? p[1] : p[3], bridson ? p[2] : p[0],
                                 bridson ? p[3] : p[1]};
            const bool has1 = contains(t1, v), has2 = contains(t2, v);
            const bool below1 = belowSet.count(sorted(t1)) > 0;
            const bool below2 = belowSet.count(sorted(t2)) > 0;
            if (has1 && has2 && below1 != below2) {
                continue; // the hinge straddles the cut: removed
            }
            if ((has1 && below1) || (has2 && below2)) {
                replaceV(p);
            }
            keep.push_back(static_cast<Index>(e));
        }
        if (keep.size() != bend.size()) {
            reorderElements(bend, keep);
        }
    }
    // Triangle elements follow their triangle.
    auto followTriangles = [&](auto& batch) {
        for (auto& p : batch.particles) {
            if (std::find(p.begin(), p.end(), v) != p.end() &&
                belowSet.count(sorted({p[0], p[1], p[2]})) > 0) {
                replaceV(p);
            }
        }
    };
    followTriangles(set.strainTriangles);
    followTriangles(set.area);
    for (std::size_t t : below) {
        replaceV(torn.triangles[t]);
    }
    set.colourCount = 0;
    return copy;
}

} // namespace

std::vector<TearEvent> tearOverstretchedEdges(Scene& scene, Real stretchLimit,
                                              std::size_t maxTears) {
    std::vector<TearEvent> events;
    if (!(stretchLimit > 1)) {
        return events;
    }
    std::set<std::size_t> cannotTear; // distance indices only grow (appends), so these hold
    for (std::size_t tear = 0; tear < maxTears; ++tear) {
        // The most stretched distance constraint of a tearable cloth body.
        const auto& dist = scene.constraints.distance;
        Real worst = stretchLimit;
        std::size_t worstEdge = dist.size();
        for (std::size_t e = 0; e < dist.size(); ++e) {
            if (cannotTear.count(e) > 0) {
                continue;
            }
            const auto& p = dist.particles[e];
            const Real rest = dist.restLength[e];
            if (!(rest > 0)) {
                continue;
            }
            const Real s =
                (scene.particles.positions[p[0]] - scene.particles.positions[p[1]]).norm() / rest;
            if (s > worst) {
                worst = s;
                worstEdge = e;
            }
        }
        if (worstEdge == dist.size()) {
            break;
        }
        const auto edge = dist.particles[worstEdge];
        std::size_t bodyIndex = scene.bodies.size();
        for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
            const Body& body = scene.bodies[b];
            if (edge[0] >= body.firstParticle &&
                edge[0] < body.firstParticle + body.particleCount) {
                bodyIndex = b;
            }
        }
        bool pressurised = false;
        if (bodyIndex < scene.bodies.size()) {
            for (const PressureConstraint& p : scene.constraints.pressure) {
                pressurised = pressurised || p.body == scene.bodies[bodyIndex].name;
            }
        }
        std::optional<Index> copy;
        Index split = edge[0];
        if (bodyIndex < scene.bodies.size() && scene.bodies[bodyIndex].kind == BodyKind::Cloth &&
            !pressurised) {
            const Vec3 d = scene.particles.positions[edge[1]] - scene.particles.positions[edge[0]];
            copy = splitVertex(scene, bodyIndex, edge[0], d);
            if (!copy) {
                split = edge[1];
                copy = splitVertex(scene, bodyIndex, edge[1], -d);
            }
        }
        if (!copy) {
            // Not cloth, pressurised, or nothing to separate: leave this edge alone.
            cannotTear.insert(worstEdge);
            --tear;
            continue;
        }
        events.push_back({scene.bodies[bodyIndex].name, split, *copy, worst});
    }
    return events;
}

} // namespace pbd
