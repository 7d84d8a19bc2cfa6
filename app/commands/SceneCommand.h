#pragma once
// An edit that changes the scene's particles (the air tessellated): the authored scene before
// and after, shown again as the same document.

#include "core/scene/Scene.h"

#include <QUndoCommand>

namespace pbd {

class SceneDocument;

class SceneCommand : public QUndoCommand {
public:
    SceneCommand(SceneDocument* document, const QString& text, Scene before, Scene after);
    void redo() override;
    void undo() override;

private:
    SceneDocument* document_;
    Scene before_, after_;
};

} // namespace pbd
