#include "meshing/SurfaceAssembly.h"

#include <cmath>
#include <unordered_map>

namespace pbd {

namespace {

struct Cell {
    long long x, y, z;
    bool operator==(const Cell&) const = default;
};

struct CellHash {
    std::size_t operator()(const Cell& c) const {
        return std::size_t(c.x * 73856093LL ^ c.y * 19349663LL ^ c.z * 83492791LL);
    }
};

} // namespace

Body assembleBody(Particles& particles, const TriangleSoup& soup, double relativeTolerance,
                  AssemblyReport& report) {
    Body body;
    body.name = soup.name;
    body.kind = BodyKind::Surface;
    body.firstParticle = static_cast<Index>(particles.size());

    Bounds bounds;
    for (const Vec3& p : soup.corners) {
        if (p.allFinite()) {
            bounds.add(p);
        }
    }
    const double diagonal = bounds.size().norm();
    const double tolerance = diagonal > 0 ? relativeTolerance * diagonal : relativeTolerance;
    const double cellSize = tolerance > 0 ? tolerance : 1e-12;

    std::unordered_map<Cell, std::vector<Index>, CellHash> grid;
    auto cellOf = [&](const Vec3& p) {
        return Cell{static_cast<long long>(std::floor(p.x() / cellSize)),
                    static_cast<long long>(std::floor(p.y() / cellSize)),
                    static_cast<long long>(std::floor(p.z() / cellSize))};
    };
    auto vertexFor = [&](const Vec3& p) -> Index {
        const Cell c = cellOf(p);
        for (long long dx = -1; dx <= 1; ++dx) {
            for (long long dy = -1; dy <= 1; ++dy) {
                for (long long dz = -1; dz <= 1; ++dz) {
                    auto it = grid.find({c.x + dx, c.y + dy, c.z + dz});
                    if (it == grid.end()) {
                        continue;
                    }
                    for (Index v : it->second) {
                        if ((particles.positions[v] - p).norm() <= tolerance) {
                            ++report.weldedCorners;
                            return v;
                        }
                    }
                }
            }
        }
        const Index v = particles.add(p, 0.0);
        grid[c].push_back(v);
        return v;
    };

    const bool hasUVs = soup.uvs.size() == soup.corners.size();
    for (std::size_t t = 0; t + 2 < soup.corners.size(); t += 3) {
        const Vec3& a = soup.corners[t];
        const Vec3& b = soup.corners[t + 1];
        const Vec3& c = soup.corners[t + 2];
        if (!a.allFinite() || !b.allFinite() || !c.allFinite()) {
            ++report.droppedNonFinite;
            continue;
        }
        const Triangle tri{vertexFor(a), vertexFor(b), vertexFor(c)};
        if (tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2]) {
            ++report.droppedDegenerate;
            continue;
        }
        body.triangles.push_back(tri);
        if (hasUVs) {
            body.triangleUVs.push_back({soup.uvs[t], soup.uvs[t + 1], soup.uvs[t + 2]});
        }
    }
    body.particleCount = static_cast<Index>(particles.size()) - body.firstParticle;
    return body;
}

Body& appendSurfaceOf(Scene& scene, const Body& solid, const Particles& from,
                      const std::string& name) {
    Body body;
    body.name = name;
    body.kind = BodyKind::Surface;
    body.firstParticle = Index(scene.particles.size());
    std::unordered_map<Index, Index> local;
    for (const Triangle& t : solid.triangles) {
        Triangle out;
        for (int k = 0; k < 3; ++k) {
            auto [it, inserted] = local.try_emplace(t[k], Index(scene.particles.size()));
            if (inserted) {
                scene.particles.add(from.positions[t[k]], 0.0);
            }
            out[k] = it->second;
        }
        body.triangles.push_back(out);
    }
    body.particleCount = Index(scene.particles.size()) - body.firstParticle;
    scene.bodies.push_back(std::move(body));
    return scene.bodies.back();
}

} // namespace pbd
