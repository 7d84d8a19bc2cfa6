// The compiled part of the `pbdlab` Python module: scenes generated, loaded or prepared as
// pbdlab-cli does, stepped by the same solver (the GIL released), with their state and fields
// as numpy arrays. The package's __init__.py re-exports it and adds sweeps on Dask.

#include "app/cli/ReportJson.h"
#include "core/base/Version.h"
#include "core/constraints/Attaching.h"
#include "core/constraints/ConstraintBuilders.h"
#include "core/constraints/ConstraintGroups.h"
#include "core/fields/Fields.h"
#include "core/scene/Topology.h"
#include "core/scenes/Garments.h"
#include "core/solver/Colliders.h"
#include "core/solver/KernelPaths.h"
#include "core/solver/Solver.h"
#include "meshing/AirScenes.h"
#include "meshing/CacheExport.h"
#include "meshing/CharacterImport.h"
#include "meshing/CookedAsset.h"
#include "meshing/Export.h"
#include "meshing/Prepare.h"
#include "meshing/ProjectFile.h"
#include "meshing/SurfaceCheck.h"

#include "python/JsonToPython.h"
#include "python/SceneSettings.h"

#include <cmath>
#include <memory>
#include <optional>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <stdexcept>
#include <string>
#include <vector>

namespace py = pybind11;
using nlohmann::json;

namespace pbd::python {

namespace {

template <class T> T unwrap(Result<T> r) {
    if (!r) {
        throw std::invalid_argument(r.error());
    }
    return std::move(r).value();
}

// An (n, k) float64 array copied from rows of k numbers.
template <class Rows, int K> py::array_t<double> rowsArray(const Rows& rows) {
    py::array_t<double> a({py::ssize_t(rows.size()), py::ssize_t(K)});
    auto m = a.mutable_unchecked<2>();
    for (std::size_t i = 0; i < rows.size(); ++i) {
        for (int k = 0; k < K; ++k) {
            m(py::ssize_t(i), k) = double(rows[i][k]);
        }
    }
    return a;
}

template <class T> py::array_t<T> vectorArray(const std::vector<T>& v) {
    py::array_t<T> a(py::ssize_t(v.size()));
    std::copy(v.begin(), v.end(), a.mutable_data());
    return a;
}

template <std::size_t N>
py::array_t<std::uint32_t> elementsArray(const std::vector<std::array<Index, N>>& e) {
    py::array_t<std::uint32_t> a({py::ssize_t(e.size()), py::ssize_t(N)});
    auto m = a.mutable_unchecked<2>();
    for (std::size_t i = 0; i < e.size(); ++i) {
        for (std::size_t k = 0; k < N; ++k) {
            m(py::ssize_t(i), py::ssize_t(k)) = e[i][k];
        }
    }
    return a;
}

} // namespace

// A scene and the solver that steps it. The scene lives on the heap so that its address (which
// the solver and numpy views hold) never changes; edits that the solver caches (constraint
// groups, colliders, pins) drop the solver, which the next step builds again, as the window
// does. Simulated time and the step count carry over.
class PyScene {
public:
    explicit PyScene(Scene scene)
        : scene_(std::make_unique<Scene>(std::move(scene))) {
        rest_ = captureRestFrames(*scene_);
    }

    Scene& scene() { return *scene_; }
    const RestFrames& rest() const { return rest_; }

    void step(int steps, std::optional<int> threads) {
        if (steps < 0) {
            throw std::invalid_argument("step: the number of steps must be at least 0, not " +
                                        std::to_string(steps));
        }
        if (threads) {
            if (*threads < 0) {
                throw std::invalid_argument("step: threads must be at least 0 (0: all cores)");
            }
            scene_->solver.threads = *threads;
        }
        if (!solver_ && !resume_) {
            // What pbdlab-cli simulate refuses before the first step is refused here too. A run
            // going on (rebuilt after an edit, or a copy of one) is not checked again: mid-run an
            // element may be inverted for now (the dancer's air), and the solver it goes on
            // from would step it; it used to be refused as "non-positive volume".
            if (const std::vector<std::string> problems = validateScene(*scene_);
                !problems.empty()) {
                throw std::invalid_argument("cannot simulate '" + scene_->name +
                                            "': " + problems.front());
            }
        }
        std::string diverged;
        {
            py::gil_scoped_release unlocked;
            if (!solver_) {
                solver_ = std::make_unique<Solver>(*scene_);
                if (resume_) {
                    solver_->restore(*resume_); // time, steps and the rigid warm start go on
                    resume_.reset();
                }
            }
            for (int i = 0; i < steps; ++i) {
                try {
                    solver_->step();
                } catch (const std::exception& e) {
                    // Out of memory in a runaway: the scene keeps the last finished step; the
                    // solver, stopped halfway, is built again by the next step.
                    diverged = Solver::stepFailure(e, long(steps_) + 1);
                    solver_.reset();
                    resume_ = Solver::coldState(time_, steps_);
                    break;
                }
                time_ += scene_->solver.timeStep;
                ++steps_;
                totalMs_ += solver_->lastStepMilliseconds();
                air_ = solver_->airStatistics();
                maxInvertedAir_ = std::max(maxInvertedAir_, air_.invertedAfter);
                if (diverged = solver_->runaway(); !diverged.empty()) {
                    break; // as pbdlab-cli simulate stops
                }
                if (diverged = pbd::divergence(*scene_, steps_); !diverged.empty()) {
                    break; // as pbdlab-cli simulate words it
                }
            }
        }
        if (!diverged.empty()) {
            throw std::runtime_error(diverged);
        }
    }

    // An edit the solver caches (groups, colliders, pins): the next step builds a solver again,
    // which goes on from this one's state (time, steps, the rigid warm start).
    void edited() {
        if (solver_) {
            resume_ = solver_->state();
        }
        solver_.reset();
    }

    double time() const { return time_; }
    std::size_t steps() const { return steps_; }
    double msPerStep() const { return steps_ ? totalMs_ / double(steps_) : 0.0; }
    double lastStepMs() const { return solver_ ? solver_->lastStepMilliseconds() : 0.0; }
    const AirStatistics& air() const { return air_; }
    std::size_t maxInvertedAir() const { return maxInvertedAir_; }
    const Solver* solver() const { return solver_.get(); }

    // A deep copy of the scene and of what its solver carries from step to step, so the copy
    // goes on bit for bit as the original would (its first step builds a solver of its own).
    PyScene copy() const {
        PyScene c(*scene_);
        c.rest_ = rest_;
        c.time_ = time_;
        c.steps_ = steps_;
        c.resume_ = solver_ ? solver_->state() : resume_;
        return c;
    }

private:
    std::unique_ptr<Scene> scene_;
    std::unique_ptr<Solver> solver_;
    std::shared_ptr<const SolverState> resume_; // for the next solver to go on from
    RestFrames rest_;
    double time_ = 0;
    std::size_t steps_ = 0;
    double totalMs_ = 0;
    AirStatistics air_;
    std::size_t maxInvertedAir_ = 0;
};

namespace {

// positions, velocities: zero-copy (n, 3) views of the scene's own arrays while particles can
// be neither added nor removed (no tearing), copies otherwise.
py::array_t<double> vec3Array(PyScene& s, std::vector<Vec3>& v, py::handle owner) {
    static_assert(sizeof(Vec3) == 3 * sizeof(double));
    const std::vector<py::ssize_t> shape = {py::ssize_t(v.size()), 3};
    const std::vector<py::ssize_t> strides = {py::ssize_t(sizeof(Vec3)),
                                              py::ssize_t(sizeof(double))};
    if (s.scene().solver.tearingStretch > 0) {
        return py::array_t<double>(shape, strides, v.empty() ? nullptr : v.front().data());
    }
    return py::array_t<double>(shape, strides, v.empty() ? nullptr : v.front().data(), owner);
}

void setVec3Array(std::vector<Vec3>& v,
                  const py::array_t<double, py::array::c_style | py::array::forcecast>& a,
                  const char* what) {
    if (a.ndim() != 2 || a.shape(1) != 3 || std::size_t(a.shape(0)) != v.size()) {
        throw std::invalid_argument(std::string(what) + " must be an (" + std::to_string(v.size()) +
                                    ", 3) array");
    }
    auto r = a.unchecked<2>();
    for (std::size_t i = 0; i < v.size(); ++i) {
        const Vec3 p(r(py::ssize_t(i), 0), r(py::ssize_t(i), 1), r(py::ssize_t(i), 2));
        if (!p.allFinite()) {
            throw std::invalid_argument(std::string(what) + ": row " + std::to_string(i) +
                                        " is not finite");
        }
        v[i] = p;
    }
}

py::dict fieldsDict(PyScene& s) {
    const ElementFields f = computeElementFields(s.scene(), s.rest());
    py::dict d;
    d["tet_green_strain"] = rowsArray<decltype(f.tetGreenStrain), 6>(f.tetGreenStrain);
    d["tet_principal_stretch"] =
        rowsArray<decltype(f.tetPrincipalStretch), 3>(f.tetPrincipalStretch);
    d["tet_volume_ratio"] = vectorArray(f.tetVolumeRatio);
    d["triangle_green_strain"] =
        rowsArray<decltype(f.triangleGreenStrain), 3>(f.triangleGreenStrain);
    d["triangle_principal_stretch"] =
        rowsArray<decltype(f.trianglePrincipalStretch), 2>(f.trianglePrincipalStretch);
    d["triangle_area_ratio"] = vectorArray(f.triangleAreaRatio);
    d["inverted_tets"] = f.invertedTets();
    return d;
}

py::list residualsList(PyScene& s) {
    py::list out;
    for (const ConstraintResiduals& r : computeConstraintResiduals(s.scene())) {
        if (r.residual.empty()) {
            continue;
        }
        py::dict d;
        d["type"] = std::string(toString(r.type));
        d["components"] = r.components;
        d["count"] = r.residual.size() / std::size_t(r.components);
        d["max_abs_residual"] = r.maxAbsResidual();
        d["residual"] = vectorArray(r.residual);
        d["lambda"] = vectorArray(r.lambda);
        out.append(d);
    }
    return out;
}

py::dict airDict(PyScene& s) {
    const Scene& scene = s.scene();
    const AirStatistics& a = s.air();
    py::dict d;
    d["tets"] = scene.air.tets.size();
    d["triangles"] = scene.air.triangles.size();
    d["inverted_before"] = a.invertedBefore;
    d["inverted_after"] = a.invertedAfter;
    d["max_inverted_after"] = s.maxInvertedAir();
    d["inverted_fixed"] = a.invertedFixed;
    d["min_volume"] = a.minVolume;
    d["projections"] = a.projections;
    d["contact_pairs"] = a.contactPairs;
    d["contacts"] = a.contacts;
    d["relocated_points"] = a.relocatedPoints;
    d["iterations"] = scene.solver.airIterations;
    d["optimisation_interval"] = scene.solver.airOptimizationInterval;
    d["optimisation_passes"] = s.solver() ? s.solver()->airOptimizationPasses() : 0;
    d["optimisation_ms"] = s.solver() ? s.solver()->airOptimizationMilliseconds() : 0.0;
    // The last step's: the air's whole share (checks, projections, connectivity), its
    // projections alone, and its optimisation pass's candidates and those left for later.
    d["ms"] = a.milliseconds;
    d["projection_ms"] = a.projectionMilliseconds;
    d["optimisation_candidates"] = s.solver() ? s.solver()->airOptimization().candidates : 0;
    d["optimisation_deferred"] = s.solver() ? s.solver()->airOptimization().deferred : 0;
    return d;
}

py::dict rigidDict(PyScene& s) {
    const auto& bodies = s.scene().rigidBodies;
    py::array_t<double> x({py::ssize_t(bodies.size()), py::ssize_t(3)});
    py::array_t<double> q({py::ssize_t(bodies.size()), py::ssize_t(4)});
    py::array_t<double> v({py::ssize_t(bodies.size()), py::ssize_t(3)});
    py::array_t<double> w({py::ssize_t(bodies.size()), py::ssize_t(3)});
    auto mx = x.mutable_unchecked<2>();
    auto mq = q.mutable_unchecked<2>();
    auto mv = v.mutable_unchecked<2>();
    auto mw = w.mutable_unchecked<2>();
    py::list names;
    for (std::size_t i = 0; i < bodies.size(); ++i) {
        const RigidBody& b = bodies[i];
        const py::ssize_t r = py::ssize_t(i);
        const Vec3& omega = b.omega;
        for (int k = 0; k < 3; ++k) {
            mx(r, k) = b.x[k];
            mv(r, k) = b.v[k];
            mw(r, k) = omega[k];
        }
        mq(r, 0) = b.q.w();
        mq(r, 1) = b.q.x();
        mq(r, 2) = b.q.y();
        mq(r, 3) = b.q.z();
        names.append(b.name);
    }
    py::dict d;
    d["names"] = names;
    d["positions"] = x;
    d["orientations"] = q;
    d["velocities"] = v;
    d["angular_velocities"] = w;
    return d;
}

PyScene prepareMeshes(const std::vector<std::string>& meshes, const py::kwargs& kw) {
    PrepareOptions o;
    for (const auto& [k, value] : kw) {
        const std::string key = k.cast<std::string>();
        if (key == "tet") {
            o.tetrahedralize = value.cast<bool>();
        } else if (key == "air") {
            o.air = value.cast<bool>();
        } else if (key == "constraints") {
            o.defaultConstraints = value.cast<bool>();
        } else if (key == "frames") {
            o.frames = value.cast<bool>();
        } else if (key == "tet_frames") {
            const std::string f = value.cast<std::string>();
            if (f != "global" && f != "surface") {
                throw std::invalid_argument("tet_frames: global or surface, not '" + f + "'");
            }
            o.tetFrames = f == "global" ? TetFrameMode::Global : TetFrameMode::NearestSurface;
            o.frames = true;
        } else if (key == "cage") {
            o.cage.triangles = value.cast<std::size_t>();
        } else if (key == "cage_mesh") {
            o.cage.mesh = value.cast<std::string>();
        } else if (key == "quality") {
            o.tet.radiusEdgeRatio = value.cast<double>();
        } else if (key == "max_volume") {
            o.tet.maxVolume = value.cast<double>();
        } else if (key == "air_margin") {
            o.airOptions.margin = value.cast<double>();
        } else if (key == "air_subdivisions") {
            o.airOptions.boxSubdivisions = value.cast<int>();
        } else if (key == "air_quality") {
            o.airOptions.radiusEdgeRatio = value.cast<double>();
        } else if (key == "merge_shells") {
            o.import.mergeShells = value.cast<bool>();
        } else if (key == "scale") {
            o.import.scale = value.cast<double>();
        } else if (key == "repair") {
            o.repair = value.cast<bool>();
        } else if (key == "wrap") {
            const std::string w = value.cast<std::string>();
            if (w != "auto" && w != "always" && w != "never") {
                throw std::invalid_argument("wrap: auto, always or never, not '" + w + "'");
            }
            o.repairOptions.wrap = w == "always"  ? WrapMode::Always
                                   : w == "never" ? WrapMode::Never
                                                  : WrapMode::Auto;
        } else if (key == "overlaps") {
            const std::string w = value.cast<std::string>();
            if (w != "wrap" && w != "union" && w != "keep") {
                throw std::invalid_argument("overlaps: wrap, union or keep, not '" + w + "'");
            }
            o.overlaps = w == "union"  ? OverlapMode::Union
                         : w == "keep" ? OverlapMode::Keep
                                       : OverlapMode::Wrap;
        } else if (key == "rigid") {
            o.rigidHulls = value.cast<bool>();
        } else if (key == "ground") {
            o.rigidGround = value.cast<bool>();
        } else if (key == "density") {
            o.density = value.cast<double>();
        } else if (key == "areal_density") {
            o.arealDensity = value.cast<double>();
        } else if (key == "timeout") {
            o.tet.timeoutSeconds = o.airOptions.timeoutSeconds = value.cast<double>();
        } else {
            throw py::type_error(
                "prepare() got an unexpected keyword argument '" + key +
                "' (options: tet, air, constraints, frames, tet_frames, cage, cage_mesh, quality, "
                "max_volume, air_margin, air_subdivisions, air_quality, merge_shells, scale, "
                "repair, wrap, overlaps, rigid, ground, density, areal_density, timeout)");
        }
    }
    o.cage.import = o.import;
    std::vector<std::filesystem::path> files(meshes.begin(), meshes.end());
    PrepareResult result;
    {
        py::gil_scoped_release unlocked;
        result = prepareFiles(files, o, {});
    }
    if (!result.report.ok()) {
        throw std::runtime_error("prepare failed: " + result.report.error);
    }
    return PyScene(std::move(result.scene));
}

} // namespace

} // namespace pbd::python

using namespace pbd;
using pbd::python::PyScene;

PYBIND11_MODULE(_pbdlab, m) {
    m.doc() = "PBD Lab: position-based simulation assets (PBD, XPBD, Strain Based Dynamics, Air "
              "Meshes, rigid bodies), scripted. The same scenes, solver and messages as "
              "pbdlab-cli.";
    m.attr("__version__") = kVersion;

    m.def(
        "scenes",
        [] {
            std::vector<std::pair<std::string, std::string>> out;
            for (const SceneInfo& info : allScenes()) {
                out.emplace_back(info.name, info.description);
            }
            return out;
        },
        "The scenes PBD Lab generates, as (name, description) pairs (pbdlab-cli scenes).");
    m.def(
        "kernels",
        [] {
            std::vector<std::string> runs;
            for (const kernels::KernelPath* path : kernels::kernelPaths()) {
                runs.emplace_back(path->name);
            }
            return runs;
        },
        "The instruction sets of the hot loops this build has and this CPU runs, fastest "
        "first ('avx512', 'avx2', 'sse2'; a build for its own machine has 'native' only).");
    m.def(
        "set_kernels",
        [](const std::string& name) {
            if (!kernels::selectKernelPath(name)) {
                throw py::value_error("set_kernels('" + name + "'): this build or CPU has no '" +
                                      name + "' kernels (it runs " + kernels::kernelPathNames() +
                                      ")");
            }
            return std::string(kernels::kernelPath().name);
        },
        py::arg("name") = "auto",
        "Runs the hot loops with the named instruction set from now on ('auto': the fastest; "
        "see kernels()), as pbdlab-cli's --kernels and the PBDLAB_KERNELS environment variable "
        "do; returns the one in use. Raises ValueError for one this build or CPU lacks.");
    m.def(
        "generate",
        [](const std::string& name) { return PyScene(python::unwrap(makeAnyScene(name))); },
        py::arg("name"),
        "A generated scene by name (see scenes()), as pbdlab-cli simulate NAME makes it. "
        "Raises ValueError naming the scenes there are for an unknown name.");
    m.def(
        "load",
        [](const std::string& path) {
            Result<Scene> loaded = Error{""};
            {
                py::gil_scoped_release unlocked;
                loaded = loadSceneFile(path);
            }
            return PyScene(python::unwrap(std::move(loaded)));
        },
        py::arg("path"),
        "A project or cooked asset (.json) from disk. Raises ValueError with the loader's "
        "message (the file, the JSON path and what is wrong) when it cannot be read.");
    m.def("prepare", &python::prepareMeshes, py::arg("meshes"),
          "Import, repair and prepare meshes as pbdlab-cli prepare does, with its options as "
          "keywords: tet, air, constraints, frames, tet_frames ('global'|'surface'), cage (about "
          "N triangles), cage_mesh, quality, max_volume, air_margin, air_subdivisions, "
          "air_quality, merge_shells, scale, repair, wrap ('auto'|'always'|'never'), overlaps "
          "('wrap'|'union'|'keep'), rigid, ground, density, areal_density, timeout. Raises "
          "RuntimeError('prepare failed: ...') with what to try when a mesh cannot be prepared.");

    py::class_<PyScene>(m, "Scene",
                        "A scene and its solver. Arrays of the state (positions, velocities, "
                        "inverse_masses) are zero-copy views of the scene's own memory, valid "
                        "as long as the scene object lives, unless the scene tears (then copies: "
                        "tearing adds particles). Everything else (fields, residuals, rigid "
                        "poses, elements) is a copy taken when asked.")
        .def_property_readonly(
            "name", [](PyScene& s) { return s.scene().name; }, "The scene's name.")
        .def_property_readonly(
            "description", [](PyScene& s) { return s.scene().description; },
            "What the scene shows (generated scenes), or empty.")
        .def(
            "step",
            [](PyScene& s, int steps, std::optional<int> threads) { s.step(steps, threads); },
            py::arg("steps") = 1, py::arg("threads") = py::none(),
            "Advances the scene `steps` steps (each `dt` long, in `substeps`) on `threads` "
            "threads (default: the scene's setting; 0: all cores), the GIL released. Bit for bit "
            "what pbdlab-cli simulate gives for the same scene, steps and threads. Raises "
            "ValueError when the scene cannot be simulated and RuntimeError when it diverged.")
        .def_property_readonly("time", &PyScene::time, "Simulated time, s.")
        .def_property_readonly("step_count", &PyScene::steps, "Steps taken.")
        .def_property_readonly("ms_per_step", &PyScene::msPerStep,
                               "Mean wall time of the steps taken, ms.")
        .def_property_readonly("last_step_ms", &PyScene::lastStepMs,
                               "Wall time of the last step, ms.")
        .def_property(
            "positions",
            [](py::object self) {
                PyScene& s = self.cast<PyScene&>();
                return python::vec3Array(s, s.scene().particles.positions, self);
            },
            [](PyScene& s,
               const py::array_t<double, py::array::c_style | py::array::forcecast>& a) {
                python::setVec3Array(s.scene().particles.positions, a, "positions");
            },
            "Particle positions, (N, 3) float64, m: a writable view (see Scene).")
        .def_property(
            "velocities",
            [](py::object self) {
                PyScene& s = self.cast<PyScene&>();
                return python::vec3Array(s, s.scene().particles.velocities, self);
            },
            [](PyScene& s,
               const py::array_t<double, py::array::c_style | py::array::forcecast>& a) {
                python::setVec3Array(s.scene().particles.velocities, a, "velocities");
            },
            "Particle velocities, (N, 3) float64, m/s: a writable view (see Scene).")
        .def_property_readonly(
            "inverse_masses",
            [](py::object self) {
                std::vector<Real>& w = self.cast<PyScene&>().scene().particles.inverseMasses;
                return py::array_t<double>({py::ssize_t(w.size())}, {py::ssize_t(sizeof(Real))},
                                           w.data(), self);
            },
            "Inverse masses, (N,) float64, 1/kg (0: pinned): a view.")
        .def_property_readonly(
            "bodies",
            [](PyScene& s) {
                py::list out;
                for (const Body& b : s.scene().bodies) {
                    py::dict d;
                    d["name"] = b.name;
                    d["kind"] = std::string(toString(b.kind));
                    d["first_particle"] = b.firstParticle;
                    d["particles"] = b.particleCount;
                    d["triangles"] = python::elementsArray(b.triangles);
                    d["tets"] = python::elementsArray(b.tets);
                    out.append(d);
                }
                return out;
            },
            "The bodies: name, kind, first_particle, particles, triangles (M, 3) and tets "
            "(K, 4) as particle indices (copies).")
        .def_property_readonly(
            "settings",
            [](PyScene& s) { return python::toPython(cli::settingsJson(s.scene().solver)); },
            "The solver settings, as pbdlab-cli reports them (a copy; change them with set()).")
        .def(
            "set",
            [](PyScene& s, const py::kwargs& kw) {
                SolverSettings settings = s.scene().solver;
                for (const auto& [key, value] : kw) {
                    python::setSetting(settings, key.cast<std::string>(), value);
                }
                s.scene().solver = settings; // all or nothing
            },
            "Sets solver settings by name, as pbdlab-cli's options: iterations, substeps, dt, "
            "threads, method ('xpbd'|'pbd'), gravity, air_optimization, air_threshold, "
            "air_distance, air_friction, self_collision, continuous_collision, cloth_thickness, "
            "collision_margin, global_damping, constraint_damping, tearing, "
            "exact_angular_momentum, "
            "rigid_iterations, rigid_substeps, sleeping. Raises KeyError for an unknown name and "
            "ValueError for a value out of range; nothing is set then.")
        .def_property_readonly(
            "groups", [](PyScene& s) { return python::toPython(cli::groupsJson(s.scene())); },
            "The constraint groups (name, type, count, material, rest, enabled), as pbdlab-cli "
            "info lists them.")
        .def(
            "edit_group",
            [](PyScene& s, const std::string& spec) {
                python::unwrap(editConstraintGroup(s.scene(), spec));
                s.edited();
            },
            py::arg("spec"),
            "Edits a constraint group as pbdlab-cli's --group does: 'NAME:KEY=VALUE[,...]', KEY "
            "one of enabled (on|off), modulus, compliance, a component (stretch_u, shear_xy, ...; "
            "a number or 'rigid'), pbd, pbd_COMPONENT, rest_u, rest_v, rest_x..., pressure. "
            "Raises ValueError with the CLI's message (an unknown group lists those there are).")
        .def_property(
            "bending_model",
            [](PyScene& s) { return std::string(toString(s.scene().constraints.bending.model)); },
            [](PyScene& s, const std::string& name) {
                const Result<BendingModel> model = bendingModelNamed(name);
                if (!model) {
                    throw std::invalid_argument("bending_model: " + model.error());
                }
                if (s.scene().constraints.bending.size() == 0) {
                    throw std::invalid_argument("bending_model: the scene has no bending "
                                                "constraints");
                }
                if (*model != s.scene().constraints.bending.model) {
                    setBendingModel(s.scene().constraints, s.scene().particles.positions, *model);
                    s.edited();
                }
            },
            "The bending constraints' model: 'bridson' (signed dihedral angle), 'pbd-appendix' or "
            "'isometric' (Bergou et al.'s quadratic model, two thirds of the cost; the same "
            "compliance per radian squared near flat). Setting it rebuilds every hinge's rest "
            "data from the positions now, taken as the rest shape (as pbdlab-cli's "
            "--bending-model does): set it before stepping. Raises ValueError for an unknown "
            "name or a scene without bending.")
        .def_property_readonly(
            "colliders", [](PyScene& s) { return python::toPython(cli::collidersJson(s.scene())); },
            "The colliders (shape, position, size, friction, ...), as pbdlab-cli reports them.")
        .def(
            "collider_surface",
            [](PyScene& s, int index) {
                const std::vector<Collider>& colliders = s.scene().colliders;
                if (index < 0 || std::size_t(index) >= colliders.size()) {
                    throw py::index_error("no collider " + std::to_string(index) +
                                          ": the scene has " + std::to_string(colliders.size()));
                }
                const Collider& c = colliders[std::size_t(index)];
                if (c.shape != ColliderShape::Mesh) {
                    throw py::value_error("collider " + std::to_string(index) + " (" + c.name +
                                          ") is a " + std::string(toString(c.shape)) +
                                          ", not a mesh");
                }
                py::array_t<double> vertices({py::ssize_t(c.vertices.size()), py::ssize_t(3)});
                auto out = vertices.mutable_unchecked<2>();
                for (std::size_t i = 0; i < c.vertices.size(); ++i) {
                    for (int k = 0; k < 3; ++k) {
                        out(py::ssize_t(i), k) = c.vertices[i][k];
                    }
                }
                py::dict d;
                d["name"] = c.name;
                d["vertices"] = vertices;
                d["triangles"] = python::elementsArray(c.triangles);
                return d;
            },
            py::arg("index"),
            "A mesh collider's surface as it is now (an animated character's skin posed at the "
            "scene's time): a dict of name, vertices (V, 3) float64 and triangles (T, 3) (copies). "
            "Raises IndexError for no such collider and ValueError for one that is not a mesh.")
        .def(
            "add_collider",
            [](PyScene& s, const std::string& spec) {
                Result<Collider> c = colliderFromCommandSpec(spec, s.scene().bounds());
                s.scene().colliders.push_back(python::unwrap(std::move(c)));
                s.edited();
            },
            py::arg("spec"),
            "Adds a collider as pbdlab-cli's --collider does: 'SHAPE[:KEY=VALUE,...]' with SHAPE "
            "plane, sphere, box or capsule fitted under the bodies, or 'mesh:file=PATH'. Raises "
            "ValueError with the CLI's message.")
        .def_property_readonly(
            "characters",
            [](PyScene& s) { return python::toPython(cli::charactersJson(s.scene(), s.time())); },
            "The animated characters (name, file, triangles, subdivisions, collider, clip, "
            "clip_time, speed, wrap), as pbdlab-cli simulate reports them.")
        .def(
            "add_character",
            [](PyScene& s, const std::string& spec) {
                const int c = python::unwrap(addCharacterFromSpec(s.scene(), spec));
                connectCharacters(s.scene(), s.time()); // posed at the scene's time
                s.edited();
                return c;
            },
            py::arg("spec"),
            "Adds an animated character and the moving collider of its skin, as pbdlab-cli's "
            "--character does: 'FILE[,KEY=VALUE,...]' with clip, up, scale, position, start, "
            "speed, end, wrap, subdivide (levels of Loop subdivision of the skin, 0-3), friction. "
            "Returns its index; raises ValueError with the CLI's "
            "message.")
        .def(
            "add_skirt",
            [](PyScene& s, const std::string& spec) {
                const std::size_t first = python::unwrap(addSkirtFromSpec(s.scene(), spec));
                s.edited();
                return first;
            },
            py::arg("spec") = "",
            "Fits a skirt of layers to a character, pinned at its waist, as pbdlab-cli's --skirt "
            "does: 'KEY=VALUE,...' with character, layers, segments, rows, waist (height, m), "
            "length, gap, flare, ease, density, bending, pin (the waistband's compliance). Returns "
            "the index of its first layer's "
            "body; raises ValueError with the CLI's message.")
        .def(
            "pin_to_character",
            [](PyScene& s, const std::vector<Index>& particles, int character, double compliance) {
                const AttachResult r =
                    python::unwrap(attachToCharacter(s.scene(), particles, character, compliance));
                s.edited();
                return r.added;
            },
            py::arg("particles"), py::arg("character") = 0, py::arg("compliance") = 0.0,
            "Holds each particle where it is relative to the character's skin, carried along as "
            "the character moves. Returns the number of attachments made.")
        .def(
            "pin",
            [](PyScene& s, const std::vector<Index>& particles, double compliance) {
                for (Index p : particles) {
                    if (p >= s.scene().particles.size()) {
                        throw py::index_error("pin: particle " + std::to_string(p) +
                                              " is out of range (the scene has " +
                                              std::to_string(s.scene().particles.size()) + ")");
                    }
                }
                const AttachResult r =
                    python::unwrap(attachToPoints(s.scene(), particles, compliance));
                s.edited();
                return r.added;
            },
            py::arg("particles"), py::arg("compliance") = 0.0,
            "Holds each particle where it is now (compliance 0: pinned; > 0: a soft spring, "
            "m/N). Returns the number of attachments made.")
        .def("fields", &python::fieldsDict,
             "Per-element fields against the rest shape the scene was made in: tet_green_strain "
             "(K, 6: xx yy zz xy xz yz), tet_principal_stretch (K, 3), tet_volume_ratio (K,), "
             "triangle_green_strain (M, 3: uu vv uv), triangle_principal_stretch (M, 2), "
             "triangle_area_ratio (M,), inverted_tets (copies).")
        .def("residuals", &python::residualsList,
             "Per constraint type: residual C and lambda of the last substep (copies).")
        .def_property_readonly("air", &python::airDict,
                               "The air mesh's figures of the last step and the largest number "
                               "of air tets inverted after any step so far.")
        .def_property_readonly(
            "air_mesh",
            [](PyScene& s) {
                const AirMesh& a = s.scene().air;
                py::dict d;
                d["tets"] = python::elementsArray(a.tets);
                d["triangles"] = python::elementsArray(a.triangles);
                d["first_particle"] = a.firstParticle;
                d["particle_count"] = a.particleCount;
                return d;
            },
            "The air mesh as it is now (the optimisation changes it): tets (K, 4) or, in 2D, "
            "triangles (K, 3) as particle indices, and the air's own particles (the container's "
            "and the free points) [first_particle, first_particle + particle_count) (copies).")
        .def_property_readonly("rigid_bodies", &python::rigidDict,
                               "Rigid bodies: names, positions (R, 3), orientations (R, 4, "
                               "w x y z), velocities and angular velocities (copies).")
        .def(
            "save",
            [](PyScene& s, const std::string& path) {
                // A project is loaded only when it passes the scene's checks; a state that would
                // not (an element inverted mid-run) is refused here, not found unreadable later.
                if (const auto problems = validateScene(s.scene()); !problems.empty()) {
                    throw std::invalid_argument(
                        "save: '" + path + "' would not load again: " + problems.front() +
                        " (a project keeps a state with no inverted element; save before "
                        "stepping, or step on until the element is mended)");
                }
                python::unwrap(saveProject(s.scene(), path));
            },
            py::arg("path"),
            "Writes the scene as it is now as a project (.json), atomically. Raises ValueError "
            "(and writes nothing) when that state would not load again, e.g. with an element "
            "inverted mid-run.")
        .def(
            "export",
            [](PyScene& s, const std::string& path, const std::string& format) {
                std::string f = format;
                if (f.empty()) {
                    const std::size_t dot = path.rfind('.');
                    f = dot == std::string::npos ? "" : path.substr(dot + 1);
                }
                if (f == "vtu") {
                    python::unwrap(exportVtu(s.scene(), path));
                } else if (f == "msh") {
                    python::unwrap(exportMsh(s.scene(), path));
                } else if (f == "tetgen") {
                    python::unwrap(exportTetgen(s.scene(), path));
                } else if (f == "asset") {
                    python::unwrap(exportCookedAsset(s.scene(), path));
                } else if (f == "project" || f == "json") {
                    python::unwrap(saveProject(s.scene(), path));
                } else {
                    throw std::invalid_argument("export: '" + path +
                                                "': name a format (vtu, msh, tetgen, asset, "
                                                "project) or use one of their extensions");
                }
            },
            py::arg("path"), py::arg("format") = "",
            "Writes the scene as pbdlab-cli export does: 'vtu', 'msh' (Gmsh 4.1), 'tetgen' "
            "(PATH is the prefix), 'asset' (cooked JSON) or 'project'; by default the path's "
            "extension says which (.json is a project).")
        .def(
            "intersections",
            [](PyScene& s) {
                std::vector<TriangleIntersection> pairs;
                {
                    py::gil_scoped_release unlocked;
                    pairs = findIntersections(s.scene(), true);
                }
                py::list out;
                for (const TriangleIntersection& p : pairs) {
                    py::dict d;
                    d["body_a"] = intersectionBodyName(s.scene(), p.bodyA);
                    d["triangle_a"] = p.triangleA;
                    d["body_b"] = intersectionBodyName(s.scene(), p.bodyB);
                    d["triangle_b"] = p.triangleB;
                    d["at_skin_fold"] = p.atSkinFold;
                    out.append(d);
                }
                return out;
            },
            "The pairs of triangles that cross now, over every body's surface (cloth, soft "
            "bodies' boundaries; within a body or between two), other than at a shared vertex "
            "or edge, and against the characters' skins: exact (CGAL), independent of the air "
            "and the contacts; as pbdlab-cli simulate's `intersections`. Each a dict of body_a, "
            "triangle_a, body_b, triangle_b and at_skin_fold (body_b is a character whose skin "
            "triangle crosses the skin itself there: a knee or a crease folding through itself, "
            "where cloth cannot stay uncrossed).")
        .def(
            "write_cache",
            [](PyScene& s, const std::string& folder, int steps, int every,
               const std::string& formats, const std::string& name) {
                if (every < 1) {
                    throw std::invalid_argument("write_cache: every must be at least 1");
                }
                const unsigned f = python::unwrap(parseCacheFormats(formats));
                auto exporter =
                    python::unwrap(CacheExporter::begin(s.scene(), s.rest(), {folder, name, f}));
                python::unwrap(exporter->addFrame(s.scene(), s.time()));
                for (int done = 0; done < steps;) {
                    const int n = std::min(every, steps - done);
                    s.step(n, std::nullopt);
                    done += n;
                    if (n == every) {
                        python::unwrap(exporter->addFrame(s.scene(), s.time()));
                    }
                }
                const CacheExportSummary summary = python::unwrap(exporter->finish());
                py::list files;
                for (const auto& file : summary.files) {
                    files.append(file.string());
                }
                py::dict out;
                out["frames"] = summary.frames;
                out["files"] = files;
                out["surface_vertices"] = summary.surfaceVertices;
                out["pvd_ms"] = summary.pvdMilliseconds;
                out["pc2_ms"] = summary.pc2Milliseconds;
                out["glb_ms"] = summary.glbMilliseconds;
                return out;
            },
            py::arg("folder"), py::arg("steps"), py::arg("every") = 1, py::arg("formats") = "pvd",
            py::arg("name") = "",
            "Steps the scene `steps` steps and writes a cache other tools read into FOLDER, as "
            "pbdlab-cli simulate --cache does: the state now and every `every`-th step after it, "
            "as 'pvd' (ParaView collection with the fields), 'pc2' (point cache with its rest "
            ".obj, for Blender's Mesh Cache modifier) and/or 'glb' (animated glTF), "
            "comma-separated, or 'all'. Returns the frames, the files and the time spent on "
            "each format (ms).")
        .def("copy", &PyScene::copy,
             "A deep copy of the scene, its state and what its solver carries from step to step "
             "(time, the rigid bodies' warm start): stepped, the copy goes on bit for bit as the "
             "original would.")
        .def_property_readonly(
            "particle_count", [](PyScene& s) { return s.scene().particles.size(); },
            "Particles in the scene (bodies', the air's and the container's).")
        .def("__repr__", [](PyScene& s) {
            const Scene& sc = s.scene();
            return "<pbdlab.Scene '" + sc.name + "': " + std::to_string(sc.bodies.size()) +
                   " bodies, " + std::to_string(sc.particles.size()) + " particles, " +
                   std::to_string(sc.tetCount()) + " tets, " + std::to_string(sc.air.tets.size()) +
                   " air tets, t = " + std::to_string(s.time()) + " s>";
        });
}
