#include "app/commands/PinCommand.h"

#include "app/SceneDocument.h"

namespace pbd {

PinCommand::PinCommand(SceneDocument* document, Index particle, Real before, Real after)
    : document_(document)
    , particle_(particle)
    , before_(before)
    , after_(after) {
    setText(after == 0 ? QObject::tr("Pin particle %1").arg(particle)
                       : QObject::tr("Unpin particle %1").arg(particle));
}

void PinCommand::redo() {
    document_->applyInverseMass(particle_, after_);
}

void PinCommand::undo() {
    document_->applyInverseMass(particle_, before_);
}

} // namespace pbd
