#pragma once
// Where the open surfaces are broken, and mending them: the Problems dock lists each problem
// (meshing/SurfaceProblems.h), the view draws them on the mesh, selecting one highlights and
// frames it; Edit ▸ Repair Surfaces… runs the repair ladder with its options on its own thread
// (progress, Cancel), as one undoable edit, and says what it found before and after.

#include "meshing/Prepare.h"
#include "meshing/SurfaceProblems.h"
#include "meshing/SurfaceRepair.h"

#include <QObject>

class QAction;

namespace pbd {

class OpenReaction;
struct Workbench;

class RepairReaction : public QObject {
    Q_OBJECT
public:
    RepairReaction(Workbench& bench, OpenReaction* open, QObject* parent);
    QAction* action() const { return action_; }
    QAction* prepareAction() const { return prepare_; }

    // Lists and draws `problems` of the document's scene (empty clears them).
    void showProblems(std::vector<SurfaceProblem> problems);
    // Checks the document's surfaces and shows what it finds.
    void findProblems();
    const std::vector<SurfaceProblem>& problems() const { return problems_; }
    // Highlights problem `index` and frames the view on it (-1: none).
    void selectProblem(int index);

    // The ladder with these choices on the scene's surfaces, one undoable edit. `summary` gets
    // the problems before and after and what each rung did. Refused (false, *error) when the
    // scene has tets, constraints or air, or nothing is broken.
    bool repair(const RepairOptions& options, OverlapMode overlaps, QString* summary = nullptr,
                QString* error = nullptr);
    // The dialog, the repair, and a message with the summary.
    void repairInteractive();

    // Edit ▸ Prepare the Surfaces…: the open surfaces (after a repair, say) through the prepare
    // pipeline with `options` (tets, air, frames, constraints), one undoable edit.
    bool prepareSurfaces(const PrepareOptions& options, QString* error = nullptr);
    void prepareInteractive();

private:
    Workbench& bench_;
    OpenReaction* open_;
    QAction* action_ = nullptr;
    QAction* prepare_ = nullptr;
    std::vector<SurfaceProblem> problems_;
    bool repairing_ = false; // the repair's own scene load keeps the problems it found
    bool tracking_ = false;  // problems were shown for these surfaces: undo and redo re-check
};

} // namespace pbd
