#include "app/ViewBench.h"

#include "app/MainWindow.h"
#include "app/SimulationWorker.h"
#include "widgets/VtkViewport.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QTimer>

#include <algorithm>
#include <vector>

namespace pbd {
namespace {

double median(std::vector<double> v) {
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

double largest(const std::vector<double>& v) {
    return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

} // namespace

QJsonObject benchView(MainWindow& window, double seconds) {
    VtkViewport* viewport = window.viewport();
    SceneView* view = window.sceneView();
    SimulationWorker* worker = window.simulation();
    std::vector<double> renderMs, updateMs;
    std::size_t shown = view->snapshotsShown();
    std::size_t reduced = 0;
    const auto rendered = QObject::connect(viewport, &VtkViewport::frameRendered, [&] {
        renderMs.push_back(viewport->lastRenderMilliseconds());
        reduced += viewport->lastFrameReduced() ? 1 : 0;
        if (view->snapshotsShown() != shown) {
            shown = view->snapshotsShown();
            updateMs.push_back(view->lastSnapshotMilliseconds());
        }
    });
    QTimer turn;
    turn.setInterval(10);
    QObject::connect(&turn, &QTimer::timeout, viewport, [viewport] {
        viewport->rotateCamera(1.0, 0.0);
        viewport->update();
    });
    const auto before = worker->latest();
    const std::size_t stepsBefore = before ? before->steps : 0;
    worker->play();
    turn.start();
    QElapsedTimer clock;
    clock.start();
    while (clock.elapsed() < qint64(seconds * 1000)) {
        QApplication::processEvents(QEventLoop::AllEvents, 5);
    }
    const double elapsed = double(clock.nsecsElapsed()) / 1e9;
    turn.stop();
    worker->pause();
    QObject::disconnect(rendered);
    const auto after = worker->latest();
    const std::size_t steps = after ? after->steps - stepsBefore : 0;

    const Scene& scene = window.scene();
    std::size_t triangles = 0;
    for (const Body& b : scene.bodies) {
        triangles += b.triangles.size();
    }
    QJsonObject out;
    out[QStringLiteral("scene")] = QString::fromStdString(scene.name);
    out[QStringLiteral("particles")] = double(scene.particles.size());
    out[QStringLiteral("triangles")] = double(triangles);
    out[QStringLiteral("seconds")] = elapsed;
    out[QStringLiteral("frames")] = double(renderMs.size());
    out[QStringLiteral("frames_per_second")] = double(renderMs.size()) / elapsed;
    // Frames drawn at the reduced size of a moving camera (Preferences ▸ View), and that size.
    out[QStringLiteral("frames_reduced")] = double(reduced);
    out[QStringLiteral("moving_resolution")] = viewport->movingResolution();
    out[QStringLiteral("render_ms_median")] = median(renderMs);
    out[QStringLiteral("render_ms_max")] = largest(renderMs);
    out[QStringLiteral("snapshots_shown")] = double(updateMs.size());
    out[QStringLiteral("snapshot_update_ms_median")] = median(updateMs);
    out[QStringLiteral("snapshot_update_ms_max")] = largest(updateMs);
    out[QStringLiteral("steps")] = double(steps);
    out[QStringLiteral("ms_per_step")] = after ? after->lastStepMilliseconds : 0.0;
    out[QStringLiteral("threads")] = scene.solver.threads;
    return out;
}

} // namespace pbd
