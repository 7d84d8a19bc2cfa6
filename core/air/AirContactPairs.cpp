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
    // and which of them are cloth: a cloth triangle is a face with air on both sides.
    std::vector<Triangle> cloth, surfaces;
    for (const Body& body : scene.bodies) {
        for (const Triangle& t : body.triangles) {
            surfaces.push_back(faceKey(t[0], t[1], t[2]));
            if (body.kind == BodyKind::Cloth) {
                cloth.push_back(surfaces.back());
            }
        }
    }
    air::FaceSet clothFaces, surfaceFaces;
    clothFaces.build(cloth, scene.particles.size());
    surfaceFaces.build(surfaces, scene.particles.size());
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
                const Triangle key = faceKey(face[0], face[1], face[2]);
                const bool boundary = neighbours[4 * t + std::size_t(i)] == kNone;
                const bool surface =
                    boundary && (std::all_of(face.begin(), face.end(), containerPoint) ||
                                 surfaceFaces.contains(key));
                if (surface || clothFaces.contains(key)) {
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
