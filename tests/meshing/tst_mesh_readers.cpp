// meshing: PBD Lab's own PLY, OFF and STL readers (what they read, what they refuse and how
// they say so), and the child process that contains the third-party readers.

#include "meshing/ContainedProcess.h"
#include "meshing/MeshImport.h"
#include "meshing/MeshReaders.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <cstring>
#include <unistd.h>
#include <vector>

using namespace pbd;

namespace {

// A unit square as two triangles, in the formats under test.
const std::vector<Vec3> kSquare = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};

std::string binaryPly(bool bigEndian) {
    std::string s = std::string("ply\nformat ") +
                    (bigEndian ? "binary_big_endian" : "binary_little_endian") +
                    " 1.0\ncomment made by a test\nelement vertex 4\nproperty float x\n"
                    "property float y\nproperty float z\nproperty uchar red\nelement face 1\n"
                    "property list uchar int vertex_indices\nproperty int flags\nend_header\n";
    const auto put = [&](const void* data, std::size_t size) {
        std::string bytes(static_cast<const char*>(data), size);
        if (bigEndian) {
            std::reverse(bytes.begin(), bytes.end());
        }
        s += bytes;
    };
    for (const Vec3& p : kSquare) {
        for (int k = 0; k < 3; ++k) {
            const float f = float(p[k]);
            put(&f, 4);
        }
        s += char(200); // red
    }
    s += char(4);
    for (int i = 0; i < 4; ++i) {
        put(&i, 4);
    }
    const int flags = 7;
    put(&flags, 4);
    return s;
}

QString errorOf(const Result<MeshFileContents>& r) {
    return r.ok() ? QString() : QString::fromStdString(r.error());
}

} // namespace

class TestMeshReaders : public QObject {
    Q_OBJECT

private slots:
    void plyAsciiAndBothBinariesReadTheSame() {
        const std::string ascii = "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\n"
                                  "property float y\nproperty float z\nelement face 1\n"
                                  "property list uchar int vertex_indices\nend_header\n"
                                  "0 0 0\n1 0 0\n1 1 0\n0 1 0\n4 0 1 2 3\n";
        for (const std::string& data : {ascii, binaryPly(false), binaryPly(true)}) {
            Result<MeshFileContents> r = parsePly(data, "square.ply", "square", 2.0);
            QVERIFY2(r.ok(), qPrintable(errorOf(r)));
            QCOMPARE(r->parts.size(), std::size_t(1));
            const TriangleSoup& soup = r->parts[0];
            QCOMPARE(soup.name, std::string("square"));
            QCOMPARE(soup.corners.size(), std::size_t(6)); // the quad as a fan of two
            QCOMPARE(soup.corners[0], Vec3(0, 0, 0));
            QCOMPARE(soup.corners[2], Vec3(2, 2, 0)); // scaled
            QCOMPARE(soup.corners[5], Vec3(0, 2, 0));
            QVERIFY(soup.uvs.empty());
            QVERIFY(r->warnings.empty());
        }
    }

    void plyTextureCoordinatesPerVertexAndPerCorner() {
        const std::string perVertex =
            "ply\nformat ascii 1.0\nelement vertex 3\nproperty double x\nproperty double y\n"
            "property double z\nproperty float s\nproperty float t\nelement face 1\n"
            "property list uchar uint vertex_indices\nend_header\n"
            "0 0 0 0.1 0.2\n1 0 0 0.3 0.4\n0 1 0 0.5 0.6\n3 0 1 2\n";
        Result<MeshFileContents> r = parsePly(perVertex, "uv.ply", "uv");
        QVERIFY2(r.ok(), qPrintable(errorOf(r)));
        QCOMPARE(r->parts[0].uvs.size(), std::size_t(3));
        QCOMPARE(r->parts[0].uvs[2], Vec2(0.5, 0.6));

        const std::string perCorner =
            "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
            "property float z\nelement face 1\nproperty list uchar int vertex_indices\n"
            "property list uchar float texcoord\nend_header\n"
            "0 0 0\n1 0 0\n0 1 0\n3 0 1 2 6 0 0 1 0 0 1\n";
        r = parsePly(perCorner, "wedge.ply", "wedge");
        QVERIFY2(r.ok(), qPrintable(errorOf(r)));
        QCOMPARE(r->parts[0].uvs.size(), std::size_t(3));
        QCOMPARE(r->parts[0].uvs[1], Vec2(1, 0));
    }

    void plyUnusedVerticesAreDroppedAndReported() {
        const std::string ply = "ply\nformat ascii 1.0\nelement vertex 5\nproperty float x\n"
                                "property float y\nproperty float z\nelement face 1\n"
                                "property list uchar int vertex_indices\nend_header\n"
                                "0 0 0\n1 0 0\n0 1 0\n5 5 5\n6 6 6\n3 0 1 2\n";
        Result<MeshFileContents> r = parsePly(ply, "unused.ply", "unused");
        QVERIFY2(r.ok(), qPrintable(errorOf(r)));
        QCOMPARE(r->parts[0].corners.size(), std::size_t(3));
        QCOMPARE(r->warnings.size(), std::size_t(1));
        QCOMPARE(QString::fromStdString(r->warnings[0]),
                 QString("body 'unused': dropped 2 vertices that no face uses"));
    }

    void plyProblemsNameThePlace() {
        const std::string head = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\n"
                                 "property float y\nproperty float z\nelement face 1\n"
                                 "property list uchar int vertex_indices\nend_header\n";
        QCOMPARE(errorOf(parsePly(head + "0 0 0\n1 0 0\n0 1 0\n3 0 1 7\n", "f.ply", "f")),
                 QString("cannot read 'f.ply': face 0: refers to vertex 7, but the file has 3 "
                         "vertices (numbered from 0)"));
        QCOMPARE(errorOf(parsePly(head + "0 0 0\n1 zero 0\n0 1 0\n3 0 1 2\n", "f.ply", "f")),
                 QString("cannot read 'f.ply': line 11: vertex 1, property 'y': expected a "
                         "number, found 'zero'"));
        QVERIFY(
            errorOf(parsePly(head + "0 0 0\n1 0 0\n0 1 0\n3 0 1", "f.ply", "f"))
                .contains("line 13: face 0, list 'vertex_indices': 3 items, more than the 4 bytes "
                          "left can hold"));
        // A count the file cannot hold is refused before anything is allocated.
        const QString huge = errorOf(parsePly(
            "ply\nformat binary_little_endian 1.0\nelement vertex 4000000000\nproperty float x\n"
            "property float y\nproperty float z\nend_header\n0123456789",
            "huge.ply", "huge"));
        QVERIFY2(huge.contains("declares 4000000000 vertex elements, more than the 10 bytes"),
                 qPrintable(huge));
        QVERIFY(errorOf(parsePly("solid x\n", "n.ply", "n")).contains("not a PLY file"));
        QVERIFY(errorOf(parsePly("ply\nformat ascii 1.0\nelement vertex 1\n", "h.ply", "h"))
                    .contains("no 'end_header'"));
        const QString cloud = errorOf(
            parsePly("ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\n"
                     "property float z\nend_header\n0 0 0\n1 1 1\n",
                     "cloud.ply", "cloud"));
        QVERIFY2(cloud.contains("no faces, only 2 vertices (a point cloud"), qPrintable(cloud));
    }

    void offWithColoursNormalsAndTextureCoordinates() {
        // Colours after a face's indices, as many writers add them; comments anywhere.
        const std::string coloured = "OFF\n# a comment\n4 2 0\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n"
                                     "3 0 1 2 255 0 0\n3 0 2 3 0.5 0.5 0.5 1\n";
        Result<MeshFileContents> r = parseOff(coloured, "c.off", "c");
        QVERIFY2(r.ok(), qPrintable(errorOf(r)));
        QCOMPARE(r->parts[0].corners.size(), std::size_t(6));
        QCOMPARE(r->parts[0].corners[5], Vec3(0, 1, 0));

        const std::string textured = "STCNOFF 3 1 0\n0 0 0  0 0 1  1 0 0 1  0.25 0.75\n"
                                     "1 0 0  0 0 1  1 0 0 1  0.5 0.5\n0 1 0  0 0 1  1 0 0 1  1 0\n"
                                     "3 0 1 2\n";
        r = parseOff(textured, "t.off", "t");
        QVERIFY2(r.ok(), qPrintable(errorOf(r)));
        QCOMPARE(r->parts[0].uvs.size(), std::size_t(3));
        QCOMPARE(r->parts[0].uvs[0], Vec2(0.25, 0.75));
    }

    void offProblemsNameThePlace() {
        QCOMPARE(errorOf(parseOff("OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 3\n", "o.off", "o")),
                 QString("cannot read 'o.off': face 0: refers to vertex 3, but the file has 3 "
                         "vertices (numbered from 0)"));
        QCOMPARE(errorOf(parseOff("OFF\n3 1 0\n0 0 0\n1 0 0\n", "o.off", "o")),
                 QString("cannot read 'o.off': line 2: the header declares 3 vertices and 1 "
                         "faces, more than the file's 22 bytes can hold"));
        QVERIFY(errorOf(parseOff("OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n99999 0 1 2\n", "o.off", "o"))
                    .contains("line 6: face 0 lists 99999 corners, more than the file holds"));
        QVERIFY(errorOf(parseOff("4OFF\n", "o.off", "o")).contains("not supported"));
        QVERIFY(errorOf(parseOff("ply\n", "o.off", "o")).contains("not an OFF file"));
    }

    void stlAsciiSolidsAndBinary() {
        const std::string ascii = "solid first\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\n"
                                  "vertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid first\n"
                                  "solid\nfacet normal 0 0 1\nouter loop\nvertex 0 0 1\n"
                                  "vertex 1 0 1\nvertex 0 1 1\nendloop\nendfacet\nendsolid\n";
        Result<MeshFileContents> r = parseStl(ascii, "two.stl", "two");
        QVERIFY2(r.ok(), qPrintable(errorOf(r)));
        QCOMPARE(r->parts.size(), std::size_t(2)); // a body per solid
        QCOMPARE(r->parts[0].name, std::string("first"));
        QCOMPARE(r->parts[1].name, std::string("two-2"));
        QCOMPARE(r->parts[1].corners[2], Vec3(0, 1, 1));

        // Binary, even though its header starts with "solid", as many exporters write it.
        std::string binary = "solid exported by a test";
        binary.resize(80, ' ');
        const std::uint32_t count = 1;
        binary.append(reinterpret_cast<const char*>(&count), 4);
        const float facet[12] = {0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0};
        binary.append(reinterpret_cast<const char*>(facet), sizeof facet);
        binary.append(2, '\0');
        r = parseStl(binary, "b.stl", "b");
        QVERIFY2(r.ok(), qPrintable(errorOf(r)));
        QCOMPARE(r->parts[0].corners[2], Vec3(0, 3, 0));
        // Truncated: refused with the sizes.
        QCOMPARE(errorOf(parseStl(binary.substr(0, 120), "b.stl", "b")),
                 QString("cannot read 'b.stl': it declares 1 triangle (134 bytes) but has 120 "
                         "bytes (the file is truncated)"));
        QVERIFY(errorOf(parseStl("solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\n"
                                 "vertex 1 0\nendloop\n",
                                 "a.stl", "a"))
                    .contains("line 6: expected a coordinate, found 'endloop'"));
    }

    void bigBinaryPlyOfAMillionTriangles() {
        // 1,000 x 500 quads: the readers must not be the slow part of a production mesh.
        const int n = 1000, m = 500;
        std::string s = "ply\nformat binary_little_endian 1.0\nelement vertex " +
                        std::to_string((n + 1) * (m + 1)) +
                        "\nproperty float x\nproperty float y\nproperty float z\nelement face " +
                        std::to_string(n * m) +
                        "\nproperty list uchar int vertex_indices\nend_header\n";
        for (int j = 0; j <= m; ++j) {
            for (int i = 0; i <= n; ++i) {
                const float p[3] = {float(i), float(j), 0};
                s.append(reinterpret_cast<const char*>(p), sizeof p);
            }
        }
        for (int j = 0; j < m; ++j) {
            for (int i = 0; i < n; ++i) {
                s += char(4);
                const int q[4] = {j * (n + 1) + i, j * (n + 1) + i + 1, (j + 1) * (n + 1) + i + 1,
                                  (j + 1) * (n + 1) + i};
                s.append(reinterpret_cast<const char*>(q), sizeof q);
            }
        }
        Result<MeshFileContents> r = parsePly(s, "big.ply", "big");
        QVERIFY2(r.ok(), qPrintable(errorOf(r)));
        QCOMPARE(r->parts[0].corners.size(), std::size_t(3 * 2 * n * m));
        QCOMPARE(r->parts[0].corners.back(), Vec3(n - 1, m, 0));
    }

    void containedWorkThatCrashesHangsOrOverallocatesIsAResult() {
        ContainedLimits limits;
        limits.timeoutSeconds = 1;
        ContainedRun run = runContained(
            [](int) {
                std::raise(SIGSEGV);
                return 0;
            },
            limits);
        QCOMPARE(int(run.end), int(ContainedRun::End::Crashed));
        QCOMPARE(run.signal, SIGSEGV);
        QVERIFY(QString::fromStdString(run.describe(1)).startsWith("crashed (signal 11"));

        run = runContained(
            [](int) {
                for (;;) {
                    pause();
                }
                return 0;
            },
            limits);
        QCOMPARE(int(run.end), int(ContainedRun::End::TimedOut));
        QCOMPARE(QString::fromStdString(run.describe(1)),
                 QString("did not finish within 1 s and was stopped"));

        limits.timeoutSeconds = 30;
        limits.memoryBytes = std::size_t(256) << 20;
        run = runContained(
            [](int) {
                std::vector<char> big(std::size_t(1) << 30); // 1 GB over a 256 MB limit
                return int(big.size() & 1);
            },
            limits);
#if defined(__SANITIZE_ADDRESS__)
        // AddressSanitizer's allocator reports running out of memory itself, with its own exit
        // code, instead of throwing std::bad_alloc (scripts/sanitize): the child still fails.
        QVERIFY(!run.succeeded());
        QCOMPARE(int(run.end), int(ContainedRun::End::Finished));
        QVERIFY(run.exitCode != 0);
#else
        QCOMPARE(run.exitCode, kExitOutOfMemory);
        QCOMPARE(QString::fromStdString(run.describe(30)), QString("ran out of memory"));
#endif

        int polls = 0;
        limits.keepGoing = [&] { return ++polls < 3; };
        run = runContained(
            [](int) {
                for (;;) {
                    pause();
                }
                return 0;
            },
            limits);
        QCOMPARE(int(run.end), int(ContainedRun::End::Cancelled));

        limits.keepGoing = {};
        run = runContained(
            [](int fd) {
                std::printf("a line\nand another\n");
                return writeAllTo(fd, "result", 6) ? 0 : 1;
            },
            limits);
        QVERIFY(run.succeeded());
        QCOMPARE(run.result, std::string("result"));
        QCOMPARE(run.output, std::string("a line\nand another\n"));
    }

    void namesThatAreNotUtf8AreMadeValid() {
        // Latin-1 'é', a stray 0xFF and a control character in an OBJ object's name.
        QTemporaryDir dir;
        const QString path = dir.filePath("names.obj");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("o caf\xe9\xff\x01x \xc3\xa9t\xc3\xa9\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
        f.close();
        Result<ImportedMesh> m = importMesh(path.toStdString());
        QVERIFY2(m.ok(), m.ok() ? "" : m.error().c_str());
        QCOMPARE(m->scene.bodies[0].name, std::string("caf?? x \xc3\xa9t\xc3\xa9")); // été kept
    }

    void separateShellsBecomeBodiesUnlessMerged() {
        // One OBJ object of two quads that share no vertex, with UVs; the second one first in
        // the vertex list, so the shells' particles must be reordered.
        QTemporaryDir dir;
        const QString path = dir.filePath("shells.obj");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("o pair\nv 5 0 0\nv 6 0 0\nv 6 1 0\nv 5 1 0\n"
                "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n"
                "vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\n"
                "f 5/1 6/2 7/3 8/4\nf 1/1 2/2 3/3 4/4\n");
        f.close();
        Result<ImportedMesh> m = importMesh(path.toStdString());
        QVERIFY2(m.ok(), m.ok() ? "" : m.error().c_str());
        const Scene& scene = m->scene;
        QCOMPARE(scene.bodies.size(), std::size_t(2));
        QCOMPARE(scene.bodies[0].name, std::string("pair"));
        QCOMPARE(scene.bodies[1].name, std::string("pair-2"));
        QVERIFY(validateScene(scene).empty());
        for (const Body& b : scene.bodies) {
            QCOMPARE(b.particleCount, Index(4));
            QCOMPARE(b.triangles.size(), std::size_t(2));
            QVERIFY(b.hasUVs());
            for (const Triangle& t : b.triangles) {
                for (Index i : t) {
                    QVERIFY(i >= b.firstParticle && i < b.firstParticle + b.particleCount);
                }
            }
        }
        // The first face's shell comes first, with its own positions.
        QCOMPARE(scene.particles.positions[scene.bodies[0].triangles[0][0]], Vec3(0, 0, 0));
        QCOMPARE(scene.particles.positions[scene.bodies[1].triangles[0][0]], Vec3(5, 0, 0));
        QVERIFY(QString::fromStdString(m->warnings.back()).contains("2 separate shells"));

        ImportOptions merged;
        merged.mergeShells = true;
        m = importMesh(path.toStdString(), merged);
        QVERIFY(m.ok());
        QCOMPARE(m->scene.bodies.size(), std::size_t(1));
        QCOMPARE(m->scene.bodies[0].triangles.size(), std::size_t(4));
    }

    void objAndGltfReadThroughTheChild() {
        // The contained readers give the same bodies as before, with their names.
        const QString models = qEnvironmentVariable("ASSIMP_MODELS", "/usr/share/assimp/models");
        Result<ImportedMesh> gltf =
            importMesh((models + "/glTF2/BoxTextured-glTF-Binary/BoxTextured.glb").toStdString());
        QVERIFY2(gltf.ok(), gltf.ok() ? "" : gltf.error().c_str());
        QCOMPARE(gltf->scene.bodies.size(), std::size_t(1));
        QVERIFY(gltf->scene.bodies[0].hasUVs());
        // A cancel while the reader runs is the cancel message, at once.
        Result<ImportedMesh> cancelled =
            importMesh((models + "/OBJ/spider.obj").toStdString(), {},
                       [](double, const std::string&) { return false; });
        QVERIFY(!cancelled.ok());
        QCOMPARE(cancelled.error(), kCancelledMessage);
        Result<ImportedMesh> spider = importMesh((models + "/OBJ/spider.obj").toStdString());
        QVERIFY2(spider.ok(), spider.ok() ? "" : spider.error().c_str());
        QVERIFY(spider->scene.bodies.size() > 10); // its parts, one body each
    }
};

QTEST_APPLESS_MAIN(TestMeshReaders)
#include "tst_mesh_readers.moc"
