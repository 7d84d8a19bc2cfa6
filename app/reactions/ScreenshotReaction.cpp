#include "app/reactions/ScreenshotReaction.h"

#include "app/SceneDocument.h"
#include "app/SceneView.h"
#include "app/Workbench.h"
#include "widgets/ScreenshotDialog.h"
#include "widgets/VtkViewport.h"

#include <QAction>
#include <QDir>
#include <QMainWindow>
#include <QSettings>
#include <QStandardPaths>

namespace pbd {

ScreenshotReaction::ScreenshotReaction(Workbench& bench, QObject* parent)
    : QObject(parent)
    , bench_(bench) {
    action_ = new QAction(tr("Save &Screenshot…"), bench_.window);
    action_->setObjectName(QStringLiteral("actionScreenshot"));
    action_->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_S));
    connect(action_, &QAction::triggered, this, &ScreenshotReaction::screenshotWithDialog);
}

void ScreenshotReaction::screenshotWithDialog() {
    const qreal dpr = bench_.viewport->devicePixelRatioF();
    const QSize viewSize(int(bench_.viewport->width() * dpr), int(bench_.viewport->height() * dpr));
    QString suggestion = lastScreenshot_;
    if (suggestion.isEmpty()) {
        suggestion = QDir(QStandardPaths::writableLocation(QStandardPaths::PicturesLocation))
                         .filePath(QString::fromStdString(bench_.document->scene().name) +
                                   QStringLiteral(".png"));
    }
    ScreenshotDialog dialog(suggestion, viewSize, bench_.window);
    if (dialog.exec() != QDialog::Accepted) {
        return;
    }
    if (bench_.view->saveScreenshot(dialog.path(), dialog.imageSize())) {
        lastScreenshot_ = dialog.path();
        if (bench_.persistSettings) {
            QSettings settings;
            saveSettings(settings);
        }
    }
}

void ScreenshotReaction::restoreSettings(QSettings& settings) {
    lastScreenshot_ = settings.value(QStringLiteral("files/lastScreenshot")).toString();
}

void ScreenshotReaction::saveSettings(QSettings& settings) const {
    settings.setValue(QStringLiteral("files/lastScreenshot"), lastScreenshot_);
}

} // namespace pbd
