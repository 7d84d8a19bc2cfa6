// meshing: cages (meshing/Cage.h). A mesh too broken or too fine to simulate is carried by a
// coarse closed cage, alpha-wrapped or the user's: the cage is tetrahedralized, every render
// vertex is bound to a cage tet, and the render mesh follows what the cage does, in the scene,
// the project file and the cooked asset.

#include "core/constraints/ConstraintBuilders.h"
#include "core/solver/Solver.h"
#include "meshing/CookedAsset.h"
#include "meshing/Prepare.h"
#include "meshing/ProjectFile.h"

#include "MeshingFixtures.h"

#include <QTemporaryDir>
#include <QTest>

#include <fstream>

using namespace pbd;
using namespace pbd::test;

namespace {

// A body of two shells that cross each other (an open tube through a box): not a mesh TetGen
// takes, the kind a game model is made of.
Scene brokenModel() {
    Scene scene;
    scene.name = "model";
    addBoxSurface(scene, Vec3(0, 0, 0), Vec3(1, 1, 1), "box", 6);
    addSheet(scene, Vec3(0.3, 0.2, 0.1), 1.4, 12, "fin");
    for (Body& b : scene.bodies) {
        b.kind = BodyKind::Surface;
    }
    return scene;
}

double largestRestError(const Scene& scene) {
    double error = 0;
    std::vector<Vec3> out;
    for (const EmbeddedMesh& m : scene.embedded) {
        embeddedPositions(m, scene.particles.positions, out);
        for (std::size_t v = 0; v < out.size(); ++v) {
            error = std::max(error, (out[v] - m.restPositions[v]).norm());
        }
    }
    return error;
}

void writeBoxObj(const QString& path, const Vec3& lo, const Vec3& hi) {
    std::ofstream out(path.toStdString());
    for (int i = 0; i < 8; ++i) {
        out << "v " << (i & 1 ? hi.x() : lo.x()) << ' ' << (i & 2 ? hi.y() : lo.y()) << ' '
            << (i & 4 ? hi.z() : lo.z()) << '\n';
    }
    // Outward quads of the unit cube's corners (bit 0: x, bit 1: y, bit 2: z), split in two.
    const int quads[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
                             {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
    for (const auto& q : quads) {
        out << "f " << q[0] + 1 << ' ' << q[1] + 1 << ' ' << q[2] + 1 << '\n';
        out << "f " << q[0] + 1 << ' ' << q[2] + 1 << ' ' << q[3] + 1 << '\n';
    }
}

} // namespace

class TestCage : public QObject {
    Q_OBJECT

private slots:
    void wrapCageCarriesABrokenMesh() {
        // The box and the fin crossing it go into a cage of about 400 triangles; neither is
        // repaired or meshed itself. The cage is closed and tetrahedralized, every render vertex
        // is inside it and comes back to 1e-12 at rest.
        const Scene input = brokenModel();
        PrepareOptions options;
        options.cage.triangles = 400;
        options.air = true;
        options.defaultConstraints = true;
        PrepareResult prepared = prepareScene(input, options);
        QVERIFY2(prepared.report.ok(), prepared.report.error.c_str());
        const Scene& s = prepared.scene;
        QVERIFY(prepared.report.hasCage);
        const CageReport& cage = prepared.report.cage;
        QCOMPARE(cage.source, std::string("alpha wrap"));
        QVERIFY2(cage.triangles >= 200 && cage.triangles <= 800,
                 std::to_string(cage.triangles).c_str());
        QCOMPARE(s.bodies.size(), std::size_t(1));
        QCOMPARE(s.bodies[0].name, std::string("cage"));
        QVERIFY(s.bodies[0].kind == BodyKind::TetBody);
        QVERIFY(prepared.report.surfaces.bodies[0].outward());
        QVERIFY(!s.bodies[0].tets.empty());
        QVERIFY(!s.air.empty());
        QCOMPARE(s.embedded.size(), std::size_t(2));
        QCOMPARE(s.embedded[0].name, std::string("box"));
        QCOMPARE(s.embedded[1].name, std::string("fin"));
        QCOMPARE(s.embedded[1].triangles.size(), input.bodies[1].triangles.size());
        QCOMPARE(s.embedded[1].triangleUVs.size(), input.bodies[1].triangles.size());
        QCOMPARE(cage.renderVertices, input.particles.size());
        QCOMPARE(cage.outside, std::size_t(0));
        QVERIFY(largestRestError(s) < 1e-12);
        QVERIFY(validateScene(s).empty());
        // The render mesh keeps the input's shape exactly.
        for (std::size_t v = 0; v < s.embedded[1].restPositions.size(); ++v) {
            QCOMPARE(s.embedded[1].restPositions[v],
                     input.particles.positions[input.bodies[1].firstParticle + v]);
        }
        // Report: the cage's figures in the JSON.
        const std::string json = prepared.report.toJson();
        QVERIFY(json.find("\"cage\"") != std::string::npos);
        QVERIFY(json.find("\"outside_vertices\": 0") != std::string::npos);
    }

    void renderMeshFollowsTheSimulatedCage() {
        // A known motion of the cage (turned and shifted) moves the render mesh the same way to
        // 1e-12; a simulated fall under gravity keeps every render vertex inside its tet.
        PrepareOptions options;
        options.cage.triangles = 300;
        options.defaultConstraints = true;
        PrepareResult prepared = prepareScene(brokenModel(), options);
        QVERIFY2(prepared.report.ok(), prepared.report.error.c_str());
        Scene s = prepared.scene;
        const Mat3 r = Eigen::AngleAxisd(1.1, Vec3(0.3, 1, -0.2).normalized()).toRotationMatrix();
        const Vec3 shift(2, -1, 0.5);
        std::vector<Vec3> moved;
        for (const Vec3& p : s.particles.positions) {
            moved.push_back(r * p + shift);
        }
        std::vector<Vec3> out;
        for (const EmbeddedMesh& m : s.embedded) {
            embeddedPositions(m, moved, out);
            for (std::size_t v = 0; v < out.size(); ++v) {
                QVERIFY((out[v] - (r * m.restPositions[v] + shift)).norm() < 1e-12);
            }
        }
        Solver solver(s);
        for (int i = 0; i < 30; ++i) {
            solver.step();
        }
        const Vec3 drop = s.particles.positions[0] - prepared.scene.particles.positions[0];
        QVERIFY(drop.y() < -0.1); // it fell
        for (const EmbeddedMesh& m : s.embedded) {
            embeddedPositions(m, s.particles.positions, out);
            for (std::size_t v = 0; v < out.size(); ++v) {
                QVERIFY(out[v].allFinite());
                QVERIFY(out[v].y() < m.restPositions[v].y() - 0.1);
            }
        }
    }

    void bindingSurvivesTheProjectAndTheAsset() {
        PrepareOptions options;
        options.cage.triangles = 300;
        options.defaultConstraints = true;
        PrepareResult prepared = prepareScene(brokenModel(), options);
        QVERIFY2(prepared.report.ok(), prepared.report.error.c_str());
        const Scene& s = prepared.scene;
        for (const bool asset : {false, true}) {
            Result<Scene> back = asset ? cookedAssetFromJson(cookedAssetToJson(s))
                                       : projectFromJson(projectToJson(s));
            QVERIFY2(back, back ? "" : back.error().c_str());
            QCOMPARE(back->embedded.size(), s.embedded.size());
            for (std::size_t e = 0; e < s.embedded.size(); ++e) {
                const EmbeddedMesh& a = s.embedded[e];
                const EmbeddedMesh& b = back->embedded[e];
                QCOMPARE(b.name, a.name);
                QVERIFY(b.restPositions == a.restPositions);
                QVERIFY(b.triangles == a.triangles);
                QVERIFY(b.corners == a.corners);
                QVERIFY(b.weights == a.weights);
                QCOMPARE(b.triangleUVs.size(), a.triangleUVs.size());
            }
        }
        // A binding that names a particle the asset does not have is refused, by name.
        Scene broken = s;
        broken.embedded[0].corners[3][1] = Index(broken.particles.size() + 7);
        Result<Scene> refused = projectFromJson(projectToJson(broken), "p.json");
        QVERIFY(!refused);
        QVERIFY2(refused.error().find("embedded mesh 'box': vertex 3 is carried by a particle") !=
                     std::string::npos,
                 refused.error().c_str());
    }

    void cancelStopsTheWrapInside() {
        // Cancel asked while the wrap runs (a fine cage of 20,000 triangles: its visitor asks
        // every 4,096 facets) stops it there, and prepare says so.
        PrepareOptions options;
        options.cage.triangles = 20000;
        int asked = 0;
        PrepareResult prepared =
            prepareScene(brokenModel(), options, [&](double, const std::string& stage) {
                if (stage == "wrapping the cage") {
                    ++asked;
                    return asked < 2; // the first is before the wrap, the second inside it
                }
                return true;
            });
        QVERIFY2(prepared.report.error == kCancelledMessage, prepared.report.error.c_str());
        QCOMPARE(asked, 2);
    }

    void degenerateTrianglesAreLeftOutOfTheWrap() {
        // A sliver among good triangles is wrapped around with the rest; a mesh of slivers
        // only (three points on a line, as assimp's number_formats.obj) is refused by name;
        // CGAL's wrap crashed on it.
        Scene slivers;
        for (const Vec3& p : {Vec3(0, 0, 0), Vec3(1, 2, 3), Vec3(-1, -2, -3)}) {
            slivers.particles.add(p, 1);
        }
        Body line;
        line.name = "line";
        line.kind = BodyKind::Surface;
        line.particleCount = 3;
        line.triangles = {{0, 1, 2}};
        slivers.bodies.push_back(line);
        PrepareOptions options;
        options.cage.triangles = 300;
        PrepareResult refused = prepareScene(slivers, options);
        QVERIFY2(refused.report.error ==
                     "cage: the meshes have no triangle with an area to put a cage around",
                 refused.report.error.c_str());
        Scene mixed = brokenModel();
        Body& fin = mixed.bodies[1];
        fin.triangles.push_back({fin.firstParticle, fin.firstParticle, fin.firstParticle + 1});
        fin.triangleUVs.push_back(fin.triangleUVs.front());
        PrepareResult prepared = prepareScene(mixed, options);
        QVERIFY2(prepared.report.ok(), prepared.report.error.c_str());
        QCOMPARE(prepared.report.cage.outside, std::size_t(0));
    }

    void userCageMesh() {
        // The user's own cage, a box from a file: around the model, nothing is outside; a box
        // that leaves the fin's tip out carries the tip by the nearest tet and says how far out.
        QTemporaryDir dir;
        const QString big = dir.filePath("big.obj"), small = dir.filePath("small.obj");
        writeBoxObj(big, Vec3(-1, -1, -1), Vec3(1.2, 1.2, 1.2));
        writeBoxObj(small, Vec3(-0.6, -0.6, -0.6), Vec3(0.6, 0.6, 0.6));
        PrepareOptions options;
        options.cage.mesh = big.toStdString();
        PrepareResult prepared = prepareScene(brokenModel(), options);
        QVERIFY2(prepared.report.ok(), prepared.report.error.c_str());
        QCOMPARE(prepared.report.cage.source, big.toStdString());
        QCOMPARE(prepared.report.cage.triangles, std::size_t(12));
        QCOMPARE(prepared.report.cage.outside, std::size_t(0));
        QVERIFY(largestRestError(prepared.scene) < 1e-12);

        options.cage.mesh = small.toStdString();
        prepared = prepareScene(brokenModel(), options);
        QVERIFY2(prepared.report.ok(), prepared.report.error.c_str());
        // The fin spans x and z in 0.3 +- 0.7 and 0.1 +- 0.7: its farthest corner, (1, 0.2,
        // 0.8), is 0.4 out along x and 0.2 along z from the small box.
        QVERIFY(prepared.report.cage.outside > 0);
        QVERIFY2(std::abs(prepared.report.cage.largestOutsideDistance - std::hypot(0.4, 0.2)) <
                     1e-9,
                 std::to_string(prepared.report.cage.largestOutsideDistance).c_str());
        bool warned = false;
        for (const ReportLine& l : prepared.report.lines) {
            warned |=
                l.severity == ReportSeverity::Warning &&
                l.text.find("outside the cage, carried by the nearest tet") != std::string::npos;
        }
        QVERIFY(warned);

        // A cage file that cannot be read names the file.
        options.cage.mesh = dir.filePath("missing.obj").toStdString();
        prepared = prepareScene(brokenModel(), options);
        QVERIFY(!prepared.report.ok());
        QVERIFY2(prepared.report.error.find("cage: ") == 0 &&
                     prepared.report.error.find("missing.obj") != std::string::npos,
                 prepared.report.error.c_str());
    }
};

QTEST_APPLESS_MAIN(TestCage)
#include "tst_cage.moc"
