#pragma once
// File ▸ Save Screenshot: a PNG of the 3D view at a chosen size (the view's own by default).

#include <QObject>

class QAction;
class QSettings;

namespace pbd {

struct Workbench;

class ScreenshotReaction : public QObject {
    Q_OBJECT
public:
    ScreenshotReaction(Workbench& bench, QObject* parent);
    QAction* action() const { return action_; }
    void restoreSettings(QSettings& settings);
    void saveSettings(QSettings& settings) const;

private:
    void screenshotWithDialog();

    Workbench& bench_;
    QAction* action_ = nullptr;
    QString lastScreenshot_;
};

} // namespace pbd
