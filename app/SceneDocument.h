#pragma once
// The open scene as a document: the scene being shown and simulated, its authored state (what a
// save writes and Reset returns to), the undo stack its edits go through, the project file, the
// vertex selection and the simulation worker that steps it. Every edit is an undo command
// (app/commands/); the commands call the apply* functions, which change the scene and the
// running simulation and say what changed, so the view and the docks follow.

#include "core/scene/Scene.h"
#include "meshing/Prepare.h"
#include "widgets/Severity.h"

#include <QObject>
#include <QString>

#include <functional>

class QUndoStack;

namespace pbd {

class SimulationWorker;

class SceneDocument : public QObject {
    Q_OBJECT
public:
    explicit SceneDocument(QObject* parent = nullptr);
    ~SceneDocument() override;

    const Scene& scene() const { return scene_; }
    // The scene as authored: the current one with the loaded positions, velocities, air and
    // rigid poses (the state a save writes and Reset returns to), with every edit.
    Scene authoredScene() const;
    QUndoStack* undoStack() const { return undoStack_; }
    SimulationWorker* worker() const { return worker_; }

    // Shows `scene`: a new document (the undo history cleared, no project file), or with
    // `keepHistory` the same document changed by an undoable edit (SceneCommand).
    void load(Scene scene, bool keepHistory = false);
    // The newest simulated state, from the worker (positions, air, bodies after tearing, rigid
    // poses): what the view draws.
    Scene& simulatedScene() { return scene_; }

    // The project file and whether there are unsaved edits.
    QString projectPath() const { return projectPath_; }
    void setProjectPath(const QString& path) { projectPath_ = path; }
    bool isModified() const;
    // Unsaved, though not on the undo stack (a recovered autosave).
    void markModified();
    // Saved: the undo stack's clean state and no other unsaved change.
    void markSaved();

    // Solver threads for the worker: the machine's, not the scene's (0: all cores).
    void setThreads(int threads);
    // Hands the worker the scene's solver settings and the thread count.
    void applySimulationSettings();

    // The vertex selection, sorted particles of the scene.
    const std::vector<Index>& selection() const { return selection_; }
    void setSelection(std::vector<Index> particles);

    // Edits, each an undo command; false with a message when the edit cannot be made.
    void setSolverSettings(const SolverSettings& after);
    bool setSelfCollision(bool on, Real thickness, QString* error = nullptr);
    void togglePin(Index particle);
    bool isPinned(Index particle) const;
    bool setConstraintGroup(int index, const ConstraintGroup& group, QString* error = nullptr);
    bool addConstraintGroup(int body, ConstraintType type, QString* error = nullptr);
    // Every hinge to `model`, its rest data from the authored positions (an undo command).
    bool setBendingModel(BendingModel model, QString* error = nullptr);
    bool removeConstraintGroup(int index, QString* error = nullptr);
    enum class AttachTarget { Points, Collider, Body, RigidBody, Character };
    bool attachSelection(AttachTarget target, int index = -1, QString* error = nullptr);
    bool setCollider(int index, const Collider& collider, QString* error = nullptr);
    bool addCollider(ColliderShape shape, QString* error = nullptr);
    // A closed mesh from a file, its coordinates scaled by `scale`.
    bool addMeshCollider(const QString& path, double scale, QString* error = nullptr);
    bool removeCollider(int index, QString* error = nullptr);
    // An animated character read from a file (meshing/CharacterImport, in a child process),
    // with editCharacter's edits and friction= ("clip=walk,up=z,scale=0.01"), and its moving
    // skin collider; one undo step.
    bool addCharacter(const QString& path, const QString& edits, QString* error = nullptr);
    // A skirt fitted to a character and pinned at its waist (core addSkirtFromSpec's
    // "layers=2,waist=1.0,..."), one undo step.
    bool addSkirt(const QString& edits, QString* error = nullptr);
    // The ground (core/scenes/Ground.h) added under the lowest point, or removed. A plane
    // collider changes while the simulation runs; a rigid ground restarts it.
    bool setGround(bool on, QString* error = nullptr);
    bool setBodyDensity(int body, Real density, QString* error = nullptr);
    // The air tessellated with `options`; `run` runs the work (with progress and Cancel).
    using WorkRunner = std::function<void(const std::function<void(const ProgressCallback&)>&)>;
    bool addAirMesh(const AirOptions& options, const WorkRunner& run, QString* error = nullptr);
    // The whole authored scene replaced by `after` (a repair of its surfaces), one undo step.
    void replaceScene(const QString& text, const Scene& after);

    // The commands' effects (app/commands/).
    void applySolverSettings(const SolverSettings& settings);
    void applyInverseMass(Index particle, Real inverseMass);
    void applyBodyMasses(int body, const std::vector<Real>& inverseMasses);
    void applyGroup(int index, const ConstraintGroup& group);
    void replaceConstraints(const ConstraintSet& constraints,
                            const std::vector<ConstraintGroup>& groups,
                            const std::vector<RigidAttachment>& rigidAttachments, int select);
    void applyColliders(const std::vector<Collider>& colliders, int select);

signals:
    // A scene was loaded (`keepHistory`: by an undoable edit of this document).
    void sceneLoaded(bool keepHistory);
    void modifiedChanged(bool modified);
    void solverSettingsChanged();
    // Inverse masses changed (pins, densities); `body` -1 when not one body's.
    void massesChanged(int body);
    void groupChanged(int index);
    // Constraints, groups or rigid attachments replaced; the group to select, or -1.
    void constraintsReplaced(int select);
    void collidersChanged(int select);
    void selectionChanged();
    // The simulation was stopped and restarted from the authored state.
    void simulationRestarted();
    void message(Severity severity, const QString& text);

private:
    // Sends the message and returns false; sets *error when given.
    bool fail(const QString& message, QString* error, bool log = false);
    void updateModified();

    Scene scene_;
    Particles restParticles_; // the loaded state: what a save writes and Reset returns to
    AirMesh restAir_;
    std::vector<RigidBody> restRigid_;
    QUndoStack* undoStack_ = nullptr;
    SimulationWorker* worker_ = nullptr;
    QString projectPath_;
    bool settingsDirty_ = false;
    bool modified_ = false;
    int threads_ = 1;
    std::vector<Index> selection_;
};

} // namespace pbd
