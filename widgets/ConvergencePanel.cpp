#include "widgets/ConvergencePanel.h"

#include <QVBoxLayout>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <limits>

namespace pbd {

ConvergencePanel::ConvergencePanel(QWidget* parent)
    : QWidget(parent) {
    auto* chart = new QChart;
    chart->legend()->hide();
    chart->setTitle(tr("Largest constraint error per iteration (last step)"));
    series_ = new QLineSeries(chart);
    series_->setObjectName(QStringLiteral("convergenceSeries"));
    chart->addSeries(series_);
    axisX_ = new QValueAxis(chart);
    axisX_->setTitleText(tr("iteration"));
    axisX_->setLabelFormat(QStringLiteral("%d"));
    axisY_ = new QLogValueAxis(chart);
    axisY_->setTitleText(tr("max |C + α̃λ|"));
    axisY_->setLabelFormat(QStringLiteral("%.0e"));
    chart->addAxis(axisX_, Qt::AlignBottom);
    chart->addAxis(axisY_, Qt::AlignLeft);
    series_->attachAxis(axisX_);
    series_->attachAxis(axisY_);
    auto* view = new QChartView(chart, this);
    view->setObjectName(QStringLiteral("convergenceView"));
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumHeight(160);
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
    axisX_->setRange(1, std::max<double>(2, double(errors.size())));
    axisY_->setRange(lo / 2, hi * 2);
}

} // namespace pbd
