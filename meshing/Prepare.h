#pragma once
// The meshing pipeline a user runs on raw meshes: import, check, repair, tetrahedralize the
// closed bodies, tessellate the air, assign material frames, masses and (optionally) default
// constraints. Shared by `pbdlab-cli prepare` and the GUI's Prepare dialog. The input scene is
// never modified: the result is a new scene, or an error with the report that explains it.

#include "core/scene/Scene.h"
#include "meshing/Cage.h"
#include "meshing/MeshImport.h"
#include "meshing/SurfaceCheck.h"
#include "meshing/SurfaceRepair.h"
#include "meshing/VolumeMeshing.h"

#include <filesystem>
#include <string>
#include <vector>

namespace pbd {

struct PrepareOptions {
    ImportOptions import;
    bool repair = true;
    RepairOptions repairOptions;
    // With tets or air: bodies that cross each other (overlapping parts) are merged, each group
    // into one body (meshing/SurfaceRepair.h).
    OverlapMode overlaps = OverlapMode::Wrap;
    // A cage (meshing/Cage.h): the meshes are carried, the cage is tetrahedralized and simulated.
    CageOptions cage;
    bool tetrahedralize = false; // closed bodies become tet bodies
    TetOptions tet;
    bool air = false;
    AirOptions airOptions;
    bool frames = false; // report triangle frames from UVs, set tet frames
    TetFrameMode tetFrames = TetFrameMode::Global;
    // Masses: tet bodies from a density, cloth from an areal density.
    Real density = 1000;     // kg/m^3
    Real arealDensity = 0.2; // kg/m^2
    // Sensible starting constraints so the result can be simulated at once: cloth gets strain
    // triangles (UV frames) and bending, tet bodies strain tets and volume.
    bool defaultConstraints = false;
    BendingModel bendingModel = BendingModel::Bridson; // the default constraints' bending
    // Rigid bodies instead (§5): every body becomes a dynamic rigid body, the convex hull of its
    // vertices, of `density`; with rigidGround a static ground is put under them all.
    bool rigidHulls = false;
    bool rigidGround = false;
};

enum class ReportSeverity { Info, Warning, Error };

struct ReportLine {
    ReportSeverity severity = ReportSeverity::Info;
    std::string text;
};

struct PrepareReport {
    std::vector<std::string> inputs;
    SurfaceReport surfaces;               // after repair
    std::vector<std::string> repairs;     // every body's repair lines, in order
    std::vector<BodyRepair> repairBodies; // what the repair ladder did, per body
    std::vector<MergedOverlap> merged;    // groups of crossing bodies made one
    bool hasCage = false;
    CageReport cage;
    std::vector<BodyTetReport> tets;
    bool hasAir = false;
    AirReport air;
    FrameReport frames;
    std::size_t bodies = 0, vertices = 0, triangles = 0, constraints = 0;
    std::size_t invertedTets = 0; // in the result (bodies and air): must be 0
    std::vector<std::pair<std::string, double>> timings; // stage, seconds
    std::vector<ReportLine> lines;                       // for the Log dock, in order
    std::string error;                                   // empty on success

    bool ok() const { return error.empty(); }
    std::string toJson(int indent = 2) const;
};

struct PrepareResult {
    Scene scene;
    PrepareReport report;
};

// Imports the files into one scene (bodies in file order) and prepares it.
PrepareResult prepareFiles(const std::vector<std::filesystem::path>& files,
                           const PrepareOptions& options, const ProgressCallback& progress = {});

// Prepares an already imported scene (bodies of kind Surface or Cloth, no constraints yet).
PrepareResult prepareScene(const Scene& input, const PrepareOptions& options,
                           const ProgressCallback& progress = {});

// A mesh collider from a file: every surface in it imported (scaled to metres), repaired and
// merged into one collider named after the file. Refused, naming the body, when a surface is
// not closed and outward (a mesh collider tells inside from outside).
Result<Collider> meshColliderFromFile(const std::filesystem::path& path,
                                      const ImportOptions& options = {});

// A collider as pbdlab-cli's --collider and the Python module name it: SHAPE[:KEY=VALUE,...]
// fitted under `bodies` (colliderFromSpec), or mesh:file=PATH[,KEY=VALUE...] (a mesh collider
// from the file, then edited).
Result<Collider> colliderFromCommandSpec(std::string_view spec, const Bounds& bodies);

} // namespace pbd
