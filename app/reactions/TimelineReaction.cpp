#include "app/reactions/TimelineReaction.h"

#include "app/SceneDocument.h"
#include "app/SceneView.h"
#include "app/SimulationWorker.h"
#include "app/Workbench.h"
#include "widgets/TimelineBar.h"

#include <QAction>
#include <QCheckBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QEventLoop>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMainWindow>
#include <QProgressDialog>
#include <QPushButton>
#include <QSettings>
#include <QTimer>

namespace pbd {

TimelineReaction::TimelineReaction(Workbench& bench, QAction* play, QObject* parent)
    : QObject(parent)
    , bench_(bench)
    , play_(play) {
    SimulationWorker* worker = bench_.document->worker();
    const auto make = [this](const QString& text, const char* name, const QKeySequence& key,
                             const QString& tip) {
        auto* a = new QAction(text, bench_.window);
        a->setObjectName(QLatin1String(name));
        a->setShortcut(key);
        a->setToolTip(QStringLiteral("%1 (%2)").arg(tip, key.toString(QKeySequence::NativeText)));
        actions_ << a;
        return a;
    };
    QAction* start = make(tr("Jump to &Start"), "actionJumpToStart",
                          QKeySequence(Qt::SHIFT | Qt::Key_Left), tr("The first cached frame"));
    QAction* back = make(tr("Step &Back"), "actionStepBack", QKeySequence(Qt::Key_Left),
                         tr("The cached frame before this one"));
    QAction* forward = make(tr("Step &Forward"), "actionStepForward", QKeySequence(Qt::Key_Right),
                            tr("The next frame: from the cache, or computed"));
    QAction* end = make(tr("Jump to &End"), "actionJumpToEnd",
                        QKeySequence(Qt::SHIFT | Qt::Key_Right), tr("The last cached frame"));
    loop_ = new QAction(tr("&Loop Playback"), bench_.window);
    loop_->setObjectName(QStringLiteral("actionLoopPlayback"));
    loop_->setCheckable(true);
    loop_->setToolTip(tr("At the timeline's end frame, Play goes back to the first cached frame "
                         "and plays the cache again"));
    actions_ << loop_;
    start->setIcon(QIcon::fromTheme(QStringLiteral("media-skip-backward")));
    back->setIcon(QIcon::fromTheme(QStringLiteral("media-seek-backward")));
    forward->setIcon(QIcon::fromTheme(QStringLiteral("media-seek-forward")));
    end->setIcon(QIcon::fromTheme(QStringLiteral("media-skip-forward")));
    loop_->setIcon(QIcon::fromTheme(QStringLiteral("media-playlist-repeat")));
    for (QAction* a : {start, back, forward, end, loop_}) {
        if (a->icon().isNull()) {
            a->setIconText(a->text().remove(QLatin1Char('&')));
        }
    }

    connect(start, &QAction::triggered, this, [worker] {
        const auto s = worker->latest();
        worker->seek(s ? s->cacheFirst : 0);
    });
    connect(back, &QAction::triggered, this, [worker] {
        const auto s = worker->latest();
        if (s && s->steps > 0) {
            worker->seek(s->steps - 1);
        }
    });
    connect(forward, &QAction::triggered, this, [this, worker] {
        bench_.document->applySimulationSettings();
        worker->step(1);
    });
    connect(end, &QAction::triggered, this, [worker] {
        const auto s = worker->latest();
        if (s) {
            worker->seek(s->cacheLast);
        }
    });

    export_ = new QAction(tr("Export &Cache…"), bench_.window);
    export_->setObjectName(QStringLiteral("actionExportCache"));
    export_->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_E));
    export_->setToolTip(tr("Write the cached frames as a ParaView collection (.pvd), a point "
                           "cache (.pc2 and .obj) and an animated glTF file (.glb)"));
    connect(export_, &QAction::triggered, this, &TimelineReaction::exportWithDialog);

    bar_ = new TimelineBar({start, back, play_, forward, end, nullptr, loop_}, bench_.window);
    connect(bar_, &TimelineBar::frameRequested, worker,
            [worker](std::size_t f) { worker->seek(f); });
    connect(bench_.view, &SceneView::summaryChanged, this, &TimelineReaction::refresh);
    connect(worker, &SimulationWorker::message, this,
            [this](const QString& m) { bench_.report(Severity::Warning, m); });
}

void TimelineReaction::refresh() {
    SimulationWorker* worker = bench_.document->worker();
    const auto s = worker->latest();
    if (!s) {
        return;
    }
    bar_->setCurrent(s->steps, double(s->time));
    bar_->setCache(s->cacheFirst, s->cacheLast, s->cacheFrames, s->cacheBytes, s->cacheSpilled,
                   s->cacheDropped);
    if (loop_->isChecked() && play_->isChecked() && s->steps >= bar_->end() && s->cacheFrames > 0 &&
        s->cacheFirst < s->steps) {
        worker->seek(s->cacheFirst);
    }
}

bool TimelineReaction::showFrame(std::size_t step, QString* error) {
    SimulationWorker* worker = bench_.document->worker();
    QString failure;
    auto m =
        connect(worker, &SimulationWorker::message, this, [&](const QString& t) { failure = t; });
    QEventLoop loop;
    auto shown = connect(worker, &SimulationWorker::frameShown, &loop, &QEventLoop::quit);
    auto refused = connect(worker, &SimulationWorker::message, &loop, &QEventLoop::quit);
    worker->seek(step);
    loop.exec();
    disconnect(shown);
    disconnect(refused);
    disconnect(m);
    bench_.view->showSnapshotNow();
    refresh();
    if (!failure.isEmpty()) {
        return bench_.fail(failure, error);
    }
    return true;
}

bool TimelineReaction::exportCache(const CacheExportOptions& options, QString* error) {
    SimulationWorker* worker = bench_.document->worker();
    play_->setChecked(false);
    bool ok = false;
    QString text;
    QEventLoop loop;
    auto c = connect(worker, &SimulationWorker::exportFinished, &loop,
                     [&](bool success, const QString& t) {
                         ok = success;
                         text = t;
                         loop.quit();
                     });
    worker->exportCache(options);
    loop.exec();
    disconnect(c);
    if (!ok) {
        return bench_.fail(text, error);
    }
    bench_.report(Severity::Info, text);
    return true;
}

void TimelineReaction::exportWithDialog() {
    SimulationWorker* worker = bench_.document->worker();
    const auto s = worker->latest();
    if (!s || s->cacheFrames == 0) {
        bench_.reportError(tr("Nothing to export: the frame cache is empty (play the simulation "
                              "first)."));
        return;
    }
    QDialog dialog(bench_.window);
    dialog.setObjectName(QStringLiteral("exportCacheDialog"));
    dialog.setWindowTitle(tr("Export Cache"));
    auto* folder = new QLineEdit(&dialog);
    folder->setText(bench_.lastDirectory.isEmpty() ? QDir::homePath() : bench_.lastDirectory);
    auto* browse = new QPushButton(tr("Browse…"), &dialog);
    connect(browse, &QPushButton::clicked, &dialog, [&] {
        const QString dir =
            QFileDialog::getExistingDirectory(&dialog, tr("Export Cache Into"), folder->text());
        if (!dir.isEmpty()) {
            folder->setText(dir);
        }
    });
    auto* name = new QLineEdit(QString::fromStdString(bench_.document->scene().name), &dialog);
    auto* pvd = new QCheckBox(tr("ParaView collection (.pvd with a .vtu per frame and the "
                                 "fields)"),
                              &dialog);
    auto* pc2 = new QCheckBox(tr("Point cache (.pc2 with the rest mesh as .obj: Blender's Mesh "
                                 "Cache, Maya, 3ds Max)"),
                              &dialog);
    auto* glb =
        new QCheckBox(tr("Animated binary glTF (.glb: morph targets and rigid bodies)"), &dialog);
    QSettings settings;
    pvd->setChecked(settings.value(QStringLiteral("cache/exportPvd"), true).toBool());
    pc2->setChecked(settings.value(QStringLiteral("cache/exportPc2"), false).toBool());
    glb->setChecked(settings.value(QStringLiteral("cache/exportGlb"), false).toBool());
    auto* folderRow = new QHBoxLayout;
    folderRow->addWidget(folder);
    folderRow->addWidget(browse);
    auto* form = new QFormLayout(&dialog);
    form->addRow(tr("Folder"), folderRow);
    form->addRow(tr("Name"), name);
    form->addRow(tr("Formats"), pvd);
    form->addRow(QString(), pc2);
    form->addRow(QString(), glb);
    form->addRow(new QLabel(tr("%1 cached frames, steps %2-%3")
                                .arg(s->cacheFrames)
                                .arg(s->cacheFirst)
                                .arg(s->cacheLast),
                            &dialog));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    if (dialog.exec() != QDialog::Accepted) {
        return;
    }
    CacheExportOptions options;
    options.folder = folder->text().trimmed().toStdString();
    options.name = name->text().trimmed().toStdString();
    options.formats = (pvd->isChecked() ? kCachePvd : 0u) | (pc2->isChecked() ? kCachePc2 : 0u) |
                      (glb->isChecked() ? kCacheGlb : 0u);
    if (bench_.persistSettings) {
        settings.setValue(QStringLiteral("cache/exportPvd"), pvd->isChecked());
        settings.setValue(QStringLiteral("cache/exportPc2"), pc2->isChecked());
        settings.setValue(QStringLiteral("cache/exportGlb"), glb->isChecked());
    }
    bench_.lastDirectory = folder->text().trimmed();
    // Progress and cancel while the worker writes.
    QProgressDialog progress(tr("Exporting the frame cache…"), tr("Cancel"), 0, int(s->cacheFrames),
                             bench_.window);
    progress.setObjectName(QStringLiteral("exportCacheProgress"));
    progress.setWindowModality(Qt::WindowModal);
    progress.setMinimumDuration(300);
    QTimer poll;
    connect(&poll, &QTimer::timeout, &progress, [&] {
        const auto [done, total] = worker->exportProgress();
        if (total > 0) {
            progress.setMaximum(total);
        }
        progress.setValue(done);
    });
    connect(&progress, &QProgressDialog::canceled, worker, &SimulationWorker::cancelExport);
    poll.start(50);
    exportCache(options);
    poll.stop();
    progress.reset();
}

void TimelineReaction::restoreSettings(QSettings& settings) {
    loop_->setChecked(settings.value(QStringLiteral("timeline/loop"), false).toBool());
    bar_->setEnd(
        std::size_t(std::max(1, settings.value(QStringLiteral("timeline/end"), 250).toInt())));
}

void TimelineReaction::saveSettings(QSettings& settings) const {
    settings.setValue(QStringLiteral("timeline/loop"), loop_->isChecked());
    settings.setValue(QStringLiteral("timeline/end"), qulonglong(bar_->end()));
}

} // namespace pbd
