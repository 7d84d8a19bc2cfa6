#include "core/scene/Topology.h"

#include <algorithm>
#include <unordered_map>

namespace pbd {

namespace {

struct FaceKey {
    Index a, b, c; // sorted
    bool operator==(const FaceKey&) const = default;
};

struct FaceKeyHash {
    std::size_t operator()(const FaceKey& k) const {
        std::size_t h = k.a;
        h = h * 0x9E3779B97F4A7C15ull ^ k.b;
        h = h * 0x9E3779B97F4A7C15ull ^ k.c;
        return h;
    }
};

FaceKey keyOf(const Triangle& f) {
    std::array<Index, 3> s = f;
    std::sort(s.begin(), s.end());
    return {s[0], s[1], s[2]};
}

} // namespace

std::vector<Triangle> boundaryFaces(const std::vector<Tetrahedron>& tets) {
    // For a positive tet (a, b, c, d) these faces have outward normals.
    auto facesOf = [](const Tetrahedron& t) {
        return std::array<Triangle, 4>{Triangle{t[1], t[2], t[3]}, Triangle{t[0], t[3], t[2]},
                                       Triangle{t[0], t[1], t[3]}, Triangle{t[0], t[2], t[1]}};
    };
    std::unordered_map<FaceKey, int, FaceKeyHash> count;
    count.reserve(tets.size() * 4);
    for (const Tetrahedron& t : tets) {
        for (const Triangle& f : facesOf(t)) {
            ++count[keyOf(f)];
        }
    }
    std::vector<Triangle> boundary;
    for (const Tetrahedron& t : tets) {
        for (const Triangle& f : facesOf(t)) {
            if (count[keyOf(f)] == 1) {
                boundary.push_back(f);
            }
        }
    }
    return boundary;
}

std::size_t orientPositively(std::vector<Tetrahedron>& tets, const std::vector<Vec3>& positions) {
    std::size_t flipped = 0;
    for (Tetrahedron& t : tets) {
        if (signedVolume(positions[t[0]], positions[t[1]], positions[t[2]], positions[t[3]]) < 0) {
            std::swap(t[2], t[3]);
            ++flipped;
        }
    }
    return flipped;
}

void vertexNormals(const std::vector<Triangle>& triangles, const Vec3* positions, std::size_t count,
                   Vec3* normals) {
    std::fill(normals, normals + count, Vec3::Zero());
    for (const Triangle& t : triangles) {
        const Vec3 n = (positions[t[1]] - positions[t[0]]).cross(positions[t[2]] - positions[t[0]]);
        for (Index v : t) {
            normals[v] += n; // |n| is twice the area: area weighting
        }
    }
    for (std::size_t i = 0; i < count; ++i) {
        const Real len = normals[i].norm();
        if (len > 0) {
            normals[i] /= len;
        }
    }
}

std::vector<Vec3> vertexNormals(const std::vector<Triangle>& triangles,
                                const std::vector<Vec3>& positions) {
    std::vector<Vec3> normals(positions.size());
    vertexNormals(triangles, positions.data(), positions.size(), normals.data());
    return normals;
}

} // namespace pbd
