// app: the Python dock and File ▸ Run Script…: `scene` is the open document, changes made
// from Python are undo steps, code runs off the GUI thread (the window keeps serving events
// while a script sleeps), Stop interrupts, errors and output reach the dock, history persists.

#include "app/MainWindow.h"
#include "app/PythonConsole.h"
#include "app/SceneDocument.h"
#include "app/reactions/PythonReaction.h"
#include "widgets/PythonConsolePanel.h"

#include "GuiTestMain.h"

#include <QAction>
#include <QDeadlineTimer>
#include <QDockWidget>
#include <QFile>
#include <QLineEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QUndoStack>

using namespace pbd;

class TestPython : public QObject {
    Q_OBJECT

    std::unique_ptr<MainWindow> window(const char* scene) {
        auto w = std::make_unique<MainWindow>(false);
        if (!w->loadGeneratedScene(scene)) {
            qFatal("scene did not load");
        }
        w->resize(800, 500);
        w->show();
        if (!QTest::qWaitForWindowExposed(w.get())) {
            qFatal("main window was not exposed");
        }
        return w;
    }

    static PythonConsolePanel* panel(MainWindow& w) { return w.findChild<PythonConsolePanel*>(); }

    // Types a line into the dock as a user would and waits until it has run.
    static bool type(MainWindow& w, const QString& line, int ms = 60000) {
        PythonConsole* console = w.python()->console();
        QSignalSpy done(console, &PythonConsole::finished);
        QLineEdit* input = panel(w)->input();
        input->setFocus();
        input->setText(line);
        QTest::keyClick(input, Qt::Key_Return);
        return !done.isEmpty() || done.wait(ms);
    }

private slots:
    void theSceneIsTheDocumentAndChangesAreUndoSteps() {
        auto w = window("cloth");
        QVERIFY(type(*w, "print('name:', scene.name, scene.settings['iterations'])"));
        QTRY_VERIFY(panel(*w)->text().contains("name: cloth 5"));
        const int undoBefore = w->undoStack()->count();
        QVERIFY(type(*w, "scene.set(iterations=7, dt=0.004)"));
        QTRY_COMPARE(w->scene().solver.iterations, 7);
        QCOMPARE(w->scene().solver.timeStep, 0.004);
        QCOMPARE(w->undoStack()->count(), undoBefore + 1); // one step for both settings
        QVERIFY(type(*w, "scene.edit_group('cloth stretch:compliance=1e-4')"));
        QTRY_COMPARE(w->scene().constraintGroups[0].material[0], 1e-4);
        w->undoStack()->undo();
        QCOMPARE(w->scene().constraintGroups[0].material[0], 0.0);
        w->undoStack()->undo();
        QCOMPARE(w->scene().solver.iterations, 5);
        // The console's own undo is the window's.
        QVERIFY(type(*w, "scene.redo()"));
        QCOMPARE(w->scene().solver.iterations, 7);
        // The bending model, one undo step too.
        QVERIFY(type(*w, "scene.bending_model = 'isometric'; print('model', scene.bending_model)"));
        QTRY_VERIFY(panel(*w)->text().contains("model isometric"));
        QVERIFY(w->scene().constraints.bending.model == BendingModel::Isometric);
        w->undoStack()->undo();
        QVERIFY(w->scene().constraints.bending.model == BendingModel::Bridson);
    }

    void errorsAndStatementsOverSeveralLines() {
        auto w = window("rope");
        QVERIFY(type(*w, "1/0"));
        QTRY_VERIFY(panel(*w)->text().contains("ZeroDivisionError"));
        QVERIFY(type(*w, "scene.set(itterations=3)"));
        QTRY_VERIFY(panel(*w)->text().contains("unknown setting 'itterations'"));
        QVERIFY(type(*w, "scene.edit_group('nope:compliance=1')"));
        QTRY_VERIFY(panel(*w)->text().contains("no constraint group"));
        QVERIFY(type(*w, "scene.bending_model = 'isometric'"));
        QTRY_VERIFY(panel(*w)->text().contains("no bending constraints"));
        QVERIFY(type(*w, "for i in range(3):"));
        QVERIFY(type(*w, "    print('line', i * i)"));
        QVERIFY(!panel(*w)->text().contains("line 4"));
        QVERIFY(type(*w, ""));
        QTRY_VERIFY(panel(*w)->text().contains("line 4"));
        QVERIFY(type(*w, "exit()"));
        QTRY_VERIFY(panel(*w)->text().contains("do not close the window"));
        QVERIFY(w->isVisible());
    }

    void stepsReadTheLatestStateAndTheModuleIsThere() {
        auto w = window("rope");
        QVERIFY(type(*w, "y0 = scene.positions[:, 1].mean(); n = scene.step(30); "
                         "print('steps', n, 'fell', scene.positions[:, 1].mean() < y0)"));
        QTRY_VERIFY(panel(*w)->text().contains("steps 30 fell True"));
        QVERIFY(type(*w, "print('module', pbdlab.generate('rope').particle_count)"));
        QTRY_VERIFY2(panel(*w)->text().contains("module 30"), qPrintable(panel(*w)->text()));
    }

    void aScriptRunsOffTheGuiThreadAndStopInterruptsIt() {
        auto w = window("rope");
        QTemporaryDir dir;
        const QString path = dir.filePath("slow.py");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("import time\n"
                "print('started', scene.name)\n"
                "scene.set(iterations=9)\n"
                "for i in range(600):\n"
                "    time.sleep(0.01)\n"
                "print('never printed')\n");
        f.close();
        int ticks = 0;
        QTimer timer;
        connect(&timer, &QTimer::timeout, [&] { ++ticks; });
        timer.start(10);
        PythonConsole* console = w->python()->console();
        QSignalSpy done(console, &PythonConsole::finished);
        w->python()->runScript(path);
        QTRY_VERIFY(panel(*w)->text().contains("started rope"));
        QTRY_COMPARE(w->scene().solver.iterations, 9); // one undo step, made while it runs
        QTest::qWait(300);
        QVERIFY(console->busy());
        QVERIFY2(ticks > 10, qPrintable(QString::number(ticks))); // the GUI thread served events
        console->interrupt();
        QVERIFY(done.wait(5000));
        QCOMPARE(done.takeFirst().at(0).toBool(), false);
        QTRY_VERIFY(panel(*w)->text().contains("KeyboardInterrupt"));
        QVERIFY(!panel(*w)->text().contains("never printed"));
        QVERIFY(!console->busy());
        // Variables a script leaves are there for the next line.
        QVERIFY2(type(*w, "print('i was', i)"), qPrintable(panel(*w)->text()));
        QTRY_VERIFY(panel(*w)->text().contains("i was"));
    }

    void closingTheWindowWhileAScriptWaitsEndsIt() {
        auto w = window("rope");
        QVERIFY(type(*w, "x = 1"));
        PythonConsole* console = w->python()->console();
        console->submit("import time\nwhile True: time.sleep(0.01)");
        console->submit("while True:\n    scene.name");
        QTest::qWait(200);
        w.reset(); // must not hang or crash
        QVERIFY(true);
    }

    void historyWalksAndPersists() {
        auto w = window("rope");
        QVERIFY(type(*w, "a = 1"));
        QVERIFY(type(*w, "b = 2"));
        QLineEdit* input = panel(*w)->input();
        QTest::keyClick(input, Qt::Key_Up);
        QCOMPARE(input->text(), QString("b = 2"));
        QTest::keyClick(input, Qt::Key_Up);
        QCOMPARE(input->text(), QString("a = 1"));
        QTest::keyClick(input, Qt::Key_Down);
        QTest::keyClick(input, Qt::Key_Down);
        QCOMPARE(input->text(), QString());
        QSettings settings;
        w->python()->saveSettings(settings);
        auto again = window("rope");
        again->python()->restoreSettings(settings);
        QCOMPARE(panel(*again)->history().mid(panel(*again)->history().size() - 2),
                 QStringList({"a = 1", "b = 2"}));
        settings.remove("python/history");
    }

    void theMenuAndTheDock() {
        auto w = window("rope");
        auto* run = w->findChild<QAction*>("actionRunScript");
        QVERIFY(run && !run->shortcut().isEmpty());
        auto* dock = w->findChild<QDockWidget*>("pythonDock");
        QVERIFY(dock);
        QVERIFY(!w->python()->console()->started()); // Python starts when first used
    }
};

PBDLAB_GUI_TEST_MAIN(TestPython)
#include "tst_python.moc"
