#include "meshing/MeshImport.h"

#include "meshing/ContainedProcess.h"
#include "meshing/MeshReaders.h"
#include "meshing/SurfaceAssembly.h"

#include <algorithm>
#include <assimp/Importer.hpp>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <cctype>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <tiny_obj_loader.h>

namespace pbd {

namespace fs = std::filesystem;

std::string lowerExtension(const fs::path& path) {
    std::string ext = path.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    return ext;
}

// `name` with every byte that is not part of a valid UTF-8 sequence replaced by '?': names come
// from files in any encoding, and go to JSON, the window and messages.
std::string validUtf8(const std::string& name) {
    std::string out;
    out.reserve(name.size());
    const auto* s = reinterpret_cast<const unsigned char*>(name.data());
    const std::size_t n = name.size();
    for (std::size_t i = 0; i < n;) {
        const unsigned char c = s[i];
        const int length = c < 0x80           ? 1
                           : (c >> 5) == 0x6  ? 2
                           : (c >> 4) == 0xE  ? 3
                           : (c >> 3) == 0x1E ? 4
                                              : 0;
        bool ok = length > 0 && i + std::size_t(length) <= n;
        for (int k = 1; ok && k < length; ++k) {
            ok = (s[i + std::size_t(k)] & 0xC0) == 0x80;
        }
        if (ok && length > 1) {
            // No overlong forms, surrogates or code points past U+10FFFF.
            std::uint32_t cp = c & (0xFF >> (length + 1));
            for (int k = 1; k < length; ++k) {
                cp = (cp << 6) | (s[i + std::size_t(k)] & 0x3F);
            }
            static const std::uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
            ok = cp >= least[length] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
        }
        if (ok && c >= 0x20 && c != 0x7F) {
            out.append(name, i, std::size_t(length));
            i += std::size_t(length);
        } else {
            out += ok && length == 1 ? ' ' : '?'; // a control character, or a bad byte
            i += ok ? std::size_t(length) : 1;
        }
    }
    return out;
}

namespace {

// "mesh" or "mesh-2": the name of an unnamed part of a file with `count` parts.
std::string partName(const fs::path& path, std::size_t index, std::size_t count) {
    std::string name = path.stem().string();
    if (count > 1) {
        name += '-';
        name += std::to_string(index);
    }
    return name;
}

// tinyobjloader reads a coordinate such as "nan" or "inf" as 0 without a word; find the
// vertices (0-based, in file order) whose coordinates are not finite numbers.
std::vector<bool> nonFiniteObjVertices(const fs::path& path) {
    std::vector<bool> bad;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        if (line.size() < 2 || line[0] != 'v' || (line[1] != ' ' && line[1] != '\t')) {
            continue;
        }
        std::istringstream fields(line.substr(2));
        std::string token;
        bool finite = true;
        for (int axis = 0; axis < 3 && fields >> token; ++axis) {
            char* end = nullptr;
            const double value = std::strtod(token.c_str(), &end);
            finite = finite && end != token.c_str() && *end == '\0' && std::isfinite(value);
        }
        bad.push_back(!finite);
    }
    return bad;
}

Result<std::vector<TriangleSoup>> readObj(const fs::path& path, const ImportOptions& options) {
    tinyobj::ObjReaderConfig config;
    config.triangulate = true;
    config.vertex_color = false;
    config.mtl_search_path = path.parent_path().string();
    tinyobj::ObjReader reader;
    if (!reader.ParseFromFile(path.string(), config)) {
        std::string why = reader.Error();
        while (!why.empty() && (why.back() == '\n' || why.back() == '\r')) {
            why.pop_back();
        }
        return Error{"cannot read OBJ '" + path.string() +
                     "': " + (why.empty() ? "parse error" : why)};
    }
    const tinyobj::attrib_t& attrib = reader.GetAttrib();
    const std::vector<bool> nonFinite = nonFiniteObjVertices(path);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<TriangleSoup> soups;
    const auto& shapes = reader.GetShapes();
    for (std::size_t s = 0; s < shapes.size(); ++s) {
        const tinyobj::shape_t& shape = shapes[s];
        TriangleSoup soup;
        soup.name = shape.name.empty() ? partName(path, s, shapes.size()) : shape.name;
        bool allHaveUVs = true;
        std::size_t offset = 0;
        for (unsigned char faceSize : shape.mesh.num_face_vertices) {
            if (faceSize != 3) { // triangulation failed for this face; skip it
                offset += faceSize;
                continue;
            }
            for (int c = 0; c < 3; ++c) {
                const tinyobj::index_t idx = shape.mesh.indices[offset + c];
                if (idx.vertex_index < 0 ||
                    3 * std::size_t(idx.vertex_index) + 2 >= attrib.vertices.size()) {
                    return Error{"OBJ '" + path.string() + "', object '" + soup.name +
                                 "': face refers to missing vertex " +
                                 std::to_string(std::int64_t(idx.vertex_index) + 1)};
                }
                if (std::size_t(idx.vertex_index) < nonFinite.size() &&
                    nonFinite[idx.vertex_index]) {
                    soup.corners.emplace_back(nan, nan,
                                              nan); // dropped and reported by assembleBody
                } else {
                    soup.corners.emplace_back(
                        attrib.vertices[3 * std::size_t(idx.vertex_index)] * options.scale,
                        attrib.vertices[3 * std::size_t(idx.vertex_index) + 1] * options.scale,
                        attrib.vertices[3 * std::size_t(idx.vertex_index) + 2] * options.scale);
                }
                if (idx.texcoord_index >= 0 &&
                    2 * std::size_t(idx.texcoord_index) + 1 < attrib.texcoords.size()) {
                    soup.uvs.emplace_back(
                        attrib.texcoords[2 * std::size_t(idx.texcoord_index)],
                        attrib.texcoords[2 * std::size_t(idx.texcoord_index) + 1]);
                } else {
                    allHaveUVs = false;
                }
            }
            offset += 3;
        }
        if (!allHaveUVs) {
            soup.uvs.clear();
        }
        if (!soup.corners.empty()) {
            soups.push_back(std::move(soup));
        }
    }
    return soups;
}

Result<std::vector<TriangleSoup>> readWithAssimp(const fs::path& path,
                                                 const ImportOptions& options) {
    Assimp::Importer importer;
    importer.SetPropertyInteger(AI_CONFIG_PP_SBP_REMOVE,
                                aiPrimitiveType_POINT | aiPrimitiveType_LINE);
    const aiScene* scene =
        importer.ReadFile(path.string(), aiProcess_Triangulate | aiProcess_PreTransformVertices |
                                             aiProcess_SortByPType);
    if (scene == nullptr) {
        return Error{"cannot read '" + path.string() + "': " + importer.GetErrorString()};
    }
    std::vector<TriangleSoup> soups;
    for (unsigned m = 0; m < scene->mNumMeshes; ++m) {
        const aiMesh* mesh = scene->mMeshes[m];
        TriangleSoup soup;
        soup.name = mesh->mName.length > 0 ? std::string(mesh->mName.C_Str())
                                           : partName(path, m, scene->mNumMeshes);
        const bool hasUVs = mesh->HasTextureCoords(0);
        for (unsigned f = 0; f < mesh->mNumFaces; ++f) {
            const aiFace& face = mesh->mFaces[f];
            if (face.mNumIndices != 3) {
                continue;
            }
            for (unsigned c = 0; c < 3; ++c) {
                const aiVector3D& v = mesh->mVertices[face.mIndices[c]];
                soup.corners.emplace_back(v.x * options.scale, v.y * options.scale,
                                          v.z * options.scale);
                if (hasUVs) {
                    const aiVector3D& uv = mesh->mTextureCoords[0][face.mIndices[c]];
                    soup.uvs.emplace_back(uv.x, uv.y);
                }
            }
        }
        if (!soup.corners.empty()) {
            soups.push_back(std::move(soup));
        }
    }
    return soups;
}

// What a reader in the child sends back: the parts (or the reader's message), then warnings.
void putString(std::string& out, const std::string& s) {
    const std::uint64_t size = s.size();
    out.append(reinterpret_cast<const char*>(&size), sizeof size);
    out += s;
}

template <class T> void putValues(std::string& out, const std::vector<T>& values) {
    const std::uint64_t size = values.size();
    out.append(reinterpret_cast<const char*>(&size), sizeof size);
    out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

template <class T> bool getValues(ResultReader& in, std::vector<T>& values) {
    std::uint64_t size = 0;
    if (!in.read(size) || size > in.remaining() / sizeof(T)) {
        return false;
    }
    values.resize(std::size_t(size));
    return in.read(values.data(), values.size() * sizeof(T));
}

std::string encode(const Result<std::vector<TriangleSoup>>& read) {
    std::string out;
    out += read ? '\1' : '\0';
    if (!read) {
        putString(out, read.error());
        return out;
    }
    const std::uint64_t parts = read->size();
    out.append(reinterpret_cast<const char*>(&parts), sizeof parts);
    for (const TriangleSoup& soup : *read) {
        putString(out, soup.name);
        putValues(out, soup.corners);
        putValues(out, soup.uvs);
    }
    return out;
}

Result<std::vector<TriangleSoup>> decode(const std::string& bytes, const std::string& reader) {
    ResultReader in(bytes);
    char ok = 0;
    std::string message;
    if (!in.read(ok)) {
        return Error{reader + " returned nothing"};
    }
    if (ok == 0) {
        if (!in.readString(message)) {
            return Error{reader + " returned a truncated message"};
        }
        return Error{message};
    }
    std::uint64_t parts = 0;
    if (!in.read(parts) || parts > in.remaining() / 24) {
        return Error{reader + " returned a truncated mesh"};
    }
    std::vector<TriangleSoup> soups(parts);
    for (TriangleSoup& soup : soups) {
        if (!in.readString(soup.name) || !getValues(in, soup.corners) || !getValues(in, soup.uvs)) {
            return Error{reader + " returned a truncated mesh"};
        }
    }
    return soups;
}

// A third-party reader (tinyobjloader, assimp) in a child process: a crash, a hang or an
// allocation it cannot make costs the child only.
Result<std::vector<TriangleSoup>>
readContained(const fs::path& path, const ImportOptions& options, const ProgressCallback& progress,
              const std::string& reader,
              const std::function<Result<std::vector<TriangleSoup>>()>& read) {
    Result<std::string> bytes =
        readContainedBytes(path, options, progress, reader, [&] { return encode(read()); });
    if (!bytes) {
        return Error{bytes.error()};
    }
    return decode(*bytes, reader);
}

} // namespace

Result<std::string> readContainedBytes(const fs::path& path, const ImportOptions& options,
                                       const ProgressCallback& progress, const std::string& reader,
                                       const std::function<std::string()>& work) {
    ContainedLimits limits;
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(path, ec);
    // Ten seconds and two per megabyte: a reader stuck on a small malformed file is stopped
    // soon, a large file gets its time.
    limits.timeoutSeconds =
        std::min(options.timeoutSeconds, 10.0 + 2.0 * double(ec ? 0 : size) / 1e6);
    limits.memoryBytes = options.memoryLimitBytes > 0 ? options.memoryLimitBytes
                                                      : std::size_t(4) * 1024 * 1024 * 1024 +
                                                            64 * std::size_t(ec ? 0 : size);
    const std::string stage = "reading " + path.filename().string();
    if (progress) {
        limits.keepGoing = [&] { return progress(-1.0, stage); };
    }
    const ContainedRun run = runContained(
        [&](int fd) {
            const std::string bytes = work();
            return writeAllTo(fd, bytes.data(), bytes.size()) ? 0 : 8;
        },
        limits);
    if (run.end == ContainedRun::End::Cancelled) {
        return Error{kCancelledMessage};
    }
    if (!run.succeeded()) {
        return Error{"cannot read '" + path.string() + "': " + reader + " " +
                     run.describe(limits.timeoutSeconds) +
                     " on it (the file is malformed or too large; nothing else was affected)"};
    }
    return run.result;
}

// A GLB's container, checked before assimp sees it: the magic, version 2, the total length and
// each chunk's length within the file (assimp trusts them, and can loop on a lying header).
std::string glbProblem(const fs::path& path) {
    // The headers only: 12 bytes, then 8 at the start of each chunk.
    std::ifstream in(path, std::ios::binary);
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(path, ec);
    const auto word = [&](std::uintmax_t at, std::uint32_t& v) {
        in.seekg(std::streamoff(at));
        return bool(in.read(reinterpret_cast<char*>(&v), 4));
    };
    const std::string file = "cannot read '" + path.string() + "': ";
    char magic[4] = {};
    std::uint32_t version = 0, length = 0;
    if (ec || size < 20 || !in.read(magic, 4) || std::string_view(magic, 4) != "glTF" ||
        !word(4, version) || !word(8, length)) {
        return file + "not a binary glTF file (no 'glTF' header)";
    }
    if (version != 2) {
        return file + "byte 4: glTF version " + std::to_string(version) +
               " (PBD Lab reads version 2)";
    }
    if (length != size) {
        return file + "byte 8: the header gives a length of " + std::to_string(length) +
               " bytes, the file has " + std::to_string(size);
    }
    for (std::uintmax_t at = 12; at < size;) {
        std::uint32_t chunk = 0;
        if (size - at < 8 || !word(at, chunk)) {
            return file + "byte " + std::to_string(at) + ": a chunk header is cut off";
        }
        if (chunk > size - at - 8) {
            return file + "byte " + std::to_string(at) + ": a chunk of " + std::to_string(chunk) +
                   " bytes, more than the " + std::to_string(size - at - 8) + " left";
        }
        at += 8 + chunk;
    }
    return {};
}

namespace {

// The simple formats, with PBD Lab's own readers, in this process.
Result<MeshFileContents> readOwn(const fs::path& path, const std::string& ext,
                                 const ImportOptions& options) {
    std::ifstream in(path, std::ios::binary);
    std::string data;
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(path, ec);
    if (!ec) {
        data.resize(std::size_t(size));
        in.read(data.data(), std::streamsize(size));
        data.resize(std::size_t(in.gcount()));
    }
    if (ec || in.bad()) {
        return Error{"cannot read '" + path.string() + "': " + (ec ? ec.message() : "read error")};
    }
    const std::string label = path.string(), stem = path.stem().string();
    if (ext == ".ply") {
        return parsePly(data, label, stem, options.scale);
    }
    if (ext == ".off") {
        return parseOff(data, label, stem, options.scale);
    }
    return parseStl(data, label, stem, options.scale);
}

} // namespace

Result<std::vector<TriangleSoup>> readObjUncontained(const fs::path& path,
                                                     const ImportOptions& options) {
    return readObj(path, options);
}

Result<std::vector<TriangleSoup>> readAssimpUncontained(const fs::path& path,
                                                        const ImportOptions& options) {
    if (lowerExtension(path) == ".glb") {
        if (const std::string problem = glbProblem(path); !problem.empty()) {
            return Error{problem};
        }
    }
    return readWithAssimp(path, options);
}

std::string openProblem(const fs::path& path) {
    std::error_code ec;
    if (!fs::exists(path, ec)) {
        return "cannot open '" + path.string() + "': no such file";
    }
    if (fs::is_directory(path, ec)) {
        return "cannot open '" + path.string() + "': it is a directory";
    }
    if (!std::ifstream(path).good()) {
        return "cannot open '" + path.string() + "': permission denied";
    }
    return {};
}

const std::vector<std::string>& supportedMeshExtensions() {
    static const std::vector<std::string> extensions = {".obj", ".ply",  ".stl",
                                                        ".off", ".gltf", ".glb"};
    return extensions;
}

Result<ImportedMesh> importMesh(const fs::path& path, const ImportOptions& options,
                                const ProgressCallback& progress) {
    if (std::string problem = openProblem(path); !problem.empty()) {
        return Error{problem};
    }
    if (!(options.scale > 0) || !std::isfinite(options.scale)) {
        return Error{"scale must be a positive number"};
    }
    const std::string ext = lowerExtension(path);
    const auto& known = supportedMeshExtensions();
    if (std::find(known.begin(), known.end(), ext) == known.end()) {
        return Error{"cannot open '" + path.string() + "': unsupported format '" + ext +
                     "' (PBD Lab reads .obj, .ply, .stl, .off, .gltf and .glb)"};
    }

    ImportedMesh result;
    Result<std::vector<TriangleSoup>> soups = Error{""};
    if (ext == ".ply" || ext == ".off" || ext == ".stl") {
        Result<MeshFileContents> contents = readOwn(path, ext, options);
        if (!contents) {
            return Error{contents.error()};
        }
        result.warnings = std::move(contents->warnings);
        soups = std::move(contents->parts);
    } else if (ext == ".obj") {
        soups = readContained(path, options, progress, "tinyobjloader",
                              [&] { return readObj(path, options); });
    } else {
        if (ext == ".glb") {
            if (const std::string problem = glbProblem(path); !problem.empty()) {
                return Error{problem};
            }
        }
        soups = readContained(path, options, progress, "assimp",
                              [&] { return readWithAssimp(path, options); });
    }
    if (!soups) {
        return Error{soups.error()};
    }
    if (soups->empty()) {
        return Error{"'" + path.string() + "' contains no triangles"};
    }

    result.scene.name = validUtf8(path.stem().string());
    result.scene.description = "Imported from " + path.string();
    for (TriangleSoup& soup : *soups) {
        soup.name = validUtf8(soup.name);
        AssemblyReport report;
        Body body = assembleBody(result.scene.particles, soup, options.weldTolerance, report);
        if (report.droppedNonFinite > 0) {
            result.warnings.push_back("body '" + body.name + "': dropped " +
                                      std::to_string(report.droppedNonFinite) +
                                      " triangle(s) with non-finite coordinates");
        }
        if (report.droppedDegenerate > 0) {
            result.warnings.push_back("body '" + body.name + "': dropped " +
                                      std::to_string(report.droppedDegenerate) +
                                      " triangle(s) that collapsed when vertices were welded");
        }
        if (body.triangles.empty()) {
            result.warnings.push_back("body '" + body.name +
                                      "' has no usable triangle and was skipped");
            result.scene.particles.positions.resize(body.firstParticle);
            result.scene.particles.velocities.resize(body.firstParticle);
            result.scene.particles.inverseMasses.resize(body.firstParticle);
            continue;
        }
        if (options.mergeShells) {
            result.scene.bodies.push_back(std::move(body));
            continue;
        }
        std::vector<Body> shells = splitShells(result.scene.particles, body);
        if (shells.size() > 1) {
            result.warnings.push_back(
                "body '" + body.name + "' has " + std::to_string(shells.size()) +
                " separate shells: imported as " + std::to_string(shells.size()) + " bodies ('" +
                shells[0].name + "' to '" + shells.back().name +
                "'; merge shells to keep one body)");
        }
        for (Body& shell : shells) {
            result.scene.bodies.push_back(std::move(shell));
        }
    }
    if (result.scene.bodies.empty()) {
        return Error{"'" + path.string() + "' contains no usable triangles"};
    }
    return result;
}

} // namespace pbd
