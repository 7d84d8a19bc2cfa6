#include "app/reactions/AirReaction.h"

#include "app/SceneDocument.h"
#include "app/Workbench.h"
#include "app/reactions/OpenReaction.h"
#include "widgets/ProgressTask.h"

#include <QAction>
#include <QMainWindow>

namespace pbd {

AirReaction::AirReaction(Workbench& bench, const OpenReaction* open, QObject* parent)
    : QObject(parent)
    , bench_(bench)
    , open_(open) {
    action_ = new QAction(tr("Tessellate the &Air"), bench_.window);
    action_->setObjectName(QStringLiteral("actionAddAir"));
    action_->setToolTip(tr("The air between and around the bodies as tets (Air Meshes), with "
                           "the Prepare dialog's air options"));
    connect(action_, &QAction::triggered, this, [this] { addAirMesh(); });
}

bool AirReaction::addAirMesh(QString* error) {
    if (bench_.preparing) {
        return bench_.fail(tr("Another file is being prepared"), error);
    }
    bench_.preparing = true;
    const bool added = bench_.document->addAirMesh(
        open_->prepareOptions().airOptions,
        [this](const std::function<void(const ProgressCallback&)>& work) {
            runWithProgress(bench_.window, tr("Tessellate the Air"), tr("Tessellating the air"),
                            work);
        },
        error);
    bench_.preparing = false;
    return added;
}

} // namespace pbd
