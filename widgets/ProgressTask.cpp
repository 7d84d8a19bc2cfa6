#include "widgets/ProgressTask.h"

#include <QEventLoop>
#include <QProgressDialog>
#include <QTimer>

#include <atomic>
#include <mutex>
#include <thread>

namespace pbd {

void runWithProgress(QWidget* parent, const QString& title, const QString& label,
                     const std::function<void(const ProgressCallback&)>& work) {
    // The work runs on its own thread; this one keeps drawing and takes Cancel.
    std::atomic<double> fraction{0.0};
    std::atomic<bool> cancel{false};
    std::atomic<bool> finished{false};
    std::mutex stageMutex;
    std::string stage = "starting";
    std::thread worker([&] {
        work([&](double f, const std::string& s) {
            if (f >= 0) {
                fraction = f;
                std::lock_guard<std::mutex> lock(stageMutex);
                stage = s;
            }
            return !cancel.load();
        });
        finished = true;
    });
    QProgressDialog progress(label + QStringLiteral("…"), QObject::tr("Cancel"), 0, 1000, parent);
    progress.setObjectName(QStringLiteral("prepareProgress"));
    progress.setWindowTitle(title);
    progress.setWindowModality(Qt::WindowModal);
    progress.setMinimumDuration(400);
    progress.setAutoReset(false);
    progress.setAutoClose(false);
    QEventLoop loop;
    QTimer poll;
    poll.setInterval(30);
    QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
        if (finished) {
            loop.quit();
            return;
        }
        {
            std::lock_guard<std::mutex> lock(stageMutex);
            progress.setLabelText(
                QStringLiteral("%1: %2").arg(label, QString::fromStdString(stage)));
        }
        progress.setValue(int(fraction * 1000));
        if (progress.wasCanceled()) {
            cancel = true;
        }
    });
    poll.start();
    loop.exec();
    worker.join();
    progress.close();
}

} // namespace pbd
