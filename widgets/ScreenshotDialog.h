#pragma once
// Asks where to save a screenshot and at what resolution (defaults: the view's own size).

#include <QDialog>
#include <QSize>

class QLineEdit;
class QSpinBox;

namespace pbd {

class ScreenshotDialog : public QDialog {
    Q_OBJECT
public:
    ScreenshotDialog(const QString& path, const QSize& size, QWidget* parent = nullptr);

    QString path() const;
    QSize imageSize() const;

private:
    QLineEdit* path_;
    QSpinBox* width_;
    QSpinBox* height_;
};

} // namespace pbd
