#include "widgets/DockChart.h"

#include <QGraphicsLayout>
#include <QtCharts/QChart>

#include <algorithm>

namespace pbd {

QChart* makeDockChart(const QString& title, QFont* labels) {
    auto* chart = new QChart;
    chart->setMargins(QMargins(4, 2, 4, 2));
    chart->layout()->setContentsMargins(0, 0, 0, 0);
    chart->setBackgroundRoundness(0);
    QFont small = chart->titleFont();
    small.setPointSizeF(std::max(7.0, small.pointSizeF() - 1));
    chart->setTitleFont(small);
    if (labels) {
        *labels = small;
        labels->setPointSizeF(std::max(6.5, small.pointSizeF() - 1));
    }
    chart->setTitle(title);
    return chart;
}

} // namespace pbd
