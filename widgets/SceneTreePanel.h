#pragma once
// The Scene dock: bodies with their meshes and constraint groups; the check box of a body
// toggles its visibility, the check box of a group enables or disables it. The context menu adds
// a group to a body and removes or toggles a group; colliders are listed under "colliders",
// added from its context menu and removed from theirs.

#include "core/scene/Scene.h"

#include <QTreeWidget>

class QMenu;

namespace pbd {

class SceneTreePanel : public QTreeWidget {
    Q_OBJECT
public:
    explicit SceneTreePanel(QWidget* parent = nullptr);

    void setScene(const Scene& scene);
    // Index of the body whose item (or child item) is selected, or -1.
    int selectedBody() const;
    void selectBody(int body);
    QTreeWidgetItem* bodyItem(int body) const;
    // The item of rigid body `index` (under "rigid bodies"), or null.
    QTreeWidgetItem* rigidBodyItem(int index) const;

    // The item of constraint group `index`, or null; the selected group, or -1.
    QTreeWidgetItem* groupItem(int index) const;
    int selectedGroup() const;
    void selectGroup(int index);
    // Shows group `index`'s name, size and state again (after an edit).
    void updateGroup(const Scene& scene, int index);
    // The item of collider `index` (under "colliders"), or null; the selected collider, or -1.
    QTreeWidgetItem* colliderItem(int index) const;
    int selectedCollider() const;
    void selectCollider(int index);
    // The "self-collision" item (under the scene's constraints; scenes with cloth), or null.
    QTreeWidgetItem* selfCollisionItem() const;
    void updateSelfCollision(const Scene& scene);
    // The "air mesh" item (scenes with air), or null; its tick shows whether the air is drawn.
    QTreeWidgetItem* airItem() const;
    void setAirShown(bool shown);
    // The context menu for an item (null: none); what right-clicking it shows.
    QMenu* contextMenuFor(QTreeWidgetItem* item);

signals:
    void bodySelected(int body); // -1: the scene itself
    void groupSelected(int index);
    void groupEnabledToggled(int index, bool enabled);
    void addGroupRequested(int body, pbd::ConstraintType type);
    void removeGroupRequested(int index);
    void rigidBodySelected(int index);
    void colliderSelected(int index);
    void selfCollisionSelected();
    void selfCollisionToggled(bool on);
    void airVisibilityToggled(bool shown);
    void addColliderRequested(pbd::ColliderShape shape);
    void removeColliderRequested(int index);
    void bodyVisibilityToggled(int body, bool visible);
    void embeddedVisibilityToggled(int mesh, bool visible);

private:
    void describeGroup(QTreeWidgetItem* item, const Scene& scene, int index);
    void describeSelfCollision(QTreeWidgetItem* item, const Scene& scene);
    bool populating_ = false;
    bool airShown_ = false;
    std::vector<std::vector<ConstraintType>> bodyGroupTypes_; // per body: what can be added
};

} // namespace pbd
