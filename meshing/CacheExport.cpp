#include "meshing/CacheExport.h"

#include "core/rigid/RigidShapeMesh.h"
#include "core/scene/Embedding.h"
#include "core/scene/Topology.h"

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <tiny_gltf.h>

namespace pbd {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

Result<bool> writeBytes(const fs::path& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    out.close();
    if (!out) {
        return Error{"cannot write '" + path.string() + "' (disk full or not writable)"};
    }
    return true;
}

// --- VTK XML unstructured grid, binary appended raw data -------------------------------------

template <class T> constexpr const char* vtkType();
template <> constexpr const char* vtkType<double>() {
    return "Float64";
}
template <> constexpr const char* vtkType<float>() {
    return "Float32";
}
template <> constexpr const char* vtkType<std::int32_t>() {
    return "Int32";
}
template <> constexpr const char* vtkType<std::int64_t>() {
    return "Int64";
}
template <> constexpr const char* vtkType<std::uint8_t>() {
    return "UInt8";
}

struct VtuArray {
    std::string name;
    const char* type;
    int components;
    std::string bytes;
};

template <class T> VtuArray vtuArray(std::string name, int components, const std::vector<T>& v) {
    VtuArray a{std::move(name), vtkType<T>(), components, {}};
    a.bytes.assign(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
    return a;
}

enum : std::uint8_t { kVtkPolyVertex = 2, kVtkTriangle = 5, kVtkTetra = 10 };

// RFC 4648 base64 of `in`, appended to `out`.
void appendBase64(const std::string& in, std::string& out) {
    static constexpr char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const auto* p = reinterpret_cast<const unsigned char*>(in.data());
    const std::size_t n = in.size();
    std::size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        const std::uint32_t v =
            (std::uint32_t(p[i]) << 16) | (std::uint32_t(p[i + 1]) << 8) | p[i + 2];
        out += kAlphabet[v >> 18];
        out += kAlphabet[(v >> 12) & 63];
        out += kAlphabet[(v >> 6) & 63];
        out += kAlphabet[v & 63];
    }
    if (i < n) {
        const std::uint32_t v =
            (std::uint32_t(p[i]) << 16) | (i + 1 < n ? std::uint32_t(p[i + 1]) << 8 : 0);
        out += kAlphabet[v >> 18];
        out += kAlphabet[(v >> 12) & 63];
        out += i + 1 < n ? kAlphabet[(v >> 6) & 63] : '=';
        out += '=';
    }
}

// One grid: points (referenced particles, or points of their own), cells of one size.
struct VtuGrid {
    std::vector<double> points; // xyz
    std::vector<std::int64_t> connectivity, offsets;
    std::vector<std::uint8_t> types;
    std::vector<VtuArray> pointData, cellData;

    std::size_t pointCount() const { return points.size() / 3; }

    void addCell(std::uint8_t type, const std::int64_t* v, int n) {
        connectivity.insert(connectivity.end(), v, v + n);
        offsets.push_back(std::int64_t(connectivity.size()));
        types.push_back(type);
    }

    // Inline binary (each array base64-encoded with its byte count in front), not appended
    // raw data: expat 2.5.0-1+deb12u2 (Debian's security update: reparse deferral) makes VTK
    // 9.1's and ParaView 5.11's readers fail on appended data, raw or base64.
    std::string file() const {
        std::string out;
        out.reserve(64 * 1024 + 4 * (points.size() * 8 + connectivity.size() * 8) / 3);
        const auto array = [&](const VtuArray& a) {
            out += "        <DataArray type=\"";
            out += a.type;
            out += "\" Name=\"" + a.name + "\" NumberOfComponents=\"" +
                   std::to_string(a.components) + "\" format=\"binary\">\n          ";
            const std::uint64_t n = a.bytes.size();
            std::string raw(reinterpret_cast<const char*>(&n), sizeof n);
            raw += a.bytes;
            appendBase64(raw, out);
            out += "\n        </DataArray>\n";
        };
        out += "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" "
               "byte_order=\"LittleEndian\" header_type=\"UInt64\">\n  <UnstructuredGrid>\n"
               "    <Piece NumberOfPoints=\"" +
               std::to_string(pointCount()) + "\" NumberOfCells=\"" + std::to_string(types.size()) +
               "\">\n      <PointData>\n";
        for (const VtuArray& a : pointData) {
            array(a);
        }
        out += "      </PointData>\n      <CellData>\n";
        for (const VtuArray& a : cellData) {
            array(a);
        }
        out += "      </CellData>\n      <Points>\n";
        array(vtuArray("Points", 3, points));
        out += "      </Points>\n      <Cells>\n";
        array(vtuArray("connectivity", 1, connectivity));
        array(vtuArray("offsets", 1, offsets));
        array(vtuArray("types", 1, types));
        out += "      </Cells>\n    </Piece>\n  </UnstructuredGrid>\n</VTKFile>\n";
        return out;
    }
};

// Rows of numbers (arrays, small Eigen vectors) one after the other.
template <class Rows> std::vector<double> flattened(const Rows& rows) {
    std::vector<double> out;
    for (const auto& row : rows) {
        for (Eigen::Index k = 0; k < Eigen::Index(row.size()); ++k) {
            out.push_back(double(row[std::size_t(k)]));
        }
    }
    return out;
}

// Appends a triangle mesh with points of its own to `g`, each triangle tagged `id` in `ids`.
void appendOwnMesh(VtuGrid& g, const std::vector<Vec3>& points,
                   const std::vector<Triangle>& triangles, std::int32_t id,
                   std::vector<std::int32_t>& ids) {
    const std::int64_t first = std::int64_t(g.pointCount());
    for (const Vec3& p : points) {
        g.points.insert(g.points.end(), {p.x(), p.y(), p.z()});
    }
    for (const Triangle& t : triangles) {
        const std::int64_t v[3] = {first + t[0], first + t[1], first + t[2]};
        g.addCell(kVtkTriangle, v, 3);
        ids.push_back(id);
    }
}

// Maps the particles a block's cells use to its own points, in first-use order.
class PointMap {
public:
    explicit PointMap(std::size_t particles)
        : local_(particles, -1) {}
    std::int64_t operator()(Index particle) {
        if (local_[particle] < 0) {
            local_[particle] = std::int64_t(particles_.size());
            particles_.push_back(particle);
        }
        return local_[particle];
    }
    // Fills the grid's points and the per-point particle index and velocity.
    void finish(const Scene& scene, VtuGrid& g) const {
        std::vector<std::int64_t> index(particles_.begin(), particles_.end());
        std::vector<double> velocity;
        g.points.reserve(3 * particles_.size());
        velocity.reserve(3 * particles_.size());
        for (Index p : particles_) {
            const Vec3& x = scene.particles.positions[p];
            const Vec3& v = scene.particles.velocities[p];
            g.points.insert(g.points.end(), {x.x(), x.y(), x.z()});
            velocity.insert(velocity.end(), {v.x(), v.y(), v.z()});
        }
        g.pointData.push_back(vtuArray("particle", 1, index));
        g.pointData.push_back(vtuArray("velocity", 3, velocity));
    }

private:
    std::vector<std::int64_t> local_;
    std::vector<Index> particles_;
};

// Per particle: the body it belongs to, -1 for the air's own points and anything else.
std::vector<std::int32_t> particleBodies(const Scene& scene) {
    std::vector<std::int32_t> body(scene.particles.size(), -1);
    for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
        const Body& bd = scene.bodies[b];
        for (Index i = bd.firstParticle; i < bd.firstParticle + bd.particleCount && i < body.size();
             ++i) {
            body[i] = std::int32_t(b);
        }
    }
    return body;
}

// --- The deformable surface the point cache and the glTF file carry --------------------------

struct SurfaceGroup {
    std::string name;
    std::size_t firstTriangle = 0, triangles = 0;
};

// Every body's triangles except a cage's (the mesh it carries stands in for it), then the
// carried meshes; vertices are the particles used (in first-use order) and the carried
// meshes' own vertices.
struct DeformingSurface {
    std::vector<Index> particles;     // the first particles.size() vertices
    std::vector<std::size_t> carried; // the embedded meshes after them
    std::vector<Triangle> triangles;  // local vertex indices
    std::vector<SurfaceGroup> groups;
    std::size_t vertexCount = 0;

    static DeformingSurface of(const Scene& scene) {
        DeformingSurface s;
        std::vector<std::int64_t> local(scene.particles.size(), -1);
        for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
            const Body& body = scene.bodies[b];
            if (body.triangles.empty() || carriesEmbedded(scene, b)) {
                continue;
            }
            SurfaceGroup g{body.name, s.triangles.size(), body.triangles.size()};
            for (const Triangle& t : body.triangles) {
                Triangle lt;
                for (int k = 0; k < 3; ++k) {
                    if (local[t[k]] < 0) {
                        local[t[k]] = std::int64_t(s.particles.size());
                        s.particles.push_back(t[k]);
                    }
                    lt[k] = Index(local[t[k]]);
                }
                s.triangles.push_back(lt);
            }
            s.groups.push_back(g);
        }
        std::size_t next = s.particles.size();
        for (std::size_t e = 0; e < scene.embedded.size(); ++e) {
            const EmbeddedMesh& m = scene.embedded[e];
            s.carried.push_back(e);
            s.groups.push_back({m.name, s.triangles.size(), m.triangles.size()});
            for (const Triangle& t : m.triangles) {
                s.triangles.push_back({Index(next + t[0]), Index(next + t[1]), Index(next + t[2])});
            }
            next += m.vertexCount();
        }
        s.vertexCount = next;
        return s;
    }

    void positions(const Scene& scene, std::vector<float>& out) const {
        out.clear();
        out.reserve(3 * vertexCount);
        for (Index p : particles) {
            const Vec3& x = scene.particles.positions[p];
            out.insert(out.end(), {float(x.x()), float(x.y()), float(x.z())});
        }
        std::vector<Vec3> carriedNow;
        for (std::size_t e : carried) {
            embeddedPositions(scene.embedded[e], scene.particles.positions, carriedNow);
            for (const Vec3& x : carriedNow) {
                out.insert(out.end(), {float(x.x()), float(x.y()), float(x.z())});
            }
        }
    }
};

struct RigidFrame {
    std::vector<Vec3> x;
    std::vector<Quat> q;
};

} // namespace

struct CacheExporter::Impl {
    CacheExportOptions options;
    RestFrames rest;
    std::string name;
    fs::path frameFolder; // NAME_frames/
    std::size_t particleCount = 0;
    DeformingSurface surface;
    std::vector<float> restSurface; // positions at begin
    std::vector<std::vector<float>> surfaceFrames;
    std::vector<ShapeMesh> rigidMeshes; // per body, body frame
    std::vector<std::string> rigidNames;
    std::vector<RigidFrame> rigidFrames;
    std::vector<Real> times;
    struct PvdEntry {
        Real time;
        int part;
        std::string name, file;
    };
    std::vector<PvdEntry> pvd;
    std::string topologyChange; // set when the scene tore: the surface caches cannot follow
    double pvdMs = 0;

    Result<bool> writeVtuFrame(const Scene& scene, Real time);
};

CacheExporter::CacheExporter()
    : impl_(std::make_unique<Impl>()) {}
CacheExporter::~CacheExporter() = default;

std::size_t CacheExporter::frames() const {
    return impl_->times.size();
}

Result<unsigned> parseCacheFormats(std::string_view list) {
    unsigned formats = 0;
    std::size_t start = 0;
    while (start <= list.size()) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        const std::string_view f = list.substr(start, comma - start);
        if (f == "pvd") {
            formats |= kCachePvd;
        } else if (f == "glb") {
            formats |= kCacheGlb;
        } else if (f == "pc2") {
            formats |= kCachePc2;
        } else if (f == "all") {
            formats |= kCacheAllFormats;
        } else {
            return Error{"unknown cache format '" + std::string(f) +
                         "': use pvd, glb, pc2 (comma-separated) or all"};
        }
        start = comma + 1;
    }
    return formats;
}

std::string cacheFormatNames(unsigned formats) {
    std::string out;
    for (auto [bit, name] : {std::pair{kCachePvd, "pvd"}, {kCacheGlb, "glb"}, {kCachePc2, "pc2"}}) {
        if (formats & bit) {
            out += (out.empty() ? "" : ",") + std::string(name);
        }
    }
    return out;
}

Result<std::unique_ptr<CacheExporter>> CacheExporter::begin(const Scene& scene, RestFrames rest,
                                                            CacheExportOptions options) {
    if (options.formats == 0) {
        return Error{"no cache format chosen: use pvd, glb, pc2 or all"};
    }
    std::unique_ptr<CacheExporter> e(new CacheExporter());
    Impl& d = *e->impl_;
    d.name = !options.name.empty() ? options.name : !scene.name.empty() ? scene.name : "cache";
    d.options = std::move(options);
    d.rest = std::move(rest);
    d.particleCount = scene.particles.size();
    std::error_code ec;
    fs::create_directories(d.options.folder, ec);
    if (ec || !fs::is_directory(d.options.folder)) {
        return Error{"cannot make the cache folder '" + d.options.folder.string() +
                     "': " + (ec ? ec.message() : "not a folder")};
    }
    if (d.options.formats & kCachePvd) {
        d.frameFolder = d.options.folder / (d.name + "_frames");
        fs::create_directories(d.frameFolder, ec);
        if (ec) {
            return Error{"cannot make '" + d.frameFolder.string() + "': " + ec.message()};
        }
    }
    if (d.options.formats & (kCacheGlb | kCachePc2)) {
        d.surface = DeformingSurface::of(scene);
        d.surface.positions(scene, d.restSurface);
        for (const RigidBody& b : scene.rigidBodies) {
            d.rigidMeshes.push_back(rigidBodyMesh(b));
            d.rigidNames.push_back(b.name);
        }
    }
    if ((d.options.formats & kCacheGlb) && d.surface.vertexCount == 0 && d.rigidMeshes.empty()) {
        return Error{"the scene has no deforming surface and no rigid bodies to animate in a "
                     "glTF file: write pvd"};
    }
    if (d.options.formats & kCachePc2) {
        if (d.surface.vertexCount == 0) {
            return Error{"the scene has no deforming surface (cloth, soft-body or carried mesh "
                         "triangles) for a point cache: write pvd or glb"};
        }
        // The rest mesh the point cache's vertices are the vertices of, in the same order.
        std::string obj = "# PBD Lab rest mesh for " + d.name + ".pc2 (" +
                          std::to_string(d.surface.vertexCount) +
                          " vertices, in the cache's "
                          "order)\no " +
                          d.name + "\n";
        char line[128];
        for (std::size_t i = 0; i < d.surface.vertexCount; ++i) {
            std::snprintf(line, sizeof line, "v %.9g %.9g %.9g\n", double(d.restSurface[3 * i]),
                          double(d.restSurface[3 * i + 1]), double(d.restSurface[3 * i + 2]));
            obj += line;
        }
        for (const SurfaceGroup& g : d.surface.groups) {
            obj += "g " + g.name + "\n";
            for (std::size_t t = g.firstTriangle; t < g.firstTriangle + g.triangles; ++t) {
                const Triangle& tri = d.surface.triangles[t];
                std::snprintf(line, sizeof line, "f %u %u %u\n", tri[0] + 1, tri[1] + 1,
                              tri[2] + 1);
                obj += line;
            }
        }
        if (Result<bool> w = writeBytes(d.options.folder / (d.name + ".obj"), obj); !w) {
            return Error{w.error()};
        }
    }
    return e;
}

Result<bool> CacheExporter::Impl::writeVtuFrame(const Scene& scene, Real time) {
    const auto t0 = Clock::now();
    const std::size_t frame = times.size();
    const std::vector<std::int32_t> owner = particleBodies(scene);
    std::vector<std::pair<std::string, VtuGrid>> blocks;

    if (!scene.particles.positions.empty()) { // every particle, one poly-vertex cell
        VtuGrid g;
        PointMap map(scene.particles.size());
        std::vector<std::int64_t> all(scene.particles.size());
        for (Index i = 0; i < scene.particles.size(); ++i) {
            all[i] = map(i);
        }
        g.addCell(kVtkPolyVertex, all.data(), int(all.size()));
        map.finish(scene, g);
        g.pointData.push_back(vtuArray("inverse_mass", 1, scene.particles.inverseMasses));
        g.pointData.push_back(vtuArray("body", 1, owner));
        blocks.emplace_back("particles", std::move(g));
    }
    const bool fieldsMatch = rest.tetQInverse.size() == scene.tetCount() &&
                             rest.triangleQInverse.size() == scene.triangleCount();
    const ElementFields fields = fieldsMatch ? computeElementFields(scene, rest) : ElementFields{};
    const auto& x = scene.particles.positions;
    if (scene.tetCount() > 0) {
        VtuGrid g;
        PointMap map(scene.particles.size());
        std::vector<std::int32_t> body;
        std::vector<double> quality;
        for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
            for (const Tetrahedron& t : scene.bodies[b].tets) {
                const std::int64_t v[4] = {map(t[0]), map(t[1]), map(t[2]), map(t[3])};
                g.addCell(kVtkTetra, v, 4);
                body.push_back(std::int32_t(b));
                quality.push_back(tetQuality(x[t[0]], x[t[1]], x[t[2]], x[t[3]]));
            }
        }
        map.finish(scene, g);
        g.cellData.push_back(vtuArray("body", 1, body));
        g.cellData.push_back(vtuArray("quality", 1, quality));
        if (fieldsMatch) {
            g.cellData.push_back(vtuArray("green_strain", 6, flattened(fields.tetGreenStrain)));
            g.cellData.push_back(
                vtuArray("principal_stretch", 3, flattened(fields.tetPrincipalStretch)));
            g.cellData.push_back(vtuArray("volume_ratio", 1, fields.tetVolumeRatio));
        }
        blocks.emplace_back("tets", std::move(g));
    }
    if (scene.triangleCount() > 0) {
        VtuGrid g;
        PointMap map(scene.particles.size());
        std::vector<std::int32_t> body;
        for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
            for (const Triangle& t : scene.bodies[b].triangles) {
                const std::int64_t v[3] = {map(t[0]), map(t[1]), map(t[2])};
                g.addCell(kVtkTriangle, v, 3);
                body.push_back(std::int32_t(b));
            }
        }
        map.finish(scene, g);
        g.cellData.push_back(vtuArray("body", 1, body));
        if (fieldsMatch) {
            g.cellData.push_back(
                vtuArray("green_strain", 3, flattened(fields.triangleGreenStrain)));
            g.cellData.push_back(
                vtuArray("principal_stretch", 2, flattened(fields.trianglePrincipalStretch)));
            g.cellData.push_back(vtuArray("area_ratio", 1, fields.triangleAreaRatio));
        }
        blocks.emplace_back("surfaces", std::move(g));
    }
    if (!scene.air.empty()) {
        VtuGrid g;
        PointMap map(scene.particles.size());
        std::vector<double> quality;
        std::vector<std::uint8_t> inverted;
        for (const Tetrahedron& t : scene.air.tets) {
            const std::int64_t v[4] = {map(t[0]), map(t[1]), map(t[2]), map(t[3])};
            g.addCell(kVtkTetra, v, 4);
            quality.push_back(tetQuality(x[t[0]], x[t[1]], x[t[2]], x[t[3]]));
            inverted.push_back(signedVolume(x[t[0]], x[t[1]], x[t[2]], x[t[3]]) <= 0);
        }
        for (const Triangle& t : scene.air.triangles) {
            const std::int64_t v[3] = {map(t[0]), map(t[1]), map(t[2])};
            g.addCell(kVtkTriangle, v, 3);
            quality.push_back(triangleQuality(x[t[0]], x[t[1]], x[t[2]]));
            const Real area2 = (x[t[1]] - x[t[0]]).cross(x[t[2]] - x[t[0]]).z();
            inverted.push_back(area2 <= 0);
        }
        map.finish(scene, g);
        g.cellData.push_back(vtuArray("quality", 1, quality));
        g.cellData.push_back(vtuArray("inverted", 1, inverted));
        blocks.emplace_back("air", std::move(g));
    }
    if (!scene.rigidBodies.empty()) {
        VtuGrid g;
        std::vector<std::int32_t> body;
        std::vector<double> velocity;
        for (std::size_t b = 0; b < scene.rigidBodies.size(); ++b) {
            const RigidBody& rb = scene.rigidBodies[b];
            ShapeMesh mesh = rigidBodyMesh(rb);
            for (Vec3& p : mesh.vertices) {
                p = rb.toWorld(p);
                const Vec3 v = rb.velocityAt(p);
                velocity.insert(velocity.end(), {v.x(), v.y(), v.z()});
            }
            appendOwnMesh(g, mesh.vertices, mesh.triangles, std::int32_t(b), body);
        }
        g.pointData.push_back(vtuArray("velocity", 3, velocity));
        g.cellData.push_back(vtuArray("body", 1, body));
        blocks.emplace_back("rigid", std::move(g));
    }
    if (!scene.embedded.empty()) {
        VtuGrid g;
        std::vector<std::int32_t> mesh;
        std::vector<Vec3> carried;
        for (std::size_t e = 0; e < scene.embedded.size(); ++e) {
            embeddedPositions(scene.embedded[e], scene.particles.positions, carried);
            appendOwnMesh(g, carried, scene.embedded[e].triangles, std::int32_t(e), mesh);
        }
        g.cellData.push_back(vtuArray("embedded_mesh", 1, mesh));
        blocks.emplace_back("embedded", std::move(g));
    }

    char stem[64];
    std::snprintf(stem, sizeof stem, "%06zu", frame);
    for (std::size_t b = 0; b < blocks.size(); ++b) {
        const std::string file = std::string(stem) + "_" + blocks[b].first + ".vtu";
        if (Result<bool> w = writeBytes(frameFolder / file, blocks[b].second.file()); !w) {
            return w;
        }
        // The part number is the block's kind, so a block keeps its number when another one
        // is absent in some frames.
        static const char* kinds[] = {"particles", "tets", "surfaces", "air", "rigid", "embedded"};
        const int part =
            int(std::find(std::begin(kinds), std::end(kinds), blocks[b].first) - std::begin(kinds));
        pvd.push_back(
            {time, part, blocks[b].first, (frameFolder.filename() / file).generic_string()});
    }
    pvdMs += msSince(t0);
    return true;
}

Result<bool> CacheExporter::addFrame(const Scene& scene, Real time) {
    Impl& d = *impl_;
    if (!d.times.empty() && !(time > d.times.back())) {
        return Error{"cache frames must come in increasing time: " + std::to_string(time) +
                     " s after " + std::to_string(d.times.back()) + " s"};
    }
    if (d.options.formats & kCachePvd) {
        if (Result<bool> w = d.writeVtuFrame(scene, time); !w) {
            return w;
        }
    }
    if ((d.options.formats & (kCacheGlb | kCachePc2)) && d.topologyChange.empty()) {
        if (scene.particles.size() != d.particleCount) {
            char msg[200];
            std::snprintf(msg, sizeof msg,
                          "the scene tore at %.4g s (%zu particles, %zu at the start)",
                          double(time), scene.particles.size(), d.particleCount);
            d.topologyChange = msg;
        } else {
            d.surfaceFrames.emplace_back();
            d.surface.positions(scene, d.surfaceFrames.back());
            RigidFrame r;
            for (const RigidBody& b : scene.rigidBodies) {
                r.x.push_back(b.x);
                r.q.push_back(b.q);
            }
            d.rigidFrames.push_back(std::move(r));
        }
    }
    d.times.push_back(time);
    return true;
}

namespace {

// Appends `bytes` to buffer 0 as a view (4-byte aligned) and an accessor; returns its index.
int addAccessor(tinygltf::Model& m, const void* data, std::size_t bytes, std::size_t count,
                int componentType, int type, int target = 0) {
    tinygltf::Buffer& buffer = m.buffers[0];
    while (buffer.data.size() % 4 != 0) {
        buffer.data.push_back(0);
    }
    tinygltf::BufferView view;
    view.buffer = 0;
    view.byteOffset = buffer.data.size();
    view.byteLength = bytes;
    view.target = target;
    const auto* p = static_cast<const unsigned char*>(data);
    buffer.data.insert(buffer.data.end(), p, p + bytes);
    m.bufferViews.push_back(view);
    tinygltf::Accessor a;
    a.bufferView = int(m.bufferViews.size() - 1);
    a.componentType = componentType;
    a.count = count;
    a.type = type;
    m.accessors.push_back(a);
    return int(m.accessors.size() - 1);
}

void setBounds(tinygltf::Accessor& a, const std::vector<float>& xyz) {
    std::vector<double> lo(3, 1e300), hi(3, -1e300);
    for (std::size_t i = 0; i + 2 < xyz.size(); i += 3) {
        for (int k = 0; k < 3; ++k) {
            lo[k] = std::min(lo[k], double(xyz[i + k]));
            hi[k] = std::max(hi[k], double(xyz[i + k]));
        }
    }
    a.minValues = lo;
    a.maxValues = hi;
}

int addMesh(tinygltf::Model& m, const std::string& name, const std::vector<float>& positions,
            const std::vector<Triangle>& triangles) {
    const int pos = addAccessor(m, positions.data(), positions.size() * sizeof(float),
                                positions.size() / 3, TINYGLTF_COMPONENT_TYPE_FLOAT,
                                TINYGLTF_TYPE_VEC3, TINYGLTF_TARGET_ARRAY_BUFFER);
    setBounds(m.accessors[pos], positions);
    const int idx = addAccessor(m, triangles.data(), triangles.size() * sizeof(Triangle),
                                triangles.size() * 3, TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT,
                                TINYGLTF_TYPE_SCALAR, TINYGLTF_TARGET_ELEMENT_ARRAY_BUFFER);
    tinygltf::Primitive prim;
    prim.attributes["POSITION"] = pos;
    prim.indices = idx;
    prim.mode = TINYGLTF_MODE_TRIANGLES;
    tinygltf::Mesh mesh;
    mesh.name = name;
    mesh.primitives.push_back(prim);
    m.meshes.push_back(mesh);
    return int(m.meshes.size() - 1);
}

} // namespace

Result<CacheExportSummary> CacheExporter::finish() {
    Impl& d = *impl_;
    CacheExportSummary summary;
    summary.frames = d.times.size();
    summary.surfaceVertices = d.surface.vertexCount;
    summary.pvdMilliseconds = d.pvdMs;
    if (d.times.empty()) {
        return Error{"the cache has no frames"};
    }
    if (d.options.formats & kCachePvd) {
        const auto t0 = Clock::now();
        std::ostringstream xml;
        xml.precision(17);
        xml << "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" "
               "byte_order=\"LittleEndian\">\n  <Collection>\n";
        for (const Impl::PvdEntry& e : d.pvd) {
            xml << "    <DataSet timestep=\"" << e.time << "\" group=\"\" part=\"" << e.part
                << "\" name=\"" << e.name << "\" file=\"" << e.file << "\"/>\n";
        }
        xml << "  </Collection>\n</VTKFile>\n";
        const fs::path path = d.options.folder / (d.name + ".pvd");
        if (Result<bool> w = writeBytes(path, xml.str()); !w) {
            return Error{w.error()};
        }
        summary.files.push_back(path);
        summary.pvdMilliseconds += msSince(t0);
    }
    if (!d.topologyChange.empty() && (d.options.formats & (kCacheGlb | kCachePc2))) {
        return Error{d.topologyChange +
                     ": a point cache and a glTF morph animation need a "
                     "fixed mesh, so the .pc2 and .glb were not written" +
                     ((d.options.formats & kCachePvd) ? " (the .pvd collection is complete)"
                                                      : "; write pvd, which follows tearing")};
    }
    if (d.options.formats & kCachePc2) {
        summary.files.insert(summary.files.begin(), d.options.folder / (d.name + ".obj"));
        const auto t0 = Clock::now();
        std::string bytes(12, '\0');
        std::memcpy(bytes.data(), "POINTCACHE2", 11);
        const auto put = [&](const auto& v) {
            bytes.append(reinterpret_cast<const char*>(&v), sizeof v);
        };
        put(std::int32_t(1));                      // file version
        put(std::int32_t(d.surface.vertexCount));  // points
        put(float(0));                             // start frame
        put(float(1));                             // sample rate: one per frame
        put(std::int32_t(d.surfaceFrames.size())); // samples
        for (const std::vector<float>& f : d.surfaceFrames) {
            bytes.append(reinterpret_cast<const char*>(f.data()), f.size() * sizeof(float));
        }
        const fs::path path = d.options.folder / (d.name + ".pc2");
        if (Result<bool> w = writeBytes(path, bytes); !w) {
            return Error{w.error()};
        }
        summary.files.push_back(path);
        summary.pc2Milliseconds = msSince(t0);
    }
    if (d.options.formats & kCacheGlb) {
        const auto t0 = Clock::now();
        tinygltf::Model m;
        m.asset.version = "2.0";
        m.asset.generator = "PBD Lab";
        m.buffers.emplace_back();
        tinygltf::Scene scene;
        scene.name = d.name;
        tinygltf::Animation anim;
        anim.name = d.name;
        std::vector<float> times(d.times.begin(),
                                 d.times.begin() + std::ptrdiff_t(d.surfaceFrames.size()));
        const int input = addAccessor(m, times.data(), times.size() * sizeof(float), times.size(),
                                      TINYGLTF_COMPONENT_TYPE_FLOAT, TINYGLTF_TYPE_SCALAR);
        m.accessors[input].minValues = {double(times.front())};
        m.accessors[input].maxValues = {double(times.back())};
        const std::size_t n = d.surfaceFrames.size();
        if (d.surface.vertexCount > 0) {
            const int mesh = addMesh(m, d.name, d.restSurface, d.surface.triangles);
            // One morph target per frame: its displacement from the rest mesh; the weights
            // pick frame i at time i (linear in between, which moves every vertex linearly).
            std::vector<float> delta(d.restSurface.size());
            for (const std::vector<float>& f : d.surfaceFrames) {
                for (std::size_t i = 0; i < delta.size(); ++i) {
                    delta[i] = f[i] - d.restSurface[i];
                }
                const int target = addAccessor(m, delta.data(), delta.size() * sizeof(float),
                                               delta.size() / 3, TINYGLTF_COMPONENT_TYPE_FLOAT,
                                               TINYGLTF_TYPE_VEC3, TINYGLTF_TARGET_ARRAY_BUFFER);
                setBounds(m.accessors[target], delta);
                m.meshes[mesh].primitives[0].targets.push_back({{"POSITION", target}});
            }
            m.meshes[mesh].weights.assign(n, 0.0);
            tinygltf::Node node;
            node.name = d.name;
            node.mesh = mesh;
            m.nodes.push_back(node);
            scene.nodes.push_back(int(m.nodes.size() - 1));
            std::vector<float> weights(n * n, 0.0f);
            for (std::size_t i = 0; i < n; ++i) {
                weights[i * n + i] = 1;
            }
            const int output =
                addAccessor(m, weights.data(), weights.size() * sizeof(float), weights.size(),
                            TINYGLTF_COMPONENT_TYPE_FLOAT, TINYGLTF_TYPE_SCALAR);
            tinygltf::AnimationSampler sampler;
            sampler.input = input;
            sampler.output = output;
            sampler.interpolation = "LINEAR";
            anim.samplers.push_back(sampler);
            tinygltf::AnimationChannel channel;
            channel.sampler = int(anim.samplers.size() - 1);
            channel.target_node = int(m.nodes.size() - 1);
            channel.target_path = "weights";
            anim.channels.push_back(channel);
        }
        for (std::size_t b = 0; b < d.rigidMeshes.size(); ++b) {
            std::vector<float> local;
            for (const Vec3& v : d.rigidMeshes[b].vertices) {
                local.insert(local.end(), {float(v.x()), float(v.y()), float(v.z())});
            }
            const std::string name =
                d.rigidNames[b].empty() ? "rigid " + std::to_string(b) : d.rigidNames[b];
            tinygltf::Node node;
            node.name = name;
            node.mesh = addMesh(m, name, local, d.rigidMeshes[b].triangles);
            const RigidFrame& first = d.rigidFrames.front();
            node.translation = {first.x[b].x(), first.x[b].y(), first.x[b].z()};
            node.rotation = {first.q[b].x(), first.q[b].y(), first.q[b].z(), first.q[b].w()};
            m.nodes.push_back(node);
            const int nodeIndex = int(m.nodes.size() - 1);
            scene.nodes.push_back(nodeIndex);
            std::vector<float> translation, rotation;
            for (const RigidFrame& f : d.rigidFrames) {
                translation.insert(translation.end(),
                                   {float(f.x[b].x()), float(f.x[b].y()), float(f.x[b].z())});
                rotation.insert(rotation.end(), {float(f.q[b].x()), float(f.q[b].y()),
                                                 float(f.q[b].z()), float(f.q[b].w())});
            }
            for (const auto& [path, values, type] :
                 {std::tuple{"translation", &translation, TINYGLTF_TYPE_VEC3},
                  std::tuple{"rotation", &rotation, TINYGLTF_TYPE_VEC4}}) {
                const int output = addAccessor(m, values->data(), values->size() * sizeof(float), n,
                                               TINYGLTF_COMPONENT_TYPE_FLOAT, type);
                tinygltf::AnimationSampler sampler;
                sampler.input = input;
                sampler.output = output;
                sampler.interpolation = "LINEAR";
                anim.samplers.push_back(sampler);
                tinygltf::AnimationChannel channel;
                channel.sampler = int(anim.samplers.size() - 1);
                channel.target_node = nodeIndex;
                channel.target_path = path;
                anim.channels.push_back(channel);
            }
        }
        if (!anim.channels.empty()) {
            m.animations.push_back(anim);
        }
        m.scenes.push_back(scene);
        m.defaultScene = 0;
        const fs::path path = d.options.folder / (d.name + ".glb");
        tinygltf::TinyGLTF writer;
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        if (!out || !writer.WriteGltfSceneToStream(&m, out, false, true) || !out.flush()) {
            return Error{"cannot write '" + path.string() + "' (disk full or not writable)"};
        }
        summary.files.push_back(path);
        summary.glbMilliseconds = msSince(t0);
    }
    return summary;
}

} // namespace pbd
