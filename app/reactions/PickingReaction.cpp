#include "app/reactions/PickingReaction.h"

#include "app/SceneDocument.h"
#include "app/SceneView.h"
#include "app/Workbench.h"
#include "widgets/SceneTreePanel.h"
#include "widgets/VtkViewport.h"

#include <QMainWindow>
#include <QStatusBar>

namespace pbd {

PickingReaction::PickingReaction(Workbench& bench, QObject* parent)
    : QObject(parent)
    , bench_(bench) {
    connect(bench_.viewport, &VtkViewport::hovered, this,
            [this](const QPointF& p) { showPickInfo(p, false); });
    connect(bench_.viewport, &VtkViewport::clicked, this, [this](const QPointF& p) {
        showPickInfo(p, true);
        if (const auto v = bench_.view->vertexAt(p);
            v && bench_.sceneTree->selectedBody() != int(v->body)) {
            bench_.sceneTree->selectBody(int(v->body));
        }
    });
    connect(bench_.viewport, &VtkViewport::shiftClicked, this, [this](const QPointF& p) {
        if (const auto v = bench_.view->vertexAt(p)) {
            bench_.document->togglePin(v->particle);
            showPickInfo(p, false);
        }
    });
}

void PickingReaction::showPickInfo(const QPointF& position, bool logIt) {
    const auto v = bench_.view->vertexAt(position);
    if (!v) {
        if (!logIt) {
            bench_.window->statusBar()->clearMessage();
        }
        return;
    }
    const QString text = bench_.view->describeVertex(*v);
    bench_.window->statusBar()->showMessage(text);
    if (logIt) {
        bench_.report(Severity::Info, text);
    }
}

} // namespace pbd
