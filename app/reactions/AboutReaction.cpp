#include "app/reactions/AboutReaction.h"

#include "app/Workbench.h"
#include "core/base/Version.h"
#include "core/solver/KernelPaths.h"
#include "meshing/LibraryVersions.h"

#include <QAction>
#include <QMainWindow>
#include <QMessageBox>

#include <vtkVersion.h>

namespace pbd {

AboutReaction::AboutReaction(Workbench& bench, QObject* parent)
    : QObject(parent) {
    action_ = new QAction(tr("&About PBD Lab"), bench.window);
    action_->setObjectName(QStringLiteral("actionAbout"));
    action_->setMenuRole(QAction::AboutRole);
    connect(action_, &QAction::triggered, this, [window = bench.window] {
        QMessageBox::about(
            window, tr("About PBD Lab"),
            tr("<h3>PBD Lab %1</h3>"
               "<p>Authoring and debugging of position-based cloth, soft-body and rigid-body "
               "assets.</p>"
               "<p>Licensed under the GNU AGPL 3.0 or later.</p><p>Built with:<br>%2</p>")
                .arg(QString::fromLatin1(kVersion),
                     libraryVersions().mid(1).join(QStringLiteral("<br>"))));
    });
}

QStringList AboutReaction::libraryVersions() {
    QStringList lines;
    lines << QStringLiteral("PBD Lab %1").arg(QString::fromLatin1(kVersion));
    lines << QStringLiteral("Qt %1").arg(QString::fromLatin1(qVersion()));
    lines << QStringLiteral("VTK %1").arg(QString::fromLatin1(vtkVersion::GetVTKVersion()));
    for (const LibraryVersion& v : meshingLibraryVersions()) {
        lines << QStringLiteral("%1 %2").arg(QString::fromStdString(v.name),
                                             QString::fromStdString(v.version));
    }
    const kernels::KernelPath& path = kernels::kernelPath();
    lines << QStringLiteral("Kernels %1 (%2 lanes; this CPU runs %3)")
                 .arg(QString::fromUtf8(path.name.data(), qsizetype(path.name.size())))
                 .arg(path.lanes)
                 .arg(QString::fromStdString(kernels::kernelPathNames()));
    return lines;
}

} // namespace pbd
