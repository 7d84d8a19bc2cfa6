#include "widgets/RepairDialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace pbd {

RepairDialog::RepairDialog(const RepairOptions& options, OverlapMode overlaps, QWidget* parent)
    : QDialog(parent)
    , base_(options)
    , wrap_(new QComboBox(this))
    , overlaps_(new QComboBox(this))
    , maxHole_(new QDoubleSpinBox(this))
    , splitNonManifold_(new QCheckBox(tr("&Split non-manifold vertices and edges"), this))
    , removeSelfIntersections_(new QCheckBox(tr("Remove &self-intersections (CGAL)"), this)) {
    setWindowTitle(tr("Repair Surfaces"));
    setObjectName(QStringLiteral("repairDialog"));
    wrap_->setObjectName(QStringLiteral("repairWrap"));
    wrap_->addItem(tr("Solids still broken after the other rungs"), int(WrapMode::Auto));
    wrap_->addItem(tr("Every body (open ones too)"), int(WrapMode::Always));
    wrap_->addItem(tr("Never"), int(WrapMode::Never));
    wrap_->setCurrentIndex(wrap_->findData(int(options.wrap)));
    overlaps_->setObjectName(QStringLiteral("repairOverlaps"));
    overlaps_->addItem(tr("Wrap them together"), int(OverlapMode::Wrap));
    overlaps_->addItem(tr("Boolean union (else wrap)"), int(OverlapMode::Union));
    overlaps_->addItem(tr("Leave them"), int(OverlapMode::Keep));
    overlaps_->setCurrentIndex(overlaps_->findData(int(overlaps)));
    maxHole_->setObjectName(QStringLiteral("repairMaxHole"));
    maxHole_->setRange(0, 1000);
    maxHole_->setDecimals(2);
    maxHole_->setSingleStep(0.05);
    maxHole_->setSpecialValueText(tr("never fill"));
    maxHole_->setValue(options.maxHole);
    maxHole_->setToolTip(tr("Holes are filled when every hole of a body has a border at most "
                            "this share of the body's diagonal long"));
    splitNonManifold_->setObjectName(QStringLiteral("repairSplit"));
    splitNonManifold_->setChecked(options.splitNonManifold);
    removeSelfIntersections_->setObjectName(QStringLiteral("repairSelfIntersections"));
    removeSelfIntersections_->setChecked(options.removeSelfIntersections);

    auto* intro = new QLabel(tr("The ladder runs each rung only where the checks ask for it: "
                                "stitch, drop degenerate triangles, split non-manifold "
                                "vertices, orient, fill small holes, remove self-intersections, "
                                "and last the alpha wrap. Undo puts the surfaces back."),
                             this);
    intro->setWordWrap(true);
    auto* form = new QFormLayout;
    form->addRow(tr("Fill holes up to:"), maxHole_);
    form->addRow(splitNonManifold_);
    form->addRow(removeSelfIntersections_);
    form->addRow(tr("Alpha &wrap:"), wrap_);
    form->addRow(tr("Crossing &bodies:"), overlaps_);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("&Repair"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addLayout(form);
    layout->addWidget(buttons);
}

RepairOptions RepairDialog::options() const {
    RepairOptions o = base_;
    o.wrap = WrapMode(wrap_->currentData().toInt());
    o.maxHole = maxHole_->value();
    o.splitNonManifold = splitNonManifold_->isChecked();
    o.removeSelfIntersections = removeSelfIntersections_->isChecked();
    return o;
}

OverlapMode RepairDialog::overlaps() const {
    return OverlapMode(overlaps_->currentData().toInt());
}

} // namespace pbd
