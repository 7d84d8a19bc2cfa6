#include "app/SceneView.h"

#include "app/SceneDocument.h"
#include "app/SimulationWorker.h"
#include "widgets/ConvergencePanel.h"
#include "widgets/FieldPanel.h"
#include "widgets/RigidActors.h"
#include "widgets/SolverSettingsPanel.h"
#include "widgets/VtkViewport.h"

#include <QDir>
#include <QFileInfo>
#include <QImageWriter>
#include <QRectF>

#include <cmath>
#include <limits>

namespace pbd {

SceneView::SceneView(SceneDocument* document, VtkViewport* viewport, FieldPanel* fields,
                     SolverSettingsPanel* status, ConvergencePanel* convergence, QObject* parent)
    : QObject(parent)
    , document_(document)
    , viewport_(viewport)
    , fields_(fields)
    , status_(status)
    , convergence_(convergence)
    , actors_(std::make_unique<SceneActors>(viewport->renderer()))
    , rigidActors_(std::make_unique<RigidActors>(viewport->renderer())) {
    frameTimer_.setSingleShot(true);
    connect(&frameTimer_, &QTimer::timeout, this, &SceneView::showSnapshot);
    // A moving camera's frames of a heavy view draw the big bodies coarser; every other frame,
    // and anything picked between frames, sees them whole.
    connect(viewport_, &VtkViewport::frameStarting, this, [this](bool moving) {
        actors_->setCoarse(moving);
        actors_->setPixelScale(moving ? viewport_->movingResolution() : 1.0);
    });
    connect(viewport_, &VtkViewport::frameRendered, this, [this] {
        actors_->setCoarse(false);
        actors_->setPixelScale(1);
    });
    connect(document_->worker(), &SimulationWorker::snapshotReady, this, &SceneView::showSnapshot,
            Qt::QueuedConnection);
    connect(document_, &SceneDocument::sceneLoaded, this, &SceneView::sceneLoaded);
    connect(document_, &SceneDocument::massesChanged, this, [this] {
        refreshPins();
        viewport_->update();
    });
    connect(document_, &SceneDocument::collidersChanged, this, [this](int select) {
        actors_->setColliders(document_->scene(), select);
        viewport_->update();
    });
    connect(document_, &SceneDocument::selectionChanged, this, [this] {
        actors_->setSelected(document_->scene(), document_->selection());
        viewport_->update();
    });
    connect(fields_, &FieldPanel::fieldChanged, this, [this] {
        applyField();
        viewport_->update();
    });
    connect(fields_, &FieldPanel::clipChanged, this, &SceneView::applyClip);
}

SceneView::~SceneView() = default;

void SceneView::sceneLoaded(bool keepHistory) {
    const Scene& scene = document_->scene();
    const bool planar = !scene.air.triangles.empty();
    const bool wasPlanar = viewport_->planar();
    shownRigidContacts_.clear();
    actors_->setScene(scene);
    rigidActors_->setScene(scene);
    rigidActors_->setContactsShown(rigidContactsShown_);
    refreshPins();
    applyClip();
    actors_->setWireframe(wireframe_);
    if (!keepHistory || wasPlanar != planar) {
        viewport_->setPlanar(planar); // resets the camera
    }
    fieldEvaluator_ = std::make_unique<SurfaceFieldEvaluator>(scene);
    applyField();
    const auto loaded = document_->worker()->latest();
    shownTopology_ = loaded->topologyVersion;
    shownAirVersion_ = loaded->airVersion;
    shownSteps_ = 0;
    status_->setStatus(tr("Paused · Space: play · .: step · Home: reset"));
}

void SceneView::refreshPins() {
    const Scene& scene = document_->scene();
    std::vector<Index> pinned;
    for (const Body& body : scene.bodies) {
        if (body.kind != BodyKind::Cloth && body.kind != BodyKind::TetBody) {
            continue; // colliders and bare surfaces do not move anyway
        }
        for (Index i = body.firstParticle;
             i < body.firstParticle + body.particleCount && i < scene.particles.size(); ++i) {
            if (scene.particles.inverseMasses[i] == 0) {
                pinned.push_back(i);
            }
        }
    }
    actors_->setPinned(scene, pinned);
    actors_->setSelected(scene, document_->selection()); // drawn again after the rebuild
}

void SceneView::showSnapshotNow() {
    frameClock_.invalidate();
    showSnapshot();
}

void SceneView::showSnapshot() {
    // At most ~30 redraws a second: the solver may publish hundreds of steps a second, and
    // drawing each would leave the window no time for the user.
    constexpr qint64 kFrameMs = 33;
    if (frameClock_.isValid() && frameClock_.elapsed() < kFrameMs) {
        if (!frameTimer_.isActive()) {
            frameTimer_.start(static_cast<int>(kFrameMs - frameClock_.elapsed()));
        }
        return;
    }
    frameClock_.start();
    const auto snapshot = document_->worker()->latest();
    if (!snapshot) {
        return;
    }
    QElapsedTimer updateClock;
    updateClock.start();
    Scene& scene = document_->simulatedScene();
    const bool airMoved = snapshot->airTets && snapshot->airVersion != shownAirVersion_;
    if (airMoved) {
        scene.air.tets = *snapshot->airTets;
        if (snapshot->airTriangles) {
            scene.air.triangles = *snapshot->airTriangles;
        }
        shownAirVersion_ = snapshot->airVersion;
    }
    if (snapshot->topologyVersion != shownTopology_ && snapshot->bodies) {
        scene.bodies = *snapshot->bodies;
        scene.particles.positions = snapshot->positions;
        scene.particles.velocities.resize(snapshot->positions.size(), Vec3::Zero());
        scene.particles.inverseMasses.resize(snapshot->positions.size(), 0.0);
        actors_->setScene(scene);
        actors_->setWireframe(wireframe_);
        refreshPins();
        shownTopology_ = snapshot->topologyVersion;
    } else if (snapshot->positions.size() == scene.particles.positions.size()) {
        scene.particles.positions = snapshot->positions;
        poseCharacters(scene, snapshot->time); // the skins move with the time shown
        if (airMoved) {
            actors_->setAirTets(scene);
        }
        actors_->updatePositions(scene);
        actors_->updateSkeletons(scene, snapshot->time);
    }
    if (snapshot->rigidPoses.size() == scene.rigidBodies.size() && !scene.rigidBodies.empty()) {
        for (std::size_t i = 0; i < scene.rigidBodies.size(); ++i) {
            RigidBody& b = scene.rigidBodies[i];
            const SimulationSnapshot::RigidPose& p = snapshot->rigidPoses[i];
            b.x = p.x;
            b.q = p.q;
            b.v = p.v;
            b.omega = p.omega;
            b.sleeping = p.sleeping;
        }
        shownRigidContacts_ = snapshot->rigidContacts;
        rigidActors_->update(scene, shownRigidContacts_, snapshot->rigidSubstep);
    }
    applyField();
    if (snapshot->constraints) {
        drawConstraints(*snapshot->constraints);
    }
    convergence_->showErrors(snapshot->convergence);
    const bool newFrame = snapshot->steps != shownSteps_;
    shownSteps_ = snapshot->steps;
    shownTime_ = snapshot->time;
    if (!frameDirectory_.isEmpty() && newFrame) {
        const QString path =
            QDir(frameDirectory_)
                .filePath(
                    QStringLiteral("frame_%1.png").arg(snapshot->steps, 6, 10, QLatin1Char('0')));
        if (!saveScreenshot(path, frameSize_)) {
            setFrameRecording(QString(), QSize()); // the error is in the Log; stop, do not flood it
            emit frameRecordingFailed();
        }
    }
    QString status = tr("t = %1 s · step %2 · %3 steps/s · %4 ms/step")
                         .arg(snapshot->time, 0, 'f', 3)
                         .arg(snapshot->steps)
                         .arg(snapshot->stepsPerSecond, 0, 'f', 0)
                         .arg(snapshot->lastStepMilliseconds, 0, 'f', 2);
    if (!scene.air.empty()) {
        status += tr("\nair: %1 inverted before solving, %2 after, %3 projections")
                      .arg(snapshot->air.invertedBefore)
                      .arg(snapshot->air.invertedAfter)
                      .arg(snapshot->air.projections);
        if (snapshot->air.contacts > 0) {
            status += tr(", %1 contacts").arg(snapshot->air.contacts);
        }
        if (snapshot->air.invertedFixed > 0) {
            // Air between parts of an animated skin that folded through itself: no corner of
            // it can move, so the solver cannot mend it (not in "after").
            status += tr(", %1 inverted by the skin's animation").arg(snapshot->air.invertedFixed);
        }
        if (scene.solver.airOptimizationInterval <= 0) {
            status += tr("\nair optimisation off");
        } else if (snapshot->airOptimizationPasses > 0) {
            status += tr("\nair optimisation: %1 tets, %2 changes in the last pass (%3 ms)")
                          .arg(scene.air.tets.size())
                          .arg(snapshot->airOptimization.changes())
                          .arg(snapshot->airOptimization.milliseconds, 0, 'f', 2);
        }
    }
    status_->setStatus(status);
    lastSnapshotMs_ = double(updateClock.nsecsElapsed()) / 1e6;
    ++snapshotsShown_;
    viewport_->update();
    if (!fpsClock_.isValid()) {
        fpsClock_.start();
    }
    ++framesCounted_;
    if (fpsClock_.elapsed() >= 500) {
        framesPerSecond_ = 1000.0 * framesCounted_ / double(fpsClock_.restart());
        framesCounted_ = 0;
    }
    emit summaryChanged(tr("t = %1 s · %2 ms/step · %3 fps · max |C| %4")
                            .arg(snapshot->time, 0, 'f', 3)
                            .arg(snapshot->lastStepMilliseconds, 0, 'f', 2)
                            .arg(framesPerSecond_, 0, 'f', 0)
                            .arg(snapshot->constraintError, 0, 'g', 2));
}

void SceneView::setWireframe(bool on) {
    wireframe_ = on;
    actors_->setWireframe(on);
    viewport_->update();
}

void SceneView::setRigidContactsShown(bool on) {
    rigidContactsShown_ = on;
    rigidActors_->setContactsShown(on);
    viewport_->update();
}

void SceneView::setSkeletonsShown(bool on) {
    actors_->setSkeletons(document_->scene(), shownTime_, on);
    viewport_->update();
}

void SceneView::setFrameGlyphs(bool on) {
    actors_->setFrameGlyphs(document_->scene(), on);
    viewport_->update();
}

void SceneView::setAirMode(SceneActors::AirMode mode) {
    actors_->setAirMode(mode);
    viewport_->update();
    const Scene& scene = document_->scene();
    if (mode != SceneActors::AirMode::Hidden && !scene.air.empty()) {
        emit message(actors_->invertedAirTets() > 0 ? Severity::Warning : Severity::Info,
                     tr("Air mesh: %1 tets, %2 inverted (drawn red)")
                         .arg(scene.air.tets.size())
                         .arg(actors_->invertedAirTets()));
    }
}

void SceneView::setConstraintDrawing(const std::array<bool, 4>& kinds, bool byLambda) {
    drawnKinds_ = kinds;
    colourByLambda_ = byLambda;
    const bool any = std::find(kinds.begin(), kinds.end(), true) != kinds.end();
    document_->worker()->setRecordConstraints(any); // publishes the state again with its lines
    if (!any) {
        actors_->hideConstraintLines();
        viewport_->update();
    } else if (const auto snapshot = document_->worker()->latest();
               snapshot && snapshot->constraints) {
        drawConstraints(*snapshot->constraints);
    }
}

void SceneView::drawConstraints(const ConstraintLines& lines) {
    if (std::find(drawnKinds_.begin(), drawnKinds_.end(), true) == drawnKinds_.end()) {
        return;
    }
    actors_->setConstraintLines(lines, drawnKinds_, colourByLambda_);
    viewport_->update();
}

void SceneView::applyClip() {
    const Scene& scene = document_->scene();
    const int axis = fields_->clipAxis();
    const Bounds b = scene.bounds();
    Vec3 normal = Vec3::Zero();
    normal[axis] = 1;
    Vec3 origin = b.center();
    if (!b.empty()) {
        origin[axis] = b.min[axis] + (b.max[axis] - b.min[axis]) * fields_->clipPosition();
    }
    actors_->setClip(scene, fields_->clipEnabled(), normal, origin);
    viewport_->update();
}

void SceneView::applyField() {
    if (!fieldEvaluator_) {
        return;
    }
    const Scene& scene = document_->scene();
    const auto field = kSurfaceFields[std::size_t(fields_->fieldIndex())];
    if (field == SurfaceField::None) {
        actors_->clearFields();
        actors_->setAirField({});
        fieldValues_.clear();
        return;
    }
    double customLo = 0, customHi = 0;
    const bool custom = fields_->customRange(customLo, customHi);
    if (isAirField(field)) {
        // On the air mesh: the bodies go plain, the air is shown (translucent) and coloured.
        actors_->clearFields();
        fieldValues_.clear();
        if (actors_->airMode() == SceneActors::AirMode::Hidden && !scene.air.empty()) {
            emit airModeWanted(SceneActors::AirMode::Transparent);
        }
        const std::vector<Real> air = fieldEvaluator_->evaluateAir(scene, field);
        double m = 0;
        for (Real v : air) {
            m = std::max(m, std::isfinite(v) ? std::abs(v) : 0.0);
        }
        const double lo = custom ? customLo : -m, hi = custom ? customHi : m;
        actors_->setFieldMap(fields_->fieldLabel(), lo, hi, true, fields_->colourMap());
        actors_->setAirField(std::vector<double>(air.begin(), air.end()));
        return;
    }
    actors_->setAirField({});
    std::vector<std::vector<double>> values(scene.bodies.size());
    double lo = std::numeric_limits<double>::infinity();
    double hi = -lo;
    for (std::size_t b = 0; b < scene.bodies.size() && b < actors_->bodyCount(); ++b) {
        values[b] = fieldEvaluator_->evaluate(scene, b, field);
        for (double v : values[b]) {
            if (std::isfinite(v)) {
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
        }
    }
    if (isSigned(field)) { // centred on zero
        const double m = std::max(std::abs(lo), std::abs(hi));
        lo = -m;
        hi = m;
    }
    if (custom) {
        lo = customLo;
        hi = customHi;
    } else if (fields_->rangeLocked() && actors_->fieldShown()) {
        lo = lockedLo_;
        hi = lockedHi_;
    } else {
        lockedLo_ = lo;
        lockedHi_ = hi;
    }
    fields_->showRange(lo, hi); // the range in use, to start a custom one from
    fieldValues_ = values;
    actors_->setFieldMap(fields_->fieldLabel(), lo, hi, isSigned(field), fields_->colourMap());
    for (std::size_t b = 0; b < values.size() && b < actors_->bodyCount(); ++b) {
        if (!values[b].empty()) {
            actors_->setBodyField(b, values[b]);
        }
    }
}

bool SceneView::setField(const QString& name, QString* error) {
    if (!fields_->selectField(name)) {
        QStringList names;
        for (SurfaceField f : kSurfaceFields) {
            names << QString::fromUtf8(toString(f).data(), qsizetype(toString(f).size()));
        }
        if (error) {
            *error =
                tr("unknown field '%1' (fields: %2)").arg(name, names.join(QStringLiteral(", ")));
        }
        return false;
    }
    applyField();
    viewport_->update();
    return true;
}

std::optional<SceneView::PickedVertex> SceneView::vertexAt(const QPointF& position) const {
    const Scene& scene = document_->scene();
    const VtkViewport::Pick pick = viewport_->pick(position);
    const long body = actors_->bodyOf(pick.actor);
    if (body < 0 || std::size_t(body) >= scene.bodies.size() || pick.cell < 0) {
        return std::nullopt;
    }
    const Body& b = scene.bodies[std::size_t(body)];
    PickedVertex v;
    v.body = std::size_t(body);
    if (b.triangles.empty()) { // particles drawn as points: the cell is the particle
        v.particle = b.firstParticle + Index(pick.cell);
        return v;
    }
    if (std::size_t(pick.cell) >= b.triangles.size()) {
        return std::nullopt;
    }
    v.triangle = long(pick.cell);
    const Vec3 hit(pick.position[0], pick.position[1], pick.position[2]);
    Real best = std::numeric_limits<Real>::infinity();
    for (Index corner : b.triangles[std::size_t(pick.cell)]) {
        const Real d = (scene.particles.positions[corner] - hit).norm();
        if (d < best) {
            best = d;
            v.particle = corner;
        }
    }
    return v;
}

QString SceneView::describeVertex(const PickedVertex& v) const {
    const Scene& scene = document_->scene();
    const Body& body = scene.bodies.at(v.body);
    const Vec3& p = scene.particles.positions.at(v.particle);
    const Real w = scene.particles.inverseMasses.at(v.particle);
    QString text =
        tr("%1 '%2' · particle %3 (local %4) · (%5, %6, %7) m · ")
            .arg(QString::fromUtf8(toString(body.kind).data()), QString::fromStdString(body.name))
            .arg(v.particle)
            .arg(v.particle - body.firstParticle)
            .arg(p.x(), 0, 'f', 4)
            .arg(p.y(), 0, 'f', 4)
            .arg(p.z(), 0, 'f', 4);
    text += w > 0 ? tr("mass %1 kg").arg(1 / w, 0, 'g', 4) : tr("pinned");
    if (v.triangle >= 0) {
        text += tr(" · triangle %1").arg(v.triangle);
        if (v.body < fieldValues_.size() && std::size_t(v.triangle) < fieldValues_[v.body].size()) {
            text += tr(" · %1 = %2")
                        .arg(fields_->fieldLabel())
                        .arg(fieldValues_[v.body][std::size_t(v.triangle)], 0, 'g', 5);
        }
    }
    return text;
}

std::vector<Index> SceneView::particlesIn(const QRectF& rect) const {
    const Scene& scene = document_->scene();
    std::vector<Index> inside;
    for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
        const Body& body = scene.bodies[b];
        if (b < actors_->bodyCount() && !actors_->bodyVisible(b)) {
            continue; // hidden bodies are not selected
        }
        for (Index p = body.firstParticle;
             p < body.firstParticle + body.particleCount && p < scene.particles.size(); ++p) {
            QPointF at;
            if (viewport_->project(scene.particles.positions[p].data(), at) && rect.contains(at)) {
                inside.push_back(p);
            }
        }
    }
    return inside;
}

bool SceneView::fail(const QString& text, QString* error) {
    emit message(Severity::Error, text);
    if (error) {
        *error = text;
    }
    return false;
}

bool SceneView::saveScreenshot(const QString& path, const QSize& size, QString* error) {
    if (size.width() < 1 || size.height() < 1 || size.width() > 16384 || size.height() > 16384) {
        return fail(tr("cannot save screenshot: size %1x%2 is outside 1..16384")
                        .arg(size.width())
                        .arg(size.height()),
                    error);
    }
    const QFileInfo target(path);
    if (!target.absoluteDir().exists()) {
        return fail(tr("cannot save screenshot '%1': folder '%2' does not exist")
                        .arg(path, QDir::toNativeSeparators(target.absolutePath())),
                    error);
    }
    const QImage image = viewport_->renderImage(size);
    if (image.isNull()) {
        return fail(tr("cannot save screenshot: the 3D view could not render (no OpenGL context)"),
                    error);
    }
    QImageWriter writer(path, "png");
    if (!writer.write(image)) {
        return fail(tr("cannot save screenshot '%1': %2").arg(path, writer.errorString()), error);
    }
    emit message(Severity::Info,
                 tr("Saved screenshot %1 (%2x%3)").arg(path).arg(size.width()).arg(size.height()));
    return true;
}

bool SceneView::setFrameRecording(const QString& directory, const QSize& size, QString* error) {
    if (directory.isEmpty()) {
        if (!frameDirectory_.isEmpty()) {
            emit message(Severity::Info, tr("Stopped recording frames to %1")
                                             .arg(QDir::toNativeSeparators(frameDirectory_)));
        }
        frameDirectory_.clear();
        return true;
    }
    if (!QDir(directory).exists() && !QDir().mkpath(directory)) {
        return fail(tr("cannot record frames: folder '%1' cannot be created")
                        .arg(QDir::toNativeSeparators(directory)),
                    error);
    }
    frameDirectory_ = directory;
    frameSize_ = size;
    emit message(Severity::Info, tr("Recording frames (%1 x %2) to %3")
                                     .arg(size.width())
                                     .arg(size.height())
                                     .arg(QDir::toNativeSeparators(directory)));
    return true;
}

} // namespace pbd
