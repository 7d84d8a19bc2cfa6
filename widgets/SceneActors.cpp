#include "widgets/SceneActors.h"

#include "core/scene/Topology.h"
#include "widgets/ProblemsPanel.h"

#include <vtkAppendPolyData.h>
#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkCubeSource.h>
#include <vtkDataSetMapper.h>
#include <vtkDoubleArray.h>
#include <vtkFloatArray.h>
#include <vtkLineSource.h>
#include <vtkLookupTable.h>
#include <vtkPlaneSource.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyDataMapper.h>
#include <vtkProperty.h>
#include <vtkRenderer.h>
#include <vtkScalarBarActor.h>
#include <vtkSphereSource.h>
#include <vtkTextProperty.h>
#include <vtkTubeFilter.h>
#include <vtkUnsignedCharArray.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

namespace pbd {

namespace {

void setColor(vtkProperty* property, const QColor& c) {
    property->SetColor(c.redF(), c.greenF(), c.blueF());
}

// Points and area-weighted vertex normals of a surface whose triangles index `local`, written
// straight into its VTK arrays: a frame of cloth-xl (130,000 points, 258,000 triangles)
// allocates nothing and makes no call per point.
void writePoints(vtkPolyData* surface, const Vec3* local, std::size_t count,
                 const std::vector<Triangle>& triangles) {
    static_assert(sizeof(Vec3) == 3 * sizeof(double), "Vec3 arrays are packed xyz");
    vtkPoints* points = surface->GetPoints();
    if (points->GetDataType() != VTK_DOUBLE) {
        points->SetDataTypeToDouble();
    }
    points->SetNumberOfPoints(vtkIdType(count));
    auto* normalArray = vtkDoubleArray::SafeDownCast(surface->GetPointData()->GetNormals());
    normalArray->SetNumberOfTuples(vtkIdType(count));
    if (count > 0) {
        // Both arrays are packed xyz doubles, as Vec3 arrays are.
        std::memcpy(points->GetVoidPointer(0), local, count * sizeof(Vec3));
        vertexNormals(triangles, local, count, reinterpret_cast<Vec3*>(normalArray->GetPointer(0)));
    }
    points->Modified();
    normalArray->Modified();
    surface->Modified();
}
void writePoints(vtkPolyData* surface, const std::vector<Vec3>& local,
                 const std::vector<Triangle>& triangles) {
    writePoints(surface, local.data(), local.size(), triangles);
}

// A body's triangles with the indices of its own particles (global index - first).
std::vector<Triangle> localTriangles(const Body& body) {
    std::vector<Triangle> triangles = body.triangles;
    for (Triangle& t : triangles) {
        for (Index& v : t) {
            v -= body.firstParticle;
        }
    }
    return triangles;
}

void writeGeometry(vtkPolyData* surface, const Scene& scene, const Body& body,
                   const std::vector<Triangle>& local) {
    writePoints(surface, scene.particles.positions.data() + body.firstParticle, body.particleCount,
                local);
}

// An empty surface with a normals array and the given triangles.
vtkSmartPointer<vtkPolyData> newSurface(const std::vector<Triangle>& triangles, Index first) {
    auto surface = vtkSmartPointer<vtkPolyData>::New();
    vtkNew<vtkPoints> points;
    points->SetDataTypeToDouble(); // picking and the tests read the positions back exactly
    surface->SetPoints(points);
    vtkNew<vtkDoubleArray> normals;
    normals->SetNumberOfComponents(3);
    normals->SetName("Normals");
    surface->GetPointData()->SetNormals(normals);
    vtkNew<vtkCellArray> polys;
    polys->AllocateExact(vtkIdType(triangles.size()), vtkIdType(3 * triangles.size()));
    for (const Triangle& t : triangles) {
        const vtkIdType ids[3] = {vtkIdType(t[0] - first), vtkIdType(t[1] - first),
                                  vtkIdType(t[2] - first)};
        polys->InsertNextCell(3, ids);
    }
    surface->SetPolys(polys);
    return surface;
}

// A coarser mesh of `count` points and these triangles: each point not yet taken takes its
// neighbours not yet taken (in point order), and a triangle stays when its corners went to
// three different points, once. Repeated until at most `most` triangles are left. Returns the
// points kept (as indices into the original points) and the coarse triangles, with the
// original triangle each stands for.
struct CoarseMesh {
    std::vector<Index> seeds;
    std::vector<Triangle> triangles;
    std::vector<vtkIdType> source;
};
CoarseMesh coarsen(const std::vector<Triangle>& triangles, std::size_t count, std::size_t most) {
    CoarseMesh mesh;
    mesh.seeds.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
        mesh.seeds[i] = Index(i);
    }
    mesh.triangles = triangles;
    mesh.source.resize(triangles.size());
    for (std::size_t t = 0; t < triangles.size(); ++t) {
        mesh.source[t] = vtkIdType(t);
    }
    while (mesh.triangles.size() > most) {
        const std::size_t n = mesh.seeds.size();
        std::vector<std::size_t> start(n + 1, 0);
        for (const Triangle& t : mesh.triangles) {
            for (Index v : t) {
                start[v + 1] += 2;
            }
        }
        for (std::size_t i = 0; i < n; ++i) {
            start[i + 1] += start[i];
        }
        std::vector<Index> neighbours(start[n]);
        std::vector<std::size_t> fill(start.begin(), start.end() - 1);
        for (const Triangle& t : mesh.triangles) {
            for (int k = 0; k < 3; ++k) {
                neighbours[fill[t[k]]++] = t[(k + 1) % 3];
                neighbours[fill[t[k]]++] = t[(k + 2) % 3];
            }
        }
        constexpr Index kFree = ~Index(0);
        std::vector<Index> cluster(n, kFree);
        std::vector<Index> seeds;
        for (std::size_t v = 0; v < n; ++v) {
            if (cluster[v] != kFree) {
                continue;
            }
            const Index id = Index(seeds.size());
            seeds.push_back(mesh.seeds[v]);
            cluster[v] = id;
            for (std::size_t k = start[v]; k < start[v + 1]; ++k) {
                if (cluster[neighbours[k]] == kFree) {
                    cluster[neighbours[k]] = id;
                }
            }
        }
        std::vector<Triangle> kept;
        std::vector<vtkIdType> source;
        // Each coarse triangle once, whatever its corners' order.
        const auto hash = [](const Triangle& k) {
            return std::hash<std::uint64_t>{}((std::uint64_t(k[0]) * 0x9E3779B97F4A7C15ull) ^
                                              (std::uint64_t(k[1]) << 21) ^ k[2]);
        };
        std::unordered_set<Triangle, decltype(hash)> seen(mesh.triangles.size(), hash);
        for (std::size_t t = 0; t < mesh.triangles.size(); ++t) {
            const Triangle c = {cluster[mesh.triangles[t][0]], cluster[mesh.triangles[t][1]],
                                cluster[mesh.triangles[t][2]]};
            if (c[0] == c[1] || c[1] == c[2] || c[0] == c[2]) {
                continue;
            }
            Triangle key = c;
            std::sort(key.begin(), key.end());
            if (!seen.insert(key).second) {
                continue;
            }
            kept.push_back(c);
            source.push_back(mesh.source[t]);
        }
        if (kept.size() >= mesh.triangles.size() || seeds.size() >= n) {
            break; // nothing merged any more
        }
        mesh.seeds = std::move(seeds);
        mesh.triangles = std::move(kept);
        mesh.source = std::move(source);
    }
    return mesh;
}

} // namespace

std::string scalarBarLabelFormat(double lo, double hi, int labels) {
    int digits = 3;
    const double step = (hi - lo) / std::max(1, labels - 1);
    const double magnitude = std::max(std::abs(lo), std::abs(hi));
    if (step > 0 && magnitude > 0 && std::isfinite(step) && std::isfinite(magnitude)) {
        // Digits before the step's first one, plus one to see the step.
        digits = std::clamp(int(std::ceil(std::log10(magnitude / step))) + 1, 3, 12);
    }
    return "%-." + std::to_string(digits) + "g"; // no "#": "151", not "151."
}

SceneActors::SceneActors(vtkRenderer* renderer)
    : renderer_(renderer)
    , lookupTable_(vtkSmartPointer<vtkLookupTable>::New())
    , scalarBar_(vtkSmartPointer<vtkScalarBarActor>::New()) {
    scalarBar_->SetLookupTable(lookupTable_);
    scalarBar_->SetNumberOfLabels(5);
    scalarBar_->SetMaximumWidthInPixels(110);
    scalarBar_->SetMaximumHeightInPixels(320);
    scalarBar_->SetPosition(0.80, 0.15);
    scalarBar_->SetUnconstrainedFontSize(true);
    scalarBar_->GetTitleTextProperty()->SetFontSize(13);
    scalarBar_->GetLabelTextProperty()->SetFontSize(12);
    scalarBar_->SetLabelFormat("%-.3g");
    scalarBar_->VisibilityOff();
    renderer_->AddActor2D(scalarBar_);
}

QStringList SceneActors::colourMapPresets() {
    return {QStringLiteral("auto"),  QStringLiteral("cool-warm"), QStringLiteral("viridis"),
            QStringLiteral("greys"), QStringLiteral("rainbow"),   QStringLiteral("blue-red")};
}

void SceneActors::setFieldMap(const QString& title, double lo, double hi, bool diverging,
                              const QString& preset) {
    if (!(hi > lo)) {
        const double mid = std::isfinite(lo) ? lo : 0.0;
        lo = mid - 1e-9;
        hi = mid + 1e-9;
    }
    constexpr int n = 256;
    lookupTable_->SetNumberOfTableValues(n);
    lookupTable_->SetTableRange(lo, hi);
    scalarBar_->SetLabelFormat(
        scalarBarLabelFormat(lo, hi, scalarBar_->GetNumberOfLabels()).c_str());
    // Evenly spaced colour stops, linearly interpolated. "auto": cool-warm (Moreland) for
    // signed fields, viridis otherwise.
    using Stops = std::vector<std::array<double, 3>>;
    static const Stops coolWarm = {{59, 76, 192}, {221, 221, 221}, {180, 4, 38}};
    static const Stops viridis = {
        {68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
    static const Stops greys = {{25, 25, 25}, {240, 240, 240}};
    static const Stops rainbow = {
        {0, 0, 255}, {0, 255, 255}, {0, 255, 0}, {255, 255, 0}, {255, 0, 0}};
    static const Stops blueRed = {{5, 48, 97}, {247, 247, 247}, {103, 0, 31}};
    const Stops& stops = preset == QLatin1String("cool-warm")  ? coolWarm
                         : preset == QLatin1String("viridis")  ? viridis
                         : preset == QLatin1String("greys")    ? greys
                         : preset == QLatin1String("rainbow")  ? rainbow
                         : preset == QLatin1String("blue-red") ? blueRed
                         : diverging                           ? coolWarm
                                                               : viridis;
    const int segments = int(stops.size()) - 1;
    for (int i = 0; i < n; ++i) {
        const double t = double(i) / (n - 1) * segments;
        const int k = std::min(int(t), segments - 1);
        const double u = t - k;
        double rgb[3];
        for (int c = 0; c < 3; ++c) {
            rgb[c] = ((1 - u) * stops[k][c] + u * stops[k + 1][c]) / 255.0;
        }
        lookupTable_->SetTableValue(i, rgb[0], rgb[1], rgb[2], 1.0);
    }
    lookupTable_->Build();
    scalarBar_->SetTitle(title.toUtf8().constData());
    scalarBar_->VisibilityOn();
    fieldShown_ = true;
    for (BodyActor& b : bodies_) {
        auto* mapper = vtkPolyDataMapper::SafeDownCast(b.fullMapper.Get());
        mapper->SetLookupTable(lookupTable_);
        mapper->SetScalarRange(lo, hi);
    }
}

void SceneActors::setBodyField(std::size_t body, const std::vector<double>& values) {
    BodyActor& b = bodies_.at(body);
    vtkNew<vtkDoubleArray> array;
    array->SetName("field");
    array->SetNumberOfTuples(vtkIdType(values.size()));
    for (std::size_t i = 0; i < values.size(); ++i) {
        array->SetValue(vtkIdType(i), values[i]);
    }
    b.surface->GetCellData()->SetScalars(array);
    auto* mapper = vtkPolyDataMapper::SafeDownCast(b.fullMapper.Get());
    mapper->SetScalarModeToUseCellData();
    mapper->SetColorModeToMapScalars(); // unsigned char flags are not colours
    mapper->ScalarVisibilityOn();
    b.surface->Modified();
}

void SceneActors::clearFields() {
    for (BodyActor& b : bodies_) {
        b.surface->GetCellData()->SetScalars(nullptr);
        vtkPolyDataMapper::SafeDownCast(b.fullMapper.Get())->ScalarVisibilityOff();
    }
    scalarBar_->VisibilityOff();
    fieldShown_ = false;
}

SceneActors::~SceneActors() {
    clear();
}

QColor SceneActors::colorFor(BodyKind kind) {
    switch (kind) {
    case BodyKind::Cloth:
        return QColor(238, 140, 56);
    case BodyKind::TetBody:
        return QColor(92, 143, 217);
    case BodyKind::Collider:
        return QColor(150, 150, 150);
    case BodyKind::Surface:
        return QColor(200, 190, 170);
    }
    return Qt::white;
}

void SceneActors::clear() {
    coarse_ = false;
    for (BodyActor& b : bodies_) {
        renderer_->RemoveActor(b.actor);
        if (b.clipActor) {
            renderer_->RemoveActor(b.clipActor);
        }
    }
    bodies_.clear();
    for (BodyActor& e : embedded_) {
        renderer_->RemoveActor(e.actor);
    }
    embedded_.clear();
    setProblems(Scene{}, {});
    for (auto& c : colliders_) {
        renderer_->RemoveActor(c);
    }
    colliders_.clear();
    selectedCollider_ = -1;
    highlighted_ = -1;
    if (airActor_) {
        renderer_->RemoveActor(airActor_);
        airActor_ = nullptr;
    }
    airGrid_ = nullptr;
    airField_.clear();
    airHealth_ = nullptr;
    airTets_.clear();
    airTriangles_.clear();
    invertedAir_ = 0;
    if (pinActor_) {
        renderer_->RemoveActor(pinActor_);
        pinActor_ = nullptr;
        pinPoints_ = nullptr;
    }
    pinned_.clear();
    if (selectionActor_) {
        renderer_->RemoveActor(selectionActor_);
        selectionActor_ = nullptr;
        selectionPoints_ = nullptr;
    }
    selected_.clear();
    if (frameActor_) {
        renderer_->RemoveActor(frameActor_);
        frameActor_ = nullptr;
        frameLines_ = nullptr;
    }
    if (skeletonActor_) {
        renderer_->RemoveActor(skeletonActor_);
        skeletonActor_ = nullptr;
        skeletonLines_ = nullptr;
    }
    if (scalarBar_) {
        scalarBar_->VisibilityOff();
    }
    fieldShown_ = false;
}

void SceneActors::setScene(const Scene& scene) {
    clear();
    for (const Body& body : scene.bodies) {
        BodyActor b;
        b.surface = newSurface(body.triangles, body.firstParticle);
        if (body.triangles.empty()) {
            // A body of particles only (a rope, a point cloud): draw the particles.
            vtkNew<vtkCellArray> verts;
            for (Index i = 0; i < body.particleCount; ++i) {
                const vtkIdType id = vtkIdType(i);
                verts->InsertNextCell(1, &id);
            }
            b.surface->SetVerts(verts);
        }
        b.localTriangles = localTriangles(body);
        writeGeometry(b.surface, scene, body, b.localTriangles);

        vtkNew<vtkPolyDataMapper> mapper;
        mapper->SetInputData(b.surface);
        mapper->ScalarVisibilityOff();
        b.actor = vtkSmartPointer<vtkActor>::New();
        b.actor->SetMapper(mapper);
        vtkProperty* front = b.actor->GetProperty();
        setColor(front, colorFor(body.kind));
        front->SetAmbient(0.15);
        front->SetDiffuse(0.85);
        front->SetSpecular(0.25);
        front->SetSpecularPower(30);
        if (body.kind == BodyKind::Cloth || body.kind == BodyKind::Surface) {
            // Open sheets are seen from both sides; the back is drawn darker so folds read.
            vtkNew<vtkProperty> back;
            setColor(back, colorFor(body.kind).darker(160));
            back->SetAmbient(0.15);
            back->SetDiffuse(0.85);
            b.actor->SetBackfaceProperty(back);
        }
        if (body.triangles.empty()) {
            front->SetPointSize(8);
            front->SetRenderPointsAsSpheres(true);
        }
        applyRepresentation(b.actor);
        renderer_->AddActor(b.actor);
        b.fullMapper = b.actor->GetMapper();
        bodies_.push_back(std::move(b));
    }
    for (const EmbeddedMesh& mesh : scene.embedded) {
        BodyActor e;
        e.surface = newSurface(mesh.triangles, 0);
        vtkNew<vtkPolyDataMapper> mapper;
        mapper->SetInputData(e.surface);
        mapper->ScalarVisibilityOff();
        e.actor = vtkSmartPointer<vtkActor>::New();
        e.actor->SetMapper(mapper);
        e.actor->PickableOff(); // particles are picked on the cage
        vtkProperty* front = e.actor->GetProperty();
        setColor(front, colorFor(BodyKind::Surface));
        front->SetAmbient(0.15);
        front->SetDiffuse(0.85);
        front->SetSpecular(0.25);
        front->SetSpecularPower(30);
        vtkNew<vtkProperty> back; // render meshes may be open: their insides show darker
        setColor(back, colorFor(BodyKind::Surface).darker(160));
        back->SetAmbient(0.15);
        back->SetDiffuse(0.85);
        e.actor->SetBackfaceProperty(back);
        applyRepresentation(e.actor);
        renderer_->AddActor(e.actor);
        embedded_.push_back(std::move(e));
    }
    updateEmbedded(scene);
    // The cage is drawn on request: its render mesh shows what it carries.
    for (std::size_t b = 0; b < bodies_.size(); ++b) {
        if (carriesEmbedded(scene, b)) {
            setBodyVisible(b, false);
        }
    }
    addColliders(scene);
    airTets_ = scene.air.tets;
    airTriangles_ = scene.air.triangles;
    if (!scene.air.empty()) {
        airGrid_ = vtkSmartPointer<vtkUnstructuredGrid>::New();
        writeAirCells();
        updateAir(scene);
        airHealthColours_ = vtkSmartPointer<vtkLookupTable>::New();
        vtkLookupTable* healthColours = airHealthColours_;
        healthColours->SetNumberOfTableValues(2);
        healthColours->SetTableValue(0, 0.95, 0.1, 0.1, 1.0);   // inverted: red
        healthColours->SetTableValue(1, 0.55, 0.75, 0.95, 1.0); // air: pale blue
        healthColours->SetRange(0, 1);
        healthColours->Build();
        vtkNew<vtkDataSetMapper> mapper;
        mapper->SetInputData(airGrid_);
        mapper->SetLookupTable(healthColours);
        mapper->SetScalarRange(0, 1);
        mapper->SetScalarModeToUseCellData();
        mapper->SetColorModeToMapScalars(); // unsigned char flags are not colours
        mapper->ScalarVisibilityOn();
        airActor_ = vtkSmartPointer<vtkActor>::New();
        airActor_->SetMapper(mapper);
        airActor_->PickableOff();
        renderer_->AddActor(airActor_);
        setAirMode(airMode_);
    }
    if (clip_) {
        setClip(scene, true, clipNormal_, clipOrigin_);
    }
    if (frameGlyphs_) {
        setFrameGlyphs(scene, true);
    }
    if (skeletons_) {
        setSkeletons(scene, skeletonTime_, true);
    }
}

void SceneActors::setColliders(const Scene& scene, int selected) {
    for (auto& c : colliders_) {
        renderer_->RemoveActor(c);
    }
    colliders_.clear();
    selectedCollider_ = selected;
    addColliders(scene);
}

void SceneActors::addColliders(const Scene& scene) {
    const Bounds bounds = scene.bounds();
    const Vec3 centre = bounds.empty() ? Vec3::Zero() : bounds.center();
    const Real extent = bounds.empty() ? 1.0 : std::max(bounds.size().maxCoeff(), 0.5);
    for (const Collider& c : scene.colliders) {
        vtkSmartPointer<vtkPolyData> shape;
        switch (c.shape) {
        case ColliderShape::Plane: {
            // A square of twice the bodies' size, centred under them, in the plane.
            const Vec3 n = c.normal.normalized();
            const Vec3 onPlane = centre - (centre - c.center).dot(n) * n;
            const Vec3 u = (std::abs(n.x()) < 0.9 ? n.cross(Vec3::UnitX()) : n.cross(Vec3::UnitY()))
                               .normalized() *
                           extent;
            const Vec3 v = n.cross(u);
            vtkNew<vtkPlaneSource> plane;
            const Vec3 o = onPlane - u - v, p1 = onPlane + u - v, p2 = onPlane - u + v;
            plane->SetOrigin(o.x(), o.y(), o.z());
            plane->SetPoint1(p1.x(), p1.y(), p1.z());
            plane->SetPoint2(p2.x(), p2.y(), p2.z());
            plane->Update();
            shape = plane->GetOutput();
            break;
        }
        case ColliderShape::Sphere: {
            vtkNew<vtkSphereSource> sphere;
            sphere->SetCenter(c.center.data());
            sphere->SetRadius(c.radius);
            sphere->SetThetaResolution(48);
            sphere->SetPhiResolution(24);
            sphere->Update();
            shape = sphere->GetOutput();
            break;
        }
        case ColliderShape::Box: {
            vtkNew<vtkCubeSource> box;
            box->SetXLength(2 * c.halfExtents.x());
            box->SetYLength(2 * c.halfExtents.y());
            box->SetZLength(2 * c.halfExtents.z());
            box->Update();
            shape = vtkSmartPointer<vtkPolyData>::New();
            shape->DeepCopy(box->GetOutput());
            vtkPoints* pts = shape->GetPoints();
            for (vtkIdType i = 0; i < pts->GetNumberOfPoints(); ++i) {
                double q[3];
                pts->GetPoint(i, q);
                const Vec3 w = c.center + c.rotation * Vec3(q[0], q[1], q[2]);
                pts->SetPoint(i, w.data());
            }
            break;
        }
        case ColliderShape::Capsule: {
            // The surface at distance `radius` from the segment, sampled: a tube with caps.
            vtkNew<vtkLineSource> line;
            line->SetPoint1(c.a.x(), c.a.y(), c.a.z());
            line->SetPoint2(c.b.x(), c.b.y(), c.b.z());
            vtkNew<vtkTubeFilter> tube;
            tube->SetInputConnection(line->GetOutputPort());
            tube->SetRadius(c.radius);
            tube->SetNumberOfSides(32);
            tube->CappingOff();
            tube->Update();
            vtkNew<vtkAppendPolyData> all;
            all->AddInputData(tube->GetOutput());
            for (const Vec3& end : {c.a, c.b}) {
                vtkNew<vtkSphereSource> cap;
                cap->SetCenter(end.data());
                cap->SetRadius(c.radius);
                cap->SetThetaResolution(32);
                cap->SetPhiResolution(16);
                cap->Update();
                all->AddInputData(cap->GetOutput());
            }
            all->Update();
            shape = all->GetOutput();
            break;
        }
        case ColliderShape::Mesh: {
            shape = vtkSmartPointer<vtkPolyData>::New();
            vtkNew<vtkPoints> pts;
            for (const Vec3& v : c.vertices) {
                pts->InsertNextPoint(v.data());
            }
            vtkNew<vtkCellArray> polys;
            for (const Triangle& t : c.triangles) {
                const vtkIdType ids[3] = {vtkIdType(t[0]), vtkIdType(t[1]), vtkIdType(t[2])};
                polys->InsertNextCell(3, ids);
            }
            shape->SetPoints(pts);
            shape->SetPolys(polys);
            break;
        }
        }
        vtkNew<vtkPolyDataMapper> mapper;
        mapper->SetInputData(shape);
        mapper->ScalarVisibilityOff();
        auto actor = vtkSmartPointer<vtkActor>::New();
        actor->SetMapper(mapper);
        setColor(actor->GetProperty(), colorFor(BodyKind::Collider));
        if (int(colliders_.size()) == selectedCollider_) {
            actor->GetProperty()->SetColor(0.95, 0.65, 0.2); // selected: amber
        }
        actor->GetProperty()->SetAmbient(0.2);
        actor->GetProperty()->SetDiffuse(0.8);
        actor->PickableOff();
        // A plane (a ground) is drawn twice the bodies' size: Frame All shows the bodies.
        actor->SetUseBounds(c.shape != ColliderShape::Plane);
        renderer_->AddActor(actor);
        colliders_.push_back(actor);
    }
    applySkinOpacity(scene);
}

void SceneActors::updatePositions(const Scene& scene) {
    for (std::size_t i = 0; i < bodies_.size() && i < scene.bodies.size(); ++i) {
        writeGeometry(bodies_[i].surface, scene, scene.bodies[i], bodies_[i].localTriangles);
    }
    // Characters' skins: their colliders' points, in place.
    for (const Character& c : scene.characters) {
        if (c.collider < 0 || std::size_t(c.collider) >= colliders_.size()) {
            continue;
        }
        auto* shape =
            vtkPolyData::SafeDownCast(colliders_[std::size_t(c.collider)]->GetMapper()->GetInput());
        const std::vector<Vec3>& v = scene.colliders[std::size_t(c.collider)].vertices;
        if (shape == nullptr || shape->GetNumberOfPoints() != vtkIdType(v.size())) {
            continue;
        }
        vtkPoints* pts = shape->GetPoints();
        for (std::size_t i = 0; i < v.size(); ++i) {
            pts->SetPoint(vtkIdType(i), v[i].data());
        }
        pts->Modified();
        shape->Modified();
    }
    updateEmbedded(scene);
    updateProblems(scene);
    updatePins(scene);
    updateAir(scene);
    updateClip(scene);
    updateFrameGlyphs(scene);
}

void SceneActors::setCoarse(bool coarse) {
    if (coarse == coarse_) {
        return;
    }
    coarse_ = coarse;
    for (BodyActor& b : bodies_) {
        if (b.localTriangles.size() <= kCoarseFrom || !b.fullMapper) {
            continue;
        }
        if (coarse) {
            if (!b.coarseMapper) {
                makeCoarse(b);
            }
            updateCoarse(b);
            b.actor->SetMapper(b.coarseMapper);
        } else {
            b.actor->SetMapper(b.fullMapper);
        }
    }
}

void SceneActors::setPixelScale(double scale) {
    if (scale == pixelScale_) {
        return;
    }
    pixelScale_ = scale;
    for (vtkScalarBarActor* bar : {scalarBar_.Get(), constraintBar_.Get()}) {
        if (bar != nullptr) {
            bar->SetMaximumWidthInPixels(int(std::lround(110 * scale)));
            bar->SetMaximumHeightInPixels(int(std::lround(320 * scale)));
        }
    }
}

std::size_t SceneActors::coarseTriangles(std::size_t body) const {
    return body < bodies_.size() ? bodies_[body].coarseTriangles.size() : 0;
}

void SceneActors::makeCoarse(BodyActor& b) {
    // About an eighth of the triangles: cloth-xl's 257,762 become 30,000-odd.
    const std::size_t points = std::size_t(b.surface->GetNumberOfPoints());
    CoarseMesh mesh = coarsen(b.localTriangles, points, b.localTriangles.size() / 8);
    b.coarseSeeds = std::move(mesh.seeds);
    b.coarseTriangles = std::move(mesh.triangles);
    b.coarseSource = std::move(mesh.source);
    b.coarseSurface = newSurface(b.coarseTriangles, 0);
    b.coarseMapper = vtkSmartPointer<vtkPolyDataMapper>::New();
    b.coarseMapper->SetInputData(b.coarseSurface);
    b.coarseFrom = 0;
}

void SceneActors::updateCoarse(BodyActor& b) {
    // Its points, and the field the full mapper shows on the triangles the coarse ones stand
    // for, from the full surface's when that changed since (its time covers its cell data): a
    // moving camera's frames between two snapshots upload nothing.
    auto* fullMapper = vtkPolyDataMapper::SafeDownCast(b.fullMapper);
    vtkDataArray* field = b.surface->GetCellData()->GetScalars();
    const bool shown = fullMapper != nullptr && fullMapper->GetScalarVisibility() && field;
    if (b.coarseFrom != b.surface->GetMTime()) {
        const auto* full = static_cast<const Vec3*>(b.surface->GetPoints()->GetVoidPointer(0));
        std::vector<Vec3> points(b.coarseSeeds.size());
        for (std::size_t i = 0; i < points.size(); ++i) {
            points[i] = full[b.coarseSeeds[i]];
        }
        writePoints(b.coarseSurface, points, b.coarseTriangles);
        if (field != nullptr) {
            vtkNew<vtkDoubleArray> values;
            values->SetName("field");
            values->SetNumberOfTuples(vtkIdType(b.coarseSource.size()));
            for (std::size_t t = 0; t < b.coarseSource.size(); ++t) {
                values->SetValue(vtkIdType(t), field->GetTuple1(b.coarseSource[t]));
            }
            b.coarseSurface->GetCellData()->SetScalars(values);
        } else {
            b.coarseSurface->GetCellData()->SetScalars(nullptr);
        }
        b.coarseFrom = b.surface->GetMTime();
    }
    if (shown) {
        b.coarseMapper->SetLookupTable(fullMapper->GetLookupTable());
        b.coarseMapper->SetScalarRange(fullMapper->GetScalarRange());
        b.coarseMapper->SetScalarModeToUseCellData();
        b.coarseMapper->SetColorModeToMapScalars();
    }
    b.coarseMapper->SetScalarVisibility(shown);
}

long SceneActors::bodyOf(const vtkActor* actor) const {
    for (std::size_t i = 0; i < bodies_.size(); ++i) {
        if (bodies_[i].actor == actor) {
            return long(i);
        }
    }
    return -1;
}

void SceneActors::setMarkers(const Scene& scene, const std::vector<Index>& particles,
                             vtkSmartPointer<vtkPolyData>& points, vtkSmartPointer<vtkActor>& actor,
                             const double colour[3], double size) {
    if (!actor) {
        points = vtkSmartPointer<vtkPolyData>::New();
        vtkNew<vtkPolyDataMapper> mapper;
        mapper->SetInputData(points);
        mapper->ScalarVisibilityOff();
        actor = vtkSmartPointer<vtkActor>::New();
        actor->SetMapper(mapper);
        actor->PickableOff();
        vtkProperty* p = actor->GetProperty();
        p->SetColor(colour[0], colour[1], colour[2]);
        p->SetPointSize(float(size));
        p->SetRenderPointsAsSpheres(true);
        renderer_->AddActor(actor);
    }
    vtkNew<vtkCellArray> verts;
    for (vtkIdType i = 0; i < vtkIdType(particles.size()); ++i) {
        verts->InsertNextCell(1, &i);
    }
    points->SetVerts(verts);
    updateMarkers(scene, particles, points, actor);
}

void SceneActors::updateMarkers(const Scene& scene, const std::vector<Index>& particles,
                                vtkPolyData* markers, vtkActor* actor) {
    if (markers == nullptr) {
        return;
    }
    vtkNew<vtkPoints> points;
    points->SetDataTypeToDouble();
    for (Index i : particles) {
        const Vec3& p = i < scene.particles.size() ? scene.particles.positions[i] : Vec3::Zero();
        points->InsertNextPoint(p.x(), p.y(), p.z());
    }
    markers->SetPoints(points);
    markers->Modified();
    actor->SetVisibility(!particles.empty());
}

void SceneActors::setPinned(const Scene& scene, const std::vector<Index>& particles) {
    pinned_ = particles;
    static constexpr double kRed[3] = {0.9, 0.1, 0.1};
    setMarkers(scene, pinned_, pinPoints_, pinActor_, kRed, 11);
}

void SceneActors::setSelected(const Scene& scene, const std::vector<Index>& particles) {
    selected_ = particles;
    static constexpr double kYellow[3] = {1.0, 0.85, 0.1};
    setMarkers(scene, selected_, selectionPoints_, selectionActor_, kYellow, 8);
}

void SceneActors::updatePins(const Scene& scene) {
    updateMarkers(scene, pinned_, pinPoints_, pinActor_);
    updateMarkers(scene, selected_, selectionPoints_, selectionActor_);
}

void SceneActors::setAirMode(AirMode mode) {
    airMode_ = mode;
    if (!airActor_) {
        return;
    }
    airActor_->SetVisibility(mode != AirMode::Hidden && airCells() > 0);
    vtkProperty* p = airActor_->GetProperty();
    if (mode == AirMode::Wireframe) {
        p->SetRepresentationToWireframe();
        p->SetOpacity(0.35);
        p->LightingOff();
    } else {
        p->SetRepresentationToSurface();
        p->SetOpacity(0.12);
        p->LightingOn();
    }
}

void SceneActors::writeAirScalars() {
    if (!airGrid_) {
        return;
    }
    if (!airField_.empty() && airField_.size() == airCells()) {
        vtkNew<vtkDoubleArray> field;
        field->SetName("air_field");
        field->SetNumberOfValues(vtkIdType(airField_.size()));
        for (std::size_t t = 0; t < airField_.size(); ++t) {
            field->SetValue(vtkIdType(t), airField_[t]);
        }
        airGrid_->GetCellData()->SetScalars(field);
    } else if (airHealth_) {
        airGrid_->GetCellData()->SetScalars(airHealth_);
    }
    airGrid_->Modified();
}

void SceneActors::writeAirCells() {
    vtkNew<vtkCellArray> cells;
    if (!airTets_.empty()) {
        cells->AllocateExact(vtkIdType(airTets_.size()), 4 * vtkIdType(airTets_.size()));
        for (const Tetrahedron& t : airTets_) {
            const vtkIdType ids[4] = {vtkIdType(t[0]), vtkIdType(t[1]), vtkIdType(t[2]),
                                      vtkIdType(t[3])};
            cells->InsertNextCell(4, ids);
        }
        airGrid_->SetCells(VTK_TETRA, cells);
    } else {
        cells->AllocateExact(vtkIdType(airTriangles_.size()), 3 * vtkIdType(airTriangles_.size()));
        for (const Triangle& t : airTriangles_) {
            const vtkIdType ids[3] = {vtkIdType(t[0]), vtkIdType(t[1]), vtkIdType(t[2])};
            cells->InsertNextCell(3, ids);
        }
        airGrid_->SetCells(VTK_TRIANGLE, cells);
    }
}

std::size_t SceneActors::airCells() const {
    return airTets_.empty() ? airTriangles_.size() : airTets_.size();
}

void SceneActors::setAirTets(const Scene& scene) {
    if (!airGrid_ || scene.air.empty()) {
        return;
    }
    airTets_ = scene.air.tets;
    airTriangles_ = scene.air.triangles;
    writeAirCells();
    if (airField_.size() != airCells()) {
        airField_.clear(); // a stale field would colour the wrong tets: the caller sets anew
    }
    updateAir(scene);
}

void SceneActors::setAirField(const std::vector<double>& values) {
    airField_ = values;
    if (!airActor_) {
        return;
    }
    writeAirScalars();
    auto* mapper = vtkDataSetMapper::SafeDownCast(airActor_->GetMapper());
    if (values.empty()) {
        mapper->SetLookupTable(airHealthColours_);
        mapper->SetScalarRange(0, 1);
    } else {
        mapper->SetLookupTable(lookupTable_);
        mapper->SetScalarRange(lookupTable_->GetRange());
    }
}

void SceneActors::updateAir(const Scene& scene) {
    if (!airGrid_ || airCells() == 0) {
        return;
    }
    const auto& x = scene.particles.positions;
    vtkNew<vtkPoints> points;
    points->SetDataTypeToDouble();
    points->SetNumberOfPoints(vtkIdType(x.size()));
    for (std::size_t i = 0; i < x.size(); ++i) {
        points->SetPoint(vtkIdType(i), x[i].x(), x[i].y(), x[i].z());
    }
    airGrid_->SetPoints(points);
    // 1 for a healthy air element, 0 for an inverted one: drawn red.
    vtkNew<vtkUnsignedCharArray> healthy;
    healthy->SetName("air_positive");
    healthy->SetNumberOfValues(vtkIdType(airCells()));
    invertedAir_ = 0;
    const auto valid = [&](auto const& element) {
        return std::all_of(element.begin(), element.end(), [&](Index i) { return i < x.size(); });
    };
    // Inverted beyond rounding, as the solver counts it: a projected (contact) element is flat.
    for (std::size_t t = 0; t < airTets_.size(); ++t) {
        const Tetrahedron& tet = airTets_[t];
        bool positive = valid(tet);
        if (positive) {
            Real edge = 0;
            for (int i = 0; i < 4; ++i) {
                for (int j = i + 1; j < 4; ++j) {
                    edge = std::max(edge, (x[tet[i]] - x[tet[j]]).squaredNorm());
                }
            }
            positive = signedVolume(x[tet[0]], x[tet[1]], x[tet[2]], x[tet[3]]) >=
                       -1e-9 * edge * std::sqrt(edge);
        }
        healthy->SetValue(vtkIdType(t), positive ? 1 : 0);
        invertedAir_ += !positive;
    }
    for (std::size_t t = 0; t < airTriangles_.size() && airTets_.empty(); ++t) {
        const Triangle& tri = airTriangles_[t];
        bool positive = valid(tri);
        if (positive) {
            const Vec3 a = x[tri[1]] - x[tri[0]], b = x[tri[2]] - x[tri[0]];
            const Real edge = std::max({a.squaredNorm(), b.squaredNorm(), (b - a).squaredNorm()});
            positive = 0.5 * (a.x() * b.y() - a.y() * b.x()) >= -1e-9 * edge;
        }
        healthy->SetValue(vtkIdType(t), positive ? 1 : 0);
        invertedAir_ += !positive;
    }
    airHealth_ = healthy;
    writeAirScalars();
}

void SceneActors::setHighlightedBody(long body) {
    highlighted_ = body;
    for (std::size_t i = 0; i < bodies_.size(); ++i) {
        applyRepresentation(bodies_[i].actor);
    }
}

void SceneActors::applyRepresentation(vtkActor* actor) const {
    vtkProperty* p = actor->GetProperty();
    const long body = bodyOf(actor);
    const bool highlighted = body >= 0 && body == highlighted_ && !wireframe_;
    p->SetEdgeVisibility(highlighted);
    if (highlighted) {
        p->SetEdgeColor(0.95, 0.3, 0.95); // magenta, as ParaView shows a selection
        p->SetLineWidth(1.0);
    }
    if (wireframe_) {
        p->SetRepresentationToWireframe();
        p->LightingOff();
    } else {
        p->SetRepresentationToSurface();
        p->LightingOn();
    }
    if (vtkProperty* back = actor->GetBackfaceProperty()) {
        back->SetRepresentation(p->GetRepresentation());
        back->SetLighting(p->GetLighting());
    }
}

void SceneActors::setWireframe(bool wireframe) {
    wireframe_ = wireframe;
    for (BodyActor& b : bodies_) {
        applyRepresentation(b.actor);
        if (b.clipActor) {
            applyRepresentation(b.clipActor);
        }
    }
    for (BodyActor& e : embedded_) {
        applyRepresentation(e.actor);
    }
}

void SceneActors::setBodyVisible(std::size_t body, bool visible) {
    BodyActor& b = bodies_.at(body);
    b.visible = visible;
    const bool clipped = clip_ && b.clipActor;
    b.actor->SetVisibility(visible && !clipped);
    if (b.clipActor) {
        b.clipActor->SetVisibility(visible && clipped);
    }
}

bool SceneActors::bodyVisible(std::size_t body) const {
    return bodies_.at(body).visible;
}

void SceneActors::setEmbeddedVisible(std::size_t mesh, bool visible) {
    BodyActor& e = embedded_.at(mesh);
    e.visible = visible;
    e.actor->SetVisibility(visible);
}

bool SceneActors::embeddedVisible(std::size_t mesh) const {
    return embedded_.at(mesh).visible;
}

namespace {

// The cells of `problems` over all the scene's particles, each coloured by its kind, or all
// white (the selection).
void writeProblemCells(vtkPolyData* data, const std::vector<const SurfaceProblem*>& problems,
                       bool white) {
    vtkNew<vtkCellArray> verts, lines, polys;
    vtkNew<vtkUnsignedCharArray> vertColours, lineColours, polyColours;
    for (auto* a : {vertColours.Get(), lineColours.Get(), polyColours.Get()}) {
        a->SetNumberOfComponents(3);
        a->SetName("colour");
    }
    for (const SurfaceProblem* p : problems) {
        const QColor c = white ? QColor(Qt::white) : problemColor(p->kind);
        const unsigned char rgb[3] = {static_cast<unsigned char>(c.red()),
                                      static_cast<unsigned char>(c.green()),
                                      static_cast<unsigned char>(c.blue())};
        for (Index v : p->points) {
            const vtkIdType id = v;
            verts->InsertNextCell(1, &id);
            vertColours->InsertNextTypedTuple(rgb);
        }
        for (const auto& e : p->edges) {
            const vtkIdType ids[2] = {e[0], e[1]};
            lines->InsertNextCell(2, ids);
            lineColours->InsertNextTypedTuple(rgb);
        }
        // A non-manifold edge or vertex is drawn as itself; its triangles would hide it.
        if (p->kind == SurfaceProblem::Kind::NonManifoldEdge ||
            p->kind == SurfaceProblem::Kind::NonManifoldVertex) {
            continue;
        }
        for (const Triangle& t : p->triangles) {
            const vtkIdType ids[3] = {t[0], t[1], t[2]};
            polys->InsertNextCell(3, ids);
            polyColours->InsertNextTypedTuple(rgb);
        }
    }
    data->SetVerts(verts);
    data->SetLines(lines);
    data->SetPolys(polys);
    // Cell data runs verts, then lines, then polys.
    vtkNew<vtkUnsignedCharArray> colours;
    colours->SetNumberOfComponents(3);
    colours->SetName("colour");
    for (auto* a : {vertColours.Get(), lineColours.Get(), polyColours.Get()}) {
        for (vtkIdType i = 0; i < a->GetNumberOfTuples(); ++i) {
            colours->InsertNextTypedTuple(a->GetPointer(3 * i));
        }
    }
    data->GetCellData()->SetScalars(colours);
}

vtkSmartPointer<vtkActor> problemActorFor(vtkPolyData* data, double width, double size) {
    vtkNew<vtkPolyDataMapper> mapper;
    mapper->SetInputData(data);
    mapper->SetScalarModeToUseCellData();
    mapper->SetColorModeToDirectScalars();
    // Drawn over the coincident faces and edges of the body.
    mapper->SetResolveCoincidentTopologyToPolygonOffset();
    mapper->SetRelativeCoincidentTopologyPolygonOffsetParameters(-2, -2);
    mapper->SetRelativeCoincidentTopologyLineOffsetParameters(-4, -4);
    mapper->SetRelativeCoincidentTopologyPointOffsetParameter(-6);
    auto actor = vtkSmartPointer<vtkActor>::New();
    actor->SetMapper(mapper);
    actor->PickableOff();
    vtkProperty* p = actor->GetProperty();
    p->SetLineWidth(float(width));
    p->SetRenderLinesAsTubes(true);
    p->SetPointSize(float(size));
    p->SetRenderPointsAsSpheres(true);
    p->SetAmbient(0.4);
    p->SetDiffuse(0.6);
    return actor;
}

} // namespace

void SceneActors::setProblems(const Scene& scene, const std::vector<SurfaceProblem>& problems,
                              int selected) {
    problems_ = problems;
    if (problems_.empty()) {
        for (auto* actor : {&problemActor_, &selectedProblemActor_}) {
            if (*actor) {
                renderer_->RemoveActor(*actor);
                *actor = nullptr;
            }
        }
        problemData_ = selectedProblemData_ = nullptr;
        return;
    }
    if (!problemActor_) {
        problemData_ = vtkSmartPointer<vtkPolyData>::New();
        selectedProblemData_ = vtkSmartPointer<vtkPolyData>::New();
        vtkNew<vtkPoints> points;
        points->SetDataTypeToDouble();
        problemData_->SetPoints(points);
        selectedProblemData_->SetPoints(points); // shared: one update moves both
        problemActor_ = problemActorFor(problemData_, 4, 10);
        selectedProblemActor_ = problemActorFor(selectedProblemData_, 7, 16);
        renderer_->AddActor(problemActor_);
        renderer_->AddActor(selectedProblemActor_);
    }
    std::vector<const SurfaceProblem*> all, chosen;
    for (std::size_t i = 0; i < problems_.size(); ++i) {
        all.push_back(&problems_[i]);
        if (int(i) == selected) {
            chosen.push_back(&problems_[i]);
        }
    }
    writeProblemCells(problemData_, all, false);
    writeProblemCells(selectedProblemData_, chosen, true);
    updateProblems(scene);
}

void SceneActors::updateProblems(const Scene& scene) {
    if (!problemData_) {
        return;
    }
    vtkPoints* points = problemData_->GetPoints();
    points->SetNumberOfPoints(vtkIdType(scene.particles.size()));
    for (std::size_t i = 0; i < scene.particles.size(); ++i) {
        points->SetPoint(vtkIdType(i), scene.particles.positions[i].data());
    }
    points->Modified();
    problemData_->Modified();
    selectedProblemData_->Modified();
}

void SceneActors::updateEmbedded(const Scene& scene) {
    std::vector<Vec3> carried;
    for (std::size_t e = 0; e < embedded_.size() && e < scene.embedded.size(); ++e) {
        embeddedPositions(scene.embedded[e], scene.particles.positions, carried);
        writePoints(embedded_[e].surface, carried, scene.embedded[e].triangles);
    }
}

void SceneActors::setConstraintLines(const ConstraintLines& lines, const std::array<bool, 4>& kinds,
                                     bool byLambda) {
    if (!constraintActor_) {
        constraintLines_ = vtkSmartPointer<vtkPolyData>::New();
        constraintTable_ = vtkSmartPointer<vtkLookupTable>::New();
        constraintTable_->SetNumberOfTableValues(256);
        // Dark blue (relaxed) through orange to bright yellow (fighting hardest).
        const double stops[3][3] = {{40, 60, 160}, {240, 120, 30}, {255, 250, 120}};
        for (int i = 0; i < 256; ++i) {
            const double t = i / 255.0 * 2;
            const int k = std::min(int(t), 1);
            const double u = t - k;
            constraintTable_->SetTableValue(i, ((1 - u) * stops[k][0] + u * stops[k + 1][0]) / 255,
                                            ((1 - u) * stops[k][1] + u * stops[k + 1][1]) / 255,
                                            ((1 - u) * stops[k][2] + u * stops[k + 1][2]) / 255,
                                            1.0);
        }
        constraintTable_->Build();
        vtkNew<vtkPolyDataMapper> mapper;
        mapper->SetInputData(constraintLines_);
        mapper->SetLookupTable(constraintTable_);
        mapper->SetScalarModeToUseCellData();
        mapper->SetColorModeToMapScalars();
        mapper->ScalarVisibilityOn();
        constraintActor_ = vtkSmartPointer<vtkActor>::New();
        constraintActor_->SetMapper(mapper);
        constraintActor_->PickableOff();
        constraintActor_->GetProperty()->SetLineWidth(2);
        constraintActor_->GetProperty()->LightingOff();
        renderer_->AddActor(constraintActor_);
        constraintBar_ = vtkSmartPointer<vtkScalarBarActor>::New();
        constraintBar_->SetLookupTable(constraintTable_);
        constraintBar_->SetNumberOfLabels(4);
        constraintBar_->SetMaximumWidthInPixels(110);
        constraintBar_->SetMaximumHeightInPixels(320);
        constraintBar_->SetPosition(0.02, 0.25);
        constraintBar_->SetUnconstrainedFontSize(true);
        constraintBar_->SetLabelFormat("%-.2g");
        renderer_->AddActor2D(constraintBar_);
    }
    vtkNew<vtkPoints> points;
    points->SetDataTypeToDouble();
    vtkNew<vtkCellArray> cells;
    vtkNew<vtkFloatArray> values;
    values->SetName(byLambda ? "lambda" : "residual");
    float hi = 0;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (lines.kind[i] >= kinds.size() || !kinds[lines.kind[i]]) {
            continue;
        }
        const vtkIdType ids[2] = {points->InsertNextPoint(lines.a[i].data()),
                                  points->InsertNextPoint(lines.b[i].data())};
        cells->InsertNextCell(2, ids);
        const float v = byLambda ? lines.lambda[i] : lines.residual[i];
        values->InsertNextValue(v);
        hi = std::max(hi, std::isfinite(v) ? v : 0.0f);
    }
    constraintLines_->SetPoints(points);
    constraintLines_->SetLines(cells);
    constraintLines_->GetCellData()->SetScalars(values);
    constraintLines_->Modified();
    const double top = hi > 0 ? double(hi) : 1e-12;
    constraintTable_->SetTableRange(0, top);
    constraintBar_->SetLabelFormat(
        scalarBarLabelFormat(0, top, constraintBar_->GetNumberOfLabels()).c_str());
    constraintActor_->GetMapper()->SetScalarRange(0, top);
    constraintBar_->SetTitle(byLambda ? "Constraint |lambda| (N s^2)\n(bending: N m s^2)"
                                      : "Constraint |C| (m)\n(bending: rad)");
    const bool any = cells->GetNumberOfCells() > 0 || kinds[0] || kinds[1] || kinds[2] || kinds[3];
    constraintActor_->SetVisibility(any);
    constraintBar_->SetVisibility(any);
}

void SceneActors::hideConstraintLines() {
    if (constraintActor_) {
        constraintActor_->VisibilityOff();
        constraintBar_->VisibilityOff();
    }
}

void SceneActors::setFrameGlyphs(const Scene& scene, bool shown) {
    frameGlyphs_ = shown;
    if (!frameActor_) {
        frameLines_ = vtkSmartPointer<vtkPolyData>::New();
        vtkNew<vtkPolyDataMapper> mapper;
        mapper->SetInputData(frameLines_);
        mapper->SetScalarModeToUseCellData();
        mapper->SetColorModeToDirectScalars();
        frameActor_ = vtkSmartPointer<vtkActor>::New();
        frameActor_->SetMapper(mapper);
        frameActor_->PickableOff();
        frameActor_->GetProperty()->SetLineWidth(2);
        frameActor_->GetProperty()->LightingOff();
        renderer_->AddActor(frameActor_);
    }
    frameActor_->SetVisibility(shown);
    updateFrameGlyphs(scene);
}

void SceneActors::setSkeletons(const Scene& scene, Real time, bool shown) {
    skeletons_ = shown;
    if (!skeletonActor_) {
        skeletonLines_ = vtkSmartPointer<vtkPolyData>::New();
        vtkNew<vtkPolyDataMapper> mapper;
        mapper->SetInputData(skeletonLines_);
        skeletonActor_ = vtkSmartPointer<vtkActor>::New();
        skeletonActor_->SetMapper(mapper);
        skeletonActor_->PickableOff();
        skeletonActor_->SetUseBounds(false);
        vtkProperty* p = skeletonActor_->GetProperty();
        p->SetColor(1.0, 0.8, 0.1);
        p->SetLineWidth(3);
        p->SetPointSize(6);
        p->LightingOff();
        renderer_->AddActor(skeletonActor_);
    }
    skeletonActor_->SetVisibility(shown);
    applySkinOpacity(scene);
    updateSkeletons(scene, time);
}

void SceneActors::applySkinOpacity(const Scene& scene) {
    for (const Character& c : scene.characters) {
        if (c.collider >= 0 && std::size_t(c.collider) < colliders_.size()) {
            colliders_[std::size_t(c.collider)]->GetProperty()->SetOpacity(skeletons_ ? 0.3 : 1.0);
        }
        if (c.body >= 0 && std::size_t(c.body) < bodies_.size() &&
            bodies_[std::size_t(c.body)].actor) {
            bodies_[std::size_t(c.body)].actor->SetVisibility(!skeletons_);
        }
    }
}

void SceneActors::updateSkeletons(const Scene& scene, Real time) {
    skeletonTime_ = time;
    if (!skeletons_ || !skeletonLines_) {
        return;
    }
    vtkNew<vtkPoints> points;
    points->SetDataTypeToDouble();
    vtkNew<vtkCellArray> lines;
    vtkNew<vtkCellArray> joints;
    std::vector<Affine3> globals;
    for (const Character& c : scene.characters) {
        poseNodes(c, time, globals);
        const vtkIdType first = points->GetNumberOfPoints();
        for (const Affine3& g : globals) {
            const Vec3 p = g.translation();
            const vtkIdType id = points->InsertNextPoint(p.x(), p.y(), p.z());
            joints->InsertNextCell(1, &id);
        }
        for (std::size_t n = 0; n < c.nodes.size(); ++n) {
            const int parent = c.nodes[n].parent;
            if (parent >= 0 &&
                (globals[n].translation() - globals[std::size_t(parent)].translation())
                        .squaredNorm() > 0) {
                const vtkIdType ids[2] = {first + vtkIdType(parent), first + vtkIdType(n)};
                lines->InsertNextCell(2, ids);
            }
        }
    }
    skeletonLines_->SetPoints(points);
    skeletonLines_->SetLines(lines);
    skeletonLines_->SetVerts(joints);
    skeletonLines_->Modified();
}

void SceneActors::updateFrameGlyphs(const Scene& scene) {
    if (!frameGlyphs_ || !frameLines_) {
        return;
    }
    const auto& x = scene.particles.positions;
    vtkNew<vtkPoints> points;
    points->SetDataTypeToDouble();
    vtkNew<vtkCellArray> lines;
    vtkNew<vtkUnsignedCharArray> colours;
    colours->SetNumberOfComponents(3);
    colours->SetName("axis");
    for (const Body& body : scene.bodies) {
        if (!body.hasUVs() || body.triangleUVs.size() != body.triangles.size()) {
            continue;
        }
        for (std::size_t t = 0; t < body.triangles.size(); ++t) {
            const Triangle& tri = body.triangles[t];
            const auto& uv = body.triangleUVs[t];
            // (t_u, t_v) = (x1 - x0, x2 - x0) (uv1 - uv0, uv2 - uv0)^-1 in the current shape.
            Eigen::Matrix2d D;
            D << uv[1].x() - uv[0].x(), uv[2].x() - uv[0].x(), uv[1].y() - uv[0].y(),
                uv[2].y() - uv[0].y();
            if (!(std::abs(D.determinant()) > 1e-14)) {
                continue; // degenerate UVs: no material frame to show
            }
            Eigen::Matrix<double, 3, 2> E;
            E << x[tri[1]] - x[tri[0]], x[tri[2]] - x[tri[0]];
            const Eigen::Matrix<double, 3, 2> T = E * D.inverse();
            const Vec3 c = (x[tri[0]] + x[tri[1]] + x[tri[2]]) / 3.0;
            const double area = 0.5 * E.col(0).cross(E.col(1)).norm();
            const double length = 0.45 * std::sqrt(2 * area);
            const unsigned char red[3] = {230, 40, 40};
            const unsigned char green[3] = {40, 200, 60};
            for (int axis = 0; axis < 2; ++axis) {
                const Vec3 dir = T.col(axis).normalized();
                if (!dir.allFinite()) {
                    continue;
                }
                const Vec3 tip = c + length * dir;
                const vtkIdType ids[2] = {points->InsertNextPoint(c.x(), c.y(), c.z()),
                                          points->InsertNextPoint(tip.x(), tip.y(), tip.z())};
                lines->InsertNextCell(2, ids);
                colours->InsertNextTypedTuple(axis == 0 ? red : green);
            }
        }
    }
    frameLines_->SetPoints(points);
    frameLines_->SetLines(lines);
    frameLines_->GetCellData()->SetScalars(colours);
    frameLines_->Modified();
}

void SceneActors::setClip(const Scene& scene, bool enabled, const Vec3& normal,
                          const Vec3& origin) {
    clip_ = enabled;
    clipNormal_ = normal.normalized();
    clipOrigin_ = origin;
    for (std::size_t i = 0; i < bodies_.size() && i < scene.bodies.size(); ++i) {
        BodyActor& b = bodies_[i];
        if (scene.bodies[i].tets.empty()) {
            continue;
        }
        if (!b.clipActor) {
            b.clipSurface = vtkSmartPointer<vtkPolyData>::New();
            vtkNew<vtkLookupTable> colours;
            colours->SetNumberOfTableValues(2);
            const QColor c = colorFor(scene.bodies[i].kind);
            colours->SetTableValue(0, c.redF(), c.greenF(), c.blueF(), 1.0);
            colours->SetTableValue(1, 0.95, 0.1, 0.1, 1.0); // inverted: red
            colours->SetRange(0, 1);
            colours->Build();
            vtkNew<vtkPolyDataMapper> mapper;
            mapper->SetInputData(b.clipSurface);
            mapper->SetLookupTable(colours);
            mapper->SetScalarRange(0, 1);
            mapper->SetScalarModeToUseCellData();
            mapper->SetColorModeToMapScalars(); // unsigned char flags are not colours
            mapper->ScalarVisibilityOn();
            b.clipActor = vtkSmartPointer<vtkActor>::New();
            b.clipActor->SetMapper(mapper);
            b.clipActor->GetProperty()->SetAmbient(0.2);
            b.clipActor->GetProperty()->SetDiffuse(0.8);
            applyRepresentation(b.clipActor);
            renderer_->AddActor(b.clipActor);
        }
        setBodyVisible(i, b.visible);
    }
    updateClip(scene);
}

void SceneActors::updateClip(const Scene& scene) {
    invertedClipped_ = 0;
    if (!clip_) {
        return;
    }
    const auto& x = scene.particles.positions;
    for (std::size_t i = 0; i < bodies_.size() && i < scene.bodies.size(); ++i) {
        BodyActor& b = bodies_[i];
        const Body& body = scene.bodies[i];
        if (!b.clipSurface || body.tets.empty()) {
            continue;
        }
        // Keep the tets behind the plane; their faces used once are the visible boundary.
        std::vector<Tetrahedron> kept;
        std::vector<unsigned char> inverted;
        for (const Tetrahedron& t : body.tets) {
            const Vec3 c = (x[t[0]] + x[t[1]] + x[t[2]] + x[t[3]]) / 4.0;
            if ((c - clipOrigin_).dot(clipNormal_) <= 0) {
                kept.push_back(t);
            }
        }
        const std::vector<Triangle> faces = boundaryFaces(kept);
        // Which kept tet each face belongs to, for the inverted colour.
        std::unordered_map<std::uint64_t, bool> faceInverted;
        auto key = [](Triangle f) {
            std::sort(f.begin(), f.end());
            return (std::uint64_t(f[0]) * 2654435761ULL) ^ (std::uint64_t(f[1]) << 21) ^
                   (std::uint64_t(f[2]) << 42);
        };
        for (const Tetrahedron& t : kept) {
            const bool bad = !(signedVolume(x[t[0]], x[t[1]], x[t[2]], x[t[3]]) > 0);
            invertedClipped_ += bad;
            if (bad) {
                for (int skip = 0; skip < 4; ++skip) {
                    Triangle f{};
                    int k = 0;
                    for (int v = 0; v < 4; ++v) {
                        if (v != skip) {
                            f[k++] = t[v];
                        }
                    }
                    faceInverted[key(f)] = true;
                }
            }
        }
        vtkNew<vtkCellArray> polys;
        vtkNew<vtkUnsignedCharArray> flags;
        flags->SetName("inverted");
        for (const Triangle& f : faces) {
            const vtkIdType ids[3] = {vtkIdType(f[0] - body.firstParticle),
                                      vtkIdType(f[1] - body.firstParticle),
                                      vtkIdType(f[2] - body.firstParticle)};
            polys->InsertNextCell(3, ids);
            flags->InsertNextValue(faceInverted.count(key(f)) ? 1 : 0);
        }
        b.clipSurface->SetPoints(b.surface->GetPoints());
        b.clipSurface->SetPolys(polys);
        b.clipSurface->GetCellData()->SetScalars(flags);
        b.clipSurface->Modified();
    }
}

} // namespace pbd
