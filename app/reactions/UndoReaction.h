#pragma once
// Edit ▸ Undo, Redo and Undo History (the History dock shown and raised).

#include <QList>
#include <QObject>

class QAction;
class QDockWidget;

namespace pbd {

struct Workbench;

class UndoReaction : public QObject {
    Q_OBJECT
public:
    UndoReaction(Workbench& bench, QDockWidget* history, QObject* parent);
    QList<QAction*> actions() const { return actions_; }

private:
    QList<QAction*> actions_;
};

} // namespace pbd
