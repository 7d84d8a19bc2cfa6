#pragma once
// Edit ▸ Add Collider (a plane, sphere, box or capsule fitted to the bodies, or a closed mesh
// from a file in the preferred unit), Add Character (an animated skin from a file, with its
// placement and clip), Remove Collider (the one selected in the Scene dock) and Ground (G), a
// toggle that follows the scene.

#include <QList>
#include <QObject>

class QAction;

namespace pbd {

class PreferencesReaction;
struct Workbench;

class ColliderReaction : public QObject {
    Q_OBJECT
public:
    ColliderReaction(Workbench& bench, const PreferencesReaction* preferences, QObject* parent);
    // Add Collider ▸, Add Character…, Remove Collider, Ground.
    QList<QAction*> actions() const { return actions_; }
    // A mesh collider from a file, in the preferred mesh unit; refused, saying why, when the
    // surface is not closed.
    bool addMeshCollider(const QString& path, QString* error = nullptr);

private:
    Workbench& bench_;
    const PreferencesReaction* preferences_;
    QList<QAction*> actions_;
    QAction* ground_ = nullptr;

    void syncGround();
};

} // namespace pbd
