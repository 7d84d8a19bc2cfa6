// The vertex-face pairs across the air that the contact-distance pass keeps apart (Air Meshes
// §4.3): a solid vertex over a face of another solid, on the air's boundary or a cloth triangle.

#include "core/air/AirConnectivity.h"
#include "core/air/AirOptimizer.h"

#include <algorithm>
#include <tbb/parallel_for.h>

namespace pbd {

using air::buildAdjacency;
using air::faceKey;
using air::kFace;
using air::kNone;

std::vector<AirContactPair> airContactPairs(const Scene& scene,
                                            const std::vector<std::int32_t>* adjacency) {
    std::vector<AirContactPair> pairs;
    const std::vector<Tetrahedron>& tets = scene.air.tets;
    if (tets.empty()) {
        return pairs;
    }
    std::vector<std::int32_t> built;
    if (!adjacency || adjacency->size() != 4 * tets.size()) {
        built = buildAdjacency(tets);
        adjacency = &built;
    }
    const std::vector<std::int32_t>& neighbours = *adjacency;
    // Every body's triangles (a cloth's, a soft body's boundary, a skin riding on a character),
    // and which of them are cloth: a cloth triangle is a face with air on both sides. Each is
    // listed under its lowest corner with its other two (a scan of a few, not a search of all).
    struct Listed {
        Index b, c;
        bool cloth;
    };
    const std::size_t n = scene.particles.size();
    std::vector<std::uint32_t> listStart(n + 1, 0);
    for (const Body& body : scene.bodies) {
        for (const Triangle& t : body.triangles) {
            ++listStart[faceKey(t[0], t[1], t[2])[0] + 1];
        }
    }
    for (std::size_t i = 0; i < n; ++i) {
        listStart[i + 1] += listStart[i];
    }
    std::vector<Listed> listed(listStart[n]);
    {
        std::vector<std::uint32_t> fill(listStart.begin(), listStart.end() - 1);
        for (const Body& body : scene.bodies) {
            for (const Triangle& t : body.triangles) {
                const Triangle key = faceKey(t[0], t[1], t[2]);
                listed[fill[key[0]]++] = {key[1], key[2], body.kind == BodyKind::Cloth};
            }
        }
    }
    // 0: no body's triangle; 1: a body's surface; 2: a cloth's triangle.
    const auto kindOf = [&](const Triangle& key) {
        int kind = 0;
        for (std::uint32_t k = listStart[key[0]]; k < listStart[key[0] + 1]; ++k) {
            if (listed[k].b == key[1] && listed[k].c == key[2]) {
                kind = std::max(kind, listed[k].cloth ? 2 : 1);
            }
        }
        return kind;
    };
    const Index airBegin = scene.air.firstParticle;
    const Index airEnd = airBegin + scene.air.particleCount;
    const auto solid = [&](Index v) {
        return v < airBegin || v >= airEnd || !(scene.particles.inverseMasses[v] > 0);
    };
    const auto freeAirPoint = [&](Index v) { return !solid(v); };
    // The body a particle belongs to, or -1 (the container).
    std::vector<int> owner(scene.particles.size(), -1);
    for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
        const Body& body = scene.bodies[b];
        std::fill_n(owner.begin() + body.firstParticle, body.particleCount, int(b));
    }
    const auto bodyOf = [&](Index v) { return owner[v]; };
    const auto containerPoint = [&](Index v) { return owner[v] < 0 && solid(v); };
    // In shares of the tets on the caller's threads, joined in tet order.
    constexpr std::size_t kShare = 16384;
    std::vector<std::vector<AirContactPair>> shares((tets.size() + kShare - 1) / kShare);
    tbb::parallel_for(std::size_t(0), shares.size(), [&](std::size_t share) {
        std::vector<AirContactPair>& found = shares[share];
        for (std::size_t t = share * kShare; t < std::min(tets.size(), (share + 1) * kShare); ++t) {
            const Tetrahedron& tet = tets[t];
            for (int i = 0; i < 4; ++i) {
                const Index p = tet[std::size_t(i)];
                const Triangle face{tet[std::size_t(kFace[i][0])], tet[std::size_t(kFace[i][1])],
                                    tet[std::size_t(kFace[i][2])]};
                if (!solid(p) || std::any_of(face.begin(), face.end(), freeAirPoint)) {
                    continue;
                }
                // A body's own particle across the air from its own face lies in that face's
                // plane as often as not (a corner next to a side): no contact between the two.
                const int body = bodyOf(p);
                if (body >= 0 && (body == bodyOf(face[0]) || body == bodyOf(face[1]) ||
                                  body == bodyOf(face[2]))) {
                    continue;
                }
                // A face of the air's boundary is a surface when a body or the container has
                // it. The air kept within an outline (the dancer's, inside its skirt and around
                // the inside of the legs) ends in faces of no surface too: planes through the
                // air, and held off them, the full dancer's hem went from 1.6 to 380 m/s in one
                // step at 3.85 s (and stayed calm with the pass off).
                const int kind = kindOf(faceKey(face[0], face[1], face[2]));
                const bool boundary = neighbours[4 * t + std::size_t(i)] == kNone;
                const bool surface =
                    boundary && (std::all_of(face.begin(), face.end(), containerPoint) || kind > 0);
                if (surface || kind == 2) {
                    found.push_back({p, face});
                }
            }
        }
    });
    for (const std::vector<AirContactPair>& found : shares) {
        pairs.insert(pairs.end(), found.begin(), found.end());
    }
    return pairs;
}

} // namespace pbd
