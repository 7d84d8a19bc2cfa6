#include "widgets/RigidActors.h"

#include "widgets/SceneActors.h"

#include <vtkActor.h>
#include <vtkAppendPolyData.h>
#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkCubeSource.h>
#include <vtkDoubleArray.h>
#include <vtkLineSource.h>
#include <vtkLookupTable.h>
#include <vtkMatrix4x4.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkProperty.h>
#include <vtkRenderer.h>
#include <vtkScalarBarActor.h>
#include <vtkSphereSource.h>
#include <vtkTextProperty.h>
#include <vtkTubeFilter.h>
#include <vtkUnsignedCharArray.h>

#include <algorithm>

namespace pbd {

namespace {

vtkSmartPointer<vtkPolyData> shapeSurface(const RigidShape& s) {
    vtkSmartPointer<vtkPolyData> out = vtkSmartPointer<vtkPolyData>::New();
    switch (s.type) {
    case RigidShapeType::Sphere: {
        vtkNew<vtkSphereSource> sphere;
        sphere->SetRadius(s.radius);
        sphere->SetThetaResolution(32);
        sphere->SetPhiResolution(16);
        sphere->Update();
        out->DeepCopy(sphere->GetOutput());
        break;
    }
    case RigidShapeType::Capsule: {
        vtkNew<vtkLineSource> line;
        line->SetPoint1(0, -s.halfHeight, 0);
        line->SetPoint2(0, s.halfHeight, 0);
        vtkNew<vtkTubeFilter> tube;
        tube->SetInputConnection(line->GetOutputPort());
        tube->SetRadius(s.radius);
        tube->SetNumberOfSides(24);
        tube->CappingOff();
        vtkNew<vtkAppendPolyData> all;
        all->AddInputConnection(tube->GetOutputPort());
        for (const double y : {-s.halfHeight, s.halfHeight}) {
            vtkNew<vtkSphereSource> cap;
            cap->SetCenter(0, y, 0);
            cap->SetRadius(s.radius);
            cap->SetThetaResolution(24);
            cap->SetPhiResolution(12);
            cap->Update();
            all->AddInputData(cap->GetOutput());
        }
        all->Update();
        out->DeepCopy(all->GetOutput());
        break;
    }
    case RigidShapeType::Box: {
        vtkNew<vtkCubeSource> box;
        box->SetXLength(2 * s.halfExtents.x());
        box->SetYLength(2 * s.halfExtents.y());
        box->SetZLength(2 * s.halfExtents.z());
        box->Update();
        out->DeepCopy(box->GetOutput());
        break;
    }
    case RigidShapeType::Hull: {
        vtkNew<vtkPoints> points;
        for (const Vec3& v : s.polyhedron->vertices) {
            points->InsertNextPoint(v.data());
        }
        vtkNew<vtkCellArray> polys;
        for (const std::vector<int>& f : s.polyhedron->faces) {
            polys->InsertNextCell(vtkIdType(f.size()));
            for (int i : f) {
                polys->InsertCellPoint(i);
            }
        }
        out->SetPoints(points);
        out->SetPolys(polys);
        break;
    }
    }
    // Into the body frame.
    vtkPoints* pts = out->GetPoints();
    for (vtkIdType i = 0; pts && i < pts->GetNumberOfPoints(); ++i) {
        double p[3];
        pts->GetPoint(i, p);
        const Vec3 w = s.position + s.rotation * Vec3(p[0], p[1], p[2]);
        pts->SetPoint(i, w.data());
    }
    out->GetPointData()->SetNormals(nullptr);
    return out;
}

void setPose(vtkActor* actor, const RigidBody& b) {
    vtkMatrix4x4* m = actor->GetUserMatrix();
    if (!m) {
        vtkNew<vtkMatrix4x4> fresh;
        actor->SetUserMatrix(fresh);
        m = actor->GetUserMatrix();
    }
    const Mat3 R = b.rotation();
    for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) {
            m->SetElement(r, c, R(r, c));
        }
        m->SetElement(r, 3, b.x[r]);
    }
    m->Modified();
}

void setColour(vtkActor* actor, const QColor& c) {
    actor->GetProperty()->SetColor(c.redF(), c.greenF(), c.blueF());
}

} // namespace

vtkSmartPointer<vtkPolyData> rigidBodySurface(const RigidBody& body) {
    vtkNew<vtkAppendPolyData> all;
    for (const RigidShape& s : body.shapes) {
        all->AddInputData(shapeSurface(s));
    }
    all->Update();
    vtkSmartPointer<vtkPolyData> out = vtkSmartPointer<vtkPolyData>::New();
    out->DeepCopy(all->GetOutput());
    return out;
}

RigidActors::RigidActors(vtkRenderer* renderer)
    : renderer_(renderer) {}

RigidActors::~RigidActors() {
    clear();
}

QColor RigidActors::colourFor(RigidMotion motion, bool sleeping) {
    switch (motion) {
    case RigidMotion::Static:
        return QColor(150, 150, 150);
    case RigidMotion::Kinematic:
        return QColor(80, 170, 170);
    case RigidMotion::Dynamic:
        break;
    }
    // Awake: a steel blue unlike the cloth's orange; asleep: dimmed and greyed.
    return sleeping ? QColor(95, 105, 135) : QColor(100, 155, 215);
}

QColor RigidActors::bodyColour(std::size_t body) const {
    double rgb[3];
    bodies_.at(body)->GetProperty()->GetColor(rgb);
    return QColor::fromRgbF(float(rgb[0]), float(rgb[1]), float(rgb[2]));
}

void RigidActors::clear() {
    for (auto& a : bodies_) {
        renderer_->RemoveActor(a);
    }
    bodies_.clear();
    sleeping_.clear();
    motions_.clear();
    for (vtkActor* a : {contactActor_.Get(), jointActor_.Get()}) {
        if (a) {
            renderer_->RemoveActor(a);
        }
    }
    if (forceBar_) {
        renderer_->RemoveViewProp(forceBar_);
    }
    contactActor_ = jointActor_ = nullptr;
    contactLines_ = jointLines_ = nullptr;
    forceBar_ = nullptr;
    forceColours_ = nullptr;
}

void RigidActors::setScene(const Scene& scene) {
    clear();
    if (scene.rigidBodies.empty()) {
        return;
    }
    Real size = 0;
    std::size_t moving = 0;
    for (const RigidBody& b : scene.rigidBodies) {
        vtkNew<vtkPolyDataMapper> mapper;
        mapper->SetInputData(rigidBodySurface(b));
        mapper->ScalarVisibilityOff();
        auto actor = vtkSmartPointer<vtkActor>::New();
        actor->SetMapper(mapper);
        actor->GetProperty()->SetAmbient(0.2);
        actor->GetProperty()->SetDiffuse(0.8);
        actor->GetProperty()->SetSpecular(0.2);
        actor->PickableOff();
        // A static ground does not set the camera's framing (Reset Camera shows the bodies).
        actor->SetUseBounds(b.motion != RigidMotion::Static);
        setColour(actor, colourFor(b.motion, b.sleeping));
        setPose(actor, b);
        renderer_->AddActor(actor);
        bodies_.push_back(actor);
        sleeping_.push_back(b.sleeping);
        motions_.push_back(b.motion);
        if (b.motion != RigidMotion::Static) {
            for (const RigidShape& s : b.shapes) {
                size += s.boundingRadius();
                ++moving;
            }
        }
    }
    glyphLength_ = moving > 0 ? 0.5 * size / Real(moving) : 0.25;

    forceColours_ = vtkSmartPointer<vtkLookupTable>::New();
    forceColours_->SetHueRange(0.66, 0.0); // blue (light) to red (heavy)
    forceColours_->SetNumberOfTableValues(256);
    forceColours_->Build();
    contactLines_ = vtkSmartPointer<vtkPolyData>::New();
    vtkNew<vtkPolyDataMapper> contactMapper;
    contactMapper->SetInputData(contactLines_);
    contactMapper->SetLookupTable(forceColours_);
    contactMapper->SetScalarModeToUseCellData();
    contactMapper->ScalarVisibilityOn();
    contactActor_ = vtkSmartPointer<vtkActor>::New();
    contactActor_->SetMapper(contactMapper);
    contactActor_->GetProperty()->SetLineWidth(3);
    contactActor_->GetProperty()->SetPointSize(6);
    contactActor_->GetProperty()->SetRenderPointsAsSpheres(true);
    contactActor_->PickableOff();
    renderer_->AddActor(contactActor_);

    jointLines_ = vtkSmartPointer<vtkPolyData>::New();
    vtkNew<vtkPolyDataMapper> jointMapper;
    jointMapper->SetInputData(jointLines_);
    jointMapper->SetScalarModeToUseCellData();
    jointMapper->SetColorModeToDirectScalars();
    jointActor_ = vtkSmartPointer<vtkActor>::New();
    jointActor_->SetMapper(jointMapper);
    jointActor_->GetProperty()->SetLineWidth(3);
    jointActor_->PickableOff();
    renderer_->AddActor(jointActor_);

    forceBar_ = vtkSmartPointer<vtkScalarBarActor>::New();
    forceBar_->SetLookupTable(forceColours_);
    forceBar_->SetTitle("contact force (N)");
    forceBar_->SetNumberOfLabels(4);
    forceBar_->SetLabelFormat("%-.3g");
    forceBar_->SetMaximumWidthInPixels(90);
    forceBar_->GetPositionCoordinate()->SetValue(0.05, 0.3); // title whole, over the axes
    forceBar_->SetWidth(0.08);
    forceBar_->SetHeight(0.55);
    // Fonts as the field's bar has them (VTK otherwise scales them with the bar).
    forceBar_->SetUnconstrainedFontSize(true);
    forceBar_->GetTitleTextProperty()->SetFontSize(12);
    forceBar_->GetLabelTextProperty()->SetFontSize(11);
    renderer_->AddViewProp(forceBar_);
    update(scene, {}, scene.solver.timeStep / std::max(1, scene.solver.substeps));
}

void RigidActors::setContactsShown(bool shown) {
    contactsShown_ = shown;
    for (vtkActor* a : {contactActor_.Get(), jointActor_.Get()}) {
        if (a) {
            a->SetVisibility(shown);
        }
    }
    if (forceBar_) {
        forceBar_->SetVisibility(shown && contactLines_->GetNumberOfCells() > 0);
    }
}

void RigidActors::update(const Scene& scene, const std::vector<RigidContact>& contacts, Real h) {
    if (bodies_.size() != scene.rigidBodies.size()) {
        setScene(scene);
    }
    for (std::size_t i = 0; i < bodies_.size(); ++i) {
        const RigidBody& b = scene.rigidBodies[i];
        setPose(bodies_[i], b);
        if (char(b.sleeping) != sleeping_[i] || b.motion != motions_[i]) {
            setColour(bodies_[i], colourFor(b.motion, b.sleeping));
            sleeping_[i] = b.sleeping;
            motions_[i] = b.motion;
        }
    }
    if (!contactLines_) {
        return;
    }
    // Contacts: a point at the contact and a line along the normal, coloured by the force.
    vtkNew<vtkPoints> points;
    vtkNew<vtkCellArray> lines;
    vtkNew<vtkDoubleArray> force;
    force->SetName("contact force");
    Real strongest = 0;
    for (const RigidContact& c : contacts) {
        const Real f = h > 0 ? c.normalImpulse / h : 0;
        strongest = std::max(strongest, f);
        const vtkIdType a = points->InsertNextPoint(c.position.data());
        const Vec3 tip = c.position - c.normal * glyphLength_; // out of the lower body (A)
        const vtkIdType b = points->InsertNextPoint(tip.data());
        const vtkIdType line[2] = {a, b};
        lines->InsertNextCell(2, line);
        force->InsertNextValue(f);
    }
    contactLines_->SetPoints(points);
    contactLines_->SetLines(lines);
    contactLines_->GetCellData()->SetScalars(force);
    contactLines_->Modified();
    const double hi = strongest > 0 ? strongest : 1.0;
    contactActor_->GetMapper()->SetScalarRange(0, hi);
    forceColours_->SetTableRange(0, hi);
    forceBar_->SetLabelFormat(scalarBarLabelFormat(0, hi, forceBar_->GetNumberOfLabels()).c_str());
    forceBar_->SetVisibility(contactsShown_ && !contacts.empty());

    // Joints: body A's axes at the anchor (red x, green y, blue z), and a white line to B's
    // anchor that shows any gap.
    vtkNew<vtkPoints> jp;
    vtkNew<vtkCellArray> jl;
    vtkNew<vtkUnsignedCharArray> colours;
    colours->SetNumberOfComponents(3);
    colours->SetName("Colors");
    const auto addLine = [&](const Vec3& from, const Vec3& to, unsigned char r, unsigned char g,
                             unsigned char bl) {
        const vtkIdType ids[2] = {jp->InsertNextPoint(from.data()), jp->InsertNextPoint(to.data())};
        jl->InsertNextCell(2, ids);
        const unsigned char rgb[3] = {r, g, bl};
        colours->InsertNextTypedTuple(rgb);
    };
    for (const RigidJoint& j : scene.rigidJoints) {
        const auto anchors = jointAnchors(scene.rigidBodies, j);
        const Mat3 frame = j.bodyA < 0 ? Mat3::Identity() : scene.rigidBodies[j.bodyA].rotation();
        const Real l = 0.6 * glyphLength_;
        addLine(anchors[0], anchors[0] + l * frame.col(0), 230, 60, 60);
        addLine(anchors[0], anchors[0] + l * frame.col(1), 60, 200, 60);
        addLine(anchors[0], anchors[0] + l * frame.col(2), 70, 110, 240);
        addLine(anchors[0], anchors[1], 255, 255, 255);
    }
    jointLines_->SetPoints(jp);
    jointLines_->SetLines(jl);
    jointLines_->GetCellData()->SetScalars(colours);
    jointLines_->Modified();
}

} // namespace pbd
