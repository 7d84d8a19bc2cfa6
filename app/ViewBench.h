#pragma once
// pbdlab --bench-view: plays the window's scene for a while as a user watching it would, the
// view turning all the time, and measures what the window keeps up with (issue 31: the view
// turns at 30 frames per second or more while the solver runs; a snapshot of a 250,000-triangle
// surface reaches VTK in at most 10 ms).

#include <QJsonObject>

namespace pbd {

class MainWindow;

// Plays for `seconds` (the worker steps on its thread), turning the camera a degree every 10
// ms, then pauses. The figures: frames drawn and frames per second, each frame's render time
// and each simulation snapshot's update of the VTK data (median and largest, ms), the steps
// the worker made and its ms per step.
QJsonObject benchView(MainWindow& window, double seconds);

} // namespace pbd
