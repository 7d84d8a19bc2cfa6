#include "widgets/ConvergencePanel.h"

#include "widgets/DockChart.h"

#include <QVBoxLayout>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>

namespace pbd {

ConvergencePanel::ConvergencePanel(QWidget* parent)
    : QWidget(parent) {
    // Short enough for the dock; what it is exactly is the tooltip's.
    QFont labels;
    QChart* chart = makeDockChart(tr("Constraint error per iteration"), &labels);
    chart->legend()->hide();
    series_ = new QLineSeries(chart);
    series_->setObjectName(QStringLiteral("convergenceSeries"));
    chart->addSeries(series_);
    axisX_ = new QValueAxis(chart);
    axisX_->setTitleText(tr("iteration"));
    // Whole iterations only: ticks from 1 at a whole interval (showErrors sets it).
    axisX_->setLabelFormat(QStringLiteral("%d"));
    axisX_->setTickType(QValueAxis::TicksDynamic);
    axisX_->setTickAnchor(1);
    axisX_->setTickInterval(1);
    axisY_ = new QLogValueAxis(chart);
    axisY_->setTitleText(tr("max |C + α̃λ|"));
    axisY_->setLabelFormat(QStringLiteral("%.0e"));
    axisY_->setMinorTickCount(-1); // the 2..9 lines of each decade
    for (QAbstractAxis* axis :
         {static_cast<QAbstractAxis*>(axisX_), static_cast<QAbstractAxis*>(axisY_)}) {
        axis->setTitleFont(labels);
        axis->setLabelsFont(labels);
    }
    chart->addAxis(axisX_, Qt::AlignBottom);
    chart->addAxis(axisY_, Qt::AlignLeft);
    series_->attachAxis(axisX_);
    series_->attachAxis(axisY_);
    auto* view = new QChartView(chart, this);
    view->setToolTip(tr("The largest |C + α̃λ| over all constraints after each iteration of the "
                        "last step's last substep: how far the solve is from converged"));
    view->setObjectName(QStringLiteral("convergenceView"));
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumHeight(200);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(view);
}

void ConvergencePanel::showErrors(const std::vector<double>& errors) {
    if (errors.empty()) {
        return;
    }
    QList<QPointF> points;
    double lo = std::numeric_limits<double>::infinity();
    double hi = 0;
    for (std::size_t i = 0; i < errors.size(); ++i) {
        const double e = std::max(errors[i], 1e-16); // log axis: no zeros
        points.append(QPointF(double(i + 1), e));
        lo = std::min(lo, e);
        hi = std::max(hi, e);
    }
    series_->replace(points);
    const double n = std::max<double>(2, double(errors.size()));
    axisX_->setRange(1, n);
    // About five whole-number ticks: 1, 2, 5, 10, 20, ... iterations apart.
    double interval = 1;
    for (double scale = 1; (n - 1) / interval > 5; scale *= 10) {
        for (double step : {1.0, 2.0, 5.0}) {
            interval = step * scale;
            if ((n - 1) / interval <= 5) {
                break;
            }
        }
    }
    axisX_->setTickInterval(interval);
    // Whole decades, at least one, so every label is a different power of ten.
    const double bottom = std::floor(std::log10(lo));
    const double top = std::max(bottom + 1, std::ceil(std::log10(hi)));
    axisY_->setRange(std::pow(10.0, bottom), std::pow(10.0, top));
}

} // namespace pbd
