#include "widgets/SceneTreePanel.h"

#include <QContextMenuEvent>
#include <QHeaderView>
#include <QMenu>
#include <QTreeWidgetItemIterator>

#include <algorithm>

namespace pbd {

namespace {
constexpr int kBodyRole = Qt::UserRole + 1;
constexpr int kRigidRole = Qt::UserRole + 2;         // the rigid body an item shows
constexpr int kGroupRole = Qt::UserRole + 3;         // the constraint group an item shows
constexpr int kColliderRole = Qt::UserRole + 4;      // the collider an item shows
constexpr int kCollidersRole = Qt::UserRole + 5;     // the "colliders" item
constexpr int kSelfCollisionRole = Qt::UserRole + 6; // the "self-collision" item
constexpr int kAirRole = Qt::UserRole + 7;           // the "air mesh" item
constexpr int kEmbeddedRole = Qt::UserRole + 8;      // a render mesh a cage carries

QString text(std::string_view s) {
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}
} // namespace

SceneTreePanel::SceneTreePanel(QWidget* parent)
    : QTreeWidget(parent) {
    setObjectName(QStringLiteral("sceneTree"));
    setColumnCount(2);
    setHeaderLabels({tr("Name"), tr("Contents")});
    header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    header()->setStretchLastSection(true);
    setContextMenuPolicy(Qt::CustomContextMenu);
    connect(this, &QWidget::customContextMenuRequested, this, [this](const QPoint& at) {
        if (QMenu* menu = contextMenuFor(itemAt(at))) {
            menu->exec(viewport()->mapToGlobal(at));
            menu->deleteLater();
        }
    });
    connect(this, &QTreeWidget::itemSelectionChanged, this, [this] {
        const QList<QTreeWidgetItem*> items = selectedItems();
        if (!items.isEmpty() && items.front()->data(0, kGroupRole).isValid()) {
            emit groupSelected(items.front()->data(0, kGroupRole).toInt());
            return;
        }
        if (!items.isEmpty() && items.front()->data(0, kSelfCollisionRole).isValid()) {
            emit selfCollisionSelected();
            return;
        }
        if (!items.isEmpty() && items.front()->data(0, kColliderRole).isValid()) {
            emit colliderSelected(items.front()->data(0, kColliderRole).toInt());
            return;
        }
        if (!items.isEmpty() && items.front()->data(0, kRigidRole).isValid()) {
            emit rigidBodySelected(items.front()->data(0, kRigidRole).toInt());
            return;
        }
        emit bodySelected(selectedBody());
    });
    connect(this, &QTreeWidget::itemChanged, this, [this](QTreeWidgetItem* item, int column) {
        if (!populating_ && column == 0 && item->data(0, kAirRole).isValid()) {
            airShown_ = item->checkState(0) == Qt::Checked;
            emit airVisibilityToggled(airShown_);
            return;
        }
        if (!populating_ && column == 0 && item->data(0, kEmbeddedRole).isValid()) {
            emit embeddedVisibilityToggled(item->data(0, kEmbeddedRole).toInt(),
                                           item->checkState(0) == Qt::Checked);
            return;
        }
        if (!populating_ && column == 0 && item->data(0, kSelfCollisionRole).isValid()) {
            emit selfCollisionToggled(item->checkState(0) == Qt::Checked);
            return;
        }
        if (!populating_ && column == 0 && item->data(0, kGroupRole).isValid()) {
            emit groupEnabledToggled(item->data(0, kGroupRole).toInt(),
                                     item->checkState(0) == Qt::Checked);
            return;
        }
        if (populating_ || column != 0 || item->parent() == nullptr ||
            item->parent()->parent() != nullptr) {
            return;
        }
        emit bodyVisibilityToggled(item->data(0, kBodyRole).toInt(),
                                   item->checkState(0) == Qt::Checked);
    });
}

void SceneTreePanel::setScene(const Scene& scene) {
    populating_ = true;
    clear();
    bodyGroupTypes_.clear();
    auto* root = new QTreeWidgetItem(
        this, {QString::fromStdString(scene.name),
               tr("%1 bodies, %2 particles").arg(scene.bodies.size()).arg(scene.particles.size())});
    root->setData(0, kBodyRole, -1);
    root->setToolTip(0, QString::fromStdString(scene.description));
    for (std::size_t i = 0; i < scene.bodies.size(); ++i) {
        const Body& body = scene.bodies[i];
        auto* item = new QTreeWidgetItem(
            root, {QString::fromStdString(body.name),
                   QString::fromUtf8(toString(body.kind).data(), toString(body.kind).size())});
        item->setData(0, kBodyRole, int(i));
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        if (carriesEmbedded(scene, i)) {
            // A cage: its render meshes are drawn instead, the cage on request.
            item->setCheckState(0, Qt::Unchecked);
            item->setText(1, tr("cage (%1)").arg(item->text(1)));
            item->setToolTip(0, tr("The cage the solver moves; tick to draw it (its render "
                                   "meshes follow it)"));
        } else {
            item->setCheckState(0, Qt::Checked);
            item->setToolTip(0, tr("Untick to hide this body in the view"));
        }
        auto addChild = [&](const QString& name, const QString& contents) {
            auto* child = new QTreeWidgetItem(item, {name, contents});
            child->setData(0, kBodyRole, int(i));
        };
        addChild(tr("particles"), QString::number(body.particleCount));
        if (!body.triangles.empty()) {
            addChild(tr("surface"), tr("%1 triangles%2")
                                        .arg(body.triangles.size())
                                        .arg(body.hasUVs() ? tr(", UVs") : QString()));
        }
        if (!body.tets.empty()) {
            addChild(tr("tetrahedra"), QString::number(body.tets.size()));
        }
        for (std::size_t g = 0; g < scene.constraintGroups.size(); ++g) {
            if (scene.constraintGroups[g].body == int(i)) {
                auto* child = new QTreeWidgetItem(item);
                child->setData(0, kBodyRole, int(i));
                describeGroup(child, scene, int(g));
            }
        }
        bodyGroupTypes_.push_back(groupTypesFor(scene, int(i)));
    }
    // The scene's own groups (the air's, or constraints between bodies), after the bodies so
    // those keep their child indices.
    QTreeWidgetItem* sceneGroups = nullptr;
    auto sceneItem = [&] {
        if (sceneGroups == nullptr) {
            sceneGroups = new QTreeWidgetItem(root, {tr("constraints"), tr("of the scene")});
            sceneGroups->setData(0, kBodyRole, -1);
        }
        return sceneGroups;
    };
    if (std::any_of(scene.bodies.begin(), scene.bodies.end(),
                    [](const Body& b) { return b.kind == BodyKind::Cloth; })) {
        // Cloth self-collision: a setting of the scene, shown and switched like a group.
        auto* item = new QTreeWidgetItem(sceneItem());
        item->setData(0, kBodyRole, -1);
        item->setData(0, kSelfCollisionRole, true);
        item->setText(0, tr("self-collision"));
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        describeSelfCollision(item, scene);
        item->setToolTip(0, tr("Cloth against itself, other cloth and the surfaces of soft "
                               "bodies: tick to enable; the thickness is edited in the "
                               "Properties dock"));
    }
    for (std::size_t g = 0; g < scene.constraintGroups.size(); ++g) {
        if (scene.constraintGroups[g].body < 0) {
            sceneItem();
            auto* child = new QTreeWidgetItem(sceneGroups);
            child->setData(0, kBodyRole, -1);
            describeGroup(child, scene, int(g));
        }
    }
    for (std::size_t e = 0; e < scene.embedded.size(); ++e) {
        const EmbeddedMesh& m = scene.embedded[e];
        auto* item = new QTreeWidgetItem(
            root, {QString::fromStdString(m.name), tr("render mesh, %1 triangles, %2 vertices")
                                                       .arg(m.triangles.size())
                                                       .arg(m.vertexCount())});
        item->setData(0, kBodyRole, -1);
        item->setData(0, kEmbeddedRole, int(e));
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(0, Qt::Checked);
        item->setToolTip(0, tr("A mesh the cage carries (bound to its tets): untick to hide it"));
    }
    if (!scene.air.empty()) {
        // The air mesh (View ▸ Air Mesh shows it; its settings are in the Simulation dock).
        auto* air = new QTreeWidgetItem(
            root, {tr("air mesh"), scene.air.tets.empty()
                                       ? tr("%1 triangles").arg(scene.air.triangles.size())
                                       : tr("%1 tets, %2 own particles")
                                             .arg(scene.air.tets.size())
                                             .arg(scene.air.particleCount)});
        air->setData(0, kBodyRole, -1);
        air->setData(0, kAirRole, true);
        air->setFlags(air->flags() | Qt::ItemIsUserCheckable);
        air->setCheckState(0, airShown_ ? Qt::Checked : Qt::Unchecked);
        air->setToolTip(0,
                        tr("The air between the bodies (Air Meshes): tick to draw it (View ▸ Air "
                           "Mesh chooses how); the Simulation dock's Air mesh group sets it up"));
    }
    // The colliders (listed even when there are none, so one can be added from the menu).
    auto* colliders = new QTreeWidgetItem(
        root, {tr("colliders"), scene.colliders.empty() ? tr("none (right-click to add)")
                                                        : QString::number(scene.colliders.size())});
    colliders->setData(0, kBodyRole, -1);
    colliders->setData(0, kCollidersRole, true);
    colliders->setToolTip(0, tr("Static shapes the particles collide with; right-click to add"));
    for (std::size_t i = 0; i < scene.colliders.size(); ++i) {
        const Collider& c = scene.colliders[i];
        auto* item = new QTreeWidgetItem(colliders,
                                         {QString::fromStdString(c.name), text(toString(c.shape))});
        item->setData(0, kBodyRole, -1);
        item->setData(0, kColliderRole, int(i));
        item->setToolTip(0, tr("Collider: its position and size are edited in the Properties "
                               "dock"));
    }
    if (!scene.rigidBodies.empty()) {
        // After the particle bodies, so that those keep their child indices.
        auto* group =
            new QTreeWidgetItem(root, {tr("rigid bodies"), tr("%1 bodies, %2 joints")
                                                               .arg(scene.rigidBodies.size())
                                                               .arg(scene.rigidJoints.size())});
        group->setData(0, kBodyRole, -1);
        for (std::size_t i = 0; i < scene.rigidBodies.size(); ++i) {
            const RigidBody& b = scene.rigidBodies[i];
            QStringList shapes;
            for (const RigidShape& shape : b.shapes) {
                shapes << QString::fromUtf8(toString(shape.type).data(),
                                            toString(shape.type).size());
            }
            auto* item = new QTreeWidgetItem(
                group, {QString::fromStdString(b.name),
                        QStringLiteral("%1 %2").arg(
                            QString::fromUtf8(toString(b.motion).data(), toString(b.motion).size()),
                            shapes.join(QStringLiteral(" + ")))});
            item->setData(0, kBodyRole, -1);
            item->setData(0, kRigidRole, int(i));
        }
    }
    expandToDepth(0);
    populating_ = false;
}

void SceneTreePanel::describeGroup(QTreeWidgetItem* item, const Scene& scene, int index) {
    const ConstraintGroup& g = scene.constraintGroups[std::size_t(index)];
    const bool was = populating_;
    populating_ = true;
    item->setText(0, QString::fromStdString(g.name));
    const std::size_t n = constraintGroupSize(scene.constraints, index);
    item->setText(1, (n == 1 ? tr("1 constraint") : tr("%1 constraints").arg(n)) +
                         (g.enabled ? QString() : tr(", off")));
    item->setData(0, kGroupRole, index);
    item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
    item->setCheckState(0, g.enabled ? Qt::Checked : Qt::Unchecked);
    item->setToolTip(0, tr("Constraint group: untick to disable it (its constraints do nothing); "
                           "its material is edited in the Properties dock"));
    populating_ = was;
}

QTreeWidgetItem* SceneTreePanel::groupItem(int index) const {
    for (QTreeWidgetItemIterator it(const_cast<SceneTreePanel*>(this)); *it; ++it) {
        if ((*it)->data(0, kGroupRole).isValid() && (*it)->data(0, kGroupRole).toInt() == index) {
            return *it;
        }
    }
    return nullptr;
}

int SceneTreePanel::selectedGroup() const {
    const QList<QTreeWidgetItem*> items = selectedItems();
    return items.isEmpty() || !items.front()->data(0, kGroupRole).isValid()
               ? -1
               : items.front()->data(0, kGroupRole).toInt();
}

void SceneTreePanel::selectGroup(int index) {
    if (QTreeWidgetItem* item = groupItem(index)) {
        setCurrentItem(item);
    }
}

void SceneTreePanel::updateGroup(const Scene& scene, int index) {
    if (QTreeWidgetItem* item = groupItem(index);
        item != nullptr && index >= 0 && std::size_t(index) < scene.constraintGroups.size()) {
        describeGroup(item, scene, index);
    }
}

QMenu* SceneTreePanel::contextMenuFor(QTreeWidgetItem* item) {
    if (item == nullptr) {
        return nullptr;
    }
    if (item->data(0, kGroupRole).isValid()) {
        const int index = item->data(0, kGroupRole).toInt();
        auto* menu = new QMenu(this);
        QAction* toggle =
            menu->addAction(item->checkState(0) == Qt::Checked ? tr("Disable") : tr("Enable"));
        connect(toggle, &QAction::triggered, this, [this, index, on = item->checkState(0)] {
            emit groupEnabledToggled(index, on != Qt::Checked);
        });
        QAction* remove = menu->addAction(tr("Remove Group"));
        remove->setObjectName(QStringLiteral("removeGroup"));
        connect(remove, &QAction::triggered, this,
                [this, index] { emit removeGroupRequested(index); });
        return menu;
    }
    if (item->data(0, kColliderRole).isValid()) {
        const int index = item->data(0, kColliderRole).toInt();
        auto* menu = new QMenu(this);
        QAction* remove = menu->addAction(tr("Remove Collider"));
        remove->setObjectName(QStringLiteral("removeCollider"));
        connect(remove, &QAction::triggered, this,
                [this, index] { emit removeColliderRequested(index); });
        return menu;
    }
    if (item->data(0, kCollidersRole).isValid() || item == topLevelItem(0)) {
        auto* menu = new QMenu(this);
        QMenu* add = menu->addMenu(tr("Add Collider"));
        for (ColliderShape shape : {ColliderShape::Plane, ColliderShape::Sphere, ColliderShape::Box,
                                    ColliderShape::Capsule}) {
            QAction* a = add->addAction(text(toString(shape)));
            a->setObjectName(QStringLiteral("addCollider_") + text(toString(shape)));
            connect(a, &QAction::triggered, this,
                    [this, shape] { emit addColliderRequested(shape); });
        }
        return menu;
    }
    const int body = item->data(0, kBodyRole).toInt();
    if (item->data(0, kRigidRole).isValid() || body < 0 ||
        std::size_t(body) >= bodyGroupTypes_.size() || bodyGroupTypes_[std::size_t(body)].empty()) {
        return nullptr;
    }
    auto* menu = new QMenu(this);
    QMenu* add = menu->addMenu(tr("Add Constraint Group"));
    for (ConstraintType type : bodyGroupTypes_[std::size_t(body)]) {
        QAction* a = add->addAction(text(groupTypeLabel(type)));
        a->setObjectName(QStringLiteral("addGroup_") + text(toString(type)));
        connect(a, &QAction::triggered, this,
                [this, body, type] { emit addGroupRequested(body, type); });
    }
    return menu;
}

void SceneTreePanel::describeSelfCollision(QTreeWidgetItem* item, const Scene& scene) {
    const bool was = populating_;
    populating_ = true;
    item->setCheckState(0, scene.solver.selfCollision ? Qt::Checked : Qt::Unchecked);
    item->setText(1, scene.solver.selfCollision
                         ? tr("thickness %1 mm").arg(scene.solver.clothThickness * 1000, 0, 'g', 4)
                         : tr("off"));
    populating_ = was;
}

void SceneTreePanel::updateSelfCollision(const Scene& scene) {
    if (QTreeWidgetItem* item = selfCollisionItem()) {
        describeSelfCollision(item, scene);
    }
}

QTreeWidgetItem* SceneTreePanel::airItem() const {
    for (QTreeWidgetItemIterator it(const_cast<SceneTreePanel*>(this)); *it; ++it) {
        if ((*it)->data(0, kAirRole).isValid()) {
            return *it;
        }
    }
    return nullptr;
}

void SceneTreePanel::setAirShown(bool shown) {
    airShown_ = shown;
    if (QTreeWidgetItem* item = airItem()) {
        const bool was = populating_;
        populating_ = true;
        item->setCheckState(0, shown ? Qt::Checked : Qt::Unchecked);
        populating_ = was;
    }
}

QTreeWidgetItem* SceneTreePanel::selfCollisionItem() const {
    for (QTreeWidgetItemIterator it(const_cast<SceneTreePanel*>(this)); *it; ++it) {
        if ((*it)->data(0, kSelfCollisionRole).isValid()) {
            return *it;
        }
    }
    return nullptr;
}

QTreeWidgetItem* SceneTreePanel::colliderItem(int index) const {
    for (QTreeWidgetItemIterator it(const_cast<SceneTreePanel*>(this)); *it; ++it) {
        if ((*it)->data(0, kColliderRole).isValid() &&
            (*it)->data(0, kColliderRole).toInt() == index) {
            return *it;
        }
    }
    return nullptr;
}

int SceneTreePanel::selectedCollider() const {
    const QList<QTreeWidgetItem*> items = selectedItems();
    return items.isEmpty() || !items.front()->data(0, kColliderRole).isValid()
               ? -1
               : items.front()->data(0, kColliderRole).toInt();
}

void SceneTreePanel::selectCollider(int index) {
    if (QTreeWidgetItem* item = colliderItem(index)) {
        setCurrentItem(item);
    }
}

QTreeWidgetItem* SceneTreePanel::rigidBodyItem(int index) const {
    QTreeWidgetItem* root = topLevelItem(0);
    if (root == nullptr || root->childCount() == 0) {
        return nullptr;
    }
    QTreeWidgetItem* group = root->child(root->childCount() - 1);
    return group->data(0, kRigidRole).isValid() || index < 0 || index >= group->childCount() ||
                   !group->child(index)->data(0, kRigidRole).isValid()
               ? nullptr
               : group->child(index);
}

int SceneTreePanel::selectedBody() const {
    const QList<QTreeWidgetItem*> items = selectedItems();
    return items.isEmpty() ? -1 : items.front()->data(0, kBodyRole).toInt();
}

QTreeWidgetItem* SceneTreePanel::bodyItem(int body) const {
    QTreeWidgetItem* root = topLevelItem(0);
    return root != nullptr && body >= 0 && body < root->childCount() ? root->child(body) : nullptr;
}

void SceneTreePanel::selectBody(int body) {
    QTreeWidgetItem* item = body < 0 ? topLevelItem(0) : bodyItem(body);
    if (item != nullptr) {
        setCurrentItem(item);
    }
}

} // namespace pbd
