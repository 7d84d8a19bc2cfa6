#pragma once
// A chart sized for a dock (the Convergence and Air plots): thin margins and fonts a point or
// two smaller than the style's, so the plot keeps its room and the title and axis titles stay
// whole in a 300-pixel dock.

#include <QFont>
#include <QString>

class QChart;

namespace pbd {

// A new chart titled `title`; `labels` gets the font for axis titles, tick labels and legends.
QChart* makeDockChart(const QString& title, QFont* labels);

} // namespace pbd
