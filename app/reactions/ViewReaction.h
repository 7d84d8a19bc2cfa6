#pragma once
// The View menu's options for the 3D view: Reset Camera, Wireframe, Show Axes, Clip Tet Bodies,
// Material Frames, Rigid Contacts and Joints, Character Skeletons, the constraints drawn as lines
// (and what colours them) and how the air mesh is drawn. Wireframe, axes and skeletons persist.

#include "widgets/SceneActors.h"

#include <QList>
#include <QObject>

class QAction;
class QSettings;

namespace pbd {

struct Workbench;

class ViewReaction : public QObject {
    Q_OBJECT
public:
    ViewReaction(Workbench& bench, QObject* parent);
    // In menu order; a separator is nullptr.
    QList<QAction*> actions() const { return actions_; }
    void setAirMode(SceneActors::AirMode mode);
    void restoreSettings(QSettings& settings);
    void saveSettings(QSettings& settings) const;

private:
    void applyConstraintDrawing();

    Workbench& bench_;
    QList<QAction*> actions_;
    QAction* wireframe_ = nullptr;
    QAction* axes_ = nullptr;
    QAction* skeletons_ = nullptr;
    QList<QAction*> drawKinds_; // distance, bending, attachments, contacts
    QAction* byLambda_ = nullptr;
    QList<QAction*> airModes_; // hidden, wireframe, transparent
};

} // namespace pbd
