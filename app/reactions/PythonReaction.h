#pragma once
// Python in the window: the Python dock (an interactive console whose `scene` is the open
// document) and File ▸ Run Script…; the console's history is kept between sessions.

#include <QObject>

class QAction;
class QDockWidget;
class QSettings;

namespace pbd {

class PythonConsole;
struct Workbench;

class PythonReaction : public QObject {
    Q_OBJECT
public:
    PythonReaction(Workbench& bench, QDockWidget* dock, QObject* parent);
    ~PythonReaction() override;

    QAction* runScriptAction() const { return runScript_; }
    PythonConsole* console() const { return console_; }
    // Runs a script file in the console (the dock comes to the front).
    void runScript(const QString& path);

    void restoreSettings(QSettings& settings);
    void saveSettings(QSettings& settings) const;

private:
    Workbench& bench_;
    QDockWidget* dock_;
    PythonConsole* console_;
    QAction* runScript_ = nullptr;
};

} // namespace pbd
