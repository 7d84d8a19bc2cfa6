#pragma once
// Edit ▸ Preferences: the units meshes are modelled in (the Prepare dialog's default scale to
// metres), the solver settings a scene made from a mesh starts with, the colour map fields are
// drawn with, the size a heavy view is drawn at while the camera moves, how often unsaved work is
// autosaved and what the frame cache keeps. Persisted in
// QSettings ("preferences/...").

#include "core/solver/SolverSettings.h"

#include <QDialog>
#include <QString>

class QCheckBox;
class QLineEdit;
class QComboBox;
class QDoubleSpinBox;
class QSpinBox;

namespace pbd {

struct Preferences {
    QString meshUnit = QStringLiteral("m"); // m, cm, mm, in, ft
    // The solver's own defaults to start with.
    double timeStep = SolverSettings{}.timeStep; // s
    int substeps = SolverSettings{}.substeps;
    int iterations = SolverSettings{}.iterations;
    SolverMethod method = SolverSettings{}.method;
    QString colourMap = QStringLiteral("auto"); // a SceneActors::colourMapPresets() name
    int autosaveMinutes = 2;                    // unsaved work written this often; 0: never
    bool groundUnderMeshes = true;              // a ground under each mesh opened (Edit ▸ Ground)
    // The frame cache the timeline scrubs (core/cache/FrameCache.h): every k-th step, up to a
    // memory budget, past which frames go to the spill folder (or the oldest are dropped).
    int cacheEvery = 1;
    int cacheMegabytes = 2048;
    QString cacheSpillFolder;
    // While the camera moves, a view slower than 30 frames per second is drawn at this scale
    // of its size (VtkViewport::setMovingResolution): 1, 1/2 or 1/3.
    double movingResolution = 0.5;

    // Metres per mesh unit (1 for m, 0.01 for cm, 0.0254 for in...).
    double unitScale() const;
    // The units there are, in menu order.
    static QStringList units();
    static Preferences load();
    void save() const;
    bool operator==(const Preferences&) const = default;
};

class PreferencesDialog : public QDialog {
    Q_OBJECT
public:
    PreferencesDialog(const Preferences& preferences, QWidget* parent = nullptr);
    Preferences preferences() const;

private:
    QComboBox* unit_;
    QDoubleSpinBox* timeStep_;
    QSpinBox* substeps_;
    QSpinBox* iterations_;
    QComboBox* method_;
    QComboBox* colourMap_;
    QSpinBox* autosave_;
    QCheckBox* ground_;
    QSpinBox* cacheEvery_;
    QSpinBox* cacheMegabytes_;
    QLineEdit* cacheSpill_;
    QComboBox* movingResolution_;
};

} // namespace pbd
