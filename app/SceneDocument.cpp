#include "app/SceneDocument.h"

#include "app/SimulationWorker.h"
#include "app/commands/CollidersCommand.h"
#include "app/commands/ConstraintsCommand.h"
#include "app/commands/GroupCommand.h"
#include "app/commands/MassesCommand.h"
#include "app/commands/PinCommand.h"
#include "app/commands/SceneCommand.h"
#include "app/commands/SolverSettingsCommand.h"
#include "core/constraints/Attaching.h"
#include "core/constraints/ConstraintBuilders.h"
#include "core/scene/Mass.h"
#include "core/scenes/Garments.h"
#include "core/scenes/Ground.h"
#include "meshing/CharacterImport.h"

#include <QDir>
#include <QUndoStack>

#include <algorithm>
#include <cmath>

namespace pbd {

SceneDocument::SceneDocument(QObject* parent)
    : QObject(parent)
    , undoStack_(new QUndoStack(this))
    , worker_(new SimulationWorker(this)) {
    connect(undoStack_, &QUndoStack::cleanChanged, this, &SceneDocument::updateModified);
}

SceneDocument::~SceneDocument() = default;

Scene SceneDocument::authoredScene() const {
    Scene s = scene_;
    if (restParticles_.size() == s.particles.size()) {
        s.particles.positions = restParticles_.positions;
        s.particles.velocities = restParticles_.velocities;
    }
    s.air = restAir_;
    if (restRigid_.size() == s.rigidBodies.size()) {
        s.rigidBodies = restRigid_;
    }
    return s;
}

void SceneDocument::load(Scene scene, bool keepHistory) {
    emit simulationRestarted(); // worker_->load() below stops the run
    scene_ = std::move(scene);
    selection_.clear(); // particles of the previous scene
    restParticles_ = scene_.particles;
    restAir_ = scene_.air;
    restRigid_ = scene_.rigidBodies;
    if (!keepHistory) {
        projectPath_.clear();
        settingsDirty_ = false;
        undoStack_->clear(); // edits of the previous scene cannot apply to this one
    }
    updateModified();
    for (const std::string& problem : validateScene(scene_)) {
        emit message(Severity::Warning, QString::fromStdString(problem));
    }
    Scene simulated = scene_;
    simulated.solver.threads = threads_;
    worker_->load(simulated);
    emit sceneLoaded(keepHistory);
}

bool SceneDocument::isModified() const {
    return modified_;
}

void SceneDocument::markModified() {
    settingsDirty_ = true;
    updateModified();
}

void SceneDocument::markSaved() {
    settingsDirty_ = false;
    undoStack_->setClean();
    updateModified();
}

void SceneDocument::updateModified() {
    const bool modified = settingsDirty_ || !undoStack_->isClean();
    if (modified != modified_) {
        modified_ = modified;
        emit modifiedChanged(modified);
    }
}

void SceneDocument::setThreads(int threads) {
    threads_ = threads;
    applySimulationSettings();
}

void SceneDocument::applySimulationSettings() {
    worker_->setSettings(scene_.solver.timeStep, scene_.solver.substeps, scene_.solver.iterations,
                         threads_);
}

bool SceneDocument::fail(const QString& text, QString* error, bool log) {
    if (log) {
        emit message(Severity::Error, text);
    }
    if (error) {
        *error = text;
    }
    return false;
}

void SceneDocument::setSelection(std::vector<Index> particles) {
    std::sort(particles.begin(), particles.end());
    particles.erase(std::unique(particles.begin(), particles.end()), particles.end());
    particles.erase(std::remove_if(particles.begin(), particles.end(),
                                   [&](Index p) { return p >= scene_.particles.size(); }),
                    particles.end());
    selection_ = std::move(particles);
    emit selectionChanged();
}

// --- Solver settings -------------------------------------------------------------------------

void SceneDocument::setSolverSettings(const SolverSettings& after) {
    if (SolverSettingsCommand::sameAuthoredSettings(after, scene_.solver)) {
        return;
    }
    undoStack_->push(new SolverSettingsCommand(this, scene_.solver, after));
}

bool SceneDocument::setSelfCollision(bool on, Real thickness, QString* error) {
    if (!(thickness > 0) || !std::isfinite(thickness)) {
        return fail(tr("The cloth thickness must be a number of metres > 0"), error);
    }
    SolverSettings after = scene_.solver;
    after.selfCollision = on;
    after.clothThickness = thickness;
    if (!(after == scene_.solver)) {
        undoStack_->push(new SolverSettingsCommand(this, scene_.solver, after));
    }
    return true;
}

void SceneDocument::applySolverSettings(const SolverSettings& settings) {
    scene_.solver = settings;
    applySimulationSettings();
    worker_->setAirSettings(settings.airOptimizationInterval, settings.airQualityThreshold,
                            settings.airContactDistance, settings.airFriction,
                            settings.airIterations);
    worker_->setRigidSettings(settings.rigid);
    worker_->setExactAngularMomentum(settings.exactAngularMomentum);
    worker_->setContinuousCollision(settings.continuousCollision);
    worker_->setSelfCollision(settings.selfCollision, settings.clothThickness);
    emit solverSettingsChanged();
}

// --- Pins and masses -------------------------------------------------------------------------

bool SceneDocument::isPinned(Index particle) const {
    return particle < scene_.particles.size() && scene_.particles.inverseMasses[particle] == 0;
}

void SceneDocument::togglePin(Index particle) {
    if (particle >= scene_.particles.size()) {
        return;
    }
    const Real w = scene_.particles.inverseMasses[particle];
    if (w > 0) {
        undoStack_->push(new PinCommand(this, particle, w, 0.0));
        return;
    }
    // Unpinning a particle the scene came with pinned: it gets the mean mass of its body's
    // free particles (there is no mass of its own to go back to).
    Real sum = 0;
    std::size_t n = 0;
    for (const Body& body : scene_.bodies) {
        if (particle >= body.firstParticle && particle < body.firstParticle + body.particleCount) {
            for (Index i = body.firstParticle; i < body.firstParticle + body.particleCount; ++i) {
                if (scene_.particles.inverseMasses[i] > 0) {
                    sum += 1 / scene_.particles.inverseMasses[i];
                    ++n;
                }
            }
        }
    }
    const Real mass = n > 0 ? sum / Real(n) : 1.0;
    undoStack_->push(new PinCommand(this, particle, 0.0, 1 / mass));
}

void SceneDocument::applyInverseMass(Index particle, Real inverseMass) {
    if (particle >= scene_.particles.size()) {
        return;
    }
    scene_.particles.inverseMasses[particle] = inverseMass;
    worker_->setInverseMass(particle, inverseMass);
    emit massesChanged(-1);
}

bool SceneDocument::setBodyDensity(int body, Real density, QString* error) {
    if (body < 0 || std::size_t(body) >= scene_.bodies.size()) {
        return fail(tr("There is no body %1").arg(body), error);
    }
    if (!(density > 0) || !std::isfinite(density)) {
        return fail(tr("A density must be a number > 0"), error);
    }
    const Body& b = scene_.bodies[std::size_t(body)];
    // Lumped over the authored (rest) shape, as when the scene was made.
    Scene rest = authoredScene();
    pbd::setBodyDensity(rest.particles, b, density);
    auto range = [&](const Particles& p) {
        return std::vector<Real>(p.inverseMasses.begin() + b.firstParticle,
                                 p.inverseMasses.begin() + b.firstParticle + b.particleCount);
    };
    const bool tets = !b.tets.empty();
    undoStack_->push(new MassesCommand(
        this,
        tr("Set %1 %2 to %3 %4")
            .arg(QString::fromStdString(b.name), tets ? tr("density") : tr("mass per area"))
            .arg(density, 0, 'g', 6)
            .arg(tets ? tr("kg/m³") : tr("kg/m²")),
        body, range(scene_.particles), range(rest.particles)));
    return true;
}

void SceneDocument::applyBodyMasses(int body, const std::vector<Real>& inverseMasses) {
    if (body < 0 || std::size_t(body) >= scene_.bodies.size()) {
        return;
    }
    const Body& b = scene_.bodies[std::size_t(body)];
    for (Index i = 0; i < b.particleCount && i < inverseMasses.size(); ++i) {
        scene_.particles.inverseMasses[b.firstParticle + i] = inverseMasses[i];
        worker_->setInverseMass(b.firstParticle + i, inverseMasses[i]);
    }
    emit massesChanged(body);
}

// --- Constraint groups and attachments -------------------------------------------------------

bool SceneDocument::setConstraintGroup(int index, const ConstraintGroup& group, QString* error) {
    if (index < 0 || std::size_t(index) >= scene_.constraintGroups.size()) {
        return fail(tr("There is no constraint group %1").arg(index), error);
    }
    const ConstraintGroup& before = scene_.constraintGroups[std::size_t(index)];
    if (group.type != before.type || group.body != before.body) {
        return fail(tr("A constraint group keeps its type and body"), error);
    }
    Scene check;
    check.constraintGroups = {group};
    check.bodies.resize(std::max(0, group.body + 1));
    if (const auto problems = validateConstraintGroups(check); !problems.empty()) {
        return fail(QString::fromStdString(problems.front()), error);
    }
    if (group == before) {
        return true;
    }
    undoStack_->push(new GroupCommand(this, index, before, group));
    return true;
}

void SceneDocument::applyGroup(int index, const ConstraintGroup& group) {
    if (index < 0 || std::size_t(index) >= scene_.constraintGroups.size()) {
        return;
    }
    scene_.constraintGroups[std::size_t(index)] = group;
    applyConstraintGroup(scene_.constraints, index, group);
    worker_->setConstraintGroup(index, group);
    emit groupChanged(index);
}

bool SceneDocument::addConstraintGroup(int body, ConstraintType type, QString* error) {
    // Generated from the rest state, like the scene's own constraints.
    Scene rest = authoredScene();
    const Result<int> added = pbd::addConstraintGroup(rest, body, type);
    if (!added) {
        return fail(QString::fromStdString(added.error()), error, true);
    }
    const ConstraintGroup& g = rest.constraintGroups[std::size_t(*added)];
    undoStack_->push(new ConstraintsCommand(
        this,
        tr("Add %1 (%2 constraints)")
            .arg(QString::fromStdString(g.name))
            .arg(constraintGroupSize(rest.constraints, *added)),
        {scene_.constraints, scene_.constraintGroups, scene_.rigidAttachments},
        {rest.constraints, rest.constraintGroups, scene_.rigidAttachments}, *added));
    return true;
}

bool SceneDocument::setBendingModel(BendingModel model, QString* error) {
    if (scene_.constraints.bending.model == model) {
        return true;
    }
    if (scene_.constraints.bending.size() == 0) {
        return fail(tr("The scene has no bending constraints to give the %1 model")
                        .arg(QString::fromUtf8(toString(model).data())),
                    error);
    }
    // From the rest state, like the scene's own constraints.
    Scene rest = authoredScene();
    pbd::setBendingModel(rest.constraints, rest.particles.positions, model);
    undoStack_->push(new ConstraintsCommand(
        this,
        tr("Bending model: %1 (%2 hinges)")
            .arg(QString::fromUtf8(toString(model).data()))
            .arg(rest.constraints.bending.size()),
        {scene_.constraints, scene_.constraintGroups, scene_.rigidAttachments},
        {rest.constraints, rest.constraintGroups, scene_.rigidAttachments}, -1));
    return true;
}

bool SceneDocument::removeConstraintGroup(int index, QString* error) {
    if (index < 0 || std::size_t(index) >= scene_.constraintGroups.size()) {
        return fail(tr("There is no constraint group %1").arg(index), error);
    }
    Scene edited;
    edited.constraints = scene_.constraints;
    edited.constraintGroups = scene_.constraintGroups;
    pbd::removeConstraintGroup(edited, index);
    undoStack_->push(new ConstraintsCommand(
        this,
        tr("Remove %1")
            .arg(QString::fromStdString(scene_.constraintGroups[std::size_t(index)].name)),
        {scene_.constraints, scene_.constraintGroups, scene_.rigidAttachments},
        {edited.constraints, edited.constraintGroups, scene_.rigidAttachments}, -1));
    return true;
}

bool SceneDocument::attachSelection(AttachTarget target, int index, QString* error) {
    if (selection_.empty()) {
        return fail(tr("Nothing to attach: select vertices first (Edit ▸ Select Vertices, then "
                       "click or drag a box in the view)"),
                    error, true);
    }
    // Made from the authored (rest) state, like the scene's own constraints.
    Scene rest = authoredScene();
    Result<AttachResult> made = Error{"unknown attachment"};
    QString what;
    auto nameOf = [](const auto& items, int i) {
        return i >= 0 && std::size_t(i) < items.size()
                   ? tr("to %1").arg(QString::fromStdString(items[std::size_t(i)].name))
                   : QString();
    };
    switch (target) {
    case AttachTarget::Points:
        made = attachToPoints(rest, selection_);
        what = tr("to their place");
        break;
    case AttachTarget::Collider:
        made = attachToCollider(rest, selection_, index);
        what = nameOf(rest.colliders, index);
        break;
    case AttachTarget::Body:
        made = attachToBody(rest, selection_, index);
        what = nameOf(rest.bodies, index);
        break;
    case AttachTarget::RigidBody:
        made = attachToRigidBody(rest, selection_, index);
        what = nameOf(rest.rigidBodies, index);
        break;
    case AttachTarget::Character:
        // Held where they are relative to the closest point of the skin as the authored scene
        // poses it, and carried with the dance (a garment pinned at its waist or shoulders).
        made = attachToCharacter(rest, selection_, index);
        what = nameOf(rest.characters, index);
        break;
    }
    if (!made) {
        return fail(QString::fromStdString(made.error()), error, true);
    }
    const QString text = tr("Attach %n vertices %1", nullptr, int(made->added)).arg(what);
    if (target == AttachTarget::Character) {
        // The pins' places on the skin are the character's (Character::pins): the whole
        // authored scene is the undo step.
        replaceScene(text, rest);
    } else {
        undoStack_->push(new ConstraintsCommand(
            this, text, {scene_.constraints, scene_.constraintGroups, scene_.rigidAttachments},
            {rest.constraints, rest.constraintGroups, rest.rigidAttachments}, made->group));
    }
    emit message(Severity::Info, made->skipped == 0 ? text
                                                    : tr("%1 (%2 attached already, left as "
                                                         "they were)")
                                                          .arg(text)
                                                          .arg(made->skipped));
    emit selectionChanged(); // drawn again over the rebuilt constraints
    return true;
}

void SceneDocument::replaceConstraints(const ConstraintSet& constraints,
                                       const std::vector<ConstraintGroup>& groups,
                                       const std::vector<RigidAttachment>& rigidAttachments,
                                       int select) {
    scene_.constraints = constraints;
    scene_.constraintGroups = groups;
    scene_.rigidAttachments = rigidAttachments;
    // The simulation starts again from the authored state with the new constraints (the load
    // stops the run).
    emit simulationRestarted();
    worker_->load(authoredScene());
    emit constraintsReplaced(select);
}

// --- Colliders -------------------------------------------------------------------------------

bool SceneDocument::setCollider(int index, const Collider& collider, QString* error) {
    if (index < 0 || std::size_t(index) >= scene_.colliders.size()) {
        return fail(tr("There is no collider %1").arg(index), error);
    }
    if (const std::string problem = checkCollider(collider); !problem.empty()) {
        return fail(QString::fromStdString(problem), error);
    }
    const Collider& before = scene_.colliders[std::size_t(index)];
    if (collider.shape != before.shape) {
        return fail(tr("A collider keeps its shape"), error);
    }
    std::vector<Collider> after = scene_.colliders;
    after[std::size_t(index)] = collider;
    undoStack_->push(new CollidersCommand(this, CollidersCommand::describeEdit(before, collider),
                                          scene_.colliders, after, index, index));
    return true;
}

bool SceneDocument::addCollider(ColliderShape shape, QString* error) {
    if (shape == ColliderShape::Mesh) {
        return fail(tr("A mesh collider comes from a mesh file, not from the menu"), error);
    }
    Bounds bodies;
    for (const Body& b : scene_.bodies) {
        if (b.kind != BodyKind::Collider) {
            bodies.add(scene_.bounds(b));
        }
    }
    Collider c = defaultCollider(shape, bodies);
    // A name not taken yet: "sphere", "sphere 2", ...
    auto taken = [&](const std::string& name) {
        return std::any_of(scene_.colliders.begin(), scene_.colliders.end(),
                           [&](const Collider& o) { return o.name == name; });
    };
    for (int n = 2; taken(c.name); ++n) {
        c.name = std::string(toString(shape)) + " " + std::to_string(n);
    }
    std::vector<Collider> after = scene_.colliders;
    after.push_back(c);
    undoStack_->push(new CollidersCommand(
        this,
        tr("Add collider %1 at %2")
            .arg(QString::fromStdString(c.name), CollidersCommand::vectorText(colliderPosition(c))),
        scene_.colliders, after, int(after.size()) - 1, -1));
    return true;
}

bool SceneDocument::addMeshCollider(const QString& path, double scale, QString* error) {
    ImportOptions options;
    options.scale = scale;
    Result<Collider> c =
        meshColliderFromFile(QDir::toNativeSeparators(path).toStdString(), options);
    if (!c) {
        return fail(QString::fromStdString(c.error()), error, true);
    }
    std::vector<Collider> after = scene_.colliders;
    after.push_back(std::move(c).value());
    undoStack_->push(new CollidersCommand(this,
                                          tr("Add mesh collider %1 (%2 triangles)")
                                              .arg(QString::fromStdString(after.back().name))
                                              .arg(after.back().triangles.size()),
                                          scene_.colliders, after, int(after.size()) - 1, -1));
    return true;
}

bool SceneDocument::addCharacter(const QString& path, const QString& edits, QString* error) {
    Scene after = authoredScene();
    QString spec = QDir::toNativeSeparators(path);
    if (!edits.trimmed().isEmpty()) {
        spec += QLatin1Char(',') + edits.trimmed();
    }
    Result<int> added = addCharacterFromSpec(after, spec.toStdString());
    if (!added) {
        return fail(QString::fromStdString(added.error()), error, true);
    }
    const Character& c = after.characters[std::size_t(*added)];
    QString clip = tr("its rest pose");
    if (c.clip >= 0 && std::size_t(c.clip) < c.clips.size()) {
        clip = tr("clip '%1'").arg(QString::fromStdString(c.clips[std::size_t(c.clip)].name));
    }
    replaceScene(tr("Add character %1 (%2 triangles, %3)")
                     .arg(QString::fromStdString(c.name))
                     .arg(c.triangleCount())
                     .arg(clip),
                 after);
    return true;
}

bool SceneDocument::addSkirt(const QString& edits, QString* error) {
    Scene after = authoredScene();
    Result<std::size_t> added = addSkirtFromSpec(after, edits.toStdString());
    if (!added) {
        return fail(tr("Add Skirt: %1").arg(QString::fromStdString(added.error())), error, true);
    }
    std::size_t layers = 0, triangles = 0;
    for (std::size_t b = *added; b < after.bodies.size(); ++b) {
        ++layers;
        triangles += after.bodies[b].triangles.size();
    }
    replaceScene(
        tr("Add a skirt of %n layer(s) (%1 triangles)", nullptr, int(layers)).arg(triangles),
        after);
    return true;
}

bool SceneDocument::removeCollider(int index, QString* error) {
    if (index < 0 || std::size_t(index) >= scene_.colliders.size()) {
        return fail(tr("There is no collider %1").arg(index), error);
    }
    std::vector<Collider> after = scene_.colliders;
    after.erase(after.begin() + index);
    undoStack_->push(new CollidersCommand(
        this,
        tr("Remove collider %1")
            .arg(QString::fromStdString(scene_.colliders[std::size_t(index)].name)),
        scene_.colliders, after, -1, index));
    return true;
}

bool SceneDocument::setGround(bool on, QString* error) {
    if (on == hasGround(scene_)) {
        return fail(on ? tr("The scene has a ground already") : tr("The scene has no ground"),
                    error);
    }
    const Scene before = authoredScene();
    Scene after = before;
    const Real height = groundHeight(before);
    if (on) {
        addGround(after, height);
    } else {
        removeGround(after);
    }
    const QString text =
        on ? tr("Add the ground at y = %1 m").arg(height) : tr("Remove the ground");
    if (after.rigidBodies.size() == before.rigidBodies.size()) {
        undoStack_->push(
            new CollidersCommand(this, text, before.colliders, after.colliders, -1, -1));
    } else {
        undoStack_->push(new SceneCommand(this, text, before, after));
    }
    return true;
}

void SceneDocument::applyColliders(const std::vector<Collider>& colliders, int select) {
    scene_.colliders = colliders;
    worker_->setColliders(colliders);
    emit collidersChanged(select);
}

// --- The air ---------------------------------------------------------------------------------

bool SceneDocument::addAirMesh(const AirOptions& options, const WorkRunner& run, QString* error) {
    if (!scene_.air.empty()) {
        return fail(tr("The scene has an air mesh already"), error, true);
    }
    const Scene before = authoredScene();
    Scene after = before;
    Result<AirReport> air = Error{"not run"};
    run([&](const ProgressCallback& progress) { air = tessellateAir(after, options, progress); });
    if (!air) {
        return fail(
            tr("cannot tessellate the air of '%1': %2")
                .arg(QString::fromStdString(scene_.name), QString::fromStdString(air.error())),
            error, true);
    }
    undoStack_->push(new SceneCommand(
        this, tr("Tessellate the air (%1 tets)").arg(after.air.size()), before, after));
    emit message(Severity::Info, tr("Tessellated the air: %1 air tets, %2 new particles")
                                     .arg(after.air.size())
                                     .arg(after.air.particleCount));
    return true;
}

void SceneDocument::replaceScene(const QString& text, const Scene& after) {
    undoStack_->push(new SceneCommand(this, text, authoredScene(), after));
}

} // namespace pbd
