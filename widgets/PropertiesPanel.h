#pragma once
// The Properties dock: what the selected body (or the whole scene) is made of, and the material
// of the selected constraint group, edited in place (double-click or F2 a value).

#include "core/scene/Scene.h"

#include <QTableWidget>

#include <optional>

namespace pbd {

class PropertiesPanel : public QTableWidget {
    Q_OBJECT
public:
    explicit PropertiesPanel(QWidget* parent = nullptr);

    void showScene(const Scene& scene);
    // A body: kind, counts, mass, centre, size, and editable, its density (kg/m^3, tet bodies)
    // or mass per area (kg/m^2, cloth): an edit emits densityEdited.
    void showBody(const Scene& scene, int body);
    // A rigid body (§5): motion, shapes, mass and inertia, pose and velocities as shown now.
    void showRigidBody(const Scene& scene, int index);
    // Constraint group `index`: its name, enabled, and per component the compliance or modulus
    // and the PBD stiffness, the rest stretch of strain groups, the pressure of pressure groups,
    // all editable. An edit emits groupEdited with the whole new group; a value that is not
    // valid is refused with a message (editRejected) and the old value shown again.
    void showGroup(const Scene& scene, int index);
    // The group shown now, or -1.
    int shownGroup() const { return group_; }
    // Collider `index`: name, shape, position and per shape normal, radius, half extents,
    // rotation (degrees about x, y, z), capsule ends, friction and restitution, editable (a
    // vector as three numbers, "0 1 0" or "0, 1, 0"). An edit emits colliderEdited with the
    // whole new collider; a value that is not valid is refused (editRejected).
    void showCollider(const Scene& scene, int index);
    int shownCollider() const { return collider_; }
    // Cloth self-collision: enabled (a check box) and the cloth thickness (m), editable; an
    // edit emits selfCollisionEdited.
    void showSelfCollision(const Scene& scene);
    // The value shown for a property name, or a null string.
    QString value(const QString& property) const;
    // The row of a property name, or -1.
    int rowOf(const QString& property) const;
    // Turns a value a user typed into a material: a number >= 0, or for moduli "rigid" / "inf".
    static std::optional<Real> parseMaterial(const QString& text, bool modulus);
    // "x, y, z" with four significant digits, as the dock shows vectors.
    static QString formatVector(const Vec3& v);

signals:
    void groupEdited(int index, const pbd::ConstraintGroup& group);
    // The scene's bending model, edited on a bending group (it is the scene's, not the group's).
    void bendingModelEdited(pbd::BendingModel model);
    void colliderEdited(int index, const pbd::Collider& collider);
    void densityEdited(int body, double density);
    void selfCollisionEdited(bool enabled, double thickness);
    void editRejected(const QString& message);

private:
    void setRows(const QList<QPair<QString, QString>>& rows);
    void groupItemChanged(QTableWidgetItem* item);
    void colliderItemChanged(QTableWidgetItem* item);
    int group_ = -1;
    pbd::BendingModel bendingModel_ = pbd::BendingModel::Bridson; // the scene's, shown with a group
    int collider_ = -1;
    int body_ = -1;              // the body whose density row is shown
    bool selfCollision_ = false; // the self-collision rows are shown
    bool selfCollisionOn_ = false;
    double thickness_ = 0;
    QString densityText_; // shown again when an edit is refused
    Collider shownCollider_;
    ConstraintGroup shown_;
    bool populating_ = false;
};

} // namespace pbd
