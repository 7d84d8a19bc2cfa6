#include "core/scenes/PrimitiveMeshes.h"

#include "core/scene/Mass.h"
#include "core/scene/Topology.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace pbd {

Body makeClothSheet(Particles& particles, const ClothSheetSpec& spec, std::string name) {
    Body body;
    body.name = std::move(name);
    body.kind = BodyKind::Cloth;
    body.firstParticle = static_cast<Index>(particles.size());
    const int nx = std::max(spec.columns, 2);
    const int nz = std::max(spec.rows, 2);
    auto uvOf = [&](int i, int k) { return Vec2(Real(i) / (nx - 1), Real(k) / (nz - 1)); };
    for (int k = 0; k < nz; ++k) {
        for (int i = 0; i < nx; ++i) {
            const Vec2 uv = uvOf(i, k);
            const Vec3 p =
                spec.center + Vec3((uv.x() - 0.5) * spec.width, 0, (uv.y() - 0.5) * spec.depth);
            particles.add(p, 0.0);
        }
    }
    body.particleCount = static_cast<Index>(nx * nz);
    auto id = [&](int i, int k) { return body.firstParticle + static_cast<Index>(k * nx + i); };
    auto addTriangle = [&](std::array<std::pair<int, int>, 3> corners) {
        // Corners are listed so that (c1 - c0) x (c2 - c0) points along +y.
        Triangle t;
        std::array<Vec2, 3> uv;
        for (int c = 0; c < 3; ++c) {
            t[c] = id(corners[c].first, corners[c].second);
            uv[c] = uvOf(corners[c].first, corners[c].second);
        }
        body.triangles.push_back(t);
        body.triangleUVs.push_back(uv);
    };
    for (int k = 0; k + 1 < nz; ++k) {
        for (int i = 0; i + 1 < nx; ++i) {
            if ((i + k) % 2 == 0) {
                addTriangle({{{i, k}, {i, k + 1}, {i + 1, k + 1}}});
                addTriangle({{{i, k}, {i + 1, k + 1}, {i + 1, k}}});
            } else {
                addTriangle({{{i, k}, {i, k + 1}, {i + 1, k}}});
                addTriangle({{{i + 1, k}, {i, k + 1}, {i + 1, k + 1}}});
            }
        }
    }
    assignTriangleMasses(particles, body, spec.arealDensity);
    return body;
}

namespace {

// Splits the prism with bottom (v0, v1, v2) and top (v3, v4, v5), v(i+3) above v(i), into three
// tets whose diagonals on the quad faces all start at the quad's smallest global index
// (Dompierre et al. 1999), which makes the split of neighbouring prisms conforming.
void splitPrism(const std::array<Index, 6>& prism, std::vector<Tetrahedron>& tets) {
    // Row k relabels the prism so that vertex k becomes v0 (rotations and the top/bottom flip).
    static constexpr int relabel[6][6] = {{0, 1, 2, 3, 4, 5}, {1, 2, 0, 4, 5, 3},
                                          {2, 0, 1, 5, 3, 4}, {3, 5, 4, 0, 2, 1},
                                          {4, 3, 5, 1, 0, 2}, {5, 4, 3, 2, 1, 0}};
    const int smallest =
        static_cast<int>(std::min_element(prism.begin(), prism.end()) - prism.begin());
    std::array<Index, 6> v;
    for (int i = 0; i < 6; ++i) {
        v[i] = prism[relabel[smallest][i]];
    }
    if (std::min(v[1], v[5]) < std::min(v[2], v[4])) {
        tets.push_back({v[0], v[1], v[2], v[5]});
        tets.push_back({v[0], v[1], v[5], v[4]});
    } else {
        tets.push_back({v[0], v[1], v[2], v[4]});
        tets.push_back({v[0], v[4], v[2], v[5]});
    }
    tets.push_back({v[0], v[4], v[5], v[3]});
}

} // namespace

Body makeTetTorus(Particles& particles, const TetTorusSpec& spec, std::string name) {
    Body body;
    body.name = std::move(name);
    body.kind = BodyKind::TetBody;
    body.firstParticle = static_cast<Index>(particles.size());
    const int segments = std::max(spec.segments, 3);
    const int sides = std::max(spec.sides, 3);
    const int rings = std::max(spec.rings, 1);
    const int perStation = 1 + rings * sides;
    const Real twoPi = 2 * std::numbers::pi;

    for (int s = 0; s < segments; ++s) {
        const Real theta = twoPi * s / segments;
        const Vec3 radial(std::cos(theta), 0, std::sin(theta));
        const Vec3 tubeCenter = spec.center + spec.majorRadius * radial;
        particles.add(tubeCenter, 0.0);
        for (int r = 1; r <= rings; ++r) {
            const Real radius = spec.minorRadius * r / rings;
            for (int j = 0; j < sides; ++j) {
                const Real phi = twoPi * j / sides;
                particles.add(tubeCenter +
                                  radius * (std::cos(phi) * radial + std::sin(phi) * Vec3::UnitY()),
                              0.0);
            }
        }
    }
    body.particleCount = static_cast<Index>(segments * perStation);

    // Triangulation of one cross-section disk in station-local indices.
    auto ringVertex = [&](int r, int j) {
        return 1 + (r - 1) * sides + ((j % sides) + sides) % sides;
    };
    std::vector<std::array<int, 3>> disk;
    for (int j = 0; j < sides; ++j) {
        disk.push_back({0, ringVertex(1, j), ringVertex(1, j + 1)});
    }
    for (int r = 1; r < rings; ++r) {
        for (int j = 0; j < sides; ++j) {
            disk.push_back({ringVertex(r, j), ringVertex(r + 1, j), ringVertex(r + 1, j + 1)});
            disk.push_back({ringVertex(r, j), ringVertex(r + 1, j + 1), ringVertex(r, j + 1)});
        }
    }
    for (int s = 0; s < segments; ++s) {
        const Index a = body.firstParticle + static_cast<Index>(s * perStation);
        const Index b = body.firstParticle + static_cast<Index>(((s + 1) % segments) * perStation);
        for (const auto& t : disk) {
            splitPrism({a + t[0], a + t[1], a + t[2], b + t[0], b + t[1], b + t[2]}, body.tets);
        }
    }
    orientPositively(body.tets, particles.positions);
    body.triangles = boundaryFaces(body.tets);
    assignTetMasses(particles, body, spec.density);
    return body;
}

} // namespace pbd

namespace pbd {

Body makeTetBox(Particles& particles, const TetBoxSpec& spec, std::string name) {
    Body body;
    body.name = std::move(name);
    body.kind = BodyKind::TetBody;
    body.firstParticle = static_cast<Index>(particles.size());
    const int n[3] = {std::max(spec.vertices[0], 2), std::max(spec.vertices[1], 2),
                      std::max(spec.vertices[2], 2)};
    for (int k = 0; k < n[2]; ++k) {
        for (int j = 0; j < n[1]; ++j) {
            for (int i = 0; i < n[0]; ++i) {
                const Vec3 f(Real(i) / (n[0] - 1) - 0.5, Real(j) / (n[1] - 1) - 0.5,
                             Real(k) / (n[2] - 1) - 0.5);
                particles.add(spec.center + f.cwiseProduct(spec.size), 0.0);
            }
        }
    }
    body.particleCount = static_cast<Index>(n[0] * n[1] * n[2]);
    auto id = [&](int i, int j, int k) {
        return body.firstParticle + static_cast<Index>((k * n[1] + j) * n[0] + i);
    };
    // Five tets per cell: a central tet on four alternate corners and one tet at each other
    // corner. Cells alternate which corners are central by (i + j + k) parity, so neighbouring
    // cells cut their shared face along the same diagonal (a conforming mesh).
    for (int k = 0; k + 1 < n[2]; ++k) {
        for (int j = 0; j + 1 < n[1]; ++j) {
            for (int i = 0; i + 1 < n[0]; ++i) {
                Index c[8]; // corner (a, b, d) at index a + 2b + 4d
                for (int q = 0; q < 8; ++q) {
                    c[q] = id(i + (q & 1), j + ((q >> 1) & 1), k + ((q >> 2) & 1));
                }
                const bool even = (i + j + k) % 2 == 0;
                if (even) {
                    body.tets.push_back({c[0], c[3], c[5], c[6]});
                    body.tets.push_back({c[1], c[0], c[3], c[5]});
                    body.tets.push_back({c[2], c[0], c[3], c[6]});
                    body.tets.push_back({c[4], c[0], c[5], c[6]});
                    body.tets.push_back({c[7], c[3], c[5], c[6]});
                } else {
                    body.tets.push_back({c[1], c[2], c[4], c[7]});
                    body.tets.push_back({c[0], c[1], c[2], c[4]});
                    body.tets.push_back({c[3], c[1], c[2], c[7]});
                    body.tets.push_back({c[5], c[1], c[4], c[7]});
                    body.tets.push_back({c[6], c[2], c[4], c[7]});
                }
            }
        }
    }
    orientPositively(body.tets, particles.positions);
    body.triangles = boundaryFaces(body.tets);
    assignTetMasses(particles, body, spec.density);
    return body;
}

Body makeRope(Particles& particles, const RopeSpec& spec, std::string name) {
    Body body;
    body.name = std::move(name);
    body.kind = BodyKind::Cloth;
    body.firstParticle = static_cast<Index>(particles.size());
    const int count = std::max(spec.particles, 2);
    const Real m = spec.mass / count;
    for (int i = 0; i < count; ++i) {
        particles.add(spec.start + (spec.end - spec.start) * (Real(i) / (count - 1)), 1.0 / m);
    }
    body.particleCount = static_cast<Index>(count);
    return body;
}

} // namespace pbd
