#pragma once
// The cooked asset: a scene as an engine loads it, in one JSON document ("format":
// "pbdlab-asset"). Where the project file keeps what authoring needs (constraint groups, each
// element's measure, UVs for editing), the asset keeps what stepping needs, laid out for a
// loader: particles with inverse masses, the constraints by type with their rest data,
// compliance and PBD stiffness per element (element-major: element e's K values at e*K ...
// e*K+K-1), sorted by colour with the colour ranges (constraints of one colour share no
// particle, so a loader can solve a colour in parallel), the material frames, the air tets,
// colliders, rigid bodies and the solver settings. SI units throughout (m, kg, s, rad).
//
// It loads back (loadSceneFile, pbdlab-cli simulate) to a scene that steps bit for bit as the
// exported one: the colouring is kept, so the solver does not colour again.

#include "core/base/Result.h"
#include "core/scene/Scene.h"

#include <filesystem>
#include <string>

namespace pbd {

inline constexpr const char* kCookedAssetFormat = "pbdlab-asset";
inline constexpr int kCookedAssetVersion = 1;

// The constraints are coloured (on a copy) when the scene's are not.
std::string cookedAssetToJson(const Scene& scene, int indent = -1);
Result<Scene> cookedAssetFromJson(const std::string& json, const std::string& origin = "asset");
// Written atomically (temporary file, flush, rename).
Result<bool> exportCookedAsset(const Scene& scene, const std::filesystem::path& path,
                               int indent = -1);

} // namespace pbd
