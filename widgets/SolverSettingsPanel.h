#pragma once
// The Simulation dock's solver settings: time step, substeps, iterations, threads, the rigid
// bodies' projected Gauss-Seidel and the air mesh's optimisation and contacts. It shows a
// scene's settings and says when the user changed one; the window turns that into an undoable
// edit. The thread count belongs to the machine, not the scene.

#include "core/solver/SolverSettings.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QSpinBox;

namespace pbd {

class SolverSettingsPanel : public QWidget {
    Q_OBJECT
public:
    explicit SolverSettingsPanel(QWidget* parent = nullptr);

    // Shows `settings` (signals blocked); the rigid and air groups are enabled when the scene
    // has rigid bodies or air.
    void showSettings(const SolverSettings& settings, bool hasRigidBodies, bool hasAir);
    // `scene` with the values shown. A box shows its value rounded to its decimals: the scene's
    // own value stands until the box shows another one (editing one value rounds no other).
    SolverSettings settings(const SolverSettings& scene) const;
    // Solver threads (0: all cores).
    int threads() const;
    // The status line under the settings (time, step, speed, air figures).
    void setStatus(const QString& text);

signals:
    // A value of the scene's settings was changed by the user.
    void settingsEdited();
    void threadsChanged();

private:
    QDoubleSpinBox* timeStep_ = nullptr;
    QSpinBox* substeps_ = nullptr;
    QSpinBox* iterations_ = nullptr;
    QCheckBox* exactAngularMomentum_ = nullptr;
    QCheckBox* continuousCollision_ = nullptr;
    QSpinBox* threads_ = nullptr;
    QGroupBox* rigidSettings_ = nullptr;
    QSpinBox* rigidIterations_ = nullptr;
    QSpinBox* rigidSubsteps_ = nullptr;
    QDoubleSpinBox* rigidContactHertz_ = nullptr;
    QCheckBox* rigidWarmStart_ = nullptr;
    QCheckBox* rigidSeparatePush_ = nullptr;
    QComboBox* rigidStabilisation_ = nullptr;
    QCheckBox* rigidSleeping_ = nullptr;
    QCheckBox* rigidAggressiveSleep_ = nullptr;
    QGroupBox* airSettings_ = nullptr;
    QSpinBox* airIterations_ = nullptr;
    QSpinBox* airInterval_ = nullptr;
    QDoubleSpinBox* airThreshold_ = nullptr;
    QDoubleSpinBox* airDistance_ = nullptr;
    QDoubleSpinBox* airFriction_ = nullptr;
    QLabel* status_ = nullptr;
};

} // namespace pbd
