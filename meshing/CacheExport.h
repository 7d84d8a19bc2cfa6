#pragma once
// Caches of a run that other tools read, written frame by frame as the run goes (or from the
// window's frame cache):
//
// - pvd: a ParaView collection, NAME.pvd, listing per frame (its simulated time) the VTK XML
//   unstructured grids in NAME_frames/: "particles" (every particle, with velocity, inverse
//   mass and owning body), "tets" (the bodies' tets with Green strain, principal stretches,
//   det F and quality), "surfaces" (the bodies' triangles with their strain, stretches and area
//   ratio), "air" (the air tets or triangles with quality and inversion), "rigid" (the rigid
//   bodies' shapes posed, with the body index and velocity) and "embedded" (the meshes a cage
//   carries): each a block of its own (pvd "part"), with the particle index on every point.
//   Binary, base64 inline (appended data fails with Debian's patched expat): ParaView and
//   VTK's readers load it as it is.
// - pc2: NAME.pc2, the point cache Blender's Mesh Cache modifier, Maya and 3ds Max read (a
//   header and float triples per frame), for the vertices of NAME.obj, the rest mesh written
//   next to it: every deformable surface (cloth, a soft body's boundary, the mesh a cage
//   carries in place of the cage) as one object, a group per body.
// - glb: NAME.glb, binary glTF 2.0 (written by TinyGLTF): the same surface as one mesh with a
//   morph target per frame, weighted over time by an animation (linear between frames), and
//   each rigid body as a node with its shapes' mesh animated by translation and rotation.
//
// Alembic and USD have no packaged library in Debian bookworm, so they are not written.

#include "core/base/Result.h"
#include "core/fields/Fields.h"
#include "core/scene/Scene.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace pbd {

enum CacheFormat : unsigned {
    kCachePvd = 1u << 0,
    kCacheGlb = 1u << 1,
    kCachePc2 = 1u << 2,
    kCacheAllFormats = kCachePvd | kCacheGlb | kCachePc2,
};
// "pvd", "glb", "pc2", comma-separated, or "all"; a message names an unknown one.
Result<unsigned> parseCacheFormats(std::string_view list);
std::string cacheFormatNames(unsigned formats); // "pvd,glb,pc2"

struct CacheExportOptions {
    std::filesystem::path folder;
    std::string name; // file base name; the scene's name (or "cache") when empty
    unsigned formats = kCachePvd;
};

// What a written cache holds, and the time spent writing each format, ms.
struct CacheExportSummary {
    std::size_t frames = 0;
    std::vector<std::filesystem::path> files; // the top-level files: .pvd, .obj, .pc2, .glb
    double pvdMilliseconds = 0, pc2Milliseconds = 0, glbMilliseconds = 0;
    std::size_t surfaceVertices = 0; // in the .obj, .pc2 and .glb
};

class CacheExporter {
public:
    // Starts a cache of `scene` (as it is: the first frame is added separately). `rest` are the
    // rest frames the fields are measured against (captureRestFrames of the scene at rest).
    static Result<std::unique_ptr<CacheExporter>> begin(const Scene& scene, RestFrames rest,
                                                        CacheExportOptions options);
    ~CacheExporter();

    // The scene at the frame's time, s. The pvd frame is written now; the others gather.
    Result<bool> addFrame(const Scene& scene, Real time);
    // Writes the collection, the point cache and the glTF file.
    Result<CacheExportSummary> finish();

    std::size_t frames() const;

private:
    CacheExporter();
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace pbd
