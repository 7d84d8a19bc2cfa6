#include "app/reactions/SaveReaction.h"

#include "app/SceneDocument.h"
#include "app/Workbench.h"
#include "meshing/ProjectFile.h"

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMainWindow>
#include <QMessageBox>
#include <QStandardPaths>
#include <QTimer>

namespace pbd {

SaveReaction::SaveReaction(Workbench& bench, QObject* parent)
    : QObject(parent)
    , bench_(bench) {
    auto* save = new QAction(tr("&Save"), bench_.window);
    connect(save, &QAction::triggered, this, [this] { this->save(); });
    save->setObjectName(QStringLiteral("actionSave"));
    save->setShortcut(QKeySequence::Save);
    auto* saveAs = new QAction(tr("Save &As…"), bench_.window);
    connect(saveAs, &QAction::triggered, this, &SaveReaction::saveAsWithDialog);
    saveAs->setObjectName(QStringLiteral("actionSaveAs"));
    saveAs->setShortcut(QKeySequence::SaveAs);
    actions_ = {save, saveAs};
    if (bench_.persistSettings) {
        autosaveTimer_ = new QTimer(this);
        autosaveTimer_->setObjectName(QStringLiteral("autosaveTimer"));
        connect(autosaveTimer_, &QTimer::timeout, this, &SaveReaction::autosave);
        setAutosaveMinutes(2);
    }
}

void SaveReaction::setAutosaveMinutes(int minutes) {
    if (autosaveTimer_ == nullptr) {
        return;
    }
    autosaveTimer_->stop();
    if (minutes > 0) {
        autosaveTimer_->setInterval(minutes * 60 * 1000);
        autosaveTimer_->start();
    }
}

int SaveReaction::autosaveMinutes() const {
    return autosaveTimer_ != nullptr && autosaveTimer_->isActive()
               ? autosaveTimer_->interval() / 60000
               : 0;
}

bool SaveReaction::saveProjectAs(const QString& path, QString* error) {
    const Result<bool> written =
        saveProject(bench_.document->authoredScene(), QDir::toNativeSeparators(path).toStdString());
    if (!written) {
        return bench_.fail(QString::fromStdString(written.error()), error);
    }
    bench_.document->setProjectPath(path);
    bench_.document->markSaved();
    QFile::remove(autosavePath());
    emit saved(path);
    bench_.report(Severity::Info, tr("Saved %1").arg(QDir::toNativeSeparators(path)));
    return true;
}

bool SaveReaction::save() {
    if (bench_.document->projectPath().isEmpty()) {
        saveAsWithDialog();
        return !bench_.document->isModified() && !bench_.document->projectPath().isEmpty();
    }
    return saveProjectAs(bench_.document->projectPath());
}

void SaveReaction::saveAsWithDialog() {
    QString suggestion = bench_.document->projectPath();
    if (suggestion.isEmpty()) {
        suggestion = QDir(bench_.lastDirectory)
                         .filePath(QString::fromStdString(bench_.document->scene().name) +
                                   QStringLiteral(".json"));
    }
    QString path = QFileDialog::getSaveFileName(bench_.window, tr("Save Project"), suggestion,
                                                tr("PBD Lab projects (*.json)"));
    if (path.isEmpty()) {
        return;
    }
    if (!path.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive)) {
        path += QStringLiteral(".json");
    }
    bench_.lastDirectory = QFileInfo(path).absolutePath();
    saveProjectAs(path);
}

bool SaveReaction::maybeSave() {
    if (!bench_.document->isModified()) {
        return true;
    }
    const QString project = bench_.document->projectPath();
    QMessageBox box(QMessageBox::Warning, tr("Unsaved Changes"),
                    tr("Save the changes to %1?")
                        .arg(project.isEmpty()
                                 ? QString::fromStdString(bench_.document->scene().name)
                                 : QFileInfo(project).fileName()),
                    QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, bench_.window);
    box.setObjectName(QStringLiteral("unsavedChanges"));
    box.setDefaultButton(QMessageBox::Save);
    switch (box.exec()) {
    case QMessageBox::Save:
        return save();
    case QMessageBox::Discard:
        return true;
    default:
        return false;
    }
}

QString SaveReaction::autosavePath() {
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation);
    return QDir(dir).filePath(QStringLiteral("autosave.pbdlab.json"));
}

bool SaveReaction::autosave() {
    if (!bench_.document->isModified()) {
        return false;
    }
    QDir().mkpath(QFileInfo(autosavePath()).absolutePath());
    const Result<bool> written = saveProject(
        bench_.document->authoredScene(), QDir::toNativeSeparators(autosavePath()).toStdString());
    if (!written) {
        bench_.report(Severity::Warning,
                      tr("Autosave failed: %1").arg(QString::fromStdString(written.error())));
        return false;
    }
    return true;
}

} // namespace pbd
