#include "app/reactions/PreferencesReaction.h"

#include "app/SceneDocument.h"
#include "app/SimulationWorker.h"
#include "app/Workbench.h"
#include "widgets/FieldPanel.h"
#include "widgets/VtkViewport.h"

#include <QAction>
#include <QMainWindow>

namespace pbd {

PreferencesReaction::PreferencesReaction(Workbench& bench, QObject* parent)
    : QObject(parent)
    , bench_(bench) {
    action_ = new QAction(tr("&Preferences…"), bench_.window);
    action_->setObjectName(QStringLiteral("actionPreferences"));
    action_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Comma));
    action_->setMenuRole(QAction::PreferencesRole);
    connect(action_, &QAction::triggered, this, [this] {
        Preferences current = preferences_;
        current.colourMap = bench_.fields->colourMap();
        PreferencesDialog dialog(current, bench_.window);
        if (dialog.exec() == QDialog::Accepted) {
            setPreferences(dialog.preferences());
        }
    });
}

void PreferencesReaction::setPreferences(const Preferences& preferences) {
    const bool unitChanged = preferences.meshUnit != preferences_.meshUnit;
    preferences_ = preferences;
    bench_.fields->setColourMap(preferences.colourMap);
    if (bench_.persistSettings) {
        preferences.save();
    }
    if (unitChanged) {
        emit unitScaleChanged(preferences.unitScale());
    }
    emit autosaveMinutesChanged(preferences.autosaveMinutes);
    applyCacheSettings();
    bench_.viewport->setMovingResolution(preferences.movingResolution);
    bench_.report(Severity::Info,
                  tr("Preferences: meshes in %1, new scenes at %2 ms × %3 substeps, %4 "
                     "iterations (%5), colour map %6, autosave %7")
                      .arg(preferences.meshUnit)
                      .arg(preferences.timeStep * 1000, 0, 'g', 4)
                      .arg(preferences.substeps)
                      .arg(preferences.iterations)
                      .arg(preferences.method == SolverMethod::Pbd ? tr("PBD") : tr("XPBD"))
                      .arg(preferences.colourMap)
                      .arg(preferences.autosaveMinutes > 0
                               ? tr("every %1 min").arg(preferences.autosaveMinutes)
                               : tr("off")));
}

void PreferencesReaction::restoreSettings() {
    preferences_ = Preferences::load();
    bench_.fields->setColourMap(preferences_.colourMap);
    emit autosaveMinutesChanged(preferences_.autosaveMinutes);
    applyCacheSettings();
    bench_.viewport->setMovingResolution(preferences_.movingResolution);
}

void PreferencesReaction::applyCacheSettings() {
    CacheSettings c;
    c.every = preferences_.cacheEvery;
    c.budgetBytes = std::size_t(preferences_.cacheMegabytes) << 20;
    c.spillFolder = preferences_.cacheSpillFolder;
    bench_.document->worker()->setCacheSettings(c);
}

void PreferencesReaction::saveSettings() const {
    Preferences preferences = preferences_;
    preferences.colourMap = bench_.fields->colourMap();
    preferences.save();
}

} // namespace pbd
