#include "app/Workbench.h"

#include "widgets/LogPanel.h"

#include <QMainWindow>
#include <QStatusBar>

namespace pbd {

void Workbench::report(Severity severity, const QString& text) const {
    log->append(severity, text);
    if (severity == Severity::Error) {
        window->statusBar()->showMessage(text, 10000);
    }
}

bool Workbench::fail(const QString& text, QString* error) const {
    reportError(text);
    if (error) {
        *error = text;
    }
    return false;
}

void Workbench::showStatus(const QString& text, int milliseconds) const {
    window->statusBar()->showMessage(text, milliseconds);
}

} // namespace pbd
