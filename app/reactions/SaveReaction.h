#pragma once
// File ▸ Save and Save As: the authored scene written as a project, atomically (a failed write
// leaves the previous file); the question about unsaved changes before they would be lost; and
// the autosave, at the interval of the preferences (two minutes unless changed) while there are
// unsaved edits, removed on save or a clean close (File ▸ Recover Autosave opens it, and the
// next start offers to: OpenReaction).

#include <QList>
#include <QObject>

class QAction;
class QTimer;

namespace pbd {

struct Workbench;

class SaveReaction : public QObject {
    Q_OBJECT
public:
    SaveReaction(Workbench& bench, QObject* parent);
    // Save, Save As.
    QList<QAction*> actions() const { return actions_; }

    // Writes the authored scene (the state Reset returns to, with its edits: pins, solver and
    // air settings; not the simulated positions) and makes `path` the document's project.
    bool saveProjectAs(const QString& path, QString* error = nullptr);
    // To the project file, or Save As when there is none. False if not saved.
    bool save();
    // Unsaved edits: asks Save / Discard / Cancel; true when it is fine to go on.
    bool maybeSave();
    static QString autosavePath();
    bool autosave();
    // Every `minutes` (0: never); a window that does not persist settings never autosaves.
    void setAutosaveMinutes(int minutes);
    int autosaveMinutes() const;

signals:
    void saved(const QString& path);

private:
    void saveAsWithDialog();

    Workbench& bench_;
    QTimer* autosaveTimer_ = nullptr;
    QList<QAction*> actions_;
};

} // namespace pbd
