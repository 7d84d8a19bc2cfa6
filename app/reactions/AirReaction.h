#pragma once
// Edit ▸ Tessellate the Air: the air between and around the bodies as tets (Air Meshes), with
// the Prepare dialog's air options, on its own thread with progress and Cancel; undoable.

#include <QObject>

class QAction;

namespace pbd {

class OpenReaction;
struct Workbench;

class AirReaction : public QObject {
    Q_OBJECT
public:
    AirReaction(Workbench& bench, const OpenReaction* open, QObject* parent);
    QAction* action() const { return action_; }
    // Refused when the scene has air already or a mesh is being prepared.
    bool addAirMesh(QString* error = nullptr);

private:
    Workbench& bench_;
    const OpenReaction* open_;
    QAction* action_ = nullptr;
};

} // namespace pbd
