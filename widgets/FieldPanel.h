#pragma once
// The Simulation dock's display settings: the field the surfaces are coloured by, its colour
// map and range (following the values, locked, or custom), and the clip plane through the tet
// bodies. It holds the user's choices; the scene's view reads them.

#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QSlider;

namespace pbd {

class FieldPanel : public QWidget {
    Q_OBJECT
public:
    explicit FieldPanel(QWidget* parent = nullptr);

    // The selected field's index in kSurfaceFields, its label and its name ("strain_u", ...).
    int fieldIndex() const;
    QString fieldLabel() const;
    // Selects a field by name; false when there is none of that name.
    bool selectField(const QString& name);
    QString colourMap() const;
    void setColourMap(const QString& name);
    bool rangeLocked() const;
    // The custom range, when on and valid (max > min).
    bool customRange(double& lo, double& hi) const;
    // Shows the range in use, to start a custom one from (when the custom range is off).
    void showRange(double lo, double hi);
    bool clipEnabled() const;
    void setClipEnabled(bool on);
    int clipAxis() const;
    // The clip plane's place across the scene's extent along the axis, 0 to 1.
    double clipPosition() const;

signals:
    // The field, its map or its range changed: the surfaces are coloured again.
    void fieldChanged();
    void clipChanged();

private:
    QComboBox* fieldSelector_ = nullptr;
    QCheckBox* lockRange_ = nullptr;
    QComboBox* colourMap_ = nullptr;
    QCheckBox* customRange_ = nullptr;
    QDoubleSpinBox* rangeMin_ = nullptr;
    QDoubleSpinBox* rangeMax_ = nullptr;
    QCheckBox* clipEnabled_ = nullptr;
    QComboBox* clipAxis_ = nullptr;
    QSlider* clipPosition_ = nullptr;
};

} // namespace pbd
