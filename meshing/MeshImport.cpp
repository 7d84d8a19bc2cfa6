#include "meshing/MeshImport.h"

#include "meshing/SurfaceAssembly.h"

#include <algorithm>
#include <assimp/Importer.hpp>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <cctype>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <tiny_obj_loader.h>

namespace pbd {

namespace fs = std::filesystem;

namespace {

std::string lowerExtension(const fs::path& path) {
    std::string ext = path.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    return ext;
}

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
                    std::size_t(3 * idx.vertex_index + 2) >= attrib.vertices.size()) {
                    return Error{"OBJ '" + path.string() + "', object '" + soup.name +
                                 "': face refers to missing vertex " +
                                 std::to_string(idx.vertex_index + 1)};
                }
                if (std::size_t(idx.vertex_index) < nonFinite.size() &&
                    nonFinite[idx.vertex_index]) {
                    soup.corners.emplace_back(nan, nan,
                                              nan); // dropped and reported by assembleBody
                } else {
                    soup.corners.emplace_back(
                        attrib.vertices[3 * idx.vertex_index] * options.scale,
                        attrib.vertices[3 * idx.vertex_index + 1] * options.scale,
                        attrib.vertices[3 * idx.vertex_index + 2] * options.scale);
                }
                if (idx.texcoord_index >= 0 &&
                    std::size_t(2 * idx.texcoord_index + 1) < attrib.texcoords.size()) {
                    soup.uvs.emplace_back(attrib.texcoords[2 * idx.texcoord_index],
                                          attrib.texcoords[2 * idx.texcoord_index + 1]);
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

// OFF and PLY headers declare their element counts; a count the file cannot possibly hold
// (a corrupt or hostile header) would make assimp try to allocate it, which can take the
// machine's memory or minutes. Each vertex needs at least 6 bytes in ASCII ("0 0 0\n") and
// 12 in binary, each face at least 8 ("3 0 1 2\n") or 13.
std::string implausibleHeader(const fs::path& path, const std::string& ext) {
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (ec) {
        return {};
    }
    std::ifstream in(path, std::ios::binary);
    std::string line;
    std::uint64_t vertices = 0, faces = 0;
    bool binary = false;
    if (ext == ".off") {
        std::string header;
        in >> header;
        if (header.find("OFF") == std::string::npos) {
            return {};
        }
        double v = 0, f = 0;
        if (!(in >> v >> f) || v < 0 || f < 0) {
            return {};
        }
        vertices = std::uint64_t(v);
        faces = std::uint64_t(f);
    } else if (ext == ".ply") {
        for (int i = 0; i < 200 && std::getline(in, line); ++i) {
            std::istringstream words(line);
            std::string a, b;
            double count = 0;
            words >> a;
            if (a == "format") {
                words >> b;
                binary = b != "ascii";
            } else if (a == "element" && (words >> b >> count) && count >= 0) {
                if (b == "vertex") {
                    vertices = std::uint64_t(count);
                } else if (b == "face") {
                    faces = std::uint64_t(count);
                }
            } else if (a == "end_header") {
                break;
            }
        }
    } else {
        return {};
    }
    const double needed =
        double(vertices) * (binary ? 12.0 : 6.0) + double(faces) * (binary ? 13.0 : 8.0);
    if (needed > double(size)) {
        std::ostringstream s;
        s << "cannot read '" << path.string() << "': its header declares " << vertices
          << " vertices and " << faces << " faces, more than its " << size
          << " bytes can hold (the file is corrupt)";
        return s.str();
    }
    return {};
}

Result<std::vector<TriangleSoup>> readWithAssimp(const fs::path& path,
                                                 const ImportOptions& options) {
    if (const std::string why = implausibleHeader(path, lowerExtension(path)); !why.empty()) {
        return Error{why};
    }
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

} // namespace

const std::vector<std::string>& supportedMeshExtensions() {
    static const std::vector<std::string> extensions = {".obj", ".ply",  ".stl",
                                                        ".off", ".gltf", ".glb"};
    return extensions;
}

Result<ImportedMesh> importMesh(const fs::path& path, const ImportOptions& options) {
    std::error_code ec;
    if (!fs::exists(path, ec)) {
        return Error{"cannot open '" + path.string() + "': no such file"};
    }
    if (fs::is_directory(path, ec)) {
        return Error{"cannot open '" + path.string() + "': it is a directory"};
    }
    if (!std::ifstream(path).good()) {
        return Error{"cannot open '" + path.string() + "': permission denied"};
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

    Result<std::vector<TriangleSoup>> soups =
        ext == ".obj" ? readObj(path, options) : readWithAssimp(path, options);
    if (!soups) {
        return Error{soups.error()};
    }
    if (soups->empty()) {
        return Error{"'" + path.string() + "' contains no triangles"};
    }

    ImportedMesh result;
    result.scene.name = path.stem().string();
    result.scene.description = "Imported from " + path.string();
    for (const TriangleSoup& soup : *soups) {
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
        result.scene.bodies.push_back(std::move(body));
    }
    if (result.scene.bodies.empty()) {
        return Error{"'" + path.string() + "' contains no usable triangles"};
    }
    return result;
}

} // namespace pbd
