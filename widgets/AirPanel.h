#pragma once
// The Air dock: the air mesh over the run, one point per step — the air tets inverted before
// solving and after the step's projection, and the worst air tet's quality — so one sees when
// and where in the run the air starts to lock (Air Meshes §4).

#include <QWidget>

#include <cstddef>
#include <vector>

class QLabel;
class QLineSeries;
class QValueAxis;

namespace pbd {

// One step's air figures.
struct AirSample {
    double time = 0;                // simulated time at the end of the step, s
    std::size_t invertedBefore = 0; // air tets inverted before the step's projection
    std::size_t invertedAfter = 0;  // air tets still inverted after it
    double worstQuality = 0;        // the worst air tet's quality (eq. 4), NaN when not measured
};

class AirPanel : public QWidget {
    Q_OBJECT
public:
    explicit AirPanel(QWidget* parent = nullptr);

    // Adds the steps after the ones shown.
    void append(const std::vector<AirSample>& samples);
    // Forgets the run (a new scene, a reset).
    void clear();
    std::size_t sampleCount() const { return samples_.size(); }

    QLineSeries* invertedBeforeSeries() const { return before_; }
    QLineSeries* invertedAfterSeries() const { return after_; }
    QLineSeries* qualitySeries() const { return quality_; }
    QValueAxis* timeAxis() const { return axisTime_; }
    QValueAxis* countAxis() const { return axisCount_; }
    QValueAxis* qualityAxis() const { return axisQuality_; }
    // The figures of the last step and of the run, in words.
    QString summary() const;

private:
    void redraw();

    std::vector<AirSample> samples_;
    QLineSeries* before_ = nullptr;
    QLineSeries* after_ = nullptr;
    QLineSeries* quality_ = nullptr;
    QValueAxis* axisTime_ = nullptr;
    QValueAxis* axisCount_ = nullptr;
    QValueAxis* axisQuality_ = nullptr;
    QLabel* summary_ = nullptr;
};

} // namespace pbd
