#pragma once
// Edit ▸ Preferences: the unit meshes come in, the solver settings new scenes start with and
// the colour map; applied at once (colour map, the Prepare dialog's unit) and to the next mesh
// opened (solver settings); persisted unless the window is a batch one.

#include "widgets/PreferencesDialog.h"

#include <QObject>

class QAction;

namespace pbd {

struct Workbench;

class PreferencesReaction : public QObject {
    Q_OBJECT
public:
    PreferencesReaction(Workbench& bench, QObject* parent);
    QAction* action() const { return action_; }

    const Preferences& preferences() const { return preferences_; }
    void setPreferences(const Preferences& preferences);
    void restoreSettings();
    // The preferences with the Simulation dock's colour map (the dock's choice is the
    // preference), saved.
    void saveSettings() const;

signals:
    // Metres per mesh unit, when the unit changed.
    void unitScaleChanged(double scale);
    // Set or restored: the minutes between autosaves (0: never).
    void autosaveMinutesChanged(int minutes);

private:
    void applyCacheSettings(); // the worker's frame cache, as the preferences say
    Workbench& bench_;
    Preferences preferences_;
    QAction* action_ = nullptr;
};

} // namespace pbd
