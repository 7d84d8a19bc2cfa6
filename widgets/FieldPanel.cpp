#include "widgets/FieldPanel.h"

#include "core/fields/SurfaceFields.h"
#include "widgets/SceneActors.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QSlider>

namespace pbd {

FieldPanel::FieldPanel(QWidget* parent)
    : QWidget(parent) {
    auto* form = new QFormLayout(this);
    form->setContentsMargins(0, 0, 0, 0);
    fieldSelector_ = new QComboBox(this);
    fieldSelector_->setObjectName(QStringLiteral("fieldSelector"));
    for (SurfaceField f : kSurfaceFields) {
        fieldSelector_->addItem(
            QString::fromUtf8(labelOf(f).data(), qsizetype(labelOf(f).size())),
            QString::fromUtf8(toString(f).data(), qsizetype(toString(f).size())));
    }
    fieldSelector_->setToolTip(tr("Colour the surfaces by a per-element field"));
    form->addRow(tr("Field"), fieldSelector_);
    lockRange_ = new QCheckBox(tr("Lock colour range"), this);
    lockRange_->setObjectName(QStringLiteral("lockRange"));
    lockRange_->setToolTip(tr("Keep the current range while the field changes, to compare "
                              "frames; otherwise the range follows the values"));
    form->addRow(lockRange_);
    connect(lockRange_, &QCheckBox::toggled, this, &FieldPanel::fieldChanged);
    connect(fieldSelector_, &QComboBox::currentIndexChanged, this, [this] {
        lockRange_->setChecked(false); // a new field starts from its own range
        emit fieldChanged();
    });
    colourMap_ = new QComboBox(this);
    colourMap_->setObjectName(QStringLiteral("colourMap"));
    colourMap_->addItems(SceneActors::colourMapPresets());
    colourMap_->setToolTip(tr("auto: diverging cool-warm centred on zero for strains, viridis "
                              "for the other fields"));
    form->addRow(tr("Colour map"), colourMap_);
    customRange_ = new QCheckBox(tr("Custom range"), this);
    customRange_->setObjectName(QStringLiteral("customRange"));
    rangeMin_ = new QDoubleSpinBox(this);
    rangeMax_ = new QDoubleSpinBox(this);
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
    connect(colourMap_, &QComboBox::currentIndexChanged, this, &FieldPanel::fieldChanged);
    connect(customRange_, &QCheckBox::toggled, this, [this](bool on) {
        rangeMin_->setEnabled(on);
        rangeMax_->setEnabled(on);
        emit fieldChanged();
    });
    connect(rangeMin_, &QDoubleSpinBox::valueChanged, this, &FieldPanel::fieldChanged);
    connect(rangeMax_, &QDoubleSpinBox::valueChanged, this, &FieldPanel::fieldChanged);
    // A clip plane through the tet bodies, across one axis, at a share of the scene's extent.
    clipEnabled_ = new QCheckBox(tr("Clip tet bodies"), this);
    clipEnabled_->setObjectName(QStringLiteral("clipEnabled"));
    clipEnabled_->setToolTip(tr("Cut the tet bodies open to see their tets (inverted ones red); "
                                "View ▸ Clip Tet Bodies, C"));
    clipAxis_ = new QComboBox(this);
    clipAxis_->setObjectName(QStringLiteral("clipAxis"));
    clipAxis_->addItems({QStringLiteral("x"), QStringLiteral("y"), QStringLiteral("z")});
    clipPosition_ = new QSlider(Qt::Horizontal, this);
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
    connect(clipEnabled_, &QCheckBox::toggled, this, &FieldPanel::clipChanged);
    connect(clipAxis_, &QComboBox::currentIndexChanged, this, &FieldPanel::clipChanged);
    connect(clipPosition_, &QSlider::valueChanged, this, &FieldPanel::clipChanged);
}

int FieldPanel::fieldIndex() const {
    return std::max(0, fieldSelector_->currentIndex());
}

QString FieldPanel::fieldLabel() const {
    return fieldSelector_->currentText();
}

bool FieldPanel::selectField(const QString& name) {
    const int index = fieldSelector_->findData(name);
    if (index < 0) {
        return false;
    }
    fieldSelector_->setCurrentIndex(index);
    return true;
}

QString FieldPanel::colourMap() const {
    return colourMap_->currentText();
}

void FieldPanel::setColourMap(const QString& name) {
    colourMap_->setCurrentText(name);
}

bool FieldPanel::rangeLocked() const {
    return lockRange_->isChecked();
}

bool FieldPanel::customRange(double& lo, double& hi) const {
    if (!customRange_->isChecked() || !(rangeMax_->value() > rangeMin_->value())) {
        return false;
    }
    lo = rangeMin_->value();
    hi = rangeMax_->value();
    return true;
}

void FieldPanel::showRange(double lo, double hi) {
    if (customRange_->isChecked()) {
        return;
    }
    for (auto [box, v] : {std::pair{rangeMin_, lo}, std::pair{rangeMax_, hi}}) {
        box->blockSignals(true);
        box->setValue(v);
        box->blockSignals(false);
    }
}

bool FieldPanel::clipEnabled() const {
    return clipEnabled_->isChecked();
}

void FieldPanel::setClipEnabled(bool on) {
    clipEnabled_->setChecked(on);
}

int FieldPanel::clipAxis() const {
    return clipAxis_->currentIndex();
}

double FieldPanel::clipPosition() const {
    return clipPosition_->value() / 100.0;
}

} // namespace pbd
