#include "core/rigid/RigidShapeMesh.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace pbd {

namespace {

// A sphere of `radius` split at the equator by `halfHeight` along y (a capsule; 0 for a
// sphere): rings of latitude from the south pole to the north.
void appendRoundShape(Real radius, Real halfHeight, int segments, std::vector<Vec3>& v,
                      std::vector<Triangle>& t) {
    const int around = std::max(segments, 4);
    const int half = std::max(around / 4, 1); // rings per hemisphere, poles excluded
    const Index first = Index(v.size());
    v.emplace_back(0, -radius - halfHeight, 0); // south pole
    std::vector<std::pair<Real, Real>> rings;   // (latitude, y offset)
    for (int i = 1; i <= half; ++i) {
        rings.emplace_back(-std::numbers::pi / 2 + std::numbers::pi / 2 * i / half, -halfHeight);
    }
    for (int i = (halfHeight > 0 ? 0 : 1); i < half; ++i) {
        rings.emplace_back(std::numbers::pi / 2 * i / half, halfHeight);
    }
    for (const auto& [lat, y] : rings) {
        for (int k = 0; k < around; ++k) {
            const Real lon = 2 * std::numbers::pi * k / around;
            v.emplace_back(radius * std::cos(lat) * std::cos(lon), y + radius * std::sin(lat),
                           -radius * std::cos(lat) * std::sin(lon));
        }
    }
    const Index north = Index(v.size());
    v.emplace_back(0, radius + halfHeight, 0);
    const auto at = [&](std::size_t ring, int k) {
        return Index(first + 1 + ring * around + std::size_t((k + around) % around));
    };
    for (int k = 0; k < around; ++k) {
        t.push_back({first, at(0, k + 1), at(0, k)});
        for (std::size_t r = 0; r + 1 < rings.size(); ++r) {
            t.push_back({at(r, k), at(r, k + 1), at(r + 1, k + 1)});
            t.push_back({at(r, k), at(r + 1, k + 1), at(r + 1, k)});
        }
        t.push_back({north, at(rings.size() - 1, k), at(rings.size() - 1, k + 1)});
    }
}

} // namespace

void appendShapeMesh(const RigidShape& s, int segments, ShapeMesh& out) {
    const std::size_t firstVertex = out.vertices.size();
    switch (s.type) {
    case RigidShapeType::Sphere:
        appendRoundShape(s.radius, 0, segments, out.vertices, out.triangles);
        break;
    case RigidShapeType::Capsule:
        appendRoundShape(s.radius, s.halfHeight, segments, out.vertices, out.triangles);
        break;
    case RigidShapeType::Box:
    case RigidShapeType::Hull: {
        const ConvexPolyhedron hull =
            s.polyhedron ? ConvexPolyhedron{} : boxPolyhedron(s.halfExtents);
        const ConvexPolyhedron& p = s.polyhedron ? *s.polyhedron : hull;
        const Index first = Index(firstVertex);
        out.vertices.insert(out.vertices.end(), p.vertices.begin(), p.vertices.end());
        for (const std::vector<int>& f : p.faces) {
            for (std::size_t i = 1; i + 1 < f.size(); ++i) {
                out.triangles.push_back(
                    {first + Index(f[0]), first + Index(f[i]), first + Index(f[i + 1])});
            }
        }
        break;
    }
    }
    for (std::size_t i = firstVertex; i < out.vertices.size(); ++i) {
        out.vertices[i] = s.position + s.rotation * out.vertices[i];
    }
}

ShapeMesh rigidBodyMesh(const RigidBody& body, int segments) {
    ShapeMesh mesh;
    for (const RigidShape& s : body.shapes) {
        appendShapeMesh(s, segments, mesh);
    }
    return mesh;
}

} // namespace pbd
