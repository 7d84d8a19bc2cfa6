#include "app/reactions/RepairReaction.h"

#include "app/SceneDocument.h"
#include "app/SceneView.h"
#include "app/Workbench.h"
#include "app/reactions/OpenReaction.h"
#include "widgets/PrepareDialog.h"
#include "widgets/ProblemsPanel.h"
#include "widgets/ProgressTask.h"
#include "widgets/RepairDialog.h"
#include "widgets/SceneActors.h"
#include "widgets/VtkViewport.h"

#include <QAction>
#include <QMainWindow>
#include <QMessageBox>

namespace pbd {

namespace {

// "12 problems (3 hole, 9 self-intersection)" or "no problems".
QString countProblems(const std::vector<SurfaceProblem>& problems) {
    if (problems.empty()) {
        return RepairReaction::tr("no problems");
    }
    return RepairReaction::tr("%1 problem(s) (%2)")
        .arg(problems.size())
        .arg(countProblemKinds(problems));
}

std::vector<std::string> bodyNames(const Scene& scene) {
    std::vector<std::string> names;
    for (const Body& b : scene.bodies) {
        names.push_back(b.name);
    }
    return names;
}

} // namespace

RepairReaction::RepairReaction(Workbench& bench, OpenReaction* open, QObject* parent)
    : QObject(parent)
    , bench_(bench)
    , open_(open) {
    action_ = new QAction(tr("&Repair Surfaces…"), bench_.window);
    action_->setObjectName(QStringLiteral("actionRepair"));
    action_->setShortcut(QKeySequence(tr("Ctrl+Shift+R")));
    action_->setToolTip(tr("Mend the open surfaces with the repair ladder: stitch, degenerate "
                           "triangles, non-manifold vertices, orientation, small holes, "
                           "self-intersections, alpha wrap"));
    connect(action_, &QAction::triggered, this, &RepairReaction::repairInteractive);
    prepare_ = new QAction(tr("&Prepare the Surfaces…"), bench_.window);
    prepare_->setObjectName(QStringLiteral("actionPrepareSurfaces"));
    prepare_->setToolTip(tr("Tetrahedralize, tessellate the air and add constraints to the open "
                            "surfaces (the Prepare dialog), for example after a repair"));
    connect(prepare_, &QAction::triggered, this, &RepairReaction::prepareInteractive);
    connect(bench_.problems, &ProblemsPanel::problemSelected, this, &RepairReaction::selectProblem);
    connect(bench_.problems, &ProblemsPanel::repairRequested, this,
            &RepairReaction::repairInteractive);
    // A scene of its own (opened, generated) has none of these problems; an undo or redo of a
    // repair brings surfaces back whose problems are found again.
    connect(bench_.document, &SceneDocument::sceneLoaded, this, [this](bool keepHistory) {
        if (repairing_) {
            return;
        }
        if (keepHistory && tracking_) {
            findProblems();
        } else {
            tracking_ = false;
            showProblems({});
        }
    });
}

void RepairReaction::showProblems(std::vector<SurfaceProblem> problems) {
    problems_ = std::move(problems);
    tracking_ = tracking_ || !problems_.empty();
    const Scene& scene = bench_.document->scene();
    bench_.problems->setProblems(problems_, bodyNames(scene));
    bench_.view->actors()->setProblems(scene, problems_);
    bench_.viewport->update();
}

void RepairReaction::findProblems() {
    const Scene& scene = bench_.document->scene();
    showProblems(locateSurfaceProblems(scene, checkSurfaces(scene)));
}

void RepairReaction::selectProblem(int index) {
    const Scene& scene = bench_.document->scene();
    bench_.view->actors()->setProblems(scene, problems_, index);
    if (index >= 0 && std::size_t(index) < problems_.size()) {
        if (bench_.problems->selectedProblem() != index) {
            bench_.problems->selectProblem(index);
        }
        const Bounds b = problemBounds(scene, problems_[std::size_t(index)]);
        if (!b.empty()) {
            const double box[6] = {b.min.x(), b.max.x(), b.min.y(),
                                   b.max.y(), b.min.z(), b.max.z()};
            bench_.viewport->frameBounds(box);
        }
        bench_.showStatus(QString::fromStdString(problems_[std::size_t(index)].text));
    }
    bench_.viewport->update();
}

bool RepairReaction::repair(const RepairOptions& options, OverlapMode overlaps, QString* summary,
                            QString* error) {
    if (bench_.preparing) {
        return bench_.fail(tr("Another file is being prepared"), error);
    }
    const Scene before = bench_.document->authoredScene();
    if (before.constraints.elementCount() > 0 || !before.air.empty() || before.tetCount() > 0) {
        return bench_.fail(tr("Repair works on surfaces before they are prepared: '%1' has "
                              "tets, constraints or air already")
                               .arg(QString::fromStdString(before.name)),
                           error);
    }
    Scene after = before;
    std::vector<SurfaceProblem> found, left;
    RepairReport repaired;
    std::vector<MergedOverlap> merged;
    bench_.preparing = true;
    runWithProgress(bench_.window, tr("Repair Surfaces"), tr("Repairing the surfaces"),
                    [&](const ProgressCallback& progress) {
                        progress(0.0, "checking");
                        found = locateSurfaceProblems(after, checkSurfaces(after));
                        progress(0.2, "repairing");
                        repaired = repairSurfaces(after, options);
                        SurfaceReport report = checkSurfaces(after);
                        if (overlaps != OverlapMode::Keep &&
                            (report.bodyIntersections() > 0 || !report.nested.empty())) {
                            progress(0.7, "merging crossing bodies");
                            merged = mergeOverlaps(after, report, overlaps, options);
                            report = checkSurfaces(after);
                        }
                        progress(0.9, "checking again");
                        left = locateSurfaceProblems(after, report);
                    });
    bench_.preparing = false;
    QStringList lines;
    for (const std::string& a : repaired.actions) {
        lines << QString::fromStdString(a);
    }
    for (const MergedOverlap& m : merged) {
        lines << QString::fromStdString(m.action);
    }
    const QString text =
        tr("Before: %1. After: %2.").arg(countProblems(found), countProblems(left));
    if (summary != nullptr) {
        *summary = text + (lines.isEmpty() ? QString() : QStringLiteral("\n") + lines.join("\n"));
    }
    if (lines.isEmpty()) {
        return bench_.fail(
            found.empty()
                ? tr("Nothing to repair: the surfaces have no problems")
                : tr("The repair ladder changed nothing: %1 remain").arg(countProblems(found)),
            error);
    }
    repairing_ = true;
    bench_.document->replaceScene(
        tr("Repair surfaces (%1 → %2 problems)").arg(found.size()).arg(left.size()), after);
    repairing_ = false;
    tracking_ = true;
    showProblems(std::move(left));
    for (const QString& l : lines) {
        bench_.report(Severity::Info, tr("repaired %1").arg(l));
    }
    bench_.report(left.empty() ? Severity::Info : Severity::Warning, tr("Repair: %1").arg(text));
    return true;
}

void RepairReaction::repairInteractive() {
    const PrepareOptions& prepare = open_->prepareOptions();
    RepairDialog dialog(prepare.repairOptions, prepare.overlaps, bench_.window);
    if (dialog.exec() != QDialog::Accepted) {
        return;
    }
    QString summary, error;
    if (!repair(dialog.options(), dialog.overlaps(), &summary, &error)) {
        QMessageBox::information(bench_.window, tr("Repair Surfaces"), error);
        return;
    }
    QMessageBox box(QMessageBox::Information, tr("Repair Surfaces"), summary.section('\n', 0, 0),
                    QMessageBox::Ok, bench_.window);
    box.setObjectName(QStringLiteral("repairSummary"));
    box.setDetailedText(summary.section('\n', 1));
    box.exec();
}

bool RepairReaction::prepareSurfaces(const PrepareOptions& options, QString* error) {
    if (bench_.preparing) {
        return bench_.fail(tr("Another file is being prepared"), error);
    }
    const Scene before = bench_.document->authoredScene();
    if (before.constraints.elementCount() > 0 || !before.air.empty() || before.tetCount() > 0) {
        return bench_.fail(tr("'%1' is prepared already (it has tets, constraints or air)")
                               .arg(QString::fromStdString(before.name)),
                           error);
    }
    PrepareResult prepared;
    bench_.preparing = true;
    runWithProgress(bench_.window, tr("Prepare the Surfaces"), tr("Preparing the surfaces"),
                    [&](const ProgressCallback& progress) {
                        prepared = prepareScene(before, options, progress);
                    });
    bench_.preparing = false;
    for (const ReportLine& line : prepared.report.lines) {
        if (line.severity != ReportSeverity::Error) {
            bench_.report(line.severity == ReportSeverity::Info ? Severity::Info
                                                                : Severity::Warning,
                          QString::fromStdString(line.text));
        }
    }
    if (!prepared.report.ok()) {
        return bench_.fail(tr("cannot prepare the surfaces of '%1': %2")
                               .arg(QString::fromStdString(before.name),
                                    QString::fromStdString(prepared.report.error)),
                           error);
    }
    bench_.document->replaceScene(tr("Prepare the surfaces (%1 tets, %2 air tets)")
                                      .arg(prepared.scene.tetCount())
                                      .arg(prepared.scene.air.tets.size()),
                                  prepared.scene);
    return true;
}

void RepairReaction::prepareInteractive() {
    PrepareDialog dialog({QString::fromStdString(bench_.document->scene().name)},
                         open_->prepareOptions(), bench_.window);
    if (dialog.exec() != QDialog::Accepted) {
        return;
    }
    QString error;
    if (!prepareSurfaces(dialog.options(), &error)) {
        QMessageBox::warning(bench_.window, tr("Prepare the Surfaces"), error);
    }
}

} // namespace pbd
