#pragma once
// Vertex selection and what is done with it: Edit ▸ Select Vertices (V: in the view a click
// selects a vertex, Ctrl+click adds or removes one, a dragged box selects the vertices in it),
// Clear Selection (Esc) and Attach Selection ▸ (to their place, a collider, a body or a rigid
// body), each attachment undoable.

#include <QList>
#include <QObject>

#include <vector>

class QAction;
class QPointF;
class QRectF;

namespace pbd {

struct Workbench;

class SelectionReaction : public QObject {
    Q_OBJECT
public:
    SelectionReaction(Workbench& bench, QObject* parent);
    // Select Vertices, Clear Selection, Attach Selection ▸.
    QList<QAction*> actions() const { return actions_; }
    // Selects the particles of visible bodies drawn inside `rect` (widget pixels); with `add`,
    // in addition to the selection.
    void selectInRect(const QRectF& rect, bool add);

private:
    void selectAt(const QPointF& position, bool add);
    void showCount();

    Workbench& bench_;
    QList<QAction*> actions_;
};

} // namespace pbd
