#include "widgets/LogPanel.h"

#include <QApplication>
#include <QComboBox>
#include <QDateTime>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QPushButton>
#include <QStyle>
#include <QThread>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace pbd {

namespace {
constexpr int kSeverityRole = Qt::UserRole + 1;
}

LogPanel::LogPanel(QWidget* parent)
    : QWidget(parent)
    , list_(new QTreeWidget(this))
    , filter_(new QComboBox(this)) {
    list_->setObjectName(QStringLiteral("logList"));
    list_->setColumnCount(3);
    list_->setHeaderLabels({tr("Time"), tr("Severity"), tr("Message")});
    list_->setRootIsDecorated(false);
    list_->setUniformRowHeights(true);
    list_->setAlternatingRowColors(true);
    list_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    list_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    list_->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    list_->header()->setStretchLastSection(true);

    filter_->setObjectName(QStringLiteral("logFilter"));
    filter_->addItems({tr("All messages"), tr("Warnings and errors"), tr("Errors only")});
    connect(filter_, &QComboBox::currentIndexChanged, this, &LogPanel::applyFilter);
    auto* clearButton = new QPushButton(tr("Clear"), this);
    clearButton->setObjectName(QStringLiteral("logClear"));
    connect(clearButton, &QPushButton::clicked, this, &LogPanel::clear);

    auto* bar = new QHBoxLayout;
    bar->addWidget(filter_);
    bar->addStretch(1);
    bar->addWidget(clearButton);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addLayout(bar);
    layout->addWidget(list_);
}

void LogPanel::append(Severity severity, const QString& message) {
    if (QThread::currentThread() != thread()) {
        QMetaObject::invokeMethod(
            this, [this, severity, message] { append(severity, message); }, Qt::QueuedConnection);
        return;
    }
    auto* item =
        new QTreeWidgetItem({QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss")),
                             toDisplayString(severity), message});
    item->setData(0, kSeverityRole, int(severity));
    item->setToolTip(2, message);
    const QStyle* st = style();
    switch (severity) {
    case Severity::Info:
        item->setIcon(1, st->standardIcon(QStyle::SP_MessageBoxInformation));
        break;
    case Severity::Warning:
        item->setIcon(1, st->standardIcon(QStyle::SP_MessageBoxWarning));
        item->setForeground(2, QColor(190, 120, 0));
        break;
    case Severity::Error:
        item->setIcon(1, st->standardIcon(QStyle::SP_MessageBoxCritical));
        item->setForeground(2, QColor(200, 30, 30));
        break;
    }
    list_->addTopLevelItem(item);
    ++counts_[int(severity)];
    applyFilter();
    list_->scrollToItem(item);
    emit messageAdded(severity, message);
}

void LogPanel::clear() {
    list_->clear();
    counts_[0] = counts_[1] = counts_[2] = 0;
}

void LogPanel::applyFilter() {
    const int minimum = filter_->currentIndex(); // 0 all, 1 warnings+, 2 errors
    for (int i = 0; i < list_->topLevelItemCount(); ++i) {
        QTreeWidgetItem* item = list_->topLevelItem(i);
        item->setHidden(item->data(0, kSeverityRole).toInt() < minimum);
    }
}

int LogPanel::count(Severity severity) const {
    return counts_[int(severity)];
}

int LogPanel::messageCount() const {
    return list_->topLevelItemCount();
}

QString LogPanel::message(int row) const {
    return list_->topLevelItem(row)->text(2);
}

Severity LogPanel::severity(int row) const {
    return Severity(list_->topLevelItem(row)->data(0, kSeverityRole).toInt());
}

} // namespace pbd
