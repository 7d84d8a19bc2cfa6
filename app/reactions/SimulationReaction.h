#pragma once
// The Simulation menu: Play (Space), Real Time, Step (.), Record Frames… and Reset (Home); and
// stepping in batch (the command line's rendering, tests). The solver runs on the worker
// thread; a run that diverges stops with the reason in the Log.

#include <QList>
#include <QObject>

class QAction;
class QSettings;

namespace pbd {

struct Workbench;

class SimulationReaction : public QObject {
    Q_OBJECT
public:
    SimulationReaction(Workbench& bench, QObject* parent);
    QList<QAction*> actions() const { return actions_; }
    // Runs `steps` steps on the worker and waits for them; false with a message when the run
    // diverged.
    bool simulateSteps(int steps, QString* error = nullptr);
    void restoreSettings(QSettings& settings);
    void saveSettings(QSettings& settings) const;

private:
    Workbench& bench_;
    QList<QAction*> actions_;
    QAction* play_ = nullptr;
    QAction* realTime_ = nullptr;
    QAction* record_ = nullptr;
};

} // namespace pbd
