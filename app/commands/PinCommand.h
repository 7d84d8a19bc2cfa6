#pragma once
// Pins (inverse mass 0) or unpins one particle; undo restores the inverse mass it had.

#include "core/base/LinearAlgebra.h"

#include <QUndoCommand>

namespace pbd {

class SceneDocument;

class PinCommand : public QUndoCommand {
public:
    PinCommand(SceneDocument* document, Index particle, Real before, Real after);
    void redo() override;
    void undo() override;

private:
    SceneDocument* document_;
    Index particle_;
    Real before_;
    Real after_;
};

} // namespace pbd
