#pragma once
// Mesh export of a prepared scene: VTK XML unstructured grid (.vtu, opens in ParaView), Gmsh
// MSH 4.1 (ASCII) and TetGen's .node/.ele/.face. Cells are every body's tets (region = the
// body's index), the air tets (region -1, "air") and the triangles of bodies without tets
// (cloth and bare surfaces). Files are written atomically.

#include "core/Result.h"
#include "core/Scene.h"

#include <filesystem>
#include <string>

namespace pbd {

// Element quality, 1 for the regular element and 0 for a flat one: tets
// q = 12/sqrt(2) V / l_rms^3, triangles q = 4 sqrt(3) A / (l1^2 + l2^2 + l3^2) (Air Meshes
// eq. 3 and 4 with the errata of ALGORITHMS.md §4). Negative for an inverted tet.
Real tetQuality(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d);
Real triangleQuality(const Vec3& a, const Vec3& b, const Vec3& c);

Result<bool> exportVtu(const Scene& scene, const std::filesystem::path& path);
Result<bool> exportMsh(const Scene& scene, const std::filesystem::path& path);
// Writes PREFIX.node, PREFIX.ele (with the region as attribute) and PREFIX.face (boundary
// faces of the tets and the cloth triangles, marker = body index + 1).
Result<bool> exportTetgen(const Scene& scene, const std::filesystem::path& prefix);

} // namespace pbd
