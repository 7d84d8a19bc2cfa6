#include "meshing/Export.h"

#include "core/scene/Topology.h"
#include "meshing/ProjectFile.h"
#include "meshing/VolumeMeshing.h"

#include <cmath>
#include <iomanip>
#include <sstream>

namespace pbd {

namespace fs = std::filesystem;

namespace {

// The cells of the export, in order: body tets, air tets, loose triangles, (2D) air triangles,
// then the triangles of the embedded (caged) meshes.
struct Cell {
    int corners = 4; // 4 tet, 3 triangle
    std::array<Index, 4> v{};
    int region = 0; // body index, -1 for air, -2 - e for embedded mesh e
    Mat3 frame = Mat3::Identity();
    Real quality = 0;
};

// The points of the export: the particles, then each embedded mesh's vertices where its cage
// carries them now.
std::vector<Vec3> exportPoints(const Scene& scene) {
    std::vector<Vec3> points = scene.particles.positions;
    std::vector<Vec3> carried;
    for (const EmbeddedMesh& m : scene.embedded) {
        embeddedPositions(m, scene.particles.positions, carried);
        points.insert(points.end(), carried.begin(), carried.end());
    }
    return points;
}

// Which embedded mesh a point is a vertex of, or -1 for a particle.
std::vector<Real> embeddedIndex(const Scene& scene) {
    std::vector<Real> index(scene.particles.size(), -1);
    for (std::size_t e = 0; e < scene.embedded.size(); ++e) {
        index.insert(index.end(), scene.embedded[e].vertexCount(), Real(e));
    }
    return index;
}

// `x`: exportPoints(scene), for the quality and frames of the cells.
std::vector<Cell> collectCells(const Scene& scene, const std::vector<Vec3>& x) {
    std::vector<Cell> cells;
    for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
        const Body& body = scene.bodies[b];
        for (std::size_t t = 0; t < body.tets.size(); ++t) {
            const Tetrahedron& tet = body.tets[t];
            Cell c;
            c.v = tet;
            c.region = int(b);
            if (!body.tetFrames.empty()) {
                c.frame = body.tetFrames[t];
            }
            c.quality = tetQuality(x[tet[0]], x[tet[1]], x[tet[2]], x[tet[3]]);
            cells.push_back(c);
        }
    }
    for (const Tetrahedron& tet : scene.air.tets) {
        Cell c;
        c.v = tet;
        c.region = -1;
        c.quality = tetQuality(x[tet[0]], x[tet[1]], x[tet[2]], x[tet[3]]);
        cells.push_back(c);
    }
    for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
        const Body& body = scene.bodies[b];
        if (!body.tets.empty()) {
            continue;
        }
        for (std::size_t t = 0; t < body.triangles.size(); ++t) {
            const Triangle& tri = body.triangles[t];
            Cell c;
            c.corners = 3;
            c.v = {tri[0], tri[1], tri[2], 0};
            c.region = int(b);
            const Mat3 f = triangleFrame(x[tri[0]], x[tri[1]], x[tri[2]],
                                         body.hasUVs() ? body.triangleUVs[t].data() : nullptr);
            if (f.allFinite()) {
                c.frame = f;
            }
            c.quality = triangleQuality(x[tri[0]], x[tri[1]], x[tri[2]]);
            cells.push_back(c);
        }
    }
    for (const Triangle& tri : scene.air.triangles) { // a 2D scene's air
        Cell c;
        c.corners = 3;
        c.v = {tri[0], tri[1], tri[2], 0};
        c.region = -1;
        c.quality = triangleQuality(x[tri[0]], x[tri[1]], x[tri[2]]);
        cells.push_back(c);
    }
    Index first = Index(scene.particles.size());
    for (std::size_t e = 0; e < scene.embedded.size(); ++e) {
        const EmbeddedMesh& m = scene.embedded[e];
        for (std::size_t t = 0; t < m.triangles.size(); ++t) {
            const Triangle tri{first + m.triangles[t][0], first + m.triangles[t][1],
                               first + m.triangles[t][2]};
            Cell c;
            c.corners = 3;
            c.v = {tri[0], tri[1], tri[2], 0};
            c.region = -2 - int(e);
            const Mat3 f = triangleFrame(x[tri[0]], x[tri[1]], x[tri[2]],
                                         m.triangleUVs.empty() ? nullptr : m.triangleUVs[t].data());
            if (f.allFinite()) {
                c.frame = f;
            }
            c.quality = triangleQuality(x[tri[0]], x[tri[1]], x[tri[2]]);
            cells.push_back(c);
        }
        first += Index(m.vertexCount());
    }
    return cells;
}

void writeNumbers(std::ostream& out, const std::vector<Real>& values) {
    for (std::size_t i = 0; i < values.size(); ++i) {
        out << (i % 9 == 0 ? "\n          " : " ") << values[i];
    }
    out << '\n';
}

} // namespace

Result<bool> exportVtu(const Scene& scene, const fs::path& path) {
    const std::vector<Vec3> points = exportPoints(scene);
    const std::vector<Cell> cells = collectCells(scene, points);
    std::ostringstream out;
    out << std::setprecision(17);
    out << "<?xml version=\"1.0\"?>\n"
           "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" "
           "header_type=\"UInt64\">\n"
           "  <UnstructuredGrid>\n";
    out << "    <Piece NumberOfPoints=\"" << points.size() << "\" NumberOfCells=\"" << cells.size()
        << "\">\n";
    out << "      <Points>\n        <DataArray type=\"Float64\" Name=\"position\" "
           "NumberOfComponents=\"3\" format=\"ascii\">";
    std::vector<Real> values;
    for (const Vec3& p : points) {
        values.insert(values.end(), {p.x(), p.y(), p.z()});
    }
    writeNumbers(out, values);
    out << "        </DataArray>\n      </Points>\n      <Cells>\n";
    out << "        <DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n          ";
    for (const Cell& c : cells) {
        for (int k = 0; k < c.corners; ++k) {
            out << c.v[k] << ' ';
        }
    }
    out << "\n        </DataArray>\n";
    out << "        <DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n          ";
    std::size_t offset = 0;
    for (const Cell& c : cells) {
        offset += std::size_t(c.corners);
        out << offset << ' ';
    }
    out << "\n        </DataArray>\n";
    out << "        <DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">\n          ";
    for (const Cell& c : cells) {
        out << (c.corners == 4 ? 10 : 5) << ' '; // VTK_TETRA, VTK_TRIANGLE
    }
    out << "\n        </DataArray>\n      </Cells>\n";

    out << "      <PointData Scalars=\"inverse_mass\">\n        <DataArray type=\"Float64\" "
           "Name=\"inverse_mass\" format=\"ascii\">";
    // Embedded meshes' vertices have no mass of their own: 0 there, and "embedded" says whose.
    std::vector<Real> inverseMasses = scene.particles.inverseMasses;
    inverseMasses.resize(points.size(), 0);
    writeNumbers(out, inverseMasses);
    out << "        </DataArray>\n";
    if (!scene.embedded.empty()) {
        out << "        <DataArray type=\"Float64\" Name=\"embedded\" format=\"ascii\">";
        writeNumbers(out, embeddedIndex(scene));
        out << "        </DataArray>\n";
    }
    out << "      </PointData>\n";

    out << "      <CellData Scalars=\"region\">\n";
    out << "        <DataArray type=\"Int32\" Name=\"region\" format=\"ascii\">\n          ";
    for (const Cell& c : cells) {
        out << c.region << ' ';
    }
    out << "\n        </DataArray>\n";
    out << "        <DataArray type=\"Float64\" Name=\"quality\" format=\"ascii\">";
    values.clear();
    for (const Cell& c : cells) {
        values.push_back(c.quality);
    }
    writeNumbers(out, values);
    out << "        </DataArray>\n";
    const char* frameNames[3] = {"frame_u", "frame_v", "frame_n"};
    for (int axis = 0; axis < 3; ++axis) {
        out << "        <DataArray type=\"Float64\" Name=\"" << frameNames[axis]
            << "\" NumberOfComponents=\"3\" format=\"ascii\">";
        values.clear();
        for (const Cell& c : cells) {
            values.insert(values.end(), {c.frame(0, axis), c.frame(1, axis), c.frame(2, axis)});
        }
        writeNumbers(out, values);
        out << "        </DataArray>\n";
    }
    out << "      </CellData>\n    </Piece>\n  </UnstructuredGrid>\n</VTKFile>\n";
    return writeFileAtomically(path, out.str());
}

Result<bool> exportMsh(const Scene& scene, const fs::path& path) {
    const std::vector<Vec3> points = exportPoints(scene);
    const std::vector<Cell> cells = collectCells(scene, points);
    // One Gmsh entity per region and cell dimension: volumes for tets, surfaces for triangles.
    // Physical groups carry the names: the body's name, or "air".
    struct Entity {
        int dim = 3;
        int tag = 0;
        int region = 0;
        std::vector<std::size_t> cells;
        Bounds bounds;
    };
    std::vector<Entity> entities;
    auto entityFor = [&](int dim, int region) -> Entity& {
        for (Entity& e : entities) {
            if (e.dim == dim && e.region == region) {
                return e;
            }
        }
        Entity e;
        e.dim = dim;
        e.region = region;
        e.tag = 1 + int(std::count_if(entities.begin(), entities.end(),
                                      [&](const Entity& o) { return o.dim == dim; }));
        entities.push_back(e);
        return entities.back();
    };
    for (std::size_t i = 0; i < cells.size(); ++i) {
        Entity& e = entityFor(cells[i].corners == 4 ? 3 : 2, cells[i].region);
        e.cells.push_back(i);
        for (int k = 0; k < cells[i].corners; ++k) {
            e.bounds.add(points[cells[i].v[k]]);
        }
    }
    // Bodies 1..B, the air B + 1, embedded meshes from B + 2.
    auto physicalTag = [&](int region) {
        return region < 0 ? int(scene.bodies.size()) - region : region + 1;
    };
    auto regionName = [&](int region) {
        return region == -1  ? std::string("air")
               : region < -1 ? scene.embedded[std::size_t(-2 - region)].name
                             : scene.bodies[std::size_t(region)].name;
    };

    std::ostringstream out;
    out << std::setprecision(17);
    out << "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n";
    out << "$PhysicalNames\n" << entities.size() << '\n';
    for (const Entity& e : entities) {
        out << e.dim << ' ' << physicalTag(e.region) << " \"" << regionName(e.region) << "\"\n";
    }
    out << "$EndPhysicalNames\n";
    const auto surfaces =
        std::count_if(entities.begin(), entities.end(), [](const Entity& e) { return e.dim == 2; });
    out << "$Entities\n0 0 " << surfaces << ' ' << entities.size() - std::size_t(surfaces) << '\n';
    for (int dim : {2, 3}) {
        for (const Entity& e : entities) {
            if (e.dim != dim) {
                continue;
            }
            out << e.tag << ' ' << e.bounds.min.x() << ' ' << e.bounds.min.y() << ' '
                << e.bounds.min.z() << ' ' << e.bounds.max.x() << ' ' << e.bounds.max.y() << ' '
                << e.bounds.max.z() << " 1 " << physicalTag(e.region) << " 0\n";
        }
    }
    out << "$EndEntities\n";

    // All nodes in one block on the first entity; node tags are particle index + 1.
    const std::size_t n = points.size();
    const Entity& host = entities.empty() ? Entity{} : entities.front();
    out << "$Nodes\n1 " << n << " 1 " << n << '\n';
    out << host.dim << ' ' << std::max(1, host.tag) << " 0 " << n << '\n';
    for (std::size_t i = 0; i < n; ++i) {
        out << i + 1 << '\n';
    }
    for (const Vec3& p : points) {
        out << p.x() << ' ' << p.y() << ' ' << p.z() << '\n';
    }
    out << "$EndNodes\n";
    out << "$Elements\n" << entities.size() << ' ' << cells.size() << " 1 " << cells.size() << '\n';
    std::size_t tag = 1;
    for (int dim : {2, 3}) {
        for (const Entity& e : entities) {
            if (e.dim != dim) {
                continue;
            }
            out << e.dim << ' ' << e.tag << ' ' << (e.dim == 3 ? 4 : 2) << ' ' << e.cells.size()
                << '\n';
            for (std::size_t i : e.cells) {
                out << tag++;
                for (int k = 0; k < cells[i].corners; ++k) {
                    out << ' ' << cells[i].v[k] + 1;
                }
                out << '\n';
            }
        }
    }
    out << "$EndElements\n";
    return writeFileAtomically(path, out.str());
}

Result<bool> exportTetgen(const Scene& scene, const fs::path& prefix) {
    const std::vector<Cell> cells = collectCells(scene, exportPoints(scene));
    std::ostringstream node;
    node << std::setprecision(17);
    node << "# PBD Lab: " << scene.name << "\n" << scene.particles.size() << " 3 0 0\n";
    for (std::size_t i = 0; i < scene.particles.size(); ++i) {
        const Vec3& p = scene.particles.positions[i];
        node << i << ' ' << p.x() << ' ' << p.y() << ' ' << p.z() << '\n';
    }
    std::ostringstream ele;
    std::size_t tets = 0;
    for (const Cell& c : cells) {
        tets += c.corners == 4;
    }
    ele << "# region attribute: body index, -1 for air\n" << tets << " 4 1\n";
    std::size_t t = 0;
    for (const Cell& c : cells) {
        if (c.corners == 4) {
            ele << t++ << ' ' << c.v[0] << ' ' << c.v[1] << ' ' << c.v[2] << ' ' << c.v[3] << ' '
                << c.region << '\n';
        }
    }
    std::vector<std::pair<Triangle, int>> faces;
    for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
        const Body& body = scene.bodies[b];
        const std::vector<Triangle> surface =
            body.tets.empty() ? body.triangles : boundaryFaces(body.tets);
        for (const Triangle& f : surface) {
            faces.emplace_back(f, int(b) + 1);
        }
    }
    std::ostringstream face;
    face << "# marker: body index + 1\n" << faces.size() << " 1\n";
    for (std::size_t i = 0; i < faces.size(); ++i) {
        const Triangle& f = faces[i].first;
        face << i << ' ' << f[0] << ' ' << f[1] << ' ' << f[2] << ' ' << faces[i].second << '\n';
    }
    const std::string base = prefix.string();
    for (const auto& [suffix, text] : {std::pair{".node", node.str()}, std::pair{".ele", ele.str()},
                                       std::pair{".face", face.str()}}) {
        Result<bool> ok = writeFileAtomically(base + suffix, text);
        if (!ok) {
            return ok;
        }
    }
    return true;
}

} // namespace pbd
