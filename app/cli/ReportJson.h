#pragma once
// The JSON pbdlab-cli reports scenes and runs in: shared by info, simulate and bench so that the
// same thing is always written the same way.

#include "core/scene/Scene.h"

#include <nlohmann/json.hpp>
#include <vector>

namespace pbd {
class Solver;
}

namespace pbd::cli {

using nlohmann::json;

json boundsJson(const Bounds& b); // null when empty
json vec(const Vec3& v);
json settingsJson(const SolverSettings& s);
json rigidSettingsJson(const RigidSettings& r);
// The rigid bodies after a run: transforms, velocities, totals and the solver's figures.
json rigidJson(const Scene& scene, const Solver& solver);
json collidersJson(const Scene& scene);
// The animated characters: file, clip and where in it the time `time` is.
json charactersJson(const Scene& scene, Real time);
json groupsJson(const Scene& scene);

// Rows of a per-element field (each a fixed-size vector) as arrays.
template <class V> json rowsJson(const std::vector<V>& rows) {
    json a = json::array();
    for (const auto& r : rows) {
        json row = json::array();
        for (int k = 0; k < static_cast<int>(r.size()); ++k) {
            row.push_back(r[k]);
        }
        a.push_back(std::move(row));
    }
    return a;
}

} // namespace pbd::cli
