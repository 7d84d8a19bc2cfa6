#include "widgets/PreferencesDialog.h"

#include "widgets/SceneActors.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace pbd {

namespace {

struct Unit {
    const char* name;
    double metres;
    const char* label;
};
constexpr Unit kUnits[] = {
    {"m", 1.0, QT_TRANSLATE_NOOP("PreferencesDialog", "metres (m)")},
    {"cm", 0.01, QT_TRANSLATE_NOOP("PreferencesDialog", "centimetres (cm)")},
    {"mm", 0.001, QT_TRANSLATE_NOOP("PreferencesDialog", "millimetres (mm)")},
    {"in", 0.0254, QT_TRANSLATE_NOOP("PreferencesDialog", "inches (in)")},
    {"ft", 0.3048, QT_TRANSLATE_NOOP("PreferencesDialog", "feet (ft)")}};

} // namespace

double Preferences::unitScale() const {
    for (const Unit& u : kUnits) {
        if (meshUnit == QLatin1String(u.name)) {
            return u.metres;
        }
    }
    return 1.0;
}

QStringList Preferences::units() {
    QStringList out;
    for (const Unit& u : kUnits) {
        out << QLatin1String(u.name);
    }
    return out;
}

Preferences Preferences::load() {
    QSettings s;
    Preferences p;
    const QString unit = s.value(QStringLiteral("preferences/meshUnit"), p.meshUnit).toString();
    p.meshUnit = units().contains(unit) ? unit : p.meshUnit;
    const double dt = s.value(QStringLiteral("preferences/timeStep"), p.timeStep).toDouble();
    p.timeStep = dt > 0 && dt < 1 ? dt : p.timeStep;
    p.substeps =
        std::clamp(s.value(QStringLiteral("preferences/substeps"), p.substeps).toInt(), 1, 1000);
    p.iterations = std::clamp(
        s.value(QStringLiteral("preferences/iterations"), p.iterations).toInt(), 1, 10000);
    p.method = s.value(QStringLiteral("preferences/method")).toString() == QLatin1String("pbd")
                   ? SolverMethod::Pbd
                   : SolverMethod::Xpbd;
    // Before there were preferences the Simulation dock's choice was kept as view/colourMap.
    const QString map = s.value(QStringLiteral("preferences/colourMap"),
                                s.value(QStringLiteral("view/colourMap"), p.colourMap))
                            .toString();
    p.colourMap = SceneActors::colourMapPresets().contains(map) ? map : p.colourMap;
    p.autosaveMinutes = std::clamp(
        s.value(QStringLiteral("preferences/autosaveMinutes"), p.autosaveMinutes).toInt(), 0, 600);
    p.groundUnderMeshes =
        s.value(QStringLiteral("preferences/groundUnderMeshes"), p.groundUnderMeshes).toBool();
    p.cacheEvery = std::clamp(
        s.value(QStringLiteral("preferences/cacheEvery"), p.cacheEvery).toInt(), 1, 10000);
    p.cacheMegabytes =
        std::clamp(s.value(QStringLiteral("preferences/cacheMegabytes"), p.cacheMegabytes).toInt(),
                   16, 1 << 20);
    p.cacheSpillFolder = s.value(QStringLiteral("preferences/cacheSpillFolder")).toString();
    p.movingResolution = std::clamp(
        s.value(QStringLiteral("preferences/movingResolution"), p.movingResolution).toDouble(), 0.1,
        1.0);
    return p;
}

void Preferences::save() const {
    QSettings s;
    s.setValue(QStringLiteral("preferences/meshUnit"), meshUnit);
    s.setValue(QStringLiteral("preferences/timeStep"), timeStep);
    s.setValue(QStringLiteral("preferences/substeps"), substeps);
    s.setValue(QStringLiteral("preferences/iterations"), iterations);
    s.setValue(QStringLiteral("preferences/method"),
               method == SolverMethod::Pbd ? QStringLiteral("pbd") : QStringLiteral("xpbd"));
    s.setValue(QStringLiteral("preferences/colourMap"), colourMap);
    s.setValue(QStringLiteral("preferences/autosaveMinutes"), autosaveMinutes);
    s.setValue(QStringLiteral("preferences/groundUnderMeshes"), groundUnderMeshes);
    s.setValue(QStringLiteral("preferences/cacheEvery"), cacheEvery);
    s.setValue(QStringLiteral("preferences/cacheMegabytes"), cacheMegabytes);
    s.setValue(QStringLiteral("preferences/cacheSpillFolder"), cacheSpillFolder);
    s.setValue(QStringLiteral("preferences/movingResolution"), movingResolution);
}

PreferencesDialog::PreferencesDialog(const Preferences& p, QWidget* parent)
    : QDialog(parent)
    , unit_(new QComboBox(this))
    , timeStep_(new QDoubleSpinBox(this))
    , substeps_(new QSpinBox(this))
    , iterations_(new QSpinBox(this))
    , method_(new QComboBox(this))
    , colourMap_(new QComboBox(this))
    , autosave_(new QSpinBox(this))
    , ground_(new QCheckBox(tr("Put a ground under each mesh opened"), this))
    , cacheEvery_(new QSpinBox(this))
    , cacheMegabytes_(new QSpinBox(this))
    , cacheSpill_(new QLineEdit(this))
    , movingResolution_(new QComboBox(this)) {
    setObjectName(QStringLiteral("preferencesDialog"));
    setWindowTitle(tr("Preferences"));
    unit_->setObjectName(QStringLiteral("prefMeshUnit"));
    timeStep_->setObjectName(QStringLiteral("prefTimeStep"));
    substeps_->setObjectName(QStringLiteral("prefSubsteps"));
    iterations_->setObjectName(QStringLiteral("prefIterations"));
    method_->setObjectName(QStringLiteral("prefMethod"));
    colourMap_->setObjectName(QStringLiteral("prefColourMap"));
    autosave_->setObjectName(QStringLiteral("prefAutosaveMinutes"));
    ground_->setObjectName(QStringLiteral("prefGroundUnderMeshes"));
    ground_->setChecked(p.groundUnderMeshes);
    ground_->setToolTip(tr("A ground under the mesh's lowest point, so that it comes to rest in "
                           "view; Edit ▸ Ground (G) takes it away or puts it back"));

    for (const Unit& u : kUnits) {
        unit_->addItem(tr(u.label), QLatin1String(u.name));
    }
    unit_->setCurrentIndex(std::max(0, int(Preferences::units().indexOf(p.meshUnit))));
    unit_->setToolTip(tr("PBD Lab simulates in metres; a mesh modelled in another unit is scaled "
                         "to metres when opened (the Prepare dialog's scale starts from this)"));
    timeStep_->setRange(0.01, 100);
    timeStep_->setDecimals(3);
    timeStep_->setSuffix(tr(" ms"));
    timeStep_->setValue(p.timeStep * 1000);
    substeps_->setRange(1, 1000);
    substeps_->setValue(p.substeps);
    iterations_->setRange(1, 10000);
    iterations_->setValue(p.iterations);
    method_->addItem(tr("XPBD (compliance, independent of the time step)"), QStringLiteral("xpbd"));
    method_->addItem(tr("PBD (stiffness in [0, 1])"), QStringLiteral("pbd"));
    method_->setCurrentIndex(p.method == SolverMethod::Pbd ? 1 : 0);
    colourMap_->addItems(SceneActors::colourMapPresets());
    colourMap_->setCurrentText(p.colourMap);
    autosave_->setRange(0, 600);
    autosave_->setSuffix(tr(" min"));
    autosave_->setSpecialValueText(tr("never"));
    autosave_->setValue(p.autosaveMinutes);
    autosave_->setToolTip(tr("Unsaved work is written this often to PBD Lab's data folder; after "
                             "a crash, the next start offers to recover it"));

    auto* units = new QGroupBox(tr("Units"), this);
    auto* unitsForm = new QFormLayout(units);
    unitsForm->addRow(tr("Meshes are modelled in"), unit_);
    unitsForm->addRow(new QLabel(tr("Everything else is SI: m, kg, s, N."), units));
    auto* solver = new QGroupBox(tr("Scenes made from meshes"), this);
    auto* solverForm = new QFormLayout(solver);
    solverForm->addRow(tr("Time step"), timeStep_);
    solverForm->addRow(tr("Substeps"), substeps_);
    solverForm->addRow(tr("Iterations"), iterations_);
    solverForm->addRow(tr("Method"), method_);
    solverForm->addRow(ground_);
    movingResolution_->setObjectName(QStringLiteral("prefMovingResolution"));
    movingResolution_->addItem(tr("Full size"), 1.0);
    movingResolution_->addItem(tr("Half size"), 0.5);
    movingResolution_->addItem(tr("A third"), 1.0 / 3);
    movingResolution_->setCurrentIndex(p.movingResolution > 0.75  ? 0
                                       : p.movingResolution > 0.4 ? 1
                                                                  : 2);
    movingResolution_->setToolTip(
        tr("While you turn, pan or zoom, a view that takes longer than 1/30 s to draw is drawn "
           "at this size and stretched, so it follows the mouse; it is drawn at full size again "
           "as soon as the camera rests"));
    auto* view = new QGroupBox(tr("View"), this);
    auto* viewForm = new QFormLayout(view);
    viewForm->addRow(tr("Colour map"), colourMap_);
    viewForm->addRow(tr("Heavy views while the camera moves"), movingResolution_);
    auto* safety = new QGroupBox(tr("Safety"), this);
    auto* safetyForm = new QFormLayout(safety);
    safetyForm->addRow(tr("Autosave every"), autosave_);

    cacheEvery_->setObjectName(QStringLiteral("prefCacheEvery"));
    cacheEvery_->setRange(1, 10000);
    cacheEvery_->setPrefix(tr("every "));
    cacheEvery_->setSuffix(tr(" steps"));
    cacheEvery_->setValue(p.cacheEvery);
    cacheEvery_->setToolTip(tr("The timeline can go back to the cached steps; the steps between "
                               "them are computed again when played (bit for bit the same)"));
    cacheMegabytes_->setObjectName(QStringLiteral("prefCacheMegabytes"));
    cacheMegabytes_->setRange(16, 1 << 20);
    cacheMegabytes_->setSingleStep(256);
    cacheMegabytes_->setSuffix(tr(" MB"));
    cacheMegabytes_->setValue(p.cacheMegabytes);
    cacheMegabytes_->setToolTip(tr("Frames past this much memory go to the spill folder, or "
                                   "without one the oldest are dropped"));
    cacheSpill_->setObjectName(QStringLiteral("prefCacheSpillFolder"));
    cacheSpill_->setText(p.cacheSpillFolder);
    cacheSpill_->setPlaceholderText(tr("none: drop the oldest frames"));
    auto* browse = new QToolButton(this);
    browse->setText(tr("…"));
    connect(browse, &QToolButton::clicked, this, [this] {
        const QString dir =
            QFileDialog::getExistingDirectory(this, tr("Spill Folder"), cacheSpill_->text());
        if (!dir.isEmpty()) {
            cacheSpill_->setText(dir);
        }
    });
    auto* spillRow = new QHBoxLayout;
    spillRow->addWidget(cacheSpill_);
    spillRow->addWidget(browse);
    auto* cache = new QGroupBox(tr("Frame cache (the timeline)"), this);
    auto* cacheForm = new QFormLayout(cache);
    cacheForm->addRow(tr("Keep"), cacheEvery_);
    cacheForm->addRow(tr("Memory"), cacheMegabytes_);
    cacheForm->addRow(tr("Spill folder"), spillRow);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(units);
    layout->addWidget(solver);
    layout->addWidget(view);
    layout->addWidget(safety);
    layout->addWidget(cache);
    layout->addWidget(buttons);
}

Preferences PreferencesDialog::preferences() const {
    Preferences p;
    p.meshUnit = unit_->currentData().toString();
    p.timeStep = timeStep_->value() / 1000;
    p.substeps = substeps_->value();
    p.iterations = iterations_->value();
    p.method = method_->currentData().toString() == QLatin1String("pbd") ? SolverMethod::Pbd
                                                                         : SolverMethod::Xpbd;
    p.colourMap = colourMap_->currentText();
    p.autosaveMinutes = autosave_->value();
    p.groundUnderMeshes = ground_->isChecked();
    p.cacheEvery = cacheEvery_->value();
    p.cacheMegabytes = cacheMegabytes_->value();
    p.cacheSpillFolder = cacheSpill_->text().trimmed();
    p.movingResolution = movingResolution_->currentData().toDouble();
    return p;
}

} // namespace pbd
