#include "app/reactions/ExportReaction.h"

#include "app/SceneDocument.h"
#include "app/Workbench.h"
#include "meshing/CookedAsset.h"
#include "meshing/Export.h"
#include "meshing/ProjectFile.h"

#include <QAction>
#include <QDir>
#include <QFileInfo>
#include <QMainWindow>

namespace pbd {

ExportReaction::ExportReaction(Workbench& bench, QObject* parent)
    : QObject(parent)
    , bench_(bench) {
    action_ = new QAction(tr("&Export…"), bench_.window);
    action_->setObjectName(QStringLiteral("actionExport"));
    action_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    connect(action_, &QAction::triggered, this, &ExportReaction::exportWithDialog);
}

bool ExportReaction::exportScene(const QString& path, QString* error) {
    ExportChoice choice;
    choice.path = path;
    choice.currentState = true;
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (path.endsWith(QLatin1String(".asset.json"), Qt::CaseInsensitive)) {
        choice.format = ExportFormat::CookedAsset;
    } else if (suffix == QLatin1String("json")) {
        choice.format = ExportFormat::Project;
    } else if (suffix == QLatin1String("vtu")) {
        choice.format = ExportFormat::Vtu;
    } else if (suffix == QLatin1String("msh")) {
        choice.format = ExportFormat::Msh;
    } else if (suffix == QLatin1String("node") || suffix == QLatin1String("ele") ||
               suffix == QLatin1String("face")) {
        choice.format = ExportFormat::Tetgen;
    } else {
        const QString message =
            tr("cannot export '%1': use .vtu, .msh, .node (TetGen), .asset.json (cooked asset) "
               "or .json (project)")
                .arg(QDir::toNativeSeparators(path));
        return bench_.fail(message, error);
    }
    return exportScene(choice, error);
}

bool ExportReaction::exportScene(const ExportChoice& choice, QString* error) {
    const std::string target = QDir::toNativeSeparators(choice.path).toStdString();
    const Scene scene =
        choice.currentState ? bench_.document->scene() : bench_.document->authoredScene();
    const int indent = choice.indented ? 1 : -1;
    Result<bool> written = Error{"unknown export format"};
    switch (choice.format) {
    case ExportFormat::CookedAsset:
        written = exportCookedAsset(scene, target, indent);
        break;
    case ExportFormat::Project:
        written = writeFileAtomically(target, projectToJson(scene, choice.indented ? 1 : -1));
        break;
    case ExportFormat::Vtu:
        written = exportVtu(scene, target);
        break;
    case ExportFormat::Msh:
        written = exportMsh(scene, target);
        break;
    case ExportFormat::Tetgen: {
        const QFileInfo info(choice.path);
        written =
            exportTetgen(scene, QDir::toNativeSeparators(info.absolutePath() + QLatin1Char('/') +
                                                         info.completeBaseName())
                                    .toStdString());
        break;
    }
    }
    if (!written) {
        const QString message = QString::fromStdString(written.error());
        return bench_.fail(message, error);
    }
    bench_.report(Severity::Info,
                  tr("Exported %1 (%2)")
                      .arg(QDir::toNativeSeparators(choice.path),
                           choice.currentState ? tr("current shape") : tr("authored scene")));
    bench_.showStatus(tr("Exported %1").arg(QFileInfo(choice.path).fileName()));
    return true;
}

void ExportReaction::exportWithDialog() {
    ExportChoice initial = bench_.persistSettings ? ExportDialog::loadChoice() : ExportChoice{};
    ExportDialog dialog(bench_.lastDirectory, QString::fromStdString(bench_.document->scene().name),
                        initial, bench_.window);
    if (dialog.exec() != QDialog::Accepted) {
        return;
    }
    const ExportChoice choice = dialog.choice();
    if (bench_.persistSettings) {
        ExportDialog::saveChoice(choice);
    }
    if (exportScene(choice)) {
        bench_.lastDirectory = QFileInfo(choice.path).absolutePath();
    }
}

} // namespace pbd
