// pbdlab-cli prepare: import, check and repair meshes, tetrahedralize closed bodies, tessellate
// the air, material frames, masses and constraints; write the project, asset and meshes.

#include "meshing/Prepare.h"

#include "app/cli/Command.h"
#include "app/cli/SceneOutputs.h"
#include "meshing/ProjectFile.h"

#include <chrono>
#include <cstdio>

namespace pbd::cli {

namespace {

struct PrepareCommandOptions {
    PrepareOptions prepare;
    std::vector<std::string> files;
    std::string frames, tetFrames, localBodies, wrap, overlaps, cageMesh, bendingModel;
    std::size_t cageTriangles = 0;
    double timeout = 0;
    int airSubdivisions = 0;
    SceneOutputs out;
    std::string report;
    bool quiet = false;
};

const char* severityName(ReportSeverity s) {
    switch (s) {
    case ReportSeverity::Info:
        return "info";
    case ReportSeverity::Warning:
        return "warning";
    case ReportSeverity::Error:
        return "error";
    }
    return "";
}

int prepare(PrepareCommandOptions& o) {
    std::vector<std::string> outputs = o.out.paths();
    outputs.push_back(o.report);
    if (checkOutputs(outputs) != kSuccess) {
        return kInputProblem;
    }
    PrepareOptions& options = o.prepare;
    if (!o.frames.empty()) {
        options.frames = true;
    }
    if (!o.tetFrames.empty()) {
        options.tetFrames =
            o.tetFrames == "global" ? TetFrameMode::Global : TetFrameMode::NearestSurface;
        options.frames = true;
    }
    if (!o.bendingModel.empty()) {
        options.bendingModel = *bendingModelFromString(o.bendingModel); // checked by the option
    }
    if (!o.wrap.empty()) {
        options.repairOptions.wrap = o.wrap == "always"  ? WrapMode::Always
                                     : o.wrap == "never" ? WrapMode::Never
                                                         : WrapMode::Auto;
    }
    options.cage.triangles = o.cageTriangles;
    options.cage.mesh = o.cageMesh;
    options.cage.import = options.import;
    if (!o.overlaps.empty()) {
        options.overlaps = o.overlaps == "union"  ? OverlapMode::Union
                           : o.overlaps == "keep" ? OverlapMode::Keep
                                                  : OverlapMode::Wrap;
    }
    if (o.airSubdivisions > 0) {
        options.airOptions.boxSubdivisions = o.airSubdivisions;
    }
    for (std::size_t start = 0; start < o.localBodies.size();) {
        const std::size_t comma = std::min(o.localBodies.find(',', start), o.localBodies.size());
        if (comma > start) {
            options.airOptions.localBodies.push_back(o.localBodies.substr(start, comma - start));
        }
        start = comma + 1;
    }
    if (o.timeout > 0) {
        options.tet.timeoutSeconds = options.airOptions.timeoutSeconds = o.timeout;
    }
    std::vector<std::filesystem::path> files(o.files.begin(), o.files.end());
    int lastPercent = -1;
    const ProgressCallback progress = [&](double f, const std::string& stage) {
        if (!o.quiet && f >= 0 && int(f * 100) != lastPercent) {
            lastPercent = int(f * 100);
            std::fprintf(stderr, "[%3d%%] %s\n", lastPercent, stage.c_str());
        }
        return true;
    };
    PrepareResult result = prepareFiles(files, options, progress);
    for (const ReportLine& l : result.report.lines) {
        if (l.severity == ReportSeverity::Error && l.text == result.report.error) {
            continue; // said once below
        }
        if (!o.quiet || l.severity != ReportSeverity::Info) {
            std::fprintf(stderr, "%s: %s\n", severityName(l.severity), l.text.c_str());
        }
    }
    const auto started = std::chrono::steady_clock::now();
    if (result.report.ok()) {
        if (const Result<bool> written = writeSceneOutputs(result.scene, o.out); !written) {
            inputProblem(written.error());
            result.report.error = written.error();
        }
    }
    result.report.timings.emplace_back(
        "export",
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    if (!o.report.empty()) {
        if (const Result<bool> ok = writeFileAtomically(o.report, result.report.toJson(2) + "\n");
            !ok) {
            return inputProblem(ok.error());
        }
    }
    if (!result.report.ok()) {
        return inputProblem("prepare failed: " + result.report.error);
    }
    return kSuccess;
}

} // namespace

void addPrepareCommand(CLI::App& cli, int& status) {
    auto o = std::make_shared<PrepareCommandOptions>();
    PrepareOptions& p = o->prepare;
    auto* c = cli.add_subcommand(
        "prepare",
        "Import, check and repair meshes; tetrahedralize closed bodies (TetGen, surface kept "
        "exactly); tessellate the air in a box around everything; material frames from UVs; "
        "masses and, with --constraints, default constraints. Writes a project file, a cooked "
        "asset, .vtu, Gmsh .msh 4.1, TetGen .node/.ele/.face and a JSON report. Progress and "
        "the report go to stderr.");
    c->add_option("meshes", o->files, "Mesh files: .obj, .ply, .stl, .off, .gltf, .glb")
        ->required()
        ->type_name("MESH...");
    c->add_flag("--tet", p.tetrahedralize, "Tetrahedralize closed bodies");
    c->add_flag("--air", p.air, "Tessellate the air between and around the bodies");
    c->add_option("--cage", o->cageTriangles,
                  "Simulate a cage of about N triangles (an alpha wrap around all the meshes), "
                  "tetrahedralized; the meshes are bound to its tets and follow it")
        ->check(CLI::Range(8, 10000000))
        ->type_name("N");
    c->add_option("--cage-mesh", o->cageMesh,
                  "Simulate this closed mesh as the cage instead (repaired like any body)")
        ->type_name("CAGE")
        ->excludes("--cage");
    choice(c->add_option("--frames", o->frames, "Material frames from the UVs"), {"uv"});
    choice(c->add_option("--tet-frames", o->tetFrames,
                         "Tets' frames: one global frame, or the nearest surface triangle's"),
           {"global", "surface"});
    c->add_option("--quality", p.tet.radiusEdgeRatio,
                  "Tets' radius-edge ratio bound (at least 1; 0: none)")
        ->check(numberWhere([](double v) { return v == 0 || v >= 1; },
                            "a radius-edge ratio of at least 1 (or 0 for none)", "Q"))
        ->type_name("Q");
    c->add_option("--max-volume", p.tet.maxVolume, "Largest tet volume, m^3")
        ->check(positiveNumber())
        ->type_name("V");
    c->add_option("--air-margin", p.airOptions.margin,
                  "The air box's margin, a share F of the scene's size")
        ->check(positiveNumber())
        ->type_name("F");
    c->add_option("--air-subdivisions", o->airSubdivisions, "Segments per air box edge")
        ->check(positiveWhole())
        ->type_name("N");
    c->add_option("--air-quality", p.airOptions.radiusEdgeRatio, "The air tets' radius-edge ratio")
        ->check(numberAtLeastZero())
        ->type_name("Q");
    c->add_option("--local-air", p.airOptions.localDistance,
                  "Tessellate only the air within D m of the --local-air-bodies")
        ->check(positiveNumber())
        ->type_name("D");
    c->add_option("--local-air-bodies", o->localBodies, "The bodies of --local-air")
        ->type_name("NAME,...");
    c->add_flag("--merge-shells", p.import.mergeShells,
                "Keep a part's separate shells in one body (default: a body per shell)");
    c->add_option("--scale", p.import.scale, "Scale the meshes' coordinates by S")
        ->check(positiveNumber())
        ->type_name("S");
    c->add_flag("--no-repair{false}", p.repair, "Refuse meshes with problems instead of mending");
    choice(c->add_option("--wrap", o->wrap,
                         "Alpha-wrap bodies: auto (solids still broken after the other repairs), "
                         "always (every body, open ones too), never"),
           {"auto", "always", "never"});
    c->add_option("--wrap-alpha", p.repairOptions.wrapAlpha,
                  "The wrap's alpha, m: no cavity narrower (default: body diagonal / 50)")
        ->check(positiveNumber())
        ->type_name("A");
    c->add_option("--wrap-offset", p.repairOptions.wrapOffset,
                  "The wrap's distance from the surface, m (default: alpha / 30)")
        ->check(positiveNumber())
        ->type_name("D");
    choice(c->add_option("--overlaps", o->overlaps,
                         "With --tet or --air, bodies that cross each other become one: wrap "
                         "(their alpha wrap, the default), union (their boolean union when each "
                         "bounds a volume), keep (refuse)"),
           {"wrap", "union", "keep"});
    c->add_option("--max-hole", p.repairOptions.maxHole,
                  "Fill holes whose border is at most F of the body's diagonal long, when all "
                  "of a body's holes are (0: never fill)")
        ->check(CLI::Range(0.0, 1000.0))
        ->type_name("F");
    c->add_flag("--constraints", p.defaultConstraints, "Add default constraints");
    c->add_option("--bending-model", o->bendingModel,
                  "With --constraints: the cloth's bending, bridson (signed dihedral angle, the "
                  "default), pbd-appendix or isometric (Bergou et al.'s quadratic model: two "
                  "thirds of the cost, for cloth that stretches little)")
        ->check(CLI::IsMember({"bridson", "pbd-appendix", "isometric"}))
        ->type_name("MODEL");
    c->add_flag("--rigid", p.rigidHulls, "Every body becomes a rigid body, its convex hull");
    c->add_flag("--ground", p.rigidGround, "With --rigid: on a static ground");
    c->add_option("--density", p.density, "Density, kg/m^3 (tet and rigid bodies)")
        ->check(positiveNumber())
        ->type_name("D");
    c->add_option("--areal-density", p.arealDensity, "Mass per area of cloth, kg/m^2")
        ->check(positiveNumber())
        ->type_name("D");
    c->add_option("--timeout", o->timeout, "Seconds TetGen may take per run")
        ->check(positiveNumber())
        ->type_name("S");
    addSceneOutputs(*c, o->out);
    c->add_option("--report", o->report, "Write the report as JSON")->type_name("REPORT.json");
    c->add_flag("--quiet", o->quiet, "Only warnings and errors on stderr");
    c->callback([o, &status] { status = prepare(*o); });
}

} // namespace pbd::cli
