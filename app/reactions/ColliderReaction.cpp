#include "app/reactions/ColliderReaction.h"

#include "app/SceneDocument.h"
#include "app/Workbench.h"
#include "app/reactions/PreferencesReaction.h"
#include "core/scenes/Ground.h"
#include "meshing/CharacterImport.h"
#include "meshing/MeshImport.h"
#include "widgets/SceneTreePanel.h"

#include <QAction>
#include <QFileDialog>
#include <QInputDialog>
#include <QLineEdit>
#include <QMainWindow>
#include <QMenu>

namespace pbd {

ColliderReaction::ColliderReaction(Workbench& bench, const PreferencesReaction* preferences,
                                   QObject* parent)
    : QObject(parent)
    , bench_(bench)
    , preferences_(preferences) {
    auto* add = new QMenu(tr("Add &Collider"), bench_.window);
    add->setObjectName(QStringLiteral("menuAddCollider"));
    for (ColliderShape shape : {ColliderShape::Plane, ColliderShape::Sphere, ColliderShape::Box,
                                ColliderShape::Capsule}) {
        const QString name = QString::fromUtf8(toString(shape).data());
        QAction* a = add->addAction(name);
        a->setObjectName(QStringLiteral("actionAddCollider_") + name);
        connect(a, &QAction::triggered, this,
                [this, shape] { bench_.document->addCollider(shape); });
    }
    QAction* mesh = add->addAction(tr("Mesh from File…"));
    mesh->setObjectName(QStringLiteral("actionAddCollider_mesh"));
    connect(mesh, &QAction::triggered, this, [this] {
        QStringList patterns;
        for (const std::string& ext : supportedMeshExtensions()) {
            patterns << QStringLiteral("*") + QString::fromStdString(ext);
        }
        const QString path =
            QFileDialog::getOpenFileName(bench_.window, tr("Mesh Collider"), bench_.lastDirectory,
                                         tr("Meshes (%1)").arg(patterns.join(QLatin1Char(' '))));
        if (!path.isEmpty()) {
            addMeshCollider(path);
        }
    });
    auto* character = new QAction(tr("Add C&haracter…"), bench_.window);
    character->setObjectName(QStringLiteral("actionAddCharacter"));
    character->setToolTip(tr("An animated character (glTF, FBX, Collada, DirectX, ...): its skin "
                             "moves as a collider with the simulation's time"));
    connect(character, &QAction::triggered, this, [this] {
        QStringList patterns;
        for (const std::string& ext : supportedCharacterExtensions()) {
            patterns << QStringLiteral("*") + QString::fromStdString(ext);
        }
        const QString path = QFileDialog::getOpenFileName(
            bench_.window, tr("Add Character"), bench_.lastDirectory,
            tr("Characters (%1)").arg(patterns.join(QLatin1Char(' '))));
        if (path.isEmpty()) {
            return;
        }
        bool ok = false;
        const QString edits = QInputDialog::getText(
            bench_.window, tr("Add Character"),
            tr("Placement and clip, optional (clip=NAME|INDEX|none, up=y|z|-z|x|-x, scale=S,\n"
               "position=X Y Z, start=S, speed=S, end=S, wrap=loop|clamp, subdivide=0-3,\n"
               "friction=MU):"),
            QLineEdit::Normal, QString(), &ok);
        if (!ok) {
            return;
        }
        QString error;
        if (!bench_.document->addCharacter(path, edits, &error)) {
            bench_.reportError(error);
        }
    });
    auto* skirt = new QAction(tr("Add S&kirt…"), bench_.window);
    skirt->setObjectName(QStringLiteral("actionAddSkirt"));
    skirt->setToolTip(tr("A skirt of cloth layers fitted to a character's hips and pinned at "
                         "its waist (add a character first)"));
    connect(skirt, &QAction::triggered, this, [this] {
        bool ok = false;
        const QString edits = QInputDialog::getText(
            bench_.window, tr("Add Skirt"),
            tr("The skirt, optional (character=INDEX, layers=N, waist=HEIGHT m, length=m,\n"
               "gap=m, flare=HEM/WAIST, ease=m, segments=N, rows=N, density=kg/m², "
               "bending=COMPLIANCE,\npin=COMPLIANCE of the waistband, m/N, 0 for hard):"),
            QLineEdit::Normal, QStringLiteral("layers=2, waist=1.0, length=0.45, gap=0.01"), &ok);
        if (!ok) {
            return;
        }
        QString error;
        if (!bench_.document->addSkirt(edits, &error)) {
            bench_.reportError(error);
        }
    });
    auto* remove = new QAction(tr("Remove C&ollider"), bench_.window);
    remove->setObjectName(QStringLiteral("actionRemoveCollider"));
    connect(remove, &QAction::triggered, this, [this] {
        if (bench_.sceneTree->selectedCollider() >= 0) {
            bench_.document->removeCollider(bench_.sceneTree->selectedCollider());
        } else {
            bench_.showStatus(tr("Select a collider in the Scene dock first"));
        }
    });
    ground_ = new QAction(tr("&Ground"), bench_.window);
    ground_->setObjectName(QStringLiteral("actionGround"));
    ground_->setCheckable(true);
    ground_->setShortcut(QKeySequence(Qt::Key_G));
    ground_->setToolTip(tr("A ground under the scene's lowest point, so that it comes to rest in "
                           "view (undoable)"));
    connect(ground_, &QAction::triggered, this, [this](bool on) {
        QString error;
        if (!bench_.document->setGround(on, &error)) {
            bench_.reportError(error);
        }
        syncGround();
    });
    // The tick follows the scene: loads, undo and redo of colliders and of the whole scene.
    for (auto signal : {&SceneDocument::collidersChanged, &SceneDocument::constraintsReplaced}) {
        connect(bench_.document, signal, this, &ColliderReaction::syncGround);
    }
    connect(bench_.document, &SceneDocument::sceneLoaded, this, &ColliderReaction::syncGround);
    actions_ = {add->menuAction(), character, skirt, remove, ground_};
}

void ColliderReaction::syncGround() {
    ground_->setChecked(hasGround(bench_.document->scene()));
}

bool ColliderReaction::addMeshCollider(const QString& path, QString* error) {
    return bench_.document->addMeshCollider(path, preferences_->preferences().unitScale(), error);
}

} // namespace pbd
