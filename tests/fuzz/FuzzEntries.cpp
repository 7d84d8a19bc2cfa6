#include "tests/fuzz/FuzzEntries.h"

#include "core/scene/Scene.h"
#include "core/solver/Solver.h"
#include "meshing/CharacterImport.h"
#include "meshing/CookedAsset.h"
#include "meshing/MeshImport.h"
#include "meshing/MeshReaders.h"
#include "meshing/ProjectFile.h"

#include <fstream>
#include <string_view>
#include <unistd.h>

namespace pbd::fuzz {

namespace {

std::string_view text(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// Welds what a reader accepted, as the import does.
void assemble(const std::vector<TriangleSoup>& soups) {
    Particles particles;
    for (const TriangleSoup& soup : soups) {
        AssemblyReport report;
        assembleBody(particles, soup, 1e-6, report);
    }
}

void meshes(const Result<MeshFileContents>& read) {
    if (read) {
        assemble(read->parts);
    }
}

// The bytes as a file of this process's own with the extension (the third-party readers read
// paths, and assimp picks its reader by the extension).
std::string asFile(const std::uint8_t* data, std::size_t size, const std::string& extension) {
    const std::string path = "/dev/shm/pbdlab-fuzz-" + std::to_string(::getpid()) + extension;
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(data), std::streamsize(size));
    return path;
}

// An accepted scene: its checks, and when they pass and it is small, a few steps.
void simulate(Result<Scene>& scene) {
    if (!scene || !validateScene(*scene).empty() || scene->particles.size() > 20000) {
        return;
    }
    Solver solver(*scene);
    for (int i = 0; i < 2; ++i) {
        solver.step();
    }
}

void ply(const std::uint8_t* d, std::size_t n) {
    meshes(parsePly(text(d, n), "fuzz.ply", "fuzz"));
}
void off(const std::uint8_t* d, std::size_t n) {
    meshes(parseOff(text(d, n), "fuzz.off", "fuzz"));
}
void stl(const std::uint8_t* d, std::size_t n) {
    meshes(parseStl(text(d, n), "fuzz.stl", "fuzz"));
}
void obj(const std::uint8_t* d, std::size_t n) {
    const std::string path = asFile(d, n, ".obj");
    if (auto soups = readObjUncontained(path)) {
        assemble(*soups);
    }
    std::remove(path.c_str());
}
void gltf(const std::uint8_t* d, std::size_t n) {
    const std::string path = asFile(d, n, n > 0 && d[0] == '{' ? ".gltf" : ".glb");
    if (auto soups = readAssimpUncontained(path)) {
        assemble(*soups);
    }
    std::remove(path.c_str());
}
void project(const std::uint8_t* d, std::size_t n) {
    Result<Scene> scene = projectFromJson(std::string(text(d, n)));
    simulate(scene);
}
void asset(const std::uint8_t* d, std::size_t n) {
    Result<Scene> scene = cookedAssetFromJson(std::string(text(d, n)));
    simulate(scene);
}
void scene(const std::uint8_t* d, std::size_t n) {
    const std::string path = asFile(d, n, ".json");
    Result<Scene> loaded = loadSceneFile(path);
    std::remove(path.c_str());
    simulate(loaded);
}

} // namespace

// An animated character (glTF text or binary, or DirectX .x by its "xof " header), as
// simulate --character reads it: checked, skinned at a few times, edited.
void character(const std::uint8_t* d, std::size_t n) {
    const std::string_view t = text(d, n);
    const std::string path = asFile(d, n,
                                    t.starts_with("xof ")  ? ".x"
                                    : n > 0 && d[0] == '{' ? ".gltf"
                                                           : ".glb");
    Result<ImportedCharacter> read = readCharacterUncontained(path);
    if (!read || !checkCharacter(read->character).empty()) {
        return;
    }
    Character& c = read->character;
    if (c.vertexCount() < 200000) {
        for (Real time : {0.0, 0.37, 5.0}) {
            (void)skinCharacter(c, time);
        }
    }
    (void)characterTriangles(c);
    (void)editCharacter(c, "clip=0,up=z,scale=2,wrap=clamp");
    (void)decodeCharacter(encodeCharacter(c));
}

const std::vector<Target>& targets() {
    static const std::vector<Target> all = {
        {"ply", ply},     {"off", off},     {"stl", stl},
        {"obj", obj},     {"gltf", gltf},   {"project", project},
        {"asset", asset}, {"scene", scene}, {"character", character},
    };
    return all;
}

} // namespace pbd::fuzz
