#include "widgets/ExportDialog.h"

#include <QButtonGroup>
#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSettings>
#include <QVBoxLayout>

namespace pbd {

namespace {

struct FormatInfo {
    const char* name;
    const char* suffix;
    const char* filter;
    const char* description;
};

// In ExportFormat's order.
const FormatInfo kFormats[kExportFormatCount] = {
    {QT_TRANSLATE_NOOP("ExportDialog", "Cooked asset (JSON)"), "asset.json",
     QT_TRANSLATE_NOOP("ExportDialog", "Cooked assets (*.json)"),
     QT_TRANSLATE_NOOP("ExportDialog",
                       "What an engine loads: particles with inverse masses, the constraints by "
                       "type with their rest data, compliance and stiffness, coloured for a "
                       "parallel solve; material frames, air tets, colliders, rigid bodies and "
                       "solver settings. pbdlab-cli simulate runs it.")},
    {QT_TRANSLATE_NOOP("ExportDialog", "PBD Lab project (JSON)"), "json",
     QT_TRANSLATE_NOOP("ExportDialog", "PBD Lab projects (*.json)"),
     QT_TRANSLATE_NOOP("ExportDialog",
                       "The whole scene with its constraint groups, for PBD Lab to open again.")},
    {QT_TRANSLATE_NOOP("ExportDialog", "VTK unstructured grid (.vtu)"), "vtu",
     QT_TRANSLATE_NOOP("ExportDialog", "VTK unstructured grids (*.vtu)"),
     QT_TRANSLATE_NOOP("ExportDialog",
                       "Tets, air tets and cloth triangles with region, quality, material frames "
                       "and inverse masses; opens in ParaView.")},
    {QT_TRANSLATE_NOOP("ExportDialog", "Gmsh 4.1 (.msh)"), "msh",
     QT_TRANSLATE_NOOP("ExportDialog", "Gmsh meshes (*.msh)"),
     QT_TRANSLATE_NOOP("ExportDialog", "ASCII, one physical group per body and one for the air.")},
    {QT_TRANSLATE_NOOP("ExportDialog", "TetGen files (.node, .ele, .face)"), "node",
     QT_TRANSLATE_NOOP("ExportDialog", "TetGen files (*.node)"),
     QT_TRANSLATE_NOOP("ExportDialog",
                       "Three files next to each other: nodes, tets with the region, boundary "
                       "faces with the body.")},
};

const FormatInfo& info(ExportFormat f) {
    return kFormats[static_cast<int>(f)];
}

// `path` with its export suffix replaced by the one of `format`.
QString withSuffix(const QString& path, ExportFormat format) {
    QString base = path;
    for (const FormatInfo& f : kFormats) {
        const QString suffix = QLatin1Char('.') + QLatin1String(f.suffix);
        if (base.endsWith(suffix, Qt::CaseInsensitive)) {
            base.chop(suffix.size());
            break;
        }
    }
    for (const char* other : {".ele", ".face"}) {
        if (base.endsWith(QLatin1String(other), Qt::CaseInsensitive)) {
            base.chop(int(qstrlen(other)));
        }
    }
    return base + QLatin1Char('.') + QLatin1String(info(format).suffix);
}

} // namespace

QString exportSuffix(ExportFormat format) {
    return QLatin1String(info(format).suffix);
}

ExportDialog::ExportDialog(const QString& directory, const QString& baseName,
                           const ExportChoice& initial, QWidget* parent)
    : QDialog(parent)
    , format_(new QComboBox(this))
    , path_(new QLineEdit(this))
    , state_(new QButtonGroup(this))
    , indented_(
          new QCheckBox(tr("Indented (one value per line; larger, readable, diffable)"), this))
    , description_(new QLabel(this)) {
    setObjectName(QStringLiteral("exportDialog"));
    setWindowTitle(tr("Export"));
    format_->setObjectName(QStringLiteral("exportFormat"));
    path_->setObjectName(QStringLiteral("exportPath"));
    indented_->setObjectName(QStringLiteral("exportIndented"));
    description_->setWordWrap(true);
    description_->setMinimumWidth(420);
    for (const FormatInfo& f : kFormats) {
        format_->addItem(tr(f.name));
    }
    format_->setCurrentIndex(static_cast<int>(initial.format));

    auto* authored = new QRadioButton(tr("Authored scene (the state Reset returns to)"), this);
    auto* current = new QRadioButton(tr("Current simulated shape"), this);
    authored->setObjectName(QStringLiteral("exportAuthored"));
    current->setObjectName(QStringLiteral("exportCurrent"));
    state_->addButton(authored, 0);
    state_->addButton(current, 1);
    (initial.currentState ? current : authored)->setChecked(true);
    indented_->setChecked(initial.indented);

    path_->setText(initial.path.isEmpty()
                       ? withSuffix(QDir(directory).filePath(baseName), initial.format)
                       : initial.path);
    auto* browseButton = new QPushButton(tr("Browse…"), this);
    connect(browseButton, &QPushButton::clicked, this, &ExportDialog::browse);
    auto* pathRow = new QHBoxLayout;
    pathRow->addWidget(path_, 1);
    pathRow->addWidget(browseButton);
    auto* stateBox = new QVBoxLayout;
    stateBox->addWidget(authored);
    stateBox->addWidget(current);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    ok_ = buttons->button(QDialogButtonBox::Ok);
    ok_->setText(tr("Export"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(path_, &QLineEdit::textChanged, this,
            [this](const QString& t) { ok_->setEnabled(!t.trimmed().isEmpty()); });
    connect(format_, &QComboBox::currentIndexChanged, this, &ExportDialog::formatChanged);

    auto* form = new QFormLayout(this);
    form->addRow(tr("Format:"), format_);
    form->addRow(QString(), description_);
    form->addRow(tr("File:"), pathRow);
    form->addRow(tr("State:"), stateBox);
    form->addRow(tr("JSON:"), indented_);
    form->addRow(buttons);
    formatChanged();
}

void ExportDialog::formatChanged() {
    const auto f = static_cast<ExportFormat>(format_->currentIndex());
    description_->setText(tr(info(f).description));
    indented_->setEnabled(f == ExportFormat::CookedAsset || f == ExportFormat::Project);
    if (!path_->text().trimmed().isEmpty()) {
        path_->setText(withSuffix(path_->text().trimmed(), f));
    }
}

void ExportDialog::browse() {
    const auto f = static_cast<ExportFormat>(format_->currentIndex());
    const QString chosen =
        QFileDialog::getSaveFileName(this, tr("Export"), path_->text(), tr(info(f).filter));
    if (!chosen.isEmpty()) {
        path_->setText(withSuffix(chosen, f));
    }
}

ExportChoice ExportDialog::choice() const {
    ExportChoice c;
    c.format = static_cast<ExportFormat>(format_->currentIndex());
    c.path = path_->text().trimmed();
    c.currentState = state_->checkedId() == 1;
    c.indented = indented_->isChecked();
    return c;
}

ExportChoice ExportDialog::loadChoice() {
    QSettings s;
    ExportChoice c;
    const int f = s.value(QStringLiteral("export/format"), 0).toInt();
    c.format = static_cast<ExportFormat>(f >= 0 && f < kExportFormatCount ? f : 0);
    c.currentState = s.value(QStringLiteral("export/currentState"), false).toBool();
    c.indented = s.value(QStringLiteral("export/indented"), false).toBool();
    return c;
}

void ExportDialog::saveChoice(const ExportChoice& c) {
    QSettings s;
    s.setValue(QStringLiteral("export/format"), static_cast<int>(c.format));
    s.setValue(QStringLiteral("export/currentState"), c.currentState);
    s.setValue(QStringLiteral("export/indented"), c.indented);
}

} // namespace pbd
