#pragma once
// Adds or removes constraint groups or attachments: the constraints, groups and rigid
// attachments before and after. The simulation restarts from the authored state either way.

#include "core/scene/Scene.h"

#include <QUndoCommand>

namespace pbd {

class SceneDocument;

struct ConstraintState {
    ConstraintSet constraints;
    std::vector<ConstraintGroup> groups;
    std::vector<RigidAttachment> rigid;
};

class ConstraintsCommand : public QUndoCommand {
public:
    ConstraintsCommand(SceneDocument* document, const QString& text, ConstraintState before,
                       ConstraintState after, int selectAfter);
    void redo() override;
    void undo() override;

private:
    SceneDocument* document_;
    ConstraintState before_, after_;
    int selectAfter_;
};

} // namespace pbd
