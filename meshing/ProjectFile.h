#pragma once
// The PBD Lab project file: a JSON document holding a whole scene (particles, bodies with their
// topology, UVs and material frames, the air mesh, colliders, constraints with their rest data
// and parameters, and solver settings) that loads back identically.

#include "core/base/Result.h"
#include "core/scene/Scene.h"

#include <filesystem>
#include <string>

namespace pbd {

// 2: constraint groups, and each constraint's group and measure.
inline constexpr int kProjectFormatVersion = 2;

std::string projectToJson(const Scene& scene, int indent = -1);
Result<Scene> projectFromJson(const std::string& json, const std::string& origin = "project");

// Writes atomically: to a temporary file next to `path`, flushed, then renamed over it, so a
// crash mid-save leaves the previous file intact.
Result<bool> saveProject(const Scene& scene, const std::filesystem::path& path);
Result<Scene> loadProject(const std::filesystem::path& path);
// Opens a project or a cooked asset (meshing/CookedAsset.h), whichever `path` holds;
// `isAsset` (when given) says which.
Result<Scene> loadSceneFile(const std::filesystem::path& path, bool* isAsset = nullptr);

// Writes `text` to `path` atomically (temporary file, flush, rename).
Result<bool> writeFileAtomically(const std::filesystem::path& path, const std::string& text);

} // namespace pbd
