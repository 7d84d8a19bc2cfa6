#include "app/reactions/ViewReaction.h"

#include "app/SceneDocument.h"
#include "app/SceneView.h"
#include "app/Workbench.h"
#include "widgets/FieldPanel.h"
#include "widgets/SceneTreePanel.h"
#include "widgets/VtkViewport.h"

#include <QAction>
#include <QActionGroup>
#include <QMainWindow>
#include <QMenu>
#include <QSettings>

namespace pbd {

namespace {

QAction* toggle(QWidget* parent, const QString& text, const char* name, const QKeySequence& key,
                bool checked = false) {
    auto* a = new QAction(text, parent);
    a->setObjectName(QLatin1String(name));
    a->setCheckable(true);
    a->setChecked(checked);
    a->setShortcut(key);
    return a;
}

} // namespace

ViewReaction::ViewReaction(Workbench& bench, QObject* parent)
    : QObject(parent)
    , bench_(bench) {
    QWidget* w = bench_.window;
    auto* reset = new QAction(tr("&Frame All"), w);
    reset->setObjectName(QStringLiteral("actionFrameAll"));
    reset->setShortcuts({QKeySequence(Qt::Key_F), QKeySequence(Qt::CTRL | Qt::Key_R)});
    reset->setToolTip(tr("The camera back to its front view, framing every body (not the ground)"));
    connect(reset, &QAction::triggered, bench_.viewport, &VtkViewport::resetCamera);
    wireframe_ = toggle(w, tr("&Wireframe"), "actionWireframe", Qt::Key_W);
    connect(wireframe_, &QAction::toggled, bench_.view, &SceneView::setWireframe);
    axes_ = toggle(w, tr("Show &Axes"), "actionShowAxes", Qt::Key_A, true);
    connect(axes_, &QAction::toggled, bench_.viewport, &VtkViewport::setAxesVisible);
    QAction* clip = toggle(w, tr("&Clip Tet Bodies"), "actionClip", Qt::Key_C);
    connect(clip, &QAction::toggled, bench_.fields, &FieldPanel::setClipEnabled);
    connect(bench_.fields, &FieldPanel::clipChanged, clip,
            [this, clip] { clip->setChecked(bench_.fields->clipEnabled()); });
    QAction* frames = toggle(w, tr("&Material Frames"), "actionFrames", Qt::Key_M);
    frames->setToolTip(tr("Each UV-mapped triangle's material u (red) and v (green) axes"));
    connect(frames, &QAction::toggled, bench_.view, &SceneView::setFrameGlyphs);
    QAction* rigid =
        toggle(w, tr("Rigid Contacts and &Joints"), "actionRigidContacts", Qt::Key_J, true);
    rigid->setToolTip(tr("Rigid contact points along their normals, coloured by the contact "
                         "force, and joint anchors with their frames"));
    connect(rigid, &QAction::toggled, bench_.view, &SceneView::setRigidContactsShown);
    skeletons_ = toggle(w, tr("Character &Skeletons"), "actionSkeletons", Qt::Key_K);
    skeletons_->setToolTip(tr("Each animated character's bones, posed at the time shown, through "
                              "a see-through skin"));
    connect(skeletons_, &QAction::toggled, bench_.view, &SceneView::setSkeletonsShown);

    // Constraints drawn as lines coloured by how hard they fight.
    auto* constraints = new QMenu(tr("&Constraints"), w);
    constraints->setObjectName(QStringLiteral("menuConstraints"));
    const std::pair<const char*, const char*> kinds[] = {{"Distance", "&Distance Edges"},
                                                         {"Bending", "&Bending Hinges"},
                                                         {"Attachments", "&Attachments"},
                                                         {"Contacts", "&Contacts"}};
    for (const auto& [name, text] : kinds) {
        QAction* a = constraints->addAction(tr(text));
        a->setObjectName(QStringLiteral("actionDraw") + QLatin1String(name));
        a->setCheckable(true);
        connect(a, &QAction::toggled, this, &ViewReaction::applyConstraintDrawing);
        drawKinds_.append(a);
    }
    constraints->addSeparator();
    auto* colourBy = new QActionGroup(this);
    QAction* byResidual = constraints->addAction(tr("Colour by Residual |C|"));
    byResidual->setObjectName(QStringLiteral("actionColourByResidual"));
    byLambda_ = constraints->addAction(tr("Colour by Force |λ|"));
    byLambda_->setObjectName(QStringLiteral("actionColourByLambda"));
    for (QAction* a : {byResidual, byLambda_}) {
        a->setCheckable(true);
        colourBy->addAction(a);
        connect(a, &QAction::toggled, this, &ViewReaction::applyConstraintDrawing);
    }
    byResidual->setChecked(true);

    auto* air = new QMenu(tr("Air &Mesh"), w);
    auto* airGroup = new QActionGroup(this);
    const std::pair<const char*, SceneActors::AirMode> modes[] = {
        {"Hidden", SceneActors::AirMode::Hidden},
        {"Wireframe", SceneActors::AirMode::Wireframe},
        {"Transparent", SceneActors::AirMode::Transparent}};
    for (const auto& [name, mode] : modes) {
        QAction* a = air->addAction(tr(name));
        a->setObjectName(QStringLiteral("actionAir") + QLatin1String(name));
        a->setCheckable(true);
        a->setChecked(mode == SceneActors::AirMode::Hidden);
        airGroup->addAction(a);
        connect(a, &QAction::triggered, this, [this, mode = mode] {
            bench_.view->setAirMode(mode);
            bench_.sceneTree->setAirShown(mode != SceneActors::AirMode::Hidden);
        });
        airModes_.append(a);
    }
    connect(bench_.view, &SceneView::airModeWanted, this, &ViewReaction::setAirMode);
    // The Scene dock's air tick box: shown as a wireframe, unless a drawing mode was chosen.
    connect(bench_.sceneTree, &SceneTreePanel::airVisibilityToggled, this, [this](bool shown) {
        if (!shown) {
            setAirMode(SceneActors::AirMode::Hidden);
        } else if (bench_.view->actors()->airMode() == SceneActors::AirMode::Hidden) {
            setAirMode(SceneActors::AirMode::Wireframe);
        }
    });
    actions_ = {reset,
                wireframe_,
                axes_,
                clip,
                frames,
                rigid,
                skeletons_,
                constraints->menuAction(),
                air->menuAction()};
}

void ViewReaction::setAirMode(SceneActors::AirMode mode) {
    airModes_[int(mode)]->trigger();
}

void ViewReaction::applyConstraintDrawing() {
    std::array<bool, 4> kinds{};
    for (int k = 0; k < 4; ++k) {
        kinds[std::size_t(k)] = drawKinds_[k]->isChecked();
    }
    bench_.view->setConstraintDrawing(kinds, byLambda_->isChecked());
}

void ViewReaction::restoreSettings(QSettings& settings) {
    wireframe_->setChecked(settings.value(QStringLiteral("view/wireframe"), false).toBool());
    axes_->setChecked(settings.value(QStringLiteral("view/axes"), true).toBool());
    skeletons_->setChecked(settings.value(QStringLiteral("view/skeletons"), false).toBool());
}

void ViewReaction::saveSettings(QSettings& settings) const {
    settings.setValue(QStringLiteral("view/wireframe"), wireframe_->isChecked());
    settings.setValue(QStringLiteral("view/axes"), axes_->isChecked());
    settings.setValue(QStringLiteral("view/skeletons"), skeletons_->isChecked());
}

} // namespace pbd
