// meshing: importing OBJ (tinyobjloader) and PLY, STL, OFF, glTF (assimp) into bodies.

#include "meshing/MeshImport.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace pbd;

namespace {

// A unit cube whose six faces each have their own UV square, so every corner is on a UV seam:
// 24 (position, uv) pairs but 8 positions.
constexpr const char* kSeamCubeObj = R"(# cube with UV seams
o cube
v 0 0 0
v 1 0 0
v 1 1 0
v 0 1 0
v 0 0 1
v 1 0 1
v 1 1 1
v 0 1 1
vt 0 0
vt 1 0
vt 1 1
vt 0 1
f 1/1 4/2 3/3 2/4
f 5/1 6/2 7/3 8/4
f 1/1 2/2 6/3 5/4
f 2/1 3/2 7/3 6/4
f 3/1 4/2 8/3 7/4
f 4/1 1/2 5/3 8/4
)";

} // namespace

class TestMeshImport : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;

    QString write(const QString& name, const QByteArray& content) {
        const QString path = dir_.filePath(name);
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly)) {
            qFatal("cannot write %s", qPrintable(path));
        }
        f.write(content);
        return path;
    }

    static QString models() {
        return qEnvironmentVariable("ASSIMP_MODELS", "/usr/share/assimp/models");
    }

private slots:
    void objSeamsDoNotSplitVertices() {
        Result<ImportedMesh> m = importMesh(write("cube.obj", kSeamCubeObj).toStdString());
        QVERIFY2(m.ok(), m.ok() ? "" : m.error().c_str());
        QCOMPARE(m->scene.bodies.size(), std::size_t(1));
        const Body& b = m->scene.bodies[0];
        QCOMPARE(b.name, std::string("cube"));
        QCOMPARE(b.particleCount, Index(8));
        QCOMPARE(b.triangles.size(), std::size_t(12)); // quads triangulated
        QVERIFY(b.hasUVs());
        // The corner UVs are the file's, per face: vertex 1 has UV (0,0) on face 1 and (1,0) on
        // face 6.
        QCOMPARE(b.triangleUVs[0][0], Vec2(0, 0));
        QCOMPARE(b.triangleUVs[10][1], Vec2(1, 0));
        QCOMPARE(m->scene.particles.positions[b.triangles[10][1]], Vec3(0, 0, 0));
        QVERIFY(m->warnings.empty());
        // Closed cube, outward winding: enclosed volume 1.
        double volume = 0;
        const auto& x = m->scene.particles.positions;
        for (const Triangle& t : b.triangles) {
            volume += x[t[0]].dot(x[t[1]].cross(x[t[2]])) / 6.0;
        }
        QVERIFY(std::abs(std::abs(volume) - 1.0) < 1e-12);
    }

    void objObjectsBecomeBodies() {
        const QByteArray obj = "o left\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"
                               "o right\nv 5 0 0\nv 6 0 0\nv 5 1 0\nv 6 1 0\nf 4 5 7\nf 5 6 7\n";
        Result<ImportedMesh> m = importMesh(write("two.obj", obj).toStdString());
        QVERIFY(m.ok());
        QCOMPARE(m->scene.bodies.size(), std::size_t(2));
        QCOMPARE(m->scene.bodies[0].name, std::string("left"));
        QCOMPARE(m->scene.bodies[1].name, std::string("right"));
        QCOMPARE(m->scene.bodies[0].particleCount, Index(3));
        QCOMPARE(m->scene.bodies[1].particleCount, Index(4));
        QCOMPARE(m->scene.bodies[1].firstParticle, Index(3));
        QVERIFY(!m->scene.bodies[0].hasUVs());
        QCOMPARE(m->scene.particles.positions[m->scene.bodies[1].triangles[0][0]], Vec3(5, 0, 0));
    }

    void objKeepsDoublePrecisionAndScales() {
        const QByteArray obj = "v 0.123456789012345 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";
        ImportOptions options;
        options.scale = 0.01; // centimetres to metres
        Result<ImportedMesh> m = importMesh(write("precise.obj", obj).toStdString(), options);
        QVERIFY(m.ok());
        QVERIFY(std::abs(m->scene.particles.positions[0].x() - 0.00123456789012345) < 1e-17);
        QCOMPARE(m->scene.particles.positions[2].y(), 0.01);
    }

    void weldingMergesNearDuplicatesAndDropsCollapsedTriangles() {
        // Vertex 4 is 1e-9 from vertex 1: welded; the triangle (1, 4, 2) then collapses.
        const QByteArray obj =
            "o sheet\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 1e-9 0 0\nv 1 1 0\nf 1 2 3\nf 4 5 3\nf 1 4 2\n";
        Result<ImportedMesh> m = importMesh(write("weld.obj", obj).toStdString());
        QVERIFY(m.ok());
        const Body& b = m->scene.bodies[0];
        QCOMPARE(b.particleCount, Index(4));
        QCOMPARE(b.triangles.size(), std::size_t(2));
        QCOMPARE(b.triangles[1][0], b.triangles[0][0]);
        QCOMPARE(m->warnings.size(), std::size_t(1));
        QVERIFY(QString::fromStdString(m->warnings[0]).contains("'sheet'"));
        QVERIFY(QString::fromStdString(m->warnings[0]).contains("1 triangle"));
    }

    void plyStlOffAndGltfThroughAssimp() {
        struct Case {
            QString file;
            Index vertices;
            std::size_t triangles;
            bool uvs;
        };
        const QList<Case> cases = {
            {models() + "/PLY/cube.ply", 8, 12, false},
            {models() + "/OFF/Cube.off", 8, 12, false},
            {models() + "/STL/triangle.stl", 3, 1, false},
            {models() + "/glTF2/BoxTextured-glTF-Binary/BoxTextured.glb", 8, 12, true},
        };
        for (const Case& c : cases) {
            Result<ImportedMesh> m = importMesh(c.file.toStdString());
            QVERIFY2(m.ok(),
                     qPrintable(c.file + ": " + QString::fromStdString(m.ok() ? "" : m.error())));
            Index vertices = 0;
            std::size_t triangles = 0;
            for (const Body& b : m->scene.bodies) {
                vertices += b.particleCount;
                triangles += b.triangles.size();
                QCOMPARE(b.hasUVs(), c.uvs);
            }
            QVERIFY2(vertices == c.vertices,
                     qPrintable(c.file + ": " + QString::number(vertices) + " vertices"));
            QCOMPARE(triangles, c.triangles);
        }
    }

    void asciiStlCornersAreWelded() {
        // STL stores three corners per facet; a tetrahedron's 12 corners weld to 4 vertices.
        QByteArray stl = "solid tet\n";
        const char* facets[4][3] = {{"0 0 0", "0 1 0", "1 0 0"},
                                    {"0 0 0", "1 0 0", "0 0 1"},
                                    {"0 0 0", "0 0 1", "0 1 0"},
                                    {"1 0 0", "0 1 0", "0 0 1"}};
        for (auto& f : facets) {
            stl += "facet normal 0 0 0\nouter loop\n";
            for (const char* v : f) {
                stl += QByteArray("vertex ") + v + "\n";
            }
            stl += "endloop\nendfacet\n";
        }
        stl += "endsolid tet\n";
        Result<ImportedMesh> m = importMesh(write("tet.stl", stl).toStdString());
        QVERIFY2(m.ok(), m.ok() ? "" : m.error().c_str());
        QCOMPARE(m->scene.bodies[0].particleCount, Index(4));
        QCOMPARE(m->scene.bodies[0].triangles.size(), std::size_t(4));
    }

    void badInputGetsAClearMessage() {
        auto errorOf = [](const QString& path) {
            Result<ImportedMesh> m = importMesh(path.toStdString());
            return m.ok() ? QString() : QString::fromStdString(m.error());
        };
        const QString missing = dir_.filePath("missing.obj");
        QVERIFY(errorOf(missing).contains("no such file"));
        QVERIFY(errorOf(missing).contains(missing));
        QVERIFY(errorOf(dir_.path()).contains("directory"));
        QVERIFY(errorOf(write("mesh.xyz", "1 2 3\n")).contains("unsupported format '.xyz'"));
        QVERIFY(errorOf(write("lines.obj", "v 0 0 0\nv 1 0 0\nl 1 2\n")).contains("no triangles"));
        QVERIFY(errorOf(write("broken.ply", "ply\nformat nonsense\n")).startsWith("cannot read"));
        const QString badIndex = errorOf(write("badindex.obj", "o b\nv 0 0 0\nv 1 0 0\nf 1 2 9\n"));
        QVERIFY2(!badIndex.isEmpty(), "a face referring to a missing vertex must fail");
        ImportOptions negative;
        negative.scale = -1;
        QVERIFY(!importMesh(write("ok.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n").toStdString(),
                            negative)
                     .ok());
    }

    void nonFiniteCoordinatesAreDroppedWithAWarning() {
        const QByteArray obj = "o bad\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv nan 0 0\nf 1 2 3\nf 1 4 3\n";
        Result<ImportedMesh> m = importMesh(write("nan.obj", obj).toStdString());
        QVERIFY(m.ok());
        QCOMPARE(m->scene.bodies[0].triangles.size(), std::size_t(1));
        QVERIFY(!m->warnings.empty());
        QVERIFY(QString::fromStdString(m->warnings[0]).contains("non-finite"));
        QVERIFY(QString::fromStdString(m->warnings[0]).contains("'bad'"));

        // An overflowing literal is infinite: dropped too.
        Result<ImportedMesh> inf = importMesh(
            write("inf.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1e999 0 0\nf 1 2 3\nf 1 4 3\n")
                .toStdString());
        QVERIFY(inf.ok());
        QCOMPARE(inf->scene.bodies[0].triangles.size(), std::size_t(1));
    }
};

QTEST_APPLESS_MAIN(TestMeshImport)
#include "tst_mesh_import.moc"
