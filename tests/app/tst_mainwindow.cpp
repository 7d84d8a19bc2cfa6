// app: the main window's actions, docks, file handling and persisted settings.

#include "app/MainWindow.h"
#include "meshing/ProjectFile.h"
#include "widgets/LogPanel.h"
#include "widgets/PropertiesPanel.h"
#include "widgets/SceneActors.h"
#include "widgets/SceneTreePanel.h"
#include "widgets/VtkViewport.h"

#include "../widgets/ImageChecks.h"
#include "GuiTestMain.h"

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QDeadlineTimer>
#include <QDialog>
#include <QDockWidget>
#include <QFile>
#include <QFileInfo>
#include <QImageReader>
#include <QMenu>
#include <QMessageBox>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>
#include <QUndoStack>

#include <vtkCamera.h>
#include <vtkProperty.h>

#include <memory>

using namespace pbd;
using namespace pbd::test;

class TestMainWindow : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;

    static QAction* action(const MainWindow& w, const char* name) {
        return w.findChild<QAction*>(name);
    }

    std::unique_ptr<MainWindow> shownWindow() {
        auto w = std::make_unique<MainWindow>();
        w->loadGeneratedScene("sample");
        w->show();
        if (!QTest::qWaitForWindowExposed(w.get())) {
            qFatal("main window was not exposed");
        }
        QDeadlineTimer deadline(10000);
        while (w->viewport()->framesRendered() == 0 && !deadline.hasExpired()) {
            QTest::qWait(10);
        }
        if (w->viewport()->framesRendered() == 0) {
            qFatal("the main window's view never rendered");
        }
        return w;
    }

    QString writeObj(const QString& name) {
        const QString path = dir_.filePath(name);
        QFile f(path);
        f.open(QIODevice::WriteOnly);
        f.write("o tri\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\nf 2 4 3\n");
        return path;
    }

private slots:
    void initTestCase() {
        QCoreApplication::setOrganizationName("PBD Lab Tests");
        QCoreApplication::setApplicationName("tst_app_mainwindow");
        QStandardPaths::setTestModeEnabled(true); // the autosave goes to a test location
        QSettings().clear();
    }

    void menusHaveTheActions() {
        MainWindow w;
        for (const char* name :
             {"actionOpen", "actionScreenshot", "actionQuit", "actionResetCamera",
              "actionWireframe", "actionShowAxes", "actionAbout", "actionClearRecent"}) {
            QVERIFY2(action(w, name) != nullptr, name);
        }
        QVERIFY(w.findChild<QMenu*>("menuRecent") != nullptr);
        QCOMPARE(action(w, "actionOpen")->shortcut(), QKeySequence(QKeySequence::Open));
        QCOMPARE(action(w, "actionWireframe")->shortcut(), QKeySequence(Qt::Key_W));
        for (const char* dock : {"sceneDock", "propertiesDock", "logDock"}) {
            QVERIFY2(w.findChild<QDockWidget*>(dock) != nullptr, dock);
        }
        const QStringList versions = MainWindow::libraryVersions().join('\n').split('\n');
        for (const char* lib : {"Qt 6.", "VTK 9.1", "CGAL 5.", "TetGen 1.5"}) {
            QVERIFY2(versions.filter(lib).size() == 1, lib);
        }
    }

    void sampleSceneFillsTreeAndProperties() {
        auto w = shownWindow();
        QCOMPARE(w->scene().bodies.size(), std::size_t(2));
        QCOMPARE(w->sceneTree()->topLevelItem(0)->childCount(), 2);
        QVERIFY(w->windowTitle().startsWith("sample"));
        w->sceneTree()->selectBody(0);
        QCOMPARE(w->properties()->value("Body"), QString("torus"));
        QCOMPARE(w->properties()->value("Tetrahedra"), QString("3456"));
        // Unticking a body in the tree hides it in the view.
        w->sceneTree()->bodyItem(1)->setCheckState(0, Qt::Unchecked);
        QVERIFY(!w->sceneActors()->bodyVisible(1));
        QCOMPARE(countPixels(w->viewport()->grabFramebuffer(), isClothOrange), 0);
        w->sceneTree()->bodyItem(1)->setCheckState(0, Qt::Checked);
        QVERIFY(countPixels(w->viewport()->grabFramebuffer(), isClothOrange) > 1000);
    }

    void viewActionsWork() {
        auto w = shownWindow();
        action(*w, "actionWireframe")->trigger();
        QCOMPARE(w->sceneActors()->actor(0)->GetProperty()->GetRepresentation(), VTK_WIREFRAME);
        action(*w, "actionWireframe")->trigger();
        QCOMPARE(w->sceneActors()->actor(0)->GetProperty()->GetRepresentation(), VTK_SURFACE);
        action(*w, "actionShowAxes")->trigger();
        QVERIFY(!w->viewport()->axesVisible());
        action(*w, "actionShowAxes")->trigger();
        QVERIFY(w->viewport()->axesVisible());
        double home[3];
        w->viewport()->camera()->GetPosition(home);
        w->viewport()->rotateCamera(45, 10);
        action(*w, "actionResetCamera")->trigger();
        double now[3];
        w->viewport()->camera()->GetPosition(now);
        QVERIFY(std::abs(now[0] - home[0]) + std::abs(now[1] - home[1]) +
                    std::abs(now[2] - home[2]) <
                1e-9);
    }

    void saveWritesTheAuthoredSceneAndClearsTheModifiedMark() {
        auto w = shownWindow();
        w->loadGeneratedScene("cloth");
        QVERIFY(!w->isModified());
        QVERIFY(w->windowTitle().contains("[*]"));
        const std::vector<Vec3> rest = w->scene().particles.positions;
        // Edits: a pin (undoable) and a solver setting.
        const Index pinned = 1234;
        QVERIFY(!w->isPinned(pinned));
        w->togglePin(pinned);
        QVERIFY(w->isModified());
        w->findChild<QSpinBox*>("iterations")->setValue(17);
        QVERIFY(w->simulateSteps(10)); // the view moves on; the save does not
        QTemporaryDir dir;
        const QString path = dir.filePath("cloth.json");
        QString error;
        QVERIFY2(w->saveProjectAs(path, &error), qPrintable(error));
        QVERIFY(!w->isModified());
        QCOMPARE(w->projectPath(), path);
        QCOMPARE(w->recentFiles().front(), path);
        // Undoing the pin is an edit again; redoing it returns to the saved state.
        w->undoStack()->undo();
        QVERIFY(w->isModified());
        w->undoStack()->redo();
        QVERIFY(!w->isModified());

        auto reopened = shownWindow();
        QVERIFY2(reopened->openFile(path, &error), qPrintable(error));
        QCOMPARE(reopened->projectPath(), path);
        QVERIFY(!reopened->isModified());
        const Scene& s = reopened->scene();
        QCOMPARE(s.particles.positions, rest);
        QVERIFY(reopened->isPinned(pinned));
        QCOMPARE(s.solver.iterations, 17);
        QCOMPARE(s.constraints.elementCount(), w->scene().constraints.elementCount());
        // Save writes to the same file again.
        reopened->findChild<QSpinBox*>("iterations")->setValue(9);
        QVERIFY(reopened->isModified());
        QVERIFY(reopened->save());
        QCOMPARE(loadProject(path.toStdString())->solver.iterations, 9);
    }

    void closingWithUnsavedEditsAsksAndAutosaveRecovers() {
        auto w = shownWindow();
        w->loadGeneratedScene("rope");
        w->togglePin(3);
        QVERIFY(w->isModified());
        // The autosave holds the edit, and recovery brings it back as unsaved work.
        QFile::remove(w->autosavePath());
        QVERIFY(w->autosave());
        QVERIFY(QFileInfo::exists(w->autosavePath()));
        auto other = shownWindow();
        QString error;
        QVERIFY2(other->recoverAutosave(&error), qPrintable(error));
        QVERIFY(other->isPinned(3));
        QVERIFY(other->isModified());
        QVERIFY(other->projectPath().isEmpty());
        // Closing asks; Cancel keeps the window, Discard closes it and drops the autosave.
        const auto answer = [](QMessageBox::StandardButton button) {
            QTimer::singleShot(0, [button] {
                auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
                QVERIFY(box != nullptr);
                QCOMPARE(box->objectName(), QString("unsavedChanges"));
                box->button(button)->click();
            });
        };
        answer(QMessageBox::Cancel);
        QVERIFY(!w->close());
        QVERIFY(w->isVisible());
        answer(QMessageBox::Discard);
        QVERIFY(w->close());
        QVERIFY(!QFileInfo::exists(w->autosavePath()));
        // Nothing to recover now: a clear message.
        QVERIFY(!other->recoverAutosave(&error));
        QVERIFY(error.contains("no autosave"));
    }

    void screenshotWritesAPngOfTheRequestedSize() {
        auto w = shownWindow();
        const QString path = dir_.filePath("shot.png");
        QString error;
        QVERIFY2(w->saveScreenshot(path, QSize(640, 360), &error), qPrintable(error));
        QImageReader reader(path);
        QCOMPARE(reader.format(), QByteArray("png"));
        const QImage image = reader.read();
        QCOMPARE(image.size(), QSize(640, 360));
        QVERIFY(countPixels(image, isClothOrange) > 640 * 360 / 50);
        QVERIFY(countPixels(image, isBodyBlue) > 640 * 360 / 100);

        const int errorsBefore = w->log()->count(Severity::Error);
        QVERIFY(
            !w->saveScreenshot(dir_.filePath("no/such/folder/shot.png"), QSize(64, 64), &error));
        QVERIFY(error.contains("does not exist"));
        QCOMPARE(w->log()->count(Severity::Error), errorsBefore + 1);
        QVERIFY(!w->saveScreenshot(path, QSize(0, 10), &error));
    }

    void openFileShowsMeshAndRemembersIt() {
        auto w = shownWindow();
        const QString path = writeObj("quad.obj");
        QString error;
        QVERIFY2(w->openFile(path, &error), qPrintable(error));
        QCOMPARE(w->scene().bodies.size(), std::size_t(1));
        QCOMPARE(w->scene().bodies[0].name, std::string("tri"));
        QCOMPARE(w->sceneActors()->surface(0)->GetNumberOfPolys(), vtkIdType(2));
        QCOMPARE(w->recentFiles().value(0), path);
        auto* recent = w->findChild<QMenu*>("menuRecent");
        QVERIFY(recent->actions().first()->text().contains("quad.obj"));

        // A missing file is reported and loses nothing: the scene on screen stays.
        QVERIFY(!w->openFile(dir_.filePath("missing.obj"), &error));
        QVERIFY(error.contains("missing.obj"));
        QCOMPARE(w->scene().bodies[0].name, std::string("tri"));
        QVERIFY(w->log()->severity(w->log()->messageCount() - 1) == Severity::Error);

        // Open Recent goes through the same path, after the Prepare dialog.
        QVERIFY(w->loadGeneratedScene("sample"));
        bool dialogShown = false;
        QTimer::singleShot(200, w.get(), [&] {
            auto* dialog = qobject_cast<QDialog*>(QApplication::activeModalWidget());
            dialogShown = dialog != nullptr && dialog->objectName() == "prepareDialog";
            if (dialog != nullptr) {
                dialog->accept();
            }
        });
        recent->actions().first()->trigger();
        QVERIFY(dialogShown);
        QCOMPARE(w->scene().bodies[0].name, std::string("tri"));
        // An open quad becomes cloth and gets default constraints, ready to play.
        QVERIFY(w->scene().bodies[0].kind == BodyKind::Cloth);
        QVERIFY(w->scene().constraints.elementCount() > 0);
        action(*w, "actionClearRecent")->trigger();
        QVERIFY(w->recentFiles().isEmpty());
    }

    void settingsRoundTrip() {
        QSettings().clear();
        QRect geometry;
        {
            auto w = shownWindow();
            w->resize(1100, 700);
            action(*w, "actionWireframe")->setChecked(true);
            action(*w, "actionShowAxes")->setChecked(false);
            w->findChild<QDockWidget*>("logDock")->hide();
            QVERIFY(w->openFile(writeObj("remembered.obj")));
            QTest::qWait(50);
            geometry = w->geometry();
            w->close(); // saves settings
        }
        MainWindow restored;
        restored.show();
        QVERIFY(QTest::qWaitForWindowExposed(&restored));
        QVERIFY(action(restored, "actionWireframe")->isChecked());
        QVERIFY(!action(restored, "actionShowAxes")->isChecked());
        QVERIFY(!restored.viewport()->axesVisible());
        QVERIFY(restored.findChild<QDockWidget*>("logDock")->isHidden());
        QVERIFY(!restored.findChild<QDockWidget*>("sceneDock")->isHidden());
        QCOMPARE(restored.size(), geometry.size());
        QCOMPARE(restored.recentFiles().value(0), dir_.filePath("remembered.obj"));
        restored.loadGeneratedScene("sample");
        QCOMPARE(restored.sceneActors()->actor(0)->GetProperty()->GetRepresentation(),
                 VTK_WIREFRAME);
    }

    void batchWindowsDoNotTouchSettings() {
        QSettings().clear();
        {
            MainWindow batch(/*persistSettings=*/false);
            action(batch, "actionWireframe")->setChecked(true);
            batch.close();
        }
        QVERIFY(!QSettings().contains("view/wireframe"));
    }
};

PBDLAB_GUI_TEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
