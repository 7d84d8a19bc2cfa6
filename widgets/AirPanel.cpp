#include "widgets/AirPanel.h"

#include "widgets/DockChart.h"

#include <QLabel>
#include <QVBoxLayout>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>

namespace pbd {

namespace {
// Points per series at most: a long run is drawn in buckets (the most inverted and the worst
// quality of each), so a spike of one step is never averaged away.
constexpr std::size_t kMaxPoints = 1500;
} // namespace

AirPanel::AirPanel(QWidget* parent)
    : QWidget(parent) {
    QFont labels;
    QChart* chart = makeDockChart(tr("Air over the run"), &labels);
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->legend()->setFont(labels);
    before_ = new QLineSeries(chart);
    before_->setName(tr("before"));
    before_->setObjectName(QStringLiteral("airInvertedBefore"));
    before_->setColor(QColor(230, 160, 60));
    after_ = new QLineSeries(chart);
    after_->setName(tr("after"));
    after_->setObjectName(QStringLiteral("airInvertedAfter"));
    after_->setColor(QColor(210, 40, 40));
    quality_ = new QLineSeries(chart);
    quality_->setName(tr("worst quality"));
    quality_->setObjectName(QStringLiteral("airWorstQuality"));
    quality_->setColor(QColor(40, 110, 200));
    for (QLineSeries* s : {before_, after_, quality_}) {
        chart->addSeries(s);
    }
    axisTime_ = new QValueAxis(chart);
    axisTime_->setTitleText(tr("time (s)"));
    axisTime_->setLabelFormat(QStringLiteral("%.2g"));
    axisCount_ = new QValueAxis(chart);
    axisCount_->setTitleText(tr("inverted air tets"));
    axisCount_->setLabelFormat(QStringLiteral("%d"));
    axisQuality_ = new QValueAxis(chart);
    axisQuality_->setTitleText(tr("quality"));
    axisQuality_->setLabelFormat(QStringLiteral("%.2g"));
    for (QValueAxis* axis : {axisTime_, axisCount_, axisQuality_}) {
        axis->setTitleFont(labels);
        axis->setLabelsFont(labels);
    }
    chart->addAxis(axisTime_, Qt::AlignBottom);
    chart->addAxis(axisCount_, Qt::AlignLeft);
    chart->addAxis(axisQuality_, Qt::AlignRight);
    for (QLineSeries* s : {before_, after_}) {
        s->attachAxis(axisTime_);
        s->attachAxis(axisCount_);
    }
    quality_->attachAxis(axisTime_);
    quality_->attachAxis(axisQuality_);
    auto* view = new QChartView(chart, this);
    view->setObjectName(QStringLiteral("airView"));
    view->setToolTip(
        tr("Per step: the air tets inverted before the step's air projection (\"before\") and "
           "those still inverted after it (\"after\"; left axis), and the worst air tet's quality "
           "12/√2 · V / l_rms³ "
           "(right axis; 1 is a regular tet, 0 flat, below 0 inverted). Inverted tets that stay "
           "after the projection mean the air has locked there: View ▸ Air Mesh draws them "
           "red."));
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumHeight(200);
    summary_ = new QLabel(this);
    summary_->setObjectName(QStringLiteral("airSummary"));
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(view, 1);
    layout->addWidget(summary_);
    clear();
}

void AirPanel::append(const std::vector<AirSample>& samples) {
    if (samples.empty()) {
        return;
    }
    samples_.insert(samples_.end(), samples.begin(), samples.end());
    redraw();
}

void AirPanel::clear() {
    samples_.clear();
    redraw();
}

void AirPanel::redraw() {
    QList<QPointF> before, after, quality;
    const std::size_t n = samples_.size();
    const std::size_t bucket = std::max<std::size_t>(1, (n + kMaxPoints - 1) / kMaxPoints);
    double most = 0;
    double lo = std::numeric_limits<double>::infinity();
    double hi = -std::numeric_limits<double>::infinity();
    for (std::size_t start = 0; start < n; start += bucket) {
        const std::size_t end = std::min(n, start + bucket);
        std::size_t b = 0, a = 0;
        double q = std::numeric_limits<double>::infinity();
        for (std::size_t k = start; k < end; ++k) {
            b = std::max(b, samples_[k].invertedBefore);
            a = std::max(a, samples_[k].invertedAfter);
            if (std::isfinite(samples_[k].worstQuality)) {
                q = std::min(q, samples_[k].worstQuality);
            }
        }
        const double t = samples_[end - 1].time;
        before.append(QPointF(t, double(b)));
        after.append(QPointF(t, double(a)));
        most = std::max({most, double(b), double(a)});
        if (std::isfinite(q)) {
            quality.append(QPointF(t, q));
            lo = std::min(lo, q);
            hi = std::max(hi, q);
        }
    }
    before_->replace(before);
    after_->replace(after);
    quality_->replace(quality);
    const double t0 = n > 0 ? std::min(0.0, samples_.front().time) : 0.0;
    const double t1 = n > 0 ? std::max(samples_.back().time, t0 + 1e-3) : 1.0;
    axisTime_->setRange(t0, t1);
    axisTime_->setTickCount(5);
    axisTime_->applyNiceNumbers();
    // Whole counts, with room above the highest.
    const double top = std::max(4.0, std::ceil(most * 1.1));
    axisCount_->setRange(0, top);
    axisCount_->setTickCount(5);
    axisCount_->applyNiceNumbers(); // 0, 20, 40, ... rather than 0, 26, 53, ...
    // Quality: from below zero when a tet was inverted (flat ones, a hair below zero by
    // rounding, keep the axis at zero), to a little above the best worst.
    const double qLow = std::isfinite(lo) && lo < -1e-3 ? lo : 0.0;
    const double qHigh = std::isfinite(hi) ? std::min(1.0, std::max(0.05, hi * 1.2)) : 1.0;
    axisQuality_->setRange(qLow, qHigh);
    summary_->setText(summary());
}

QString AirPanel::summary() const {
    if (samples_.empty()) {
        return tr("No steps with air yet.");
    }
    const AirSample& last = samples_.back();
    std::size_t worstAfter = 0;
    double worstAt = 0;
    std::size_t stepsInverted = 0;
    for (const AirSample& s : samples_) {
        stepsInverted += s.invertedAfter > 0;
        if (s.invertedAfter > worstAfter) {
            worstAfter = s.invertedAfter;
            worstAt = s.time;
        }
    }
    QString text = tr("t = %1 s: %2 air tets inverted after the step (%3 before solving)")
                       .arg(last.time, 0, 'f', 3)
                       .arg(last.invertedAfter)
                       .arg(last.invertedBefore);
    if (std::isfinite(last.worstQuality)) {
        text += tr(", worst quality %1").arg(last.worstQuality, 0, 'g', 3);
    }
    text += worstAfter > 0
                ? tr(". Over %1 steps: at most %2 after a step (t = %3 s), %4 steps "
                     "with any.")
                      .arg(samples_.size())
                      .arg(worstAfter)
                      .arg(worstAt, 0, 'f', 3)
                      .arg(stepsInverted)
                : tr(". Over %1 steps: none left inverted after any step.").arg(samples_.size());
    return text;
}

} // namespace pbd
