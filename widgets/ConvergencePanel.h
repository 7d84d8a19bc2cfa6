#pragma once
// The Convergence dock: the largest constraint error after each iteration of the last step, on
// a log scale, so one can see whether more iterations would help.

#include <QWidget>

#include <vector>

class QLineSeries;
class QLogValueAxis;
class QValueAxis;

namespace pbd {

class ConvergencePanel : public QWidget {
    Q_OBJECT
public:
    explicit ConvergencePanel(QWidget* parent = nullptr);
    // Plots (iteration, error) for the errors of one step; nothing changes for none.
    void showErrors(const std::vector<double>& errors);
    QLineSeries* series() const { return series_; }
    QValueAxis* iterationAxis() const { return axisX_; }
    QLogValueAxis* errorAxis() const { return axisY_; }

private:
    QLineSeries* series_ = nullptr;
    QValueAxis* axisX_ = nullptr;
    QLogValueAxis* axisY_ = nullptr;
};

} // namespace pbd
