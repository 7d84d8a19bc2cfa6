#pragma once
// Replaces, adds or removes colliders: the whole list before and after (they are few), and the
// collider to select after redo and after undo.

#include "core/solver/Colliders.h"

#include <QUndoCommand>

#include <vector>

namespace pbd {

class SceneDocument;

class CollidersCommand : public QUndoCommand {
public:
    CollidersCommand(SceneDocument* document, const QString& text, std::vector<Collider> before,
                     std::vector<Collider> after, int selectAfter, int selectBefore);
    void redo() override;
    void undo() override;

    // "Move sphere to (0, 1, 0)", "Set sphere radius to 0.3", "Edit box".
    static QString describeEdit(const Collider& before, const Collider& after);
    // "(x, y, z)".
    static QString vectorText(const Vec3& v);

private:
    SceneDocument* document_;
    std::vector<Collider> before_, after_;
    int selectAfter_, selectBefore_;
};

} // namespace pbd
