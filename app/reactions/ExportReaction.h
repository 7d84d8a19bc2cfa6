#pragma once
// File ▸ Export: the scene written as .vtu, .msh, TetGen .node/.ele/.face, a cooked asset
// (.asset.json) or a project, in its current (simulated) shape or as authored.

#include "widgets/ExportDialog.h"

#include <QObject>

class QAction;

namespace pbd {

struct Workbench;

class ExportReaction : public QObject {
    Q_OBJECT
public:
    ExportReaction(Workbench& bench, QObject* parent);
    QAction* action() const { return action_; }

    // The current shape written in the format the path's suffix names.
    bool exportScene(const QString& path, QString* error = nullptr);
    // The format, file and state (authored or current) chosen.
    bool exportScene(const ExportChoice& choice, QString* error = nullptr);

private:
    void exportWithDialog();

    Workbench& bench_;
    QAction* action_ = nullptr;
};

} // namespace pbd
