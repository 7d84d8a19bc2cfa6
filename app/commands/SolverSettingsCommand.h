#pragma once
// An edit of the scene's solver settings; consecutive edits of one value merge into one step,
// and a value changed and changed back leaves no step at all.

#include "core/solver/SolverSettings.h"

#include <QUndoCommand>

namespace pbd {

class SceneDocument;

class SolverSettingsCommand : public QUndoCommand {
public:
    SolverSettingsCommand(SceneDocument* document, SolverSettings before, SolverSettings after);
    int id() const override { return 7101; }
    bool mergeWith(const QUndoCommand* other) override;
    void redo() override;
    void undo() override;

    // Equal but for the thread count (the machine's, not the scene's).
    static bool sameAuthoredSettings(SolverSettings a, SolverSettings b);

private:
    SceneDocument* document_;
    SolverSettings before_, after_;
    QString key_;
};

} // namespace pbd
