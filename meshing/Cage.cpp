#include "meshing/Cage.h"

#include "meshing/RepairCgal.h"
#include "meshing/SurfaceTopology.h"

#include <algorithm>
#include <cmath>

namespace pbd {

namespace {

// The surface area of the scene's triangles (m^2).
double surfaceArea(const std::vector<Vec3>& x, const std::vector<Triangle>& triangles) {
    double area = 0;
    for (const Triangle& t : triangles) {
        area += 0.5 * (x[t[1]] - x[t[0]]).cross(x[t[2]] - x[t[0]]).norm();
    }
    return area;
}

// The user's cage: every surface of the file in one body.
Result<Body> cageFromFile(Scene& scene, const CageOptions& options,
                          const ProgressCallback& progress) {
    Result<ImportedMesh> imported = importMesh(options.mesh, options.import, progress);
    if (!imported) {
        return Error{"cage: " + imported.error()};
    }
    const Scene& file = imported->scene;
    if (file.bodies.empty()) {
        return Error{"cage: '" + options.mesh.string() + "' has no triangles"};
    }
    Body cage;
    cage.name = "cage";
    cage.kind = BodyKind::Surface;
    cage.firstParticle = 0;
    cage.particleCount = Index(file.particles.size());
    for (const Body& b : file.bodies) {
        cage.triangles.insert(cage.triangles.end(), b.triangles.begin(), b.triangles.end());
    }
    scene.particles = Particles{};
    for (const Vec3& p : file.particles.positions) {
        scene.particles.add(p, 0);
    }
    return cage;
}

} // namespace

Result<CageReport> buildCage(Scene& scene, const CageOptions& options,
                             const ProgressCallback& progress) {
    CageReport report;
    if (scene.bodies.empty()) {
        return Error{"cage: there is no mesh to put in a cage"};
    }
    if (!scene.embedded.empty()) {
        return Error{"cage: the scene has a caged mesh already"};
    }
    // The bodies become the render meshes, in their own vertex numbering.
    const auto& x = scene.particles.positions;
    std::vector<Vec3> allPoints;
    std::vector<Triangle> allTriangles;
    Bounds bounds;
    for (const Body& body : scene.bodies) {
        EmbeddedMesh mesh;
        mesh.name = body.name;
        mesh.restPositions.assign(x.begin() + body.firstParticle,
                                  x.begin() + body.firstParticle + body.particleCount);
        mesh.triangles = body.triangles;
        const Index shift = Index(allPoints.size());
        for (Triangle& t : mesh.triangles) {
            Triangle global = t;
            for (std::size_t k = 0; k < 3; ++k) {
                t[k] -= body.firstParticle;
                global[k] = t[k] + shift;
            }
            allTriangles.push_back(global);
        }
        mesh.triangleUVs = body.triangleUVs;
        for (const Vec3& p : mesh.restPositions) {
            bounds.add(p);
        }
        allPoints.insert(allPoints.end(), mesh.restPositions.begin(), mesh.restPositions.end());
        report.renderVertices += mesh.restPositions.size();
        report.renderTriangles += mesh.triangles.size();
        scene.embedded.push_back(std::move(mesh));
    }
    report.renderMeshes = scene.embedded.size();
    report.renderDiagonal = bounds.size().norm();
    if (std::all_of(allTriangles.begin(), allTriangles.end(),
                    [&](const Triangle& t) { return surface::degenerateTriangle(allPoints, t); })) {
        return Error{"cage: the meshes have no triangle with an area to put a cage around"};
    }

    Body cage;
    if (!options.mesh.empty()) {
        report.source = options.mesh.string();
        Result<Body> fromFile = cageFromFile(scene, options, progress);
        if (!fromFile) {
            return Error{fromFile.error()};
        }
        cage = std::move(*fromFile);
    } else {
        report.source = "alpha wrap";
        // A wrap's triangle count goes as its area over alpha squared: start from the input's
        // area (at most the box's), then correct alpha by the square root of the count's ratio.
        const Vec3 size = bounds.size();
        const double boxArea =
            2 * (size.x() * size.y() + size.y() * size.z() + size.z() * size.x());
        const double area = std::min(surfaceArea(allPoints, allTriangles), boxArea);
        const double target = double(std::max<std::size_t>(options.triangles, 8));
        double alpha = std::sqrt(std::max(area, 1e-12) / (0.5 * target));
        cgal::Wrap best;
        double bestMiss = std::numeric_limits<double>::infinity();
        constexpr int kAttempts = 5;
        for (int attempt = 0; attempt < kAttempts; ++attempt) {
            if (progress && !progress(double(attempt) / kAttempts, "wrapping the cage")) {
                return Error{kCancelledMessage};
            }
            const std::function<bool()> keepGoing = [&] {
                return !progress || progress(-1.0, "wrapping the cage");
            };
            cgal::Wrap w =
                cgal::alphaWrap(allPoints, allTriangles, alpha, alpha / 10, false, keepGoing);
            if (w.cancelled) {
                return Error{kCancelledMessage};
            }
            ++report.attempts;
            if (w.triangles.empty()) {
                alpha *= 0.7;
                continue;
            }
            const double ratio = double(w.triangles.size()) / target;
            const double miss = std::abs(std::log(ratio));
            if (miss < bestMiss) {
                bestMiss = miss;
                report.alpha = alpha;
                report.offset = alpha / 10;
                best = std::move(w);
            }
            if (miss < std::log(1.25)) {
                break; // within 25% of the asked count
            }
            alpha *= std::sqrt(std::clamp(ratio, 0.05, 20.0));
        }
        if (best.triangles.empty()) {
            return Error{"cage: the alpha wrap of the meshes came out empty"};
        }
        scene.particles = Particles{};
        for (const Vec3& p : best.points) {
            scene.particles.add(p, 0);
        }
        cage.name = "cage";
        cage.kind = BodyKind::Surface;
        cage.particleCount = Index(best.points.size());
        cage.triangles = std::move(best.triangles);
    }
    report.triangles = cage.triangles.size();
    scene.bodies.assign(1, std::move(cage));
    return report;
}

void bindEmbeddedMeshes(Scene& scene, std::size_t cage, CageReport& report) {
    report.outside = 0;
    report.largestOutsideDistance = 0;
    const std::vector<Tetrahedron>& tets = scene.bodies[cage].tets;
    for (EmbeddedMesh& mesh : scene.embedded) {
        TetBinding b = bindToTets(scene.particles.positions, tets, mesh.restPositions);
        mesh.corners = std::move(b.corners);
        mesh.weights = std::move(b.weights);
        mesh.outsideVertices = b.outside;
        mesh.largestOutsideDistance = b.largestOutsideDistance;
        report.outside += b.outside;
        report.largestOutsideDistance =
            std::max(report.largestOutsideDistance, b.largestOutsideDistance);
    }
}

} // namespace pbd
