// meshing: every file of the fuzz targets' seed corpus (tests/fuzz/corpus, valid files) and every
// finding kept as a regression (tests/fuzz/regressions, files that once crashed, hung or tripped
// a sanitizer) through the paths the program takes: importMesh for meshes (the third-party
// readers contained), loadSceneFile for projects and assets, then the scene's checks and a few
// steps. Seeds must load; regressions must load or be refused with a message naming the file.

#include "core/solver/Solver.h"
#include "meshing/CharacterImport.h"
#include "meshing/MeshImport.h"
#include "meshing/ProjectFile.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace pbd;

class TestFuzzRegressions : public QObject {
    Q_OBJECT

    // The file under its target's extension (a finding is named crash-HASH).
    QString asTargetFile(const QString& path, const QString& target) {
        const QString suffix = QFileInfo(path).suffix();
        QString extension = "." + target;
        if (target == "gltf" || target == "character") {
            QFile f(path);
            f.open(QIODevice::ReadOnly);
            extension = f.peek(4) == "xof " ? ".x" : f.peek(1) == "{" ? ".gltf" : ".glb";
        } else if (target == "project" || target == "asset" || target == "scene") {
            extension = ".json";
        }
        const QString copy = dir_.filePath(QFileInfo(path).completeBaseName() + "-" +
                                           QString::number(++copies_) + extension);
        QFile::copy(path, copy);
        return copy;
    }

    // Loads one file as the program would; "" when it loaded, else the message.
    QString load(const QString& file, const QString& target) {
        if (target == "project" || target == "asset" || target == "scene") {
            Result<Scene> scene = loadSceneFile(file.toStdString());
            if (!scene) {
                return QString::fromStdString(scene.error());
            }
            if (validateScene(*scene).empty() && scene->particles.size() < 20000) {
                Solver solver(*scene);
                solver.step();
                solver.step();
            }
            return {};
        }
        if (target == "character") {
            Result<ImportedCharacter> c = importCharacter(file.toStdString());
            return c ? QString() : QString::fromStdString(c.error());
        }
        Result<ImportedMesh> mesh = importMesh(file.toStdString());
        return mesh ? QString() : QString::fromStdString(mesh.error());
    }

    void run(const QString& root, bool mustLoad) {
        const QStringList targets = {"ply",     "off",   "stl",   "obj",      "gltf",
                                     "project", "asset", "scene", "character"};
        int files = 0;
        for (const QString& target : targets) {
            QDirIterator it(root + "/" + target, QDir::Files);
            while (it.hasNext()) {
                const QString path = it.next();
                const QString file = asTargetFile(path, target);
                const QString error = load(file, target);
                ++files;
                if (mustLoad) {
                    QVERIFY2(error.isEmpty(), qPrintable(path + ": " + error));
                } else if (!error.isEmpty()) {
                    QVERIFY2(
                        error.contains(QFileInfo(file).fileName()) || error.contains("project") ||
                            error.contains("asset"),
                        qPrintable(path + ": a message that does not name the file: " + error));
                }
            }
        }
        qInfo("%s: %d files", qPrintable(QDir(root).dirName()), files);
        if (mustLoad) {
            QVERIFY(files >= 15);
        }
    }

    QTemporaryDir dir_;
    int copies_ = 0;

private slots:
    void seedCorpusLoads() { run(PBDLAB_SOURCE_DIR "/tests/fuzz/corpus", true); }
    void findingsLoadOrAreRefusedWithAMessage() {
        run(PBDLAB_SOURCE_DIR "/tests/fuzz/regressions", false);
    }
};

QTEST_APPLESS_MAIN(TestFuzzRegressions)
#include "tst_fuzz_regressions.moc"
