#pragma once
// Changes one constraint group's material (enabled, compliance or moduli, PBD stiffness, rest
// stretch, pressure, name); undo restores the one it had.

#include "core/constraints/ConstraintGroups.h"

#include <QUndoCommand>

namespace pbd {

class SceneDocument;

class GroupCommand : public QUndoCommand {
public:
    GroupCommand(SceneDocument* document, int index, ConstraintGroup before, ConstraintGroup after);
    void redo() override;
    void undo() override;

private:
    SceneDocument* document_;
    int index_;
    ConstraintGroup before_;
    ConstraintGroup after_;
};

} // namespace pbd
