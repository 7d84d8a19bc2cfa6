#include "app/commands/SceneCommand.h"

#include "app/SceneDocument.h"

namespace pbd {

SceneCommand::SceneCommand(SceneDocument* document, const QString& text, Scene before, Scene after)
    : document_(document)
    , before_(std::move(before))
    , after_(std::move(after)) {
    setText(text);
}

void SceneCommand::redo() {
    document_->load(after_, true);
}

void SceneCommand::undo() {
    document_->load(before_, true);
}

} // namespace pbd
