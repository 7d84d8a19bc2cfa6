// meshing: the prepare pipeline, project files (round trip, errors, atomic save) and mesh
// export (.vtu read back with VTK's own reader, Gmsh .msh 4.1 parsed strictly, TetGen files);
// every assimp test model either prepares or fails with a message.

#include "core/constraints/ConstraintBuilders.h"
#include "core/scene/Mass.h"
#include "core/scene/Topology.h"
#include "core/scenes/RigidScenes.h"
#include "core/scenes/SceneLibrary.h"
#include "core/solver/Solver.h"
#include "meshing/AirScenes.h"
#include "meshing/CookedAsset.h"
#include "meshing/Export.h"
#include "meshing/Prepare.h"
#include "meshing/ProjectFile.h"

#include "MeshingFixtures.h"

#include <QDirIterator>
#include <QTemporaryDir>
#include <QTest>

#include <vtkCellData.h>
#include <vtkDataArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLUnstructuredGridReader.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

using namespace pbd;
using namespace pbd::test;

namespace {

// A prepared scene with everything the project file holds: tets with frames, air, cloth with
// UVs, default constraints, a collider, attachments, pressure and non-default solver settings.
Scene preparedScene() {
    PrepareOptions options;
    options.tetrahedralize = true;
    options.air = true;
    options.frames = true;
    options.tetFrames = TetFrameMode::NearestSurface;
    options.defaultConstraints = true;
    options.tet.maxVolume = 0.02;
    PrepareResult r = prepareScene(twoBoxesAndCloth(), options);
    if (!r.report.ok()) {
        qFatal("prepare failed: %s", r.report.error.c_str());
    }
    Scene s = std::move(r.scene);
    s.colliders.push_back(Collider::sphere(Vec3(3, 0, 0), 0.4));
    s.colliders.push_back(
        Collider::mesh({Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0)}, {{0, 1, 2}}));
    s.colliders.back().friction = 0.7;
    s.constraints.attachments.add(3, Vec3(0.1, 0.2, 0.3), 1e-4, Vec3(0, 1, 0));
    PressureConstraint p;
    p.body = "upper";
    p.particles = {1, 2, 3};
    p.localTriangles = {{0, 1, 2}};
    p.restVolume6 = 0.5;
    p.pressure = 1.5;
    s.constraints.pressure.push_back(p);
    s.solver.method = SolverMethod::Pbd;
    s.solver.substeps = 7;
    s.solver.gravity = Vec3(0.1, -3, 0);
    s.solver.selfCollision = true;
    s.particles.velocities[5] = Vec3(1.0 / 3.0, -2e-17, 1e300);
    ensureConstraintGroups(s); // the attachment and the pressure get theirs
    return s;
}

std::string readText(const QString& path) {
    std::ifstream in(path.toStdString());
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

} // namespace

class TestExport : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;

private slots:
    void prepareReportsCountsAndTimings() {
        PrepareOptions options;
        options.tetrahedralize = true;
        options.air = true;
        options.frames = true;
        std::vector<double> progress;
        PrepareResult r =
            prepareScene(twoBoxesAndCloth(), options, [&](double f, const std::string&) {
                if (f >= 0) {
                    progress.push_back(f);
                }
                return true;
            });
        QVERIFY2(r.report.ok(), r.report.error.c_str());
        QVERIFY(std::is_sorted(progress.begin(), progress.end()));
        QCOMPARE(progress.back(), 1.0);
        QCOMPARE(r.report.tets.size(), std::size_t(2));
        QVERIFY(r.scene.bodies[0].kind == BodyKind::TetBody);
        QVERIFY(r.scene.bodies[2].kind == BodyKind::Cloth);
        QCOMPARE(r.report.invertedTets, std::size_t(0));
        QVERIFY(r.report.air.tets > 0);
        // Masses: the lower box is 1 m^3 of 1000 kg/m^3, the sheet 1.6^2 m^2 of 0.2 kg/m^2.
        QVERIFY(std::abs(totalMass(r.scene.particles, r.scene.bodies[0]) - 1000) < 1e-9);
        QVERIFY(std::abs(totalMass(r.scene.particles, r.scene.bodies[2]) - 0.512) < 1e-12);
        const nlohmann::json j = nlohmann::json::parse(r.report.toJson());
        QCOMPARE(j["ok"].get<bool>(), true);
        QCOMPARE(j["bodies"].get<std::size_t>(), std::size_t(3));
        QCOMPARE(j["surface_triangles_preserved"].get<std::size_t>(),
                 j["surface_triangles"].get<std::size_t>());
        QCOMPARE(j["air_tets"].get<std::size_t>(), r.scene.air.tets.size());
        QCOMPARE(j["inverted_tets"].get<int>(), 0);
        QVERIFY(j["timings"]["tetrahedralize"].get<double>() > 0);
        QVERIFY(j["timings"]["air"].get<double>() > 0);
        QCOMPARE(j["per_body"][0]["tets"].get<std::size_t>(), r.scene.bodies[0].tets.size());
        QCOMPARE(j["triangle_frames_from_uv"].get<std::size_t>(),
                 r.scene.bodies[2].triangles.size());
        // The input was not touched.
        QVERIFY(twoBoxesAndCloth().bodies[0].tets.empty());
    }

    void intersectingBodiesStopBeforeTetgen() {
        Scene scene;
        addBoxSurface(scene, Vec3(0, 0, 0), Vec3(1, 1, 1), "left");
        addBoxSurface(scene, Vec3(0.5, 0.3, 0.2), Vec3(1, 1, 1), "right");
        PrepareOptions options;
        options.tetrahedralize = true;
        options.overlaps = OverlapMode::Keep; // the default merges them (tst_surface_repair)
        const PrepareResult r = prepareScene(scene, options);
        QVERIFY(!r.report.ok());
        QVERIFY2(r.report.error.find("bodies 'left' and 'right' intersect") == 0,
                 r.report.error.c_str());
        QVERIFY(r.report.error.find("TetGen was not run") != std::string::npos);
        QVERIFY(r.report.tets.empty());
        // Without meshing the same problem is only a warning.
        options.tetrahedralize = false;
        QVERIFY(prepareScene(scene, options).report.ok());
    }

    void cancelStopsThePipeline() {
        PrepareOptions options;
        options.tetrahedralize = true;
        const PrepareResult r = prepareScene(twoBoxesAndCloth(), options,
                                             [](double f, const std::string&) { return f < 0.1; });
        QCOMPARE(r.report.error, kCancelledMessage);
    }

    void projectRoundTripIsIdentical() {
        const Scene s = preparedScene();
        const std::string json = projectToJson(s);
        Result<Scene> back = projectFromJson(json);
        QVERIFY2(back.ok(), back.error().c_str());
        QCOMPARE(projectToJson(*back), json);
        QCOMPARE(back->particles.positions, s.particles.positions);
        QCOMPARE(back->particles.velocities, s.particles.velocities);
        QCOMPARE(back->particles.inverseMasses, s.particles.inverseMasses);
        QCOMPARE(back->bodies.size(), s.bodies.size());
        for (std::size_t b = 0; b < s.bodies.size(); ++b) {
            QCOMPARE(back->bodies[b].name, s.bodies[b].name);
            QVERIFY(back->bodies[b].kind == s.bodies[b].kind);
            QCOMPARE(back->bodies[b].triangles, s.bodies[b].triangles);
            QCOMPARE(back->bodies[b].tets, s.bodies[b].tets);
            QCOMPARE(back->bodies[b].triangleUVs, s.bodies[b].triangleUVs);
            QCOMPARE(back->bodies[b].tetFrames, s.bodies[b].tetFrames);
        }
        QVERIFY(!s.bodies[0].tetFrames.empty());
        QCOMPARE(back->air.tets, s.air.tets);
        QCOMPARE(back->air.firstParticle, s.air.firstParticle);
        QCOMPARE(back->constraints.strainTets.qInverse, s.constraints.strainTets.qInverse);
        QCOMPARE(back->constraints.strainTets.compliance, s.constraints.strainTets.compliance);
        QCOMPARE(back->constraints.strainTriangles.rest, s.constraints.strainTriangles.rest);
        QCOMPARE(back->constraints.bending.restAngle, s.constraints.bending.restAngle);
        QCOMPARE(back->constraints.volume.restValue, s.constraints.volume.restValue);
        QCOMPARE(back->constraints.attachments.targetVelocity,
                 s.constraints.attachments.targetVelocity);
        QCOMPARE(back->constraints.pressure[0].restVolume6, 0.5);
        QCOMPARE(back->colliders.size(), std::size_t(2));
        QCOMPARE(back->colliders[1].friction, 0.7);
        QCOMPARE(back->colliders[1].triangles, s.colliders[1].triangles);
        QVERIFY(back->solver.method == SolverMethod::Pbd);
        QCOMPARE(back->solver.substeps, 7);
        QCOMPARE(back->solver.gravity, s.solver.gravity);
        QVERIFY(!s.constraintGroups.empty());
        QVERIFY(back->constraintGroups == s.constraintGroups);
        QCOMPARE(back->constraints.strainTets.group, s.constraints.strainTets.group);
        QCOMPARE(back->constraints.strainTets.measure, s.constraints.strainTets.measure);

        // A hard (infinite) modulus and a disabled group round-trip too.
        Scene edited = s;
        for (std::size_t g = 0; g < edited.constraintGroups.size(); ++g) {
            ConstraintGroup& group = edited.constraintGroups[g];
            if (group.type == ConstraintType::StrainTet) {
                group.material[2] = kRigid;
                group.restStretch[1] = 1.25;
            } else {
                group.enabled = false;
            }
            applyConstraintGroup(edited.constraints, int(g), group);
        }
        const std::string editedJson = projectToJson(edited);
        Result<Scene> editedBack = projectFromJson(editedJson);
        QVERIFY2(editedBack.ok(), editedBack.error().c_str());
        QVERIFY(editedBack->constraintGroups == edited.constraintGroups);
        QCOMPARE(projectToJson(*editedBack), editedJson);

        // The isometric bending model keeps its weights; an unknown model is named.
        Scene isometric = s;
        setBendingModel(isometric.constraints, isometric.particles.positions,
                        BendingModel::Isometric);
        QVERIFY(isometric.constraints.bending.size() > 0);
        const std::string isometricJson = projectToJson(isometric);
        Result<Scene> isometricBack = projectFromJson(isometricJson);
        QVERIFY2(isometricBack.ok(), isometricBack.error().c_str());
        QVERIFY(isometricBack->constraints.bending.model == BendingModel::Isometric);
        QCOMPARE(isometricBack->constraints.bending.weight, isometric.constraints.bending.weight);
        QCOMPARE(isometricBack->constraints.bending.lambdaYZ[0].size(),
                 isometric.constraints.bending.size());
        QCOMPARE(projectToJson(*isometricBack), isometricJson);
        nlohmann::json unknown = nlohmann::json::parse(json);
        unknown["constraints"]["bending"]["model"] = "quadratic";
        Result<Scene> refused = projectFromJson(unknown.dump(), "bad.json");
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().find("unknown bending model 'quadratic'") != std::string::npos,
                 refused.error().c_str());

        // Through a file, too.
        const QString path = dir_.filePath("scene.pbdlab.json");
        QVERIFY(saveProject(s, path.toStdString()).ok());
        Result<Scene> loaded = loadProject(path.toStdString());
        QVERIFY2(loaded.ok(), loaded.error().c_str());
        QCOMPARE(projectToJson(*loaded), json);
    }

    void formatOneProjectsGetTheirGroups() {
        // A project written before constraint groups (format 1: no groups, no measures) loads
        // with one group per body and type, its constraints unchanged.
        const Scene s = preparedScene();
        nlohmann::json j = nlohmann::json::parse(projectToJson(s));
        j["version"] = 1;
        j.erase("constraintGroups");
        for (auto& [name, batch] : j["constraints"].items()) {
            if (batch.is_object()) {
                batch.erase("group");
                batch.erase("measure");
            } else {
                for (auto& p : batch) {
                    p.erase("group");
                }
            }
        }
        Result<Scene> old = projectFromJson(j.dump(), "old.json");
        QVERIFY2(old.ok(), old.error().c_str());
        QCOMPARE(old->constraintGroups.size(), s.constraintGroups.size());
        QCOMPARE(old->constraints.strainTets.compliance, s.constraints.strainTets.compliance);
        QCOMPARE(old->constraints.volume.compliance, s.constraints.volume.compliance);
        QCOMPARE(old->constraints.strainTriangles.compliance,
                 s.constraints.strainTriangles.compliance);
        for (std::size_t e = 0; e < s.constraints.strainTets.size(); ++e) {
            QVERIFY(std::abs(old->constraints.strainTets.measure[e] /
                                 s.constraints.strainTets.measure[e] -
                             1) < 1e-9);
        }
        // The same groups (made in body order); the moduli from the recomputed measures,
        // within rounding.
        for (const ConstraintGroup& b : s.constraintGroups) {
            const auto a = std::find_if(old->constraintGroups.begin(), old->constraintGroups.end(),
                                        [&](const ConstraintGroup& g) { return g.name == b.name; });
            QVERIFY2(a != old->constraintGroups.end(), b.name.c_str());
            QVERIFY(a->type == b.type && a->body == b.body && a->pbdStiffness == b.pbdStiffness);
            for (int k = 0; k < materialComponents(a->type); ++k) {
                QVERIFY(a->material[k] == b.material[k] ||
                        std::abs(a->material[k] / b.material[k] - 1) < 1e-9);
            }
        }
        QVERIFY(validateScene(*old).empty());
    }

    void a2DProjectRoundTripsWithItsAirAndSettings() {
        // A 2D scene: air triangles, signed planar areas, a rope; and the air settings.
        Result<Scene> made = makeAirScene("air-boxes-2d");
        QVERIFY2(made.ok(), made.error().c_str());
        Scene s = std::move(made).value();
        s.solver.airOptimizationInterval = 3;
        s.solver.airQualityThreshold = 0.25;
        s.solver.airContactDistance = 0.004;
        s.solver.airFriction = 0.8;
        s.solver.airIterations = 40;
        const std::string json = projectToJson(s);
        Result<Scene> back = projectFromJson(json);
        QVERIFY2(back.ok(), back.error().c_str());
        QCOMPARE(projectToJson(*back), json);
        QCOMPARE(back->air.triangles, s.air.triangles);
        QVERIFY(back->air.tets.empty());
        QCOMPARE(back->constraints.planarArea.restValue, s.constraints.planarArea.restValue);
        QCOMPARE(back->constraints.planarArea.compliance, s.constraints.planarArea.compliance);
        QCOMPARE(back->solver.airOptimizationInterval, 3);
        QCOMPARE(back->solver.airQualityThreshold, 0.25);
        QCOMPARE(back->solver.airContactDistance, 0.004);
        QCOMPARE(back->solver.airFriction, 0.8);
        QCOMPARE(back->solver.airIterations, 40);
        QVERIFY(validateScene(*back).empty());
        nlohmann::json broken = nlohmann::json::parse(json);
        broken["solver"]["airIterations"] = -2;
        Result<Scene> refused = projectFromJson(broken.dump());
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().find("airIterations") != std::string::npos,
                 refused.error().c_str());
        // The .vtu has the air triangles as cells of region -1.
        const QString vtu = dir_.filePath("air2d.vtu");
        QVERIFY(exportVtu(s, vtu.toStdString()).ok());
        vtkNew<vtkXMLUnstructuredGridReader> reader;
        reader->SetFileName(vtu.toLocal8Bit().constData());
        reader->Update();
        vtkDataArray* region = reader->GetOutput()->GetCellData()->GetArray("region");
        QVERIFY(region != nullptr);
        std::size_t air = 0;
        for (vtkIdType c = 0; c < region->GetNumberOfTuples(); ++c) {
            air += region->GetTuple1(c) == -1;
        }
        QCOMPARE(air, s.air.triangles.size());
    }

    void rigidProjectRoundTripsAndSimulatesTheSame() {
        // The chain (joints) with a hull dropped on the ground and changed rigid settings:
        // written, read back and stepped, it gives the same result bit for bit.
        Result<Scene> made = makeScene("chain");
        QVERIFY2(made.ok(), made.error().c_str());
        Scene s = std::move(made).value();
        s.rigidBodies.push_back(rigidGround());
        RigidBody rock;
        rock.name = "rock";
        Result<RigidShape> hull = RigidShape::hull(
            {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1), Vec3(0.6, 0.6, 0.6)});
        QVERIFY2(hull.ok(), hull.error().c_str());
        rock.shapes.push_back(*hull);
        rock.x = Vec3(3, 1, 0);
        finishRigidBody(rock);
        rock.setAngularVelocity(Vec3(0, 2, 1));
        s.rigidBodies.push_back(rock);
        s.rigidJoints[3].limit = true;
        s.rigidJoints[3].lowerAngle = -0.3;
        s.solver.rigid.stabilisation = StackStabilisation::ShockPropagation;
        s.solver.rigid.iterations = 12;
        s.solver.rigid.substeps = 4;
        s.solver.rigid.contactHertz = 45;
        s.solver.rigid.refreshDistance = 0;
        s.solver.rigid.aggressiveSleep = true;
        s.solver.rigid.separatePush = false;
        s.solver.exactAngularMomentum = true;
        s.solver.continuousCollision = true;
        Result<Scene> back = projectFromJson(projectToJson(s));
        QVERIFY2(back.ok(), back.error().c_str());
        QCOMPARE(back->rigidBodies.size(), s.rigidBodies.size());
        QCOMPARE(back->rigidJoints.size(), s.rigidJoints.size());
        QCOMPARE(back->solver.rigid.iterations, 12);
        QVERIFY(back->solver.rigid == s.solver.rigid);
        QVERIFY(back->solver.rigid.aggressiveSleep);
        QVERIFY(!back->solver.rigid.separatePush);
        QVERIFY(back->solver.exactAngularMomentum);
        QVERIFY(back->solver.continuousCollision);
        QVERIFY(back->solver.rigid.stabilisation == StackStabilisation::ShockPropagation);
        QVERIFY(back->rigidJoints[3].limit);
        QCOMPARE(back->rigidBodies.back().shapes[0].polyhedron->faces.size(), std::size_t(6));
        Scene original = s;
        Solver a(original), b(*back);
        for (int i = 0; i < 60; ++i) {
            a.step();
            b.step();
        }
        for (std::size_t i = 0; i < original.rigidBodies.size(); ++i) {
            QCOMPARE(back->rigidBodies[i].x, original.rigidBodies[i].x);
            QCOMPARE(back->rigidBodies[i].q.coeffs(), original.rigidBodies[i].q.coeffs());
        }
        // A body that refers to a missing body is named.
        std::string text = projectToJson(s);
        const std::string key = "\"bodyB\":0";
        const std::size_t at = text.find(key);
        QVERIFY(at != std::string::npos);
        text.replace(at, key.size(), "\"bodyB\":99");
        Result<Scene> broken = projectFromJson(text);
        QVERIFY(!broken.ok());
        QVERIFY2(broken.error().find("joint 0 refers to bodies -1 and 99") != std::string::npos,
                 broken.error().c_str());
    }

    void clothOnRigidProjectKeepsItsAttachments() {
        Result<Scene> made = makeScene("cloth-on-rigid");
        QVERIFY2(made.ok(), made.error().c_str());
        const std::string json = projectToJson(*made);
        Result<Scene> back = projectFromJson(json);
        QVERIFY2(back.ok(), back.error().c_str());
        QCOMPARE(back->rigidAttachments.size(), made->rigidAttachments.size());
        QVERIFY(back->rigidAttachments.size() > 30);
        QCOMPARE(projectToJson(*back), json);
        Scene a = *made;
        Solver sa(a), sb(*back);
        for (int i = 0; i < 30; ++i) {
            sa.step();
            sb.step();
        }
        QCOMPARE(back->particles.positions, a.particles.positions);
        QCOMPARE(back->rigidBodies[3].x, a.rigidBodies[3].x);
    }

    void meshesBecomeRigidHullsOnAGround() {
        // A box and a torus prepared as rigid bodies: each the convex hull of its vertices, of
        // the density given, on a static ground; stepped, they come to rest on it.
        Scene input;
        addBoxSurface(input, Vec3(0, 1, 0), Vec3(0.4, 0.2, 0.6), "box");
        addTorusSurface(input, Vec3(2, 0.5, 0), "torus");
        PrepareOptions options;
        options.rigidHulls = true;
        options.rigidGround = true;
        options.density = 500;
        PrepareResult prepared = prepareScene(input, options);
        QVERIFY2(prepared.report.ok(), prepared.report.error.c_str());
        Scene& scene = prepared.scene;
        QCOMPARE(scene.rigidBodies.size(), std::size_t(3));
        QVERIFY(scene.particles.size() == 0 && scene.bodies.empty());
        QVERIFY(scene.rigidBodies[0].motion == RigidMotion::Static);
        const RigidBody& box = scene.rigidBodies[1];
        QCOMPARE(box.name, std::string("box"));
        QCOMPARE(box.shapes[0].polyhedron->faces.size(), std::size_t(6));
        QVERIFY(std::abs(box.mass - 500 * 0.4 * 0.2 * 0.6) < 1e-9);
        QVERIFY((box.x - Vec3(0, 1, 0)).norm() < 1e-12);
        const RigidBody& torus = scene.rigidBodies[2];
        // The hull of a torus is larger than the torus: more than the tube's volume.
        const Real tube = 2 * M_PI * M_PI * 0.5 * 0.2 * 0.2;
        QVERIFY(torus.mass > 500 * tube);
        QVERIFY(std::any_of(prepared.report.lines.begin(), prepared.report.lines.end(),
                            [](const ReportLine& l) {
                                return l.text.find("rigid convex hull") != std::string::npos;
                            }));
        Solver solver(scene);
        for (int i = 0; i < 180; ++i) {
            solver.step();
        }
        QVERIFY(std::abs(scene.rigidBodies[1].x.y() - (input.bounds().min.y() + 0.1 - 0.002)) <
                0.01);
        QVERIFY(scene.rigidBodies[1].v.norm() < 0.01);
        // Flat bodies cannot be hulls, and hulls are not tetrahedralized: both named.
        Scene flat;
        addSheet(flat, Vec3::Zero(), 1.0, 5, "sheet");
        PrepareResult refused = prepareScene(flat, options);
        QVERIFY(!refused.report.ok());
        QVERIFY2(refused.report.error.find("body 'sheet' cannot be a rigid body") !=
                     std::string::npos,
                 refused.report.error.c_str());
        options.tetrahedralize = true;
        QVERIFY(!prepareScene(input, options).report.ok());
    }

    void brokenProjectsNameTheProblem() {
        const std::string good = projectToJson(preparedScene());
        QVERIFY(projectFromJson("{not json", "x.json").error().find("x.json is not valid JSON") ==
                0);
        QVERIFY(projectFromJson("{}", "x.json").error().find("not a PBD Lab project") !=
                std::string::npos);
        // Truncated, not UTF-8, empty, a number out of range, from a newer PBD Lab: each says so.
        QVERIFY(projectFromJson(good.substr(0, good.size() / 2), "x.json")
                    .error()
                    .starts_with("x.json is not valid JSON (line 1, column "));
        QVERIFY(projectFromJson(good.substr(0, good.size() / 2), "x.json")
                    .error()
                    .ends_with(": the file ends early (it is truncated))"));
        QCOMPARE(projectFromJson("{\"name\": \"\xff\"}", "x.json").error(),
                 std::string("x.json is not valid JSON (line 1, column 11: invalid string: "
                             "ill-formed UTF-8 byte)"));
        QCOMPARE(projectFromJson(" \n", "x.json").error(), std::string("x.json is empty"));
        QVERIFY(projectFromJson("[1e999]", "x.json").error().find("number overflow") !=
                std::string::npos);
        nlohmann::json future = nlohmann::json::parse(good);
        future["version"] = 99;
        QVERIFY(projectFromJson(future.dump(), "x.json").error().find("newer PBD Lab") !=
                std::string::npos);
        nlohmann::json j = nlohmann::json::parse(good);
        j["bodies"][1].erase("tets");
        QCOMPARE(projectFromJson(j.dump(), "x.json").error(),
                 std::string("x.json.bodies[1]: missing 'tets'"));
        j = nlohmann::json::parse(good);
        j["constraints"]["distance"]["restLength"] = {1.0};
        j["constraints"]["distance"]["particles"] = {0, 1};
        j["constraints"]["distance"]["compliance"] = {{0.0}};
        j["constraints"]["distance"]["stiffness"] = {{1.0}};
        QVERIFY(projectFromJson(j.dump(), "x.json")
                    .error()
                    .find("x.json.constraints.distance: group or measure arrays do not match") ==
                0);
        j["constraints"]["distance"]["group"] = {-1};
        j["constraints"]["distance"]["measure"] = {1.0};
        QVERIFY(projectFromJson(j.dump(), "x.json").ok());
        j["constraints"]["distance"]["group"] = {99};
        QVERIFY2(projectFromJson(j.dump(), "x.json").error().find("is in group 99") !=
                     std::string::npos,
                 projectFromJson(j.dump(), "x.json").error().c_str());
        j["constraints"]["distance"]["group"] = {-1};
        j["constraints"]["distance"]["particles"] = {0, 999999};
        QVERIFY(projectFromJson(j.dump(), "x.json").error().find("refers to particle 999999") !=
                std::string::npos);
        j = nlohmann::json::parse(good);
        j["air"]["tets"][0] = 123456789;
        QVERIFY(projectFromJson(j.dump(), "x.json").error().find("air tetrahedron 0") !=
                std::string::npos);
        j = nlohmann::json::parse(good);
        j["version"] = kProjectFormatVersion + 1;
        QVERIFY(projectFromJson(j.dump(), "x.json").error().find("newer PBD Lab") !=
                std::string::npos);
        QVERIFY(loadProject("/no/such/file.json").error().find("cannot open") == 0);
    }

    void cookedAssetStepsLikeItsScene_data() {
        QTest::addColumn<QString>("scene");
        QTest::newRow("prepared") << QString(); // tets, frames, air, cloth, pressure, colliders
        for (const char* name : {"cloth-sbd", "tetbar", "air-boxes", "air-boxes-2d",
                                 "cloth-on-rigid", "drape:isometric"}) {
            QTest::newRow(name) << QString::fromLatin1(name);
        }
    }

    void cookedAssetStepsLikeItsScene() {
        // The asset loads to a scene that steps bit for bit as the one it was cooked from, with
        // its constraints in the asset's colour order, on two threads.
        QFETCH(QString, scene);
        Scene s;
        if (scene.isEmpty()) {
            s = preparedScene();
            s.particles.velocities[5] = Vec3::Zero();
        } else {
            const QStringList parts = scene.split(QLatin1Char(':'));
            Result<Scene> made = makeAnyScene(parts[0].toStdString());
            QVERIFY2(made.ok(), made.error().c_str());
            s = std::move(made).value();
            if (parts.size() > 1) { // NAME:MODEL, its bending of that model
                setBendingModel(s.constraints, s.particles.positions,
                                *bendingModelFromString(parts[1].toStdString()));
            }
        }
        s.solver.threads = 2;
        const std::string text = cookedAssetToJson(s);
        Result<Scene> back = cookedAssetFromJson(text, "asset.json");
        QVERIFY2(back.ok(), back.error().c_str());
        QVERIFY(back->constraints.isColoured() || s.constraints.batchElementCount() == 0);
        QCOMPARE(back->constraints.elementCount(), s.constraints.elementCount());
        QCOMPARE(back->constraintGroups.size(), s.constraintGroups.size());
        for (std::size_t g = 0; g < s.constraintGroups.size(); ++g) {
            const auto found = std::find_if(
                back->constraintGroups.begin(), back->constraintGroups.end(),
                [&](const ConstraintGroup& x) { return x.name == s.constraintGroups[g].name; });
            QVERIFY2(found != back->constraintGroups.end(), s.constraintGroups[g].name.c_str());
            QCOMPARE(
                constraintGroupSize(back->constraints, int(found - back->constraintGroups.begin())),
                constraintGroupSize(s.constraints, int(g)));
        }
        QCOMPARE(back->air.tets, s.air.tets);
        QCOMPARE(back->air.triangles, s.air.triangles);
        QCOMPARE(back->colliders.size(), s.colliders.size());
        QCOMPARE(back->rigidBodies.size(), s.rigidBodies.size());
        QCOMPARE(back->rigidAttachments.size(), s.rigidAttachments.size());
        Scene original = s;
        Solver a(original), b(*back);
        for (int i = 0; i < 40; ++i) {
            a.step();
            b.step();
        }
        QCOMPARE(back->particles.positions, original.particles.positions);
        for (std::size_t i = 0; i < original.rigidBodies.size(); ++i) {
            QCOMPARE(back->rigidBodies[i].x, original.rigidBodies[i].x);
        }
        // Cooked again, the loaded scene gives the same document.
        Result<Scene> again = cookedAssetFromJson(text);
        QVERIFY(again.ok());
        QCOMPARE(cookedAssetToJson(*again), text);
    }

    void cookedAssetIsLaidOutForALoader() {
        // Element-major arrays, colour ranges whose colours share no particle, frames that are
        // orthonormal with the normal of their triangle.
        Result<Scene> made = makeAnyScene("cloth-sbd");
        QVERIFY(made.ok());
        const Scene& s = *made;
        const nlohmann::json j = nlohmann::json::parse(cookedAssetToJson(s, 1));
        QCOMPARE(j["format"].get<std::string>(), std::string("pbdlab-asset"));
        QCOMPARE(j["units"]["length"].get<std::string>(), std::string("m"));
        QCOMPARE(j["particles"]["count"].get<std::size_t>(), s.particles.size());
        const nlohmann::json& tris = j["constraints"]["strainTriangles"];
        const std::size_t n = tris["count"].get<std::size_t>();
        QCOMPARE(n, s.constraints.strainTriangles.size());
        QCOMPARE(tris["compliance"].size(), 3 * n);
        QCOMPARE(tris["qInverse"].size(), 4 * n);
        QCOMPARE(tris["rest"].size(), 3 * n);
        // Element e's stretch u, stretch v and shear compliances are values 3e .. 3e+2: the
        // shear (1e3 N/m) is ten times softer than the stretch (1e4 N/m).
        const Real uAlpha = tris["compliance"][0].get<Real>();
        const Real vAlpha = tris["compliance"][1].get<Real>();
        const Real shearAlpha = tris["compliance"][2].get<Real>();
        QCOMPARE(vAlpha, uAlpha);
        QVERIFY(std::abs(shearAlpha / uAlpha - 10) < 1e-9);
        const int colours = j["constraints"]["colours"].get<int>();
        QVERIFY(colours > 1);
        const auto offsets = tris["colourOffsets"].get<std::vector<std::size_t>>();
        QCOMPARE(offsets.size(), std::size_t(colours) + 1);
        QCOMPARE(offsets.back(), n);
        const auto particles = tris["particles"].get<std::vector<Index>>();
        for (int c = 0; c < colours; ++c) {
            std::set<Index> used;
            for (std::size_t e = offsets[c]; e < offsets[c + 1]; ++e) {
                for (int k = 0; k < 3; ++k) {
                    QVERIFY2(used.insert(particles[3 * e + k]).second,
                             "a colour shares a particle");
                }
            }
        }
        const nlohmann::json& cloth = j["bodies"][0];
        const auto frames = cloth["triangleFrames"].get<std::vector<Real>>();
        QCOMPARE(frames.size(), 9 * s.bodies[0].triangles.size());
        for (std::size_t t = 0; t < s.bodies[0].triangles.size(); t += 97) {
            const Mat3 f = Eigen::Map<const Mat3>(&frames[9 * t]);
            QVERIFY((f.transpose() * f - Mat3::Identity()).norm() < 1e-12);
            const Triangle& tri = s.bodies[0].triangles[t];
            const Vec3 normal =
                (s.particles.positions[tri[1]] - s.particles.positions[tri[0]])
                    .cross(s.particles.positions[tri[2]] - s.particles.positions[tri[0]])
                    .normalized();
            QVERIFY(std::abs(f.col(2).dot(normal) - 1) < 1e-12);
        }
    }

    void brokenCookedAssetsNameTheProblem_data() {
        QTest::addColumn<QString>("pointer");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("message");
        QTest::newRow("format") << "/format"
                                << R"("pbdlab-project")"
                                << "not a PBD Lab cooked asset";
        QTest::newRow("newer") << "/version"
                               << "99"
                               << "newer PBD Lab (asset version 99)";
        QTest::newRow("compliance length") << "/constraints/strainTriangles/compliance"
                                           << "[1, 2]"
                                           << "constraints.strainTriangles.compliance: 2 values";
        QTest::newRow("count") << "/constraints/bending/count"
                               << "3"
                               << "constraints.bending.count: 3 elements said";
        QTest::newRow("colours") << "/constraints/strainTriangles/colourOffsets/1"
                                 << "1"
                                 << "two constraints of one colour share a particle";
        QTest::newRow("offsets") << "/constraints/colours"
                                 << "2"
                                 << "colourOffsets: expected 3 offsets";
        QTest::newRow("particle") << "/constraints/distance/particles"
                                  << "[0, 99999]"
                                  << "99999";
        QTest::newRow("velocities") << "/particles/velocities"
                                    << "[0, 0, 0]"
                                    << "particles: count, positions, velocities";
        QTest::newRow("bending model") << "/constraints/bending/model"
                                       << R"("hinge")"
                                       << "constraints.bending.model: unknown value 'hinge'";
    }

    void brokenCookedAssetsNameTheProblem() {
        QFETCH(QString, pointer);
        QFETCH(QString, value);
        QFETCH(QString, message);
        Result<Scene> made = makeAnyScene("cloth-sbd");
        QVERIFY(made.ok());
        nlohmann::json j = nlohmann::json::parse(cookedAssetToJson(*made));
        j[nlohmann::json::json_pointer(pointer.toStdString())] =
            nlohmann::json::parse(value.toStdString());
        if (pointer.endsWith("distance/particles")) {
            j["constraints"]["distance"]["count"] = 1;
            j["constraints"]["distance"]["compliance"] = {0};
            j["constraints"]["distance"]["stiffness"] = {1};
            j["constraints"]["distance"]["restLength"] = {1};
            j["constraints"]["distance"]["colourOffsets"] =
                std::vector<int>(j["constraints"]["colours"].get<std::size_t>() + 1, 1);
            j["constraints"]["distance"]["colourOffsets"][0] = 0;
        }
        const Result<Scene> loaded = cookedAssetFromJson(j.dump(), "bad.json");
        QVERIFY(!loaded.ok());
        QVERIFY2(QString::fromStdString(loaded.error()).contains(message), loaded.error().c_str());
        QVERIFY2(loaded.error().starts_with("bad.json"), loaded.error().c_str());
    }

    void sceneFilesOpenProjectsAndAssets() {
        Result<Scene> made = makeAnyScene("cloth-sbd");
        QVERIFY(made.ok());
        const QString asset = dir_.filePath("cloth.asset.json");
        const QString project = dir_.filePath("cloth.project.json");
        QVERIFY(exportCookedAsset(*made, asset.toStdString()).ok());
        QVERIFY(saveProject(*made, project.toStdString()).ok());
        Result<Scene> a = loadSceneFile(asset.toStdString());
        Result<Scene> p = loadSceneFile(project.toStdString());
        QVERIFY2(a.ok(), a.error().c_str());
        QVERIFY2(p.ok(), p.error().c_str());
        QCOMPARE(a->particles.positions, p->particles.positions);
        QCOMPARE(a->constraints.elementCount(), p->constraints.elementCount());
        // A project is not an asset, and a missing file is named.
        QVERIFY(!cookedAssetFromJson(readText(project)).ok());
        const Result<Scene> missing = loadSceneFile(dir_.filePath("none.json").toStdString());
        QVERIFY(!missing.ok());
        QVERIFY2(missing.error().find("none.json") != std::string::npos, missing.error().c_str());
    }

    void failedSaveKeepsThePreviousFile() {
        const QString path = dir_.filePath("keep.json");
        const Scene s = preparedScene();
        QVERIFY(saveProject(s, path.toStdString()).ok());
        const std::string before = readText(path);
        // The writer cannot create its temporary file: the save fails, the old file stays.
        QVERIFY(QDir().mkpath(path + ".saving"));
        Scene changed = s;
        changed.name = "changed";
        Result<bool> saved = saveProject(changed, path.toStdString());
        QVERIFY(!saved.ok());
        QCOMPARE(readText(path), before);
        QVERIFY(loadProject(path.toStdString()).ok());
        QVERIFY(QDir(path + ".saving").removeRecursively());
        QVERIFY(saveProject(changed, path.toStdString()).ok());
        QCOMPARE(loadProject(path.toStdString())->name, std::string("changed"));
    }

    void vtuReadsBackInVtk() {
        const Scene s = preparedScene();
        const QString path = dir_.filePath("scene.vtu");
        QVERIFY(exportVtu(s, path.toStdString()).ok());
        vtkNew<vtkXMLUnstructuredGridReader> reader;
        reader->SetFileName(path.toUtf8().constData());
        reader->Update();
        vtkUnstructuredGrid* grid = reader->GetOutput();
        QCOMPARE(std::size_t(grid->GetNumberOfPoints()), s.particles.size());
        const std::size_t tets = s.tetCount() + s.air.tets.size();
        const std::size_t clothTriangles = s.bodies[2].triangles.size();
        QCOMPARE(std::size_t(grid->GetNumberOfCells()), tets + clothTriangles);
        QCOMPARE(grid->GetCellType(0), int(VTK_TETRA));
        QCOMPARE(grid->GetCellType(vtkIdType(tets)), int(VTK_TRIANGLE));
        vtkDataArray* region = grid->GetCellData()->GetArray("region");
        QVERIFY(region != nullptr);
        std::map<int, std::size_t> perRegion;
        for (vtkIdType c = 0; c < grid->GetNumberOfCells(); ++c) {
            perRegion[int(region->GetTuple1(c))]++;
        }
        QCOMPARE(perRegion[0], s.bodies[0].tets.size());
        QCOMPARE(perRegion[1], s.bodies[1].tets.size());
        QCOMPARE(perRegion[-1], s.air.tets.size());
        QCOMPARE(perRegion[2], clothTriangles);
        vtkDataArray* quality = grid->GetCellData()->GetArray("quality");
        QVERIFY(quality != nullptr);
        for (vtkIdType c = 0; c < grid->GetNumberOfCells(); ++c) {
            QVERIFY(quality->GetTuple1(c) > 0 && quality->GetTuple1(c) <= 1 + 1e-12);
        }
        vtkDataArray* frame = grid->GetCellData()->GetArray("frame_n");
        QVERIFY(frame != nullptr);
        QCOMPARE(frame->GetNumberOfComponents(), 3);
        const double* n0 = frame->GetTuple3(0);
        const Mat3& f0 = s.bodies[0].tetFrames[0];
        QVERIFY((Vec3(n0[0], n0[1], n0[2]) - f0.col(2)).norm() < 1e-15);
        double p[3];
        grid->GetPoint(7, p);
        QCOMPARE(Vec3(p[0], p[1], p[2]), s.particles.positions[7]);
        // A regular tet has quality 1.
        QVERIFY(
            std::abs(tetQuality(Vec3(1, 1, 1), Vec3(1, -1, -1), Vec3(-1, 1, -1), Vec3(-1, -1, 1)) -
                     1) < 1e-12 ||
            std::abs(tetQuality(Vec3(1, 1, 1), Vec3(-1, 1, -1), Vec3(1, -1, -1), Vec3(-1, -1, 1)) -
                     1) < 1e-12);
        QVERIFY(std::abs(triangleQuality(Vec3(0, 0, 0), Vec3(1, 0, 0),
                                         Vec3(0.5, std::sqrt(3.0) / 2, 0)) -
                         1) < 1e-12);
    }

    void cagedMeshesExportWhereTheCageCarriesThem() {
        // A box and a cloth sheet crossing it, in a cage of about 300 triangles: after the cage
        // is turned and shifted, the .vtu read back by VTK has the render meshes' triangles on
        // points of their own, where the motion takes their rest positions (1e-12), marked by
        // the "embedded" point data; Gmsh's file names them.
        Scene input;
        addBoxSurface(input, Vec3(0, 0, 0), Vec3(1, 1, 1), "box", 4);
        addSheet(input, Vec3(0.3, 0.2, 0.1), 1.4, 8, "fin");
        for (Body& b : input.bodies) {
            b.kind = BodyKind::Surface;
        }
        PrepareOptions options;
        options.cage.triangles = 300;
        PrepareResult prepared = prepareScene(input, options);
        QVERIFY2(prepared.report.ok(), prepared.report.error.c_str());
        Scene s = prepared.scene;
        const Mat3 r = Eigen::AngleAxisd(0.5, Vec3::UnitZ()).toRotationMatrix();
        for (Vec3& p : s.particles.positions) {
            p = r * p + Vec3(0, 3, 0);
        }
        const QString path = dir_.filePath("caged.vtu");
        QVERIFY(exportVtu(s, path.toStdString()).ok());
        vtkNew<vtkXMLUnstructuredGridReader> reader;
        reader->SetFileName(path.toUtf8().constData());
        reader->Update();
        vtkUnstructuredGrid* grid = reader->GetOutput();
        const std::size_t n = s.particles.size();
        const std::size_t rendered = input.particles.size();
        QCOMPARE(std::size_t(grid->GetNumberOfPoints()), n + rendered);
        vtkDataArray* embedded = grid->GetPointData()->GetArray("embedded");
        QVERIFY(embedded != nullptr);
        QCOMPARE(embedded->GetTuple1(vtkIdType(n - 1)), -1.0);
        QCOMPARE(embedded->GetTuple1(vtkIdType(n)), 0.0);
        QCOMPARE(embedded->GetTuple1(vtkIdType(n + rendered - 1)), 1.0);
        for (std::size_t v = 0; v < rendered; ++v) {
            double p[3];
            grid->GetPoint(vtkIdType(n + v), p);
            const Vec3 expected = r * input.particles.positions[v] + Vec3(0, 3, 0);
            QVERIFY((Vec3(p[0], p[1], p[2]) - expected).norm() < 1e-12);
        }
        vtkDataArray* region = grid->GetCellData()->GetArray("region");
        std::map<int, std::size_t> perRegion;
        for (vtkIdType c = 0; c < grid->GetNumberOfCells(); ++c) {
            perRegion[int(region->GetTuple1(c))]++;
        }
        QCOMPARE(perRegion[0], s.bodies[0].tets.size());
        QCOMPARE(perRegion[-2], input.bodies[0].triangles.size());
        QCOMPARE(perRegion[-3], input.bodies[1].triangles.size());
        const QString msh = dir_.filePath("caged.msh");
        QVERIFY(exportMsh(s, msh.toStdString()).ok());
        std::ifstream in(msh.toStdString());
        const std::string text((std::istreambuf_iterator<char>(in)), {});
        QVERIFY(text.find("2 3 \"box\"") != std::string::npos);
        QVERIFY(text.find("2 4 \"fin\"") != std::string::npos);
    }

    void mshIsWellFormedGmsh41() {
        const Scene s = preparedScene();
        const QString path = dir_.filePath("scene.msh");
        QVERIFY(exportMsh(s, path.toStdString()).ok());
        std::ifstream in(path.toStdString());
        std::string section;
        in >> section;
        QCOMPARE(section, std::string("$MeshFormat"));
        std::string version;
        int fileType = -1, dataSize = 0;
        in >> version >> fileType >> dataSize >> section;
        QCOMPARE(version, std::string("4.1"));
        QCOMPARE(fileType, 0);
        QCOMPARE(section, std::string("$EndMeshFormat"));
        in >> section;
        QCOMPARE(section, std::string("$PhysicalNames"));
        int names = 0;
        in >> names;
        std::map<int, std::string> physical;
        for (int i = 0; i < names; ++i) {
            int dim = 0, tag = 0;
            std::string name;
            in >> dim >> tag;
            std::getline(in, name);
            physical[tag] = name;
        }
        QVERIFY(physical.size() == 4); // lower, upper, sheet, air
        QVERIFY(physical[int(s.bodies.size()) + 1].find("\"air\"") != std::string::npos);
        in >> section;
        QCOMPARE(section, std::string("$EndPhysicalNames"));
        in >> section;
        QCOMPARE(section, std::string("$Entities"));
        int points = 0, curves = 0, surfaces = 0, volumes = 0;
        in >> points >> curves >> surfaces >> volumes;
        QCOMPARE(surfaces + volumes, names);
        std::set<std::pair<int, int>> entities;
        for (int i = 0; i < surfaces + volumes; ++i) {
            int tag = 0, numPhysical = 0, phys = 0, bounding = 0;
            double box[6];
            in >> tag >> box[0] >> box[1] >> box[2] >> box[3] >> box[4] >> box[5] >> numPhysical >>
                phys >> bounding;
            QCOMPARE(numPhysical, 1);
            QVERIFY(physical.count(phys));
            entities.insert({i < surfaces ? 2 : 3, tag});
        }
        in >> section;
        QCOMPARE(section, std::string("$EndEntities"));
        in >> section;
        QCOMPARE(section, std::string("$Nodes"));
        std::size_t blocks = 0, nodes = 0, minTag = 0, maxTag = 0;
        in >> blocks >> nodes >> minTag >> maxTag;
        QCOMPARE(nodes, s.particles.size());
        std::size_t read = 0;
        for (std::size_t b = 0; b < blocks; ++b) {
            int dim = 0, tag = 0, parametric = 0;
            std::size_t count = 0;
            in >> dim >> tag >> parametric >> count;
            QVERIFY(entities.count({dim, tag}));
            std::vector<std::size_t> tags(count);
            for (auto& t : tags) {
                in >> t;
            }
            for (std::size_t i = 0; i < count; ++i) {
                double x, y, z;
                in >> x >> y >> z;
                QCOMPARE(Vec3(x, y, z), s.particles.positions[tags[i] - 1]);
            }
            read += count;
        }
        QCOMPARE(read, nodes);
        in >> section;
        QCOMPARE(section, std::string("$EndNodes"));
        in >> section;
        QCOMPARE(section, std::string("$Elements"));
        std::size_t elementBlocks = 0, elements = 0;
        in >> elementBlocks >> elements >> minTag >> maxTag;
        std::size_t tets = 0, triangles = 0;
        for (std::size_t b = 0; b < elementBlocks; ++b) {
            int dim = 0, tag = 0, type = 0;
            std::size_t count = 0;
            in >> dim >> tag >> type >> count;
            QVERIFY(entities.count({dim, tag}));
            QCOMPARE(type, dim == 3 ? 4 : 2);
            for (std::size_t e = 0; e < count; ++e) {
                std::size_t elementTag = 0;
                in >> elementTag;
                for (int k = 0; k < (type == 4 ? 4 : 3); ++k) {
                    std::size_t node = 0;
                    in >> node;
                    QVERIFY(node >= 1 && node <= nodes);
                }
            }
            (type == 4 ? tets : triangles) += count;
        }
        QCOMPARE(tets, s.tetCount() + s.air.tets.size());
        QCOMPARE(triangles, s.bodies[2].triangles.size());
        QCOMPARE(tets + triangles, elements);
        in >> section;
        QCOMPARE(section, std::string("$EndElements"));
    }

    void tetgenFilesHaveTheCounts() {
        const Scene s = preparedScene();
        const QString prefix = dir_.filePath("scene");
        QVERIFY(exportTetgen(s, prefix.toStdString()).ok());
        auto header = [&](const char* suffix) {
            std::ifstream in((prefix + suffix).toStdString());
            std::string line;
            do {
                std::getline(in, line);
            } while (line.starts_with("#"));
            std::istringstream words(line);
            std::size_t n = 0;
            words >> n;
            return n;
        };
        QCOMPARE(header(".node"), s.particles.size());
        QCOMPARE(header(".ele"), s.tetCount() + s.air.tets.size());
        QCOMPARE(header(".face"), boundaryFaces(s.bodies[0].tets).size() +
                                      boundaryFaces(s.bodies[1].tets).size() +
                                      s.bodies[2].triangles.size());
    }

    void everyAssimpTestModelPreparesOrFailsWithAMessage() {
        const QString root = qEnvironmentVariable("ASSIMP_MODELS", "/usr/share/assimp/models");
        if (!QDir(root).exists()) {
            QFAIL("assimp-testmodels is not installed (scripts/setup installs it)");
        }
        PrepareOptions options;
        options.tetrahedralize = true;
        options.air = true;
        options.tet.timeoutSeconds = options.airOptions.timeoutSeconds = 20;
        int prepared = 0, failed = 0, inCage = 0;
        QDirIterator it(root, {"*.obj", "*.ply", "*.stl", "*.STL", "*.off", "*.gltf", "*.glb"},
                        QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString file = it.next();
            const PrepareResult r = prepareFiles({file.toStdString()}, options);
            if (r.report.ok()) {
                ++prepared;
                QVERIFY2(validateScene(r.scene).empty(), qPrintable(file));
                QCOMPARE(r.report.invertedTets, std::size_t(0));
            } else {
                ++failed;
                // A specific message: it names the file or a body, not just "failed".
                const std::string& e = r.report.error;
                const bool specific = e.find(file.toStdString()) != std::string::npos ||
                                      e.find("body '") != std::string::npos ||
                                      e.find("bodies '") != std::string::npos ||
                                      e.find("no surfaces") != std::string::npos;
                QVERIFY2(specific, qPrintable(file + ": " + QString::fromStdString(e)));
                // Refuse only what is not a mesh: whatever was read prepares in a cage.
                PrepareOptions caged = options;
                caged.cage.triangles = 2000;
                const PrepareResult c = prepareFiles({file.toStdString()}, caged);
                if (c.report.ok()) {
                    ++inCage;
                    QVERIFY2(validateScene(c.scene).empty(), qPrintable(file));
                    QVERIFY(!c.scene.embedded.empty());
                } else {
                    const std::string& ce = c.report.error;
                    const bool notAMesh = ce.find("cannot read") != std::string::npos ||
                                          ce.find("contains no") != std::string::npos ||
                                          ce.find("no triangle with an area") != std::string::npos;
                    QVERIFY2(notAMesh, qPrintable(file + ": " + QString::fromStdString(ce)));
                }
            }
        }
        qInfo("assimp test models: %d prepared, %d refused with a message; of those, %d prepared "
              "in a cage and the rest are not meshes",
              prepared, failed, inCage);
        QVERIFY(prepared >= 30);
        QVERIFY(failed >= 30);
        QVERIFY(inCage >= 10);
    }
};

QTEST_GUILESS_MAIN(TestExport)
#include "tst_export.moc"
