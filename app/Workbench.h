#pragma once
// The parts of the main window that its actions (app/reactions/) act on: the document, its
// view, the docks and the window itself. The window builds them and hands each reaction this.

#include "widgets/Severity.h"

#include <QString>

class QMainWindow;

namespace pbd {

class AirPanel;
class ConvergencePanel;
class FieldPanel;
class LogPanel;
class ProblemsPanel;
class PythonConsolePanel;
class PropertiesPanel;
class SceneDocument;
class SceneTreePanel;
class SceneView;
class SolverSettingsPanel;
class VtkViewport;

struct Workbench {
    QMainWindow* window = nullptr;
    SceneDocument* document = nullptr;
    SceneView* view = nullptr;
    VtkViewport* viewport = nullptr;
    SceneTreePanel* sceneTree = nullptr;
    PropertiesPanel* properties = nullptr;
    LogPanel* log = nullptr;
    ProblemsPanel* problems = nullptr;
    SolverSettingsPanel* solverSettings = nullptr;
    FieldPanel* fields = nullptr;
    ConvergencePanel* convergence = nullptr;
    AirPanel* air = nullptr;
    PythonConsolePanel* python = nullptr;
    // False for a batch window: nothing is read from or written to QSettings.
    bool persistSettings = true;
    // The folder file dialogs start in (the last one a file was opened from or saved to).
    QString lastDirectory;
    // A mesh is being prepared or the air tessellated: no second such job meanwhile.
    bool preparing = false;

    // A message in the Log; errors also in the status bar.
    void report(Severity severity, const QString& text) const;
    void reportError(const QString& text) const { report(Severity::Error, text); }
    // An operation that failed: the error reported, *error set when given; returns false.
    bool fail(const QString& text, QString* error) const;
    void showStatus(const QString& text, int milliseconds = 5000) const;
};

} // namespace pbd
