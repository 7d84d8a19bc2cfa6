#include "core/scenes/Garments.h"

#include "core/base/TextValues.h"
#include "core/constraints/Attaching.h"
#include "core/constraints/ConstraintBuilders.h"
#include "core/scene/Mass.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>

namespace pbd {

std::string checkSkirt(const SkirtSpec& s) {
    if (s.layers < 1 || s.layers > 16) {
        return "a skirt has 1 to 16 layers, not " + std::to_string(s.layers);
    }
    if (s.segments < 8 || s.rows < 2) {
        return "a skirt needs at least 8 segments around and 2 rows down";
    }
    if (!(s.length > 0) || !std::isfinite(s.length) || !std::isfinite(s.waistHeight)) {
        return "the skirt's length must be positive and its waist height finite";
    }
    if (!(s.layerGap > 0) || !(s.ease >= 0) || !(s.flare >= 1) || !std::isfinite(s.flare) ||
        !std::isfinite(s.layerGap) || !std::isfinite(s.ease)) {
        return "the skirt's layer gap must be positive, its ease not negative and its flare 1 or "
               "more";
    }
    if (!(s.arealDensity > 0) || !(s.bendingCompliance >= 0)) {
        return "the skirt's areal density must be positive and its bending compliance not "
               "negative";
    }
    if (!(s.pinCompliance >= 0) || !std::isfinite(s.pinCompliance)) {
        return "the skirt's pin compliance must be 0 (hard) or more";
    }
    return {};
}

Result<std::size_t> addSkirt(Scene& scene, int character, const SkirtSpec& spec) {
    if (std::string problem = checkSkirt(spec); !problem.empty()) {
        return Error{problem};
    }
    if (character < 0 || std::size_t(character) >= scene.characters.size()) {
        return Error{"there is no character " + std::to_string(character)};
    }
    const Character& ch = scene.characters[std::size_t(character)];
    if (ch.collider < 0 || std::size_t(ch.collider) >= scene.colliders.size()) {
        return Error{"character '" + ch.name + "' has no collider"};
    }
    // The skin as the scene shows it: the pose the waistband is pinned in, too.
    const std::vector<Vec3>& skin = scene.colliders[std::size_t(ch.collider)].vertices;
    // The skin's cross-section at the waist: where the plane y = waistHeight cuts its
    // triangles, a point on each cut edge. The cuts of triangles that share an edge join into
    // loops (a hip, a wrist, a hand hanging beside the hips).
    const std::vector<Triangle>& skinTriangles =
        scene.colliders[std::size_t(ch.collider)].triangles;
    Bounds all;
    for (const Vec3& v : skin) {
        all.add(v);
    }
    const Real y = spec.waistHeight;
    std::vector<Index> cut; // triangles the plane cuts
    std::vector<std::array<Vec2, 2>> segment;
    std::map<std::pair<Index, Index>, std::size_t> firstOnEdge;
    std::vector<std::size_t> parent;
    const auto root = [&](std::size_t i) {
        while (parent[i] != i) {
            i = parent[i] = parent[parent[i]];
        }
        return i;
    };
    for (std::size_t t = 0; t < skinTriangles.size(); ++t) {
        const Triangle& tri = skinTriangles[t];
        std::array<Vec2, 2> ends;
        std::array<std::pair<Index, Index>, 2> edges;
        int found = 0;
        for (int k = 0; k < 3 && found < 2; ++k) {
            const Vec3& a = skin[tri[k]];
            const Vec3& b = skin[tri[(k + 1) % 3]];
            if ((a.y() < y) == (b.y() < y)) {
                continue;
            }
            const Real f = (y - a.y()) / (b.y() - a.y());
            const Vec3 p = a + f * (b - a);
            ends[std::size_t(found)] = Vec2(p.x(), p.z());
            edges[std::size_t(found)] = std::minmax(tri[k], tri[(k + 1) % 3]);
            ++found;
        }
        if (found < 2) {
            continue;
        }
        const std::size_t id = segment.size();
        cut.push_back(Index(t));
        segment.push_back(ends);
        parent.push_back(id);
        for (const auto& e : edges) {
            auto [it, inserted] = firstOnEdge.try_emplace(e, id);
            if (!inserted) {
                parent[root(id)] = root(it->second);
            }
        }
    }
    if (segment.size() < 3) {
        return Error{"character '" + ch.name + "' has no skin at the waist height " +
                     std::to_string(spec.waistHeight) + " m (it spans " +
                     std::to_string(all.min.y()) + " to " + std::to_string(all.max.y()) + " m)"};
    }
    // The skirt goes around the loop that spans the most (the hips: a hand or a wrist is
    // smaller), with the loops centred inside it (another mesh's hips that overlap).
    std::vector<Vec2> lo(segment.size(), Vec2::Constant(1e300)),
        hi(segment.size(), Vec2::Constant(-1e300));
    for (std::size_t i = 0; i < segment.size(); ++i) {
        const std::size_t r = root(i);
        for (const Vec2& p : segment[i]) {
            lo[r] = lo[r].cwiseMin(p);
            hi[r] = hi[r].cwiseMax(p);
        }
    }
    std::size_t chosen = root(0);
    const auto spanArea = [&](std::size_t r) { return (hi[r] - lo[r]).prod(); };
    for (std::size_t i = 0; i < segment.size(); ++i) {
        if (spanArea(root(i)) > spanArea(chosen)) {
            chosen = root(i);
        }
    }
    const auto inChosen = [&](std::size_t r) {
        const Vec2 c = 0.5 * (lo[r] + hi[r]);
        return r == chosen ||
               ((c.array() >= lo[chosen].array()).all() && (c.array() <= hi[chosen].array()).all());
    };
    // The waistband rides on the cut triangles of those loops only.
    std::vector<Vec2> ring;
    std::vector<Index> hips;
    for (std::size_t i = 0; i < segment.size(); ++i) {
        if (inChosen(root(i))) {
            ring.insert(ring.end(), segment[i].begin(), segment[i].end());
            hips.push_back(cut[i]);
        }
    }
    const Vec2 centre = 0.5 * (lo[chosen] + hi[chosen]);
    // The waist radius by direction: the farthest cut point within each sector, sectors with
    // none filled from their neighbours, then smoothed so the band is a calm curve.
    const int n = spec.segments;
    const Real sector = 2 * std::numbers::pi / n;
    std::vector<Real> radius(std::size_t(n), 0);
    for (const Vec2& v : ring) {
        const Vec2 d = v - centre;
        const Real angle = std::atan2(d.y(), d.x());
        const int k = int(std::floor((angle + std::numbers::pi) / sector + 0.5)) % n;
        for (int j = -1; j <= 1; ++j) { // a vertex widens its neighbours too
            Real& r = radius[std::size_t((k + j + n) % n)];
            r = std::max(r, d.norm());
        }
    }
    for (int pass = 0; pass < n && std::count(radius.begin(), radius.end(), 0.0) > 0; ++pass) {
        std::vector<Real> filled = radius;
        for (int k = 0; k < n; ++k) {
            if (radius[std::size_t(k)] == 0) {
                filled[std::size_t(k)] = std::max(radius[std::size_t((k + 1) % n)],
                                                  radius[std::size_t((k + n - 1) % n)]);
            }
        }
        radius = filled;
    }
    // Below the waist the hips widen: the cone must clear the skin it hangs over, so a sector's
    // waist radius grows until the cone passes every skin vertex under it that is the body's:
    // reached from the waist loop along skin edges without going above the waist (a hand
    // hanging beside the hips is reached only over the shoulder).
    {
        std::vector<std::vector<Index>> neighbours(skin.size());
        for (const Triangle& t : skinTriangles) {
            for (int k = 0; k < 3; ++k) {
                neighbours[t[std::size_t(k)]].push_back(t[std::size_t((k + 1) % 3)]);
                neighbours[t[std::size_t((k + 1) % 3)]].push_back(t[std::size_t(k)]);
            }
        }
        const auto under = [&](Index v) {
            const Real s = (spec.waistHeight - skin[v].y()) / spec.length;
            return s > 0 && s <= 1;
        };
        std::vector<char> seen(skin.size(), 0);
        std::vector<Index> front;
        for (Index t : hips) {
            for (Index v : skinTriangles[t]) {
                if (under(v) && seen[v] == 0) {
                    seen[v] = 1;
                    front.push_back(v);
                }
            }
        }
        const std::vector<Real> waistRadius = radius;
        while (!front.empty()) {
            const Index v = front.back();
            front.pop_back();
            for (Index w : neighbours[v]) {
                if (under(w) && seen[w] == 0) {
                    seen[w] = 1;
                    front.push_back(w);
                }
            }
            const Real s = (spec.waistHeight - skin[v].y()) / spec.length;
            const Vec2 d = Vec2(skin[v].x(), skin[v].z()) - centre;
            const Real angle = std::atan2(d.y(), d.x());
            const int k = int(std::floor((angle + std::numbers::pi) / sector + 0.5)) % n;
            for (int j = -1; j <= 1; ++j) { // the faces between vertices too
                Real& r = radius[std::size_t((k + j + n) % n)];
                r = std::max(r, d.norm() / (1 + (spec.flare - 1) * s));
            }
        }
    }
    for (int pass = 0; pass < 3; ++pass) {
        std::vector<Real> smooth(radius.size());
        for (int k = 0; k < n; ++k) {
            smooth[std::size_t(k)] =
                std::max(radius[std::size_t(k)],
                         (radius[std::size_t((k + n - 1) % n)] + 2 * radius[std::size_t(k)] +
                          radius[std::size_t((k + 1) % n)]) /
                             4);
        }
        radius = smooth;
    }

    const std::size_t firstBody = scene.bodies.size();
    const int rows = spec.rows;
    for (int layer = 0; layer < spec.layers; ++layer) {
        Body body;
        body.name = "skirt " + std::to_string(layer + 1);
        body.kind = BodyKind::Cloth;
        body.firstParticle = Index(scene.particles.size());
        const Real out = spec.ease + layer * spec.layerGap;
        for (int row = 0; row < rows; ++row) {
            const Real s = Real(row) / (rows - 1);
            for (int k = 0; k < n; ++k) {
                const Real angle = -std::numbers::pi + k * sector;
                // The cone flares from the waist; each layer keeps its gap all the way down.
                const Real r = radius[std::size_t(k)] * (1 + (spec.flare - 1) * s) + out;
                scene.particles.add(Vec3(centre.x() + r * std::cos(angle),
                                         spec.waistHeight - s * spec.length,
                                         centre.y() + r * std::sin(angle)),
                                    0.0);
            }
        }
        body.particleCount = Index(rows * n);
        const auto id = [&](int k, int row) {
            return body.firstParticle + Index(row * n + (k % n));
        };
        const auto uv = [&](int k, int row) { return Vec2(Real(k) / n, Real(row) / (rows - 1)); };
        const auto add = [&](std::array<std::pair<int, int>, 3> c) {
            Triangle t;
            std::array<Vec2, 3> uvs;
            for (int i = 0; i < 3; ++i) {
                t[std::size_t(i)] = id(c[std::size_t(i)].first, c[std::size_t(i)].second);
                uvs[std::size_t(i)] = uv(c[std::size_t(i)].first, c[std::size_t(i)].second);
            }
            body.triangles.push_back(t);
            body.triangleUVs.push_back(uvs);
        };
        // Wound so the normals point out, away from the legs; diagonals alternate.
        for (int row = 0; row + 1 < rows; ++row) {
            for (int k = 0; k < n; ++k) {
                if ((k + row) % 2 == 0) {
                    add({{{k, row}, {k + 1, row}, {k + 1, row + 1}}});
                    add({{{k, row}, {k + 1, row + 1}, {k, row + 1}}});
                } else {
                    add({{{k, row}, {k + 1, row}, {k, row + 1}}});
                    add({{{k + 1, row}, {k + 1, row + 1}, {k, row + 1}}});
                }
            }
        }
        assignTriangleMasses(scene.particles, body, spec.arealDensity);
        addEdgeDistances(scene.constraints, scene.particles, body, 0.0);
        addDihedralBending(scene.constraints, scene.particles, body, spec.bendingCompliance);
        scene.bodies.push_back(std::move(body));
        ensureConstraintGroups(scene, true);
        // The waistband rides on the skin.
        std::vector<Index> waist;
        for (int k = 0; k < n; ++k) {
            waist.push_back(id(k, 0));
        }
        Result<AttachResult> pinned =
            attachToCharacter(scene, waist, character, spec.pinCompliance, hips);
        if (!pinned) {
            return Error{pinned.error()};
        }
    }
    return firstBody;
}

Result<std::size_t> addSkirtFromSpec(Scene& scene, std::string_view edits) {
    std::vector<std::pair<std::string, std::string>> items;
    std::string bad;
    if (!splitKeyValues(edits, items, bad)) {
        return Error{"'" + bad + "' is not KEY=VALUE"};
    }
    SkirtSpec spec;
    int character = 0;
    for (const auto& [key, value] : items) {
        Real v = 0;
        if (!parseReal(value, v)) {
            return Error{key + "=" + value + ": not a number"};
        }
        const auto whole = [&](int& out) -> bool {
            if (v != std::floor(v) || std::abs(v) > 1e6) {
                return false;
            }
            out = int(v);
            return true;
        };
        bool ok = true;
        if (key == "character") {
            ok = whole(character);
        } else if (key == "layers") {
            ok = whole(spec.layers);
        } else if (key == "segments") {
            ok = whole(spec.segments);
        } else if (key == "rows") {
            ok = whole(spec.rows);
        } else if (key == "waist") {
            spec.waistHeight = v;
        } else if (key == "length") {
            spec.length = v;
        } else if (key == "gap") {
            spec.layerGap = v;
        } else if (key == "flare") {
            spec.flare = v;
        } else if (key == "ease") {
            spec.ease = v;
        } else if (key == "density") {
            spec.arealDensity = v;
        } else if (key == "bending") {
            spec.bendingCompliance = v;
        } else if (key == "pin") {
            spec.pinCompliance = v;
        } else {
            return Error{"unknown skirt key '" + key +
                         "' (character, layers, segments, rows, waist, length, gap, flare, "
                         "ease, density, bending, pin)"};
        }
        if (!ok) {
            return Error{key + "=" + value + ": not a whole number"};
        }
    }
    return addSkirt(scene, character, spec);
}

} // namespace pbd
