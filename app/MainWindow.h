#pragma once
// PBD Lab's main window: it composes. The 3D view in the centre (SceneView draws the document);
// the Scene, Properties, History, Log, Simulation and Convergence docks (widgets/); the File,
// Edit, View, Simulation and Help menus, whose actions are reactions (app/reactions/), each
// owning its actions, shortcuts and handlers. Window geometry, dock layout and every reaction's
// settings persist.

#include "app/SceneDocument.h"
#include "app/SceneView.h"
#include "app/Workbench.h"

#include <QMainWindow>
#include <QStringList>

namespace pbd {

class AboutReaction;
class PythonReaction;
class AirReaction;
class RepairReaction;
class ColliderReaction;
class ConstraintGroupReaction;
class ExportReaction;
class OpenReaction;
class PickingReaction;
class PreferencesReaction;
class SaveReaction;
class ScreenshotReaction;
class SelectionReaction;
class SimulationReaction;
class TimelineReaction;
class SimulationWorker;
class UndoReaction;
class ViewReaction;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    // With persistSettings false (batch rendering), nothing is read from or written to QSettings.
    explicit MainWindow(bool persistSettings = true, QWidget* parent = nullptr);
    ~MainWindow() override;

    // The window's parts.
    SceneDocument* document() const { return document_; }
    SceneView* sceneView() const { return view_; }
    const Workbench& workbench() const { return bench_; }
    OpenReaction* opening() const { return open_; }
    SaveReaction* saving() const { return save_; }
    ExportReaction* exporting() const { return export_; }
    ColliderReaction* colliders() const { return colliders_; }
    AirReaction* air() const { return air_; }
    RepairReaction* repair() const { return repair_; }
    PreferencesReaction* preferencesReaction() const { return preferences_; }
    SelectionReaction* selecting() const { return selection_; }
    SimulationReaction* simulating() const { return simulation_; }
    TimelineReaction* timeline() const { return timeline_; }
    PythonReaction* python() const { return python_; }

    // Shorthands for the parts scripts and tests use most.
    const Scene& scene() const { return document_->scene(); }
    Scene authoredScene() const { return document_->authoredScene(); }
    QUndoStack* undoStack() const { return document_->undoStack(); }
    SimulationWorker* simulation() const { return document_->worker(); }
    VtkViewport* viewport() const { return bench_.viewport; }
    SceneActors* sceneActors() const { return view_->actors(); }
    RigidActors* rigidActors() const { return view_->rigidActors(); }
    SceneTreePanel* sceneTree() const { return bench_.sceneTree; }
    PropertiesPanel* properties() const { return bench_.properties; }
    LogPanel* log() const { return bench_.log; }
    bool isModified() const { return document_->isModified(); }
    bool loadGeneratedScene(const QString& name, QString* error = nullptr);
    bool openFile(const QString& path, QString* error = nullptr);
    bool simulateSteps(int steps, QString* error = nullptr);
    bool setField(const QString& name, QString* error = nullptr);
    bool saveScreenshot(const QString& path, const QSize& size, QString* error = nullptr);

    void saveSettings() const;
    // Versions of PBD Lab and every library it is built with, one "name version" per entry.
    static QStringList libraryVersions();

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createDocks();
    void connectDocks();
    void createMenus();
    // The main toolbar: the menus' own actions (so each does what its menu twin does), with
    // icons, and the field shown.
    void createToolBar();
    void restoreSettings();
    void sceneLoaded();

    Workbench bench_;
    SceneDocument* document_ = nullptr;
    SceneView* view_ = nullptr;
    QDockWidget* historyDock_ = nullptr;
    QDockWidget* problemsDock_ = nullptr;
    QDockWidget* convergenceDock_ = nullptr;
    QDockWidget* airDock_ = nullptr;
    // While the Air dock shows: the worker's new air history, a few times a second.
    QTimer* airHistoryTimer_ = nullptr;
    std::size_t airHistoryShown_ = 0;
    std::uint64_t airHistoryGeneration_ = 0;
    void pullAirHistory();
    SaveReaction* save_ = nullptr;
    OpenReaction* open_ = nullptr;
    ExportReaction* export_ = nullptr;
    ScreenshotReaction* screenshot_ = nullptr;
    UndoReaction* undo_ = nullptr;
    ConstraintGroupReaction* groups_ = nullptr;
    ColliderReaction* colliders_ = nullptr;
    SelectionReaction* selection_ = nullptr;
    AirReaction* air_ = nullptr;
    RepairReaction* repair_ = nullptr;
    PreferencesReaction* preferences_ = nullptr;
    ViewReaction* viewOptions_ = nullptr;
    SimulationReaction* simulation_ = nullptr;
    TimelineReaction* timeline_ = nullptr;
    PickingReaction* picking_ = nullptr;
    AboutReaction* about_ = nullptr;
    PythonReaction* python_ = nullptr;
    QDockWidget* pythonDock_ = nullptr;
};

} // namespace pbd
