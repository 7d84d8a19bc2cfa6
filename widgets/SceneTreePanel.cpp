#include "widgets/SceneTreePanel.h"

#include <QHeaderView>

namespace pbd {

namespace {
constexpr int kBodyRole = Qt::UserRole + 1;
constexpr int kRigidRole = Qt::UserRole + 2; // the rigid body an item shows
} // namespace

SceneTreePanel::SceneTreePanel(QWidget* parent)
    : QTreeWidget(parent) {
    setObjectName(QStringLiteral("sceneTree"));
    setColumnCount(2);
    setHeaderLabels({tr("Name"), tr("Contents")});
    header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    header()->setStretchLastSection(true);
    connect(this, &QTreeWidget::itemSelectionChanged, this, [this] {
        const QList<QTreeWidgetItem*> items = selectedItems();
        if (!items.isEmpty() && items.front()->data(0, kRigidRole).isValid()) {
            emit rigidBodySelected(items.front()->data(0, kRigidRole).toInt());
            return;
        }
        emit bodySelected(selectedBody());
    });
    connect(this, &QTreeWidget::itemChanged, this, [this](QTreeWidgetItem* item, int column) {
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
        item->setCheckState(0, Qt::Checked);
        item->setToolTip(0, tr("Untick to hide this body in the view"));
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
