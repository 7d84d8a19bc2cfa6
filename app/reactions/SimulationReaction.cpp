#include "app/reactions/SimulationReaction.h"

#include "app/SceneDocument.h"
#include "app/SceneView.h"
#include "app/SimulationWorker.h"
#include "app/Workbench.h"
#include "widgets/VtkViewport.h"

#include <QAction>
#include <QDir>
#include <QEventLoop>
#include <QFileDialog>
#include <QMainWindow>
#include <QSettings>

namespace pbd {

SimulationReaction::SimulationReaction(Workbench& bench, QObject* parent)
    : QObject(parent)
    , bench_(bench) {
    SimulationWorker* worker = bench_.document->worker();
    play_ = new QAction(tr("&Play"), bench_.window);
    play_->setObjectName(QStringLiteral("actionPlay"));
    play_->setCheckable(true);
    play_->setShortcut(QKeySequence(Qt::Key_Space));
    connect(play_, &QAction::toggled, this, [this, worker](bool on) {
        if (on) {
            bench_.document->applySimulationSettings();
            worker->play();
        } else {
            worker->pause();
        }
    });
    connect(worker, &SimulationWorker::paused, play_, [this] { play_->setChecked(false); });
    connect(worker, &SimulationWorker::diverged, this, [this](const QString& message) {
        play_->setChecked(false);
        bench_.reportError(message);
    });
    connect(bench_.document, &SceneDocument::simulationRestarted, play_,
            [this] { play_->setChecked(false); });
    realTime_ = new QAction(tr("Real &Time"), bench_.window);
    realTime_->setObjectName(QStringLiteral("actionRealTime"));
    realTime_->setCheckable(true);
    realTime_->setChecked(true);
    realTime_->setToolTip(tr("Play at the speed of the clock, or as fast as the solver goes"));
    connect(realTime_, &QAction::toggled, worker, &SimulationWorker::setRealTime);
    auto* step = new QAction(tr("&Step"), bench_.window);
    step->setObjectName(QStringLiteral("actionStep"));
    step->setShortcut(QKeySequence(Qt::Key_Period));
    connect(step, &QAction::triggered, this, [this, worker] {
        bench_.document->applySimulationSettings();
        worker->step(1);
    });
    record_ = new QAction(tr("Record &Frames…"), bench_.window);
    record_->setObjectName(QStringLiteral("actionRecordFrames"));
    record_->setCheckable(true);
    record_->setToolTip(
        tr("Write every drawn frame as a PNG into a folder while the simulation runs"));
    connect(record_, &QAction::triggered, this, [this](bool on) {
        if (!on) {
            bench_.view->setFrameRecording(QString(), QSize());
            return;
        }
        const QString dir = QFileDialog::getExistingDirectory(
            bench_.window, tr("Record Frames Into"),
            bench_.lastDirectory.isEmpty() ? QDir::homePath() : bench_.lastDirectory);
        if (dir.isEmpty() ||
            !bench_.view->setFrameRecording(dir, bench_.viewport->size() *
                                                     bench_.window->devicePixelRatioF())) {
            record_->setChecked(false);
        }
    });
    connect(bench_.view, &SceneView::frameRecordingFailed, record_,
            [this] { record_->setChecked(false); });
    auto* reset = new QAction(tr("&Reset"), bench_.window);
    reset->setObjectName(QStringLiteral("actionResetSimulation"));
    reset->setShortcut(QKeySequence(Qt::Key_Home));
    connect(reset, &QAction::triggered, this, [this, worker] {
        play_->setChecked(false);
        worker->reset();
        bench_.report(Severity::Info, tr("Simulation reset to the loaded state"));
    });
    actions_ = {play_, realTime_, step, record_, reset};
}

bool SimulationReaction::simulateSteps(int steps, QString* error) {
    SimulationWorker* worker = bench_.document->worker();
    QString failure;
    QEventLoop loop;
    auto done = connect(worker, &SimulationWorker::paused, &loop, &QEventLoop::quit);
    auto failed = connect(worker, &SimulationWorker::diverged, &loop, [&](const QString& m) {
        failure = m;
        loop.quit();
    });
    bench_.document->applySimulationSettings();
    worker->step(steps);
    if (steps > 0) {
        loop.exec();
    }
    disconnect(done);
    disconnect(failed);
    bench_.view->showSnapshotNow();
    if (!failure.isEmpty()) {
        if (error) {
            *error = failure;
        }
        return false;
    }
    return true;
}

void SimulationReaction::restoreSettings(QSettings& settings) {
    realTime_->setChecked(settings.value(QStringLiteral("simulation/realTime"), true).toBool());
}

void SimulationReaction::saveSettings(QSettings& settings) const {
    settings.setValue(QStringLiteral("simulation/realTime"), realTime_->isChecked());
}

} // namespace pbd
