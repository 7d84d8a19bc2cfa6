#include "app/commands/ConstraintsCommand.h"

#include "app/SceneDocument.h"

namespace pbd {

ConstraintsCommand::ConstraintsCommand(SceneDocument* document, const QString& text,
                                       ConstraintState before, ConstraintState after,
                                       int selectAfter)
    : document_(document)
    , before_(std::move(before))
    , after_(std::move(after))
    , selectAfter_(selectAfter) {
    setText(text);
}

void ConstraintsCommand::redo() {
    document_->replaceConstraints(after_.constraints, after_.groups, after_.rigid, selectAfter_);
}

void ConstraintsCommand::undo() {
    document_->replaceConstraints(before_.constraints, before_.groups, before_.rigid, -1);
}

} // namespace pbd
