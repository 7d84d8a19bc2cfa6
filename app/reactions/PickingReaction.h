#pragma once
// Picking in the view: hovering a vertex shows its values in the status bar; a click also logs
// them and selects its body in the Scene dock; Shift+click pins or unpins it (undoable).

#include <QObject>

class QPointF;

namespace pbd {

struct Workbench;

class PickingReaction : public QObject {
    Q_OBJECT
public:
    PickingReaction(Workbench& bench, QObject* parent);

private:
    void showPickInfo(const QPointF& position, bool logIt);

    Workbench& bench_;
};

} // namespace pbd
