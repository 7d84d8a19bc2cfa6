#pragma once
// The document drawn in the 3D view: the bodies, colliders, air and rigid bodies as VTK actors,
// kept up to date with the edits and with the snapshots the simulation worker publishes (at
// most ~30 redraws a second); the field the surfaces are coloured by, the clip plane, drawn
// constraints, pins and the selection; picking a vertex; screenshots and recorded frames.

#include "core/fields/SurfaceFields.h"
#include "core/rigid/RigidSolver.h"
#include "widgets/SceneActors.h"
#include "widgets/Severity.h"

#include <QElapsedTimer>
#include <QObject>
#include <QSize>
#include <QTimer>

#include <array>
#include <memory>
#include <optional>

class QRectF;
class QPointF;

namespace pbd {

class ConvergencePanel;
class FieldPanel;
class RigidActors;
class SceneDocument;
class SolverSettingsPanel;
class VtkViewport;

class SceneView : public QObject {
    Q_OBJECT
public:
    SceneView(SceneDocument* document, VtkViewport* viewport, FieldPanel* fields,
              SolverSettingsPanel* status, ConvergencePanel* convergence,
              QObject* parent = nullptr);
    ~SceneView() override;

    SceneActors* actors() const { return actors_.get(); }
    RigidActors* rigidActors() const { return rigidActors_.get(); }
    // The rigid contacts drawn now (the last shown step's last substep).
    const std::vector<RigidContact>& rigidContacts() const { return shownRigidContacts_; }
    // Steps shown in the view so far (the newest snapshot drawn).
    std::size_t shownSteps() const { return shownSteps_; }

    // Draws the newest snapshot now, or within a frame's time.
    void showSnapshot();
    // Draws the newest snapshot at once (after a batch of steps).
    void showSnapshotNow();

    // View options.
    void setWireframe(bool on);
    bool wireframe() const { return wireframe_; }
    void setRigidContactsShown(bool on);
    void setFrameGlyphs(bool on);
    void setSkeletonsShown(bool on);
    void setAirMode(SceneActors::AirMode mode);
    // Constraints drawn as lines (distance, bending, attachments, contacts), coloured by their
    // residual or by their force.
    void setConstraintDrawing(const std::array<bool, 4>& kinds, bool byLambda);

    // The surfaces coloured by the field panel's field ("none", "strain_u", ...).
    void applyField();
    bool setField(const QString& name, QString* error = nullptr);
    void applyClip();

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
    // The particles of visible bodies drawn inside `rect` (widget pixels).
    std::vector<Index> particlesIn(const QRectF& rect) const;

    // Writes a PNG of exactly `size` pixels of the current view.
    bool saveScreenshot(const QString& path, const QSize& size, QString* error = nullptr);
    // While on, every drawn simulation frame is also written to `directory`/frame_NNNNNN.png
    // (NNNNNN = its step), `size` pixels. An empty directory stops.
    bool setFrameRecording(const QString& directory, const QSize& size, QString* error = nullptr);
    QString frameDirectory() const { return frameDirectory_; }

    // Simulation snapshots drawn so far, and how long the last one took to reach VTK (the
    // surfaces' points and normals, fields, markers; not the render), ms (pbdlab --bench-view).
    std::size_t snapshotsShown() const { return snapshotsShown_; }
    double lastSnapshotMilliseconds() const { return lastSnapshotMs_; }

signals:
    void message(Severity severity, const QString& text);
    // The field needs the air drawn (an air field while the air is hidden).
    void airModeWanted(SceneActors::AirMode mode);
    // Recording stopped because a frame could not be written.
    void frameRecordingFailed();
    // For the status bar: "t = 1.250 s · 4.12 ms/step · 60 fps · max |C| 1.2e-04", after
    // every frame drawn.
    void summaryChanged(const QString& text);

private:
    void sceneLoaded(bool keepHistory);
    void refreshPins();
    void drawConstraints(const ConstraintLines& lines);
    bool fail(const QString& text, QString* error);

    SceneDocument* document_;
    VtkViewport* viewport_;
    FieldPanel* fields_;
    SolverSettingsPanel* status_;
    ConvergencePanel* convergence_;
    std::unique_ptr<SceneActors> actors_;
    std::unique_ptr<RigidActors> rigidActors_;
    std::unique_ptr<SurfaceFieldEvaluator> fieldEvaluator_;
    std::vector<std::vector<double>> fieldValues_; // per body, per triangle, of the shown field
    std::vector<RigidContact> shownRigidContacts_;
    std::size_t shownTopology_ = 0;
    std::size_t shownAirVersion_ = 0;
    // Frames drawn per second, over the last half second or more.
    QElapsedTimer fpsClock_;
    int framesCounted_ = 0;
    std::size_t snapshotsShown_ = 0;
    double lastSnapshotMs_ = 0;
    double framesPerSecond_ = 0;
    std::size_t shownSteps_ = 0;
    bool wireframe_ = false;
    bool rigidContactsShown_ = true;
    Real shownTime_ = 0; // of the snapshot shown (the characters' pose)
    std::array<bool, 4> drawnKinds_{};
    bool colourByLambda_ = false;
    double lockedLo_ = 0;
    double lockedHi_ = 0;
    QString frameDirectory_;
    QSize frameSize_;
    QElapsedTimer frameClock_;
    QTimer frameTimer_;
};

} // namespace pbd
