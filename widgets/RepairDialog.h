#pragma once
// Edit ▸ Repair Surfaces…: the repair ladder's choices (meshing/SurfaceRepair.h) before it runs
// on the open surfaces.

#include "meshing/SurfaceRepair.h"

#include <QDialog>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;

namespace pbd {

class RepairDialog : public QDialog {
    Q_OBJECT
public:
    RepairDialog(const RepairOptions& options, OverlapMode overlaps, QWidget* parent = nullptr);
    RepairOptions options() const;
    OverlapMode overlaps() const;

private:
    RepairOptions base_;
    QComboBox* wrap_;
    QComboBox* overlaps_;
    QDoubleSpinBox* maxHole_;
    QCheckBox* splitNonManifold_;
    QCheckBox* removeSelfIntersections_;
};

} // namespace pbd
