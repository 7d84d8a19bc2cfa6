#include "app/MainWindow.h"

#include "app/SimulationWorker.h"
#include "app/reactions/AboutReaction.h"
#include "app/reactions/AirReaction.h"
#include "app/reactions/ColliderReaction.h"
#include "app/reactions/ConstraintGroupReaction.h"
#include "app/reactions/ExportReaction.h"
#include "app/reactions/OpenReaction.h"
#include "app/reactions/PickingReaction.h"
#include "app/reactions/PreferencesReaction.h"
#include "app/reactions/PythonReaction.h"
#include "app/reactions/RepairReaction.h"
#include "app/reactions/SaveReaction.h"
#include "app/reactions/ScreenshotReaction.h"
#include "app/reactions/SelectionReaction.h"
#include "app/reactions/SimulationReaction.h"
#include "app/reactions/TimelineReaction.h"
#include "app/reactions/UndoReaction.h"
#include "app/reactions/ViewReaction.h"
#include "widgets/AirPanel.h"
#include "widgets/ConvergencePanel.h"
#include "widgets/FieldPanel.h"
#include "widgets/Icons.h"
#include "widgets/LogPanel.h"
#include "widgets/ProblemsPanel.h"
#include "widgets/PropertiesPanel.h"
#include "widgets/PythonConsolePanel.h"
#include "widgets/SceneTreePanel.h"
#include "widgets/SolverSettingsPanel.h"
#include "widgets/TimelineBar.h"
#include "widgets/VtkMessageRelay.h"
#include "widgets/VtkViewport.h"

#include <QAction>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDockWidget>
#include <QFileInfo>
#include <QIcon>
#include <QLabel>
#include <QMenuBar>
#include <QMimeData>
#include <QPointer>
#include <QScrollArea>
#include <QSettings>
#include <QStatusBar>
#include <QThread>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QTreeWidgetItem>
#include <QUndoView>
#include <QVBoxLayout>

// resources/resources.qrc, compiled into this static library (the macro works outside namespaces
// only).
static void initResources() {
    Q_INIT_RESOURCE(resources);
}

namespace pbd {

namespace {

// The actions in order into `menu`; nullptr is a separator.
void place(QMenu* menu, const QList<QAction*>& actions) {
    for (QAction* a : actions) {
        if (a == nullptr) {
            menu->addSeparator();
        } else {
            menu->addAction(a);
        }
    }
}

} // namespace

MainWindow::MainWindow(bool persistSettings, QWidget* parent)
    : QMainWindow(parent) {
    initResources();
    useIconTheme();
    setObjectName(QStringLiteral("mainWindow"));
    setWindowTitle(QStringLiteral("PBD Lab"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/pbdlab.svg")));
    setAcceptDrops(true);
    resize(1280, 800);
    bench_.window = this;
    bench_.persistSettings = persistSettings;
    document_ = new SceneDocument(this);
    bench_.document = document_;
    bench_.viewport = new VtkViewport(this);
    bench_.viewport->setObjectName(QStringLiteral("viewport"));
    // The view with the timeline under it.
    auto* central = new QWidget(this);
    central->setObjectName(QStringLiteral("centralArea"));
    auto* centralLayout = new QVBoxLayout(central);
    centralLayout->setContentsMargins(0, 0, 0, 0);
    centralLayout->setSpacing(0);
    centralLayout->addWidget(bench_.viewport, 1);
    setCentralWidget(central);
    createDocks();
    view_ = new SceneView(document_, bench_.viewport, bench_.fields, bench_.solverSettings,
                          bench_.convergence, this);
    bench_.view = view_;
    document_->setThreads(bench_.solverSettings->threads());

    save_ = new SaveReaction(bench_, this);
    preferences_ = new PreferencesReaction(bench_, this);
    connect(preferences_, &PreferencesReaction::autosaveMinutesChanged, save_,
            &SaveReaction::setAutosaveMinutes);
    open_ = new OpenReaction(bench_, save_, preferences_, this);
    export_ = new ExportReaction(bench_, this);
    screenshot_ = new ScreenshotReaction(bench_, this);
    undo_ = new UndoReaction(bench_, historyDock_, this);
    groups_ = new ConstraintGroupReaction(bench_, this);
    colliders_ = new ColliderReaction(bench_, preferences_, this);
    selection_ = new SelectionReaction(bench_, this);
    air_ = new AirReaction(bench_, open_, this);
    repair_ = new RepairReaction(bench_, open_, this);
    connect(open_, &OpenReaction::surfacesOpened, repair_, [this](const auto& problems) {
        repair_->showProblems(problems);
        if (!problems.empty()) {
            problemsDock_->show();
            problemsDock_->raise();
        }
    });
    viewOptions_ = new ViewReaction(bench_, this);
    simulation_ = new SimulationReaction(bench_, this);
    timeline_ =
        new TimelineReaction(bench_, findChild<QAction*>(QStringLiteral("actionPlay")), this);
    centralLayout->addWidget(timeline_->bar());
    picking_ = new PickingReaction(bench_, this);
    about_ = new AboutReaction(bench_, this);
    python_ = new PythonReaction(bench_, pythonDock_, this);
    createMenus();
    createToolBar();
    connectDocks();

    VtkMessageRelay* relay = VtkMessageRelay::install();
    relay->setHandler([log = QPointer<LogPanel>(bench_.log)](Severity s, const QString& m) {
        if (log) {
            log->append(s, QStringLiteral("VTK: ") + m);
        }
    });
    connect(bench_.viewport, &VtkViewport::glErrorOccurred, bench_.log,
            [this](const QString& m) { bench_.log->append(Severity::Error, m); });
    connect(view_, &SceneView::message, this,
            [this](Severity s, const QString& m) { bench_.report(s, m); });
    // Permanent, at the right of the status bar: what the simulation is doing.
    auto* summary = new QLabel(this);
    summary->setObjectName(QStringLiteral("statusSimulation"));
    summary->setToolTip(tr("Simulated time, the last step's cost, frames drawn per second and "
                           "the largest constraint error |C + α̃λ| (|C| under PBD) at the end of "
                           "a recent step"));
    statusBar()->addPermanentWidget(summary);
    connect(view_, &SceneView::summaryChanged, summary, &QLabel::setText);
    statusBar()->showMessage(tr("Left drag: rotate · Shift+drag or middle drag: pan · wheel or "
                                "right drag: zoom · F: frame all"));
    if (persistSettings) {
        restoreSettings();
        if (QFileInfo::exists(SaveReaction::autosavePath())) {
            bench_.log->append(Severity::Warning,
                               tr("Unsaved work from %1 was autosaved: File ▸ Recover Autosave "
                                  "opens it.")
                                   .arg(QFileInfo(SaveReaction::autosavePath())
                                            .lastModified()
                                            .toString(Qt::ISODate)));
        }
    }
}

MainWindow::~MainWindow() {
    // The Python console's interpreter ends first: it may be waiting on the document.
    delete python_;
    python_ = nullptr;
    // The relay outlives the window; stop it from logging into a deleted panel.
    VtkMessageRelay::install()->setHandler({});
    // The view's actors leave the viewport's renderer before the viewport goes.
    delete view_;
}

void MainWindow::createDocks() {
    bench_.sceneTree = new SceneTreePanel(this);
    bench_.properties = new PropertiesPanel(this);
    bench_.log = new LogPanel(this);
    bench_.solverSettings = new SolverSettingsPanel(this);
    bench_.fields = new FieldPanel(this);
    bench_.convergence = new ConvergencePanel(this);
    bench_.air = new AirPanel(this);
    auto makeDock = [this](const QString& title, const QString& name, QWidget* content,
                           Qt::DockWidgetArea area) {
        auto* dock = new QDockWidget(title, this);
        dock->setObjectName(name);
        dock->setWidget(content);
        addDockWidget(area, dock);
        return dock;
    };
    QDockWidget* sceneDock = makeDock(tr("Scene"), QStringLiteral("sceneDock"), bench_.sceneTree,
                                      Qt::LeftDockWidgetArea);
    QDockWidget* propertiesDock = makeDock(tr("Properties"), QStringLiteral("propertiesDock"),
                                           bench_.properties, Qt::LeftDockWidgetArea);
    QDockWidget* logDock =
        makeDock(tr("Log"), QStringLiteral("logDock"), bench_.log, Qt::BottomDockWidgetArea);
    bench_.problems = new ProblemsPanel(this);
    problemsDock_ = makeDock(tr("Problems"), QStringLiteral("problemsDock"), bench_.problems,
                             Qt::BottomDockWidgetArea);
    tabifyDockWidget(logDock, problemsDock_);
    bench_.python = new PythonConsolePanel(this);
    pythonDock_ = makeDock(tr("Python"), QStringLiteral("pythonDock"), bench_.python,
                           Qt::BottomDockWidgetArea);
    tabifyDockWidget(problemsDock_, pythonDock_);
    logDock->raise();
    // The Simulation dock: solver settings, then the field and clip. It scrolls rather than
    // growing the window when the dock is short.
    auto* simulation = new QWidget(this);
    auto* column = new QVBoxLayout(simulation);
    column->addWidget(bench_.solverSettings);
    column->addWidget(bench_.fields);
    column->addStretch(1);
    auto* scroll = new QScrollArea(this);
    scroll->setObjectName(QStringLiteral("simulationScroll"));
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setWidget(simulation);
    makeDock(tr("Simulation"), QStringLiteral("simulationDock"), scroll, Qt::RightDockWidgetArea);
    auto* history = new QUndoView(document_->undoStack(), this);
    history->setEmptyLabel(tr("<loaded scene>"));
    historyDock_ =
        makeDock(tr("History"), QStringLiteral("historyDock"), history, Qt::LeftDockWidgetArea);
    tabifyDockWidget(propertiesDock, historyDock_);
    propertiesDock->raise();
    convergenceDock_ = makeDock(tr("Convergence"), QStringLiteral("convergenceDock"),
                                bench_.convergence, Qt::RightDockWidgetArea);
    // Recording costs solver time: only while the plot can be seen.
    connect(convergenceDock_, &QDockWidget::visibilityChanged, document_->worker(),
            &SimulationWorker::setRecordConvergence);
    // The Air dock, behind the Convergence one: the worker records every step's counts; the
    // worst quality (a pass over the air) only while the plot can be seen.
    airDock_ = makeDock(tr("Air"), QStringLiteral("airDock"), bench_.air, Qt::RightDockWidgetArea);
    tabifyDockWidget(convergenceDock_, airDock_);
    convergenceDock_->raise();
    airHistoryTimer_ = new QTimer(this);
    airHistoryTimer_->setInterval(200);
    connect(airHistoryTimer_, &QTimer::timeout, this, &MainWindow::pullAirHistory);
    connect(airDock_, &QDockWidget::visibilityChanged, this, [this](bool visible) {
        document_->worker()->setRecordAirQuality(visible);
        if (visible) {
            pullAirHistory();
            airHistoryTimer_->start();
        } else {
            airHistoryTimer_->stop();
        }
    });
    // First-launch layout: the view gets most of the window. A saved layout replaces this.
    resizeDocks({sceneDock, propertiesDock}, {300, 300}, Qt::Horizontal);
    resizeDocks({sceneDock, propertiesDock}, {260, 340}, Qt::Vertical);
    resizeDocks({logDock}, {140}, Qt::Vertical);
}

void MainWindow::pullAirHistory() {
    std::uint64_t generation = 0;
    std::vector<AirSample> fresh = document_->worker()->airHistory(airHistoryShown_, &generation);
    if (generation != airHistoryGeneration_) { // a new scene or a reset: the run restarted
        airHistoryGeneration_ = generation;
        airHistoryShown_ = 0;
        bench_.air->clear();
        fresh = document_->worker()->airHistory(0, &generation);
    }
    airHistoryShown_ += fresh.size();
    bench_.air->append(fresh);
}

void MainWindow::createMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    place(file, open_->actions());
    place(file, {nullptr});
    place(file, save_->actions());
    place(file, {open_->recoverAction(), nullptr, export_->action(), timeline_->exportAction(),
                 screenshot_->action(), nullptr, python_->runScriptAction(), nullptr});
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setObjectName(QStringLiteral("actionQuit"));
    quit->setShortcut(QKeySequence::Quit);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    place(edit, undo_->actions());
    place(edit, {nullptr});
    place(edit, groups_->actions());
    place(edit, {nullptr});
    place(edit, colliders_->actions());
    place(edit, {nullptr});
    place(edit, selection_->actions());
    place(edit, {repair_->action(), repair_->prepareAction(), air_->action(), nullptr,
                 preferences_->action()});

    QMenu* view = menuBar()->addMenu(tr("&View"));
    place(view, viewOptions_->actions());
    view->addSeparator();
    for (QDockWidget* dock : findChildren<QDockWidget*>()) {
        view->addAction(dock->toggleViewAction());
    }
    QMenu* simulationMenu = menuBar()->addMenu(tr("&Simulation"));
    place(simulationMenu, simulation_->actions());
    place(simulationMenu, {nullptr});
    place(simulationMenu, timeline_->actions());
    menuBar()->addMenu(open_->samplesMenu());
    place(menuBar()->addMenu(tr("&Help")), {about_->action()});
}

void MainWindow::createToolBar() {
    auto find = [this](const char* name) {
        auto* a = findChild<QAction*>(QLatin1String(name));
        Q_ASSERT(a != nullptr);
        return a;
    };
    // Theme icons by their freedesktop names; PBD Lab's own where a theme has none.
    const std::pair<const char*, QIcon> icons[] = {
        {"actionOpen", themeIcon(QStringLiteral("document-open"))},
        {"actionSave", themeIcon(QStringLiteral("document-save"))},
        {"actionSaveAs", themeIcon(QStringLiteral("document-save-as"))},
        {"actionUndo", themeIcon(QStringLiteral("edit-undo"))},
        {"actionRedo", themeIcon(QStringLiteral("edit-redo"))},
        {"actionPrepareSurfaces", themeIcon(QStringLiteral("system-run"))},
        {"actionPlay", themeIcon(QStringLiteral("media-playback-start"))},
        {"actionStep", themeIcon(QStringLiteral("media-skip-forward"))},
        {"actionResetSimulation", themeIcon(QStringLiteral("media-skip-backward"))},
        {"actionRecordFrames", themeIcon(QStringLiteral("media-record"))},
        {"actionScreenshot", themeIcon(QStringLiteral("camera-photo"))},
        {"actionFrameAll", themeIcon(QStringLiteral("zoom-fit-best"))},
        {"actionQuit", themeIcon(QStringLiteral("application-exit"))},
        {"actionAddAir", ownIcon(QStringLiteral("air-mesh"))},
        {"actionSelectVertices", ownIcon(QStringLiteral("pin"))},
        {"actionGround", ownIcon(QStringLiteral("ground"))},
    };
    for (const auto& [name, icon] : icons) {
        find(name)->setIcon(icon);
    }
    // Play shows what a click does: pause while playing.
    QAction* play = find("actionPlay");
    connect(play, &QAction::toggled, this, [play](bool on) {
        play->setIcon(themeIcon(on ? QStringLiteral("media-playback-pause")
                                   : QStringLiteral("media-playback-start")));
    });
    auto* constraints = findChild<QMenu*>(QStringLiteral("menuConstraints"));
    constraints->menuAction()->setIcon(ownIcon(QStringLiteral("constraints")));

    QToolBar* bar = addToolBar(tr("Main"));
    bar->setObjectName(QStringLiteral("mainToolBar"));
    bar->setIconSize(QSize(20, 20));
    const char* const first[] = {"actionOpen",
                                 "actionSave",
                                 "actionUndo",
                                 "actionRedo",
                                 "actionPrepareSurfaces",
                                 nullptr,
                                 "actionResetSimulation",
                                 "actionPlay",
                                 "actionStep",
                                 nullptr};
    for (const char* name : first) {
        if (name == nullptr) {
            bar->addSeparator();
        } else {
            bar->addAction(find(name));
        }
    }
    // The field the bodies are coloured by: the Simulation dock's own list, kept in step.
    auto* panelFields = bench_.fields->findChild<QComboBox*>(QStringLiteral("fieldSelector"));
    auto* fields = new QComboBox(bar);
    fields->setObjectName(QStringLiteral("toolbarField"));
    fields->setToolTip(tr("The field the bodies are coloured by (the Simulation dock's Field)"));
    fields->setModel(panelFields->model());
    fields->setCurrentIndex(panelFields->currentIndex());
    fields->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    connect(fields, &QComboBox::currentIndexChanged, panelFields, &QComboBox::setCurrentIndex);
    connect(panelFields, &QComboBox::currentIndexChanged, fields, &QComboBox::setCurrentIndex);
    bar->addWidget(fields);
    bar->addSeparator();
    for (const char* name : {"actionAddAir", "actionSelectVertices", "actionGround"}) {
        bar->addAction(find(name));
    }
    bar->addAction(constraints->menuAction());
    if (auto* button =
            qobject_cast<QToolButton*>(bar->widgetForAction(constraints->menuAction()))) {
        button->setPopupMode(QToolButton::InstantPopup);
    }
    bar->addSeparator();
    bar->addAction(find("actionFrameAll"));
    bar->addAction(find("actionScreenshot"));
}

// The Scene and Properties docks follow the document; their edits go through it (undoable).
void MainWindow::connectDocks() {
    SceneTreePanel* tree = bench_.sceneTree;
    PropertiesPanel* properties = bench_.properties;
    SceneDocument* doc = document_;
    auto report = [this](const QString& m) { bench_.reportError(m); };
    connect(doc, &SceneDocument::message, this,
            [this](Severity s, const QString& m) { bench_.report(s, m); });
    connect(doc, &SceneDocument::modifiedChanged, this, &QWidget::setWindowModified);
    connect(doc, &SceneDocument::sceneLoaded, this, &MainWindow::sceneLoaded);
    connect(doc, &SceneDocument::solverSettingsChanged, this, [=, this] {
        const Scene& scene = doc->scene();
        bench_.solverSettings->showSettings(scene.solver, !scene.rigidBodies.empty(),
                                            !scene.air.empty());
        tree->updateSelfCollision(scene);
        if (auto* item = tree->selfCollisionItem(); item != nullptr && item->isSelected()) {
            properties->showSelfCollision(scene);
        }
    });
    connect(bench_.solverSettings, &SolverSettingsPanel::settingsEdited, doc, [=, this] {
        doc->setSolverSettings(bench_.solverSettings->settings(doc->scene().solver));
    });
    connect(bench_.solverSettings, &SolverSettingsPanel::threadsChanged, doc,
            [=, this] { doc->setThreads(bench_.solverSettings->threads()); });
    connect(doc, &SceneDocument::massesChanged, this, [=](int body) {
        if (body >= 0 && tree->selectedBody() == body && tree->selectedGroup() < 0 &&
            tree->selectedCollider() < 0) {
            properties->showBody(doc->scene(), body);
        }
    });
    connect(doc, &SceneDocument::groupChanged, this, [=](int index) {
        tree->updateGroup(doc->scene(), index);
        if (properties->shownGroup() == index) {
            properties->showGroup(doc->scene(), index);
        }
    });
    connect(doc, &SceneDocument::constraintsReplaced, this, [=](int select) {
        tree->setScene(doc->scene());
        if (select >= 0) {
            tree->selectGroup(select);
        } else {
            properties->showScene(doc->scene());
        }
    });
    connect(doc, &SceneDocument::collidersChanged, this, [=](int select) {
        tree->setScene(doc->scene());
        if (select >= 0 && std::size_t(select) < doc->scene().colliders.size()) {
            tree->selectCollider(select);
            properties->showCollider(doc->scene(), select);
        } else {
            properties->showScene(doc->scene());
        }
    });
    connect(tree, &SceneTreePanel::bodySelected, this, [=, this](int body) {
        properties->showBody(doc->scene(), body);
        view_->actors()->setHighlightedBody(body); // the selection shows in the view too
        bench_.viewport->update();
    });
    connect(tree, &SceneTreePanel::groupSelected, this, [=, this](int index) {
        properties->showGroup(doc->scene(), index);
        if (index >= 0 && std::size_t(index) < doc->scene().constraintGroups.size()) {
            view_->actors()->setHighlightedBody(
                doc->scene().constraintGroups[std::size_t(index)].body);
            bench_.viewport->update();
        }
    });
    connect(tree, &SceneTreePanel::groupEnabledToggled, doc, [=](int index, bool on) {
        if (index >= 0 && std::size_t(index) < doc->scene().constraintGroups.size()) {
            ConstraintGroup g = doc->scene().constraintGroups[std::size_t(index)];
            g.enabled = on;
            doc->setConstraintGroup(index, g);
        }
    });
    connect(tree, &SceneTreePanel::addGroupRequested, doc,
            [=](int body, ConstraintType type) { doc->addConstraintGroup(body, type); });
    connect(tree, &SceneTreePanel::removeGroupRequested, doc,
            [=](int index) { doc->removeConstraintGroup(index); });
    connect(tree, &SceneTreePanel::rigidBodySelected, this,
            [=](int index) { properties->showRigidBody(doc->scene(), index); });
    connect(tree, &SceneTreePanel::colliderSelected, this, [=, this](int index) {
        properties->showCollider(doc->scene(), index);
        view_->actors()->setHighlightedBody(-1);
        if (view_->actors()->selectedCollider() != index) {
            view_->actors()->setColliders(doc->scene(), index);
            bench_.viewport->update();
        }
    });
    connect(tree, &SceneTreePanel::selfCollisionSelected, this,
            [=] { properties->showSelfCollision(doc->scene()); });
    connect(tree, &SceneTreePanel::selfCollisionToggled, doc,
            [=](bool on) { doc->setSelfCollision(on, doc->scene().solver.clothThickness); });
    connect(tree, &SceneTreePanel::addColliderRequested, doc,
            [=](ColliderShape shape) { doc->addCollider(shape); });
    connect(tree, &SceneTreePanel::removeColliderRequested, doc,
            [=](int index) { doc->removeCollider(index); });
    connect(tree, &SceneTreePanel::embeddedVisibilityToggled, this, [=, this](int mesh, bool on) {
        if (mesh >= 0 && std::size_t(mesh) < view_->actors()->embeddedCount()) {
            view_->actors()->setEmbeddedVisible(std::size_t(mesh), on);
            bench_.viewport->update();
        }
    });
    connect(tree, &SceneTreePanel::bodyVisibilityToggled, this, [=, this](int body, bool visible) {
        if (body >= 0 && std::size_t(body) < view_->actors()->bodyCount()) {
            view_->actors()->setBodyVisible(std::size_t(body), visible);
            bench_.viewport->update();
        }
    });
    // Property edits, queued: the panel is rebuilt by the edit, after the edited item's signal
    // has returned. A refused edit is logged and the panel shows the value as it is.
    connect(
        properties, &PropertiesPanel::groupEdited, doc,
        [=](int index, const ConstraintGroup& group) {
            QString error;
            if (!doc->setConstraintGroup(index, group, &error)) {
                report(error);
                properties->showGroup(doc->scene(), index);
            }
        },
        Qt::QueuedConnection);
    connect(
        properties, &PropertiesPanel::bendingModelEdited, doc,
        [=](BendingModel model) {
            QString error;
            const int shown = properties->shownGroup();
            if (!doc->setBendingModel(model, &error)) {
                report(error);
            }
            properties->showGroup(doc->scene(), shown);
        },
        Qt::QueuedConnection);
    connect(
        properties, &PropertiesPanel::densityEdited, doc,
        [=](int body, double density) {
            QString error;
            if (!doc->setBodyDensity(body, density, &error)) {
                report(error);
                properties->showBody(doc->scene(), body);
            }
        },
        Qt::QueuedConnection);
    connect(
        properties, &PropertiesPanel::selfCollisionEdited, doc,
        [=](bool on, double thickness) {
            QString error;
            if (!doc->setSelfCollision(on, thickness, &error)) {
                report(error);
                properties->showSelfCollision(doc->scene());
            }
        },
        Qt::QueuedConnection);
    connect(
        properties, &PropertiesPanel::colliderEdited, doc,
        [=](int index, const Collider& collider) {
            QString error;
            if (!doc->setCollider(index, collider, &error)) {
                report(error);
                properties->showCollider(doc->scene(), index);
            }
        },
        Qt::QueuedConnection);
    connect(properties, &PropertiesPanel::editRejected, this, [this](const QString& message) {
        bench_.log->append(Severity::Error, message);
        statusBar()->showMessage(message, 8000);
    });
}

void MainWindow::sceneLoaded() {
    const Scene& scene = document_->scene();
    bench_.sceneTree->setScene(scene);
    bench_.properties->showScene(scene);
    bench_.solverSettings->showSettings(scene.solver, !scene.rigidBodies.empty(),
                                        !scene.air.empty());
    setWindowTitle(QStringLiteral("%1[*] — PBD Lab").arg(QString::fromStdString(scene.name)));
}

bool MainWindow::loadGeneratedScene(const QString& name, QString* error) {
    return open_->loadGeneratedScene(name, error);
}

bool MainWindow::openFile(const QString& path, QString* error) {
    return open_->openFile(path, error);
}

bool MainWindow::simulateSteps(int steps, QString* error) {
    return simulation_->simulateSteps(steps, error);
}

bool MainWindow::setField(const QString& name, QString* error) {
    return view_->setField(name, error);
}

bool MainWindow::saveScreenshot(const QString& path, const QSize& size, QString* error) {
    return view_->saveScreenshot(path, size, error);
}

QStringList MainWindow::libraryVersions() {
    return AboutReaction::libraryVersions();
}

void MainWindow::restoreSettings() {
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    viewOptions_->restoreSettings(settings);
    simulation_->restoreSettings(settings);
    timeline_->restoreSettings(settings);
    open_->restoreSettings(settings);
    screenshot_->restoreSettings(settings);
    python_->restoreSettings(settings);
    preferences_->restoreSettings();
}

void MainWindow::saveSettings() const {
    if (!bench_.persistSettings) {
        return;
    }
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    viewOptions_->saveSettings(settings);
    simulation_->saveSettings(settings);
    timeline_->saveSettings(settings);
    open_->saveSettings(settings);
    screenshot_->saveSettings(settings);
    python_->saveSettings(settings);
    preferences_->saveSettings();
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!save_->maybeSave()) {
        event->ignore();
        return;
    }
    QFile::remove(SaveReaction::autosavePath()); // closed cleanly: nothing to recover
    saveSettings();
    event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls()) {
        event->acceptProposedAction();
    }
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QList<QUrl> urls = event->mimeData()->urls();
    if (!urls.isEmpty() && urls.front().isLocalFile()) {
        open_->openInteractive(urls.front().toLocalFile());
        event->acceptProposedAction();
    }
}

} // namespace pbd
