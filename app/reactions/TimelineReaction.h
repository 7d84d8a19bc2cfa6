#pragma once
// The timeline under the view and the frame cache behind it: Jump to Start (Shift+Left), Step
// Back (Left), Step Forward (Right), Jump to End (Shift+Right) and Loop Playback in the
// Simulation menu and on the bar; scrubbing shows cached frames with their fields, picking and
// inverted elements; an edit drops the frames after the one shown (the worker does it) and Play
// goes on from the frame shown. File ▸ Export Cache… writes the cached frames as a ParaView
// collection, a point cache and an animated glTF file, with progress and cancel.

#include "meshing/CacheExport.h"

#include <QList>
#include <QObject>

class QAction;
class QSettings;

namespace pbd {

class TimelineBar;
struct Workbench;

class TimelineReaction : public QObject {
    Q_OBJECT
public:
    // `play` is the Simulation menu's Play action (the bar's play button).
    TimelineReaction(Workbench& bench, QAction* play, QObject* parent);
    TimelineBar* bar() const { return bar_; }
    QList<QAction*> actions() const { return actions_; }
    QAction* exportAction() const { return export_; }

    // Shows the cached frame of `step` (or the nearest cached one before it) and waits for it.
    bool showFrame(std::size_t step, QString* error = nullptr);
    // Writes the cached frames and waits (the batch and test path of Export Cache…).
    bool exportCache(const CacheExportOptions& options, QString* error = nullptr);

    void restoreSettings(QSettings& settings);
    void saveSettings(QSettings& settings) const;

private:
    void refresh(); // the bar after a drawn frame; loops playback at the end
    void exportWithDialog();

    Workbench& bench_;
    QAction* play_;
    TimelineBar* bar_ = nullptr;
    QAction* loop_ = nullptr;
    QAction* export_ = nullptr;
    QList<QAction*> actions_;
};

} // namespace pbd
