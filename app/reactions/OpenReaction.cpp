#include "app/reactions/OpenReaction.h"

#include "app/SceneDocument.h"
#include "app/Workbench.h"
#include "app/reactions/PreferencesReaction.h"
#include "app/reactions/SaveReaction.h"
#include "core/scenes/Ground.h"
#include "meshing/AirScenes.h"
#include "meshing/MeshImport.h"
#include "meshing/ProjectFile.h"
#include "widgets/PrepareDialog.h"
#include "widgets/ProgressTask.h"

#include <QAction>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QIcon>
#include <QLocale>
#include <QMainWindow>
#include <QMenu>
#include <QMessageBox>
#include <QProxyStyle>
#include <QPushButton>
#include <QSettings>

namespace pbd {

namespace {

// Menus draw their icons at the small icon size (16 px): the Samples menu's pictures at 48.
class ThumbnailMenuStyle : public QProxyStyle {
public:
    int pixelMetric(PixelMetric metric, const QStyleOption* option,
                    const QWidget* widget) const override {
        if (metric == PM_SmallIconSize) {
            return 48;
        }
        return QProxyStyle::pixelMetric(metric, option, widget);
    }
};

} // namespace

namespace {
constexpr int kMaxRecentFiles = 10;
} // namespace

OpenReaction::OpenReaction(Workbench& bench, SaveReaction* save,
                           const PreferencesReaction* preferences, QObject* parent)
    : QObject(parent)
    , bench_(bench)
    , save_(save)
    , preferences_(preferences)
    , prepareOptions_(PrepareDialog::defaultOptions()) {
    auto* open = new QAction(tr("&Open…"), bench_.window);
    open->setObjectName(QStringLiteral("actionOpen"));
    open->setShortcut(QKeySequence::Open);
    connect(open, &QAction::triggered, this, &OpenReaction::openWithDialog);
    recentMenu_ = new QMenu(tr("Open &Recent"), bench_.window);
    recentMenu_->setObjectName(QStringLiteral("menuRecent"));
    // The Samples menu: every generated scene with its picture (rendered by PBD Lab:
    // scripts/screenshots) and what it shows.
    samples_ = new QMenu(tr("Sa&mples"), bench_.window);
    samples_->setObjectName(QStringLiteral("menuSamples"));
    samples_->setToolTipsVisible(true);
    for (const SceneInfo& info : allScenes()) {
        const QString name = QString::fromStdString(info.name);
        const QString description = QString::fromStdString(info.description);
        QAction* a = samples_->addAction(QIcon(QStringLiteral(":/thumbnails/%1.png").arg(name)),
                                         QStringLiteral("%1 — %2").arg(name, description), this,
                                         [this, name] {
                                             if (save_->maybeSave()) {
                                                 loadGeneratedScene(name);
                                             }
                                         });
        a->setToolTip(description);
        a->setStatusTip(description);
        a->setObjectName(QStringLiteral("actionScene_") + name);
    }
    auto* style = new ThumbnailMenuStyle;
    style->setParent(samples_);
    samples_->setStyle(style);
    recover_ = new QAction(tr("&Recover Autosave"), bench_.window);
    recover_->setObjectName(QStringLiteral("actionRecoverAutosave"));
    connect(recover_, &QAction::triggered, this, [this] {
        if (save_->maybeSave()) {
            recoverAutosave();
        }
    });
    connect(save_, &SaveReaction::saved, this, &OpenReaction::addRecentFile);
    connect(preferences_, &PreferencesReaction::unitScaleChanged, this,
            &OpenReaction::setUnitScale);
    actions_ = {open, recentMenu_->menuAction()};
    rebuildRecentMenu();
}

bool OpenReaction::loadGeneratedScene(const QString& name, QString* error) {
    Result<Scene> scene = makeAnyScene(name.toStdString());
    if (!scene) {
        return bench_.fail(QString::fromStdString(scene.error()), error);
    }
    const std::size_t particles = scene->particles.size();
    const std::size_t tets = scene->tetCount();
    const std::size_t bodies = scene->bodies.size();
    bench_.document->load(std::move(scene).value());
    bench_.report(Severity::Info, tr("Generated scene '%1': %2 bodies, %3 particles, %4 tetrahedra")
                                      .arg(name)
                                      .arg(bodies)
                                      .arg(particles)
                                      .arg(tets));
    return true;
}

PrepareResult OpenReaction::runPrepare(const QString& path, const PrepareOptions& options) {
    // TetGen runs in a child process, so even a TetGen crash only ends up as a message here.
    PrepareResult result;
    const std::filesystem::path file = QDir::toNativeSeparators(path).toStdString();
    runWithProgress(bench_.window, tr("Prepare Mesh"),
                    tr("Preparing %1").arg(QFileInfo(path).fileName()),
                    [&](const ProgressCallback& progress) {
                        result = prepareFiles({file}, options, progress);
                    });
    return result;
}

bool OpenReaction::openSurfaces(const QString& path, const QString& why) {
    PrepareOptions surfaces = prepareOptions_;
    surfaces.tetrahedralize = surfaces.air = surfaces.frames = false;
    surfaces.defaultConstraints = surfaces.rigidHulls = false;
    surfaces.cage = CageOptions{};
    if (surfaces.repairOptions.wrap == WrapMode::Always) {
        surfaces.repairOptions.wrap = WrapMode::Auto; // (never without meshing) as asked
    }
    bench_.preparing = true;
    PrepareResult opened = runPrepare(path, surfaces);
    bench_.preparing = false;
    if (!opened.report.ok() || opened.scene.bodies.empty()) {
        return false;
    }
    std::vector<SurfaceProblem> problems =
        locateSurfaceProblems(opened.scene, opened.report.surfaces);
    const QString native = QDir::toNativeSeparators(path);
    bench_.document->load(std::move(opened.scene));
    bench_.report(Severity::Warning,
                  tr("cannot prepare '%1' as asked: %2. Opened its surfaces as they are, with "
                     "%3 problem(s) marked (Problems dock); Edit ▸ Repair Surfaces… mends what it "
                     "can, then File ▸ Open again, or choose the alpha wrap in the Prepare dialog")
                      .arg(native, why)
                      .arg(problems.size()));
    emit surfacesOpened(problems);
    return true;
}

bool OpenReaction::openFile(const QString& path, QString* error) {
    auto fail = [&](const QString& message) { return bench_.fail(message, error); };
    if (bench_.preparing) {
        return fail(tr("cannot open '%1': another file is being prepared").arg(path));
    }
    SceneDocument& document = *bench_.document;
    const QString native = QDir::toNativeSeparators(path);
    if (path.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive)) {
        bool asset = false;
        Result<Scene> project = loadSceneFile(native.toStdString(), &asset);
        if (!project) {
            return fail(QString::fromStdString(project.error()));
        }
        document.load(std::move(project).value());
        // An asset is not overwritten by Save with a project: Save asks for a name.
        document.setProjectPath(asset ? QString() : path);
        const Scene& scene = document.scene();
        bench_.report(Severity::Info, tr("Opened %1 %2: %3 bodies, %4 particles, %5 constraints")
                                          .arg(asset ? tr("cooked asset") : tr("project"), native)
                                          .arg(scene.bodies.size())
                                          .arg(scene.particles.size())
                                          .arg(scene.constraints.elementCount()));
    } else {
        bench_.preparing = true;
        PrepareResult prepared = runPrepare(path, prepareOptions_);
        bench_.preparing = false;
        for (const ReportLine& line : prepared.report.lines) {
            if (line.severity == ReportSeverity::Error && line.text == prepared.report.error) {
                continue; // reported once, below
            }
            bench_.report(line.severity == ReportSeverity::Info      ? Severity::Info
                          : line.severity == ReportSeverity::Warning ? Severity::Warning
                                                                     : Severity::Error,
                          QString::fromStdString(line.text));
        }
        if (!prepared.report.ok()) {
            const QString why = QString::fromStdString(prepared.report.error);
            if (prepared.report.error == kCancelledMessage) {
                return fail(
                    tr("Preparing %1 was cancelled; the scene on screen is unchanged").arg(native));
            }
            // A file that was read but not prepared as asked still opens, as its surfaces
            // (repaired as far as the choices allow, nothing meshed), with its problems shown.
            if (openSurfaces(path, why)) {
                bench_.lastDirectory = QFileInfo(path).absolutePath();
                addRecentFile(QFileInfo(path).absoluteFilePath());
                return true;
            }
            return fail(tr("cannot prepare '%1': %2").arg(native, why));
        }
        double seconds = 0;
        for (const auto& [stage, s] : prepared.report.timings) {
            seconds += s;
        }
        // A scene made from a mesh starts with the preferred solver settings.
        const Preferences& preferences = preferences_->preferences();
        SolverSettings& solver = prepared.scene.solver;
        solver.timeStep = preferences.timeStep;
        solver.substeps = preferences.substeps;
        solver.iterations = preferences.iterations;
        solver.method = preferences.method;
        if (preferences.groundUnderMeshes) {
            addGround(prepared.scene, groundHeight(prepared.scene));
        }
        document.load(std::move(prepared.scene));
        const Scene& scene = document.scene();
        bench_.report(Severity::Info,
                      tr("Opened %1: %2 bodies, %3 vertices, %4 triangles, %5 tets, %6 air tets, "
                         "%7 constraints (prepared in %8 s)")
                          .arg(native)
                          .arg(scene.bodies.size())
                          .arg(scene.particles.size())
                          .arg(scene.triangleCount())
                          .arg(scene.tetCount())
                          .arg(scene.air.tets.size())
                          .arg(scene.constraints.elementCount())
                          .arg(seconds, 0, 'f', 2));
    }
    bench_.lastDirectory = QFileInfo(path).absolutePath();
    addRecentFile(QFileInfo(path).absoluteFilePath());
    return true;
}

void OpenReaction::openInteractive(const QString& path) {
    if (!save_->maybeSave()) {
        return;
    }
    if (!path.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive) && QFileInfo::exists(path)) {
        PrepareDialog dialog({path}, prepareOptions_, bench_.window);
        if (dialog.exec() != QDialog::Accepted) {
            return;
        }
        prepareOptions_ = dialog.options();
        if (bench_.persistSettings) {
            PrepareDialog::saveOptions(prepareOptions_);
        }
    }
    openFile(path);
}

bool OpenReaction::offerRecovery() {
    const QString path = SaveReaction::autosavePath();
    if (!QFileInfo::exists(path)) {
        return false;
    }
    QMessageBox box(
        QMessageBox::Question, tr("Recover unsaved work"),
        tr("PBD Lab did not close cleanly last time. Unsaved work from %1 was "
           "autosaved.")
            .arg(QLocale().toString(QFileInfo(path).lastModified(), QLocale::ShortFormat)),
        QMessageBox::NoButton, bench_.window);
    box.setObjectName(QStringLiteral("recoverAutosave"));
    box.setInformativeText(tr("Recover opens it as an unsaved scene; Not Now keeps it for File ▸ "
                              "Recover Autosave; Discard deletes it."));
    QPushButton* recover = box.addButton(tr("&Recover"), QMessageBox::AcceptRole);
    QPushButton* discard = box.addButton(tr("&Discard"), QMessageBox::DestructiveRole);
    box.addButton(tr("&Not Now"), QMessageBox::RejectRole);
    box.setDefaultButton(recover);
    box.exec();
    if (box.clickedButton() == recover) {
        return recoverAutosave();
    }
    if (box.clickedButton() == discard) {
        QFile::remove(path);
        bench_.report(Severity::Info, tr("Discarded the autosave of the last session."));
    }
    return false;
}

bool OpenReaction::recoverAutosave(QString* error) {
    const QString path = SaveReaction::autosavePath();
    if (!QFileInfo::exists(path)) {
        return bench_.fail(
            tr("There is no autosave to recover (%1).").arg(QDir::toNativeSeparators(path)), error);
    }
    if (!openFile(path, error)) {
        return false;
    }
    bench_.document->setProjectPath(QString()); // recovered work still needs a place of its own
    bench_.document->markModified();
    bench_.report(Severity::Info, tr("Recovered the autosave: File ▸ Save As to keep it."));
    return true;
}

void OpenReaction::setUnitScale(double scale) {
    // The Prepare dialog starts from the new unit (and can still be changed per file).
    prepareOptions_.import.scale = scale;
    if (bench_.persistSettings) {
        PrepareDialog::saveOptions(prepareOptions_);
    }
}

void OpenReaction::openWithDialog() {
    QStringList patterns;
    for (const std::string& ext : supportedMeshExtensions()) {
        patterns << QStringLiteral("*") + QString::fromStdString(ext);
    }
    const QString path = QFileDialog::getOpenFileName(
        bench_.window, tr("Open Mesh or Project"), bench_.lastDirectory,
        tr("Meshes and projects (%1 *.json);;Meshes (%1);;PBD Lab projects (*.json);;All files "
           "(*)")
            .arg(patterns.join(QLatin1Char(' '))));
    if (!path.isEmpty()) {
        openInteractive(path);
    }
}

void OpenReaction::addRecentFile(const QString& path) {
    recentFiles_.removeAll(path);
    recentFiles_.prepend(path);
    while (recentFiles_.size() > kMaxRecentFiles) {
        recentFiles_.removeLast();
    }
    rebuildRecentMenu();
    if (bench_.persistSettings) {
        QSettings settings;
        saveSettings(settings);
    }
}

void OpenReaction::rebuildRecentMenu() {
    recentMenu_->clear();
    for (int i = 0; i < recentFiles_.size(); ++i) {
        const QString path = recentFiles_[i];
        QAction* a = recentMenu_->addAction(
            QStringLiteral("&%1 %2").arg(i + 1).arg(QFileInfo(path).fileName()), this,
            [this, path] { openInteractive(path); });
        a->setToolTip(path);
        a->setStatusTip(path);
    }
    recentMenu_->addSeparator();
    QAction* clear = recentMenu_->addAction(tr("Clear Recent Files"), this, [this] {
        recentFiles_.clear();
        rebuildRecentMenu();
        if (bench_.persistSettings) {
            QSettings settings;
            saveSettings(settings);
        }
    });
    clear->setObjectName(QStringLiteral("actionClearRecent"));
    clear->setEnabled(!recentFiles_.isEmpty());
}

void OpenReaction::restoreSettings(QSettings& settings) {
    recentFiles_ = settings.value(QStringLiteral("files/recent")).toStringList();
    prepareOptions_ = PrepareDialog::savedOptions();
    bench_.lastDirectory = settings.value(QStringLiteral("files/lastDirectory")).toString();
    rebuildRecentMenu();
}

void OpenReaction::saveSettings(QSettings& settings) const {
    settings.setValue(QStringLiteral("files/recent"), recentFiles_);
    settings.setValue(QStringLiteral("files/lastDirectory"), bench_.lastDirectory);
}

} // namespace pbd
