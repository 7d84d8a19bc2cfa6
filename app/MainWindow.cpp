#include "app/MainWindow.h"

#include "app/SimulationWorker.h"
#include "core/base/Version.h"
#include "core/constraints/Attaching.h"
#include "core/fields/SurfaceFields.h"
#include "core/scene/Mass.h"
#include "core/scenes/SceneLibrary.h"
#include "meshing/AirScenes.h"
#include "meshing/CookedAsset.h"
#include "meshing/Export.h"
#include "meshing/LibraryVersions.h"
#include "meshing/MeshImport.h"
#include "meshing/ProjectFile.h"
#include "widgets/LogPanel.h"
#include "widgets/PrepareDialog.h"
#include "widgets/PropertiesPanel.h"
#include "widgets/RigidActors.h"
#include "widgets/SceneActors.h"
#include "widgets/SceneTreePanel.h"
#include "widgets/ScreenshotDialog.h"
#include "widgets/VtkMessageRelay.h"
#include "widgets/VtkViewport.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QEventLoop>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QImageWriter>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressDialog>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSlider>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QThread>
#include <QToolButton>
#include <QUndoCommand>
#include <QUndoStack>
#include <QUndoView>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QValueAxis>

#include <vtkVersion.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>
#include <thread>

namespace pbd {

namespace {

QString qtext(std::string_view s) {
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}
constexpr int kMaxRecentFiles = 10;
} // namespace

MainWindow::MainWindow(bool persistSettings, QWidget* parent)
    : QMainWindow(parent)
    , persistSettings_(persistSettings)
    , prepareOptions_(PrepareDialog::defaultOptions()) {
    setObjectName(QStringLiteral("mainWindow"));
    setWindowTitle(QStringLiteral("PBD Lab"));
    setAcceptDrops(true);
    resize(1280, 800);

    viewport_ = new VtkViewport(this);
    viewport_->setObjectName(QStringLiteral("viewport"));
    setCentralWidget(viewport_);
    actors_ = std::make_unique<SceneActors>(viewport_->renderer());
    rigidActors_ = std::make_unique<RigidActors>(viewport_->renderer());
    worker_ = new SimulationWorker(this);
    undoStack_ = new QUndoStack(this);
    frameTimer_.setSingleShot(true);
    connect(&frameTimer_, &QTimer::timeout, this, &MainWindow::showSnapshot);
    connect(worker_, &SimulationWorker::snapshotReady, this, &MainWindow::showSnapshot,
            Qt::QueuedConnection);

    createDocks();
    createActions();

    VtkMessageRelay* relay = VtkMessageRelay::install();
    relay->setHandler([log = QPointer<LogPanel>(log_)](Severity s, const QString& m) {
        if (log) {
            log->append(s, QStringLiteral("VTK: ") + m);
        }
    });
    connect(viewport_, &VtkViewport::glErrorOccurred, log_,
            [this](const QString& m) { log_->append(Severity::Error, m); });
    // Picking: hovering shows a vertex's values in the status bar, a click also logs them,
    // Shift+click pins or unpins it (undoable).
    connect(viewport_, &VtkViewport::hovered, this,
            [this](const QPointF& p) { showPickInfo(p, false); });
    // A click also selects the body under the mouse in the Scene dock (and so in Properties).
    connect(viewport_, &VtkViewport::clicked, this, [this](const QPointF& p) {
        showPickInfo(p, true);
        if (const auto v = vertexAt(p); v && sceneTree_->selectedBody() != int(v->body)) {
            sceneTree_->selectBody(int(v->body));
        }
    });
    // Selection mode (Edit ▸ Select Vertices): click, Ctrl+click and box select vertices.
    connect(viewport_, &VtkViewport::selectionClicked, this, [this](const QPointF& p, bool add) {
        const auto v = vertexAt(p);
        std::vector<Index> selection = add ? selection_ : std::vector<Index>{};
        if (v) {
            const auto at = std::lower_bound(selection.begin(), selection.end(), v->particle);
            if (add && at != selection.end() && *at == v->particle) {
                selection.erase(at); // Ctrl+click on a selected vertex deselects it
            } else {
                selection.insert(at, v->particle);
            }
        }
        setVertexSelection(std::move(selection));
    });
    connect(viewport_, &VtkViewport::boxSelected, this,
            [this](const QRectF& rect, bool add) { selectInRect(rect, add); });
    connect(viewport_, &VtkViewport::shiftClicked, this, [this](const QPointF& p) {
        if (const auto v = vertexAt(p)) {
            togglePin(v->particle);
            showPickInfo(p, false);
        }
    });

    connect(undoStack_, &QUndoStack::cleanChanged, this, &MainWindow::updateModified);
    if (persistSettings_) {
        autosaveTimer_ = new QTimer(this);
        autosaveTimer_->setObjectName(QStringLiteral("autosaveTimer"));
        autosaveTimer_->setInterval(2 * 60 * 1000);
        connect(autosaveTimer_, &QTimer::timeout, this, &MainWindow::autosave);
        autosaveTimer_->start();
    }
    statusBar()->showMessage(tr("Left drag: rotate · Shift+drag or middle drag: pan · wheel or "
                                "right drag: zoom · R: reset camera"));
    if (persistSettings_) {
        restoreSettings();
        if (QFileInfo::exists(autosavePath())) {
            log_->append(Severity::Warning,
                         tr("Unsaved work from %1 was autosaved: File ▸ Recover Autosave opens "
                            "it.")
                             .arg(QFileInfo(autosavePath()).lastModified().toString(Qt::ISODate)));
        }
    }
}

MainWindow::~MainWindow() {
    // The relay outlives the window; stop it from logging into a deleted panel.
    VtkMessageRelay::install()->setHandler({});
}

void MainWindow::createDocks() {
    sceneTree_ = new SceneTreePanel(this);
    properties_ = new PropertiesPanel(this);
    log_ = new LogPanel(this);

    auto makeDock = [this](const QString& title, const QString& name, QWidget* content,
                           Qt::DockWidgetArea area) {
        auto* dock = new QDockWidget(title, this);
        dock->setObjectName(name);
        dock->setWidget(content);
        addDockWidget(area, dock);
        return dock;
    };
    QDockWidget* sceneDock =
        makeDock(tr("Scene"), QStringLiteral("sceneDock"), sceneTree_, Qt::LeftDockWidgetArea);
    QDockWidget* propertiesDock = makeDock(tr("Properties"), QStringLiteral("propertiesDock"),
                                           properties_, Qt::LeftDockWidgetArea);
    QDockWidget* logDock =
        makeDock(tr("Log"), QStringLiteral("logDock"), log_, Qt::BottomDockWidgetArea);
    // Scrolls rather than growing the window when the dock is short.
    auto* simulationScroll = new QScrollArea(this);
    simulationScroll->setObjectName(QStringLiteral("simulationScroll"));
    simulationScroll->setWidgetResizable(true);
    simulationScroll->setFrameShape(QFrame::NoFrame);
    simulationScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    simulationScroll->setWidget(createSimulationPanel());
    makeDock(tr("Simulation"), QStringLiteral("simulationDock"), simulationScroll,
             Qt::RightDockWidgetArea);
    auto* history = new QUndoView(undoStack_, this);
    history->setEmptyLabel(tr("<loaded scene>"));
    QDockWidget* historyDock =
        makeDock(tr("History"), QStringLiteral("historyDock"), history, Qt::LeftDockWidgetArea);
    tabifyDockWidget(propertiesDock, historyDock);
    propertiesDock->raise();
    convergenceDock_ = makeDock(tr("Convergence"), QStringLiteral("convergenceDock"),
                                createConvergencePanel(), Qt::RightDockWidgetArea);
    // Recording costs solver time: only while the plot can be seen.
    connect(convergenceDock_, &QDockWidget::visibilityChanged, this,
            [this](bool visible) { worker_->setRecordConvergence(visible); });
    // First-launch layout: the view gets most of the window. A saved layout replaces this.
    resizeDocks({sceneDock, propertiesDock}, {300, 300}, Qt::Horizontal);
    resizeDocks({sceneDock, propertiesDock}, {260, 340}, Qt::Vertical);
    resizeDocks({logDock}, {140}, Qt::Vertical);

    connect(sceneTree_, &SceneTreePanel::bodySelected, this, [this](int body) {
        properties_->showBody(scene_, body);
        actors_->setHighlightedBody(body); // the selection shows in the view too
        viewport_->update();
    });
    connect(sceneTree_, &SceneTreePanel::groupSelected, this, [this](int index) {
        properties_->showGroup(scene_, index);
        if (index >= 0 && std::size_t(index) < scene_.constraintGroups.size()) {
            actors_->setHighlightedBody(scene_.constraintGroups[std::size_t(index)].body);
            viewport_->update();
        }
    });
    connect(sceneTree_, &SceneTreePanel::groupEnabledToggled, this, [this](int index, bool on) {
        if (index >= 0 && std::size_t(index) < scene_.constraintGroups.size()) {
            ConstraintGroup g = scene_.constraintGroups[std::size_t(index)];
            g.enabled = on;
            setConstraintGroup(index, g);
        }
    });
    connect(sceneTree_, &SceneTreePanel::addGroupRequested, this,
            [this](int body, ConstraintType type) { addConstraintGroup(body, type); });
    connect(sceneTree_, &SceneTreePanel::removeGroupRequested, this,
            [this](int index) { removeConstraintGroup(index); });
    // Queued: the panel is rebuilt by the edit, after the edited item's signal has returned.
    connect(
        properties_, &PropertiesPanel::groupEdited, this,
        [this](int index, const ConstraintGroup& group) {
            QString error;
            if (!setConstraintGroup(index, group, &error)) {
                log_->append(Severity::Error, error);
                properties_->showGroup(scene_, index);
            }
        },
        Qt::QueuedConnection);
    connect(properties_, &PropertiesPanel::editRejected, this, [this](const QString& message) {
        log_->append(Severity::Error, message);
        statusBar()->showMessage(message, 8000);
    });
    connect(sceneTree_, &SceneTreePanel::rigidBodySelected, this,
            [this](int index) { properties_->showRigidBody(scene_, index); });
    connect(sceneTree_, &SceneTreePanel::colliderSelected, this, [this](int index) {
        properties_->showCollider(scene_, index);
        actors_->setHighlightedBody(-1);
        if (actors_->selectedCollider() != index) {
            actors_->setColliders(scene_, index);
            viewport_->update();
        }
    });
    connect(
        properties_, &PropertiesPanel::densityEdited, this,
        [this](int body, double density) {
            QString error;
            if (!setBodyDensity(body, density, &error)) {
                log_->append(Severity::Error, error);
                properties_->showBody(scene_, body);
            }
        },
        Qt::QueuedConnection);
    connect(sceneTree_, &SceneTreePanel::airVisibilityToggled, this, [this](bool shown) {
        // Shown: wireframe, unless a drawing mode was chosen already.
        const QString mode = !shown ? QStringLiteral("actionAirHidden")
                             : actors_->airMode() != SceneActors::AirMode::Hidden
                                 ? QString()
                                 : QStringLiteral("actionAirWireframe");
        if (!mode.isEmpty()) {
            findChild<QAction*>(mode)->trigger();
        }
    });
    connect(sceneTree_, &SceneTreePanel::selfCollisionSelected, this,
            [this] { properties_->showSelfCollision(scene_); });
    connect(sceneTree_, &SceneTreePanel::selfCollisionToggled, this,
            [this](bool on) { setSelfCollision(on, scene_.solver.clothThickness); });
    connect(
        properties_, &PropertiesPanel::selfCollisionEdited, this,
        [this](bool on, double thickness) {
            QString error;
            if (!setSelfCollision(on, thickness, &error)) {
                log_->append(Severity::Error, error);
                properties_->showSelfCollision(scene_);
            }
        },
        Qt::QueuedConnection);
    connect(sceneTree_, &SceneTreePanel::addColliderRequested, this,
            [this](ColliderShape shape) { addCollider(shape); });
    connect(sceneTree_, &SceneTreePanel::removeColliderRequested, this,
            [this](int index) { removeCollider(index); });
    connect(
        properties_, &PropertiesPanel::colliderEdited, this,
        [this](int index, const Collider& collider) {
            QString error;
            if (!setCollider(index, collider, &error)) {
                log_->append(Severity::Error, error);
                properties_->showCollider(scene_, index);
            }
        },
        Qt::QueuedConnection);
    connect(sceneTree_, &SceneTreePanel::bodyVisibilityToggled, this,
            [this](int body, bool visible) {
                if (body >= 0 && std::size_t(body) < actors_->bodyCount()) {
                    actors_->setBodyVisible(std::size_t(body), visible);
                    viewport_->update();
                }
            });
}

void MainWindow::createActions() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open…"), this, &MainWindow::openWithDialog);
    open->setObjectName(QStringLiteral("actionOpen"));
    open->setShortcut(QKeySequence::Open);
    recentMenu_ = file->addMenu(tr("Open &Recent"));
    recentMenu_->setObjectName(QStringLiteral("menuRecent"));
    QMenu* samples = file->addMenu(tr("Open &Sample Scene"));
    for (const SceneInfo& info : allScenes()) {
        QAction* a = samples->addAction(QString::fromStdString(info.name), this,
                                        [this, name = QString::fromStdString(info.name)] {
                                            if (maybeSave()) {
                                                loadGeneratedScene(name);
                                            }
                                        });
        a->setToolTip(QString::fromStdString(info.description));
        a->setObjectName(QStringLiteral("actionScene_") + QString::fromStdString(info.name));
    }
    file->addSeparator();
    QAction* saveAction = file->addAction(tr("&Save"), this, &MainWindow::save);
    saveAction->setObjectName(QStringLiteral("actionSave"));
    saveAction->setShortcut(QKeySequence::Save);
    QAction* saveAs = file->addAction(tr("Save &As…"), this, &MainWindow::saveAsWithDialog);
    saveAs->setObjectName(QStringLiteral("actionSaveAs"));
    saveAs->setShortcut(QKeySequence::SaveAs);
    QAction* recover = file->addAction(tr("&Recover Autosave"), this, [this] {
        if (maybeSave()) {
            recoverAutosave();
        }
    });
    recover->setObjectName(QStringLiteral("actionRecoverAutosave"));
    file->addSeparator();
    QAction* exportAction = file->addAction(tr("&Export…"), this, &MainWindow::exportWithDialog);
    exportAction->setObjectName(QStringLiteral("actionExport"));
    exportAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    QAction* shot =
        file->addAction(tr("Save &Screenshot…"), this, &MainWindow::screenshotWithDialog);
    shot->setObjectName(QStringLiteral("actionScreenshot"));
    shot->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_S));
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setObjectName(QStringLiteral("actionQuit"));
    quit->setShortcut(QKeySequence::Quit);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = undoStack_->createUndoAction(this, tr("&Undo"));
    undo->setObjectName(QStringLiteral("actionUndo"));
    undo->setShortcut(QKeySequence::Undo);
    edit->addAction(undo);
    QAction* redo = undoStack_->createRedoAction(this, tr("&Redo"));
    redo->setObjectName(QStringLiteral("actionRedo"));
    redo->setShortcuts({QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), QKeySequence::Redo});
    edit->addAction(redo);
    QAction* historyAction = edit->addAction(tr("Undo &History"));
    historyAction->setObjectName(QStringLiteral("actionUndoHistory"));
    historyAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_H));
    connect(historyAction, &QAction::triggered, this, [this] {
        if (auto* dock = findChild<QDockWidget*>(QStringLiteral("historyDock"))) {
            dock->show();
            dock->raise();
        }
    });
    edit->addSeparator();
    QMenu* addGroup = edit->addMenu(tr("&Add Constraint Group"));
    addGroup->setObjectName(QStringLiteral("menuAddGroup"));
    connect(addGroup, &QMenu::aboutToShow, this, [this, addGroup] {
        addGroup->clear();
        const int body = sceneTree_->selectedBody();
        const auto types = groupTypesFor(scene_, body);
        if (types.empty()) {
            addGroup->addAction(tr("Select a cloth or tet body in the Scene dock"))
                ->setEnabled(false);
        }
        for (ConstraintType type : types) {
            QAction* a = addGroup->addAction(qtext(groupTypeLabel(type)));
            connect(a, &QAction::triggered, this,
                    [this, body, type] { addConstraintGroup(body, type); });
        }
    });
    QAction* removeGroup = edit->addAction(tr("&Remove Constraint Group"));
    removeGroup->setObjectName(QStringLiteral("actionRemoveGroup"));
    removeGroup->setShortcut(QKeySequence::Delete);
    removeGroup->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    sceneTree_->addAction(removeGroup); // Delete in the Scene dock: a group or a collider
    connect(removeGroup, &QAction::triggered, this, [this] {
        if (sceneTree_->selectedGroup() >= 0) {
            removeConstraintGroup(sceneTree_->selectedGroup());
        } else if (sceneTree_->selectedCollider() >= 0) {
            removeCollider(sceneTree_->selectedCollider());
        } else {
            statusBar()->showMessage(
                tr("Select a constraint group or a collider in the Scene dock first"), 5000);
        }
    });
    edit->addSeparator();
    QMenu* addColliderMenu = edit->addMenu(tr("Add &Collider"));
    addColliderMenu->setObjectName(QStringLiteral("menuAddCollider"));
    for (ColliderShape shape : {ColliderShape::Plane, ColliderShape::Sphere, ColliderShape::Box,
                                ColliderShape::Capsule}) {
        QAction* a = addColliderMenu->addAction(qtext(toString(shape)));
        a->setObjectName(QStringLiteral("actionAddCollider_") + qtext(toString(shape)));
        connect(a, &QAction::triggered, this, [this, shape] { addCollider(shape); });
    }
    QAction* meshCollider = addColliderMenu->addAction(tr("Mesh from File…"));
    meshCollider->setObjectName(QStringLiteral("actionAddCollider_mesh"));
    connect(meshCollider, &QAction::triggered, this, [this] {
        QStringList patterns;
        for (const std::string& ext : supportedMeshExtensions()) {
            patterns << QStringLiteral("*") + QString::fromStdString(ext);
        }
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Mesh Collider"), lastDirectory_,
                                         tr("Meshes (%1)").arg(patterns.join(QLatin1Char(' '))));
        if (!path.isEmpty()) {
            addMeshCollider(path);
        }
    });
    edit->addSeparator();
    QAction* selectVertices = edit->addAction(tr("&Select Vertices"));
    selectVertices->setObjectName(QStringLiteral("actionSelectVertices"));
    selectVertices->setCheckable(true);
    selectVertices->setShortcut(Qt::Key_V);
    selectVertices->setToolTip(tr("In the view: click a vertex, Ctrl+click to add or remove one, "
                                  "drag a box to select the vertices in it"));
    connect(selectVertices, &QAction::toggled, this, [this](bool on) {
        viewport_->setSelecting(on);
        statusBar()->showMessage(
            on ? tr("Selecting vertices: click, Ctrl+click, or drag a box; middle drag pans, "
                    "V leaves")
               : tr("Left drag rotates again"),
            8000);
    });
    QAction* clearSelection = edit->addAction(tr("Clear Selection"));
    clearSelection->setObjectName(QStringLiteral("actionClearSelection"));
    clearSelection->setShortcut(Qt::Key_Escape);
    connect(clearSelection, &QAction::triggered, this, [this] { setVertexSelection({}); });
    QMenu* attach = edit->addMenu(tr("A&ttach Selection"));
    attach->setObjectName(QStringLiteral("menuAttach"));
    connect(attach, &QMenu::aboutToShow, this, [this, attach] {
        attach->clear();
        QAction* points = attach->addAction(tr("To Their Place (pin)"));
        points->setObjectName(QStringLiteral("actionAttachToPoints"));
        connect(points, &QAction::triggered, this,
                [this] { attachSelection(AttachTarget::Points); });
        QMenu* colliders = attach->addMenu(tr("To Collider"));
        for (std::size_t i = 0; i < scene_.colliders.size(); ++i) {
            QAction* a = colliders->addAction(QString::fromStdString(scene_.colliders[i].name));
            connect(a, &QAction::triggered, this,
                    [this, i] { attachSelection(AttachTarget::Collider, int(i)); });
        }
        colliders->setEnabled(!scene_.colliders.empty());
        QMenu* bodies = attach->addMenu(tr("To Body"));
        for (std::size_t i = 0; i < scene_.bodies.size(); ++i) {
            QAction* a = bodies->addAction(QString::fromStdString(scene_.bodies[i].name));
            connect(a, &QAction::triggered, this,
                    [this, i] { attachSelection(AttachTarget::Body, int(i)); });
        }
        QMenu* rigid = attach->addMenu(tr("To Rigid Body"));
        for (std::size_t i = 0; i < scene_.rigidBodies.size(); ++i) {
            QAction* a = rigid->addAction(QString::fromStdString(scene_.rigidBodies[i].name));
            connect(a, &QAction::triggered, this,
                    [this, i] { attachSelection(AttachTarget::RigidBody, int(i)); });
        }
        rigid->setEnabled(!scene_.rigidBodies.empty());
        for (QAction* a : attach->actions()) {
            a->setEnabled(a->isEnabled() && !selection_.empty());
        }
    });
    QAction* addAir = edit->addAction(tr("Tessellate the &Air"));
    addAir->setObjectName(QStringLiteral("actionAddAir"));
    addAir->setToolTip(tr("The air between and around the bodies as tets (Air Meshes), with the "
                          "Prepare dialog's air options"));
    connect(addAir, &QAction::triggered, this, [this] { addAirMesh(); });
    QAction* preferencesAction = new QAction(tr("&Preferences…"), this);
    preferencesAction->setObjectName(QStringLiteral("actionPreferences"));
    preferencesAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Comma));
    preferencesAction->setMenuRole(QAction::PreferencesRole);
    connect(preferencesAction, &QAction::triggered, this, [this] {
        Preferences current = preferences_;
        current.colourMap = colourMap_->currentText();
        PreferencesDialog dialog(current, this);
        if (dialog.exec() == QDialog::Accepted) {
            setPreferences(dialog.preferences());
        }
    });
    QAction* removeColliderAction = edit->addAction(tr("Remove C&ollider"));
    removeColliderAction->setObjectName(QStringLiteral("actionRemoveCollider"));
    connect(removeColliderAction, &QAction::triggered, this, [this] {
        if (sceneTree_->selectedCollider() >= 0) {
            removeCollider(sceneTree_->selectedCollider());
        } else {
            statusBar()->showMessage(tr("Select a collider in the Scene dock first"), 5000);
        }
    });
    edit->addSeparator();
    edit->addAction(preferencesAction);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    QAction* reset = view->addAction(tr("&Reset Camera"), viewport_, &VtkViewport::resetCamera);
    reset->setObjectName(QStringLiteral("actionResetCamera"));
    reset->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    QAction* wireframe = view->addAction(tr("&Wireframe"));
    wireframe->setObjectName(QStringLiteral("actionWireframe"));
    wireframe->setCheckable(true);
    wireframe->setShortcut(QKeySequence(Qt::Key_W));
    connect(wireframe, &QAction::toggled, this, [this](bool on) {
        actors_->setWireframe(on);
        viewport_->update();
    });
    QAction* axes = view->addAction(tr("Show &Axes"));
    axes->setObjectName(QStringLiteral("actionShowAxes"));
    axes->setCheckable(true);
    axes->setChecked(true);
    axes->setShortcut(QKeySequence(Qt::Key_A));
    connect(axes, &QAction::toggled, viewport_, &VtkViewport::setAxesVisible);
    QAction* clip = view->addAction(tr("&Clip Tet Bodies"));
    clip->setObjectName(QStringLiteral("actionClip"));
    clip->setCheckable(true);
    clip->setShortcut(QKeySequence(Qt::Key_C));
    connect(clip, &QAction::toggled, clipEnabled_, &QCheckBox::setChecked);
    QAction* frames = view->addAction(tr("Material &Frames"));
    frames->setObjectName(QStringLiteral("actionFrames"));
    frames->setCheckable(true);
    frames->setShortcut(QKeySequence(Qt::Key_F));
    frames->setToolTip(tr("Each UV-mapped triangle's material u (red) and v (green) axes"));
    connect(frames, &QAction::toggled, this, [this](bool on) {
        actors_->setFrameGlyphs(scene_, on);
        viewport_->update();
    });
    QAction* rigidContacts = view->addAction(tr("Rigid Contacts and &Joints"));
    rigidContacts->setObjectName(QStringLiteral("actionRigidContacts"));
    rigidContacts->setCheckable(true);
    rigidContacts->setChecked(true);
    rigidContacts->setShortcut(QKeySequence(Qt::Key_J));
    rigidContacts->setToolTip(tr("Rigid contact points along their normals, coloured by the "
                                 "contact force, and joint anchors with their frames"));
    connect(rigidContacts, &QAction::toggled, this, [this](bool on) {
        rigidActors_->setContactsShown(on);
        viewport_->update();
    });
    // Constraints drawn as lines coloured by how hard they fight.
    QMenu* constraints = view->addMenu(tr("&Constraints"));
    const std::pair<const char*, const char*> kinds[] = {{"Distance", "&Distance Edges"},
                                                         {"Bending", "&Bending Hinges"},
                                                         {"Attachments", "&Attachments"},
                                                         {"Contacts", "&Contacts"}};
    for (const auto& [name, text] : kinds) {
        QAction* a = constraints->addAction(tr(text));
        a->setObjectName(QStringLiteral("actionDraw") + QLatin1String(name));
        a->setCheckable(true);
        connect(a, &QAction::toggled, this, &MainWindow::applyConstraintDrawing);
    }
    constraints->addSeparator();
    auto* colourBy = new QActionGroup(this);
    QAction* byResidual = constraints->addAction(tr("Colour by Residual |C|"));
    byResidual->setObjectName(QStringLiteral("actionColourByResidual"));
    QAction* byLambda = constraints->addAction(tr("Colour by Force |λ|"));
    byLambda->setObjectName(QStringLiteral("actionColourByLambda"));
    for (QAction* a : {byResidual, byLambda}) {
        a->setCheckable(true);
        colourBy->addAction(a);
        connect(a, &QAction::toggled, this, &MainWindow::applyConstraintDrawing);
    }
    byResidual->setChecked(true);
    QMenu* air = view->addMenu(tr("Air &Mesh"));
    auto* airGroup = new QActionGroup(this);
    const std::pair<const char*, SceneActors::AirMode> airModes[] = {
        {"Hidden", SceneActors::AirMode::Hidden},
        {"Wireframe", SceneActors::AirMode::Wireframe},
        {"Transparent", SceneActors::AirMode::Transparent}};
    for (const auto& [name, mode] : airModes) {
        QAction* a = air->addAction(tr(name));
        a->setObjectName(QStringLiteral("actionAir") + QLatin1String(name));
        a->setCheckable(true);
        a->setChecked(mode == SceneActors::AirMode::Hidden);
        airGroup->addAction(a);
        connect(a, &QAction::triggered, this, [this, mode = mode] {
            actors_->setAirMode(mode);
            sceneTree_->setAirShown(mode != SceneActors::AirMode::Hidden);
            viewport_->update();
            if (mode != SceneActors::AirMode::Hidden && !scene_.air.empty()) {
                log_->append(actors_->invertedAirTets() > 0 ? Severity::Warning : Severity::Info,
                             tr("Air mesh: %1 tets, %2 inverted (drawn red)")
                                 .arg(scene_.air.tets.size())
                                 .arg(actors_->invertedAirTets()));
            }
        });
    }
    view->addSeparator();
    for (QDockWidget* dock : findChildren<QDockWidget*>()) {
        view->addAction(dock->toggleViewAction());
    }

    QMenu* sim = menuBar()->addMenu(tr("&Simulation"));
    QAction* play = sim->addAction(tr("&Play"));
    play->setObjectName(QStringLiteral("actionPlay"));
    play->setCheckable(true);
    play->setShortcut(QKeySequence(Qt::Key_Space));
    connect(play, &QAction::toggled, this, [this](bool on) {
        if (on) {
            applySimulationSettings();
            worker_->play();
        } else {
            worker_->pause();
        }
    });
    connect(worker_, &SimulationWorker::paused, play, [play] { play->setChecked(false); });
    connect(worker_, &SimulationWorker::diverged, this, [this, play](const QString& message) {
        play->setChecked(false);
        reportError(message);
    });
    QAction* realTime = sim->addAction(tr("Real &Time"));
    realTime->setObjectName(QStringLiteral("actionRealTime"));
    realTime->setCheckable(true);
    realTime->setChecked(true);
    realTime->setToolTip(tr("Play at the speed of the clock, or as fast as the solver goes"));
    connect(realTime, &QAction::toggled, worker_, &SimulationWorker::setRealTime);
    QAction* stepAction = sim->addAction(tr("&Step"), this, [this] {
        applySimulationSettings();
        worker_->step(1);
    });
    stepAction->setObjectName(QStringLiteral("actionStep"));
    stepAction->setShortcut(QKeySequence(Qt::Key_Period));
    QAction* record = sim->addAction(tr("Record &Frames…"));
    record->setObjectName(QStringLiteral("actionRecordFrames"));
    record->setCheckable(true);
    record->setToolTip(
        tr("Write every drawn frame as a PNG into a folder while the simulation runs"));
    connect(record, &QAction::triggered, this, [this, record](bool on) {
        if (!on) {
            setFrameRecording(QString(), QSize());
            return;
        }
        const QString dir = QFileDialog::getExistingDirectory(
            this, tr("Record Frames Into"),
            lastDirectory_.isEmpty() ? QDir::homePath() : lastDirectory_);
        if (dir.isEmpty() || !setFrameRecording(dir, viewport_->size() * devicePixelRatioF())) {
            record->setChecked(false);
        }
    });
    QAction* resetSim = sim->addAction(tr("&Reset"), this, [this, play] {
        play->setChecked(false);
        worker_->reset();
        log_->append(Severity::Info, tr("Simulation reset to the loaded state"));
    });
    resetSim->setObjectName(QStringLiteral("actionResetSimulation"));
    resetSim->setShortcut(QKeySequence(Qt::Key_Home));

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    QAction* about = help->addAction(tr("&About PBD Lab"), this, &MainWindow::showAbout);
    about->setObjectName(QStringLiteral("actionAbout"));
    rebuildRecentMenu();
}

void MainWindow::restoreSettings() {
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    findChild<QAction*>(QStringLiteral("actionWireframe"))
        ->setChecked(settings.value(QStringLiteral("view/wireframe"), false).toBool());
    findChild<QAction*>(QStringLiteral("actionShowAxes"))
        ->setChecked(settings.value(QStringLiteral("view/axes"), true).toBool());
    findChild<QAction*>(QStringLiteral("actionRealTime"))
        ->setChecked(settings.value(QStringLiteral("simulation/realTime"), true).toBool());
    recentFiles_ = settings.value(QStringLiteral("files/recent")).toStringList();
    prepareOptions_ = PrepareDialog::savedOptions();
    preferences_ = Preferences::load();
    colourMap_->setCurrentText(preferences_.colourMap);
    lastDirectory_ = settings.value(QStringLiteral("files/lastDirectory")).toString();
    lastScreenshot_ = settings.value(QStringLiteral("files/lastScreenshot")).toString();
    rebuildRecentMenu();
}

void MainWindow::saveSettings() const {
    if (!persistSettings_) {
        return;
    }
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    settings.setValue(QStringLiteral("view/wireframe"), actors_->wireframe());
    settings.setValue(QStringLiteral("view/axes"), viewport_->axesVisible());
    settings.setValue(QStringLiteral("simulation/realTime"), worker_->realTime());
    settings.setValue(QStringLiteral("files/recent"), recentFiles_);
    Preferences preferences = preferences_;
    preferences.colourMap = colourMap_->currentText(); // the dock's choice is the preference
    preferences.save();
    settings.setValue(QStringLiteral("files/lastDirectory"), lastDirectory_);
    settings.setValue(QStringLiteral("files/lastScreenshot"), lastScreenshot_);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!maybeSave()) {
        event->ignore();
        return;
    }
    QFile::remove(autosavePath()); // closed cleanly: nothing to recover
    saveSettings();
    event->accept();
}

Scene MainWindow::authoredScene() const {
    Scene s = scene_;
    if (restParticles_.size() == s.particles.size()) {
        s.particles.positions = restParticles_.positions;
        s.particles.velocities = restParticles_.velocities;
    }
    s.air = restAir_;
    if (restRigid_.size() == s.rigidBodies.size()) {
        s.rigidBodies = restRigid_;
    }
    return s;
}

void MainWindow::markModified() {
    settingsDirty_ = true;
    updateModified();
}

void MainWindow::updateModified() {
    setWindowModified(settingsDirty_ || !undoStack_->isClean());
}

bool MainWindow::saveProjectAs(const QString& path, QString* error) {
    const Result<bool> written =
        saveProject(authoredScene(), QDir::toNativeSeparators(path).toStdString());
    if (!written) {
        const QString message = QString::fromStdString(written.error());
        reportError(message);
        if (error) {
            *error = message;
        }
        return false;
    }
    projectPath_ = path;
    settingsDirty_ = false;
    undoStack_->setClean();
    updateModified();
    QFile::remove(autosavePath());
    addRecentFile(path);
    log_->append(Severity::Info, tr("Saved %1").arg(QDir::toNativeSeparators(path)));
    return true;
}

bool MainWindow::save() {
    if (projectPath_.isEmpty()) {
        saveAsWithDialog();
        return !isModified() && !projectPath_.isEmpty();
    }
    return saveProjectAs(projectPath_);
}

void MainWindow::saveAsWithDialog() {
    QString suggestion = projectPath_;
    if (suggestion.isEmpty()) {
        suggestion = QDir(lastDirectory_)
                         .filePath(QString::fromStdString(scene_.name) + QStringLiteral(".json"));
    }
    QString path = QFileDialog::getSaveFileName(this, tr("Save Project"), suggestion,
                                                tr("PBD Lab projects (*.json)"));
    if (path.isEmpty()) {
        return;
    }
    if (!path.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive)) {
        path += QStringLiteral(".json");
    }
    lastDirectory_ = QFileInfo(path).absolutePath();
    saveProjectAs(path);
}

bool MainWindow::maybeSave() {
    if (!isModified()) {
        return true;
    }
    QMessageBox box(QMessageBox::Warning, tr("Unsaved Changes"),
                    tr("Save the changes to %1?")
                        .arg(projectPath_.isEmpty() ? QString::fromStdString(scene_.name)
                                                    : QFileInfo(projectPath_).fileName()),
                    QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, this);
    box.setObjectName(QStringLiteral("unsavedChanges"));
    box.setDefaultButton(QMessageBox::Save);
    switch (box.exec()) {
    case QMessageBox::Save:
        return save();
    case QMessageBox::Discard:
        return true;
    default:
        return false;
    }
}

QString MainWindow::autosavePath() const {
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation);
    return QDir(dir).filePath(QStringLiteral("autosave.pbdlab.json"));
}

bool MainWindow::autosave() {
    if (!isModified()) {
        return false;
    }
    QDir().mkpath(QFileInfo(autosavePath()).absolutePath());
    const Result<bool> written =
        saveProject(authoredScene(), QDir::toNativeSeparators(autosavePath()).toStdString());
    if (!written) {
        log_->append(Severity::Warning,
                     tr("Autosave failed: %1").arg(QString::fromStdString(written.error())));
        return false;
    }
    return true;
}

bool MainWindow::recoverAutosave(QString* error) {
    const QString path = autosavePath();
    if (!QFileInfo::exists(path)) {
        const QString message =
            tr("There is no autosave to recover (%1).").arg(QDir::toNativeSeparators(path));
        reportError(message);
        if (error) {
            *error = message;
        }
        return false;
    }
    if (!openFile(path, error)) {
        return false;
    }
    projectPath_.clear(); // recovered work still needs a place of its own
    markModified();
    log_->append(Severity::Info, tr("Recovered the autosave: File ▸ Save As to keep it."));
    return true;
}

QWidget* MainWindow::createSimulationPanel() {
    auto* panel = new QWidget(this);
    auto* form = new QFormLayout(panel);
    timeStep_ = new QDoubleSpinBox(panel);
    timeStep_->setObjectName(QStringLiteral("timeStep"));
    timeStep_->setDecimals(3);
    timeStep_->setRange(0.01, 100.0);
    timeStep_->setSuffix(tr(" ms"));
    timeStep_->setToolTip(tr("Time step of one frame (all its substeps)"));
    substeps_ = new QSpinBox(panel);
    substeps_->setObjectName(QStringLiteral("substeps"));
    substeps_->setRange(1, 100);
    iterations_ = new QSpinBox(panel);
    iterations_->setObjectName(QStringLiteral("iterations"));
    iterations_->setRange(1, 1000);
    threads_ = new QSpinBox(panel);
    threads_->setObjectName(QStringLiteral("threads"));
    threads_->setRange(0, 256);
    threads_->setSpecialValueText(tr("all cores"));
    threads_->setToolTip(tr("Solver threads; one core is left to the window by default"));
    threads_->setValue(std::max(1, QThread::idealThreadCount() - 1));
    form->addRow(tr("Time step"), timeStep_);
    form->addRow(tr("Substeps"), substeps_);
    exactAngularMomentum_ = new QCheckBox(tr("Exact angular momentum"), panel);
    exactAngularMomentum_->setObjectName(QStringLiteral("exactAngularMomentum"));
    exactAngularMomentum_->setToolTip(
        tr("Project distance constraints along their edge at the start of the substep (SHAKE) "
           "instead of as it is now (PBD): spinning cloth and ropes, and cloth on rigid "
           "bodies, then keep their angular momentum exactly"));
    form->addRow(tr("Iterations"), iterations_);
    form->addRow(exactAngularMomentum_);
    form->addRow(tr("Threads"), threads_);
    // Rigid bodies (§5): the projected Gauss-Seidel solve and its stabilisation, each switch
    // taking effect at the next step, so its effect on a stack can be watched.
    rigidSettings_ = new QGroupBox(tr("Rigid bodies"), panel);
    rigidSettings_->setObjectName(QStringLiteral("rigidSettings"));
    rigidSettings_->setToolTip(tr("Only scenes with rigid bodies"));
    auto* rigidForm = new QFormLayout(rigidSettings_);
    rigidIterations_ = new QSpinBox(rigidSettings_);
    rigidIterations_->setObjectName(QStringLiteral("rigidIterations"));
    rigidIterations_->setRange(1, 1000);
    rigidIterations_->setToolTip(tr("Projected Gauss-Seidel sweeps per substep"));
    rigidSubsteps_ = new QSpinBox(rigidSettings_);
    rigidSubsteps_->setObjectName(QStringLiteral("rigidSubsteps"));
    rigidSubsteps_->setRange(1, 64);
    rigidSubsteps_->setToolTip(
        tr("Substeps per step on contacts detected once (the soft step): each sweeps, moves the "
           "bodies and relaxes; the separations follow the bodies"));
    rigidContactHertz_ = new QDoubleSpinBox(rigidSettings_);
    rigidContactHertz_->setObjectName(QStringLiteral("rigidContactHertz"));
    rigidContactHertz_->setRange(0, 1000);
    rigidContactHertz_->setDecimals(1);
    rigidContactHertz_->setSuffix(tr(" Hz"));
    rigidContactHertz_->setSpecialValueText(tr("rigid"));
    rigidContactHertz_->setToolTip(
        tr("Soft contacts: the push-out is a damped spring of this frequency (Box2D v3's soft "
           "step; try 4 substeps of 1 sweep at 30-60 Hz). 'rigid': the source's correction"));
    rigidWarmStart_ = new QCheckBox(tr("Warm start"), rigidSettings_);
    rigidWarmStart_->setObjectName(QStringLiteral("rigidWarmStart"));
    rigidWarmStart_->setToolTip(tr("Start each step from the last step's contact impulses, "
                                   "matched by feature (vertex of one body on face of the other)"));
    rigidSeparatePush_ = new QCheckBox(tr("Separate push"), rigidSettings_);
    rigidSeparatePush_->setObjectName(QStringLiteral("rigidSeparatePush"));
    rigidSeparatePush_->setToolTip(
        tr("Rigid contacts with warm starting: the push out of penetrations moves the bodies "
           "but is not kept in their velocities (split impulse), so tall stacks do not rock. "
           "Off: it is, and the relax sweeps take it out again"));
    rigidStabilisation_ = new QComboBox(rigidSettings_);
    rigidStabilisation_->setObjectName(QStringLiteral("rigidStabilisation"));
    rigidStabilisation_->addItem(tr("Off"), int(StackStabilisation::Off));
    rigidStabilisation_->addItem(tr("Shock propagation"),
                                 int(StackStabilisation::ShockPropagation));
    rigidStabilisation_->addItem(tr("Weight amplification"),
                                 int(StackStabilisation::WeightAmplification));
    rigidStabilisation_->setToolTip(
        tr("What keeps stacks standing: the lower body of a contact held (shock propagation) or "
           "counted 1.4 times heavier (weight amplification)"));
    rigidSleeping_ = new QCheckBox(tr("Sleeping"), rigidSettings_);
    rigidSleeping_->setObjectName(QStringLiteral("rigidSleeping"));
    rigidSleeping_->setToolTip(tr("Islands at rest for half a second stop being simulated until "
                                  "something touches them (drawn grey-blue)"));
    rigidAggressiveSleep_ = new QCheckBox(tr("Aggressive sleep"), rigidSettings_);
    rigidAggressiveSleep_->setObjectName(QStringLiteral("rigidAggressiveSleep"));
    rigidAggressiveSleep_->setToolTip(
        tr("Bodies at rest keep their last contacts instead of detecting them again"));
    rigidIterations_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    rigidStabilisation_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    rigidForm->addRow(tr("Sweeps"), rigidIterations_);
    rigidForm->addRow(tr("Substeps"), rigidSubsteps_);
    rigidForm->addRow(tr("Contacts"), rigidContactHertz_);
    rigidSubsteps_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    rigidContactHertz_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    rigidForm->addRow(tr("Stacks"), rigidStabilisation_);
    rigidForm->addRow(rigidWarmStart_);
    rigidForm->addRow(rigidSeparatePush_);
    rigidForm->addRow(rigidSleeping_);
    rigidForm->addRow(rigidAggressiveSleep_);
    rigidSettings_->setEnabled(false);
    form->addRow(rigidSettings_);
    connect(rigidIterations_, &QSpinBox::valueChanged, this, &MainWindow::solverSettingsEdited);
    connect(rigidSubsteps_, &QSpinBox::valueChanged, this, &MainWindow::solverSettingsEdited);
    connect(rigidContactHertz_, &QDoubleSpinBox::valueChanged, this,
            &MainWindow::solverSettingsEdited);
    connect(rigidStabilisation_, &QComboBox::currentIndexChanged, this,
            &MainWindow::solverSettingsEdited);
    for (QCheckBox* box :
         {rigidWarmStart_, rigidSeparatePush_, rigidSleeping_, rigidAggressiveSleep_}) {
        connect(box, &QCheckBox::toggled, this, &MainWindow::solverSettingsEdited);
    }
    // The air (Air Meshes §4): how often it is re-meshed and how bodies meet across it.
    airSettings_ = new QGroupBox(tr("Air mesh"), panel);
    airSettings_->setObjectName(QStringLiteral("airSettings"));
    airSettings_->setToolTip(tr("Only scenes with air (prepared with Air, or the air scenes)"));
    auto* airForm = new QFormLayout(airSettings_);
    airInterval_ = new QSpinBox(airSettings_);
    airInterval_->setObjectName(QStringLiteral("airInterval"));
    airInterval_->setRange(0, 10000);
    airInterval_->setSpecialValueText(tr("off"));
    airInterval_->setPrefix(tr("every "));
    airInterval_->setSuffix(tr(" step(s)"));
    airInterval_->setToolTip(
        tr("Re-mesh the air (edge and multi-face removal) every k steps so bodies can turn and "
           "slide; off keeps the air's memory of where everything was (layered cloth, the "
           "squash experiment)"));
    airThreshold_ = new QDoubleSpinBox(airSettings_);
    airThreshold_->setObjectName(QStringLiteral("airThreshold"));
    airThreshold_->setRange(0.01, 1.0);
    airThreshold_->setDecimals(2);
    airThreshold_->setSingleStep(0.05);
    airThreshold_->setToolTip(tr("Air tets of a quality below this are improved (1 = regular)"));
    airDistance_ = new QDoubleSpinBox(airSettings_);
    airDistance_->setObjectName(QStringLiteral("airDistance"));
    airDistance_->setRange(0, 100);
    airDistance_->setDecimals(2);
    airDistance_->setSuffix(tr(" mm"));
    airDistance_->setToolTip(tr("Bodies facing each other across the air keep this far apart "
                                "(0 = off)"));
    airFriction_ = new QDoubleSpinBox(airSettings_);
    airFriction_->setObjectName(QStringLiteral("airFriction"));
    airFriction_->setRange(0, 5);
    airFriction_->setDecimals(2);
    airFriction_->setSingleStep(0.1);
    airFriction_->setToolTip(tr("Coulomb friction between bodies in contact through the air"));
    for (QWidget* w :
         std::initializer_list<QWidget*>{airInterval_, airThreshold_, airDistance_, airFriction_}) {
        w->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed); // never widen the dock
    }
    airForm->addRow(tr("Optimise"), airInterval_);
    airForm->addRow(tr("Below quality"), airThreshold_);
    airForm->addRow(tr("Contact distance"), airDistance_);
    airForm->addRow(tr("Friction"), airFriction_);
    airSettings_->setEnabled(false);
    form->addRow(airSettings_);
    connect(airInterval_, &QSpinBox::valueChanged, this, &MainWindow::solverSettingsEdited);
    for (QDoubleSpinBox* box : {airThreshold_, airDistance_, airFriction_}) {
        connect(box, &QDoubleSpinBox::valueChanged, this, &MainWindow::solverSettingsEdited);
    }
    simulationStatus_ = new QLabel(panel);
    simulationStatus_->setObjectName(QStringLiteral("simulationStatus"));
    form->addRow(simulationStatus_);
    fieldSelector_ = new QComboBox(panel);
    fieldSelector_->setObjectName(QStringLiteral("fieldSelector"));
    for (SurfaceField f : kSurfaceFields) {
        fieldSelector_->addItem(
            QString::fromUtf8(labelOf(f).data(), qsizetype(labelOf(f).size())),
            QString::fromUtf8(toString(f).data(), qsizetype(toString(f).size())));
    }
    fieldSelector_->setToolTip(tr("Colour the surfaces by a per-element field"));
    form->addRow(tr("Field"), fieldSelector_);
    lockRange_ = new QCheckBox(tr("Lock colour range"), panel);
    lockRange_->setObjectName(QStringLiteral("lockRange"));
    lockRange_->setToolTip(tr("Keep the current range while the field changes, to compare "
                              "frames; otherwise the range follows the values"));
    form->addRow(lockRange_);
    connect(lockRange_, &QCheckBox::toggled, this, [this] {
        applyField();
        viewport_->update();
    });
    connect(fieldSelector_, &QComboBox::currentIndexChanged, this, [this] {
        lockRange_->setChecked(false); // a new field starts from its own range
        applyField();
        viewport_->update();
    });
    colourMap_ = new QComboBox(panel);
    colourMap_->setObjectName(QStringLiteral("colourMap"));
    colourMap_->addItems(SceneActors::colourMapPresets());
    colourMap_->setToolTip(tr("auto: diverging cool-warm centred on zero for strains, viridis "
                              "for the other fields"));
    form->addRow(tr("Colour map"), colourMap_);
    customRange_ = new QCheckBox(tr("Custom range"), panel);
    customRange_->setObjectName(QStringLiteral("customRange"));
    rangeMin_ = new QDoubleSpinBox(panel);
    rangeMax_ = new QDoubleSpinBox(panel);
    rangeMin_->setObjectName(QStringLiteral("rangeMin"));
    rangeMax_->setObjectName(QStringLiteral("rangeMax"));
    for (QDoubleSpinBox* box : {rangeMin_, rangeMax_}) {
        box->setRange(-1e6, 1e6);
        box->setDecimals(4);
        box->setSingleStep(0.01);
        box->setEnabled(false);
        // Their size hint fits a million with 4 decimals; the dock must not squeeze the view.
        box->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
        box->setMinimumWidth(70);
    }
    auto* rangeRow = new QHBoxLayout;
    rangeRow->addWidget(rangeMin_);
    rangeRow->addWidget(rangeMax_);
    form->addRow(customRange_);
    form->addRow(tr("Range"), rangeRow);
    auto recolour = [this] {
        applyField();
        viewport_->update();
    };
    connect(colourMap_, &QComboBox::currentIndexChanged, this, recolour);
    connect(customRange_, &QCheckBox::toggled, this, [this, recolour](bool on) {
        rangeMin_->setEnabled(on);
        rangeMax_->setEnabled(on);
        recolour();
    });
    connect(rangeMin_, &QDoubleSpinBox::valueChanged, this, recolour);
    connect(rangeMax_, &QDoubleSpinBox::valueChanged, this, recolour);
    // A clip plane through the tet bodies, across one axis, at a share of the scene's extent.
    clipEnabled_ = new QCheckBox(tr("Clip tet bodies"), panel);
    clipEnabled_->setObjectName(QStringLiteral("clipEnabled"));
    clipEnabled_->setToolTip(tr("Cut the tet bodies open to see their tets (inverted ones red); "
                                "View ▸ Clip Tet Bodies, C"));
    clipAxis_ = new QComboBox(panel);
    clipAxis_->setObjectName(QStringLiteral("clipAxis"));
    clipAxis_->addItems({QStringLiteral("x"), QStringLiteral("y"), QStringLiteral("z")});
    clipPosition_ = new QSlider(Qt::Horizontal, panel);
    clipPosition_->setObjectName(QStringLiteral("clipPosition"));
    clipPosition_->setRange(0, 100);
    clipPosition_->setValue(50);
    clipPosition_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    clipPosition_->setMinimumWidth(60);
    auto* clipRow = new QHBoxLayout;
    clipRow->addWidget(clipAxis_);
    clipRow->addWidget(clipPosition_, 1);
    form->addRow(clipEnabled_);
    form->addRow(tr("Clip at"), clipRow);
    connect(clipEnabled_, &QCheckBox::toggled, this, &MainWindow::applyClip);
    connect(clipAxis_, &QComboBox::currentIndexChanged, this, &MainWindow::applyClip);
    connect(clipPosition_, &QSlider::valueChanged, this, &MainWindow::applyClip);
    // Edits reach the solver between steps.
    for (QSpinBox* box : {substeps_, iterations_}) {
        connect(box, &QSpinBox::valueChanged, this, &MainWindow::solverSettingsEdited);
    }
    // The threads belong to the machine, not the scene: not an edit of the document.
    connect(threads_, &QSpinBox::valueChanged, this, &MainWindow::applySimulationSettings);
    connect(timeStep_, &QDoubleSpinBox::valueChanged, this, &MainWindow::solverSettingsEdited);
    connect(exactAngularMomentum_, &QCheckBox::toggled, this, &MainWindow::solverSettingsEdited);
    return panel;
}

QWidget* MainWindow::createConvergencePanel() {
    auto* chart = new QChart;
    chart->legend()->hide();
    chart->setTitle(tr("Largest constraint error per iteration (last step)"));
    convergenceSeries_ = new QLineSeries(chart);
    convergenceSeries_->setObjectName(QStringLiteral("convergenceSeries"));
    chart->addSeries(convergenceSeries_);
    convergenceAxisX_ = new QValueAxis(chart);
    convergenceAxisX_->setTitleText(tr("iteration"));
    convergenceAxisX_->setLabelFormat(QStringLiteral("%d"));
    convergenceAxisY_ = new QLogValueAxis(chart);
    convergenceAxisY_->setTitleText(tr("max |C + α̃λ|"));
    convergenceAxisY_->setLabelFormat(QStringLiteral("%.0e"));
    chart->addAxis(convergenceAxisX_, Qt::AlignBottom);
    chart->addAxis(convergenceAxisY_, Qt::AlignLeft);
    convergenceSeries_->attachAxis(convergenceAxisX_);
    convergenceSeries_->attachAxis(convergenceAxisY_);
    auto* view = new QChartView(chart, this);
    view->setObjectName(QStringLiteral("convergenceView"));
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumHeight(160);
    return view;
}

void MainWindow::showConvergence(const std::vector<Real>& errors) {
    if (errors.empty()) {
        return;
    }
    QList<QPointF> points;
    double lo = std::numeric_limits<double>::infinity();
    double hi = 0;
    for (std::size_t i = 0; i < errors.size(); ++i) {
        const double e = std::max(errors[i], 1e-16); // log axis: no zeros
        points.append(QPointF(double(i + 1), e));
        lo = std::min(lo, e);
        hi = std::max(hi, e);
    }
    convergenceSeries_->replace(points);
    convergenceAxisX_->setRange(1, std::max<double>(2, double(errors.size())));
    convergenceAxisY_->setRange(lo / 2, hi * 2);
}

SolverSettings MainWindow::dockSettings() const {
    SolverSettings s = scene_.solver;
    // A box shows its value rounded to its decimals: the scene's own value stands until the
    // box shows another one (so editing one value does not round the others).
    auto take = [](const QDoubleSpinBox* box, Real& value, Real unit) {
        if (std::abs(box->value() - value / unit) > 0.5 * std::pow(10.0, -box->decimals())) {
            value = box->value() * unit;
        }
    };
    take(timeStep_, s.timeStep, 1e-3);
    s.substeps = substeps_->value();
    s.iterations = iterations_->value();
    s.exactAngularMomentum = exactAngularMomentum_->isChecked();
    s.airOptimizationInterval = airInterval_->value();
    take(airThreshold_, s.airQualityThreshold, 1);
    take(airDistance_, s.airContactDistance, 1e-3);
    take(airFriction_, s.airFriction, 1);
    RigidSettings& r = s.rigid;
    r.iterations = rigidIterations_->value();
    r.substeps = rigidSubsteps_->value();
    take(rigidContactHertz_, r.contactHertz, 1);
    r.warmStart = rigidWarmStart_->isChecked();
    r.separatePush = rigidSeparatePush_->isChecked();
    r.stabilisation = StackStabilisation(rigidStabilisation_->currentData().toInt());
    r.sleeping = rigidSleeping_->isChecked();
    r.aggressiveSleep = rigidAggressiveSleep_->isChecked();
    return s;
}

namespace {

// What a settings edit changed: a key (for merging) and its undo text.
std::pair<QString, QString> describeSettingsEdit(const SolverSettings& a, const SolverSettings& b) {
    auto number = [](double v) { return QString::number(v, 'g', 6); };
    auto onOff = [](bool on, const QString& what) {
        return (on ? QObject::tr("Enable %1") : QObject::tr("Disable %1")).arg(what);
    };
    if (a.timeStep != b.timeStep) {
        return {"timeStep", QObject::tr("Set time step to %1 ms").arg(number(b.timeStep * 1000))};
    }
    if (a.substeps != b.substeps) {
        return {"substeps", QObject::tr("Set substeps to %1").arg(b.substeps)};
    }
    if (a.iterations != b.iterations) {
        return {"iterations", QObject::tr("Set iterations to %1").arg(b.iterations)};
    }
    if (a.exactAngularMomentum != b.exactAngularMomentum) {
        return {"exact", onOff(b.exactAngularMomentum, QObject::tr("exact angular momentum"))};
    }
    if (a.airOptimizationInterval != b.airOptimizationInterval) {
        return {"airInterval",
                QObject::tr("Set air optimisation interval to %1").arg(b.airOptimizationInterval)};
    }
    if (a.airQualityThreshold != b.airQualityThreshold) {
        return {"airThreshold",
                QObject::tr("Set air quality threshold to %1").arg(number(b.airQualityThreshold))};
    }
    if (a.airContactDistance != b.airContactDistance) {
        return {"airDistance", QObject::tr("Set air contact distance to %1 mm")
                                   .arg(number(b.airContactDistance * 1000))};
    }
    if (a.airFriction != b.airFriction) {
        return {"airFriction", QObject::tr("Set air friction to %1").arg(number(b.airFriction))};
    }
    if (a.rigid.iterations != b.rigid.iterations) {
        return {"pgs", QObject::tr("Set PGS sweeps to %1").arg(b.rigid.iterations)};
    }
    if (a.rigid.substeps != b.rigid.substeps) {
        return {"rigidSubsteps", QObject::tr("Set rigid substeps to %1").arg(b.rigid.substeps)};
    }
    if (a.rigid.contactHertz != b.rigid.contactHertz) {
        return {"contactHertz",
                b.rigid.contactHertz > 0
                    ? QObject::tr("Set soft contacts to %1 Hz").arg(number(b.rigid.contactHertz))
                    : QObject::tr("Set rigid contacts")};
    }
    if (a.rigid.warmStart != b.rigid.warmStart) {
        return {"warm", onOff(b.rigid.warmStart, QObject::tr("warm starting"))};
    }
    if (a.rigid.separatePush != b.rigid.separatePush) {
        return {"separatePush", onOff(b.rigid.separatePush, QObject::tr("the separate push"))};
    }
    if (a.rigid.stabilisation != b.rigid.stabilisation) {
        return {"stabilisation",
                QObject::tr("Set stack stabilisation to %1")
                    .arg(QString::fromUtf8(toString(b.rigid.stabilisation).data(),
                                           toString(b.rigid.stabilisation).size()))};
    }
    if (a.rigid.sleeping != b.rigid.sleeping) {
        return {"sleeping", onOff(b.rigid.sleeping, QObject::tr("sleeping"))};
    }
    if (a.rigid.aggressiveSleep != b.rigid.aggressiveSleep) {
        return {"aggressive", onOff(b.rigid.aggressiveSleep, QObject::tr("aggressive sleep"))};
    }
    if (a.selfCollision != b.selfCollision) {
        return {"selfCollision", onOff(b.selfCollision, QObject::tr("self-collision"))};
    }
    if (a.clothThickness != b.clothThickness) {
        return {"clothThickness",
                QObject::tr("Set cloth thickness to %1 m").arg(number(b.clothThickness))};
    }
    return {"other", QObject::tr("Change solver settings")};
}

bool sameAuthoredSettings(SolverSettings a, SolverSettings b) {
    a.threads = b.threads = 0; // the machine's, not the scene's
    return a == b;
}

} // namespace

// An edit of the scene's solver settings; consecutive edits of one value merge.
class SolverSettingsCommand : public QUndoCommand {
public:
    SolverSettingsCommand(MainWindow* window, SolverSettings before, SolverSettings after)
        : window_(window)
        , before_(std::move(before))
        , after_(std::move(after)) {
        std::tie(key_, std::ignore) = describeSettingsEdit(before_, after_);
        setText(describeSettingsEdit(before_, after_).second);
    }
    int id() const override { return 7101; }
    bool mergeWith(const QUndoCommand* other) override {
        const auto* o = static_cast<const SolverSettingsCommand*>(other);
        if (o->key_ != key_) {
            return false;
        }
        after_ = o->after_;
        setText(describeSettingsEdit(before_, after_).second);
        setObsolete(before_ == after_); // changed and changed back: no step at all
        return true;
    }
    void redo() override { window_->applySolverSettings(after_); }
    void undo() override { window_->applySolverSettings(before_); }

private:
    MainWindow* window_;
    SolverSettings before_, after_;
    QString key_;
};

void MainWindow::solverSettingsEdited() {
    if (!worker_ || !timeStep_ || !rigidIterations_ || !airInterval_) {
        return;
    }
    const SolverSettings after = dockSettings();
    if (sameAuthoredSettings(after, scene_.solver)) {
        return;
    }
    undoStack_->push(new SolverSettingsCommand(this, scene_.solver, after));
}

void MainWindow::applySolverSettings(const SolverSettings& settings) {
    scene_.solver = settings;
    applySimulationSettings();
    worker_->setAirSettings(settings.airOptimizationInterval, settings.airQualityThreshold,
                            settings.airContactDistance, settings.airFriction);
    worker_->setRigidSettings(settings.rigid);
    worker_->setExactAngularMomentum(settings.exactAngularMomentum);
    worker_->setSelfCollision(settings.selfCollision, settings.clothThickness);
    showSolverSettings();
    sceneTree_->updateSelfCollision(scene_);
    if (auto* item = sceneTree_->selfCollisionItem(); item != nullptr && item->isSelected()) {
        properties_->showSelfCollision(scene_);
    }
}

void MainWindow::showSolverSettings() {
    // The solver takes its own copy; the panel shows the scene's settings.
    for (QWidget* w : std::initializer_list<QWidget*>{timeStep_, substeps_, iterations_,
                                                      exactAngularMomentum_}) {
        w->blockSignals(true);
    }
    timeStep_->setValue(scene_.solver.timeStep * 1000.0);
    substeps_->setValue(scene_.solver.substeps);
    iterations_->setValue(scene_.solver.iterations);
    exactAngularMomentum_->setChecked(scene_.solver.exactAngularMomentum);
    for (QWidget* w : std::initializer_list<QWidget*>{timeStep_, substeps_, iterations_,
                                                      exactAngularMomentum_}) {
        w->blockSignals(false);
    }
    for (QWidget* w :
         std::initializer_list<QWidget*>{airInterval_, airThreshold_, airDistance_, airFriction_}) {
        w->blockSignals(true);
    }
    airInterval_->setValue(scene_.solver.airOptimizationInterval);
    airThreshold_->setValue(scene_.solver.airQualityThreshold);
    airDistance_->setValue(scene_.solver.airContactDistance * 1000.0);
    airFriction_->setValue(scene_.solver.airFriction);
    for (QWidget* w :
         std::initializer_list<QWidget*>{airInterval_, airThreshold_, airDistance_, airFriction_}) {
        w->blockSignals(false);
    }
    airSettings_->setEnabled(!scene_.air.empty());
    const std::initializer_list<QWidget*> rigidWidgets{
        rigidIterations_,   rigidSubsteps_,      rigidContactHertz_, rigidWarmStart_,
        rigidSeparatePush_, rigidStabilisation_, rigidSleeping_,     rigidAggressiveSleep_};
    for (QWidget* w : rigidWidgets) {
        w->blockSignals(true);
    }
    const RigidSettings& rigid = scene_.solver.rigid;
    rigidIterations_->setValue(rigid.iterations);
    rigidSubsteps_->setValue(rigid.substeps);
    rigidContactHertz_->setValue(rigid.contactHertz);
    rigidWarmStart_->setChecked(rigid.warmStart);
    rigidSeparatePush_->setChecked(rigid.separatePush);
    rigidStabilisation_->setCurrentIndex(rigidStabilisation_->findData(int(rigid.stabilisation)));
    rigidSleeping_->setChecked(rigid.sleeping);
    rigidAggressiveSleep_->setChecked(rigid.aggressiveSleep);
    for (QWidget* w : rigidWidgets) {
        w->blockSignals(false);
    }
    rigidSettings_->setEnabled(!scene_.rigidBodies.empty());
}

void MainWindow::applySimulationSettings() {
    if (!worker_ || !timeStep_) {
        return;
    }
    worker_->setSettings(scene_.solver.timeStep, scene_.solver.substeps, scene_.solver.iterations,
                         threads_->value());
}

// Pins or unpins one particle; undo restores the inverse mass it had.
class PinCommand : public QUndoCommand {
public:
    PinCommand(MainWindow* window, Index particle, Real before, Real after)
        : window_(window)
        , particle_(particle)
        , before_(before)
        , after_(after) {
        setText(after == 0 ? QObject::tr("Pin particle %1").arg(particle)
                           : QObject::tr("Unpin particle %1").arg(particle));
    }
    void redo() override { window_->applyInverseMass(particle_, after_); }
    void undo() override { window_->applyInverseMass(particle_, before_); }

private:
    MainWindow* window_;
    Index particle_;
    Real before_;
    Real after_;
};

namespace {

// "Set cloth strain stretch u to 5000", "Disable cloth bending", ...: what changed from
// `before` to `after` (the first difference; "Edit <name>" for several).
QString describeGroupEdit(const ConstraintGroup& before, const ConstraintGroup& after) {
    const QString name = QString::fromStdString(before.name);
    QStringList changes;
    if (before.name != after.name) {
        changes << QObject::tr("Rename %1 to %2").arg(name, QString::fromStdString(after.name));
    }
    if (before.enabled != after.enabled) {
        changes << (after.enabled ? QObject::tr("Enable %1") : QObject::tr("Disable %1")).arg(name);
    }
    const int K = materialComponents(before.type);
    for (int k = 0; k < K; ++k) {
        const QString component = K == 1
                                      ? (materialIsModulus(before.type) ? QObject::tr("modulus")
                                                                        : QObject::tr("compliance"))
                                      : qtext(materialComponentName(before.type, k));
        if (before.material[k] != after.material[k]) {
            changes << QObject::tr("Set %1 %2 to %3")
                           .arg(name, component,
                                std::isinf(after.material[k])
                                    ? QObject::tr("rigid")
                                    : QString::number(after.material[k], 'g', 6));
        }
        if (before.pbdStiffness[k] != after.pbdStiffness[k]) {
            changes << QObject::tr("Set %1 PBD stiffness%2 to %3")
                           .arg(name, K == 1 ? QString() : QStringLiteral(" ") + component)
                           .arg(after.pbdStiffness[k]);
        }
    }
    for (int k = 0; k < 3; ++k) {
        if (before.restStretch[k] != after.restStretch[k]) {
            changes << QObject::tr("Set %1 rest stretch to %2").arg(name).arg(after.restStretch[k]);
        }
    }
    if (before.pressure != after.pressure) {
        changes << QObject::tr("Set %1 pressure to %2").arg(name).arg(after.pressure);
    }
    return changes.size() == 1 ? changes.front() : QObject::tr("Edit %1").arg(name);
}

} // namespace

// Changes one constraint group's material; undo restores the one it had.
class GroupCommand : public QUndoCommand {
public:
    GroupCommand(MainWindow* window, int index, ConstraintGroup before, ConstraintGroup after)
        : window_(window)
        , index_(index)
        , before_(std::move(before))
        , after_(std::move(after)) {
        setText(describeGroupEdit(before_, after_));
    }
    void redo() override { window_->applyGroup(index_, after_); }
    void undo() override { window_->applyGroup(index_, before_); }

private:
    MainWindow* window_;
    int index_;
    ConstraintGroup before_;
    ConstraintGroup after_;
};

// Adds or removes constraint groups or attachments: the constraints, groups and rigid
// attachments before and after.
struct ConstraintState {
    ConstraintSet constraints;
    std::vector<ConstraintGroup> groups;
    std::vector<RigidAttachment> rigid;
};

class ConstraintsCommand : public QUndoCommand {
public:
    ConstraintsCommand(MainWindow* window, const QString& text, ConstraintState before,
                       ConstraintState after, int selectAfter)
        : window_(window)
        , before_(std::move(before))
        , after_(std::move(after))
        , selectAfter_(selectAfter) {
        setText(text);
    }
    void redo() override {
        window_->replaceConstraints(after_.constraints, after_.groups, after_.rigid, selectAfter_);
    }
    void undo() override {
        window_->replaceConstraints(before_.constraints, before_.groups, before_.rigid, -1);
    }

private:
    MainWindow* window_;
    ConstraintState before_, after_;
    int selectAfter_;
};

// An edit that changes the scene's particles (the air tessellated): the authored scene before
// and after.
class SceneCommand : public QUndoCommand {
public:
    SceneCommand(MainWindow* window, const QString& text, Scene before, Scene after)
        : window_(window)
        , before_(std::move(before))
        , after_(std::move(after)) {
        setText(text);
    }
    void redo() override { window_->showScene(after_, true); }
    void undo() override { window_->showScene(before_, true); }

private:
    MainWindow* window_;
    Scene before_, after_;
};

// A body's masses before and after a density edit.
class MassesCommand : public QUndoCommand {
public:
    MassesCommand(MainWindow* window, const QString& text, int body, std::vector<Real> before,
                  std::vector<Real> after)
        : window_(window)
        , body_(body)
        , before_(std::move(before))
        , after_(std::move(after)) {
        setText(text);
    }
    void redo() override { window_->applyBodyMasses(body_, after_); }
    void undo() override { window_->applyBodyMasses(body_, before_); }

private:
    MainWindow* window_;
    int body_;
    std::vector<Real> before_, after_;
};

// Replaces, adds or removes colliders: the whole list before and after (they are few).
class CollidersCommand : public QUndoCommand {
public:
    CollidersCommand(MainWindow* window, const QString& text, std::vector<Collider> before,
                     std::vector<Collider> after, int selectAfter, int selectBefore)
        : window_(window)
        , before_(std::move(before))
        , after_(std::move(after))
        , selectAfter_(selectAfter)
        , selectBefore_(selectBefore) {
        setText(text);
    }
    void redo() override { window_->applyColliders(after_, selectAfter_); }
    void undo() override { window_->applyColliders(before_, selectBefore_); }

private:
    MainWindow* window_;
    std::vector<Collider> before_, after_;
    int selectAfter_, selectBefore_;
};

namespace {

QString vectorText(const Vec3& v) {
    return QStringLiteral("(%1)").arg(PropertiesPanel::formatVector(v));
}

// "Move sphere to (0, 1, 0)", "Set sphere radius to 0.3", "Edit box".
QString describeColliderEdit(const Collider& a, const Collider& b) {
    const QString name = QString::fromStdString(a.name);
    if (a.name != b.name) {
        return QObject::tr("Rename collider %1 to %2").arg(name, QString::fromStdString(b.name));
    }
    if (colliderPosition(a) != colliderPosition(b) && a.radius == b.radius &&
        a.halfExtents == b.halfExtents && a.rotation == b.rotation && a.normal == b.normal &&
        (a.b - a.a) == (b.b - b.a)) {
        return QObject::tr("Move %1 to %2").arg(name, vectorText(colliderPosition(b)));
    }
    if (a.radius != b.radius) {
        return QObject::tr("Set %1 radius to %2").arg(name).arg(b.radius, 0, 'g', 6);
    }
    if (a.halfExtents != b.halfExtents) {
        return QObject::tr("Set %1 half extents to %2").arg(name, vectorText(b.halfExtents));
    }
    if (a.rotation != b.rotation) {
        return QObject::tr("Rotate %1").arg(name);
    }
    if (a.normal != b.normal) {
        return QObject::tr("Set %1 normal to %2").arg(name, vectorText(b.normal));
    }
    if (a.friction != b.friction) {
        return QObject::tr("Set %1 friction to %2").arg(name).arg(b.friction, 0, 'g', 6);
    }
    if (a.restitution != b.restitution) {
        return QObject::tr("Set %1 restitution to %2").arg(name).arg(b.restitution, 0, 'g', 6);
    }
    return QObject::tr("Edit %1").arg(name);
}

} // namespace

bool MainWindow::setCollider(int index, const Collider& collider, QString* error) {
    auto fail = [&](const QString& message) {
        if (error) {
            *error = message;
        }
        return false;
    };
    if (index < 0 || std::size_t(index) >= scene_.colliders.size()) {
        return fail(tr("There is no collider %1").arg(index));
    }
    if (const std::string problem = checkCollider(collider); !problem.empty()) {
        return fail(QString::fromStdString(problem));
    }
    const Collider& before = scene_.colliders[std::size_t(index)];
    if (collider.shape != before.shape) {
        return fail(tr("A collider keeps its shape"));
    }
    std::vector<Collider> after = scene_.colliders;
    after[std::size_t(index)] = collider;
    undoStack_->push(new CollidersCommand(this, describeColliderEdit(before, collider),
                                          scene_.colliders, after, index, index));
    return true;
}

bool MainWindow::addAirMesh(QString* error) {
    auto fail = [&](const QString& message) {
        reportError(message);
        if (error) {
            *error = message;
        }
        return false;
    };
    if (!scene_.air.empty()) {
        return fail(tr("The scene has an air mesh already"));
    }
    if (preparing_) {
        return fail(tr("Another file is being prepared"));
    }
    const Scene before = authoredScene();
    Scene after = before;
    Result<AirReport> air = Error{"not run"};
    preparing_ = true;
    runWithProgress(tr("Tessellate the Air"), tr("Tessellating the air"),
                    [&](const ProgressCallback& progress) {
                        air = tessellateAir(after, prepareOptions_.airOptions, progress);
                    });
    preparing_ = false;
    if (!air) {
        return fail(
            tr("cannot tessellate the air of '%1': %2")
                .arg(QString::fromStdString(scene_.name), QString::fromStdString(air.error())));
    }
    undoStack_->push(new SceneCommand(
        this, tr("Tessellate the air (%1 tets)").arg(after.air.size()), before, after));
    log_->append(Severity::Info, tr("Tessellated the air: %1 air tets, %2 new particles")
                                     .arg(after.air.size())
                                     .arg(after.air.particleCount));
    return true;
}

bool MainWindow::setSelfCollision(bool on, Real thickness, QString* error) {
    if (!(thickness > 0) || !std::isfinite(thickness)) {
        if (error) {
            *error = tr("The cloth thickness must be a number of metres > 0");
        }
        return false;
    }
    SolverSettings after = scene_.solver;
    after.selfCollision = on;
    after.clothThickness = thickness;
    if (!(after == scene_.solver)) {
        undoStack_->push(new SolverSettingsCommand(this, scene_.solver, after));
    }
    return true;
}

bool MainWindow::setBodyDensity(int body, Real density, QString* error) {
    auto fail = [&](const QString& message) {
        if (error) {
            *error = message;
        }
        return false;
    };
    if (body < 0 || std::size_t(body) >= scene_.bodies.size()) {
        return fail(tr("There is no body %1").arg(body));
    }
    if (!(density > 0) || !std::isfinite(density)) {
        return fail(tr("A density must be a number > 0"));
    }
    const Body& b = scene_.bodies[std::size_t(body)];
    // Lumped over the authored (rest) shape, as when the scene was made.
    Scene rest = authoredScene();
    pbd::setBodyDensity(rest.particles, b, density);
    auto range = [&](const Particles& p) {
        return std::vector<Real>(p.inverseMasses.begin() + b.firstParticle,
                                 p.inverseMasses.begin() + b.firstParticle + b.particleCount);
    };
    const bool tets = !b.tets.empty();
    undoStack_->push(new MassesCommand(
        this,
        tr("Set %1 %2 to %3 %4")
            .arg(QString::fromStdString(b.name), tets ? tr("density") : tr("mass per area"))
            .arg(density, 0, 'g', 6)
            .arg(tets ? tr("kg/m³") : tr("kg/m²")),
        body, range(scene_.particles), range(rest.particles)));
    return true;
}

void MainWindow::applyBodyMasses(int body, const std::vector<Real>& inverseMasses) {
    if (body < 0 || std::size_t(body) >= scene_.bodies.size()) {
        return;
    }
    const Body& b = scene_.bodies[std::size_t(body)];
    for (Index i = 0; i < b.particleCount && i < inverseMasses.size(); ++i) {
        scene_.particles.inverseMasses[b.firstParticle + i] = inverseMasses[i];
        worker_->setInverseMass(b.firstParticle + i, inverseMasses[i]);
    }
    refreshPins();
    if (sceneTree_->selectedBody() == body && sceneTree_->selectedGroup() < 0 &&
        sceneTree_->selectedCollider() < 0) {
        properties_->showBody(scene_, body);
    }
    viewport_->update();
}

bool MainWindow::addCollider(ColliderShape shape, QString* error) {
    if (shape == ColliderShape::Mesh) {
        if (error) {
            *error = tr("A mesh collider comes from a mesh file, not from the menu");
        }
        return false;
    }
    Bounds bodies;
    for (const Body& b : scene_.bodies) {
        if (b.kind != BodyKind::Collider) {
            bodies.add(scene_.bounds(b));
        }
    }
    Collider c = defaultCollider(shape, bodies);
    // A name not taken yet: "sphere", "sphere 2", ...
    auto taken = [&](const std::string& name) {
        return std::any_of(scene_.colliders.begin(), scene_.colliders.end(),
                           [&](const Collider& o) { return o.name == name; });
    };
    for (int n = 2; taken(c.name); ++n) {
        c.name = std::string(toString(shape)) + " " + std::to_string(n);
    }
    std::vector<Collider> after = scene_.colliders;
    after.push_back(c);
    undoStack_->push(new CollidersCommand(
        this,
        tr("Add collider %1 at %2")
            .arg(QString::fromStdString(c.name), vectorText(colliderPosition(c))),
        scene_.colliders, after, int(after.size()) - 1, -1));
    return true;
}

bool MainWindow::addMeshCollider(const QString& path, QString* error) {
    ImportOptions options;
    options.scale = preferences_.unitScale();
    Result<Collider> c =
        meshColliderFromFile(QDir::toNativeSeparators(path).toStdString(), options);
    if (!c) {
        const QString message = QString::fromStdString(c.error());
        reportError(message);
        if (error) {
            *error = message;
        }
        return false;
    }
    std::vector<Collider> after = scene_.colliders;
    after.push_back(std::move(c).value());
    undoStack_->push(new CollidersCommand(this,
                                          tr("Add mesh collider %1 (%2 triangles)")
                                              .arg(QString::fromStdString(after.back().name))
                                              .arg(after.back().triangles.size()),
                                          scene_.colliders, after, int(after.size()) - 1, -1));
    return true;
}

bool MainWindow::removeCollider(int index, QString* error) {
    if (index < 0 || std::size_t(index) >= scene_.colliders.size()) {
        if (error) {
            *error = tr("There is no collider %1").arg(index);
        }
        return false;
    }
    std::vector<Collider> after = scene_.colliders;
    after.erase(after.begin() + index);
    undoStack_->push(new CollidersCommand(
        this,
        tr("Remove collider %1")
            .arg(QString::fromStdString(scene_.colliders[std::size_t(index)].name)),
        scene_.colliders, after, -1, index));
    return true;
}

void MainWindow::applyColliders(const std::vector<Collider>& colliders, int select) {
    scene_.colliders = colliders;
    worker_->setColliders(colliders);
    actors_->setColliders(scene_, select);
    sceneTree_->setScene(scene_);
    if (select >= 0 && std::size_t(select) < colliders.size()) {
        sceneTree_->selectCollider(select);
        properties_->showCollider(scene_, select);
    } else {
        properties_->showScene(scene_);
    }
    viewport_->update();
}

void MainWindow::setPreferences(const Preferences& preferences) {
    const bool unitChanged = preferences.meshUnit != preferences_.meshUnit;
    preferences_ = preferences;
    colourMap_->setCurrentText(preferences.colourMap);
    if (unitChanged) {
        // The Prepare dialog starts from the new unit (and can still be changed per file).
        prepareOptions_.import.scale = preferences.unitScale();
    }
    if (persistSettings_) {
        preferences.save();
        if (unitChanged) {
            PrepareDialog::saveOptions(prepareOptions_);
        }
    }
    log_->append(Severity::Info,
                 tr("Preferences: meshes in %1, new scenes at %2 ms × %3 substeps, %4 iterations "
                    "(%5), colour map %6")
                     .arg(preferences.meshUnit)
                     .arg(preferences.timeStep * 1000, 0, 'g', 4)
                     .arg(preferences.substeps)
                     .arg(preferences.iterations)
                     .arg(preferences.method == SolverMethod::Pbd ? tr("PBD") : tr("XPBD"))
                     .arg(preferences.colourMap));
}

void MainWindow::setVertexSelection(std::vector<Index> particles) {
    std::sort(particles.begin(), particles.end());
    particles.erase(std::unique(particles.begin(), particles.end()), particles.end());
    particles.erase(std::remove_if(particles.begin(), particles.end(),
                                   [&](Index p) { return p >= scene_.particles.size(); }),
                    particles.end());
    selection_ = std::move(particles);
    actors_->setSelected(scene_, selection_);
    viewport_->update();
    statusBar()->showMessage(selection_.empty()
                                 ? tr("No vertices selected")
                                 : tr("%n vertices selected: Edit ▸ Attach Selection attaches them",
                                      nullptr, int(selection_.size())),
                             5000);
}

void MainWindow::selectInRect(const QRectF& rect, bool add) {
    std::vector<Index> selection = add ? selection_ : std::vector<Index>{};
    for (std::size_t b = 0; b < scene_.bodies.size(); ++b) {
        const Body& body = scene_.bodies[b];
        if (b < actors_->bodyCount() && !actors_->bodyVisible(b)) {
            continue; // hidden bodies are not selected
        }
        for (Index p = body.firstParticle;
             p < body.firstParticle + body.particleCount && p < scene_.particles.size(); ++p) {
            QPointF at;
            if (viewport_->project(scene_.particles.positions[p].data(), at) && rect.contains(at)) {
                selection.push_back(p);
            }
        }
    }
    setVertexSelection(std::move(selection));
}

bool MainWindow::attachSelection(AttachTarget target, int index, QString* error) {
    auto fail = [&](const QString& message) {
        reportError(message);
        if (error) {
            *error = message;
        }
        return false;
    };
    if (selection_.empty()) {
        return fail(tr("Nothing to attach: select vertices first (Edit ▸ Select Vertices, then "
                       "click or drag a box in the view)"));
    }
    // Made from the authored (rest) state, like the scene's own constraints.
    Scene rest = authoredScene();
    Result<AttachResult> made = Error{"unknown attachment"};
    QString what;
    switch (target) {
    case AttachTarget::Points:
        made = attachToPoints(rest, selection_);
        what = tr("to their place");
        break;
    case AttachTarget::Collider:
        made = attachToCollider(rest, selection_, index);
        if (index >= 0 && std::size_t(index) < rest.colliders.size()) {
            what = tr("to %1").arg(QString::fromStdString(rest.colliders[std::size_t(index)].name));
        }
        break;
    case AttachTarget::Body:
        made = attachToBody(rest, selection_, index);
        if (index >= 0 && std::size_t(index) < rest.bodies.size()) {
            what = tr("to %1").arg(QString::fromStdString(rest.bodies[std::size_t(index)].name));
        }
        break;
    case AttachTarget::RigidBody:
        made = attachToRigidBody(rest, selection_, index);
        if (index >= 0 && std::size_t(index) < rest.rigidBodies.size()) {
            what =
                tr("to %1").arg(QString::fromStdString(rest.rigidBodies[std::size_t(index)].name));
        }
        break;
    }
    if (!made) {
        return fail(QString::fromStdString(made.error()));
    }
    const QString text = tr("Attach %n vertices %1", nullptr, int(made->added)).arg(what);
    undoStack_->push(new ConstraintsCommand(
        this, text, {scene_.constraints, scene_.constraintGroups, scene_.rigidAttachments},
        {rest.constraints, rest.constraintGroups, rest.rigidAttachments}, made->group));
    log_->append(
        Severity::Info,
        made->skipped == 0
            ? text
            : tr("%1 (%2 attached already, left as they were)").arg(text).arg(made->skipped));
    actors_->setSelected(scene_, selection_);
    return true;
}

bool MainWindow::setConstraintGroup(int index, const ConstraintGroup& group, QString* error) {
    auto fail = [&](const QString& message) {
        if (error) {
            *error = message;
        }
        return false;
    };
    if (index < 0 || std::size_t(index) >= scene_.constraintGroups.size()) {
        return fail(tr("There is no constraint group %1").arg(index));
    }
    const ConstraintGroup& before = scene_.constraintGroups[std::size_t(index)];
    if (group.type != before.type || group.body != before.body) {
        return fail(tr("A constraint group keeps its type and body"));
    }
    Scene check;
    check.constraintGroups = {group};
    check.bodies.resize(std::max(0, group.body + 1));
    if (const auto problems = validateConstraintGroups(check); !problems.empty()) {
        return fail(QString::fromStdString(problems.front()));
    }
    if (group == before) {
        return true;
    }
    undoStack_->push(new GroupCommand(this, index, before, group));
    return true;
}

void MainWindow::applyGroup(int index, const ConstraintGroup& group) {
    if (index < 0 || std::size_t(index) >= scene_.constraintGroups.size()) {
        return;
    }
    scene_.constraintGroups[std::size_t(index)] = group;
    applyConstraintGroup(scene_.constraints, index, group);
    worker_->setConstraintGroup(index, group);
    sceneTree_->updateGroup(scene_, index);
    if (properties_->shownGroup() == index) {
        properties_->showGroup(scene_, index);
    }
}

bool MainWindow::addConstraintGroup(int body, ConstraintType type, QString* error) {
    // Generated from the rest state, like the scene's own constraints.
    Scene rest = authoredScene();
    const Result<int> added = pbd::addConstraintGroup(rest, body, type);
    if (!added) {
        if (error) {
            *error = QString::fromStdString(added.error());
        }
        log_->append(Severity::Error, QString::fromStdString(added.error()));
        return false;
    }
    const ConstraintGroup& g = rest.constraintGroups[std::size_t(*added)];
    undoStack_->push(new ConstraintsCommand(
        this,
        tr("Add %1 (%2 constraints)")
            .arg(QString::fromStdString(g.name))
            .arg(constraintGroupSize(rest.constraints, *added)),
        {scene_.constraints, scene_.constraintGroups, scene_.rigidAttachments},
        {rest.constraints, rest.constraintGroups, scene_.rigidAttachments}, *added));
    return true;
}

bool MainWindow::removeConstraintGroup(int index, QString* error) {
    if (index < 0 || std::size_t(index) >= scene_.constraintGroups.size()) {
        if (error) {
            *error = tr("There is no constraint group %1").arg(index);
        }
        return false;
    }
    Scene edited;
    edited.constraints = scene_.constraints;
    edited.constraintGroups = scene_.constraintGroups;
    pbd::removeConstraintGroup(edited, index);
    undoStack_->push(new ConstraintsCommand(
        this,
        tr("Remove %1")
            .arg(QString::fromStdString(scene_.constraintGroups[std::size_t(index)].name)),
        {scene_.constraints, scene_.constraintGroups, scene_.rigidAttachments},
        {edited.constraints, edited.constraintGroups, scene_.rigidAttachments}, -1));
    return true;
}

void MainWindow::replaceConstraints(const ConstraintSet& constraints,
                                    const std::vector<ConstraintGroup>& groups,
                                    const std::vector<RigidAttachment>& rigidAttachments,
                                    int select) {
    scene_.constraints = constraints;
    scene_.constraintGroups = groups;
    scene_.rigidAttachments = rigidAttachments;
    // The simulation starts again from the authored state with the new constraints.
    findChild<QAction*>(QStringLiteral("actionPlay"))->setChecked(false);
    worker_->load(authoredScene());
    sceneTree_->setScene(scene_);
    if (select >= 0) {
        sceneTree_->selectGroup(select);
    } else {
        properties_->showScene(scene_);
    }
}

bool MainWindow::isPinned(Index particle) const {
    return particle < scene_.particles.size() && scene_.particles.inverseMasses[particle] == 0;
}

void MainWindow::togglePin(Index particle) {
    if (particle >= scene_.particles.size()) {
        return;
    }
    const Real w = scene_.particles.inverseMasses[particle];
    if (w > 0) {
        undoStack_->push(new PinCommand(this, particle, w, 0.0));
        return;
    }
    // Unpinning a particle the scene came with pinned: it gets the mean mass of its body's
    // free particles (there is no mass of its own to go back to).
    Real sum = 0;
    std::size_t n = 0;
    for (const Body& body : scene_.bodies) {
        if (particle >= body.firstParticle && particle < body.firstParticle + body.particleCount) {
            for (Index i = body.firstParticle; i < body.firstParticle + body.particleCount; ++i) {
                if (scene_.particles.inverseMasses[i] > 0) {
                    sum += 1 / scene_.particles.inverseMasses[i];
                    ++n;
                }
            }
        }
    }
    const Real mass = n > 0 ? sum / Real(n) : 1.0;
    undoStack_->push(new PinCommand(this, particle, 0.0, 1 / mass));
}

void MainWindow::applyInverseMass(Index particle, Real inverseMass) {
    if (particle >= scene_.particles.size()) {
        return;
    }
    scene_.particles.inverseMasses[particle] = inverseMass;
    worker_->setInverseMass(particle, inverseMass);
    refreshPins();
    viewport_->update();
}

void MainWindow::refreshPins() {
    std::vector<Index> pinned;
    for (const Body& body : scene_.bodies) {
        if (body.kind != BodyKind::Cloth && body.kind != BodyKind::TetBody) {
            continue; // colliders and bare surfaces do not move anyway
        }
        for (Index i = body.firstParticle;
             i < body.firstParticle + body.particleCount && i < scene_.particles.size(); ++i) {
            if (scene_.particles.inverseMasses[i] == 0) {
                pinned.push_back(i);
            }
        }
    }
    actors_->setPinned(scene_, pinned);
    actors_->setSelected(scene_, selection_); // drawn again after the actors are rebuilt
}

std::optional<MainWindow::PickedVertex> MainWindow::vertexAt(const QPointF& position) const {
    const VtkViewport::Pick pick = viewport_->pick(position);
    const long body = actors_->bodyOf(pick.actor);
    if (body < 0 || std::size_t(body) >= scene_.bodies.size() || pick.cell < 0) {
        return std::nullopt;
    }
    const Body& b = scene_.bodies[std::size_t(body)];
    PickedVertex v;
    v.body = std::size_t(body);
    if (b.triangles.empty()) { // particles drawn as points: the cell is the particle
        v.particle = b.firstParticle + Index(pick.cell);
        return v;
    }
    if (std::size_t(pick.cell) >= b.triangles.size()) {
        return std::nullopt;
    }
    v.triangle = long(pick.cell);
    const Vec3 hit(pick.position[0], pick.position[1], pick.position[2]);
    Real best = std::numeric_limits<Real>::infinity();
    for (Index corner : b.triangles[std::size_t(pick.cell)]) {
        const Real d = (scene_.particles.positions[corner] - hit).norm();
        if (d < best) {
            best = d;
            v.particle = corner;
        }
    }
    return v;
}

QString MainWindow::describeVertex(const PickedVertex& v) const {
    const Body& body = scene_.bodies.at(v.body);
    const Vec3& p = scene_.particles.positions.at(v.particle);
    const Real w = scene_.particles.inverseMasses.at(v.particle);
    QString text =
        tr("%1 '%2' · particle %3 (local %4) · (%5, %6, %7) m · ")
            .arg(QString::fromUtf8(toString(body.kind).data()), QString::fromStdString(body.name))
            .arg(v.particle)
            .arg(v.particle - body.firstParticle)
            .arg(p.x(), 0, 'f', 4)
            .arg(p.y(), 0, 'f', 4)
            .arg(p.z(), 0, 'f', 4);
    text += w > 0 ? tr("mass %1 kg").arg(1 / w, 0, 'g', 4) : tr("pinned");
    if (v.triangle >= 0) {
        text += tr(" · triangle %1").arg(v.triangle);
        if (v.body < fieldValues_.size() && std::size_t(v.triangle) < fieldValues_[v.body].size()) {
            text += tr(" · %1 = %2")
                        .arg(fieldSelector_->currentText())
                        .arg(fieldValues_[v.body][std::size_t(v.triangle)], 0, 'g', 5);
        }
    }
    return text;
}

void MainWindow::showPickInfo(const QPointF& position, bool logIt) {
    const auto v = vertexAt(position);
    if (!v) {
        if (!logIt) {
            statusBar()->clearMessage();
        }
        return;
    }
    const QString text = describeVertex(*v);
    statusBar()->showMessage(text);
    if (logIt) {
        log_->append(Severity::Info, text);
    }
}

void MainWindow::showSnapshot() {
    // At most ~30 redraws a second: the solver may publish hundreds of steps a second, and
    // drawing each would leave the window no time for the user.
    constexpr qint64 kFrameMs = 33;
    if (frameClock_.isValid() && frameClock_.elapsed() < kFrameMs) {
        if (!frameTimer_.isActive()) {
            frameTimer_.start(static_cast<int>(kFrameMs - frameClock_.elapsed()));
        }
        return;
    }
    frameClock_.start();
    const auto snapshot = worker_->latest();
    if (!snapshot) {
        return;
    }
    const bool airMoved = snapshot->airTets && snapshot->airVersion != shownAirVersion_;
    if (airMoved) {
        scene_.air.tets = *snapshot->airTets;
        if (snapshot->airTriangles) {
            scene_.air.triangles = *snapshot->airTriangles;
        }
        shownAirVersion_ = snapshot->airVersion;
    }
    if (snapshot->topologyVersion != shownTopology_ && snapshot->bodies) {
        scene_.bodies = *snapshot->bodies;
        scene_.particles.positions = snapshot->positions;
        scene_.particles.velocities.resize(snapshot->positions.size(), Vec3::Zero());
        scene_.particles.inverseMasses.resize(snapshot->positions.size(), 0.0);
        actors_->setScene(scene_);
        actors_->setWireframe(findChild<QAction*>(QStringLiteral("actionWireframe"))->isChecked());
        refreshPins();
        shownTopology_ = snapshot->topologyVersion;
    } else if (snapshot->positions.size() == scene_.particles.positions.size()) {
        scene_.particles.positions = snapshot->positions;
        if (airMoved) {
            actors_->setAirTets(scene_);
        }
        actors_->updatePositions(scene_);
    }
    if (snapshot->rigidPoses.size() == scene_.rigidBodies.size() && !scene_.rigidBodies.empty()) {
        for (std::size_t i = 0; i < scene_.rigidBodies.size(); ++i) {
            RigidBody& b = scene_.rigidBodies[i];
            const SimulationSnapshot::RigidPose& p = snapshot->rigidPoses[i];
            b.x = p.x;
            b.q = p.q;
            b.v = p.v;
            b.omega = p.omega;
            b.sleeping = p.sleeping;
        }
        shownRigidContacts_ = snapshot->rigidContacts;
        rigidActors_->update(scene_, shownRigidContacts_, snapshot->rigidSubstep);
    }
    applyField();
    if (snapshot->constraints) {
        drawConstraints(*snapshot->constraints);
    }
    showConvergence(snapshot->convergence);
    const bool newFrame = snapshot->steps != shownSteps_;
    shownSteps_ = snapshot->steps;
    if (!frameDirectory_.isEmpty() && newFrame) {
        const QString path =
            QDir(frameDirectory_)
                .filePath(
                    QStringLiteral("frame_%1.png").arg(snapshot->steps, 6, 10, QLatin1Char('0')));
        if (!saveScreenshot(path, frameSize_)) {
            setFrameRecording(QString(), QSize()); // the error is in the Log; stop, do not flood it
            findChild<QAction*>(QStringLiteral("actionRecordFrames"))->setChecked(false);
        }
    }
    QString status = tr("t = %1 s · step %2 · %3 steps/s · %4 ms/step")
                         .arg(snapshot->time, 0, 'f', 3)
                         .arg(snapshot->steps)
                         .arg(snapshot->stepsPerSecond, 0, 'f', 0)
                         .arg(snapshot->lastStepMilliseconds, 0, 'f', 2);
    if (!scene_.air.empty()) {
        status += tr("\nair: %1 inverted before solving, %2 after, %3 projections")
                      .arg(snapshot->air.invertedBefore)
                      .arg(snapshot->air.invertedAfter)
                      .arg(snapshot->air.projections);
        if (snapshot->air.contacts > 0) {
            status += tr(", %1 contacts").arg(snapshot->air.contacts);
        }
        if (scene_.solver.airOptimizationInterval <= 0) {
            status += tr("\nair optimisation off");
        } else if (snapshot->airOptimizationPasses > 0) {
            status += tr("\nair optimisation: %1 tets, %2 changes in the last pass (%3 ms)")
                          .arg(scene_.air.tets.size())
                          .arg(snapshot->airOptimization.changes())
                          .arg(snapshot->airOptimization.milliseconds, 0, 'f', 2);
        }
    }
    simulationStatus_->setText(status);
    viewport_->update();
}

std::array<bool, 4> MainWindow::drawnConstraintKinds() const {
    std::array<bool, 4> kinds{};
    const char* names[4] = {"actionDrawDistance", "actionDrawBending", "actionDrawAttachments",
                            "actionDrawContacts"};
    for (int k = 0; k < 4; ++k) {
        const QAction* a = findChild<QAction*>(QLatin1String(names[k]));
        kinds[k] = a != nullptr && a->isChecked();
    }
    return kinds;
}

void MainWindow::applyConstraintDrawing() {
    const auto kinds = drawnConstraintKinds();
    const bool any = std::find(kinds.begin(), kinds.end(), true) != kinds.end();
    worker_->setRecordConstraints(any); // publishes the current state again with its lines
    if (!any) {
        actors_->hideConstraintLines();
        viewport_->update();
    } else if (const auto snapshot = worker_->latest(); snapshot && snapshot->constraints) {
        drawConstraints(*snapshot->constraints);
    }
}

void MainWindow::drawConstraints(const ConstraintLines& lines) {
    const auto kinds = drawnConstraintKinds();
    if (std::find(kinds.begin(), kinds.end(), true) == kinds.end()) {
        return;
    }
    const QAction* byLambda = findChild<QAction*>(QStringLiteral("actionColourByLambda"));
    actors_->setConstraintLines(lines, kinds, byLambda != nullptr && byLambda->isChecked());
    viewport_->update();
}

void MainWindow::applyClip() {
    const int axis = clipAxis_->currentIndex();
    const Bounds b = scene_.bounds();
    Vec3 normal = Vec3::Zero();
    normal[axis] = 1;
    Vec3 origin = b.center();
    if (!b.empty()) {
        origin[axis] = b.min[axis] + (b.max[axis] - b.min[axis]) * clipPosition_->value() / 100.0;
    }
    actors_->setClip(scene_, clipEnabled_->isChecked(), normal, origin);
    if (QAction* a = findChild<QAction*>(QStringLiteral("actionClip"))) {
        a->setChecked(clipEnabled_->isChecked());
    }
    viewport_->update();
}

void MainWindow::applyField() {
    if (!fieldSelector_ || !fieldEvaluator_) {
        return;
    }
    const auto field = kSurfaceFields[std::max(0, fieldSelector_->currentIndex())];
    if (field == SurfaceField::None) {
        actors_->clearFields();
        actors_->setAirField({});
        fieldValues_.clear();
        return;
    }
    if (isAirField(field)) {
        // On the air mesh: the bodies go plain, the air is shown (translucent) and coloured.
        actors_->clearFields();
        fieldValues_.clear();
        if (actors_->airMode() == SceneActors::AirMode::Hidden && !scene_.air.empty()) {
            findChild<QAction*>(QStringLiteral("actionAirTransparent"))->trigger();
        }
        const std::vector<Real> air = fieldEvaluator_->evaluateAir(scene_, field);
        double m = 0;
        for (Real v : air) {
            m = std::max(m, std::isfinite(v) ? std::abs(v) : 0.0);
        }
        double lo = -m, hi = m;
        if (customRange_->isChecked() && rangeMax_->value() > rangeMin_->value()) {
            lo = rangeMin_->value();
            hi = rangeMax_->value();
        }
        actors_->setFieldMap(fieldSelector_->currentText(), lo, hi, true,
                             colourMap_->currentText());
        actors_->setAirField(std::vector<double>(air.begin(), air.end()));
        return;
    }
    actors_->setAirField({});
    std::vector<std::vector<double>> values(scene_.bodies.size());
    double lo = std::numeric_limits<double>::infinity();
    double hi = -lo;
    for (std::size_t b = 0; b < scene_.bodies.size() && b < actors_->bodyCount(); ++b) {
        values[b] = fieldEvaluator_->evaluate(scene_, b, field);
        for (double v : values[b]) {
            if (std::isfinite(v)) {
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
        }
    }
    if (isSigned(field)) { // centred on zero
        const double m = std::max(std::abs(lo), std::abs(hi));
        lo = -m;
        hi = m;
    }
    if (customRange_->isChecked() && rangeMax_->value() > rangeMin_->value()) {
        lo = rangeMin_->value();
        hi = rangeMax_->value();
    } else if (lockRange_->isChecked() && actors_->fieldShown()) {
        lo = lockedLo_;
        hi = lockedHi_;
    } else {
        lockedLo_ = lo;
        lockedHi_ = hi;
    }
    if (!customRange_->isChecked()) { // show the range in use, to start a custom one from
        for (auto [box, v] : {std::pair{rangeMin_, lo}, std::pair{rangeMax_, hi}}) {
            box->blockSignals(true);
            box->setValue(v);
            box->blockSignals(false);
        }
    }
    fieldValues_ = values;
    actors_->setFieldMap(fieldSelector_->currentText(), lo, hi, isSigned(field),
                         colourMap_->currentText());
    for (std::size_t b = 0; b < values.size() && b < actors_->bodyCount(); ++b) {
        if (!values[b].empty()) {
            actors_->setBodyField(b, values[b]);
        }
    }
}

bool MainWindow::setField(const QString& name, QString* error) {
    const int index = fieldSelector_->findData(name);
    if (index < 0) {
        QStringList names;
        for (SurfaceField f : kSurfaceFields) {
            names << QString::fromUtf8(toString(f).data(), qsizetype(toString(f).size()));
        }
        if (error) {
            *error =
                tr("unknown field '%1' (fields: %2)").arg(name, names.join(QStringLiteral(", ")));
        }
        return false;
    }
    fieldSelector_->setCurrentIndex(index);
    applyField();
    viewport_->update();
    return true;
}

bool MainWindow::setFrameRecording(const QString& directory, const QSize& size, QString* error) {
    if (directory.isEmpty()) {
        if (!frameDirectory_.isEmpty()) {
            log_->append(Severity::Info, tr("Stopped recording frames to %1")
                                             .arg(QDir::toNativeSeparators(frameDirectory_)));
        }
        frameDirectory_.clear();
        return true;
    }
    if (!QDir(directory).exists() && !QDir().mkpath(directory)) {
        const QString message = tr("cannot record frames: folder '%1' cannot be created")
                                    .arg(QDir::toNativeSeparators(directory));
        reportError(message);
        if (error) {
            *error = message;
        }
        return false;
    }
    frameDirectory_ = directory;
    frameSize_ = size;
    log_->append(Severity::Info, tr("Recording frames (%1 x %2) to %3")
                                     .arg(size.width())
                                     .arg(size.height())
                                     .arg(QDir::toNativeSeparators(directory)));
    return true;
}

bool MainWindow::simulateSteps(int steps, QString* error) {
    frameClock_.invalidate(); // show the final state at once
    QString failure;
    QEventLoop loop;
    auto done = connect(worker_, &SimulationWorker::paused, &loop, &QEventLoop::quit);
    auto failed = connect(worker_, &SimulationWorker::diverged, &loop, [&](const QString& m) {
        failure = m;
        loop.quit();
    });
    applySimulationSettings();
    worker_->step(steps);
    if (steps > 0) {
        loop.exec();
    }
    disconnect(done);
    disconnect(failed);
    frameClock_.invalidate();
    showSnapshot();
    if (!failure.isEmpty()) {
        if (error) {
            *error = failure;
        }
        return false;
    }
    return true;
}

void MainWindow::showScene(Scene scene, bool keepHistory) {
    findChild<QAction*>(QStringLiteral("actionPlay"))->setChecked(false);
    const bool wasPlanar = !scene_.air.triangles.empty();
    scene_ = std::move(scene);
    selection_.clear(); // particles of the previous scene
    restParticles_ = scene_.particles;
    restAir_ = scene_.air;
    restRigid_ = scene_.rigidBodies;
    shownRigidContacts_.clear();
    if (!keepHistory) {
        projectPath_.clear();
        settingsDirty_ = false;
        undoStack_->clear(); // edits of the previous scene cannot apply to this one
    }
    updateModified();
    actors_->setScene(scene_);
    rigidActors_->setScene(scene_);
    if (const auto* shown = findChild<QAction*>(QStringLiteral("actionRigidContacts"))) {
        rigidActors_->setContactsShown(shown->isChecked());
    }
    refreshPins();
    applyClip();
    actors_->setWireframe(findChild<QAction*>(QStringLiteral("actionWireframe"))->isChecked());
    sceneTree_->setScene(scene_);
    properties_->showScene(scene_);
    if (!keepHistory || wasPlanar != !scene_.air.triangles.empty()) {
        viewport_->setPlanar(!scene_.air.triangles.empty()); // resets the camera
    }
    setWindowTitle(QStringLiteral("%1[*] — PBD Lab").arg(QString::fromStdString(scene_.name)));
    for (const std::string& problem : validateScene(scene_)) {
        log_->append(Severity::Warning, QString::fromStdString(problem));
    }
    showSolverSettings();
    fieldEvaluator_ = std::make_unique<SurfaceFieldEvaluator>(scene_);
    applyField();
    Scene simulated = scene_;
    simulated.solver.threads = threads_->value();
    worker_->load(simulated);
    shownTopology_ = worker_->latest()->topologyVersion;
    shownAirVersion_ = worker_->latest()->airVersion;
    shownSteps_ = 0;
    simulationStatus_->setText(tr("Paused · Space: play · .: step · Home: reset"));
}

bool MainWindow::loadGeneratedScene(const QString& name, QString* error) {
    Result<Scene> scene = makeAnyScene(name.toStdString());
    if (!scene) {
        const QString message = QString::fromStdString(scene.error());
        reportError(message);
        if (error) {
            *error = message;
        }
        return false;
    }
    const std::size_t particles = scene->particles.size();
    const std::size_t tets = scene->tetCount();
    showScene(std::move(scene).value());
    log_->append(Severity::Info, tr("Generated scene '%1': %2 bodies, %3 particles, %4 tetrahedra")
                                     .arg(name)
                                     .arg(scene_.bodies.size())
                                     .arg(particles)
                                     .arg(tets));
    return true;
}

PrepareResult MainWindow::runPrepare(const QString& path, const PrepareOptions& options) {
    // TetGen runs in a child process, so even a TetGen crash only ends up as a message here.
    PrepareResult result;
    const std::filesystem::path file = QDir::toNativeSeparators(path).toStdString();
    runWithProgress(tr("Prepare Mesh"), tr("Preparing %1").arg(QFileInfo(path).fileName()),
                    [&](const ProgressCallback& progress) {
                        result = prepareFiles({file}, options, progress);
                    });
    return result;
}

void MainWindow::runWithProgress(const QString& title, const QString& label,
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
    QProgressDialog progress(label + QStringLiteral("…"), tr("Cancel"), 0, 1000, this);
    progress.setObjectName(QStringLiteral("prepareProgress"));
    progress.setWindowTitle(title);
    progress.setWindowModality(Qt::WindowModal);
    progress.setMinimumDuration(400);
    progress.setAutoReset(false);
    progress.setAutoClose(false);
    QEventLoop loop;
    QTimer poll;
    poll.setInterval(30);
    connect(&poll, &QTimer::timeout, &loop, [&] {
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

bool MainWindow::openFile(const QString& path, QString* error) {
    auto fail = [&](const QString& message) {
        reportError(message);
        if (error) {
            *error = message;
        }
        return false;
    };
    if (preparing_) {
        return fail(tr("cannot open '%1': another file is being prepared").arg(path));
    }
    const QString native = QDir::toNativeSeparators(path);
    if (path.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive)) {
        bool asset = false;
        Result<Scene> project = loadSceneFile(native.toStdString(), &asset);
        if (!project) {
            return fail(QString::fromStdString(project.error()));
        }
        showScene(std::move(project).value());
        // An asset is not overwritten by Save with a project: Save asks for a name.
        projectPath_ = asset ? QString() : path;
        log_->append(Severity::Info, tr("Opened %1 %2: %3 bodies, %4 particles, %5 constraints")
                                         .arg(asset ? tr("cooked asset") : tr("project"), native)
                                         .arg(scene_.bodies.size())
                                         .arg(scene_.particles.size())
                                         .arg(scene_.constraints.elementCount()));
    } else {
        preparing_ = true;
        PrepareResult prepared = runPrepare(path, prepareOptions_);
        preparing_ = false;
        for (const ReportLine& line : prepared.report.lines) {
            if (line.severity == ReportSeverity::Error && line.text == prepared.report.error) {
                continue; // reported once, below
            }
            log_->append(line.severity == ReportSeverity::Info      ? Severity::Info
                         : line.severity == ReportSeverity::Warning ? Severity::Warning
                                                                    : Severity::Error,
                         QString::fromStdString(line.text));
        }
        if (!prepared.report.ok()) {
            const QString why = QString::fromStdString(prepared.report.error);
            return fail(
                prepared.report.error == kCancelledMessage
                    ? tr("Preparing %1 was cancelled; the scene on screen is unchanged").arg(native)
                    : tr("cannot prepare '%1': %2").arg(native, why));
        }
        double seconds = 0;
        for (const auto& [stage, s] : prepared.report.timings) {
            seconds += s;
        }
        // A scene made from a mesh starts with the preferred solver settings.
        SolverSettings& solver = prepared.scene.solver;
        solver.timeStep = preferences_.timeStep;
        solver.substeps = preferences_.substeps;
        solver.iterations = preferences_.iterations;
        solver.method = preferences_.method;
        showScene(std::move(prepared.scene));
        log_->append(Severity::Info,
                     tr("Opened %1: %2 bodies, %3 vertices, %4 triangles, %5 tets, %6 air tets, "
                        "%7 constraints (prepared in %8 s)")
                         .arg(native)
                         .arg(scene_.bodies.size())
                         .arg(scene_.particles.size())
                         .arg(scene_.triangleCount())
                         .arg(scene_.tetCount())
                         .arg(scene_.air.tets.size())
                         .arg(scene_.constraints.elementCount())
                         .arg(seconds, 0, 'f', 2));
    }
    lastDirectory_ = QFileInfo(path).absolutePath();
    addRecentFile(QFileInfo(path).absoluteFilePath());
    return true;
}

void MainWindow::openFileInteractive(const QString& path) {
    if (!maybeSave()) {
        return;
    }
    if (!path.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive) && QFileInfo::exists(path)) {
        PrepareDialog dialog({path}, prepareOptions_, this);
        if (dialog.exec() != QDialog::Accepted) {
            return;
        }
        prepareOptions_ = dialog.options();
        if (persistSettings_) {
            PrepareDialog::saveOptions(prepareOptions_);
        }
    }
    openFile(path);
}

bool MainWindow::exportScene(const QString& path, QString* error) {
    ExportChoice choice;
    choice.path = path;
    choice.currentState = true;
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (path.endsWith(QLatin1String(".asset.json"), Qt::CaseInsensitive)) {
        choice.format = ExportFormat::CookedAsset;
    } else if (suffix == QLatin1String("json")) {
        choice.format = ExportFormat::Project;
    } else if (suffix == QLatin1String("vtu")) {
        choice.format = ExportFormat::Vtu;
    } else if (suffix == QLatin1String("msh")) {
        choice.format = ExportFormat::Msh;
    } else if (suffix == QLatin1String("node") || suffix == QLatin1String("ele") ||
               suffix == QLatin1String("face")) {
        choice.format = ExportFormat::Tetgen;
    } else {
        const QString message =
            tr("cannot export '%1': use .vtu, .msh, .node (TetGen), .asset.json (cooked asset) "
               "or .json (project)")
                .arg(QDir::toNativeSeparators(path));
        reportError(message);
        if (error) {
            *error = message;
        }
        return false;
    }
    return exportScene(choice, error);
}

bool MainWindow::exportScene(const ExportChoice& choice, QString* error) {
    const std::string target = QDir::toNativeSeparators(choice.path).toStdString();
    const Scene scene = choice.currentState ? scene_ : authoredScene();
    const int indent = choice.indented ? 1 : -1;
    Result<bool> written = Error{"unknown export format"};
    switch (choice.format) {
    case ExportFormat::CookedAsset:
        written = exportCookedAsset(scene, target, indent);
        break;
    case ExportFormat::Project:
        written = writeFileAtomically(target, projectToJson(scene, choice.indented ? 1 : -1));
        break;
    case ExportFormat::Vtu:
        written = exportVtu(scene, target);
        break;
    case ExportFormat::Msh:
        written = exportMsh(scene, target);
        break;
    case ExportFormat::Tetgen: {
        const QFileInfo info(choice.path);
        written =
            exportTetgen(scene, QDir::toNativeSeparators(info.absolutePath() + QLatin1Char('/') +
                                                         info.completeBaseName())
                                    .toStdString());
        break;
    }
    }
    if (!written) {
        const QString message = QString::fromStdString(written.error());
        reportError(message);
        if (error) {
            *error = message;
        }
        return false;
    }
    log_->append(Severity::Info,
                 tr("Exported %1 (%2)")
                     .arg(QDir::toNativeSeparators(choice.path),
                          choice.currentState ? tr("current shape") : tr("authored scene")));
    statusBar()->showMessage(tr("Exported %1").arg(QFileInfo(choice.path).fileName()), 5000);
    return true;
}

void MainWindow::exportWithDialog() {
    ExportChoice initial = persistSettings_ ? ExportDialog::loadChoice() : ExportChoice{};
    ExportDialog dialog(lastDirectory_, QString::fromStdString(scene_.name), initial, this);
    if (dialog.exec() != QDialog::Accepted) {
        return;
    }
    const ExportChoice choice = dialog.choice();
    if (persistSettings_) {
        ExportDialog::saveChoice(choice);
    }
    if (exportScene(choice)) {
        lastDirectory_ = QFileInfo(choice.path).absolutePath();
    }
}

void MainWindow::openWithDialog() {
    QStringList patterns;
    for (const std::string& ext : supportedMeshExtensions()) {
        patterns << QStringLiteral("*") + QString::fromStdString(ext);
    }
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open Mesh or Project"), lastDirectory_,
        tr("Meshes and projects (%1 *.json);;Meshes (%1);;PBD Lab projects (*.json);;All files "
           "(*)")
            .arg(patterns.join(QLatin1Char(' '))));
    if (!path.isEmpty()) {
        openFileInteractive(path);
    }
}

void MainWindow::addRecentFile(const QString& path) {
    recentFiles_.removeAll(path);
    recentFiles_.prepend(path);
    while (recentFiles_.size() > kMaxRecentFiles) {
        recentFiles_.removeLast();
    }
    rebuildRecentMenu();
    saveSettings();
}

void MainWindow::rebuildRecentMenu() {
    recentMenu_->clear();
    for (int i = 0; i < recentFiles_.size(); ++i) {
        const QString path = recentFiles_[i];
        QAction* a = recentMenu_->addAction(
            QStringLiteral("&%1 %2").arg(i + 1).arg(QFileInfo(path).fileName()), this,
            [this, path] { openFileInteractive(path); });
        a->setToolTip(path);
        a->setStatusTip(path);
    }
    recentMenu_->addSeparator();
    QAction* clear = recentMenu_->addAction(tr("Clear Recent Files"), this, [this] {
        recentFiles_.clear();
        rebuildRecentMenu();
        saveSettings();
    });
    clear->setObjectName(QStringLiteral("actionClearRecent"));
    clear->setEnabled(!recentFiles_.isEmpty());
}

bool MainWindow::saveScreenshot(const QString& path, const QSize& size, QString* error) {
    auto fail = [&](const QString& message) {
        reportError(message);
        if (error) {
            *error = message;
        }
        return false;
    };
    if (size.width() < 1 || size.height() < 1 || size.width() > 16384 || size.height() > 16384) {
        return fail(tr("cannot save screenshot: size %1x%2 is outside 1..16384")
                        .arg(size.width())
                        .arg(size.height()));
    }
    const QFileInfo target(path);
    if (!target.absoluteDir().exists()) {
        return fail(tr("cannot save screenshot '%1': folder '%2' does not exist")
                        .arg(path, QDir::toNativeSeparators(target.absolutePath())));
    }
    const QImage image = viewport_->renderImage(size);
    if (image.isNull()) {
        return fail(tr("cannot save screenshot: the 3D view could not render (no OpenGL context)"));
    }
    QImageWriter writer(path, "png");
    if (!writer.write(image)) {
        return fail(tr("cannot save screenshot '%1': %2").arg(path, writer.errorString()));
    }
    log_->append(Severity::Info,
                 tr("Saved screenshot %1 (%2x%3)").arg(path).arg(size.width()).arg(size.height()));
    return true;
}

void MainWindow::screenshotWithDialog() {
    const qreal dpr = viewport_->devicePixelRatioF();
    const QSize viewSize(int(viewport_->width() * dpr), int(viewport_->height() * dpr));
    QString suggestion = lastScreenshot_;
    if (suggestion.isEmpty()) {
        suggestion = QDir(QStandardPaths::writableLocation(QStandardPaths::PicturesLocation))
                         .filePath(QString::fromStdString(scene_.name) + QStringLiteral(".png"));
    }
    ScreenshotDialog dialog(suggestion, viewSize, this);
    if (dialog.exec() != QDialog::Accepted) {
        return;
    }
    if (saveScreenshot(dialog.path(), dialog.imageSize())) {
        lastScreenshot_ = dialog.path();
        saveSettings();
    }
}

QStringList MainWindow::libraryVersions() {
    QStringList lines;
    lines << QStringLiteral("PBD Lab %1").arg(QString::fromLatin1(kVersion));
    lines << QStringLiteral("Qt %1").arg(QString::fromLatin1(qVersion()));
    lines << QStringLiteral("VTK %1").arg(QString::fromLatin1(vtkVersion::GetVTKVersion()));
    for (const LibraryVersion& v : meshingLibraryVersions()) {
        lines << QStringLiteral("%1 %2").arg(QString::fromStdString(v.name),
                                             QString::fromStdString(v.version));
    }
    return lines;
}

void MainWindow::showAbout() {
    QMessageBox::about(
        this, tr("About PBD Lab"),
        tr("<h3>PBD Lab %1</h3>"
           "<p>Authoring and debugging of position-based cloth, soft-body and rigid-body "
           "assets.</p>"
           "<p>Licensed under the GNU AGPL 3.0 or later.</p><p>Built with:<br>%2</p>")
            .arg(QString::fromLatin1(kVersion),
                 libraryVersions().mid(1).join(QStringLiteral("<br>"))));
}

void MainWindow::reportError(const QString& message) {
    log_->append(Severity::Error, message);
    statusBar()->showMessage(message, 10000);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls()) {
        event->acceptProposedAction();
    }
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QList<QUrl> urls = event->mimeData()->urls();
    if (!urls.isEmpty() && urls.front().isLocalFile()) {
        openFileInteractive(urls.front().toLocalFile());
        event->acceptProposedAction();
    }
}

} // namespace pbd
