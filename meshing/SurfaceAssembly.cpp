#include "meshing/SurfaceAssembly.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <unordered_map>

namespace pbd {

namespace {

struct Cell {
    long long x, y, z;
    bool operator==(const Cell&) const = default;
};

struct CellHash {
    std::size_t operator()(const Cell& c) const {
        // Unsigned: the products wrap instead of overflowing.
        return std::size_t(std::uint64_t(c.x) * 73856093ULL ^ std::uint64_t(c.y) * 19349663ULL ^
                           std::uint64_t(c.z) * 83492791ULL);
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
    // Cells eight tolerances wide: a corner farther than the tolerance from its cell's faces
    // (most of them) looks in its own cell only, and the others also in the neighbours on the
    // near side. Each cell keeps a chain of its vertices (next).
    const double cellSize = 8 * (tolerance > 0 ? tolerance : 1e-12);
    std::unordered_map<Cell, Index, CellHash> first;
    first.reserve(soup.corners.size() / 2);
    std::vector<Index> next;
    next.reserve(soup.corners.size() / 2);
    const Index base = Index(particles.size());
    constexpr Index kNone = std::numeric_limits<Index>::max();
    auto vertexFor = [&](const Vec3& p) -> Index {
        const Vec3 scaled = p / cellSize;
        const Vec3 floor = scaled.array().floor();
        // Far beyond the cells a real mesh has (a hostile file's 1e300), the cell index is
        // clamped: such corners share a cell, and the distance test still tells them apart.
        const auto index = [](double v) {
            return static_cast<long long>(std::clamp(v, -0x1p60, 0x1p60));
        };
        const Cell c{index(floor.x()), index(floor.y()), index(floor.z())};
        const Vec3 low = (scaled - floor) * cellSize; // distances to the cell's lower faces
        int from[3], to[3];
        for (int k = 0; k < 3; ++k) {
            from[k] = low[k] <= tolerance ? -1 : 0;
            to[k] = cellSize - low[k] <= tolerance ? 1 : 0;
        }
        Index found = kNone;
        for (long long dx = from[0]; dx <= to[0]; ++dx) {
            for (long long dy = from[1]; dy <= to[1]; ++dy) {
                for (long long dz = from[2]; dz <= to[2]; ++dz) {
                    auto it = first.find({c.x + dx, c.y + dy, c.z + dz});
                    if (it == first.end()) {
                        continue;
                    }
                    for (Index v = it->second; v != kNone; v = next[v - base]) {
                        if (v < found && (particles.positions[v] - p).norm() <= tolerance) {
                            found = v; // the first vertex made, wherever the search meets it
                        }
                    }
                }
            }
        }
        if (found != kNone) {
            ++report.weldedCorners;
            return found;
        }
        const Index v = particles.add(p, 0.0);
        auto [it, inserted] = first.try_emplace(c, v);
        next.push_back(inserted ? kNone : it->second);
        it->second = v;
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

std::vector<Body> splitShells(Particles& particles, const Body& body) {
    const Index first = body.firstParticle, count = body.particleCount;
    std::vector<Index> parent(count);
    for (Index i = 0; i < count; ++i) {
        parent[i] = i;
    }
    const auto find = [&](Index i) {
        while (parent[i] != i) {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        return i;
    };
    for (const Triangle& t : body.triangles) {
        for (int k = 1; k < 3; ++k) {
            const Index a = find(t[0] - first), b = find(t[std::size_t(k)] - first);
            if (a != b) {
                parent[std::max(a, b)] = std::min(a, b);
            }
        }
    }
    // Shells numbered by their first triangle; vertices by their shell, then their order.
    constexpr Index kNone = std::numeric_limits<Index>::max();
    std::vector<Index> shellOfRoot(count, kNone);
    std::vector<Index> shellOfTriangle(body.triangles.size());
    Index shells = 0;
    for (std::size_t t = 0; t < body.triangles.size(); ++t) {
        Index& s = shellOfRoot[find(body.triangles[t][0] - first)];
        if (s == kNone) {
            s = shells++;
        }
        shellOfTriangle[t] = s;
    }
    if (shells <= 1) {
        return {body};
    }
    std::vector<Index> shellSize(shells, 0), order(count), newIndex(count);
    for (Index i = 0; i < count; ++i) {
        ++shellSize[shellOfRoot[find(i)]];
    }
    std::vector<Index> shellStart(shells + 1, 0);
    for (Index s = 0; s < shells; ++s) {
        shellStart[s + 1] = shellStart[s] + shellSize[s];
    }
    std::vector<Index> next = shellStart;
    for (Index i = 0; i < count; ++i) {
        const Index at = next[shellOfRoot[find(i)]]++;
        order[at] = i;
        newIndex[i] = at;
    }
    const auto reorder = [&](auto& values) {
        const auto begin = values.begin() + std::ptrdiff_t(first);
        const std::vector copy(begin, begin + std::ptrdiff_t(count)); // the body's range only
        for (Index at = 0; at < count; ++at) {
            values[first + at] = copy[order[at]];
        }
    };
    reorder(particles.positions);
    reorder(particles.velocities);
    reorder(particles.inverseMasses);
    std::vector<Body> out(shells);
    for (Index s = 0; s < shells; ++s) {
        Body& b = out[s];
        b.name = s == 0 ? body.name : body.name + "-" + std::to_string(s + 1);
        b.kind = body.kind;
        b.firstParticle = first + shellStart[s];
        b.particleCount = shellSize[s];
    }
    const bool uvs = body.triangleUVs.size() == body.triangles.size();
    for (std::size_t t = 0; t < body.triangles.size(); ++t) {
        Body& b = out[shellOfTriangle[t]];
        Triangle tri;
        for (int k = 0; k < 3; ++k) {
            tri[std::size_t(k)] = first + newIndex[body.triangles[t][std::size_t(k)] - first];
        }
        b.triangles.push_back(tri);
        if (uvs) {
            b.triangleUVs.push_back(body.triangleUVs[t]);
        }
    }
    return out;
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
