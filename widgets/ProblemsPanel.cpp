#include "widgets/ProblemsPanel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPixmap>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <map>

namespace pbd {

ProblemsPanel::ProblemsPanel(QWidget* parent)
    : QWidget(parent)
    , list_(new QTreeWidget(this))
    , summary_(new QLabel(this))
    , repair_(new QPushButton(tr("&Repair…"), this)) {
    list_->setObjectName(QStringLiteral("problemsList"));
    list_->setColumnCount(3);
    list_->setHeaderLabels({tr("Problem"), tr("Body"), tr("Where")});
    list_->setRootIsDecorated(false);
    list_->setUniformRowHeights(true);
    list_->setAlternatingRowColors(true);
    list_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    list_->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    list_->header()->setStretchLastSection(true);
    summary_->setObjectName(QStringLiteral("problemsSummary"));
    summary_->setWordWrap(true);
    repair_->setObjectName(QStringLiteral("problemsRepair"));
    repair_->setToolTip(tr("Run the repair ladder on the surfaces (Edit ▸ Repair Surfaces…)"));
    connect(repair_, &QPushButton::clicked, this, &ProblemsPanel::repairRequested);
    connect(list_, &QTreeWidget::itemSelectionChanged, this,
            [this] { emit problemSelected(selectedProblem()); });
    auto* top = new QHBoxLayout;
    top->addWidget(summary_, 1);
    top->addWidget(repair_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addWidget(list_);
    setProblems({}, {});
}

QColor problemColor(SurfaceProblem::Kind kind) {
    switch (kind) {
    case SurfaceProblem::Kind::Hole:
        return QColor(250, 210, 40); // yellow border
    case SurfaceProblem::Kind::NonManifoldEdge:
    case SurfaceProblem::Kind::NonManifoldVertex:
        return QColor(230, 60, 230); // magenta
    case SurfaceProblem::Kind::FlippedFaces:
        return QColor(255, 140, 20); // orange
    case SurfaceProblem::Kind::Degenerate:
        return QColor(60, 220, 255); // cyan
    case SurfaceProblem::Kind::SelfIntersection:
    case SurfaceProblem::Kind::BodiesCross:
    case SurfaceProblem::Kind::BodyInside:
        return QColor(230, 30, 30); // red
    }
    return Qt::white;
}

QString countProblemKinds(const std::vector<SurfaceProblem>& problems) {
    std::map<SurfaceProblem::Kind, int> counts;
    for (const SurfaceProblem& p : problems) {
        ++counts[p.kind];
    }
    QStringList parts;
    for (const auto& [kind, n] : counts) {
        parts << QStringLiteral("%1 %2").arg(n).arg(
            QString::fromUtf8(toString(kind).data(), int(toString(kind).size())));
    }
    return parts.join(QStringLiteral(", "));
}

void ProblemsPanel::setProblems(const std::vector<SurfaceProblem>& problems,
                                const std::vector<std::string>& bodies) {
    const QSignalBlocker block(list_);
    list_->clear();
    for (const SurfaceProblem& p : problems) {
        QString text = QString::fromStdString(p.text);
        // The body is its own column: the row says what and where.
        const QString body =
            p.body < bodies.size() ? QString::fromStdString(bodies[p.body]) : QString();
        const QString prefix = QStringLiteral("body '%1': ").arg(body);
        if (text.startsWith(prefix)) {
            text = text.mid(prefix.size());
        }
        auto* item = new QTreeWidgetItem(
            list_,
            {QString::fromUtf8(toString(p.kind).data(), int(toString(p.kind).size())), body, text});
        QPixmap swatch(10, 10);
        swatch.fill(problemColor(p.kind));
        item->setIcon(0, QIcon(swatch));
        item->setToolTip(2, QString::fromStdString(p.text));
    }
    summary_->setText(problems.empty() ? tr("No problems found in the open surfaces.")
                                       : tr("%1 problem(s): %2. Select one to frame it.")
                                             .arg(problems.size())
                                             .arg(countProblemKinds(problems)));
    repair_->setEnabled(!problems.empty());
}

int ProblemsPanel::count() const {
    return list_->topLevelItemCount();
}

QString ProblemsPanel::text(int row) const {
    QTreeWidgetItem* item = list_->topLevelItem(row);
    return item != nullptr ? item->toolTip(2) : QString();
}

void ProblemsPanel::selectProblem(int row) {
    list_->clearSelection();
    if (QTreeWidgetItem* item = list_->topLevelItem(row)) {
        item->setSelected(true);
        list_->scrollToItem(item);
    }
}

int ProblemsPanel::selectedProblem() const {
    const auto items = list_->selectedItems();
    return items.isEmpty() ? -1 : list_->indexOfTopLevelItem(items.front());
}

} // namespace pbd
