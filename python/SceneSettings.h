#pragma once
// Solver settings by the names pbdlab-cli's options give them, set from Python values: shared
// by the pbdlab module (Scene.set) and the window's Python console (scene.set), so a script
// means the same in both.

#include "core/solver/SolverSettings.h"

#include <cmath>
#include <pybind11/pybind11.h>
#include <stdexcept>
#include <string>
#include <vector>

namespace pbd::python {

namespace py = pybind11;

// The settings a sweep or a script sets by name, as pbdlab-cli's options name them.
inline void setSetting(SolverSettings& s, const std::string& key, const py::handle& value) {
    auto number = [&] { return value.cast<double>(); };
    auto whole = [&](long lowest, const char* what) {
        const long v = value.cast<long>();
        if (v < lowest) {
            throw std::invalid_argument(key + ": " + what);
        }
        return int(v);
    };
    auto positive = [&](const char* what) {
        const double v = number();
        if (!(v > 0) || !std::isfinite(v)) {
            throw std::invalid_argument(key + ": " + what);
        }
        return v;
    };
    auto atLeastZero = [&](const char* what) {
        const double v = number();
        if (!(v >= 0) || !std::isfinite(v)) {
            throw std::invalid_argument(key + ": " + what);
        }
        return v;
    };
    if (key == "iterations") {
        s.iterations = whole(1, "a whole number of sweeps, at least 1");
    } else if (key == "substeps") {
        s.substeps = whole(1, "a whole number of substeps, at least 1");
    } else if (key == "dt") {
        s.timeStep = positive("a positive time step in seconds");
    } else if (key == "threads") {
        s.threads = whole(0, "a number of threads (0: all cores)");
    } else if (key == "method") {
        const std::string m = value.cast<std::string>();
        if (m != "xpbd" && m != "pbd") {
            throw std::invalid_argument(key + ": xpbd or pbd, not '" + m + "'");
        }
        s.method = m == "pbd" ? SolverMethod::Pbd : SolverMethod::Xpbd;
    } else if (key == "gravity") {
        const auto g = value.cast<std::vector<double>>();
        if (g.size() != 3) {
            throw std::invalid_argument("gravity: three numbers, m/s^2");
        }
        s.gravity = Vec3(g[0], g[1], g[2]);
    } else if (key == "air_optimization") {
        s.airOptimizationInterval = whole(0, "a step interval (0 = off)");
    } else if (key == "air_iterations") {
        s.airIterations = whole(-1, "air projections per substep: -1 (as iterations), 0 (off) "
                                    "or more");
    } else if (key == "air_threshold") {
        const double q = number();
        if (!(q > 0 && q <= 1)) {
            throw std::invalid_argument(key + ": a quality in (0, 1]");
        }
        s.airQualityThreshold = q;
    } else if (key == "air_distance") {
        s.airContactDistance = atLeastZero("a distance >= 0, m");
    } else if (key == "air_friction") {
        s.airFriction = atLeastZero("a friction coefficient >= 0");
    } else if (key == "self_collision") {
        s.selfCollision = value.cast<bool>();
    } else if (key == "continuous_collision") {
        s.continuousCollision = value.cast<bool>();
    } else if (key == "cloth_thickness") {
        s.clothThickness = atLeastZero("a thickness >= 0, m");
    } else if (key == "collision_margin") {
        s.collisionMargin = atLeastZero("a margin >= 0, m");
    } else if (key == "global_damping") {
        s.globalDamping = atLeastZero("a damping in [0, 1]");
    } else if (key == "constraint_damping") {
        s.constraintDamping = atLeastZero("a damping in [0, 1]");
    } else if (key == "tearing") {
        s.tearingStretch = atLeastZero("a stretch ratio (0 = off)");
    } else if (key == "exact_angular_momentum") {
        s.exactAngularMomentum = value.cast<bool>();
    } else if (key == "rigid_iterations") {
        s.rigid.iterations = whole(1, "a whole number of sweeps, at least 1");
    } else if (key == "rigid_substeps") {
        s.rigid.substeps = whole(1, "a whole number of substeps, at least 1");
    } else if (key == "sleeping") {
        s.rigid.sleeping = value.cast<bool>();
    } else {
        throw py::key_error(
            "unknown setting '" + key +
            "' (settings: iterations, substeps, dt, threads, method, gravity, air_optimization, "
            "air_iterations, air_threshold, air_distance, air_friction, self_collision, "
            "continuous_collision, cloth_thickness, "
            "collision_margin, global_damping, constraint_damping, tearing, "
            "exact_angular_momentum, rigid_iterations, rigid_substeps, sleeping)");
    }
}

} // namespace pbd::python
