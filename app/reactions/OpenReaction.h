#pragma once
// File ▸ Open, Open Recent and Recover Autosave, the Samples menu, and files dropped on the
// window: a project or cooked asset (.json) is loaded; a mesh first shows the Prepare dialog,
// then is prepared on its own thread with progress and Cancel (TetGen in a child process). On
// failure the scene on screen is kept.

#include "meshing/Prepare.h"
#include "meshing/SurfaceProblems.h"

#include <QList>
#include <QObject>
#include <QStringList>

class QAction;
class QMenu;
class QSettings;

namespace pbd {

class PreferencesReaction;
class SaveReaction;
struct Workbench;

class OpenReaction : public QObject {
    Q_OBJECT
public:
    OpenReaction(Workbench& bench, SaveReaction* save, const PreferencesReaction* preferences,
                 QObject* parent);

    // Open…, Open Recent ▸.
    QList<QAction*> actions() const { return actions_; }
    // Every generated scene, with its thumbnail and description.
    QMenu* samplesMenu() const { return samples_; }
    QAction* recoverAction() const { return recover_; }

    // Shows one of the generated scenes.
    bool loadGeneratedScene(const QString& name, QString* error = nullptr);
    // Opens a project or prepares a mesh with prepareOptions(); the path every way of opening
    // takes after the Prepare dialog.
    bool openFile(const QString& path, QString* error = nullptr);
    // Open's path for one file: a mesh first shows the Prepare dialog; unsaved edits are asked
    // about first.
    void openInteractive(const QString& path);
    bool recoverAutosave(QString* error = nullptr);
    // At start, when the last session left an autosave (it did not close cleanly): asks Recover /
    // Discard / Not Now. True when the autosave was opened.
    bool offerRecovery();

    const PrepareOptions& prepareOptions() const { return prepareOptions_; }
    void setPrepareOptions(const PrepareOptions& options) { prepareOptions_ = options; }
    // The mesh unit changed (Preferences): the Prepare dialog starts from it.
    void setUnitScale(double scale);

    QStringList recentFiles() const { return recentFiles_; }
    void addRecentFile(const QString& path);

    void restoreSettings(QSettings& settings);
    void saveSettings(QSettings& settings) const;

signals:
    // A mesh that could not be prepared as asked was opened as its surfaces, with these
    // problems (the Problems dock shows them).
    void surfacesOpened(const std::vector<pbd::SurfaceProblem>& problems);

private:
    void openWithDialog();
    void rebuildRecentMenu();
    PrepareResult runPrepare(const QString& path, const PrepareOptions& options);
    // After a refused preparation: the file's surfaces, repaired as far as the choices allow
    // without meshing, loaded with their problems. False when even that fails.
    bool openSurfaces(const QString& path, const QString& why);

    Workbench& bench_;
    SaveReaction* save_;
    const PreferencesReaction* preferences_;
    PrepareOptions prepareOptions_;
    QStringList recentFiles_;
    QMenu* recentMenu_ = nullptr;
    QAction* recover_ = nullptr;
    QList<QAction*> actions_;
    QMenu* samples_ = nullptr;
};

} // namespace pbd
