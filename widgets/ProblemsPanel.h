#pragma once
// The Problems dock: where the open surfaces are broken (meshing/SurfaceProblems.h), one row
// per hole, non-manifold edge or vertex, flipped faces, degenerate triangle or crossing pair,
// in the colour the view draws it in. Selecting a row asks the view to highlight and frame it;
// the Repair… button runs the repair ladder.

#include "meshing/SurfaceProblems.h"

#include <QColor>
#include <QWidget>

class QLabel;
class QPushButton;
class QTreeWidget;

namespace pbd {

// The colour each kind of problem is drawn in (the view and the rows agree).
QColor problemColor(SurfaceProblem::Kind kind);
// "3 hole, 9 self-intersection": how many of each kind; empty for none.
QString countProblemKinds(const std::vector<SurfaceProblem>& problems);

class ProblemsPanel : public QWidget {
    Q_OBJECT
public:
    explicit ProblemsPanel(QWidget* parent = nullptr);

    // `bodies`: the scene's body names, for the Where column.
    void setProblems(const std::vector<SurfaceProblem>& problems,
                     const std::vector<std::string>& bodies);
    int count() const;
    QString text(int row) const;
    void selectProblem(int row);
    int selectedProblem() const; // -1: none
    QPushButton* repairButton() const { return repair_; }

signals:
    void problemSelected(int row); // -1: the selection was cleared
    void repairRequested();

private:
    QTreeWidget* list_;
    QLabel* summary_;
    QPushButton* repair_;
};

} // namespace pbd
