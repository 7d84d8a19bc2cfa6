#pragma once
// The Prepare dialog shown when a mesh is opened: what the meshing pipeline should do with it
// (repair, tetrahedralize, air, material frames, masses, default constraints) and TetGen's
// quality options. The choices persist between sessions (QSettings, "prepare/...").

#include "meshing/Prepare.h"

#include <QDialog>

class QCheckBox;
class QLineEdit;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;

namespace pbd {

class PrepareDialog : public QDialog {
    Q_OBJECT
public:
    explicit PrepareDialog(const QStringList& files, const PrepareOptions& options,
                           QWidget* parent = nullptr);

    PrepareOptions options() const;

    // The options a user chose last time (defaults on first use: tetrahedralize, frames from
    // UVs and default constraints on, air off), and storing them.
    static PrepareOptions savedOptions();
    static PrepareOptions defaultOptions();
    static void saveOptions(const PrepareOptions& options);

private:
    void updateEnabled();

    PrepareOptions base_;
    QCheckBox* repair_;
    QCheckBox* tetrahedralize_;
    QDoubleSpinBox* quality_;
    QDoubleSpinBox* maxVolume_;
    QCheckBox* air_;
    QDoubleSpinBox* airMargin_;
    QSpinBox* airSubdivisions_;
    QDoubleSpinBox* localAir_;
    QCheckBox* frames_;
    QComboBox* tetFrames_;
    QDoubleSpinBox* scale_;
    QCheckBox* mergeShells_;
    QComboBox* wrap_;
    QComboBox* overlaps_;
    QDoubleSpinBox* density_;
    QDoubleSpinBox* arealDensity_;
    QCheckBox* constraints_;
    QComboBox* bendingModel_;
    QCheckBox* rigid_;
    QCheckBox* ground_;
    QSpinBox* cage_;
    QLineEdit* cageMesh_;
};

} // namespace pbd
