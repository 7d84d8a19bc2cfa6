#include "app/reactions/SelectionReaction.h"

#include "app/SceneDocument.h"
#include "app/SceneView.h"
#include "app/Workbench.h"
#include "widgets/VtkViewport.h"

#include <QAction>
#include <QMainWindow>
#include <QMenu>

namespace pbd {

SelectionReaction::SelectionReaction(Workbench& bench, QObject* parent)
    : QObject(parent)
    , bench_(bench) {
    auto* select = new QAction(tr("&Select Vertices"), bench_.window);
    select->setObjectName(QStringLiteral("actionSelectVertices"));
    select->setCheckable(true);
    select->setShortcut(Qt::Key_V);
    select->setToolTip(tr("In the view: click a vertex, Ctrl+click to add or remove one, drag "
                          "a box to select the vertices in it"));
    connect(select, &QAction::toggled, this, [this](bool on) {
        bench_.viewport->setSelecting(on);
        bench_.showStatus(on ? tr("Selecting vertices: click, Ctrl+click, or drag a box; middle "
                                  "drag pans, V leaves")
                             : tr("Left drag rotates again"),
                          8000);
    });
    auto* clear = new QAction(tr("Clear Selection"), bench_.window);
    clear->setObjectName(QStringLiteral("actionClearSelection"));
    clear->setShortcut(Qt::Key_Escape);
    connect(clear, &QAction::triggered, this, [this] { bench_.document->setSelection({}); });
    auto* attach = new QMenu(tr("A&ttach Selection"), bench_.window);
    attach->setObjectName(QStringLiteral("menuAttach"));
    connect(attach, &QMenu::aboutToShow, this, [this, attach] {
        using Target = SceneDocument::AttachTarget;
        SceneDocument* document = bench_.document;
        const Scene& scene = document->scene();
        attach->clear();
        QAction* points = attach->addAction(tr("To Their Place (pin)"));
        points->setObjectName(QStringLiteral("actionAttachToPoints"));
        connect(points, &QAction::triggered, document,
                [document] { document->attachSelection(Target::Points); });
        auto addTargets = [&](const QString& title, const auto& items, Target target) {
            QMenu* menu = attach->addMenu(title);
            for (std::size_t i = 0; i < items.size(); ++i) {
                QAction* a = menu->addAction(QString::fromStdString(items[i].name));
                connect(a, &QAction::triggered, document,
                        [document, target, i] { document->attachSelection(target, int(i)); });
            }
            menu->setEnabled(!items.empty());
        };
        addTargets(tr("To Collider"), scene.colliders, Target::Collider);
        addTargets(tr("To Body"), scene.bodies, Target::Body);
        addTargets(tr("To Rigid Body"), scene.rigidBodies, Target::RigidBody);
        addTargets(tr("To Character"), scene.characters, Target::Character);
        for (QAction* a : attach->actions()) {
            a->setEnabled(a->isEnabled() && !document->selection().empty());
        }
    });
    // In the view, while selecting: click, Ctrl+click and box.
    connect(bench_.viewport, &VtkViewport::selectionClicked, this, &SelectionReaction::selectAt);
    connect(bench_.viewport, &VtkViewport::boxSelected, this, &SelectionReaction::selectInRect);
    connect(bench_.document, &SceneDocument::selectionChanged, this, &SelectionReaction::showCount);
    actions_ = {select, clear, attach->menuAction()};
}

void SelectionReaction::selectAt(const QPointF& position, bool add) {
    const auto v = bench_.view->vertexAt(position);
    std::vector<Index> selection = add ? bench_.document->selection() : std::vector<Index>{};
    if (v) {
        const auto at = std::lower_bound(selection.begin(), selection.end(), v->particle);
        if (add && at != selection.end() && *at == v->particle) {
            selection.erase(at); // Ctrl+click on a selected vertex deselects it
        } else {
            selection.insert(at, v->particle);
        }
    }
    bench_.document->setSelection(std::move(selection));
}

void SelectionReaction::selectInRect(const QRectF& rect, bool add) {
    std::vector<Index> selection = add ? bench_.document->selection() : std::vector<Index>{};
    const std::vector<Index> inside = bench_.view->particlesIn(rect);
    selection.insert(selection.end(), inside.begin(), inside.end());
    bench_.document->setSelection(std::move(selection));
}

void SelectionReaction::showCount() {
    const std::size_t n = bench_.document->selection().size();
    bench_.showStatus(n == 0 ? tr("No vertices selected")
                             : tr("%n vertices selected: Edit ▸ Attach Selection attaches them",
                                  nullptr, int(n)));
}

} // namespace pbd
