#include "app/reactions/PythonReaction.h"

#include "app/PythonConsole.h"
#include "app/Workbench.h"
#include "widgets/PythonConsolePanel.h"

#include <QAction>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QMainWindow>
#include <QSettings>

namespace pbd {

PythonReaction::PythonReaction(Workbench& bench, QDockWidget* dock, QObject* parent)
    : QObject(parent)
    , bench_(bench)
    , dock_(dock)
    , console_(new PythonConsole(bench.document, bench.window, this)) {
    PythonConsolePanel* panel = bench_.python;
    connect(panel, &PythonConsolePanel::submitted, console_, &PythonConsole::submit);
    connect(panel, &PythonConsolePanel::interruptRequested, console_, &PythonConsole::interrupt);
    connect(console_, &PythonConsole::output, panel, [panel](const QString& text, bool error) {
        panel->append(text,
                      error ? PythonConsolePanel::Kind::Error : PythonConsolePanel::Kind::Output);
    });
    connect(console_, &PythonConsole::continuation, panel, &PythonConsolePanel::setContinuation);
    connect(console_, &PythonConsole::busyChanged, panel, &PythonConsolePanel::setBusy);

    runScript_ = new QAction(tr("Run &Script…"), bench_.window);
    runScript_->setObjectName(QStringLiteral("actionRunScript"));
    runScript_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P));
    runScript_->setStatusTip(tr("Run a Python script in the Python dock, with the open scene as "
                                "'scene'"));
    connect(runScript_, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            bench_.window, tr("Run Python Script"), bench_.lastDirectory,
            tr("Python scripts (*.py);;All files (*)"));
        if (!path.isEmpty()) {
            bench_.lastDirectory = QFileInfo(path).absolutePath();
            runScript(path);
        }
    });
}

PythonReaction::~PythonReaction() {
    delete console_; // the interpreter ends before the document it works on
    console_ = nullptr;
}

void PythonReaction::runScript(const QString& path) {
    dock_->show();
    dock_->raise();
    bench_.python->append(tr("# running %1\n").arg(path), PythonConsolePanel::Kind::Note);
    console_->runFile(path);
}

void PythonReaction::restoreSettings(QSettings& settings) {
    bench_.python->setHistory(settings.value(QStringLiteral("python/history")).toStringList());
}

void PythonReaction::saveSettings(QSettings& settings) const {
    settings.setValue(QStringLiteral("python/history"), bench_.python->history());
}

} // namespace pbd
