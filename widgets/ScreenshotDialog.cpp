#include "widgets/ScreenshotDialog.h"

#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>

namespace pbd {

ScreenshotDialog::ScreenshotDialog(const QString& path, const QSize& size, QWidget* parent)
    : QDialog(parent)
    , path_(new QLineEdit(path, this))
    , width_(new QSpinBox(this))
    , height_(new QSpinBox(this)) {
    setWindowTitle(tr("Save Screenshot"));
    path_->setObjectName(QStringLiteral("screenshotPath"));
    width_->setObjectName(QStringLiteral("screenshotWidth"));
    height_->setObjectName(QStringLiteral("screenshotHeight"));
    for (QSpinBox* box : {width_, height_}) {
        box->setRange(16, 8192);
        box->setSuffix(tr(" px"));
    }
    width_->setValue(size.width());
    height_->setValue(size.height());

    auto* browse = new QPushButton(tr("Browse…"), this);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString chosen = QFileDialog::getSaveFileName(
            this, tr("Save Screenshot"), path_->text(), tr("PNG images (*.png)"));
        if (!chosen.isEmpty()) {
            path_->setText(chosen.endsWith(QLatin1String(".png"), Qt::CaseInsensitive)
                               ? chosen
                               : chosen + ".png");
        }
    });
    auto* pathRow = new QHBoxLayout;
    pathRow->addWidget(path_, 1);
    pathRow->addWidget(browse);
    auto* sizeRow = new QHBoxLayout;
    sizeRow->addWidget(width_);
    sizeRow->addWidget(new QLabel(QStringLiteral("×"), this));
    sizeRow->addWidget(height_);
    sizeRow->addStretch(1);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(path_, &QLineEdit::textChanged, this, [buttons](const QString& t) {
        buttons->button(QDialogButtonBox::Save)->setEnabled(!t.trimmed().isEmpty());
    });
    buttons->button(QDialogButtonBox::Save)->setEnabled(!path.trimmed().isEmpty());

    auto* form = new QFormLayout(this);
    form->addRow(tr("File:"), pathRow);
    form->addRow(tr("Size:"), sizeRow);
    form->addRow(buttons);
}

QString ScreenshotDialog::path() const {
    return path_->text().trimmed();
}

QSize ScreenshotDialog::imageSize() const {
    return {width_->value(), height_->value()};
}

} // namespace pbd
