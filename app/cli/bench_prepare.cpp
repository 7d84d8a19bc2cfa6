// pbdlab-cli bench-prepare: times the preparation of a production-size mesh. A real mesh is
// subdivided (every triangle into n x n, edges shared) to at least --triangles, written as a
// binary PLY, and prepared as `prepare` would (by default with a cage, tets and air), --runs
// times: the median seconds of each stage, the counts, and the peak memory of PBD Lab and of its
// child processes (TetGen, the contained readers).

#include "app/cli/Command.h"
#include "meshing/MeshImport.h"
#include "meshing/Prepare.h"
#include "meshing/SceneJson.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sys/resource.h>
#include <unistd.h>

namespace pbd::cli {

namespace {

namespace fs = std::filesystem;

struct BenchPrepareOptions {
    std::string mesh;
    std::size_t triangles = 1000000;
    std::size_t cage = 5000;
    bool noAir = false;
    int runs = 3;
    bool json = false;
    std::string keep; // write the subdivided mesh here too
};

// Every triangle of the surface split into n x n by a grid of barycentric points; the points
// on an edge are made once, so neighbours share them.
void subdivide(std::vector<Vec3>& points, std::vector<Triangle>& triangles, int n) {
    if (n <= 1) {
        return;
    }
    std::map<std::pair<Index, Index>, Index> edgeStart;   // first of the edge's n - 1 points
    const auto edgePoint = [&](Index a, Index b, int k) { // k in 1..n-1, from a towards b
        const bool forward = a < b;
        const std::pair<Index, Index> key = forward ? std::pair{a, b} : std::pair{b, a};
        auto [it, made] = edgeStart.try_emplace(key, Index(points.size()));
        if (made) {
            for (int j = 1; j < n; ++j) {
                points.push_back(points[key.first] +
                                 (points[key.second] - points[key.first]) * (double(j) / n));
            }
        }
        return it->second + Index((forward ? k : n - k) - 1);
    };
    std::vector<Triangle> out;
    out.reserve(triangles.size() * std::size_t(n) * std::size_t(n));
    std::vector<Index> grid;
    for (const Triangle& t : triangles) {
        // grid(i, j): the point a + (b - a) i / n + (c - a) j / n, i + j <= n.
        grid.assign(std::size_t((n + 1) * (n + 1)), 0);
        const auto at = [&](int i, int j) -> Index& { return grid[std::size_t(i * (n + 1) + j)]; };
        const Vec3 a = points[t[0]], b = points[t[1]], c = points[t[2]];
        for (int i = 0; i <= n; ++i) {
            for (int j = 0; i + j <= n; ++j) {
                if (i == 0 && j == 0) {
                    at(i, j) = t[0];
                } else if (i == n) {
                    at(i, j) = t[1];
                } else if (j == n) {
                    at(i, j) = t[2];
                } else if (j == 0) {
                    at(i, j) = edgePoint(t[0], t[1], i);
                } else if (i == 0) {
                    at(i, j) = edgePoint(t[0], t[2], j);
                } else if (i + j == n) {
                    at(i, j) = edgePoint(t[1], t[2], j);
                } else {
                    at(i, j) = Index(points.size());
                    points.push_back(a + (b - a) * (double(i) / n) + (c - a) * (double(j) / n));
                }
            }
        }
        for (int i = 0; i < n; ++i) {
            for (int j = 0; i + j < n; ++j) {
                out.push_back({at(i, j), at(i + 1, j), at(i, j + 1)});
                if (i + j + 1 < n) {
                    out.push_back({at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)});
                }
            }
        }
    }
    triangles = std::move(out);
}

bool writeBinaryPly(const fs::path& path, const std::vector<Vec3>& points,
                    const std::vector<Triangle>& triangles) {
    std::ofstream out(path, std::ios::binary);
    out << "ply\nformat binary_little_endian 1.0\nelement vertex " << points.size()
        << "\nproperty float x\nproperty float y\nproperty float z\nelement face "
        << triangles.size() << "\nproperty list uchar int vertex_indices\nend_header\n";
    for (const Vec3& p : points) {
        const float xyz[3] = {float(p.x()), float(p.y()), float(p.z())};
        out.write(reinterpret_cast<const char*>(xyz), sizeof xyz);
    }
    for (const Triangle& t : triangles) {
        const unsigned char three = 3;
        const std::int32_t v[3] = {std::int32_t(t[0]), std::int32_t(t[1]), std::int32_t(t[2])};
        out.write(reinterpret_cast<const char*>(&three), 1);
        out.write(reinterpret_cast<const char*>(v), sizeof v);
    }
    return bool(out);
}

double median(std::vector<double> v) {
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

int benchPrepare(const BenchPrepareOptions& o) {
    Result<ImportedMesh> imported = importMesh(o.mesh);
    if (!imported) {
        return inputProblem(imported.error());
    }
    std::vector<Vec3> points = imported->scene.particles.positions;
    std::vector<Triangle> triangles;
    for (const Body& b : imported->scene.bodies) {
        triangles.insert(triangles.end(), b.triangles.begin(), b.triangles.end());
    }
    if (triangles.empty()) {
        return inputProblem("'" + o.mesh + "' has no triangles");
    }
    const std::size_t original = triangles.size();
    const int n =
        std::max(1, int(std::ceil(std::sqrt(double(o.triangles) / double(triangles.size())))));
    subdivide(points, triangles, n);
    const fs::path ply =
        o.keep.empty()
            ? fs::temp_directory_path() / ("pbdlab-bench-" + std::to_string(::getpid()) + ".ply")
            : fs::path(o.keep);
    if (!writeBinaryPly(ply, points, triangles)) {
        return inputProblem("cannot write " + ply.string());
    }
    PrepareOptions options;
    options.cage.triangles = o.cage;
    options.tetrahedralize = true;
    options.air = !o.noAir;
    options.defaultConstraints = true;
    std::map<std::string, std::vector<double>> stages;
    PrepareReport last;
    for (int run = 0; run < o.runs; ++run) {
        PrepareResult r = prepareFiles({ply}, options);
        if (!r.report.ok()) {
            if (o.keep.empty()) {
                fs::remove(ply);
            }
            return inputProblem("prepare failed: " + r.report.error);
        }
        double total = 0;
        for (const auto& [stage, seconds] : r.report.timings) {
            const std::string name = stage.rfind("import ", 0) == 0 ? "import" : stage;
            stages[name].push_back(seconds);
            total += seconds;
        }
        stages["total"].push_back(total);
        last = std::move(r.report);
    }
    if (o.keep.empty()) {
        fs::remove(ply);
    }
    rusage self{}, children{};
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    const double selfMb = double(self.ru_maxrss) / 1024,
                 childMb = double(children.ru_maxrss) / 1024;
    nlohmann::json j;
    j["mesh"] = o.mesh;
    j["original_triangles"] = original;
    j["subdivision"] = n;
    j["triangles"] = triangles.size();
    j["vertices"] = points.size();
    j["cage_triangles"] = last.cage.triangles;
    j["cage_wraps"] = last.cage.attempts;
    std::size_t tets = 0;
    for (const BodyTetReport& t : last.tets) {
        tets += t.tets;
    }
    j["tets"] = tets;
    j["air_tets"] = last.hasAir ? last.air.tets : 0;
    j["outside_vertices"] = last.cage.outside;
    j["runs"] = o.runs;
    nlohmann::json seconds = nlohmann::json::object();
    for (const auto& [stage, values] : stages) {
        seconds[stage] = median(values);
    }
    j["median_seconds"] = seconds;
    j["peak_mb"] = selfMb;
    j["children_peak_mb"] = childMb;
    if (o.json) {
        std::cout << sceneio::dumpJson(j, 2) << "\n";
        return kSuccess;
    }
    std::printf("%s: %zu triangles (%zu subdivided %d x %d), %zu vertices\n", o.mesh.c_str(),
                triangles.size(), original, n, n, points.size());
    std::printf("cage %zu triangles (%d wraps), %zu tets, %zu air tets, %zu vertices outside\n",
                last.cage.triangles, last.cage.attempts, tets,
                last.hasAir ? last.air.tets : std::size_t(0), last.cage.outside);
    std::printf("median of %d runs, seconds:", o.runs);
    for (const auto& [stage, values] : stages) {
        std::printf(" %s %.3f", stage.c_str(), median(values));
    }
    std::printf("\npeak memory: %.0f MB (PBD Lab), %.0f MB (largest child process)\n", selfMb,
                childMb);
    return kSuccess;
}

} // namespace

void addBenchPrepareCommand(CLI::App& cli, int& status) {
    auto o = std::make_shared<BenchPrepareOptions>();
    auto* c = cli.add_subcommand(
        "bench-prepare",
        "Time the preparation of a production-size mesh: MESH subdivided to at least --triangles "
        "(every triangle n x n), written as binary PLY and prepared with a cage, tets and air "
        "(as 'prepare MESH --cage N --tet --air --constraints'), --runs times: median seconds "
        "per stage, counts and peak memory.");
    c->add_option("mesh", o->mesh, "A mesh file to subdivide")->required()->type_name("MESH");
    c->add_option("--triangles", o->triangles, "Subdivide to at least this many triangles")
        ->check(CLI::Range(std::size_t(1), std::size_t(100000000)))
        ->type_name("N");
    c->add_option("--cage", o->cage, "The cage's triangles, about")
        ->check(CLI::Range(std::size_t(8), std::size_t(10000000)))
        ->type_name("N");
    c->add_flag("--no-air", o->noAir, "Without the air");
    c->add_option("--runs", o->runs, "Runs to take the median of")
        ->check(positiveWhole())
        ->type_name("R");
    c->add_option("--keep", o->keep, "Also keep the subdivided mesh here (binary PLY)")
        ->type_name("FILE.ply");
    c->add_flag("--json", o->json, "The figures as JSON");
    c->callback([o, &status] { status = benchPrepare(*o); });
}

} // namespace pbd::cli
