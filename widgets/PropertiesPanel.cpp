#include "widgets/PropertiesPanel.h"

#include "core/scene/Mass.h"

#include <QHeaderView>

#include <cmath>
#include <limits>
#include <numbers>

namespace pbd {

QString PropertiesPanel::formatVector(const Vec3& v) {
    return QStringLiteral("%1, %2, %3")
        .arg(v.x(), 0, 'g', 4)
        .arg(v.y(), 0, 'g', 4)
        .arg(v.z(), 0, 'g', 4);
}

namespace {

QString formatBounds(const Bounds& b) {
    return b.empty() ? QStringLiteral("empty")
                     : QStringLiteral("%1 m").arg(PropertiesPanel::formatVector(b.size()));
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
    // Only a group's values are editable (their items say so).
    setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed |
                    QAbstractItemView::AnyKeyPressed);
    setSelectionBehavior(QAbstractItemView::SelectRows);
    connect(this, &QTableWidget::itemChanged, this, &PropertiesPanel::groupItemChanged);
}

namespace {

// What a group row's value edits: kind * 16 + component.
enum GroupField { kName = 1, kEnabled, kMaterial, kPbd, kRest, kPressure, kBendingModel };

QString text(std::string_view s) {
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

QString formatMaterial(Real v, bool modulus) {
    if (std::isinf(v)) {
        return QStringLiteral("rigid");
    }
    if (!modulus && v == 0) {
        return QStringLiteral("0 (hard)");
    }
    return QString::number(v, 'g', 6);
}

QString restAxis(ConstraintType type, int k) {
    return type == ConstraintType::StrainTriangle ? QStringList{"u", "v"}.value(k)
                                                  : QStringList{"x", "y", "z"}.value(k);
}

} // namespace

std::optional<Real> PropertiesPanel::parseMaterial(const QString& typed, bool modulus) {
    QString t = typed.trimmed().toLower();
    if (t.endsWith(QStringLiteral("(hard)"))) {
        t = t.chopped(6).trimmed();
    }
    if (modulus && (t == QStringLiteral("rigid") || t == QStringLiteral("inf") ||
                    t == QStringLiteral("infinity") || t == QStringLiteral("∞"))) {
        return std::numeric_limits<Real>::infinity();
    }
    bool ok = false;
    const double v = t.toDouble(&ok);
    if (!ok || !std::isfinite(v) || v < 0) {
        return std::nullopt;
    }
    return v;
}

void PropertiesPanel::showGroup(const Scene& scene, int index) {
    if (index < 0 || std::size_t(index) >= scene.constraintGroups.size()) {
        showScene(scene);
        return;
    }
    const ConstraintGroup& g = scene.constraintGroups[std::size_t(index)];
    const bool modulus = materialIsModulus(g.type);
    const QString unit = text(materialUnit(g.type));
    QList<QPair<QString, QString>> rows;
    QList<int> fields;
    auto row = [&](const QString& name, const QString& value, int field = 0) {
        rows.append({name, value});
        fields.append(field);
    };
    row(tr("Group"), QString::fromStdString(g.name), kName * 16);
    row(tr("Type"), text(toString(g.type)));
    row(tr("Body"), g.body >= 0 && std::size_t(g.body) < scene.bodies.size()
                        ? QString::fromStdString(scene.bodies[std::size_t(g.body)].name)
                        : tr("(the scene)"));
    row(tr("Constraints"), QString::number(constraintGroupSize(scene.constraints, index)));
    row(tr("Enabled"), g.enabled ? tr("yes") : tr("no"), kEnabled * 16);
    const int K = materialComponents(g.type);
    for (int k = 0; k < K; ++k) {
        const QString component = text(materialComponentName(g.type, k));
        const QString name = K == 1 ? (modulus ? tr("Modulus") : tr("Compliance"))
                                    : component.left(1).toUpper() + component.mid(1);
        row(QStringLiteral("%1 (%2)").arg(name, unit), formatMaterial(g.material[k], modulus),
            kMaterial * 16 + k);
    }
    for (int k = 0; k < K; ++k) {
        const QString component = text(materialComponentName(g.type, k));
        row(K == 1 ? tr("PBD stiffness") : tr("PBD stiffness %1").arg(component),
            QString::number(g.pbdStiffness[k], 'g', 6), kPbd * 16 + k);
    }
    for (int k = 0; k < restStretchComponents(g.type); ++k) {
        row(tr("Rest stretch %1").arg(restAxis(g.type, k)),
            QString::number(g.restStretch[k], 'g', 6), kRest * 16 + k);
    }
    if (g.type == ConstraintType::Pressure) {
        row(tr("Pressure k"), QString::number(g.pressure, 'g', 6), kPressure * 16);
    }
    if (g.type == ConstraintType::DihedralBending) {
        row(tr("Bending model (all bending)"), text(toString(scene.constraints.bending.model)),
            kBendingModel * 16);
    }
    setRows(rows);
    populating_ = true;
    for (int r = 0; r < rows.size(); ++r) {
        QTableWidgetItem* value = item(r, 1);
        value->setData(Qt::UserRole, fields[r]);
        if (fields[r] == kEnabled * 16) {
            value->setText(QString());
            value->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable);
            value->setCheckState(g.enabled ? Qt::Checked : Qt::Unchecked);
        } else if (fields[r] != 0) {
            value->setFlags(value->flags() | Qt::ItemIsEditable);
            value->setToolTip(tr("Double-click or F2 to edit"));
        }
    }
    populating_ = false;
    group_ = index;
    shown_ = g;
    bendingModel_ = scene.constraints.bending.model;
}

void PropertiesPanel::showCollider(const Scene& scene, int index) {
    if (index < 0 || std::size_t(index) >= scene.colliders.size()) {
        showScene(scene);
        return;
    }
    const Collider& c = scene.colliders[std::size_t(index)];
    QList<QPair<QString, QString>> rows;
    QStringList keys; // the editCollider key a row edits, empty: read-only
    auto row = [&](const QString& name, const QString& value, const QString& key = {}) {
        rows.append({name, value});
        keys.append(key);
    };
    auto vector = [](const Vec3& v) {
        return QStringLiteral("%1 %2 %3")
            .arg(v.x(), 0, 'g', 10)
            .arg(v.y(), 0, 'g', 10)
            .arg(v.z(), 0, 'g', 10);
    };
    row(tr("Collider"), QString::fromStdString(c.name), QStringLiteral("name"));
    row(tr("Shape"), text(toString(c.shape)));
    row(tr("Position (m)"), vector(colliderPosition(c)), QStringLiteral("position"));
    switch (c.shape) {
    case ColliderShape::Plane:
        row(tr("Normal"), vector(c.normal), QStringLiteral("normal"));
        break;
    case ColliderShape::Sphere:
        row(tr("Radius (m)"), QString::number(c.radius, 'g', 10), QStringLiteral("radius"));
        break;
    case ColliderShape::Box:
        row(tr("Half extents (m)"), vector(c.halfExtents), QStringLiteral("half_extents"));
        row(tr("Rotation (°)"), vector(eulerAnglesOf(c.rotation) * (180 / std::numbers::pi)),
            QStringLiteral("rotation"));
        break;
    case ColliderShape::Capsule:
        row(tr("End a (m)"), vector(c.a), QStringLiteral("a"));
        row(tr("End b (m)"), vector(c.b), QStringLiteral("b"));
        row(tr("Radius (m)"), QString::number(c.radius, 'g', 10), QStringLiteral("radius"));
        break;
    case ColliderShape::Mesh:
        row(tr("Vertices"), QString::number(c.vertices.size()));
        row(tr("Triangles"), QString::number(c.triangles.size()));
        break;
    }
    row(tr("Friction"), QString::number(c.friction, 'g', 10), QStringLiteral("friction"));
    row(tr("Restitution"), QString::number(c.restitution, 'g', 10), QStringLiteral("restitution"));
    setRows(rows);
    populating_ = true;
    for (int r = 0; r < rows.size(); ++r) {
        if (!keys[r].isEmpty()) {
            QTableWidgetItem* value = item(r, 1);
            value->setData(Qt::UserRole + 1, keys[r]);
            value->setData(Qt::UserRole + 2, rows[r].second); // shown again when refused
            value->setFlags(value->flags() | Qt::ItemIsEditable);
            value->setToolTip(tr("Double-click or F2 to edit"));
        }
    }
    populating_ = false;
    collider_ = index;
    shownCollider_ = c;
}

void PropertiesPanel::colliderItemChanged(QTableWidgetItem* changed) {
    const QString key = changed->data(Qt::UserRole + 1).toString();
    if (key.isEmpty()) {
        return;
    }
    QString typed = changed->text().trimmed();
    if (key != QLatin1String("name")) {
        typed.replace(QLatin1Char(','), QLatin1Char(' ')); // "0, 1, 0" as well as "0 1 0"
    } else if (typed.contains(QLatin1Char(','))) {
        typed.clear(); // a comma would start another edit
    }
    Result<Collider> edited =
        editCollider(shownCollider_, (key + QLatin1Char('=') + typed).toStdString());
    if (!edited) {
        populating_ = true;
        changed->setText(changed->data(Qt::UserRole + 2).toString());
        populating_ = false;
        emit editRejected(QString::fromStdString(edited.error()));
        return;
    }
    emit colliderEdited(collider_, edited.value());
}

void PropertiesPanel::showSelfCollision(const Scene& scene) {
    setRows({{tr("Self-collision"), tr("cloth against itself, other cloth and soft-body surfaces")},
             {tr("Enabled"), QString()},
             {tr("Cloth thickness (m)"), QString::number(scene.solver.clothThickness, 'g', 10)}});
    populating_ = true;
    QTableWidgetItem* enabled = item(1, 1);
    enabled->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable);
    enabled->setCheckState(scene.solver.selfCollision ? Qt::Checked : Qt::Unchecked);
    QTableWidgetItem* thickness = item(2, 1);
    thickness->setFlags(thickness->flags() | Qt::ItemIsEditable);
    thickness->setToolTip(tr("The distance cloth keeps from itself; double-click or F2 to edit"));
    populating_ = false;
    selfCollision_ = true;
    selfCollisionOn_ = scene.solver.selfCollision;
    thickness_ = scene.solver.clothThickness;
}

void PropertiesPanel::groupItemChanged(QTableWidgetItem* changed) {
    if (!populating_ && selfCollision_ && changed->column() == 1) {
        if (changed->row() == 1) {
            emit selfCollisionEdited(changed->checkState() == Qt::Checked, thickness_);
            return;
        }
        bool ok = false;
        const QString typed = changed->text();
        const double thickness = typed.trimmed().toDouble(&ok);
        if (!ok || !(thickness > 0) || !std::isfinite(thickness)) {
            populating_ = true;
            changed->setText(QString::number(thickness_, 'g', 10));
            populating_ = false;
            emit editRejected(
                tr("'%1' is not a thickness: type a number of metres > 0").arg(typed));
            return;
        }
        emit selfCollisionEdited(selfCollisionOn_, thickness);
        return;
    }
    if (!populating_ && body_ >= 0 && changed->column() == 1) {
        bool ok = false;
        const QString typed = changed->text();
        const double density = typed.trimmed().toDouble(&ok);
        if (!ok || !(density > 0) || !std::isfinite(density)) {
            populating_ = true;
            changed->setText(densityText_);
            populating_ = false;
            emit editRejected(tr("'%1' is not a density: type a number > 0").arg(typed));
            return;
        }
        emit densityEdited(body_, density);
        return;
    }
    if (!populating_ && collider_ >= 0 && changed->column() == 1) {
        colliderItemChanged(changed);
        return;
    }
    if (populating_ || group_ < 0 || changed->column() != 1) {
        return;
    }
    const int field = changed->data(Qt::UserRole).toInt();
    const int kind = field / 16;
    const int k = field % 16;
    ConstraintGroup after = shown_;
    QString problem;
    const QString typed = changed->text();
    bool ok = false;
    const double number = typed.trimmed().toDouble(&ok);
    if (kind == kBendingModel) {
        const QString name = typed.trimmed().toLower().replace(QLatin1Char(' '), QLatin1Char('-'));
        if (const auto model = bendingModelFromString(name.toStdString())) {
            emit bendingModelEdited(*model);
        } else {
            populating_ = true;
            changed->setText(text(toString(bendingModel_)));
            populating_ = false;
            emit editRejected(tr("'%1' is not a bending model: type bridson, pbd-appendix or "
                                 "isometric")
                                  .arg(typed));
        }
        return;
    }
    switch (kind) {
    case kName:
        if (typed.trimmed().isEmpty()) {
            problem = tr("A constraint group needs a name");
        } else {
            after.name = typed.trimmed().toStdString();
        }
        break;
    case kEnabled:
        after.enabled = changed->checkState() == Qt::Checked;
        break;
    case kMaterial:
        if (const auto v = parseMaterial(typed, materialIsModulus(after.type))) {
            after.material[k] = *v;
        } else {
            problem =
                materialIsModulus(after.type)
                    ? tr("'%1' is not a modulus: type a number >= 0 (0 = no stiffness) "
                         "or 'rigid'")
                          .arg(typed)
                    : tr("'%1' is not a compliance: type a number >= 0 (0 = hard)").arg(typed);
        }
        break;
    case kPbd:
        if (ok && number >= 0 && number <= 1) {
            after.pbdStiffness[k] = number;
        } else {
            problem = tr("'%1' is not a PBD stiffness: type a number from 0 to 1").arg(typed);
        }
        break;
    case kRest:
        if (ok && number > 0 && std::isfinite(number)) {
            after.restStretch[k] = number;
        } else {
            problem =
                tr("'%1' is not a rest stretch: type a number > 0 (1 = the rest shape)").arg(typed);
        }
        break;
    case kPressure:
        if (ok && number > 0 && std::isfinite(number)) {
            after.pressure = number;
        } else {
            problem = tr("'%1' is not a pressure: type a number > 0 (1 keeps the rest volume)")
                          .arg(typed);
        }
        break;
    default:
        return;
    }
    if (!problem.isEmpty()) {
        // Back to the value the group has.
        populating_ = true;
        if (kind == kMaterial) {
            changed->setText(formatMaterial(shown_.material[k], materialIsModulus(shown_.type)));
        } else if (kind == kPbd) {
            changed->setText(QString::number(shown_.pbdStiffness[k], 'g', 6));
        } else if (kind == kRest) {
            changed->setText(QString::number(shown_.restStretch[k], 'g', 6));
        } else if (kind == kPressure) {
            changed->setText(QString::number(shown_.pressure, 'g', 6));
        } else {
            changed->setText(QString::fromStdString(shown_.name));
        }
        populating_ = false;
        emit editRejected(problem);
        return;
    }
    if (after == shown_) {
        return;
    }
    emit groupEdited(group_, after);
}

int PropertiesPanel::rowOf(const QString& property) const {
    for (int r = 0; r < rowCount(); ++r) {
        if (item(r, 0)->text() == property) {
            return r;
        }
    }
    return -1;
}

void PropertiesPanel::setRows(const QList<QPair<QString, QString>>& rows) {
    populating_ = true;
    group_ = -1;
    collider_ = -1;
    body_ = -1;
    selfCollision_ = false;
    setRowCount(int(rows.size()));
    for (int r = 0; r < rows.size(); ++r) {
        setItem(r, 0, new QTableWidgetItem(rows[r].first));
        auto* value = new QTableWidgetItem(rows[r].second);
        value->setFlags(value->flags() & ~Qt::ItemIsEditable);
        item(r, 0)->setFlags(item(r, 0)->flags() & ~Qt::ItemIsEditable);
        setItem(r, 1, value);
    }
    populating_ = false;
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
    QList<QPair<QString, QString>> rows{
        {tr("Body"), QString::fromStdString(body.name)},
        {tr("Kind"), QString::fromUtf8(toString(body.kind).data(), toString(body.kind).size())},
        {tr("Particles"), QString::number(body.particleCount)},
        {tr("Triangles"), QString::number(body.triangles.size())},
        {tr("Tetrahedra"), QString::number(body.tets.size())},
        {tr("UVs"), body.hasUVs() ? tr("per triangle corner") : tr("none")},
        {tr("Mass"), QStringLiteral("%1 kg").arg(totalMass(scene.particles, body), 0, 'g', 4)},
        {tr("Centre"),
         b.empty() ? QString() : QStringLiteral("%1 m").arg(formatVector(b.center()))},
        {tr("Size"), formatBounds(b)}};
    const bool tets = body.kind == BodyKind::TetBody && !body.tets.empty();
    const bool sheet = body.kind == BodyKind::Cloth && !body.triangles.empty();
    const Real density = tets || sheet ? bodyDensity(scene.particles, body) : Real(0);
    const bool editable = (tets || sheet) && std::isfinite(density);
    if (editable) {
        densityText_ = QString::number(density, 'g', 6);
        rows.append({tets ? tr("Density (kg/m³)") : tr("Mass per area (kg/m²)"), densityText_});
    }
    setRows(rows);
    if (editable) {
        populating_ = true;
        QTableWidgetItem* value = item(int(rows.size()) - 1, 1);
        value->setFlags(value->flags() | Qt::ItemIsEditable);
        value->setToolTip(tr("Double-click or F2 to edit: the masses are lumped again from it "
                             "(pinned particles stay pinned)"));
        populating_ = false;
        body_ = index;
    }
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
