#pragma once
// A body's masses before and after a density edit (its inverse masses, in particle order).

#include "core/base/LinearAlgebra.h"

#include <QUndoCommand>

#include <vector>

namespace pbd {

class SceneDocument;

class MassesCommand : public QUndoCommand {
public:
    MassesCommand(SceneDocument* document, const QString& text, int body, std::vector<Real> before,
                  std::vector<Real> after);
    void redo() override;
    void undo() override;

private:
    SceneDocument* document_;
    int body_;
    std::vector<Real> before_, after_;
};

} // namespace pbd
