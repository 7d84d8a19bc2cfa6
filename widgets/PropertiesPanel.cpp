#include "widgets/PropertiesPanel.h"

#include "core/Mass.h"

#include <QHeaderView>

namespace pbd {

namespace {

QString formatVector(const Vec3& v) {
    return QStringLiteral("%1, %2, %3")
        .arg(v.x(), 0, 'g', 4)
        .arg(v.y(), 0, 'g', 4)
        .arg(v.z(), 0, 'g', 4);
}

QString formatBounds(const Bounds& b) {
    return b.empty() ? QStringLiteral("empty") : QStringLiteral("%1 m").arg(formatVector(b.size()));
}

} // namespace

PropertiesPanel::PropertiesPanel(QWidget* parent)
    : QTableWidget(0, 2, parent) {
    setObjectName(QStringLiteral("properties"));
    setHorizontalHeaderLabels({tr("Property"), tr("Value")});
    horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    horizontalHeader()->setStretchLastSection(true);
    verticalHeader()->hide();
    verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    setWordWrap(false);
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setSelectionBehavior(QAbstractItemView::SelectRows);
}

void PropertiesPanel::setRows(const QList<QPair<QString, QString>>& rows) {
    setRowCount(int(rows.size()));
    for (int r = 0; r < rows.size(); ++r) {
        setItem(r, 0, new QTableWidgetItem(rows[r].first));
        setItem(r, 1, new QTableWidgetItem(rows[r].second));
    }
}

void PropertiesPanel::showScene(const Scene& scene) {
    setRows({{tr("Scene"), QString::fromStdString(scene.name)},
             {tr("Description"), QString::fromStdString(scene.description)},
             {tr("Bodies"), QString::number(scene.bodies.size())},
             {tr("Particles"), QString::number(scene.particles.size())},
             {tr("Triangles"), QString::number(scene.triangleCount())},
             {tr("Tetrahedra"), QString::number(scene.tetCount())},
             {tr("Size"), formatBounds(scene.bounds())}});
}

void PropertiesPanel::showBody(const Scene& scene, int index) {
    if (index < 0 || std::size_t(index) >= scene.bodies.size()) {
        showScene(scene);
        return;
    }
    const Body& body = scene.bodies[std::size_t(index)];
    const Bounds b = scene.bounds(body);
    setRows(
        {{tr("Body"), QString::fromStdString(body.name)},
         {tr("Kind"), QString::fromUtf8(toString(body.kind).data(), toString(body.kind).size())},
         {tr("Particles"), QString::number(body.particleCount)},
         {tr("Triangles"), QString::number(body.triangles.size())},
         {tr("Tetrahedra"), QString::number(body.tets.size())},
         {tr("UVs"), body.hasUVs() ? tr("per triangle corner") : tr("none")},
         {tr("Mass"), QStringLiteral("%1 kg").arg(totalMass(scene.particles, body), 0, 'g', 4)},
         {tr("Centre"),
          b.empty() ? QString() : QStringLiteral("%1 m").arg(formatVector(b.center()))},
         {tr("Size"), formatBounds(b)}});
}

void PropertiesPanel::showRigidBody(const Scene& scene, int index) {
    if (index < 0 || std::size_t(index) >= scene.rigidBodies.size()) {
        showScene(scene);
        return;
    }
    const RigidBody& b = scene.rigidBodies[std::size_t(index)];
    QStringList shapes;
    for (const RigidShape& s : b.shapes) {
        shapes << QString::fromUtf8(toString(s.type).data(), toString(s.type).size());
    }
    const Vec3 inertia = b.inertiaBody.diagonal();
    const Eigen::AngleAxisd turn(b.q);
    setRows(
        {{tr("Rigid body"), QString::fromStdString(b.name)},
         {tr("Motion"), QString::fromUtf8(toString(b.motion).data(), toString(b.motion).size())},
         {tr("Shapes"), shapes.join(QStringLiteral(" + "))},
         {tr("Mass"), QStringLiteral("%1 kg").arg(b.mass, 0, 'g', 4)},
         {tr("Inertia I'"), QStringLiteral("%1 kg m²").arg(formatVector(inertia))},
         {tr("Friction"), QString::number(b.friction)},
         {tr("Position"), QStringLiteral("%1 m").arg(formatVector(b.x))},
         {tr("Rotation"), QStringLiteral("%1° about %2")
                              .arg(turn.angle() * 180.0 / M_PI, 0, 'f', 1)
                              .arg(formatVector(turn.axis()))},
         {tr("Velocity"), QStringLiteral("%1 m/s").arg(formatVector(b.v))},
         {tr("Angular velocity"), QStringLiteral("%1 rad/s").arg(formatVector(b.omega))},
         {tr("Sleeping"), b.sleeping ? tr("yes") : tr("no")}});
}

QString PropertiesPanel::value(const QString& property) const {
    for (int r = 0; r < rowCount(); ++r) {
        if (item(r, 0)->text() == property) {
            return item(r, 1)->text();
        }
    }
    return {};
}

} // namespace pbd
