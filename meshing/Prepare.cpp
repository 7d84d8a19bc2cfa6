#include "meshing/Prepare.h"

#include "core/constraints/ConstraintBuilders.h"
#include "core/scene/Mass.h"
#include "core/scene/Topology.h"
#include "meshing/SceneJson.h"

#include <chrono>
#include <limits>
#include <nlohmann/json.hpp>

namespace pbd {

namespace {

using Clock = std::chrono::steady_clock;

class Stopwatch {
public:
    Stopwatch(PrepareReport& report, std::string stage)
        : report_(report)
        , stage_(std::move(stage))
        , start_(Clock::now()) {}
    ~Stopwatch() {
        report_.timings.emplace_back(stage_,
                                     std::chrono::duration<double>(Clock::now() - start_).count());
    }

private:
    PrepareReport& report_;
    std::string stage_;
    Clock::time_point start_;
};

void line(PrepareReport& r, ReportSeverity s, std::string text) {
    r.lines.push_back({s, std::move(text)});
}

PrepareResult fail(PrepareResult result, std::string error) {
    line(result.report, ReportSeverity::Error, error);
    result.report.error = std::move(error);
    return result;
}

// Progress over the pipeline's stages: [from, to) of the whole.
ProgressCallback span(const ProgressCallback& progress, double from, double to) {
    if (!progress) {
        return {};
    }
    return [=](double f, const std::string& stage) {
        return progress(f < 0 ? -1.0 : from + (to - from) * f, stage);
    };
}

bool keepGoing(const ProgressCallback& progress, double f, const std::string& stage) {
    return !progress || progress(f, stage);
}

nlohmann::json wrapJson(const WrapReport& w) {
    return {{"alpha", w.alpha},
            {"offset", w.offset},
            {"wrap_to_original", w.wrapToOriginal},
            {"original_to_wrap", w.originalToWrap},
            {"hausdorff_error", w.hausdorffError},
            {"volume_before", w.volumeBefore},
            {"volume_after", w.volumeAfter},
            {"triangles_before", w.trianglesBefore},
            {"triangles_after", w.trianglesAfter}};
}

// What the user can do about the problems that stopped meshing, for the command line and the
// Prepare dialog alike.
std::string advice(const PrepareReport& report) {
    bool self = false, crossing = false, nonManifold = false;
    for (const BodySurfaceReport& s : report.surfaces.bodies) {
        self = self || s.selfIntersections > 0;
        nonManifold = nonManifold || !s.manifold();
    }
    crossing = report.surfaces.bodyIntersections() > 0;
    // Crossing parts merge when one of them is closed; open ones (cloth) only when wrapped. A
    // body inside another is inside a closed one.
    bool crossingSolid = !report.surfaces.nested.empty();
    for (const TriangleIntersection& i : report.surfaces.intersections) {
        crossingSolid =
            crossingSolid || (i.bodyA != i.bodyB && (report.surfaces.bodies[i.bodyA].closed() ||
                                                     report.surfaces.bodies[i.bodyB].closed()));
    }
    std::vector<std::string> tries;
    if (crossingSolid) {
        tries.emplace_back("crossing parts become one body with --overlaps wrap or union "
                           "(Prepare dialog: Crossing bodies)");
    }
    if (self || nonManifold || (crossing && !crossingSolid)) {
        tries.emplace_back("--wrap always replaces each body by a closed alpha wrap around it "
                           "(Prepare dialog: Alpha wrap, Every body)");
    }
    if (self || crossing || nonManifold) {
        tries.emplace_back("--cage N simulates a closed cage of about N triangles and carries the "
                           "mesh as it is (Prepare dialog: Cage)");
    }
    if (tries.empty()) {
        return "";
    }
    std::string out = ". To go on: ";
    for (std::size_t i = 0; i < tries.size(); ++i) {
        out += (i ? "; " : "") + tries[i];
    }
    return out;
}

void addDefaultConstraints(Scene& scene, PrepareReport& report) {
    for (const Body& body : scene.bodies) {
        BuildReport built;
        if (body.kind == BodyKind::TetBody) {
            built = addStrainTets(scene.constraints, scene.particles, body, StrainTetMaterial{});
            BuildReport volume = addTetVolumes(scene.constraints, scene.particles, body, 1e6);
            built.warnings.insert(built.warnings.end(), volume.warnings.begin(),
                                  volume.warnings.end());
        } else if (body.kind == BodyKind::Cloth) {
            built = addStrainTriangles(scene.constraints, scene.particles, body,
                                       StrainTriangleMaterial{});
            addDihedralBending(scene.constraints, scene.particles, body, 1.0);
        }
        for (const std::string& w : built.warnings) {
            line(report, ReportSeverity::Warning, w);
        }
    }
    ensureConstraintGroups(scene); // one group per body and type, as the user edits them
}

} // namespace

std::string PrepareReport::toJson(int indent) const {
    using nlohmann::json;
    json j;
    j["ok"] = ok();
    if (!ok()) {
        j["error"] = error;
    }
    j["inputs"] = inputs;
    j["bodies"] = bodies;
    j["vertices"] = vertices;
    j["triangles"] = triangles;
    j["constraints"] = constraints;
    json perBody = json::array();
    for (std::size_t b = 0; b < surfaces.bodies.size(); ++b) {
        const BodySurfaceReport& s = surfaces.bodies[b];
        json body{{"name", s.body},
                  {"triangles", s.triangles},
                  {"vertices", s.vertices},
                  {"closed", s.closed()},
                  {"manifold", s.manifold()},
                  {"outward", s.outward()},
                  {"boundary_edges", s.boundaryEdges},
                  {"non_manifold_edges", s.nonManifoldEdges},
                  {"non_manifold_vertices", s.nonManifoldVertices},
                  {"degenerate_triangles", s.degenerateTriangles},
                  {"self_intersections", s.selfIntersections},
                  {"components", s.components},
                  {"volume", s.closed() ? s.signedVolume : 0.0},
                  {"area", s.area},
                  {"uv_coverage", s.uvCoverage},
                  {"degenerate_uv_triangles", s.degenerateUVTriangles}};
        for (const BodyRepair& r : repairBodies) {
            if (r.body == s.body) {
                json repair{{"rungs", r.rungs}, {"actions", r.actions}, {"solid", r.solid}};
                if (r.wrapped) {
                    repair["wrap"] = wrapJson(r.wrap);
                }
                body["repair"] = repair;
            }
        }
        for (const BodyTetReport& t : tets) {
            if (t.body == s.body) {
                body["tets"] = t.tets;
                body["steiner_points"] = t.steinerPoints;
                body["surface_triangles_preserved"] = t.surfacePreserved;
                body["surface_triangles"] = t.surfaceTriangles;
                body["tetgen_seconds"] = t.seconds;
                body["tetgen_peak_mb"] = double(t.peakMemoryBytes) / (1 << 20);
            }
        }
        perBody.push_back(body);
    }
    j["per_body"] = perBody;
    std::size_t preserved = 0, surface = 0, tetCount = 0;
    for (const BodyTetReport& t : tets) {
        preserved += t.surfacePreserved;
        surface += t.surfaceTriangles;
        tetCount += t.tets;
    }
    j["tets"] = tetCount;
    j["surface_triangles_preserved"] = preserved;
    j["surface_triangles"] = surface;
    j["body_intersections"] = surfaces.bodyIntersections();
    j["air_tets"] = hasAir ? air.tets : 0;
    if (hasAir) {
        j["air"] = {{"tets", air.tets},
                    {"box_vertices", air.boxVertices},
                    {"steiner_points", air.steinerPoints},
                    {"shared_vertices", air.sharedVertices},
                    {"dropped_by_distance", air.droppedByDistance},
                    {"tetgen_peak_mb", double(air.peakMemoryBytes) / (1 << 20)},
                    {"volume", air.volume}};
    }
    j["inverted_tets"] = invertedTets;
    j["degenerate_uv_triangles"] = frames.degenerateUV;
    j["triangle_frames_from_uv"] = frames.fromUVs;
    j["tet_frames"] = frames.tetFrames;
    j["repairs"] = repairs;
    json mergedJson = json::array();
    for (const MergedOverlap& m : merged) {
        json one{{"body", m.body}, {"parts", m.parts}, {"united", m.united}, {"action", m.action}};
        if (!m.united) {
            one["wrap"] = wrapJson(m.wrap);
        }
        mergedJson.push_back(one);
    }
    j["merged_overlaps"] = mergedJson;
    if (hasCage) {
        j["cage"] = {{"source", cage.source},
                     {"triangles", cage.triangles},
                     {"alpha", cage.alpha},
                     {"offset", cage.offset},
                     {"wraps", cage.attempts},
                     {"render_meshes", cage.renderMeshes},
                     {"render_vertices", cage.renderVertices},
                     {"render_triangles", cage.renderTriangles},
                     {"outside_vertices", cage.outside},
                     {"largest_outside_distance", cage.largestOutsideDistance},
                     {"render_diagonal", cage.renderDiagonal}};
    }
    json problems = json::array();
    json warnings = json::array();
    for (const ReportLine& l : lines) {
        if (l.severity == ReportSeverity::Error) {
            problems.push_back(l.text);
        } else if (l.severity == ReportSeverity::Warning) {
            warnings.push_back(l.text);
        }
    }
    j["problems"] = problems;
    j["warnings"] = warnings;
    json t = json::object();
    double total = 0;
    for (const auto& [stage, seconds] : timings) {
        t[stage] = seconds;
        total += seconds;
    }
    t["total"] = total;
    j["timings"] = t;
    return sceneio::dumpJson(j, indent);
}

PrepareResult prepareScene(const Scene& input, const PrepareOptions& options,
                           const ProgressCallback& progress) {
    PrepareResult result;
    result.scene = input;
    Scene& scene = result.scene;
    PrepareReport& report = result.report;
    if (scene.constraints.elementCount() > 0 || !scene.air.empty()) {
        return fail(std::move(result),
                    "the scene already has constraints or air; prepare works on imported meshes");
    }
    if (!keepGoing(progress, 0.0, "checking surfaces")) {
        return fail(std::move(result), kCancelledMessage);
    }
    // With a cage the meshes are carried as they are, broken or not; the cage is what the rest
    // of the pipeline repairs, tetrahedralizes and gives air.
    const bool caged = options.cage.enabled();
    if (caged) {
        if (options.rigidHulls) {
            return fail(std::move(result), "a cage is a tet body; it cannot be a rigid hull");
        }
        Stopwatch watch(report, "cage");
        Result<CageReport> cage = buildCage(scene, options.cage, span(progress, 0.0, 0.1));
        if (!cage) {
            return fail(std::move(result), cage.error());
        }
        report.hasCage = true;
        report.cage = *cage;
        line(report, ReportSeverity::Info,
             "cage (" + cage->source + "): " + std::to_string(cage->triangles) +
                 " triangles around " + std::to_string(cage->renderTriangles) +
                 " render triangles in " + std::to_string(cage->renderMeshes) + " mesh(es)" +
                 (cage->attempts > 0 ? ", alpha " + std::to_string(cage->alpha) + " m after " +
                                           std::to_string(cage->attempts) + " wrap(s)"
                                     : std::string()));
    }
    const bool tetrahedralize = options.tetrahedralize || caged;
    if (options.repair) {
        Stopwatch watch(report, "repair");
        RepairOptions repairOptions = options.repairOptions;
        // Without meshing nothing needs a solid: the wrap runs only when asked for.
        if (!(tetrahedralize || options.air) && repairOptions.wrap == WrapMode::Auto) {
            repairOptions.wrap = WrapMode::Never;
        }
        RepairReport repaired = repairSurfaces(scene, repairOptions);
        report.repairs = std::move(repaired.actions);
        report.repairBodies = std::move(repaired.bodies);
        for (const std::string& r : report.repairs) {
            line(report, ReportSeverity::Info, "repaired " + r);
        }
    }
    {
        Stopwatch watch(report, "check");
        report.surfaces = checkSurfaces(scene);
    }
    const bool meshing = tetrahedralize || options.air;
    if (meshing && options.repair &&
        (report.surfaces.bodyIntersections() > 0 || !report.surfaces.nested.empty())) {
        Stopwatch watch(report, "overlaps");
        report.merged =
            mergeOverlaps(scene, report.surfaces, options.overlaps, options.repairOptions);
        if (!report.merged.empty()) {
            for (const MergedOverlap& m : report.merged) {
                report.repairs.push_back(m.action);
                line(report, ReportSeverity::Info, "repaired " + m.action);
            }
            report.surfaces = checkSurfaces(scene);
        }
    }
    for (const std::string& w : report.surfaces.warnings) {
        line(report, ReportSeverity::Warning, w);
    }
    for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
        const BodySurfaceReport& s = report.surfaces.bodies[b];
        line(report, ReportSeverity::Info,
             "body '" + s.body + "': " + std::to_string(s.triangles) + " triangles, " +
                 std::to_string(s.vertices) + " vertices, " + (s.closed() ? "closed" : "open") +
                 (s.manifold() ? ", manifold" : ", NOT manifold") + ", " +
                 std::to_string(s.components) + " component(s)");
    }
    if (meshing && !report.surfaces.problems.empty()) {
        for (const std::string& p : report.surfaces.problems) {
            line(report, ReportSeverity::Error, p);
        }
        report.error = report.surfaces.problems.front() +
                       (report.surfaces.problems.size() > 1
                            ? " (and " + std::to_string(report.surfaces.problems.size() - 1) +
                                  " more problems)"
                            : "") +
                       "; TetGen was not run" + advice(report);
        return result;
    }
    for (const std::string& p : report.surfaces.problems) {
        line(report, ReportSeverity::Warning, p);
    }

    if (options.rigidHulls) {
        if (meshing) {
            return fail(std::move(result),
                        "rigid bodies are convex hulls: they are not tetrahedralized and have no "
                        "air; choose one or the other");
        }
        Stopwatch watch(report, "hulls");
        Real lowest = std::numeric_limits<Real>::infinity();
        Bounds all;
        for (const Body& body : scene.bodies) {
            std::vector<Vec3> points(scene.particles.positions.begin() + body.firstParticle,
                                     scene.particles.positions.begin() + body.firstParticle +
                                         body.particleCount);
            Result<RigidShape> hull = RigidShape::hull(points);
            if (!hull) {
                return fail(std::move(result),
                            "body '" + body.name + "' cannot be a rigid body: " + hull.error());
            }
            RigidBody rigid;
            rigid.name = body.name;
            rigid.density = options.density;
            rigid.shapes.push_back(std::move(hull).value());
            finishRigidBody(rigid);
            for (const Vec3& p : points) {
                lowest = std::min(lowest, p.y());
                all.add(p);
            }
            line(report, ReportSeverity::Info,
                 "body '" + body.name + "': rigid convex hull of " +
                     std::to_string(rigid.shapes[0].polyhedron->vertices.size()) + " vertices, " +
                     std::to_string(rigid.shapes[0].polyhedron->faces.size()) + " faces, " +
                     std::to_string(rigid.mass) + " kg");
            scene.rigidBodies.push_back(std::move(rigid));
        }
        if (options.rigidGround && !scene.bodies.empty()) {
            RigidBody ground;
            ground.name = "ground";
            ground.motion = RigidMotion::Static;
            const Real half = std::max<Real>(1.0, all.size().maxCoeff() * 2);
            ground.shapes.push_back(RigidShape::box(Vec3(half, 0.05 * half, half)));
            ground.x = Vec3(all.center().x(), lowest - 0.05 * half, all.center().z());
            finishRigidBody(ground);
            scene.rigidBodies.insert(scene.rigidBodies.begin(), std::move(ground));
            line(report, ReportSeverity::Info,
                 "a static ground under the bodies, its top at y = " + std::to_string(lowest));
        }
        scene.bodies.clear();
        scene.particles = Particles{};
        scene.solver.timeStep = 1.0 / 60.0;
        report.bodies = scene.rigidBodies.size();
        keepGoing(progress, 1.0, "done");
        return result;
    }

    // Roles: open surfaces are cloth; closed ones become tet bodies when tetrahedralizing.
    std::vector<std::size_t> toMesh;
    for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
        Body& body = scene.bodies[b];
        if (body.kind != BodyKind::Surface || !body.tets.empty()) {
            continue;
        }
        if (!report.surfaces.bodies[b].closed()) {
            body.kind = BodyKind::Cloth;
        } else if (tetrahedralize) {
            toMesh.push_back(b);
        }
    }
    const double tetShare = options.air ? 0.45 : 0.9;
    if (!toMesh.empty()) {
        Stopwatch watch(report, "tetrahedralize");
        auto tets =
            tetrahedralizeBodies(scene, toMesh, options.tet, span(progress, 0.05, 0.05 + tetShare));
        if (!tets) {
            return fail(std::move(result), tets.error());
        }
        report.tets = std::move(*tets);
        for (const BodyTetReport& t : report.tets) {
            line(report, ReportSeverity::Info,
                 "body '" + t.body + "': " + std::to_string(t.tets) + " tets, " +
                     std::to_string(t.steinerPoints) + " interior points, " +
                     std::to_string(t.surfacePreserved) + " of " +
                     std::to_string(t.surfaceTriangles) + " surface triangles kept");
            if (t.surfacePreserved != t.surfaceTriangles) {
                line(report, ReportSeverity::Warning,
                     "body '" + t.body +
                         "': " + std::to_string(t.surfaceTriangles - t.surfacePreserved) +
                         " surface triangle(s) are not tet faces");
            }
        }
    }
    if (caged) {
        if (scene.bodies.size() != 1 || scene.bodies[0].kind != BodyKind::TetBody) {
            return fail(std::move(result),
                        "the cage is not a closed surface after repair, so it has no tets to "
                        "carry the meshes (a cage file must be closed; --wrap always wraps it)");
        }
        Stopwatch watch(report, "bind");
        bindEmbeddedMeshes(scene, 0, report.cage);
        std::string outside = "all inside the cage";
        if (report.cage.outside > 0) {
            outside = std::to_string(report.cage.outside) +
                      " outside the cage, carried by the nearest tet (the farthest " +
                      std::to_string(report.cage.largestOutsideDistance) + " m from it)";
        }
        line(report, report.cage.outside > 0 ? ReportSeverity::Warning : ReportSeverity::Info,
             "bound " + std::to_string(report.cage.renderVertices) +
                 " render vertices to the cage's tets: " + outside);
    }
    // Masses before the air: its free Steiner points take the bodies' mean particle mass.
    for (const Body& body : scene.bodies) {
        if (body.kind == BodyKind::TetBody) {
            assignTetMasses(scene.particles, body, options.density);
        } else if (body.kind == BodyKind::Cloth) {
            assignTriangleMasses(scene.particles, body, options.arealDensity);
        }
    }
    if (options.air) {
        Stopwatch watch(report, "air");
        auto air = tessellateAir(scene, options.airOptions, span(progress, 0.5, 0.95));
        if (!air) {
            return fail(std::move(result), air.error());
        }
        report.hasAir = true;
        report.air = *air;
        line(report, ReportSeverity::Info,
             "air: " + std::to_string(air->tets) + " tets, " + std::to_string(air->boxVertices) +
                 " container vertices, " + std::to_string(air->steinerPoints) +
                 " free air points, " + std::to_string(air->sharedVertices) +
                 " vertices shared with the bodies");
    }
    if (!keepGoing(progress, 0.95, "material frames")) {
        return fail(std::move(result), kCancelledMessage);
    }
    if (options.frames) {
        Stopwatch watch(report, "frames");
        report.frames = assignMaterialFrames(scene, options.tetFrames);
        for (const std::string& w : report.frames.warnings) {
            line(report, ReportSeverity::Warning, w);
        }
        line(report, ReportSeverity::Info,
             "material frames: " + std::to_string(report.frames.fromUVs) + " of " +
                 std::to_string(report.frames.triangleFrames) + " triangles from UVs" +
                 (report.frames.tetFrames > 0 ? ", " + std::to_string(report.frames.tetFrames) +
                                                    " tets from the nearest surface"
                                              : std::string()));
    }
    if (options.defaultConstraints) {
        Stopwatch watch(report, "constraints");
        scene.constraints.bending.model = options.bendingModel; // the builders follow it
        addDefaultConstraints(scene, report);
    }

    const auto& x = scene.particles.positions;
    auto countInverted = [&](const std::vector<Tetrahedron>& tets) {
        for (const Tetrahedron& t : tets) {
            report.invertedTets += !(signedVolume(x[t[0]], x[t[1]], x[t[2]], x[t[3]]) > 0);
        }
    };
    for (const Body& body : scene.bodies) {
        countInverted(body.tets);
    }
    countInverted(scene.air.tets);
    report.bodies = scene.bodies.size();
    report.vertices = scene.particles.size();
    report.triangles = scene.triangleCount();
    report.constraints = scene.constraints.elementCount();
    const auto problems = validateScene(scene);
    if (!problems.empty()) {
        return fail(std::move(result), "the prepared scene is inconsistent: " + problems.front());
    }
    keepGoing(progress, 1.0, "done");
    return result;
}

PrepareResult prepareFiles(const std::vector<std::filesystem::path>& files,
                           const PrepareOptions& options, const ProgressCallback& progress) {
    PrepareResult result;
    Scene merged;
    for (const auto& file : files) {
        result.report.inputs.push_back(file.string());
        Stopwatch watch(result.report, "import " + file.filename().string());
        Result<ImportedMesh> imported = importMesh(file, options.import, progress);
        if (!imported) {
            return fail(std::move(result), imported.error());
        }
        for (const std::string& w : imported->warnings) {
            line(result.report, ReportSeverity::Warning, w);
        }
        Scene& part = imported->scene;
        const Index offset = Index(merged.particles.size());
        for (std::size_t i = 0; i < part.particles.size(); ++i) {
            merged.particles.add(part.particles.positions[i], part.particles.inverseMasses[i]);
        }
        for (Body body : part.bodies) {
            body.firstParticle += offset;
            for (Triangle& t : body.triangles) {
                for (Index& v : t) {
                    v += offset;
                }
            }
            merged.bodies.push_back(std::move(body));
        }
        merged.name = merged.name.empty() ? part.name : merged.name + "+" + part.name;
    }
    if (files.empty()) {
        return fail(std::move(result), "no mesh files given");
    }
    merged.description =
        "Prepared from " + result.report.inputs.front() +
        (files.size() > 1 ? " and " + std::to_string(files.size() - 1) + " more" : "");
    // Bodies with the same name from different files would be ambiguous in messages.
    for (std::size_t i = 0; i < merged.bodies.size(); ++i) {
        int copies = 1;
        for (std::size_t j = 0; j < i; ++j) {
            copies += merged.bodies[j].name == merged.bodies[i].name;
        }
        if (copies > 1) {
            merged.bodies[i].name += "-" + std::to_string(copies);
        }
    }
    if (!keepGoing(progress, 0.02, "imported")) {
        return fail(std::move(result), kCancelledMessage);
    }
    PrepareResult prepared = prepareScene(merged, options, span(progress, 0.02, 1.0));
    // A refusal names the file it is about (bodies are named after their parts, not files).
    if (!prepared.report.ok() && prepared.report.error != kCancelledMessage) {
        std::string named = "'" + result.report.inputs.front() + "'";
        if (result.report.inputs.size() > 1) {
            named += " and " + std::to_string(result.report.inputs.size() - 1) + " more";
        }
        for (ReportLine& l : prepared.report.lines) {
            if (l.severity == ReportSeverity::Error && l.text == prepared.report.error) {
                l.text = named + ": " + l.text;
            }
        }
        prepared.report.error = named + ": " + prepared.report.error;
    }
    // Keep the import's lines and timings in front of the preparation's.
    prepared.report.inputs = result.report.inputs;
    prepared.report.lines.insert(prepared.report.lines.begin(), result.report.lines.begin(),
                                 result.report.lines.end());
    prepared.report.timings.insert(prepared.report.timings.begin(), result.report.timings.begin(),
                                   result.report.timings.end());
    return prepared;
}

Result<Collider> meshColliderFromFile(const std::filesystem::path& path,
                                      const ImportOptions& options) {
    Result<ImportedMesh> imported = importMesh(path, options);
    if (!imported) {
        return Error{imported.error()};
    }
    Scene& scene = imported->scene;
    repairSurfaces(scene);
    const SurfaceReport report = checkSurfaces(scene);
    std::string file = "'";
    file += path.string();
    file += "'";
    for (const BodySurfaceReport& b : report.bodies) {
        if (!b.outward()) {
            return Error{file + ": '" + b.body + "' is not a closed surface (" +
                         std::to_string(b.boundaryEdges) + " border edges, " +
                         std::to_string(b.nonManifoldEdges) +
                         " non-manifold edges): a mesh collider needs one, to tell inside from "
                         "outside"};
        }
    }
    std::vector<Triangle> triangles;
    for (const Body& b : scene.bodies) {
        triangles.insert(triangles.end(), b.triangles.begin(), b.triangles.end());
    }
    if (triangles.empty()) {
        return Error{file + " has no triangles"};
    }
    Collider c = Collider::mesh(scene.particles.positions, std::move(triangles));
    c.name = path.stem().string();
    return c;
}

Result<Collider> colliderFromCommandSpec(std::string_view spec, const Bounds& bodies) {
    if (!spec.starts_with("mesh:file=")) {
        return colliderFromSpec(spec, bodies);
    }
    const std::size_t comma = spec.find(',');
    const std::string file(spec.substr(10, comma == std::string_view::npos ? comma : comma - 10));
    Result<Collider> c = meshColliderFromFile(file);
    if (c && comma != std::string_view::npos) {
        c = editCollider(std::move(c).value(), spec.substr(comma + 1));
    }
    return c;
}

} // namespace pbd
