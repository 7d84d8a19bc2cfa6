#pragma once
// The Scene dock: bodies with their meshes; the check box of a body toggles its visibility.

#include "core/Scene.h"

#include <QTreeWidget>

namespace pbd {

class SceneTreePanel : public QTreeWidget {
    Q_OBJECT
public:
    explicit SceneTreePanel(QWidget* parent = nullptr);

    void setScene(const Scene& scene);
    // Index of the body whose item (or child item) is selected, or -1.
    int selectedBody() const;
    void selectBody(int body);
    QTreeWidgetItem* bodyItem(int body) const;
    // The item of rigid body `index` (under "rigid bodies"), or null.
    QTreeWidgetItem* rigidBodyItem(int index) const;

signals:
    void bodySelected(int body); // -1: the scene itself
    void rigidBodySelected(int index);
    void bodyVisibilityToggled(int body, bool visible);

private:
    bool populating_ = false;
};

} // namespace pbd
