#include "app/commands/SolverSettingsCommand.h"

#include "app/SceneDocument.h"

#include <QObject>

namespace pbd {

namespace {

// What a settings edit changed: a key (for merging) and its undo text.
std::pair<QString, QString> describeSettingsEdit(const SolverSettings& a, const SolverSettings& b) {
    auto number = [](double v) { return QString::number(v, 'g', 6); };
    auto onOff = [](bool on, const QString& what) {
        return (on ? QObject::tr("Enable %1") : QObject::tr("Disable %1")).arg(what);
    };
    if (a.timeStep != b.timeStep) {
        return {"timeStep", QObject::tr("Set time step to %1 ms").arg(number(b.timeStep * 1000))};
    }
    if (a.substeps != b.substeps) {
        return {"substeps", QObject::tr("Set substeps to %1").arg(b.substeps)};
    }
    if (a.iterations != b.iterations) {
        return {"iterations", QObject::tr("Set iterations to %1").arg(b.iterations)};
    }
    if (a.continuousCollision != b.continuousCollision) {
        return {"continuous", onOff(b.continuousCollision, QObject::tr("continuous collision"))};
    }
    if (a.exactAngularMomentum != b.exactAngularMomentum) {
        return {"exact", onOff(b.exactAngularMomentum, QObject::tr("exact angular momentum"))};
    }
    if (a.airOptimizationInterval != b.airOptimizationInterval) {
        return {"airInterval",
                QObject::tr("Set air optimisation interval to %1").arg(b.airOptimizationInterval)};
    }
    if (a.airIterations != b.airIterations) {
        return {"airIterations",
                b.airIterations < 0 ? QObject::tr("Set air iterations as the constraints'")
                : b.airIterations == 0
                    ? QObject::tr("Turn the air off")
                    : QObject::tr("Set air iterations to %1").arg(b.airIterations)};
    }
    if (a.airQualityThreshold != b.airQualityThreshold) {
        return {"airThreshold",
                QObject::tr("Set air quality threshold to %1").arg(number(b.airQualityThreshold))};
    }
    if (a.airContactDistance != b.airContactDistance) {
        return {"airDistance", QObject::tr("Set air contact distance to %1 mm")
                                   .arg(number(b.airContactDistance * 1000))};
    }
    if (a.airFriction != b.airFriction) {
        return {"airFriction", QObject::tr("Set air friction to %1").arg(number(b.airFriction))};
    }
    if (a.rigid.iterations != b.rigid.iterations) {
        return {"pgs", QObject::tr("Set PGS sweeps to %1").arg(b.rigid.iterations)};
    }
    if (a.rigid.substeps != b.rigid.substeps) {
        return {"rigidSubsteps", QObject::tr("Set rigid substeps to %1").arg(b.rigid.substeps)};
    }
    if (a.rigid.contactHertz != b.rigid.contactHertz) {
        return {"contactHertz",
                b.rigid.contactHertz > 0
                    ? QObject::tr("Set soft contacts to %1 Hz").arg(number(b.rigid.contactHertz))
                    : QObject::tr("Set rigid contacts")};
    }
    if (a.rigid.warmStart != b.rigid.warmStart) {
        return {"warm", onOff(b.rigid.warmStart, QObject::tr("warm starting"))};
    }
    if (a.rigid.separatePush != b.rigid.separatePush) {
        return {"separatePush", onOff(b.rigid.separatePush, QObject::tr("the separate push"))};
    }
    if (a.rigid.stabilisation != b.rigid.stabilisation) {
        return {"stabilisation",
                QObject::tr("Set stack stabilisation to %1")
                    .arg(QString::fromUtf8(toString(b.rigid.stabilisation).data(),
                                           toString(b.rigid.stabilisation).size()))};
    }
    if (a.rigid.sleeping != b.rigid.sleeping) {
        return {"sleeping", onOff(b.rigid.sleeping, QObject::tr("sleeping"))};
    }
    if (a.rigid.aggressiveSleep != b.rigid.aggressiveSleep) {
        return {"aggressive", onOff(b.rigid.aggressiveSleep, QObject::tr("aggressive sleep"))};
    }
    if (a.selfCollision != b.selfCollision) {
        return {"selfCollision", onOff(b.selfCollision, QObject::tr("self-collision"))};
    }
    if (a.clothThickness != b.clothThickness) {
        return {"clothThickness",
                QObject::tr("Set cloth thickness to %1 m").arg(number(b.clothThickness))};
    }
    return {"other", QObject::tr("Change solver settings")};
}

} // namespace

SolverSettingsCommand::SolverSettingsCommand(SceneDocument* document, SolverSettings before,
                                             SolverSettings after)
    : document_(document)
    , before_(std::move(before))
    , after_(std::move(after)) {
    std::tie(key_, std::ignore) = describeSettingsEdit(before_, after_);
    setText(describeSettingsEdit(before_, after_).second);
}

bool SolverSettingsCommand::mergeWith(const QUndoCommand* other) {
    const auto* o = static_cast<const SolverSettingsCommand*>(other);
    if (o->key_ != key_) {
        return false;
    }
    after_ = o->after_;
    setText(describeSettingsEdit(before_, after_).second);
    setObsolete(before_ == after_); // changed and changed back: no step at all
    return true;
}

void SolverSettingsCommand::redo() {
    document_->applySolverSettings(after_);
}

void SolverSettingsCommand::undo() {
    document_->applySolverSettings(before_);
}

bool SolverSettingsCommand::sameAuthoredSettings(SolverSettings a, SolverSettings b) {
    a.threads = b.threads = 0; // the machine's, not the scene's
    return a == b;
}

} // namespace pbd
