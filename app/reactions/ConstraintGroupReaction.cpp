#include "app/reactions/ConstraintGroupReaction.h"

#include "app/SceneDocument.h"
#include "app/Workbench.h"
#include "widgets/SceneTreePanel.h"

#include <QAction>
#include <QMainWindow>
#include <QMenu>

namespace pbd {

ConstraintGroupReaction::ConstraintGroupReaction(Workbench& bench, QObject* parent)
    : QObject(parent) {
    auto* addGroup = new QMenu(tr("&Add Constraint Group"), bench.window);
    addGroup->setObjectName(QStringLiteral("menuAddGroup"));
    connect(addGroup, &QMenu::aboutToShow, this, [&bench, addGroup] {
        addGroup->clear();
        const int body = bench.sceneTree->selectedBody();
        const auto types = groupTypesFor(bench.document->scene(), body);
        if (types.empty()) {
            addGroup->addAction(tr("Select a cloth or tet body in the Scene dock"))
                ->setEnabled(false);
        }
        for (ConstraintType type : types) {
            const std::string_view label = groupTypeLabel(type);
            QAction* a =
                addGroup->addAction(QString::fromUtf8(label.data(), qsizetype(label.size())));
            connect(a, &QAction::triggered, addGroup,
                    [&bench, body, type] { bench.document->addConstraintGroup(body, type); });
        }
    });
    auto* removeGroup = new QAction(tr("&Remove Constraint Group"), bench.window);
    removeGroup->setObjectName(QStringLiteral("actionRemoveGroup"));
    removeGroup->setShortcut(QKeySequence::Delete);
    removeGroup->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    bench.sceneTree->addAction(removeGroup); // Delete in the Scene dock: a group or a collider
    connect(removeGroup, &QAction::triggered, this, [&bench] {
        if (bench.sceneTree->selectedGroup() >= 0) {
            bench.document->removeConstraintGroup(bench.sceneTree->selectedGroup());
        } else if (bench.sceneTree->selectedCollider() >= 0) {
            bench.document->removeCollider(bench.sceneTree->selectedCollider());
        } else {
            bench.showStatus(tr("Select a constraint group or a collider in the Scene dock first"));
        }
    });
    actions_ = {addGroup->menuAction(), removeGroup};
}

} // namespace pbd
