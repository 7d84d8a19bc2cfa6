#pragma once
// Reads surface meshes from files into a scene, one body per OBJ object/group or per mesh of
// the other formats. PLY, OFF and STL go through PBD Lab's own strict readers (MeshReaders);
// OBJ through tinyobjloader (double precision) and glTF/GLB through assimp, each in a child
// process (ContainedProcess), so that a file that crashes or hangs them costs nothing here.

#include "core/base/Result.h"
#include "core/scene/Scene.h"
#include "meshing/ContainedProcess.h"
#include "meshing/SurfaceAssembly.h"

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace pbd {

struct ImportOptions {
    double scale = 1.0;          // multiplies every coordinate (unit conversion)
    double weldTolerance = 1e-6; // relative to each body's bounding-box diagonal
    // A part of several shells (triangles not connected to each other) becomes one body per
    // shell, unless merged.
    bool mergeShells = false;
    // The contained readers (OBJ, glTF): how long they may take (at most; 10 s plus 2 s per
    // MB of the file below that) and how much memory they may add (0: 4 GB plus 64 times the
    // file's size).
    double timeoutSeconds = 120;
    std::size_t memoryLimitBytes = 0;
};

struct ImportedMesh {
    Scene scene;
    std::vector<std::string> warnings; // problems that were repaired, each naming the body
};

// `progress` is polled while a contained reader runs; false cancels (kCancelledMessage).
Result<ImportedMesh> importMesh(const std::filesystem::path& path,
                                const ImportOptions& options = {},
                                const ProgressCallback& progress = {});

// The third-party readers as importMesh runs them in its child process, here in this one, and
// the file as triangle soups: for the fuzz targets only (a crash in them takes the caller down).
Result<std::vector<TriangleSoup>> readObjUncontained(const std::filesystem::path& path,
                                                     const ImportOptions& options = {});
Result<std::vector<TriangleSoup>> readAssimpUncontained(const std::filesystem::path& path,
                                                        const ImportOptions& options = {});

// For the other contained readers (characters): `work` (a third-party reader and its result as
// bytes) in a child process, with the time and memory limits `options` gives for `path`; a
// crash, hang or cancel is a message naming the file and the reader.
Result<std::string> readContainedBytes(const std::filesystem::path& path,
                                       const ImportOptions& options,
                                       const ProgressCallback& progress, const std::string& reader,
                                       const std::function<std::string()>& work);
// What is wrong with a .glb's container (magic, version, lengths), checked before assimp reads
// it; empty when it is sound.
std::string glbProblem(const std::filesystem::path& path);
// Why `path` cannot be opened (missing, a directory, not readable), naming it; empty when it can.
std::string openProblem(const std::filesystem::path& path);
// The extension in lower case with the dot; `name` with bytes that are not UTF-8 replaced.
std::string lowerExtension(const std::filesystem::path& path);
std::string validUtf8(const std::string& name);

// Lower-case extensions with the dot, for file dialogs and command-line checks.
const std::vector<std::string>& supportedMeshExtensions();

} // namespace pbd
