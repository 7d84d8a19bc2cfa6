#pragma once
// The Properties dock: what the selected body (or the whole scene) is made of.

#include "core/Scene.h"

#include <QTableWidget>

namespace pbd {

class PropertiesPanel : public QTableWidget {
    Q_OBJECT
public:
    explicit PropertiesPanel(QWidget* parent = nullptr);

    void showScene(const Scene& scene);
    void showBody(const Scene& scene, int body);
    // A rigid body (§5): motion, shapes, mass and inertia, pose and velocities as shown now.
    void showRigidBody(const Scene& scene, int index);
    // The value shown for a property name, or a null string.
    QString value(const QString& property) const;

private:
    void setRows(const QList<QPair<QString, QString>>& rows);
};

} // namespace pbd
