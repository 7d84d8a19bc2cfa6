// app: pbdlab's batch rendering and pbdlab-cli, run as a user or a script would run them.

#include "../ChildProcess.h"
#include "../widgets/ImageChecks.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QGuiApplication>
#include <QImage>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <nlohmann/json.hpp>

using namespace pbd::test;

namespace {

struct Run {
    int exitCode = -1;
    QString out;
    QString err;
};

Run run(const QString& program, const QStringList& args) {
    QProcess p;
    p.start(program, args);
    if (!p.waitForFinished(childTimeoutMs())) {
        p.kill();
        p.waitForFinished();
        return {-1, {}, QStringLiteral("timed out after %1 s").arg(childTimeoutMs() / 1000)};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2,
            QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

// `simulate` with `args` and --out OUT: the report it writes, or null (and the error logged).
nlohmann::json simulateReport(const QString& cli, QStringList args, const QString& out) {
    args += {"--out", out};
    Run r = run(cli, args);
    if (r.exitCode != 0) {
        qWarning() << r.err;
        return nlohmann::json();
    }
    QFile f(out);
    return f.open(QIODevice::ReadOnly) ? nlohmann::json::parse(f.readAll().toStdString())
                                       : nlohmann::json();
}

} // namespace

class TestCommandLine : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;
    const QString gui_ = PBDLAB_GUI_EXE;
    const QString cli_ = PBDLAB_CLI_EXE;

private slots:
    void batchScreenshotOfTheSampleScene() {
        const QString path = dir_.filePath("sample.png");
        const Run r = run(gui_, {"--scene", "sample", "--screenshot", path, "--size", "480x320"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QImage image(path);
        QCOMPARE(image.size(), QSize(480, 320));
        QVERIFY(countPixels(image, isClothOrange) > 480 * 320 / 50);
        QVERIFY(countPixels(image, isBodyBlue) > 480 * 320 / 100);
    }

    void theSampleSettlesInView() {
        // The first thing a user sees: played for 800 steps (6.7 s), the sample comes to rest
        // in view. The coloured pixels (cloth and bodies, not the grey ground and sky) of the
        // last frame stay within 0.6 to 1.6 times those of the first, and the cloth is seen.
        auto coloured = [](QRgb c) {
            return std::max({qRed(c), qGreen(c), qBlue(c)}) -
                       std::min({qRed(c), qGreen(c), qBlue(c)}) >
                   60;
        };
        const QString first = dir_.filePath("sample-0.png"), last = dir_.filePath("sample-800.png");
        Run r = run(gui_, {"--scene", "sample", "--screenshot", first, "--size", "480x320"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        r = run(gui_,
                {"--scene", "sample", "--steps", "800", "--screenshot", last, "--size", "480x320"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const int before = countPixels(QImage(first), coloured);
        const int after = countPixels(QImage(last), coloured);
        const int cloth = countPixels(QImage(last), isClothOrange);
        qInfo("coloured pixels: %d at step 0, %d at step 800 (cloth %d)", before, after, cloth);
        QVERIFY(before > 480 * 320 / 20);
        QVERIFY(after > 0.6 * before && after < 1.6 * before);
        QVERIFY(cloth > 480 * 320 / 50);
    }

    void batchScreenshotOfAMeshFile() {
        const QString path = dir_.filePath("cube.png");
        const Run r =
            run(gui_, {"--open", "/usr/share/assimp/models/PLY/cube.ply", "--screenshot", path});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(QImage(path).size(), QSize(1280, 800)); // the default size
        // As a desktop opens a file (pbdlab.desktop: Exec=pbdlab %f): the same picture.
        const QString named = dir_.filePath("cube-named.png");
        Run same = run(gui_, {"/usr/share/assimp/models/PLY/cube.ply", "--screenshot", named});
        QVERIFY2(same.exitCode == 0, qPrintable(same.err));
        QCOMPARE(differingPixels(QImage(path), QImage(named)), 0);
        same = run(gui_, {"a.ply", "b.ply", "--screenshot", named});
        QCOMPARE(same.exitCode, 2);
        QVERIFY2(same.err.contains("one file at a time"), qPrintable(same.err));
        same = run(gui_, {"a.ply", "--scene", "sample", "--screenshot", named});
        QCOMPARE(same.exitCode, 2);
        QVERIFY2(same.err.contains("cannot be used together"), qPrintable(same.err));
    }

    void batchErrorsAreClearAndNonZero() {
        Run r = run(gui_, {"--scene", "nonexistent", "--screenshot", dir_.filePath("x.png")});
        QVERIFY(r.exitCode != 0);
        QVERIFY2(r.err.contains("unknown scene 'nonexistent'"), qPrintable(r.err));
        QVERIFY(r.err.contains("sample"));
        QVERIFY(!QFile::exists(dir_.filePath("x.png")));

        r = run(gui_, {"--scene", "sample", "--screenshot", "/nonexistent-folder/x.png"});
        QVERIFY(r.exitCode != 0);
        QVERIFY2(r.err.contains("/nonexistent-folder") && r.err.contains("does not exist"),
                 qPrintable(r.err));

        r = run(gui_,
                {"--scene", "sample", "--screenshot", dir_.filePath("y.png"), "--size", "wide"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("invalid --size 'wide'"));

        r = run(gui_,
                {"--open", dir_.filePath("missing.obj"), "--screenshot", dir_.filePath("z.png")});
        QVERIFY(r.exitCode != 0);
        QVERIFY(r.err.contains("no such file"));
    }

    void guiHelpAndVersion() {
        Run r = run(gui_, {"--version"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains("pbdlab 0."));
        r = run(gui_, {"--help"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains("--screenshot"));
    }

    void batchFrameSequence() {
        const QString folder = dir_.filePath("frames");
        Run r = run(gui_, {"--scene", "rope", "--steps", "6", "--frame-every", "2", "--frames",
                           folder, "--size", "160x100"});
        QCOMPARE(r.exitCode, 0);
        const QStringList files = QDir(folder).entryList({"*.png"}, QDir::Files, QDir::Name);
        QCOMPARE(files, QStringList({"frame_000002.png", "frame_000004.png", "frame_000006.png"}));
        const QImage first(QDir(folder).filePath(files.front()));
        QCOMPARE(first.size(), QSize(160, 100));
        // The rope swings: consecutive frames differ.
        const QImage last(QDir(folder).filePath(files.back()));
        QVERIFY(first != last);
        r = run(gui_,
                {"--scene", "rope", "--steps", "2", "--frame-every", "0", "--frames", folder});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("invalid --frame-every '0'"));
    }

    void cliHelpVersionAndErrors() {
        Run r = run(cli_, {"--help"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains("Usage: pbdlab-cli"));
        QVERIFY(r.out.contains("info SCENE|MESH"));
        r = run(cli_, {"--version"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.startsWith("pbdlab-cli 0."));
        QVERIFY(r.out.contains("TetGen 1.5"));
        QVERIFY(r.out.contains("CGAL 5."));
        QVERIFY2(r.out.contains("kernels ") && r.out.contains(" lanes; this CPU runs "),
                 qPrintable(r.out));
        r = run(cli_, {"frobnicate"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("unknown command 'frobnicate'"));
        r = run(cli_, {"info", dir_.filePath("missing.obj")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.err.contains("no such file"));
    }

    void cliInfoReportsScenesAndMeshes() {
        Run r = run(cli_, {"info", "sample", "--json"});
        QCOMPARE(r.exitCode, 0);
        const nlohmann::json j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j["bodies"].size(), std::size_t(2));
        QCOMPARE(j["tetrahedra"].get<int>(), 3456);
        QCOMPARE(j["bodies"][1]["uvs"].get<bool>(), true);
        QVERIFY(std::abs(j["bodies"][1]["mass"].get<double>() - 0.8) < 1e-12); // 2 m square
        QVERIFY(j["problems"].empty());

        r = run(cli_, {"info", "/usr/share/assimp/models/OFF/Cube.off", "--json", "--scale", "2"});
        QCOMPARE(r.exitCode, 0);
        const nlohmann::json cube = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(cube["particles"].get<int>(), 8);
        QCOMPARE(cube["bounds"]["max"][0].get<double>(), 1.0); // 0.5 scaled by 2

        r = run(cli_, {"scenes"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.startsWith("sample\t"));
        for (const char* name : {"cloth\t", "cloth-sbd\t", "tetbar\t", "rope\t"}) {
            QVERIFY2(r.out.contains(name), name);
        }
    }

    void cliSimulateWritesPositionsFieldsAndResiduals() {
        const QString out = dir_.filePath("rope.json");
        Run r =
            run(cli_, {"simulate", "rope", "--steps", "120", "--iterations", "20", "--out", out});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.err.contains("written to"));
        QFile file(out);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const nlohmann::json j = nlohmann::json::parse(file.readAll().toStdString());
        QCOMPARE(j["scene"].get<std::string>(), std::string("rope"));
        QCOMPARE(j["steps"].get<int>(), 120);
        QCOMPARE(j["settings"]["iterations"].get<int>(), 20);
        QVERIFY(std::abs(j["time"].get<double>() - 2.0) < 1e-9); // 120 steps of 1/60 s
        QCOMPARE(j["positions"].size(), std::size_t(30));
        // The first particle is held; the rope swung down below it.
        QCOMPARE(j["positions"][0][1].get<double>(), 1.0);
        QVERIFY(j["positions"][29][1].get<double>() < 0.5);
        const auto& c = j["constraints"][0];
        QCOMPARE(c["type"].get<std::string>(), std::string("distance"));
        QCOMPARE(c["residual"].size(), std::size_t(29));
        QVERIFY(c["max_abs_residual"].get<double>() > 0); // compliant: stretched by the weight

        r = run(cli_, {"simulate", "tetbar", "--steps", "5"});
        QCOMPARE(r.exitCode, 0);
        const nlohmann::json bar = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(bar["fields"]["tet_volume_ratio"].size(), std::size_t(15795));
        QCOMPARE(bar["fields"]["tet_green_strain"][0].size(), std::size_t(6));
        QCOMPARE(bar["fields"]["inverted_tets"].get<int>(), 0);

        r = run(cli_, {"simulate", "rope", "--dt", "-1"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("--dt needs a positive time step"));
        r = run(cli_, {"simulate", "/usr/share/assimp/models/OFF/Cube.off"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.err.contains("looks like a mesh file"));
        r = run(cli_, {"simulate", "/nonexistent/dress.obj"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("'/nonexistent/dress.obj': no such file"), qPrintable(r.err));
        QVERIFY(!r.err.contains("prepare it first"));
        r = run(cli_, {"simulate", "/nonexistent/project.json"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("no such file"), qPrintable(r.err));
        r = run(cli_, {"simulate", "nosuchscene"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.err.contains("unknown scene 'nosuchscene'"));
        // A scene the solver cannot step is refused before the first step, naming the element.
        {
            const QString rope = dir_.filePath("rope-for-mass.json");
            QCOMPARE(run(cli_, {"export", "rope", "-o", rope}).exitCode, 0);
            QFile f(rope);
            QVERIFY(f.open(QIODevice::ReadOnly));
            nlohmann::json doc = nlohmann::json::parse(f.readAll().toStdString());
            f.close();
            doc["particles"]["inverseMasses"][3] = -2.0;
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
            f.write(QByteArray::fromStdString(doc.dump()));
            f.close();
            r = run(cli_, {"simulate", rope, "--steps", "3"});
            QCOMPARE(r.exitCode, 1);
            QVERIFY2(r.err.contains("particle 3 (vertex 3 of body 'rope') has an invalid inverse "
                                    "mass -2"),
                     qPrintable(r.err));
        }
        r = run(cli_, {"simulate", "rope", "--out", dir_.filePath("no/such/dir/x.json")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.err.contains("could not write"));
    }

    void cliExportsACookedAssetThatSimulatesTheSame() {
        // export --asset cooks a generated scene; simulate steps the asset to the same
        // positions, bit for bit, as the scene itself; info reads it.
        const QString asset = dir_.filePath("tetbar.asset.json");
        const QString project = dir_.filePath("tetbar.project.json");
        Run r = run(cli_, {"export", "tetbar", "--asset", asset, "-o", project});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY(QFileInfo::exists(asset) && QFileInfo::exists(project));
        r = run(cli_, {"simulate", "tetbar", "--steps", "30", "--threads", "2"});
        QCOMPARE(r.exitCode, 0);
        const nlohmann::json direct = nlohmann::json::parse(r.out.toStdString());
        r = run(cli_, {"simulate", asset, "--steps", "30", "--threads", "2"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const nlohmann::json cooked = nlohmann::json::parse(r.out.toStdString());
        QVERIFY(cooked["positions"] == direct["positions"]);
        r = run(cli_, {"info", asset, "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(nlohmann::json::parse(r.out.toStdString())["particles"].get<int>(),
                 int(direct["positions"].size()));

        // Usage errors and a broken asset.
        QCOMPARE(run(cli_, {"export", "tetbar"}).exitCode, 2);
        QCOMPARE(run(cli_, {"export", "tetbar", "--asset"}).exitCode, 2);
        QCOMPARE(run(cli_, {"export", "tetbar", "--indent", "x", "--asset", asset}).exitCode, 2);
        QCOMPARE(run(cli_, {"export", "no-such-scene", "--asset", asset}).exitCode, 1);
        QFile broken(dir_.filePath("broken.json"));
        QVERIFY(broken.open(QIODevice::WriteOnly));
        broken.write(R"({"format": "pbdlab-asset", "version": 1, "particles": {}})");
        broken.close();
        r = run(cli_, {"simulate", broken.fileName()});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("particles: missing 'positions'"), qPrintable(r.err));
    }

    void cliCollidersAreAddedBySpec() {
        // --collider adds a sphere and a mesh from a file (moved by an edit); simulate lists
        // them; bad specs exit 1 naming the problem.
        QFile crate(dir_.filePath("crate.obj"));
        QVERIFY(crate.open(QIODevice::WriteOnly));
        crate.write("o crate\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\n"
                    "v 0 1 1\nf 1 3 2\nf 1 4 3\nf 5 6 7\nf 5 7 8\nf 1 2 6\nf 1 6 5\nf 2 3 7\n"
                    "f 2 7 6\nf 3 4 8\nf 3 8 7\nf 4 1 5\nf 4 5 8\n");
        crate.close();
        Run r = run(cli_, {"simulate", "cloth", "--steps", "5", "--collider",
                           "sphere:position=0 1 0,radius=0.25", "--collider",
                           "mesh:file=" + crate.fileName() + ",position=3 0 0"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const nlohmann::json j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j["colliders"].size(), std::size_t(2));
        QCOMPARE(j["colliders"][0]["radius"].get<double>(), 0.25);
        QCOMPARE(j["colliders"][1]["shape"].get<std::string>(), std::string("mesh"));
        QCOMPARE(j["colliders"][1]["position"][0].get<double>(), 3.0);
        r = run(cli_, {"simulate", "cloth", "--collider", "sphere:radius=-1"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.err.contains("the radius must be positive"));
        r = run(cli_, {"simulate", "cloth", "--collider", "cone"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.err.contains("unknown collider shape 'cone'"));
        QCOMPARE(run(cli_, {"simulate", "cloth", "--collider"}).exitCode, 2);
    }

    void cliGroupsAreListedAndEdited() {
        Run r = run(cli_, {"info", "cloth-sbd", "--json"});
        QCOMPARE(r.exitCode, 0);
        const nlohmann::json info = nlohmann::json::parse(r.out.toStdString());
        nlohmann::json strain;
        for (const auto& g : info["constraint_groups"]) {
            if (g["name"] == "cloth strain") {
                strain = g;
            }
        }
        QVERIFY(!strain.is_null());
        QCOMPARE(strain["constraints"].get<int>(), 4802);
        QCOMPARE(strain["material"]["stretch_v"].get<double>(), 1e4);
        QCOMPARE(strain["unit"].get<std::string>(), std::string("N/m"));

        // Soft along v: the mean Green strain along v (E_22) grows, along u it does not.
        auto meanStrain = [](const nlohmann::json& j, int component) {
            double sum = 0;
            for (const auto& e : j["fields"]["triangle_green_strain"]) {
                sum += e[component].get<double>();
            }
            return sum / double(j["fields"]["triangle_green_strain"].size());
        };
        r = run(cli_, {"simulate", "cloth-sbd", "--steps", "100"});
        QCOMPARE(r.exitCode, 0);
        const nlohmann::json stiff = nlohmann::json::parse(r.out.toStdString());
        r = run(cli_, {"simulate", "cloth-sbd", "--steps", "100", "--group",
                       "cloth strain:stretch_v=20,pbd=1", "--group", "cloth bending:enabled=off"});
        QCOMPARE(r.exitCode, 0);
        const nlohmann::json soft = nlohmann::json::parse(r.out.toStdString());
        for (const auto& g : soft["constraint_groups"]) {
            if (g["name"] == "cloth strain") {
                QCOMPARE(g["material"]["stretch_v"].get<double>(), 20.0);
            }
            if (g["name"] == "cloth bending") {
                QVERIFY(!g["enabled"].get<bool>());
            }
        }
        qInfo("mean E_vv: default %.3f, soft %.3f", meanStrain(stiff, 1), meanStrain(soft, 1));
        QVERIFY(meanStrain(soft, 1) > meanStrain(stiff, 1) + 0.05);
        QVERIFY(std::abs(meanStrain(soft, 0) - meanStrain(stiff, 0)) < 0.05);

        // Mistakes are named.
        r = run(cli_, {"simulate", "cloth-sbd", "--group", "cloth:stretch_v=1"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("there is no constraint group 'cloth'") &&
                     r.err.contains("'cloth strain'"),
                 qPrintable(r.err));
        r = run(cli_, {"simulate", "cloth-sbd", "--group", "cloth strain:stretch_w=1"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("has no 'stretch_w' (it has enabled, pbd, stretch_u"),
                 qPrintable(r.err));
        r = run(cli_, {"simulate", "cloth-sbd", "--group", "cloth strain:stretch_v=-2"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.err.contains("'-2' is not a modulus"));
        r = run(cli_, {"simulate", "cloth-sbd", "--group", "cloth strain"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("--group needs NAME:KEY=VALUE"));
    }

    void cliPrepareWritesProjectMeshesAndReport() {
        // A closed box and an open sheet above it, as an artist's OBJ.
        const QString obj = dir_.filePath("box-sheet.obj");
        QFile f(obj);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("o box\nv -0.5 -0.5 -0.5\nv 0.5 -0.5 -0.5\nv 0.5 0.5 -0.5\nv -0.5 0.5 -0.5\n"
                "v -0.5 -0.5 0.5\nv 0.5 -0.5 0.5\nv 0.5 0.5 0.5\nv -0.5 0.5 0.5\n"
                "f 1 4 3 2\nf 5 6 7 8\nf 1 2 6 5\nf 2 3 7 6\nf 3 4 8 7\nf 4 1 5 8\n"
                "o sheet\nv -1 1 -1\nv 1 1 -1\nv 1 1 1\nv -1 1 1\nvt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\n"
                "f 9/1 12/4 11/3 10/2\n");
        f.close();
        const QString project = dir_.filePath("box-sheet.json");
        const QString report = dir_.filePath("report.json");
        Run r = run(cli_, {"prepare",
                           obj,
                           "--tet",
                           "--air",
                           "--frames",
                           "uv",
                           "--quality",
                           "1.4",
                           "--max-volume",
                           "0.01",
                           "--constraints",
                           "-o",
                           project,
                           "--vtu",
                           dir_.filePath("m.vtu"),
                           "--msh",
                           dir_.filePath("m.msh"),
                           "--tetgen",
                           dir_.filePath("m"),
                           "--report",
                           report});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY(r.err.contains("[100%] done"));
        QVERIFY(r.err.contains("info: body 'box': "));
        for (const char* suffix : {".vtu", ".msh", ".node", ".ele", ".face"}) {
            QVERIFY2(QFile::exists(dir_.filePath(QString("m") + suffix)), suffix);
        }
        QFile reportFile(report);
        QVERIFY(reportFile.open(QIODevice::ReadOnly));
        const nlohmann::json j = nlohmann::json::parse(reportFile.readAll().toStdString());
        QCOMPARE(j["bodies"].get<int>(), 2);
        QVERIFY(j["tets"].get<int>() >= 5); // a cube needs at least 5
        QCOMPARE(j["surface_triangles_preserved"].get<int>(), 12);
        QVERIFY(j["air_tets"].get<int>() > 0);
        QCOMPARE(j["inverted_tets"].get<int>(), 0);
        QVERIFY(j["timings"]["total"].get<double>() > 0);
        // The project simulates.
        r = run(cli_, {"simulate", project, "--steps", "5", "--out", dir_.filePath("sim.json")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));

        // Bad input: a non-zero status and a message naming the problem.
        r = run(cli_, {"prepare", dir_.filePath("missing.obj"), "--tet"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.err.contains("no such file"));
        r = run(cli_, {"prepare", obj, "--quality", "0.5"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("radius-edge ratio"));
        r = run(cli_, {"prepare"});
        QCOMPARE(r.exitCode, 2);
        // A file to write is checked before the work: its folder must exist. Nothing else
        // is written then.
        const QString never = dir_.filePath("never.json");
        r = run(cli_,
                {"prepare", obj, "--tet", "-o", never, "--report", "/nonexistent-folder/r.json"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("could not write '/nonexistent-folder/r.json': the folder "
                                "'/nonexistent-folder' does not exist"),
                 qPrintable(r.err));
        QVERIFY(!QFile::exists(never));
        r = run(cli_, {"simulate", "cloth", "--steps", "1", "--out", dir_.path()});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("it is a folder"), qPrintable(r.err));
        const QString crossing = dir_.filePath("crossing.obj");
        QFile c(crossing);
        QVERIFY(c.open(QIODevice::WriteOnly));
        c.write("o a\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n"
                "o b\nv 0.2 0.2 0.2\nv 1.2 0.2 0.2\nv 0.2 1.2 0.2\nv 0.2 0.2 1.2\n"
                "f 5 7 6\nf 5 6 8\nf 5 8 7\nf 6 7 8\n");
        c.close();
        r = run(cli_, {"prepare", crossing, "--tet", "--overlaps", "keep", "-o",
                       dir_.filePath("never.json")});
        QCOMPARE(r.exitCode, 1);
        // The refusal names the file, the bodies, why, and what to try.
        QVERIFY2(
            r.err.contains("prepare failed: '" + crossing + "': bodies 'a' and 'b' intersect") &&
                r.err.contains("To go on: crossing parts become one body with --overlaps "
                               "wrap or union") &&
                r.err.contains("--cage N simulates a closed cage"),
            qPrintable(r.err));
        QVERIFY(!QFile::exists(dir_.filePath("never.json")));
        // Two open sheets that cross do not merge (cloth may cross): wrapped, they do.
        const QString sheets = dir_.filePath("sheets.obj");
        QFile x(sheets);
        QVERIFY(x.open(QIODevice::WriteOnly));
        x.write("o a\nv -1 0 -1\nv 1 0 -1\nv 1 0 1\nv -1 0 1\nf 1 3 2\nf 1 4 3\n"
                "o b\nv -1 -1 0\nv 1 -1 0\nv 1 1 0\nv -1 1 0\nf 5 6 7\nf 5 7 8\n");
        x.close();
        r = run(cli_, {"prepare", sheets, "--tet"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("To go on: --wrap always replaces each body") &&
                     !r.err.contains("--overlaps"),
                 qPrintable(r.err));
        r = run(cli_, {"prepare", sheets, "--tet", "--wrap", "always"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        // By default crossing parts are wrapped into one body, and it says so.
        const QString merged = dir_.filePath("merged.json");
        const QString mergedReport = dir_.filePath("merged-report.json");
        r = run(cli_, {"prepare", crossing, "--tet", "-o", merged, "--report", mergedReport});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains("bodies 'a' and 'b' cross: wrapped together into 'a'"),
                 qPrintable(r.err));
        {
            QFile mergedFile(mergedReport);
            QVERIFY(mergedFile.open(QIODevice::ReadOnly));
            const auto merging = nlohmann::json::parse(mergedFile.readAll().toStdString());
            QCOMPARE(merging["bodies"].get<int>(), 1);
            QVERIFY(merging["tets"].get<int>() > 0);
            QCOMPARE(merging["merged_overlaps"][0]["parts"].size(), std::size_t(2));
            QVERIFY(merging["merged_overlaps"][0]["wrap"]["volume_after"].get<double>() > 0);
        }
        r = run(cli_, {"simulate", obj});
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.err.contains("prepare it first"));
    }

    void cliBenchPrintsOneJsonObject() {
        Run r = run(cli_, {"bench", "cloth", "--steps", "5", "--threads", "2", "--json"});
        QCOMPARE(r.exitCode, 0);
        const nlohmann::json j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j["scene"].get<std::string>(), std::string("cloth"));
        QCOMPARE(j["threads"].get<int>(), 2);
        QCOMPARE(j["steps"].get<int>(), 5);
        QVERIFY(j["ms_per_step"].get<double>() > 0);
        QVERIFY(j["ns_per_projection"]["distance"].get<double>() > 0);
        QVERIFY(j["ns_per_projection"]["dihedral"].get<double>() > 0);
        QCOMPARE(j["constraints"]["distance"].get<int>(), 7301);
        QCOMPARE(j["constraints"]["dihedral"].get<int>(), 7105);
    }

    void benchSaysWhatContinuousCollisionCosts() {
        // With continuous collision on, bench gives its share of a step (its cycles, and its
        // tests alone within them) and what it held; without it, no such fields.
        Run r = run(cli_, {"bench", "drape", "--steps", "40", "--threads", "2",
                           "--continuous-collision", "on", "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        nlohmann::json j = nlohmann::json::parse(r.out.toStdString());
        const double cycles = j["ms_per_step_continuous"].get<double>();
        const double tests = j["ms_per_step_continuous_tests"].get<double>();
        QVERIFY(tests > 0);
        QVERIFY(cycles >= tests);
        QVERIFY(cycles < j["ms_per_step_mean"].get<double>());
        QVERIFY(j["continuous_touching_per_step"].get<double>() >= 0);
        QVERIFY(j["continuous_held_per_step"].get<double>() >= 0);
        r = run(cli_, {"bench", "drape", "--steps", "2", "--json"});
        QCOMPARE(r.exitCode, 0);
        j = nlohmann::json::parse(r.out.toStdString());
        QVERIFY(!j.contains("ms_per_step_continuous"));
    }

    void benchViewPlaysAndMeasuresTheWindow() {
        // pbdlab --bench-view plays the scene while the view turns, then prints what the
        // window kept up with: frames drawn, snapshots shown and steps made, with their times.
        Run r = run(gui_, {"--scene", "cloth", "--bench-view", "2", "--size", "640x400"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const nlohmann::json j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j["scene"].get<std::string>(), std::string("cloth"));
        QCOMPARE(j["triangles"].get<int>(), 2 * 49 * 49);
        QVERIFY(j["seconds"].get<double>() >= 2.0);
        QVERIFY(j["frames"].get<int>() >= 10); // the turning view drew (llvmpipe: 60-70 a second)
        QVERIFY(j["frames_per_second"].get<double>() > 0);
        QVERIFY(j["steps"].get<int>() > 10);
        QVERIFY(j["snapshots_shown"].get<int>() > 5);
        QVERIFY(j["snapshot_update_ms_median"].get<double>() > 0);
        QVERIFY(j["render_ms_median"].get<double>() > 0);
        QVERIFY(j["render_ms_max"].get<double>() >= j["render_ms_median"].get<double>());
        r = run(gui_, {"--scene", "cloth", "--bench-view", "0"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("invalid --bench-view '0'"), qPrintable(r.err));
        r = run(gui_, {"--scene", "cloth", "--bench-view", "1", "--screenshot", "x.png"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("cannot be used with --screenshot"), qPrintable(r.err));
    }

    void cliKernelsNameTheInstructionSet() {
        // bench says which kernels ran; --kernels picks one the build has and the CPU runs;
        // a portable build (more than one in the choices) runs SSE2 on any x86-64.
        Run r = run(cli_, {"bench", "cloth", "--steps", "2", "--json"});
        QCOMPARE(r.exitCode, 0);
        nlohmann::json j = nlohmann::json::parse(r.out.toStdString());
        const std::string fastest = j["kernels"].get<std::string>();
        QVERIFY(!fastest.empty());
        QVERIFY(j["kernel_lanes"].get<int>() >= 2);
        r = run(cli_, {"bench", "cloth", "--steps", "2", "--kernels", "nonsense"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("--kernels is auto, ") && r.err.contains("not 'nonsense'"),
                 qPrintable(r.err));
        r = run(cli_, {"bench", "cloth", "--steps", "2", "--kernels", "auto", "--json"});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(nlohmann::json::parse(r.out.toStdString())["kernels"].get<std::string>(), fastest);
        {
            // PBDLAB_KERNELS naming nothing this CPU runs: a warning naming it, then the fastest.
            QProcess p;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("PBDLAB_KERNELS"), QStringLiteral("bogus"));
            p.setProcessEnvironment(env);
            p.start(cli_, {"bench", "cloth", "--steps", "2", "--json"});
            QVERIFY(p.waitForFinished(childTimeoutMs()));
            QCOMPARE(p.exitCode(), 0);
            const QString err = QString::fromUtf8(p.readAllStandardError());
            QVERIFY2(err.contains("PBDLAB_KERNELS=bogus is not an instruction set this CPU runs"),
                     qPrintable(err));
            QCOMPARE(nlohmann::json::parse(p.readAllStandardOutput().toStdString())["kernels"]
                         .get<std::string>(),
                     fastest);
        }
        if (fastest == "native") {
            QVERIFY(r.err.isEmpty());
            return; // a native build has one path
        }
        r = run(cli_, {"simulate", "cloth", "--steps", "2", "--kernels", "sse2"});
        QCOMPARE(r.exitCode, 0);
        r = run(cli_, {"bench", "cloth", "--steps", "2", "--kernels", "sse2", "--json"});
        QCOMPARE(r.exitCode, 0);
        j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j["kernels"].get<std::string>(), std::string("sse2"));
        QCOMPARE(j["kernel_lanes"].get<int>(), 2);
    }

    void cliAirOptionsReachTheSolver() {
        // Bench reports the air figures; with the optimisation every 2 steps, 10 timed steps
        // are 5 passes (the 10 warm-up steps come before).
        Run r =
            run(cli_, {"bench", "air-boxes", "--steps", "10", "--air-optimization", "2", "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        nlohmann::json j = nlohmann::json::parse(r.out.toStdString());
        QVERIFY(j["air_tets"].get<int>() > 2000);
        QVERIFY(j["ns_per_air_projection"].get<double>() > 0);
        QCOMPARE(j["air_optimisation_interval"].get<int>(), 2);
        QCOMPARE(j["optimisation_passes"].get<int>(), 5);
        QVERIFY(j["ms_per_optimisation_pass"].get<double>() > 0);
        // The air's parts of a step apart, and the whole run (warm-up included) beside the
        // median: 5 passes over 10 timed steps are half a pass per step.
        QVERIFY(j["ms_per_step_air_projection"].get<double>() >= 0);
        // The air's whole share (checks and projection) holds its projection, and is less
        // than the step it is part of.
        QVERIFY(j["ms_per_step_air"].get<double>() > 0);
        QVERIFY(j["optimisation_candidates"].get<std::size_t>() > 0);
        QVERIFY(j["optimisation_deferred"].get<std::size_t>() <
                j["optimisation_candidates"].get<std::size_t>());
        QVERIFY(j["ms_per_step_air"].get<double>() >=
                j["ms_per_step_air_projection"].get<double>());
        QVERIFY(j["ms_per_step_air"].get<double>() < j["ms_per_step_mean"].get<double>());
        QVERIFY(std::abs(j["ms_per_step_optimisation"].get<double>() -
                         0.5 * j["ms_per_optimisation_pass"].get<double>()) < 1e-9);
        QCOMPARE(j["warmup_steps"].get<int>(), 10);
        QVERIFY(j["ms_per_step_whole_run"].get<double>() > 0);
        QVERIFY(j["ms_per_step_max"].get<double>() >= j["ms_per_step"].get<double>());
        // Off: the figure comes from a pass on a copy.
        r = run(cli_, {"bench", "air-boxes", "--steps", "3", "--air-optimization", "0", "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j["optimisation_passes"].get<int>(), 0);
        QVERIFY(j["optimisation_measured_on_copy"].get<bool>());
        QVERIFY(j["ms_per_optimisation_pass"].get<double>() > 0);
        // Simulate takes the contact distance and friction and reports them.
        r = run(cli_, {"simulate", "air-boxes", "--steps", "60", "--air-distance", "0.004",
                       "--air-friction", "0.8", "--air-threshold", "0.2"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j["air"]["contact_distance"].get<double>(), 0.004);
        QCOMPARE(j["air"]["friction"].get<double>(), 0.8);
        QCOMPARE(j["air"]["optimisation_passes"].get<int>(), 60);
        QVERIFY(j["air"]["contacts"].get<int>() > 0); // the boxes have landed
        QCOMPARE(j["air"]["inverted_after"].get<int>(), 0);
        QCOMPARE(j["air"]["iterations"].get<int>(), -1); // as the constraints
        // The air off: the boxes fall through each other, the air is counted, not projected.
        r = run(cli_, {"simulate", "air-boxes", "--steps", "60", "--air-iterations", "0"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j["air"]["iterations"].get<int>(), 0);
        QCOMPARE(j["air"]["projections"].get<int>(), 0);
        QCOMPARE(j["air"]["optimisation_passes"].get<int>(), 0);
        QVERIFY(j["air"]["inverted_after"].get<int>() > 0);
        for (const char* bad : {"--air-optimization=-1", "--air-threshold=2", "--air-friction=-1",
                                "--air-iterations=-2"}) {
            const QStringList parts = QString(bad).split('=');
            r = run(cli_, {"simulate", "air-boxes", parts[0], parts[1]});
            QCOMPARE(r.exitCode, 2);
            QVERIFY2(r.err.contains(parts[0]), qPrintable(r.err));
        }
    }

    // The sweeps follow the scene's regions, not the threads, and the air is checked in parts
    // and projected in order: an air scene written after one and after two threads is the
    // same to the bit, its air statistics too (the timings aside).
    void simulateGivesTheSameBitsOnOneAndTwoThreads() {
        for (const char* scene : {"layered-cloth", "bremen"}) {
            nlohmann::json runs[2];
            for (const int threads : {1, 2}) {
                const QString out = dir_.filePath(QString("%1-%2.json").arg(scene).arg(threads));
                const auto r = run(cli_, {"simulate", scene, "--steps", "40", "--threads",
                                          QString::number(threads), "--out", out});
                QVERIFY2(r.exitCode == 0, qPrintable(r.err));
                QFile f(out);
                QVERIFY(f.open(QIODevice::ReadOnly));
                runs[threads - 1] = nlohmann::json::parse(f.readAll().toStdString());
            }
            QVERIFY(runs[0]["positions"].size() > 100);
            QVERIFY2(runs[0]["positions"] == runs[1]["positions"], scene);
            QVERIFY(runs[0]["air"]["projections"] == runs[1]["air"]["projections"]);
            QVERIFY(runs[0]["air"]["min_volume"] == runs[1]["air"]["min_volume"]);
        }
    }

    void simulateCountsCrossingTriangles() {
        // Two sheets that cross: every check finds the pairs, names the bodies; a cloth on its
        // own has none.
        const QString obj = dir_.filePath("cross.obj");
        QFile f(obj);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("o a\nv -1 0 -1\nv 1 0 -1\nv 1 0 1\nv -1 0 1\nf 1 2 3 4\n"
                "o b\nv -0.93 -0.47 0.031\nv 1.07 -0.47 0.031\nv 1.07 0.53 0.031\nv -0.93 0.53 "
                "0.031\nf 5 6 7 8\n");
        f.close();
        const QString project = dir_.filePath("cross.json");
        Run r = run(cli_, {"prepare", obj, "-o", project});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QString out = dir_.filePath("cross-run.json");
        r = run(cli_,
                {"simulate", project, "--steps", "3", "--intersections-every", "1", "--out", out});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QFile result(out);
        QVERIFY(result.open(QIODevice::ReadOnly));
        const nlohmann::json x =
            nlohmann::json::parse(result.readAll().toStdString())["intersections"];
        QCOMPARE(x["checked_steps"].get<int>(), 3);
        QVERIFY(x["last"].get<int>() >= 1 && x["max"].get<int>() >= x["last"].get<int>());
        QCOMPARE(x["first_step"].get<int>(), 1);
        QCOMPARE(x["pairs"][0]["body_a"].get<std::string>(), std::string("a"));
        QCOMPARE(x["pairs"][0]["body_b"].get<std::string>(), std::string("b"));
        // Continuous collision does not hold triangles that cross at a substep's start (they
        // are let go until they come apart), and says so.
        r = run(cli_, {"simulate", project, "--steps", "2", "--continuous-collision", "on", "--out",
                       out});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains("cross at the start: continuous collision does not hold them"),
                 qPrintable(r.err));
        {
            QFile crossed(out);
            QVERIFY(crossed.open(QIODevice::ReadOnly));
            const nlohmann::json c = nlohmann::json::parse(crossed.readAll().toStdString());
            QVERIFY(c["continuous_collision"]["crossing_at_start"].get<int>() >= 1);
            QVERIFY(c["continuous_collision"]["let_go"].get<int>() >= 1);
        }
        r = run(cli_, {"simulate", "cloth", "--steps", "5", "--out", out});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        result.close();
        QFile clean(out);
        QVERIFY(clean.open(QIODevice::ReadOnly));
        const nlohmann::json y =
            nlohmann::json::parse(clean.readAll().toStdString())["intersections"];
        QCOMPARE(y["last"].get<int>(), 0);
        QCOMPARE(y["checked_steps"].get<int>(), 1);
    }

    void continuousCollisionKeepsTheDrapeUncrossed() {
        // The drape (cloth on a sphere, self-collision) leaves triangles crossed after its fall;
        // with --continuous-collision on, none at any check, and the report says what it held.
        const QString out = dir_.filePath("drape-cc.json");
        auto crossings = [&](const QString& on, nlohmann::json& report) {
            Run r = run(cli_, {"simulate", "drape", "--steps", "200", "--threads", "2",
                               "--intersections-every", "20", "--continuous-collision", on, "--out",
                               out});
            if (r.exitCode != 0) {
                qWarning() << r.err;
                return -1;
            }
            QFile f(out);
            if (!f.open(QIODevice::ReadOnly)) {
                return -1;
            }
            report = nlohmann::json::parse(f.readAll().toStdString());
            return report["intersections"]["max"].get<int>();
        };
        nlohmann::json off, on;
        QVERIFY(crossings("off", off) > 0);
        QVERIFY(!off.contains("continuous_collision"));
        QVERIFY(!off["settings"]["continuous_collision"].get<bool>());
        QCOMPARE(crossings("on", on), 0);
        QVERIFY(on["settings"]["continuous_collision"].get<bool>());
        const nlohmann::json& c = on["continuous_collision"];
        QVERIFY(c["held"].get<int>() > 0);
        QVERIFY(c["held_most_in_a_step"].get<int>() <= c["held"].get<int>());
        QVERIFY(c["pairs_per_step"].get<double>() > 0);
        QCOMPARE(c["unresolved"].get<int>(), 0);
        QCOMPARE(c["crossing_at_start"].get<int>(), 0);
        QCOMPARE(c["let_go"].get<int>(), 0);
        QVERIFY(c["ms_per_step"].get<double>() > 0);
        Run bad = run(cli_, {"simulate", "drape", "--continuous-collision", "maybe"});
        QVERIFY(bad.exitCode != 0);
    }

    void selfCollisionAndItsThicknessAreOptions() {
        // The drape keeps 1 cm between its folds; told --self-collision off, nothing keeps its
        // folds apart and they cross more; --cloth-thickness sets what it keeps, and the report
        // says what ran.
        auto report = [&](const QStringList& extra) {
            return simulateReport(cli_,
                                  QStringList{"simulate", "drape", "--steps", "150", "--threads",
                                              "2", "--intersections-every", "150"} +
                                      extra,
                                  dir_.filePath("drape-sc.json"));
        };
        const nlohmann::json on = report({});
        const nlohmann::json off = report({"--self-collision", "off"});
        const nlohmann::json thin = report({"--cloth-thickness", "0.003"});
        QVERIFY(on.contains("settings") && off.contains("settings") && thin.contains("settings"));
        QVERIFY(on["settings"]["self_collision"].get<bool>());
        QCOMPARE(on["settings"]["cloth_thickness"].get<double>(), 0.01);
        QVERIFY(!off["settings"]["self_collision"].get<bool>());
        QCOMPARE(thin["settings"]["cloth_thickness"].get<double>(), 0.003);
        const int crossedOn = on["intersections"]["last"].get<int>();
        const int crossedOff = off["intersections"]["last"].get<int>();
        qInfo("drape after 150 steps: %d crossing pairs with self-collision, %d without", crossedOn,
              crossedOff);
        QVERIFY(crossedOff > crossedOn);
        QVERIFY(on["positions"] != thin["positions"]);
        QVERIFY(run(cli_, {"simulate", "drape", "--cloth-thickness", "-1"}).exitCode != 0);
        QVERIFY(run(cli_, {"simulate", "drape", "--self-collision", "maybe"}).exitCode != 0);
    }

    void theBendingModelIsAnOption() {
        // --bending-model gives every hinge that model (simulate, bench, prepare); the report
        // says which ran, and a scene without bending or an unknown model is refused.
        auto report = [&](const QStringList& extra) {
            return simulateReport(cli_, QStringList{"simulate", "cloth", "--steps", "40"} + extra,
                                  dir_.filePath("bending.json"));
        };
        const nlohmann::json bridson = report({});
        const nlohmann::json isometric = report({"--bending-model", "isometric"});
        QVERIFY(bridson.contains("settings") && isometric.contains("settings"));
        QCOMPARE(bridson["settings"]["bending_model"].get<std::string>(), std::string("bridson"));
        QCOMPARE(isometric["settings"]["bending_model"].get<std::string>(),
                 std::string("isometric"));
        // The same drop onto the same sphere: another model, another fold, close by.
        const auto& a = bridson["positions"];
        const auto& b = isometric["positions"];
        QCOMPARE(a.size(), b.size());
        double largest = 0;
        for (std::size_t i = 0; i < a.size(); ++i) {
            for (int k = 0; k < 3; ++k) {
                largest =
                    std::max(largest, std::abs(a[i][k].get<double>() - b[i][k].get<double>()));
            }
        }
        qInfo("cloth after 40 steps: the models' positions differ by %.1f mm at most",
              1e3 * largest);
        QVERIFY(largest > 0 && largest < 0.1);
        Run r = run(cli_, {"simulate", "rope", "--steps", "2", "--bending-model", "isometric"});
        QVERIFY(r.exitCode != 0);
        QVERIFY2(r.err.contains("'rope' has no bending constraints"), qPrintable(r.err));
        r = run(cli_, {"simulate", "cloth", "--steps", "2", "--bending-model", "quadratic"});
        QVERIFY(r.exitCode != 0);
        QVERIFY2(r.err.contains("quadratic"), qPrintable(r.err));
        r = run(cli_, {"bench", "cloth", "--steps", "3", "--bending-model", "isometric", "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(nlohmann::json::parse(r.out.toStdString())["bending_model"].get<std::string>(),
                 std::string("isometric"));
        // prepare: a sheet's default constraints with isometric bending.
        const QString obj = dir_.filePath("sheet-2x2.obj");
        QFile f(obj);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("v 0 0 0\nv 1 0 0\nv 2 0 0\nv 0 0 1\nv 1 0 1\nv 2 0 1\nv 0 0 2\nv 1 0 2\n"
                "v 2 0 2\nf 1 4 5 2\nf 2 5 6 3\nf 4 7 8 5\nf 5 8 9 6\n");
        f.close();
        const QString project = dir_.filePath("sheet-2x2.json");
        r = run(cli_,
                {"prepare", obj, "--constraints", "--bending-model", "isometric", "-o", project});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QFile p(project);
        QVERIFY(p.open(QIODevice::ReadOnly));
        const nlohmann::json j = nlohmann::json::parse(p.readAll().toStdString());
        const auto& bending = j["constraints"]["bending"];
        QCOMPARE(bending["model"].get<std::string>(), std::string("isometric"));
        QVERIFY(bending["particles"].size() >= 4 * 4); // 8 hinges of a 2x2 grid of quads
        QCOMPARE(bending["weight"].size(), std::size_t(3));
        QCOMPARE(bending["weight"][0].size() * 4, bending["particles"].size());
        r = run(cli_, {"simulate", project, "--steps", "10"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        r = run(cli_, {"info", project});
        QVERIFY2(r.out.contains("dihedral constraints (isometric)"), qPrintable(r.out));
        r = run(cli_, {"info", "cloth", "--json"});
        QCOMPARE(nlohmann::json::parse(r.out.toStdString())["bending_model"].get<std::string>(),
                 std::string("bridson"));
    }

    void charactersAreShownAndDriveTheRun() {
        const QString dancer = "/usr/share/assimp/models/X/BCN_Epileptic.X";
        Run r = run(cli_, {"character", dancer});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("58 nodes, 54 bones, 3 meshes, 5126 triangles") &&
                     r.out.contains("'Epileptisch' 3.3 s") && r.out.contains("mesh 'Legs'"),
                 qPrintable(r.out));
        r = run(cli_, {"character", dancer + ",scale=2", "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const nlohmann::json j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j["bones"].get<int>(), 54);
        QCOMPARE(j["clip"].get<std::string>(), std::string("Epileptisch"));
        const double height = j["bounds_at_start"]["max"][1].get<double>() -
                              j["bounds_at_start"]["min"][1].get<double>();
        QVERIFY2(std::abs(height - 2 * 1.8144) < 0.01, qPrintable(QString::number(height)));
        QVERIFY(j["fastest_skin_speed"].get<double>() > 1);
        // Problems name what is wrong, and what there is.
        r = run(cli_, {"character", dancer + ",clip=waltz"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("'Epileptisch'"), qPrintable(r.err));
        r = run(cli_, {"character", dancer + ",bounce=2"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("keys: clip, up, scale"), qPrintable(r.err));
        // The cloth over the dancing character (standing with its feet at y = 0, its clip at
        // half speed): the report names the character and where its clip is.
        const QString out = dir_.filePath("dancer-run.json");
        r = run(cli_, {"simulate", "cloth", "--steps", "120", "--character",
                       dancer + ",position=0 1.0244 0,friction=0.8,speed=0.5", "--out", out});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QFile result(out);
        QVERIFY(result.open(QIODevice::ReadOnly));
        const nlohmann::json report = nlohmann::json::parse(result.readAll().toStdString());
        const nlohmann::json& c = report["characters"][0];
        QCOMPARE(c["name"].get<std::string>(), std::string("BCN_Epileptic"));
        QCOMPARE(c["collider"].get<int>(), 0);
        QVERIFY(std::abs(c["clip_time"].get<double>() - 0.5 * report["time"].get<double>()) < 1e-9);
        QCOMPARE(c["start"].get<double>(), 0.0);
        QVERIFY(c["end"].is_null()); // the clip's own end
        QCOMPARE(report["colliders"][0]["shape"].get<std::string>(), std::string("mesh"));
        // Crossing triangles count the character's skin too: the dancer's chest through the
        // sheet, named; its own meshes overlapping at the waist and neck are not counted.
        r = run(cli_, {"simulate", "cloth", "--steps", "1", "--character",
                       dancer + ",position=0 2.2 0", "--out", out});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        result.close();
        QVERIFY(result.open(QIODevice::ReadOnly));
        const nlohmann::json crossed =
            nlohmann::json::parse(result.readAll().toStdString())["intersections"];
        QVERIFY(crossed["last"].get<int>() > 0);
        for (const auto& pair : crossed["pairs"]) {
            QCOMPARE(pair["body_a"].get<std::string>(), std::string("cloth"));
            QCOMPARE(pair["body_b"].get<std::string>(), std::string("BCN_Epileptic"));
        }
        // bench splits the skinning off: the dancer's 3,014 skin vertices, posed each step.
        r = run(cli_, {"bench", "cloth", "--steps", "5", "--json", "--character", dancer});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const nlohmann::json bench = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(bench["skin_vertices"].get<int>(), 3014);
        QVERIFY(bench["ms_per_step_skinning"].get<double>() > 0);
        QVERIFY(bench["ms_per_step_skinning"].get<double>() <=
                bench["ms_per_step_max"].get<double>());
        // Standing clear of it, none.
        r = run(cli_, {"simulate", "cloth", "--steps", "1", "--character", dancer, "--out", out});
        result.close();
        QVERIFY(result.open(QIODevice::ReadOnly));
        QCOMPARE(nlohmann::json::parse(result.readAll().toStdString())["intersections"]["last"]
                     .get<int>(),
                 0);
    }

    void simulateTracesEveryStepOfTheAir() {
        // --trace writes one CSV line per step; --out's air object sums the run up (issue 25:
        // the last step alone hid what happened on the way).
        const QString trace = dir_.filePath("air-boxes.csv");
        const QString out = dir_.filePath("air-boxes.json");
        Run r = run(cli_, {"simulate", "air-boxes", "--steps", "40", "--iterations", "2", "--trace",
                           trace, "--out", out});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QFile file(trace);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(file.readAll()).trimmed().split('\n');
        QCOMPARE(lines.size(), 41);
        const QStringList header = lines[0].split(',');
        QCOMPARE(header.size(), 19);
        QCOMPARE(header.mid(17), QStringList({"held", "touching"})); // continuous collision
        const int after = int(header.indexOf("air_inverted_after"));
        const int speed = int(header.indexOf("max_speed"));
        const int fastest = int(header.indexOf("fastest_particle"));
        const int selfContacts = int(header.indexOf("self_contacts"));
        QVERIFY(speed > 0 && fastest > 0 && selfContacts > 0);
        const int tets = int(header.indexOf("air_tets"));
        const int volume = int(header.indexOf("body_min_volume_ratio"));
        QVERIFY(after > 0 && tets > 0 && volume > 0);
        int most = 0, with = 0;
        double previous = 0;
        for (int step = 1; step <= 40; ++step) {
            const QStringList cells = lines[step].split(',');
            QCOMPARE(cells.size(), 19);
            QCOMPARE(cells[0].toInt(), step);
            QCOMPARE(cells[17].toInt(), 0); // continuous collision off: nothing held
            QCOMPARE(cells[18].toInt(), 0);
            // Falling boxes: a few m/s at most, by a particle of the scene; no cloth.
            QVERIFY(cells[speed].toDouble() > 0 && cells[speed].toDouble() < 5);
            QVERIFY(cells[fastest].toInt() >= 0);
            QCOMPARE(cells[selfContacts].toInt(), 0);
            QVERIFY(cells[1].toDouble() > previous); // time goes on
            previous = cells[1].toDouble();
            QVERIFY(cells[tets].toInt() > 2000);
            QVERIFY(cells[volume].toDouble() > 0.5 && cells[volume].toDouble() < 1.1);
            most = std::max(most, cells[after].toInt());
            with += cells[after].toInt() > 0;
        }
        QFile result(out);
        QVERIFY(result.open(QIODevice::ReadOnly));
        const nlohmann::json j = nlohmann::json::parse(result.readAll().toStdString());
        QCOMPARE(j["air"]["max_inverted_after"].get<int>(), most);
        QCOMPARE(j["air"]["steps_with_inverted"].get<int>(), with);
        QCOMPARE(j["air"]["max_particles_outside"].get<int>(), 0);
        QVERIFY(j["air"]["min_body_volume_ratio"].get<double>() > 0.5);
        // A trace that cannot be written is refused before the run.
        r = run(cli_, {"simulate", "air-boxes", "--steps", "1", "--trace",
                       dir_.filePath("no-such-folder/t.csv")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("no-such-folder"), qPrintable(r.err));
    }

    void simulateStopsAtTheStepThatDiverged() {
        // A step of 1e200 s sends the rope's particles to infinity in step 1: the run stops
        // there, says which step and which particle, and its trace keeps that one step (it
        // used to step the NaNs to the end and say so only then).
        const QString trace = dir_.filePath("diverged.csv");
        const Run r = run(cli_, {"simulate", "rope", "--dt", "1e200", "--steps", "20", "--trace",
                                 trace, "--out", dir_.filePath("diverged.json")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("diverged in step 1: particle") && r.err.contains("non-finite"),
                 qPrintable(r.err));
        QFile file(trace);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(file.readAll()).trimmed().split('\n').size(), 2);
    }

    void squashedFieldsMeasureAgainstTheShapeBeforeTheSquash() {
        // --squash-y flattens every body onto the floor at step 0 and the air brings the boxes
        // back; the fields compare with the boxes as they were, not as squashed (issue 25: every
        // volume ratio read 0 and every Green strain -0.5).
        Run r = run(cli_, {"simulate", "air-boxes", "--squash-y", "--air-optimization", "0",
                           "--steps", "400"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const nlohmann::json j = nlohmann::json::parse(r.out.toStdString());
        const auto ratios = j["fields"]["tet_volume_ratio"].get<std::vector<double>>();
        QCOMPARE(ratios.size(), std::size_t(240));
        double volume = 0;
        for (double v : ratios) {
            // 0.76-1.02 measured: every tet back near its rest volume, none read 0.
            QVERIFY2(v > 0.7 && v < 1.3, qPrintable(QString::number(v)));
            volume += v;
        }
        QVERIFY2(std::abs(volume / 240 - 1) < 0.02, qPrintable(QString::number(volume / 240)));
        for (const auto& e : j["fields"]["tet_green_strain"]) {
            for (double c : e.get<std::vector<double>>()) {
                QVERIFY2(std::abs(c) < 0.3, qPrintable(QString::number(c)));
            }
        }
    }

    void cliRigidScenesReportBodiesMomentumAndEnergy() {
        // The spinning top in zero gravity: momentum and energy are reported and kept.
        Run r = run(cli_, {"simulate", "spinning-top", "--steps", "240"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        nlohmann::json j = nlohmann::json::parse(r.out.toStdString());
        const nlohmann::json& rigid = j["rigid"];
        QCOMPARE(rigid["bodies"].size(), std::size_t(1));
        QCOMPARE(rigid["bodies"][0]["shapes"].size(), std::size_t(2));
        const auto L = rigid["angular_momentum"].get<std::vector<double>>();
        const auto bodyL = rigid["bodies"][0]["angular_momentum"].get<std::vector<double>>();
        QVERIFY(std::abs(L[0] - bodyL[0]) < 1e-12); // at rest at the origin's height: L only
        QVERIFY(std::abs(rigid["kinetic_energy"].get<double>() - 0.8513) < 1e-3);
        const auto q = rigid["bodies"][0]["orientation"].get<std::vector<double>>();
        QCOMPARE(q.size(), std::size_t(4));
        QVERIFY(std::abs(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] - 1) < 1e-12);

        // The stack with the options: warm starting off and shock propagation are applied and
        // reported; the stack still stands after a second.
        r = run(cli_,
                {"simulate", "stack", "--steps", "60", "--warm-start", "off", "--stabilisation",
                 "shock-propagation", "--rigid-iterations", "30", "--sleeping", "off"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j["rigid"]["settings"]["warm_start"].get<bool>(), false);
        QCOMPARE(j["rigid"]["settings"]["separate_push"].get<bool>(), true);
        QCOMPARE(j["rigid"]["settings"]["iterations"].get<int>(), 30);
        QCOMPARE(j["rigid"]["settings"]["stabilisation"].get<std::string>(),
                 std::string("shock-propagation"));
        QCOMPARE(j["rigid"]["bodies"].size(), std::size_t(11));
        QCOMPARE(j["rigid"]["contacts"].get<int>(), 40);
        QVERIFY(j["rigid"]["bodies"][10]["position"][1].get<double>() > 9.4);

        // The separate push is on by default (above) and can be turned off.
        r = run(cli_, {"simulate", "pyramid", "--steps", "2", "--separate-push", "off"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j["rigid"]["settings"]["separate_push"].get<bool>(), false);

        // Cloth on rigid bodies with SHAKE distances: applied and reported, with the momenta
        // of the whole system (bodies and particles).
        r = run(cli_,
                {"simulate", "cloth-on-rigid", "--steps", "5", "--exact-angular-momentum", "on"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        j = nlohmann::json::parse(r.out.toStdString());
        QVERIFY(j["settings"]["exact_angular_momentum"].get<bool>());
        const auto withParticles =
            j["rigid"]["linear_momentum_with_particles"].get<std::vector<double>>();
        const auto bodiesOnly = j["rigid"]["linear_momentum"].get<std::vector<double>>();
        QCOMPARE(withParticles.size(), std::size_t(3));
        QVERIFY(std::abs(withParticles[1] - bodiesOnly[1]) > 1e-6); // the falling cloth counts

        // Bench reports the rigid figures.
        r = run(cli_, {"bench", "pyramid", "--steps", "5", "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j["rigid_bodies"].get<int>(), 211);
        QVERIFY(j["rigid_contacts"].get<int>() >= 4 * 210);
        QVERIFY(j["ms_rigid_solve"].get<double>() > 0);
        // The solve by stage: each measured, together the solve less what lies between them
        // (the joints' rows, beginning the substeps).
        {
            double stages = 0;
            for (const char* stage : {"graph", "bodies", "batches", "substeps", "poses", "impulses",
                                      "velocities", "sleep"}) {
                const double ms = j["ms_rigid_stages"][stage].get<double>();
                QVERIFY2(ms >= 0, stage);
                stages += ms;
            }
            const double solve = j["ms_rigid_solve"].get<double>();
            QVERIFY(j["ms_rigid_stages"]["substeps"].get<double>() > 0);
            QVERIFY(j["ms_rigid_stages"]["batches"].get<double>() > 0);
            QVERIFY2(stages <= solve * 1.0001 && stages > 0.5 * solve,
                     qPrintable(QString("stages %1 ms, solve %2 ms").arg(stages).arg(solve)));
        }
        r = run(cli_, {"bench", "pyramid", "--steps", "3"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("rigid solve by stage (ms): contact graph "), qPrintable(r.out));
        // At rest, the pyramid's manifolds are carried with their bodies, not detected again.
        QVERIFY(j["rigid_refreshed_share"].get<double>() > 0.9);

        // The soft step: applied, reported, and the stack stands.
        r = run(cli_, {"simulate", "stack", "--steps", "60", "--rigid-substeps", "4",
                       "--rigid-iterations", "1", "--rigid-relax", "1", "--contact-hertz", "60",
                       "--sleeping", "off"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j["rigid"]["settings"]["substeps"].get<int>(), 4);
        QCOMPARE(j["rigid"]["settings"]["relax_iterations"].get<int>(), 1);
        QCOMPARE(j["rigid"]["settings"]["contact_hertz"].get<double>(), 60.0);
        QVERIFY(j["rigid"]["bodies"][10]["position"][1].get<double>() > 9.4);

        for (const char* bad :
             {"--warm-start=maybe", "--stabilisation=magic", "--rigid-iterations=0",
              "--exact-angular-momentum=yes", "--rigid-substeps=0", "--rigid-relax=-1",
              "--contact-hertz=fast", "--separate-push=maybe"}) {
            const QStringList parts = QString(bad).split('=');
            r = run(cli_, {"simulate", "stack", parts[0], parts[1]});
            QCOMPARE(r.exitCode, 2);
            QVERIFY2(r.err.contains(parts[0]), qPrintable(r.err));
        }
    }
};

int main(int argc, char** argv) {
    QGuiApplication app(argc, argv);
    TestCommandLine test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_commandline.moc"
