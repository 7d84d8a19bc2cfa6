#include "app/reactions/UndoReaction.h"

#include "app/SceneDocument.h"
#include "app/Workbench.h"

#include <QAction>
#include <QDockWidget>
#include <QMainWindow>
#include <QUndoStack>

namespace pbd {

UndoReaction::UndoReaction(Workbench& bench, QDockWidget* history, QObject* parent)
    : QObject(parent) {
    QUndoStack* stack = bench.document->undoStack();
    QAction* undo = stack->createUndoAction(bench.window, tr("&Undo"));
    undo->setObjectName(QStringLiteral("actionUndo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = stack->createRedoAction(bench.window, tr("&Redo"));
    redo->setObjectName(QStringLiteral("actionRedo"));
    redo->setShortcuts({QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), QKeySequence::Redo});
    auto* showHistory = new QAction(tr("Undo &History"), bench.window);
    showHistory->setObjectName(QStringLiteral("actionUndoHistory"));
    showHistory->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_H));
    connect(showHistory, &QAction::triggered, this, [history] {
        history->show();
        history->raise();
    });
    actions_ = {undo, redo, showHistory};
}

} // namespace pbd
