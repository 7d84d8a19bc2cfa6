#pragma once
// Mesh export of a prepared scene: VTK XML unstructured grid (.vtu, opens in ParaView), Gmsh
// MSH 4.1 (ASCII) and TetGen's .node/.ele/.face. Cells are every body's tets (region = the
// body's index), the air tets (region -1, "air") and the triangles of bodies without tets
// (cloth and bare surfaces). The meshes a cage carries (Scene::embedded) follow as triangles
// on points of their own, after the particles, where the cage carries them now (region -2 - e,
// named after the mesh in Gmsh; point data "embedded" in .vtu); TetGen's files hold the
// simulation mesh only. Files are written atomically.

#include "core/base/Result.h"
#include "core/scene/Scene.h"
#include "core/scene/Topology.h" // tetQuality, triangleQuality (the quality arrays)

#include <filesystem>
#include <string>

namespace pbd {

Result<bool> exportVtu(const Scene& scene, const std::filesystem::path& path);
Result<bool> exportMsh(const Scene& scene, const std::filesystem::path& path);
// Writes PREFIX.node, PREFIX.ele (with the region as attribute) and PREFIX.face (boundary
// faces of the tets and the cloth triangles, marker = body index + 1).
Result<bool> exportTetgen(const Scene& scene, const std::filesystem::path& prefix);

} // namespace pbd
