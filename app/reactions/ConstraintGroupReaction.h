#pragma once
// Edit ▸ Add Constraint Group (the types the body selected in the Scene dock can take) and
// Remove Constraint Group (Delete in the Scene dock: the selected group, or collider).

#include <QList>
#include <QObject>

class QAction;

namespace pbd {

struct Workbench;

class ConstraintGroupReaction : public QObject {
    Q_OBJECT
public:
    ConstraintGroupReaction(Workbench& bench, QObject* parent);
    // Add Constraint Group ▸, Remove Constraint Group.
    QList<QAction*> actions() const { return actions_; }

private:
    QList<QAction*> actions_;
};

} // namespace pbd
