#include "app/commands/CollidersCommand.h"

#include "app/SceneDocument.h"
#include "widgets/PropertiesPanel.h"

namespace pbd {

CollidersCommand::CollidersCommand(SceneDocument* document, const QString& text,
                                   std::vector<Collider> before, std::vector<Collider> after,
                                   int selectAfter, int selectBefore)
    : document_(document)
    , before_(std::move(before))
    , after_(std::move(after))
    , selectAfter_(selectAfter)
    , selectBefore_(selectBefore) {
    setText(text);
}

void CollidersCommand::redo() {
    document_->applyColliders(after_, selectAfter_);
}

void CollidersCommand::undo() {
    document_->applyColliders(before_, selectBefore_);
}

QString CollidersCommand::vectorText(const Vec3& v) {
    return QStringLiteral("(%1)").arg(PropertiesPanel::formatVector(v));
}

QString CollidersCommand::describeEdit(const Collider& a, const Collider& b) {
    const QString name = QString::fromStdString(a.name);
    if (a.name != b.name) {
        return QObject::tr("Rename collider %1 to %2").arg(name, QString::fromStdString(b.name));
    }
    if (colliderPosition(a) != colliderPosition(b) && a.radius == b.radius &&
        a.halfExtents == b.halfExtents && a.rotation == b.rotation && a.normal == b.normal &&
        (a.b - a.a) == (b.b - b.a)) {
        return QObject::tr("Move %1 to %2").arg(name, vectorText(colliderPosition(b)));
    }
    if (a.radius != b.radius) {
        return QObject::tr("Set %1 radius to %2").arg(name).arg(b.radius, 0, 'g', 6);
    }
    if (a.halfExtents != b.halfExtents) {
        return QObject::tr("Set %1 half extents to %2").arg(name, vectorText(b.halfExtents));
    }
    if (a.rotation != b.rotation) {
        return QObject::tr("Rotate %1").arg(name);
    }
    if (a.normal != b.normal) {
        return QObject::tr("Set %1 normal to %2").arg(name, vectorText(b.normal));
    }
    if (a.friction != b.friction) {
        return QObject::tr("Set %1 friction to %2").arg(name).arg(b.friction, 0, 'g', 6);
    }
    if (a.restitution != b.restitution) {
        return QObject::tr("Set %1 restitution to %2").arg(name).arg(b.restitution, 0, 'g', 6);
    }
    return QObject::tr("Edit %1").arg(name);
}

} // namespace pbd
