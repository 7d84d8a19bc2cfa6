#pragma once
// Long work off the GUI thread with a progress dialog and Cancel: the work runs on its own
// thread while this one keeps drawing; the dialog shows the stage the work reports.

#include "meshing/TetgenProcess.h"

#include <QString>

#include <functional>
#include <string>

class QWidget;

namespace pbd {

// Runs `work` and returns when it is done; the dialog (title, label: stage) appears after
// 400 ms, modal to `parent`.
void runWithProgress(QWidget* parent, const QString& title, const QString& label,
                     const std::function<void(const ProgressCallback&)>& work);

} // namespace pbd
