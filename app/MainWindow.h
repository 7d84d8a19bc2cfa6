#pragma once
// PBD Lab's main window: the 3D view in the centre; Scene, Properties and Log docks; the File,
// View and Help menus. Window geometry, dock layout, view toggles and recent files persist.

#include "core/fields/Fields.h"
#include "core/rigid/RigidSolver.h"
#include "core/scene/Scene.h"
#include "meshing/Prepare.h"
#include "widgets/ExportDialog.h"
#include "widgets/PreferencesDialog.h"

#include <QElapsedTimer>
#include <QMainWindow>
#include <QStringList>
#include <QTimer>

#include <functional>
#include <map>
#include <memory>
#include <optional>

class QChart;
class QCheckBox;
class QLineSeries;
class QLogValueAxis;
class QValueAxis;
class QComboBox;
class QDockWidget;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QMenu;
class QUndoStack;
class QSlider;
class QSpinBox;

namespace pbd {

class LogPanel;
class PropertiesPanel;
class SceneActors;
class RigidActors;
class SceneTreePanel;
class SimulationWorker;
class SurfaceFieldEvaluator;
class VtkViewport;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    // With persistSettings false (batch rendering), nothing is read from or written to QSettings.
    explicit MainWindow(bool persistSettings = true, QWidget* parent = nullptr);
    ~MainWindow() override;

    // Shows one of the generated scenes (core::sceneCatalogue()).
    bool loadGeneratedScene(const QString& name, QString* error = nullptr);
    // Opens a project (.json) or imports and prepares a mesh file with prepareOptions(),
    // showing progress with Cancel; the path File ▸ Open, Open Recent and drag-and-drop take
    // after the Prepare dialog. On failure the scene on screen is kept.
    bool openFile(const QString& path, QString* error = nullptr);
    // File ▸ Open's path for one file: a mesh first shows the Prepare dialog.
    void openFileInteractive(const QString& path);
    const PrepareOptions& prepareOptions() const { return prepareOptions_; }
    void setPrepareOptions(const PrepareOptions& options) { prepareOptions_ = options; }
    // Writes the current (simulated) scene as .vtu, .msh, TetGen .node/.ele/.face (any of
    // those suffixes), a cooked asset (.asset.json) or a project .json, by the path's suffix.
    bool exportScene(const QString& path, QString* error = nullptr);
    // File ▸ Export's path: the format, file and state (authored or current) chosen.
    bool exportScene(const ExportChoice& choice, QString* error = nullptr);
    // Edit ▸ Preferences: applied at once (colour map, the Prepare dialog's scale) and to the
    // next mesh opened (solver settings); persisted unless the window is a batch one.
    const Preferences& preferences() const { return preferences_; }
    void setPreferences(const Preferences& preferences);
    // File ▸ Save As: writes the authored scene (the state Reset returns to, with its edits:
    // pins, solver and air settings; not the simulated positions) as a project, atomically
    // (a failed write leaves the previous file), and makes it the window's project file.
    bool saveProjectAs(const QString& path, QString* error = nullptr);
    // File ▸ Save: to the project file, or Save As when there is none. False if not saved.
    bool save();
    QString projectPath() const { return projectPath_; }
    // Edits since the last load or save (also shown as * in the title).
    bool isModified() const { return isWindowModified(); }
    // The scene a save writes.
    Scene authoredScene() const;
    // Unsaved edits: asks Save / Discard / Cancel; true when it is fine to go on.
    bool maybeSave();
    // The autosave (every two minutes while there are unsaved edits, removed on save or a clean
    // close) and its recovery (File ▸ Recover Autosave).
    QString autosavePath() const;
    bool autosave();
    bool recoverAutosave(QString* error = nullptr);
    // Runs `steps` solver steps on the worker and waits for them (batch use); false with a
    // message when the run diverged.
    bool simulateSteps(int steps, QString* error = nullptr);
    // Colours the surfaces by a field ("none", "strain_u", ..., see core/fields/SurfaceFields.h).
    bool setField(const QString& name, QString* error = nullptr);
    // Frame recording: while on, every drawn simulation frame is also written to
    // `directory`/frame_NNNNNN.png (NNNNNN = its step), `size` pixels. An empty directory stops.
    bool setFrameRecording(const QString& directory, const QSize& size, QString* error = nullptr);
    QString frameDirectory() const { return frameDirectory_; }
    // Writes a PNG of exactly `size` pixels of the current view.
    bool saveScreenshot(const QString& path, const QSize& size, QString* error = nullptr);

    const Scene& scene() const { return scene_; }

    // The vertex under a point of the view (logical pixels): the body, the particle (global
    // index) and, for a triangle, which one. Nothing when the point shows no body.
    struct PickedVertex {
        std::size_t body = 0;
        Index particle = 0;
        long triangle = -1;
    };
    std::optional<PickedVertex> vertexAt(const QPointF& position) const;
    // What a user sees on hovering or clicking: body, particle, position, mass, the field value.
    QString describeVertex(const PickedVertex& vertex) const;
    // Pins (inverse mass 0) or unpins a particle through the undo stack; also what Shift+click
    // in the view does. Applies to a running simulation at the next step.
    void togglePin(Index particle);

    // The vertex selection (Edit ▸ Select Vertices: click, Ctrl+click, box), sorted particles.
    const std::vector<Index>& vertexSelection() const { return selection_; }
    void setVertexSelection(std::vector<Index> particles);
    // Selects the particles of visible bodies drawn inside `rect` (widget pixels); with `add`,
    // in addition to the selection.
    void selectInRect(const QRectF& rect, bool add);
    // Attaches the selection (undoable; from the authored state; the selection is kept):
    enum class AttachTarget { Points, Collider, Body, RigidBody };
    bool attachSelection(AttachTarget target, int index = -1, QString* error = nullptr);
    bool isPinned(Index particle) const;
    // Constraint groups (core/constraints/ConstraintGroups.h), each edit through the undo stack:
    // a group's material (applies to a running simulation at the next step), a new group of
    // `type` for a body generated from the authored (rest) state, a group removed. Adding or
    // removing a group restarts the simulation from the authored state. False with a message
    // when the edit cannot be made.
    bool setConstraintGroup(int index, const ConstraintGroup& group, QString* error = nullptr);
    bool addConstraintGroup(int body, ConstraintType type, QString* error = nullptr);
    bool removeConstraintGroup(int index, QString* error = nullptr);
    // Collider edits (undoable, applied to a running simulation at the next step): replace
    // collider `index` (checked: a refused one says why), add one of a shape fitted to the
    // bodies (selected afterwards), remove one.
    bool setCollider(int index, const Collider& collider, QString* error = nullptr);
    // A body's density (kg/m^3, tet bodies) or mass per area (kg/m^2, cloth): its masses lumped
    // again, pinned particles kept; undoable, applied to a running simulation.
    bool setBodyDensity(int body, Real density, QString* error = nullptr);
    // Edit ▸ Tessellate the Air: the air mesh between and around the bodies (TetGen, in a child
    // process, with progress and Cancel; the Prepare dialog's air options), undoable. Refused
    // when the scene has air already.
    bool addAirMesh(QString* error = nullptr);
    // Cloth self-collision on or off and its thickness (m): undoable, applied while running.
    bool setSelfCollision(bool on, Real thickness, QString* error = nullptr);
    // The solver settings after an edit, undo or redo: the scene's, the worker's and the dock's.
    void applySolverSettings(const SolverSettings& settings);
    // Inverse masses of body `body`'s particles, in order, after an edit, undo or redo.
    void applyBodyMasses(int body, const std::vector<Real>& inverseMasses);
    bool addCollider(ColliderShape shape, QString* error = nullptr);
    // A mesh collider from a file (Edit ▸ Add Collider ▸ Mesh from File…), in the preferred
    // mesh units; refused, saying why, when the surface is not closed.
    bool addMeshCollider(const QString& path, QString* error = nullptr);
    bool removeCollider(int index, QString* error = nullptr);
    // The colliders as they are after an edit, undo or redo; `select` is shown (-1: none).
    void applyColliders(const std::vector<Collider>& colliders, int select);
    QUndoStack* undoStack() const { return undoStack_; }
    VtkViewport* viewport() const { return viewport_; }
    SceneActors* sceneActors() const { return actors_.get(); }
    RigidActors* rigidActors() const { return rigidActors_.get(); }
    // The rigid contacts drawn now (the last shown step's last substep).
    const std::vector<RigidContact>& rigidContacts() const { return shownRigidContacts_; }
    SceneTreePanel* sceneTree() const { return sceneTree_; }
    PropertiesPanel* properties() const { return properties_; }
    LogPanel* log() const { return log_; }
    SimulationWorker* simulation() const { return worker_; }
    // The convergence plot's points: (iteration, largest constraint error).
    QLineSeries* convergenceSeries() const { return convergenceSeries_; }
    // Steps shown in the view so far (the newest snapshot drawn).
    std::size_t shownSteps() const { return shownSteps_; }
    QStringList recentFiles() const { return recentFiles_; }

    void saveSettings() const;

    // Versions of PBD Lab and every library it is built with, one "name version" per entry.
    static QStringList libraryVersions();

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createActions();
    void createDocks();
    void restoreSettings();
    // Shows a scene: a new one (the undo history cleared, no project file), or with
    // `keepHistory`, the same document changed by an undoable edit (SceneCommand).
    void showScene(Scene scene, bool keepHistory = false);
    friend class SceneCommand;
    void addRecentFile(const QString& path);
    void rebuildRecentMenu();
    void openWithDialog();
    void saveAsWithDialog();
    void markModified();
    void updateModified();
    QString projectPath_;
    bool settingsDirty_ = false;
    Particles restParticles_; // the loaded state: what a save writes and Reset returns to
    AirMesh restAir_;
    QTimer* autosaveTimer_ = nullptr;
    void exportWithDialog();
    PrepareResult runPrepare(const QString& path, const PrepareOptions& options);
    // Runs `work` on its own thread with a progress dialog (title, label: stage) and Cancel;
    // `work` gets the progress callback, which returns false once Cancel was pressed.
    void runWithProgress(const QString& title, const QString& label,
                         const std::function<void(const ProgressCallback&)>& work);
    void screenshotWithDialog();
    void showAbout();
    void reportError(const QString& message);
    QWidget* createSimulationPanel();
    QWidget* createConvergencePanel();
    void showConvergence(const std::vector<Real>& errors);
    void showSnapshot();
    // Hands the worker the scene's solver settings and the dock's thread count.
    void applySimulationSettings();
    // The scene's solver settings with the Simulation dock's values.
    SolverSettings dockSettings() const;
    // A dock value changed: an undoable edit of the scene's solver settings (consecutive
    // changes of one value merge into one step).
    void solverSettingsEdited();
    // Shows the scene's solver settings in the Simulation dock (signals blocked).
    void showSolverSettings();
    void applyField();
    void applyClip();
    std::array<bool, 4> drawnConstraintKinds() const;
    void applyConstraintDrawing();
    void drawConstraints(const ConstraintLines& lines);
    // Sets a particle's inverse mass in the scene, the running simulation and the view (the
    // pin commands' effect).
    void applyInverseMass(Index particle, Real inverseMass);
    void refreshPins();
    // The group commands' effects.
    void applyGroup(int index, const ConstraintGroup& group);
    // The constraints, groups and rigid attachments after an edit, undo or redo.
    void replaceConstraints(const ConstraintSet& constraints,
                            const std::vector<ConstraintGroup>& groups,
                            const std::vector<RigidAttachment>& rigidAttachments, int select);
    friend class GroupCommand;
    friend class ConstraintsCommand;
    void showPickInfo(const QPointF& position, bool logIt);
    friend class PinCommand;

    bool persistSettings_;
    Scene scene_;
    PrepareOptions prepareOptions_;
    QUndoStack* undoStack_ = nullptr;
    std::vector<std::vector<double>> fieldValues_; // per body, per triangle, of the shown field
    bool preparing_ = false;
    std::vector<Index> selection_;
    Preferences preferences_;
    VtkViewport* viewport_ = nullptr;
    std::unique_ptr<SceneActors> actors_;
    std::unique_ptr<RigidActors> rigidActors_;
    std::vector<RigidBody> restRigid_; // the rigid bodies as loaded: what Save writes
    std::vector<RigidContact> shownRigidContacts_;
    SceneTreePanel* sceneTree_ = nullptr;
    PropertiesPanel* properties_ = nullptr;
    LogPanel* log_ = nullptr;
    QMenu* recentMenu_ = nullptr;
    QStringList recentFiles_;
    QString lastDirectory_;
    QString lastScreenshot_;

    SimulationWorker* worker_ = nullptr;
    std::size_t shownTopology_ = 0;
    std::size_t shownAirVersion_ = 0;
    QGroupBox* rigidSettings_ = nullptr;
    QSpinBox* rigidIterations_ = nullptr;
    QSpinBox* rigidSubsteps_ = nullptr;
    QDoubleSpinBox* rigidContactHertz_ = nullptr;
    QCheckBox* rigidWarmStart_ = nullptr;
    QCheckBox* rigidSeparatePush_ = nullptr;
    QComboBox* rigidStabilisation_ = nullptr;
    QCheckBox* rigidSleeping_ = nullptr;
    QCheckBox* rigidAggressiveSleep_ = nullptr;
    QGroupBox* airSettings_ = nullptr;
    QSpinBox* airInterval_ = nullptr;
    QDoubleSpinBox* airThreshold_ = nullptr;
    QDoubleSpinBox* airDistance_ = nullptr;
    QDoubleSpinBox* airFriction_ = nullptr;
    std::size_t shownSteps_ = 0;
    QDoubleSpinBox* timeStep_ = nullptr;
    QSpinBox* substeps_ = nullptr;
    QSpinBox* iterations_ = nullptr;
    QCheckBox* exactAngularMomentum_ = nullptr;
    QSpinBox* threads_ = nullptr;
    QLabel* simulationStatus_ = nullptr;
    QComboBox* fieldSelector_ = nullptr;
    QComboBox* colourMap_ = nullptr;
    QCheckBox* customRange_ = nullptr;
    QDoubleSpinBox* rangeMin_ = nullptr;
    QDoubleSpinBox* rangeMax_ = nullptr;
    QCheckBox* clipEnabled_ = nullptr;
    QComboBox* clipAxis_ = nullptr;
    QSlider* clipPosition_ = nullptr;
    QCheckBox* lockRange_ = nullptr;
    QLineSeries* convergenceSeries_ = nullptr;
    QLogValueAxis* convergenceAxisY_ = nullptr;
    QValueAxis* convergenceAxisX_ = nullptr;
    QDockWidget* convergenceDock_ = nullptr;
    QString frameDirectory_;
    QSize frameSize_;
    double lockedLo_ = 0;
    double lockedHi_ = 0;
    std::unique_ptr<SurfaceFieldEvaluator> fieldEvaluator_;
    QElapsedTimer frameClock_;
    QTimer frameTimer_;
};

} // namespace pbd
