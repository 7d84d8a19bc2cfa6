// widgets: the Log, Scene and Properties docks, the Convergence and Air plots.

#include "core/scenes/SceneLibrary.h"
#include "widgets/AirPanel.h"
#include "widgets/ConvergencePanel.h"
#include "widgets/LogPanel.h"
#include "widgets/PropertiesPanel.h"
#include "widgets/SceneActors.h"
#include "widgets/SceneTreePanel.h"
#include "widgets/SolverSettingsPanel.h"

#include "GuiTestMain.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFontMetrics>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTreeWidget>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QValueAxis>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <thread>

using namespace pbd;

class TestPanels : public QObject {
    Q_OBJECT
private slots:
    void convergencePlotHasWholeIterationsAndDecades() {
        // Two iterations used to label the axis "1 1 1 1 2" and a narrow error range "1e+00"
        // alone: ticks are whole iterations, the error axis whole decades (at least one).
        ConvergencePanel panel;
        panel.resize(300, 220);
        panel.showErrors({0.5, 0.3});
        QVERIFY(panel.iterationAxis()->tickType() == QValueAxis::TicksDynamic);
        QCOMPARE(panel.iterationAxis()->tickInterval(), 1.0);
        QCOMPARE(panel.errorAxis()->min(), 0.1);
        QCOMPARE(panel.errorAxis()->max(), 1.0);
        panel.showErrors(std::vector<double>(40, 1e-3));
        QCOMPARE(panel.iterationAxis()->tickInterval(), 10.0);
        QCOMPARE(panel.iterationAxis()->max(), 40.0);
        QVERIFY(std::abs(panel.errorAxis()->min() - 1e-3) < 1e-18);
        QVERIFY(std::abs(panel.errorAxis()->max() - 1e-2) < 1e-17);
        std::vector<double> falling;
        for (int i = 0; i < 7; ++i) {
            falling.push_back(std::pow(10.0, -i));
        }
        panel.showErrors(falling);
        QCOMPARE(panel.iterationAxis()->tickInterval(), 2.0);
        QVERIFY(std::abs(panel.errorAxis()->min() - 1e-6) < 1e-20);
        QCOMPARE(panel.errorAxis()->max(), 1.0);
        // The title fits a 300-pixel dock.
        auto* view = panel.findChild<QChartView*>("convergenceView");
        QVERIFY(view != nullptr);
        QVERIFY(QFontMetrics(view->chart()->titleFont()).horizontalAdvance(view->chart()->title()) <
                260);
    }

    void airPlotShowsEveryStepAndKeepsSpikesWhenThinned() {
        AirPanel panel;
        panel.resize(320, 260);
        QCOMPARE(panel.invertedAfterSeries()->points().size(), 0);
        panel.append({{0.005, 3, 0, 0.2}, {0.010, 5, 1, 0.1}, {0.015, 2, 0, 0.15}});
        QCOMPARE(panel.sampleCount(), std::size_t(3));
        QCOMPARE(panel.invertedAfterSeries()->points().size(), 3);
        QCOMPARE(panel.invertedAfterSeries()->points()[1], QPointF(0.010, 1));
        QCOMPARE(panel.invertedBeforeSeries()->points()[1], QPointF(0.010, 5));
        QCOMPARE(panel.qualitySeries()->points()[1], QPointF(0.010, 0.1));
        QVERIFY(panel.countAxis()->max() >= 5);
        QVERIFY(panel.timeAxis()->max() >= 0.015 && panel.timeAxis()->max() <= 0.03);
        QVERIFY(panel.summary().contains("at most 1"));
        // A long run is drawn in buckets, each the most inverted and the worst quality of its
        // steps: a single step's spike survives the thinning.
        std::vector<AirSample> run;
        for (int k = 0; k < 20000; ++k) {
            AirSample s;
            s.time = 0.015 + 0.005 * (k + 1);
            s.worstQuality = k == 12345 ? -0.4 : 0.2;
            s.invertedAfter = k == 12345 ? 7 : 0;
            s.invertedBefore = s.invertedAfter;
            run.push_back(s);
        }
        panel.append(run);
        QCOMPARE(panel.sampleCount(), std::size_t(20003));
        const QList<QPointF> after = panel.invertedAfterSeries()->points();
        QVERIFY(after.size() <= 1500 && after.size() > 1000);
        double most = 0, worst = 1;
        for (const QPointF& p : after) {
            most = std::max(most, p.y());
        }
        for (const QPointF& p : panel.qualitySeries()->points()) {
            worst = std::min(worst, p.y());
        }
        QCOMPARE(most, 7.0);
        QCOMPARE(worst, -0.4);
        QVERIFY(panel.qualityAxis()->min() <= -0.4); // below zero: an inverted tet was worst
        QVERIFY(panel.summary().contains("at most 7"));
        // Unmeasured quality (NaN) draws no point.
        panel.clear();
        panel.append({{0.005, 0, 0, std::nan("")}});
        QCOMPARE(panel.qualitySeries()->points().size(), 0);
        QCOMPARE(panel.invertedAfterSeries()->points().size(), 1);
        QVERIFY(panel.summary().contains("none left inverted"));
    }

    void simulationDockShowsTheDefaultsBeforeAnyScene() {
        SolverSettingsPanel panel;
        const SolverSettings defaults;
        QCOMPARE(panel.findChild<QDoubleSpinBox*>("timeStep")->value(), 1000 * defaults.timeStep);
        QCOMPARE(panel.findChild<QSpinBox*>("iterations")->value(), defaults.iterations);
        QCOMPARE(panel.findChild<QSpinBox*>("substeps")->value(), defaults.substeps);
    }

    void scalarBarLabelsReadWellForAnyRange() {
        // Five labels over each range print five different strings, none longer than a bar
        // holds and none ending in a bare point: a field 2e-4 wide around 1, one 1e6 wide, one 1e-6
        // wide around 0, one of 1e-3 at 1000, and a plain 0..1.
        const double ranges[][2] = {
            {0.9999, 1.0001}, {0, 1e6}, {-5e-7, 5e-7}, {1000, 1000.001}, {0, 1}};
        for (const auto& r : ranges) {
            const std::string format = scalarBarLabelFormat(r[0], r[1], 5);
            std::set<std::string> labels;
            for (int i = 0; i < 5; ++i) {
                char text[64];
                std::snprintf(text, sizeof text, format.c_str(), r[0] + (r[1] - r[0]) * i / 4);
                labels.insert(text);
                QVERIFY2(std::strlen(text) <= 14, text);
                QVERIFY2(text[std::strlen(text) - 1] != '.', text); // "151", not "151."
            }
            QVERIFY2(
                labels.size() == 5,
                (format + " over " + std::to_string(r[0]) + ".." + std::to_string(r[1])).c_str());
        }
        QCOMPARE(scalarBarLabelFormat(0, 1, 5), std::string("%-.3g")); // the usual case
    }

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
        // Two bodies, the scene's constraints (self-collision, on), the colliders (none: the
        // item invites adding one; the ground is a rigid body), then the rigid bodies.
        QCOMPARE(tree.topLevelItem(0)->childCount(), 5);
        QCOMPARE(tree.topLevelItem(0)->child(2)->text(0), QString("constraints"));
        QCOMPARE(tree.selfCollisionItem()->text(1), QString("thickness 10 mm"));
        QCOMPARE(tree.topLevelItem(0)->child(3)->text(0), QString("colliders"));
        QVERIFY(tree.topLevelItem(0)->child(3)->text(1).startsWith("none"));
        QCOMPARE(tree.topLevelItem(0)->child(4)->text(0), QString("rigid bodies"));
        QCOMPARE(tree.topLevelItem(0)->child(4)->text(1), QString("3 bodies, 0 joints"));
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
        QCOMPARE(properties.value("Particles"), QString("2304"));
        QCOMPARE(properties.value("UVs"), QString("per triangle corner"));
        QCOMPARE(properties.value("Mass"), QString("0.8 kg")); // 2 m x 2 m x 0.2 kg/m^2
    }
};

PBDLAB_GUI_TEST_MAIN(TestPanels)
#include "tst_panels.moc"
