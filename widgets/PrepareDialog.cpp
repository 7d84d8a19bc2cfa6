#include "widgets/PrepareDialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

namespace pbd {

namespace {

QDoubleSpinBox* spin(QWidget* parent, const char* name, double lo, double hi, int decimals,
                     double step, const QString& suffix = {}) {
    auto* box = new QDoubleSpinBox(parent);
    box->setObjectName(QLatin1String(name));
    box->setRange(lo, hi);
    box->setDecimals(decimals);
    box->setSingleStep(step);
    box->setSuffix(suffix);
    return box;
}

} // namespace

PrepareDialog::PrepareDialog(const QStringList& files, const PrepareOptions& options,
                             QWidget* parent)
    : QDialog(parent)
    , base_(options)
    , repair_(new QCheckBox(tr("&Repair surfaces (drop degenerate triangles, stitch cracks, "
                               "orient outward)"),
                            this))
    , tetrahedralize_(new QCheckBox(tr("&Tetrahedralize closed bodies"), this))
    , quality_(spin(this, "prepareQuality", 0, 10, 2, 0.1))
    , maxVolume_(spin(this, "prepareMaxVolume", 0, 1e6, 6, 0.001, tr(" m³")))
    , air_(new QCheckBox(tr("Tessellate the &air between and around the bodies"), this))
    , airMargin_(spin(this, "prepareAirMargin", 0.01, 10, 2, 0.05))
    , airSubdivisions_(new QSpinBox(this))
    , localAir_(spin(this, "prepareLocalAir", 0, 1e6, 3, 0.01, tr(" m")))
    , frames_(new QCheckBox(tr("Material &frames from UVs"), this))
    , tetFrames_(new QComboBox(this))
    , scale_(spin(this, "prepareScale", 1e-6, 1e6, 6, 0.1))
    , mergeShells_(new QCheckBox(tr("&Merge a part's separate shells into one body"), this))
    , wrap_(new QComboBox(this))
    , overlaps_(new QComboBox(this))
    , density_(spin(this, "prepareDensity", 0.001, 1e6, 3, 100, tr(" kg/m³")))
    , arealDensity_(spin(this, "prepareArealDensity", 0.0001, 1e4, 4, 0.05, tr(" kg/m²")))
    , constraints_(new QCheckBox(tr("Add default &constraints (strain, bending, volume)"), this))
    , bendingModel_(new QComboBox(this))
    , rigid_(new QCheckBox(tr("Make every body a ri&gid body (its convex hull)"), this))
    , ground_(new QCheckBox(tr("On a static &ground"), this))
    , cage_(new QSpinBox(this))
    , cageMesh_(new QLineEdit(this)) {
    setWindowTitle(tr("Prepare Mesh"));
    setObjectName(QStringLiteral("prepareDialog"));
    repair_->setObjectName(QStringLiteral("prepareRepair"));
    tetrahedralize_->setObjectName(QStringLiteral("prepareTetrahedralize"));
    air_->setObjectName(QStringLiteral("prepareAir"));
    frames_->setObjectName(QStringLiteral("prepareFrames"));
    mergeShells_->setObjectName(QStringLiteral("prepareMergeShells"));
    mergeShells_->setToolTip(tr("Off: every shell (triangles connected to each other) of a part "
                                "becomes a body of its own"));
    wrap_->setObjectName(QStringLiteral("prepareWrap"));
    wrap_->addItem(tr("Solids still broken after repair"), int(WrapMode::Auto));
    wrap_->addItem(tr("Every body (open ones too)"), int(WrapMode::Always));
    wrap_->addItem(tr("Never (refuse instead)"), int(WrapMode::Never));
    wrap_->setToolTip(tr("The last rung of the repair: a closed, watertight alpha wrap around a "
                         "body (CGAL), when tetrahedralizing or tessellating the air"));
    overlaps_->setObjectName(QStringLiteral("prepareOverlaps"));
    overlaps_->addItem(tr("Wrap them together"), int(OverlapMode::Wrap));
    overlaps_->addItem(tr("Boolean union (else wrap)"), int(OverlapMode::Union));
    overlaps_->addItem(tr("Refuse"), int(OverlapMode::Keep));
    overlaps_->setToolTip(tr("Bodies that cross each other (overlapping parts of a model) "
                             "become one body before meshing"));
    tetFrames_->setObjectName(QStringLiteral("prepareTetFrames"));
    constraints_->setObjectName(QStringLiteral("prepareConstraints"));
    bendingModel_->setObjectName(QStringLiteral("prepareBendingModel"));
    bendingModel_->addItem(tr("Dihedral angle (Bridson)"), int(BendingModel::Bridson));
    bendingModel_->addItem(tr("Isometric (Bergou; cheaper, for cloth that stretches little)"),
                           int(BendingModel::Isometric));
    bendingModel_->addItem(tr("Dihedral angle (PBD appendix)"), int(BendingModel::PbdAppendix));
    bendingModel_->setToolTip(tr("The cloth's bending constraints: the same compliance means the "
                                 "same stiffness near flat in every model"));
    rigid_->setObjectName(QStringLiteral("prepareRigid"));
    ground_->setObjectName(QStringLiteral("prepareGround"));
    rigid_->setToolTip(tr("Each body becomes one dynamic rigid body: the convex hull of its "
                          "vertices, of the density below (no tets, air or constraints)"));
    ground_->setToolTip(tr("A static ground whose top touches the lowest vertex"));
    cage_->setObjectName(QStringLiteral("prepareCage"));
    cage_->setRange(0, 10000000);
    cage_->setSingleStep(500);
    cage_->setSuffix(tr(" triangles"));
    cage_->setSpecialValueText(tr("none: simulate the meshes"));
    cage_->setToolTip(tr("Simulate a closed cage of about this many triangles (an alpha wrap "
                         "around all the meshes) instead of the meshes, which follow it: for "
                         "meshes too fine or too broken to simulate"));
    cageMesh_->setObjectName(QStringLiteral("prepareCageMesh"));
    cageMesh_->setPlaceholderText(tr("or a cage of your own (a closed mesh file)"));
    cageMesh_->setClearButtonEnabled(true);
    airSubdivisions_->setObjectName(QStringLiteral("prepareAirSubdivisions"));
    airSubdivisions_->setRange(1, 64);
    quality_->setSpecialValueText(tr("off"));
    quality_->setToolTip(tr("TetGen's radius-edge ratio bound (q); smaller is better shaped, "
                            "at least 1; 0 turns quality refinement off. The surface is always "
                            "kept exactly, so refinement is limited near coarse surfaces."));
    maxVolume_->setSpecialValueText(tr("no limit"));
    maxVolume_->setToolTip(tr("The largest tet volume (TetGen's a switch)."));
    airMargin_->setToolTip(tr("The container box's margin around everything, as a fraction of "
                              "the scene's largest extent."));
    localAir_->setSpecialValueText(tr("everywhere"));
    localAir_->setToolTip(tr("Keep only air tets within this distance of the surfaces (the "
                             "paper's local air meshes)."));
    tetFrames_->addItem(tr("World axes"), int(TetFrameMode::Global));
    tetFrames_->addItem(tr("Nearest surface (skin layers)"), int(TetFrameMode::NearestSurface));
    scale_->setToolTip(tr("Multiplies every coordinate: 0.01 reads centimetres as metres."));

    repair_->setChecked(options.repair);
    tetrahedralize_->setChecked(options.tetrahedralize);
    quality_->setValue(options.tet.radiusEdgeRatio);
    maxVolume_->setValue(options.tet.maxVolume);
    air_->setChecked(options.air);
    airMargin_->setValue(options.airOptions.margin);
    airSubdivisions_->setValue(options.airOptions.boxSubdivisions);
    localAir_->setValue(options.airOptions.localDistance);
    frames_->setChecked(options.frames);
    tetFrames_->setCurrentIndex(options.tetFrames == TetFrameMode::Global ? 0 : 1);
    scale_->setValue(options.import.scale);
    mergeShells_->setChecked(options.import.mergeShells);
    wrap_->setCurrentIndex(wrap_->findData(int(options.repairOptions.wrap)));
    overlaps_->setCurrentIndex(overlaps_->findData(int(options.overlaps)));
    density_->setValue(options.density);
    arealDensity_->setValue(options.arealDensity);
    constraints_->setChecked(options.defaultConstraints);
    bendingModel_->setCurrentIndex(std::max(0, bendingModel_->findData(int(options.bendingModel))));
    rigid_->setChecked(options.rigidHulls);
    ground_->setChecked(options.rigidGround);
    cage_->setValue(int(std::min<std::size_t>(options.cage.triangles, 10000000)));
    cageMesh_->setText(QString::fromStdString(options.cage.mesh.string()));

    QStringList names;
    for (const QString& f : files) {
        names << QFileInfo(f).fileName();
    }
    auto* heading = new QLabel(tr("Prepare <b>%1</b> for simulation.").arg(names.join(", ")), this);
    heading->setWordWrap(true);

    auto* input = new QGroupBox(tr("Input"), this);
    auto* inputForm = new QFormLayout(input);
    inputForm->addRow(tr("&Scale:"), scale_);
    inputForm->addRow(QString(), mergeShells_);
    inputForm->addRow(repair_);
    inputForm->addRow(tr("Alpha &wrap:"), wrap_);
    inputForm->addRow(tr("Crossing &bodies:"), overlaps_);

    auto* tets = new QGroupBox(tr("Volume mesh (TetGen)"), this);
    auto* tetForm = new QFormLayout(tets);
    tetForm->addRow(tetrahedralize_);
    tetForm->addRow(tr("&Quality (radius-edge):"), quality_);
    tetForm->addRow(tr("Max tet &volume:"), maxVolume_);
    tetForm->addRow(air_);
    tetForm->addRow(tr("Air box &margin:"), airMargin_);
    tetForm->addRow(tr("Box &segments per edge:"), airSubdivisions_);
    tetForm->addRow(tr("&Local air within:"), localAir_);

    auto* materials = new QGroupBox(tr("Materials"), this);
    auto* materialForm = new QFormLayout(materials);
    materialForm->addRow(frames_);
    materialForm->addRow(tr("&Tet material axes:"), tetFrames_);
    materialForm->addRow(tr("&Density (tet bodies):"), density_);
    materialForm->addRow(tr("&Areal density (cloth):"), arealDensity_);
    materialForm->addRow(constraints_);
    materialForm->addRow(tr("&Bending (cloth):"), bendingModel_);

    auto* cage = new QGroupBox(tr("Cage (the meshes follow it)"), this);
    auto* cageForm = new QFormLayout(cage);
    cageForm->addRow(tr("&Cage:"), cage_);
    auto* cageFile = new QHBoxLayout;
    cageFile->addWidget(cageMesh_);
    auto* browse = new QPushButton(tr("&Browse…"), this);
    browse->setObjectName(QStringLiteral("prepareCageBrowse"));
    cageFile->addWidget(browse);
    cageForm->addRow(tr("Cage &mesh:"), cageFile);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString file =
            QFileDialog::getOpenFileName(this, tr("Cage Mesh"), QFileInfo(cageMesh_->text()).path(),
                                         tr("Meshes (*.obj *.ply *.stl *.off *.gltf *.glb)"));
        if (!file.isEmpty()) {
            cageMesh_->setText(file);
        }
    });

    auto* rigid = new QGroupBox(tr("Rigid bodies"), this);
    auto* rigidForm = new QFormLayout(rigid);
    rigidForm->addRow(rigid_);
    rigidForm->addRow(ground_);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("&Prepare"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(heading);
    layout->addWidget(input);
    layout->addWidget(tets);
    layout->addWidget(materials);
    layout->addWidget(cage);
    layout->addWidget(rigid);
    layout->addWidget(buttons);

    connect(tetrahedralize_, &QCheckBox::toggled, this, &PrepareDialog::updateEnabled);
    connect(air_, &QCheckBox::toggled, this, &PrepareDialog::updateEnabled);
    connect(frames_, &QCheckBox::toggled, this, &PrepareDialog::updateEnabled);
    connect(rigid_, &QCheckBox::toggled, this, &PrepareDialog::updateEnabled);
    connect(constraints_, &QCheckBox::toggled, this, &PrepareDialog::updateEnabled);
    connect(cage_, &QSpinBox::valueChanged, this, &PrepareDialog::updateEnabled);
    connect(cageMesh_, &QLineEdit::textChanged, this, &PrepareDialog::updateEnabled);
    updateEnabled();
}

void PrepareDialog::updateEnabled() {
    quality_->setEnabled(tetrahedralize_->isChecked());
    maxVolume_->setEnabled(tetrahedralize_->isChecked());
    airMargin_->setEnabled(air_->isChecked());
    airSubdivisions_->setEnabled(air_->isChecked());
    localAir_->setEnabled(air_->isChecked());
    tetFrames_->setEnabled(frames_->isChecked() && tetrahedralize_->isChecked());
    bendingModel_->setEnabled(constraints_->isChecked() && !rigid_->isChecked());
    // Rigid hulls are neither tetrahedralized nor given air or constraints.
    const bool rigid = rigid_->isChecked();
    for (QWidget* w : std::initializer_list<QWidget*>{tetrahedralize_, air_, frames_, constraints_,
                                                      arealDensity_}) {
        w->setEnabled(!rigid);
    }
    if (rigid) {
        quality_->setEnabled(false);
        maxVolume_->setEnabled(false);
        airMargin_->setEnabled(false);
        airSubdivisions_->setEnabled(false);
        localAir_->setEnabled(false);
        tetFrames_->setEnabled(false);
    }
    ground_->setEnabled(rigid);
    // A cage is tetrahedralized whatever the box says; rigid hulls have no cage.
    const bool caged = cage_->value() > 0 || !cageMesh_->text().trimmed().isEmpty();
    if (caged) {
        tetrahedralize_->setEnabled(false);
        rigid_->setEnabled(false);
    } else if (!rigid) {
        tetrahedralize_->setEnabled(true);
    }
    if (!caged) {
        rigid_->setEnabled(true);
    }
    cage_->setEnabled(!rigid);
    cageMesh_->setEnabled(!rigid);
}

PrepareOptions PrepareDialog::options() const {
    PrepareOptions o = base_;
    o.repair = repair_->isChecked();
    o.tetrahedralize = tetrahedralize_->isChecked();
    const double q = quality_->value();
    o.tet.radiusEdgeRatio = q > 0 && q < 1 ? 1.0 : q;
    o.tet.maxVolume = maxVolume_->value();
    o.air = air_->isChecked();
    o.airOptions.margin = airMargin_->value();
    o.airOptions.boxSubdivisions = airSubdivisions_->value();
    o.airOptions.localDistance = localAir_->value();
    o.frames = frames_->isChecked();
    o.tetFrames = TetFrameMode(tetFrames_->currentData().toInt());
    o.import.scale = scale_->value();
    o.import.mergeShells = mergeShells_->isChecked();
    o.repairOptions.wrap = WrapMode(wrap_->currentData().toInt());
    o.overlaps = OverlapMode(overlaps_->currentData().toInt());
    o.density = density_->value();
    o.arealDensity = arealDensity_->value();
    o.defaultConstraints = constraints_->isChecked();
    o.bendingModel = BendingModel(bendingModel_->currentData().toInt());
    o.rigidHulls = rigid_->isChecked();
    o.rigidGround = ground_->isChecked(); // used with rigidHulls only
    o.cage.triangles = std::size_t(cage_->value());
    o.cage.mesh = cageMesh_->text().trimmed().toStdString();
    if (!o.cage.mesh.empty()) {
        o.cage.triangles = 0; // the user's cage wins
    }
    o.cage.import = o.import;
    if (o.cage.enabled()) {
        o.rigidHulls = false;
    }
    if (o.rigidHulls) {
        o.tetrahedralize = o.air = o.frames = o.defaultConstraints = false;
    }
    return o;
}

PrepareOptions PrepareDialog::defaultOptions() {
    PrepareOptions o;
    o.tetrahedralize = true;
    o.frames = true;
    o.defaultConstraints = true;
    o.rigidGround = true;
    return o;
}

PrepareOptions PrepareDialog::savedOptions() {
    QSettings s;
    PrepareOptions o = defaultOptions();
    s.beginGroup(QStringLiteral("prepare"));
    o.repair = s.value(QStringLiteral("repair"), o.repair).toBool();
    o.tetrahedralize = s.value(QStringLiteral("tetrahedralize"), o.tetrahedralize).toBool();
    o.tet.radiusEdgeRatio = s.value(QStringLiteral("quality"), o.tet.radiusEdgeRatio).toDouble();
    o.tet.maxVolume = s.value(QStringLiteral("maxVolume"), o.tet.maxVolume).toDouble();
    o.air = s.value(QStringLiteral("air"), o.air).toBool();
    o.airOptions.margin = s.value(QStringLiteral("airMargin"), o.airOptions.margin).toDouble();
    o.airOptions.boxSubdivisions =
        s.value(QStringLiteral("airSubdivisions"), o.airOptions.boxSubdivisions).toInt();
    o.airOptions.localDistance =
        s.value(QStringLiteral("localAir"), o.airOptions.localDistance).toDouble();
    o.frames = s.value(QStringLiteral("frames"), o.frames).toBool();
    o.tetFrames = s.value(QStringLiteral("tetFrames"), 0).toInt() == 1
                      ? TetFrameMode::NearestSurface
                      : TetFrameMode::Global;
    o.import.scale = s.value(QStringLiteral("scale"), o.import.scale).toDouble();
    o.import.mergeShells = s.value(QStringLiteral("mergeShells"), o.import.mergeShells).toBool();
    const int wrap = s.value(QStringLiteral("wrap"), int(o.repairOptions.wrap)).toInt();
    if (wrap >= int(WrapMode::Auto) && wrap <= int(WrapMode::Never)) {
        o.repairOptions.wrap = WrapMode(wrap);
    }
    const int overlaps = s.value(QStringLiteral("overlaps"), int(o.overlaps)).toInt();
    if (overlaps >= int(OverlapMode::Wrap) && overlaps <= int(OverlapMode::Keep)) {
        o.overlaps = OverlapMode(overlaps);
    }
    o.density = s.value(QStringLiteral("density"), o.density).toDouble();
    o.arealDensity = s.value(QStringLiteral("arealDensity"), o.arealDensity).toDouble();
    o.defaultConstraints = s.value(QStringLiteral("constraints"), o.defaultConstraints).toBool();
    o.bendingModel =
        bendingModelFromString(s.value(QStringLiteral("bendingModel")).toString().toStdString())
            .value_or(BendingModel::Bridson);
    o.rigidHulls = s.value(QStringLiteral("rigid"), o.rigidHulls).toBool();
    o.rigidGround = s.value(QStringLiteral("ground"), o.rigidGround).toBool();
    o.cage.triangles =
        std::size_t(std::clamp(s.value(QStringLiteral("cage"), 0).toLongLong(), 0LL, 10000000LL));
    s.endGroup();
    return o;
}

void PrepareDialog::saveOptions(const PrepareOptions& o) {
    QSettings s;
    s.beginGroup(QStringLiteral("prepare"));
    s.setValue(QStringLiteral("repair"), o.repair);
    s.setValue(QStringLiteral("tetrahedralize"), o.tetrahedralize);
    s.setValue(QStringLiteral("quality"), o.tet.radiusEdgeRatio);
    s.setValue(QStringLiteral("maxVolume"), o.tet.maxVolume);
    s.setValue(QStringLiteral("air"), o.air);
    s.setValue(QStringLiteral("airMargin"), o.airOptions.margin);
    s.setValue(QStringLiteral("airSubdivisions"), o.airOptions.boxSubdivisions);
    s.setValue(QStringLiteral("localAir"), o.airOptions.localDistance);
    s.setValue(QStringLiteral("frames"), o.frames);
    s.setValue(QStringLiteral("tetFrames"), o.tetFrames == TetFrameMode::NearestSurface ? 1 : 0);
    s.setValue(QStringLiteral("scale"), o.import.scale);
    s.setValue(QStringLiteral("mergeShells"), o.import.mergeShells);
    s.setValue(QStringLiteral("wrap"), int(o.repairOptions.wrap));
    s.setValue(QStringLiteral("overlaps"), int(o.overlaps));
    s.setValue(QStringLiteral("density"), o.density);
    s.setValue(QStringLiteral("arealDensity"), o.arealDensity);
    s.setValue(QStringLiteral("constraints"), o.defaultConstraints);
    s.setValue(QStringLiteral("bendingModel"), QString::fromUtf8(toString(o.bendingModel).data()));
    s.setValue(QStringLiteral("rigid"), o.rigidHulls);
    s.setValue(QStringLiteral("ground"), o.rigidGround);
    s.setValue(QStringLiteral("cage"), qlonglong(o.cage.triangles)); // the file is per asset
    s.endGroup();
}

} // namespace pbd
