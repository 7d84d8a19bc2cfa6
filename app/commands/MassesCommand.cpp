#include "app/commands/MassesCommand.h"

#include "app/SceneDocument.h"

namespace pbd {

MassesCommand::MassesCommand(SceneDocument* document, const QString& text, int body,
                             std::vector<Real> before, std::vector<Real> after)
    : document_(document)
    , body_(body)
    , before_(std::move(before))
    , after_(std::move(after)) {
    setText(text);
}

void MassesCommand::redo() {
    document_->applyBodyMasses(body_, after_);
}

void MassesCommand::undo() {
    document_->applyBodyMasses(body_, before_);
}

} // namespace pbd
