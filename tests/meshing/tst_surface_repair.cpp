// meshing: the repair ladder (meshing/SurfaceRepair.h) on surfaces broken on purpose, each
// asserting which rungs ran and what came out: closed, outward, not crossing itself, the volume
// kept, and tets when prepared.

#include "meshing/Prepare.h"
#include "meshing/SurfaceCheck.h"
#include "meshing/SurfaceProblems.h"
#include "meshing/SurfaceRepair.h"

#include "MeshingFixtures.h"

#include <QTest>

#include <cmath>
#include <map>

using namespace pbd;
using namespace pbd::test;

namespace {

constexpr double kPi = 3.14159265358979323846;

// A cylinder along y (radius r, height h) as a bare surface: `segments` around, `rings` bands
// up, capped by fans when `caps`. Volume of the closed one: the prism's, n/2 r^2 sin(2 pi/n) h.
void addCylinder(Scene& scene, const std::string& name, bool caps, double r = 0.5, double h = 2.0,
                 int segments = 24, int rings = 10) {
    Body body;
    body.name = name;
    body.kind = BodyKind::Surface;
    body.firstParticle = Index(scene.particles.size());
    auto at = [&](int ring, int s) {
        return body.firstParticle + Index(ring * segments + (s % segments));
    };
    for (int ring = 0; ring <= rings; ++ring) {
        for (int s = 0; s < segments; ++s) {
            const double a = 2 * kPi * s / segments;
            scene.particles.add(Vec3(r * std::cos(a), h * ring / rings, -r * std::sin(a)), 1.0);
        }
    }
    for (int ring = 0; ring < rings; ++ring) {
        for (int s = 0; s < segments; ++s) {
            body.triangles.push_back({at(ring, s), at(ring, s + 1), at(ring + 1, s + 1)});
            body.triangles.push_back({at(ring, s), at(ring + 1, s + 1), at(ring + 1, s)});
        }
    }
    if (caps) {
        const Index bottom = scene.particles.add(Vec3(0, 0, 0), 1.0);
        const Index top = scene.particles.add(Vec3(0, h, 0), 1.0);
        for (int s = 0; s < segments; ++s) {
            body.triangles.push_back({bottom, at(0, s + 1), at(0, s)});
            body.triangles.push_back({top, at(rings, s), at(rings, s + 1)});
        }
    }
    body.particleCount = Index(scene.particles.size()) - body.firstParticle;
    scene.bodies.push_back(std::move(body));
}

double prismVolume(double r = 0.5, double h = 2.0, int segments = 24) {
    return 0.5 * segments * r * r * std::sin(2 * kPi / segments) * h;
}

// Makes the scene's bodies one body (they must be consecutive in the particles).
void mergeBodies(Scene& scene, const std::string& name) {
    Body merged = scene.bodies.front();
    merged.name = name;
    for (std::size_t b = 1; b < scene.bodies.size(); ++b) {
        merged.triangles.insert(merged.triangles.end(), scene.bodies[b].triangles.begin(),
                                scene.bodies[b].triangles.end());
        merged.particleCount += scene.bodies[b].particleCount;
    }
    scene.bodies = {merged};
}

BodySurfaceReport checked(const Scene& scene, std::size_t body = 0) {
    return checkSurfaces(scene).bodies.at(body);
}

std::string joined(const std::vector<std::string>& lines) {
    std::string all;
    for (const std::string& l : lines) {
        all += l + "\n";
    }
    return all;
}

} // namespace

class TestSurfaceRepair : public QObject {
    Q_OBJECT
private slots:
    void problemsAreFoundWhereTheyAre() {
        // One surface broken one way per scene; each problem names the body, and holds the
        // elements to draw.
        const auto problems = [](const Scene& scene) {
            return locateSurfaceProblems(scene, checkSurfaces(scene));
        };
        {
            Scene clean;
            addCylinder(clean, "can", true);
            QVERIFY(problems(clean).empty());
        }
        {
            Scene flipped;
            addCylinder(flipped, "can", true);
            Triangle& t = flipped.bodies[0].triangles[7];
            std::swap(t[1], t[2]);
            const auto found = problems(flipped);
            QCOMPARE(found.size(), std::size_t(1));
            QVERIFY(found[0].kind == SurfaceProblem::Kind::FlippedFaces);
            QCOMPARE(found[0].triangles.size(), std::size_t(1));
            QVERIFY(found[0].triangles[0] == t);
            QVERIFY2(found[0].text == "body 'can': 1 triangle(s) wound against their "
                                      "neighbours, first 7",
                     found[0].text.c_str());
        }
        {
            Scene inward;
            addBoxSurface(inward, Vec3(0, 0, 0), Vec3(1, 1, 1), "box");
            for (Triangle& t : inward.bodies[0].triangles) {
                std::swap(t[1], t[2]);
            }
            const auto found = problems(inward);
            QCOMPARE(found.size(), std::size_t(1));
            QVERIFY(found[0].text.find("is wound inward") != std::string::npos);
            QCOMPARE(found[0].triangles.size(), inward.bodies[0].triangles.size());
        }
        {
            // The open cylinder's two rims, the longer first: 24 edges each, 2 pi r sin(pi/24)
            // 24 long.
            Scene open;
            addCylinder(open, "tube", false);
            const auto found = problems(open);
            QCOMPARE(found.size(), std::size_t(2));
            for (const SurfaceProblem& p : found) {
                QVERIFY(p.kind == SurfaceProblem::Kind::Hole);
                QCOMPARE(p.edges.size(), std::size_t(24));
            }
            QVERIFY2(found[0].text.find("open border of 24 edges, 3.13 m around") !=
                         std::string::npos,
                     found[0].text.c_str());
            const Bounds b = problemBounds(open, found[0]);
            QVERIFY(std::abs(b.size().y()) < 1e-12); // one rim, flat
        }
        {
            // A bowtie (two triangles meeting at a point), a fin (three triangles on an edge)
            // and a sliver, in one body of particles 0..12.
            Scene broken;
            for (const Vec3& p :
                 {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(-1, 0, 0), Vec3(0, -1, 0),
                  Vec3(3, 0, 0), Vec3(3, 1, 0), Vec3(4, 0, 0), Vec3(3, 0, 1), Vec3(2, 0, 0),
                  Vec3(6, 0, 0), Vec3(7, 0, 0), Vec3(8, 0, 0)}) {
                broken.particles.add(p, 1);
            }
            Body body;
            body.name = "junk";
            body.kind = BodyKind::Surface;
            body.particleCount = 13;
            body.triangles = {{0, 1, 2}, {0, 3, 4}, {5, 6, 7}, {6, 5, 8}, {5, 6, 9}, {10, 11, 12}};
            broken.bodies.push_back(body);
            std::map<SurfaceProblem::Kind, int> kinds;
            const auto found = problems(broken);
            for (const SurfaceProblem& p : found) {
                ++kinds[p.kind];
                if (p.kind == SurfaceProblem::Kind::NonManifoldVertex) {
                    QCOMPARE(p.points, std::vector<Index>{0});
                    QCOMPARE(p.text, std::string("body 'junk': particle 0 is where 2 surfaces "
                                                 "meet at a point"));
                }
                if (p.kind == SurfaceProblem::Kind::NonManifoldEdge) {
                    QVERIFY((p.edges[0] == std::array<Index, 2>{5, 6}));
                    QCOMPARE(p.triangles.size(), std::size_t(3));
                }
                if (p.kind == SurfaceProblem::Kind::Degenerate) {
                    QVERIFY2(p.text.find("triangle 5 has no area (particles 10, 11, 12)") !=
                                 std::string::npos,
                             p.text.c_str());
                }
            }
            QCOMPARE(kinds[SurfaceProblem::Kind::NonManifoldVertex], 1);
            QCOMPARE(kinds[SurfaceProblem::Kind::NonManifoldEdge], 1);
            QCOMPARE(kinds[SurfaceProblem::Kind::Degenerate], 1);
            QVERIFY(kinds[SurfaceProblem::Kind::Hole] >= 1);
        }
        {
            Scene crossing;
            addBoxSurface(crossing, Vec3(0, 0, 0), Vec3(1, 1, 1), "a");
            addBoxSurface(crossing, Vec3(0.5, 0.3, 0.2), Vec3(1, 1, 1), "b");
            const SurfaceReport report = checkSurfaces(crossing);
            const auto found = locateSurfaceProblems(crossing, report, 5);
            QCOMPARE(found.size(), std::size_t(6));
            QVERIFY(found[0].kind == SurfaceProblem::Kind::BodiesCross);
            QVERIFY(found[0].text.find("bodies 'a' and 'b' cross: triangle ") == 0);
            QVERIFY(found[5].text.find("and " + std::to_string(report.intersections.size() - 5) +
                                       " more pairs") == 0);
            QCOMPARE(found[5].triangles.size(), 2 * (report.intersections.size() - 5));
        }
    }

    void cleanSurfaceRunsNoRung() {
        Scene scene;
        addCylinder(scene, "can", true);
        const RepairReport repair = repairSurfaces(scene);
        QCOMPARE(repair.bodies.size(), std::size_t(1));
        QVERIFY2(repair.bodies[0].rungs.empty(), joined(repair.actions).c_str());
        QVERIFY(repair.bodies[0].solid);
        QVERIFY(std::abs(checked(scene).signedVolume - prismVolume()) < 1e-12);
    }

    void degenerateSliverIsDropped() {
        Scene scene;
        addBoxSurface(scene, Vec3(0, 0, 0), Vec3(1, 1, 1), "box");
        Body& body = scene.bodies[0];
        body.triangles.push_back(
            {body.triangles[0][0], body.triangles[0][0], body.triangles[0][1]});
        const RepairReport repair = repairSurfaces(scene);
        QCOMPARE(repair.bodies[0].rungs, std::vector<std::string>{"degenerate"});
        QVERIFY(repair.actions[0].find("dropped 1 degenerate triangle(s)") != std::string::npos);
        QVERIFY(repair.bodies[0].solid);
        QVERIFY(std::abs(checked(scene).signedVolume - 1.0) < 1e-12);
    }

    void flippedFaceIsTurnedBack() {
        Scene scene;
        addCylinder(scene, "can", true);
        std::swap(scene.bodies[0].triangles[7][1], scene.bodies[0].triangles[7][2]);
        QVERIFY(checked(scene).inconsistentEdges > 0);
        const RepairReport repair = repairSurfaces(scene);
        QCOMPARE(repair.bodies[0].rungs, std::vector<std::string>{"orient"});
        QVERIFY(repair.actions[0].find("flipped 1 triangle(s)") != std::string::npos);
        QVERIFY(repair.bodies[0].solid);
        QVERIFY(std::abs(checked(scene).signedVolume - prismVolume()) < 1e-12);
    }

    void pinchedVertexIsSplitAndBothPartsTetrahedralize() {
        // Two boxes touching at one corner: (0,0,0)-(1,1,1) and (1,1,1)-(2,2,2), one body.
        Scene scene;
        addBoxSurface(scene, Vec3(0.5, 0.5, 0.5), Vec3(1, 1, 1), "a");
        addBoxSurface(scene, Vec3(1.5, 1.5, 1.5), Vec3(1, 1, 1), "b");
        mergeBodies(scene, "pinched");
        // Weld the shared corner, as an importer does with coincident vertices.
        Body& body = scene.bodies[0];
        Index cornerA = 0, cornerB = 0;
        for (Index i = 0; i < Index(scene.particles.size()); ++i) {
            if ((scene.particles.positions[i] - Vec3(1, 1, 1)).norm() < 1e-12) {
                (cornerA == 0 && i < body.particleCount / 2 ? cornerA : cornerB) = i;
            }
        }
        QVERIFY(cornerB > cornerA);
        for (Triangle& t : body.triangles) {
            for (Index& v : t) {
                v = v == cornerB ? cornerA : v;
            }
        }
        const BodySurfaceReport before = checked(scene);
        QCOMPARE(before.nonManifoldVertices, std::size_t(1));

        PrepareOptions options;
        options.tetrahedralize = true;
        const PrepareResult prepared = prepareScene(scene, options);
        QVERIFY2(prepared.report.ok(), prepared.report.error.c_str());
        QCOMPARE(prepared.report.repairBodies.size(), std::size_t(1));
        QVERIFY2(prepared.report.repairBodies[0].rungs == std::vector<std::string>{"non_manifold"},
                 joined(prepared.report.repairs).c_str());
        QVERIFY(prepared.report.repairs[0].find("split 1 non-manifold vertex(es)") !=
                std::string::npos);
        const Body& result = prepared.scene.bodies.at(0);
        QVERIFY(result.kind == BodyKind::TetBody);
        QVERIFY(!result.tets.empty());
        double volume = 0;
        const auto& x = prepared.scene.particles.positions;
        for (const Tetrahedron& t : result.tets) {
            volume += (x[t[1]] - x[t[0]]).cross(x[t[2]] - x[t[0]]).dot(x[t[3]] - x[t[0]]) / 6;
        }
        // The split corners stepped 1% into their own boxes: a sliver of volume less.
        QVERIFY2(volume < 2.0 && volume > 2.0 * 0.999, std::to_string(volume).c_str());
    }

    void smallHoleIsFilledAndTheVolumeKept() {
        Scene scene;
        addCylinder(scene, "can", true);
        Body& body = scene.bodies[0];
        body.triangles.erase(body.triangles.begin() + 30); // one side triangle
        QVERIFY(!checked(scene).closed());
        const RepairReport repair = repairSurfaces(scene);
        QCOMPARE(repair.bodies[0].rungs, std::vector<std::string>{"fill_holes"});
        QVERIFY2(repair.actions[0].find("filled 1 of 1 hole(s)") != std::string::npos,
                 repair.actions[0].c_str());
        QVERIFY(repair.bodies[0].solid);
        // The hole's triangle was flat: refilled, the volume is the prism's again.
        QVERIFY(std::abs(checked(scene).signedVolume / prismVolume() - 1) < 1e-9);
    }

    void openCylinderStaysClothUnlessWrapped() {
        Scene scene;
        addCylinder(scene, "sleeve", false);
        RepairReport repair = repairSurfaces(scene);
        QVERIFY2(repair.bodies[0].rungs.empty(), joined(repair.actions).c_str());
        QVERIFY(!repair.bodies[0].solid);
        PrepareOptions options;
        options.tetrahedralize = true;
        PrepareResult prepared = prepareScene(scene, options);
        QVERIFY2(prepared.report.ok(), prepared.report.error.c_str());
        QVERIFY(prepared.scene.bodies[0].kind == BodyKind::Cloth);

        // Asked for, the wrap makes a thin closed tube of it that tetrahedralizes.
        options.repairOptions.wrap = WrapMode::Always;
        options.repairOptions.wrapAlpha = 0.1;
        options.repairOptions.wrapOffset = 0.02;
        prepared = prepareScene(scene, options);
        QVERIFY2(prepared.report.ok(), prepared.report.error.c_str());
        QCOMPARE(prepared.report.repairBodies[0].rungs, std::vector<std::string>{"wrap"});
        const WrapReport& w = prepared.report.repairBodies[0].wrap;
        QCOMPARE(w.alpha, 0.1);
        QCOMPARE(w.offset, 0.02);
        // The wrap keeps `offset` from the sheet: its surface is that far, give or take.
        QVERIFY2(w.wrapToOriginal > 0.5 * w.offset && w.wrapToOriginal < 3 * w.offset,
                 std::to_string(w.wrapToOriginal).c_str());
        QVERIFY(prepared.scene.bodies[0].kind == BodyKind::TetBody);
        QVERIFY(!prepared.scene.bodies[0].tets.empty());
        QVERIFY(prepared.scene.bodies[0].triangleUVs.empty());
    }

    void interpenetratingCubesAreWrappedIntoTheirUnion() {
        Scene scene;
        addBoxSurface(scene, Vec3(0, 0, 0), Vec3(1, 1, 1), "a", 4);
        addBoxSurface(scene, Vec3(0.5, 0.3, 0.2), Vec3(1, 1, 1), "b", 4);
        mergeBodies(scene, "cubes");
        const BodySurfaceReport before = checked(scene);
        QVERIFY(before.closed() && before.manifold());
        QVERIFY(before.selfIntersections > 0);
        const double unionVolume = 2.0 - 0.5 * 0.7 * 0.8;

        PrepareOptions options;
        options.tetrahedralize = true;
        const PrepareResult prepared = prepareScene(scene, options);
        QVERIFY2(prepared.report.ok(), prepared.report.error.c_str());
        const BodyRepair& repair = prepared.report.repairBodies.at(0);
        QVERIFY2(repair.solid, joined(repair.actions).c_str());
        QVERIFY2(repair.ran("self_intersections") || repair.ran("wrap"),
                 joined(repair.actions).c_str());
        const BodySurfaceReport after = prepared.report.surfaces.bodies.at(0);
        QVERIFY(after.outward() && after.manifold());
        QCOMPARE(after.selfIntersections, std::size_t(0));
        // Within 3% of the union's volume (the wrap adds its offset all round).
        QVERIFY2(std::abs(after.signedVolume / unionVolume - 1) < 0.03,
                 std::to_string(after.signedVolume).c_str());
        QVERIFY(prepared.scene.bodies[0].kind == BodyKind::TetBody);
        QVERIFY(!prepared.scene.bodies[0].tets.empty());
    }

    void overlappingPartsBecomeOneBody() {
        // Two parts, as a game model has them: separate closed bodies that cross.
        Scene scene;
        addBoxSurface(scene, Vec3(0, 0, 0), Vec3(1, 1, 1), "torso", 4);
        addBoxSurface(scene, Vec3(0.5, 0.3, 0.2), Vec3(1, 1, 1), "arm", 4);
        addBoxSurface(scene, Vec3(4, 0, 0), Vec3(1, 1, 1), "apart", 2);
        const double unionVolume = 2.0 - 0.5 * 0.7 * 0.8;
        PrepareOptions options;
        options.tetrahedralize = true;

        options.overlaps = OverlapMode::Keep;
        PrepareResult prepared = prepareScene(scene, options);
        QVERIFY(!prepared.report.ok());
        QVERIFY2(prepared.report.error.find("bodies 'torso' and 'arm' intersect") == 0,
                 prepared.report.error.c_str());

        options.overlaps = OverlapMode::Union;
        prepared = prepareScene(scene, options);
        QVERIFY2(prepared.report.ok(), prepared.report.error.c_str());
        QCOMPARE(prepared.report.merged.size(), std::size_t(1));
        QVERIFY(prepared.report.merged[0].united);
        QCOMPARE(prepared.report.merged[0].parts, (std::vector<std::string>{"torso", "arm"}));
        QCOMPARE(prepared.scene.bodies.size(), std::size_t(2));
        QCOMPARE(prepared.scene.bodies[0].name, std::string("torso"));
        QCOMPARE(prepared.scene.bodies[1].name, std::string("apart"));
        const BodySurfaceReport united = prepared.report.surfaces.bodies[0];
        QVERIFY(united.outward() && united.manifold());
        QVERIFY2(std::abs(united.signedVolume - unionVolume) < 1e-9,
                 std::to_string(united.signedVolume).c_str());
        QVERIFY(!prepared.scene.bodies[0].tets.empty());
        QVERIFY(!prepared.scene.bodies[1].tets.empty());

        options.overlaps = OverlapMode::Wrap; // the default
        prepared = prepareScene(scene, options);
        QVERIFY2(prepared.report.ok(), prepared.report.error.c_str());
        QCOMPARE(prepared.report.merged.size(), std::size_t(1));
        QVERIFY(!prepared.report.merged[0].united);
        QVERIFY(prepared.report.merged[0].action.find(
                    "bodies 'torso' and 'arm' cross: wrapped together into 'torso'") == 0);
        QCOMPARE(prepared.scene.bodies.size(), std::size_t(2));
        const BodySurfaceReport wrapped = prepared.report.surfaces.bodies[0];
        QVERIFY(wrapped.outward() && wrapped.manifold());
        QVERIFY2(std::abs(wrapped.signedVolume / unionVolume - 1) < 0.03,
                 std::to_string(wrapped.signedVolume).c_str());
        QVERIFY(!prepared.scene.bodies[0].tets.empty());
        // The body apart is untouched: 2 x 2 squares per face, 8 triangles a side.
        QCOMPARE(prepared.report.surfaces.bodies[1].triangles, std::size_t(48));
    }

    void aBodyInsideAnotherIsFoundAndMerged() {
        // A small box inside a larger one (their surfaces apart: no crossing pair), a box inside
        // that small one, and a box beside them: the inner two are found inside their innermost
        // outer, the one beside is not. Meshing refuses them with the overlaps kept (no air
        // could reach the inner ones, their tets would overlap the outer's), and merges them
        // into the outer by default (Wuson.off's eyes inside its wrapped head).
        Scene scene;
        addBoxSurface(scene, Vec3(0, 0, 0), Vec3(2, 2, 2), "head", 3);
        addBoxSurface(scene, Vec3(0.3, 0.2, 0.1), Vec3(0.6, 0.6, 0.6), "eye", 2);
        addBoxSurface(scene, Vec3(0.35, 0.25, 0.15), Vec3(0.2, 0.2, 0.2), "pupil", 2);
        addBoxSurface(scene, Vec3(4, 0, 0), Vec3(1, 1, 1), "apart", 2);
        const SurfaceReport report = checkSurfaces(scene);
        QCOMPARE(report.bodyIntersections(), std::size_t(0));
        using Nested = std::vector<std::pair<std::size_t, std::size_t>>;
        QCOMPARE(report.nested, (Nested{{1, 0}, {2, 1}}));
        QCOMPARE(report.problems.size(), std::size_t(2));
        QVERIFY2(report.problems[0] == "body 'eye' lies inside body 'head' without crossing it: "
                                       "no air can reach it, and tetrahedralized the two would "
                                       "overlap",
                 report.problems[0].c_str());
        const std::vector<SurfaceProblem> located = locateSurfaceProblems(scene, report);
        QCOMPARE(located.size(), std::size_t(2));
        QVERIFY(located[0].kind == SurfaceProblem::Kind::BodyInside);
        QCOMPARE(located[0].body, std::size_t(1));
        QCOMPARE(located[0].triangles.size(), scene.bodies[1].triangles.size());
        // Without a check for crossings, nothing is looked for.
        QVERIFY(checkSurfaces(scene, false).nested.empty());

        PrepareOptions options;
        options.air = true;
        options.overlaps = OverlapMode::Keep;
        PrepareResult prepared = prepareScene(scene, options);
        QVERIFY(!prepared.report.ok());
        QVERIFY2(prepared.report.error.find("body 'eye' lies inside body 'head'") == 0,
                 prepared.report.error.c_str());
        QVERIFY2(prepared.report.error.find("--overlaps wrap or union") != std::string::npos,
                 prepared.report.error.c_str());

        options.overlaps = OverlapMode::Wrap; // the default
        prepared = prepareScene(scene, options);
        QVERIFY2(prepared.report.ok(), prepared.report.error.c_str());
        QCOMPARE(prepared.report.merged.size(), std::size_t(1));
        QCOMPARE(prepared.report.merged[0].parts,
                 (std::vector<std::string>{"head", "eye", "pupil"}));
        QVERIFY2(prepared.report.merged[0].action.find("bodies 'head', 'eye' and 'pupil' lie "
                                                       "one inside another: wrapped together "
                                                       "into 'head'") == 0,
                 prepared.report.merged[0].action.c_str());
        QCOMPARE(prepared.scene.bodies.size(), std::size_t(2));
        QVERIFY(prepared.report.surfaces.nested.empty());
        const BodySurfaceReport head = prepared.report.surfaces.bodies[0];
        QVERIFY(head.outward() && head.manifold());
        QVERIFY2(std::abs(head.signedVolume / 8 - 1) < 0.05,
                 std::to_string(head.signedVolume).c_str()); // the head's volume, no more
        QVERIFY(!prepared.scene.air.tets.empty());
    }

    void wrapReportsItsDistanceAndVolume() {
        Scene scene;
        addCylinder(scene, "can", true);
        RepairOptions options;
        options.wrap = WrapMode::Always;
        const RepairReport repair = repairSurfaces(scene, options);
        const BodyRepair& r = repair.bodies.at(0);
        QCOMPARE(r.rungs, std::vector<std::string>{"wrap"});
        QVERIFY(r.wrapped && r.solid);
        const double diagonal = std::sqrt(1.0 + 4.0 + 1.0);
        QVERIFY(std::abs(r.wrap.alpha - diagonal / 50) < 1e-12);
        QVERIFY(std::abs(r.wrap.offset - r.wrap.alpha / 30) < 1e-12);
        QCOMPARE(r.wrap.trianglesBefore, std::size_t(24 * 10 * 2 + 48));
        QVERIFY(std::abs(r.wrap.volumeBefore - prismVolume()) < 1e-12);
        QVERIFY(r.wrap.volumeAfter > r.wrap.volumeBefore);
        QVERIFY(r.wrap.volumeAfter < 1.05 * r.wrap.volumeBefore);
        // A convex input: nothing is filled in, both distances are about the offset.
        QVERIFY(r.wrap.wrapToOriginal < 3 * r.wrap.offset);
        QVERIFY(r.wrap.originalToWrap < 3 * r.wrap.offset);
        QVERIFY(r.actions[0].find("wrapped (alpha") != std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestSurfaceRepair)
#include "tst_surface_repair.moc"
