#include "app/commands/GroupCommand.h"

#include "app/SceneDocument.h"

#include <QObject>
#include <QStringList>

#include <cmath>

namespace pbd {

namespace {

QString qtext(std::string_view s) {
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

// "Set cloth strain stretch u to 5000", "Disable cloth bending", ...: what changed from
// `before` to `after` (the first difference; "Edit <name>" for several).
QString describeGroupEdit(const ConstraintGroup& before, const ConstraintGroup& after) {
    const QString name = QString::fromStdString(before.name);
    QStringList changes;
    if (before.name != after.name) {
        changes << QObject::tr("Rename %1 to %2").arg(name, QString::fromStdString(after.name));
    }
    if (before.enabled != after.enabled) {
        changes << (after.enabled ? QObject::tr("Enable %1") : QObject::tr("Disable %1")).arg(name);
    }
    const int K = materialComponents(before.type);
    for (int k = 0; k < K; ++k) {
        const QString component = K == 1
                                      ? (materialIsModulus(before.type) ? QObject::tr("modulus")
                                                                        : QObject::tr("compliance"))
                                      : qtext(materialComponentName(before.type, k));
        if (before.material[k] != after.material[k]) {
            changes << QObject::tr("Set %1 %2 to %3")
                           .arg(name, component,
                                std::isinf(after.material[k])
                                    ? QObject::tr("rigid")
                                    : QString::number(after.material[k], 'g', 6));
        }
        if (before.pbdStiffness[k] != after.pbdStiffness[k]) {
            changes << QObject::tr("Set %1 PBD stiffness%2 to %3")
                           .arg(name, K == 1 ? QString() : QStringLiteral(" ") + component)
                           .arg(after.pbdStiffness[k]);
        }
    }
    for (int k = 0; k < 3; ++k) {
        if (before.restStretch[k] != after.restStretch[k]) {
            changes << QObject::tr("Set %1 rest stretch to %2").arg(name).arg(after.restStretch[k]);
        }
    }
    if (before.pressure != after.pressure) {
        changes << QObject::tr("Set %1 pressure to %2").arg(name).arg(after.pressure);
    }
    return changes.size() == 1 ? changes.front() : QObject::tr("Edit %1").arg(name);
}

} // namespace

GroupCommand::GroupCommand(SceneDocument* document, int index, ConstraintGroup before,
                           ConstraintGroup after)
    : document_(document)
    , index_(index)
    , before_(std::move(before))
    , after_(std::move(after)) {
    setText(describeGroupEdit(before_, after_));
}

void GroupCommand::redo() {
    document_->applyGroup(index_, after_);
}

void GroupCommand::undo() {
    document_->applyGroup(index_, before_);
}

} // namespace pbd
