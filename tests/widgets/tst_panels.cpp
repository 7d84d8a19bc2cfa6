// widgets: the Log, Scene and Properties docks.

#include "core/scenes/SceneLibrary.h"
#include "widgets/LogPanel.h"
#include "widgets/PropertiesPanel.h"
#include "widgets/SceneTreePanel.h"

#include "GuiTestMain.h"

#include <QComboBox>
#include <QSignalSpy>
#include <QTreeWidget>

#include <thread>

using namespace pbd;

class TestPanels : public QObject {
    Q_OBJECT
private slots:
    void logCountsAndFiltersBySeverity() {
        LogPanel log;
        log.append(Severity::Info, "loaded");
        log.append(Severity::Warning, "2 degenerate triangles");
        log.append(Severity::Error, "TetGen failed");
        QCOMPARE(log.messageCount(), 3);
        QCOMPARE(log.count(Severity::Warning), 1);
        QCOMPARE(log.message(2), QString("TetGen failed"));
        QVERIFY(log.severity(1) == Severity::Warning);

        auto* list = log.findChild<QTreeWidget*>("logList");
        auto* filter = log.findChild<QComboBox*>("logFilter");
        QVERIFY(list && filter);
        filter->setCurrentIndex(2); // errors only
        QVERIFY(list->topLevelItem(0)->isHidden());
        QVERIFY(list->topLevelItem(1)->isHidden());
        QVERIFY(!list->topLevelItem(2)->isHidden());
        filter->setCurrentIndex(1);
        QVERIFY(!list->topLevelItem(1)->isHidden());
        log.clear();
        QCOMPARE(log.messageCount(), 0);
        QCOMPARE(log.count(Severity::Error), 0);
    }

    void logAcceptsMessagesFromOtherThreads() {
        LogPanel log;
        std::thread worker([&log] {
            for (int i = 0; i < 5; ++i) {
                log.append(Severity::Info, QString("step %1").arg(i));
            }
        });
        worker.join();
        QTRY_COMPARE(log.messageCount(), 5);
        QCOMPARE(log.message(4), QString("step 4"));
    }

    void sceneTreeListsBodiesAndTogglesVisibility() {
        Result<Scene> scene = makeScene("sample");
        QVERIFY(scene.ok());
        SceneTreePanel tree;
        tree.setScene(*scene);
        // Two bodies, the scene's constraints (cloth self-collision, off), then the colliders
        // (none yet: the item invites adding one).
        QCOMPARE(tree.topLevelItem(0)->childCount(), 4);
        QCOMPARE(tree.topLevelItem(0)->child(2)->text(0), QString("constraints"));
        QCOMPARE(tree.selfCollisionItem()->text(1), QString("off"));
        QCOMPARE(tree.topLevelItem(0)->child(3)->text(0), QString("colliders"));
        QVERIFY(tree.topLevelItem(0)->child(3)->text(1).startsWith("none"));
        QCOMPARE(tree.bodyItem(1)->text(0), QString("cloth"));
        QCOMPARE(tree.bodyItem(0)->child(2)->text(1), QString("3456"));
        QVERIFY(tree.bodyItem(1)->child(1)->text(1).contains("UVs"));

        QSignalSpy visibility(&tree, &SceneTreePanel::bodyVisibilityToggled);
        tree.bodyItem(1)->setCheckState(0, Qt::Unchecked);
        QCOMPARE(visibility.count(), 1);
        QCOMPARE(visibility[0][0].toInt(), 1);
        QCOMPARE(visibility[0][1].toBool(), false);

        QSignalSpy selected(&tree, &SceneTreePanel::bodySelected);
        tree.selectBody(0);
        QCOMPARE(selected.last()[0].toInt(), 0);
        tree.setCurrentItem(tree.bodyItem(1)->child(0)); // a body's child selects the body
        QCOMPARE(tree.selectedBody(), 1);
    }

    void propertiesShowTheSelection() {
        Result<Scene> scene = makeScene("sample");
        QVERIFY(scene.ok());
        PropertiesPanel properties;
        properties.showScene(*scene);
        QCOMPARE(properties.value("Bodies"), QString("2"));
        QCOMPARE(properties.value("Tetrahedra"), QString("3456"));
        properties.showBody(*scene, 1);
        QCOMPARE(properties.value("Body"), QString("cloth"));
        QCOMPARE(properties.value("Kind"), QString("cloth"));
        QCOMPARE(properties.value("Particles"), QString("1600"));
        QCOMPARE(properties.value("UVs"), QString("per triangle corner"));
        QCOMPARE(properties.value("Mass"), QString("0.512 kg")); // 1.6 m x 1.6 m x 0.2 kg/m^2
    }
};

PBDLAB_GUI_TEST_MAIN(TestPanels)
#include "tst_panels.moc"
