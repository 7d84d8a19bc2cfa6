#include "core/air/AirConnectivity.h"

namespace pbd::air {

std::vector<std::int32_t> buildAdjacency(const std::vector<Tetrahedron>& tets) {
    std::vector<std::int32_t> neighbours(4 * tets.size(), kNone);
    std::vector<std::pair<Triangle, std::int32_t>> faces;
    faces.reserve(4 * tets.size());
    for (std::size_t t = 0; t < tets.size(); ++t) {
        for (int i = 0; i < 4; ++i) {
            faces.emplace_back(faceOpposite(tets[t], i), std::int32_t(4 * t + std::size_t(i)));
        }
    }
    pairUp(faces, 4, neighbours);
    return neighbours;
}

std::vector<std::int32_t> buildEdgeAdjacency(const std::vector<Triangle>& triangles) {
    std::vector<std::int32_t> neighbours(3 * triangles.size(), kNone);
    std::vector<std::pair<EdgeKey, std::int32_t>> edges;
    edges.reserve(3 * triangles.size());
    for (std::size_t t = 0; t < triangles.size(); ++t) {
        for (int i = 0; i < 3; ++i) {
            edges.emplace_back(edgeKey(triangles[t][std::size_t((i + 1) % 3)],
                                       triangles[t][std::size_t((i + 2) % 3)]),
                               std::int32_t(3 * t + std::size_t(i)));
        }
    }
    pairUp(edges, 3, neighbours);
    return neighbours;
}
} // namespace pbd::air
