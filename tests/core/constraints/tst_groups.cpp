// core: constraint groups (core/constraints/ConstraintGroups.h): every generated scene's
// constraints are in groups; editing a group sets exactly its elements, through colouring and
// partitioning; groups are removed and generated again; a group's material changes what the solver
// does.

#include "core/constraints/Attaching.h"
#include "core/constraints/ConstraintBuilders.h"
#include "core/constraints/ConstraintGroups.h"
#include "core/scenes/PrimitiveMeshes.h"
#include "core/scenes/SceneLibrary.h"
#include "core/solver/Solver.h"

#include <QTest>

#include <cmath>

using namespace pbd;

namespace {

int findGroup(const Scene& scene, const std::string& name) {
    for (std::size_t g = 0; g < scene.constraintGroups.size(); ++g) {
        if (scene.constraintGroups[g].name == name) {
            return int(g);
        }
    }
    return -1;
}

Scene scene(const char* name) {
    Result<Scene> s = makeScene(name);
    if (!s) {
        qFatal("%s", s.error().c_str());
    }
    return std::move(s).value();
}

// The largest relative stretch of a distance constraint's edge.
Real largestStretch(const Scene& s) {
    Real most = 0;
    const auto& d = s.constraints.distance;
    for (std::size_t e = 0; e < d.size(); ++e) {
        const Real l =
            (s.particles.positions[d.particles[e][0]] - s.particles.positions[d.particles[e][1]])
                .norm();
        most = std::max(most, l / d.restLength[e] - 1);
    }
    return most;
}

// The mean stretch along u and along v of a scene's strain triangles: the lengths of the
// columns of F = P Q^-1.
std::array<Real, 2> meanStretch(const Scene& s) {
    const auto& b = s.constraints.strainTriangles;
    const auto& x = s.particles.positions;
    std::array<Real, 2> sum{0, 0};
    for (std::size_t e = 0; e < b.size(); ++e) {
        const auto& p = b.particles[e];
        Eigen::Matrix<Real, 3, 2> P;
        P << x[p[1]] - x[p[0]], x[p[2]] - x[p[0]];
        Eigen::Matrix2d qi;
        qi << b.qInverse[0][e], b.qInverse[2][e], b.qInverse[1][e], b.qInverse[3][e];
        const Eigen::Matrix<Real, 3, 2> F = P * qi;
        sum[0] += F.col(0).norm();
        sum[1] += F.col(1).norm();
    }
    return {sum[0] / Real(b.size()), sum[1] / Real(b.size())};
}

} // namespace

class TestGroups : public QObject {
    Q_OBJECT
private slots:
    void generatedScenesAreGrouped_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QStringList>("groups");
        QTest::newRow("cloth") << "cloth"
                               << QStringList{"cloth stretch", "cloth bending",
                                              "cloth attachments"};
        QTest::newRow("cloth-sbd")
            << "cloth-sbd" << QStringList{"cloth strain", "cloth bending", "cloth attachments"};
        QTest::newRow("tetbar") << "tetbar" << QStringList{"bar strain (tets)", "bar attachments"};
        QTest::newRow("rope") << "rope" << QStringList{"rope stretch", "rope attachments"};
    }
    void generatedScenesAreGrouped() {
        QFETCH(QString, name);
        QFETCH(QStringList, groups);
        const Scene s = scene(name.toUtf8().constData());
        QStringList names;
        std::size_t elements = 0;
        for (std::size_t g = 0; g < s.constraintGroups.size(); ++g) {
            names << QString::fromStdString(s.constraintGroups[g].name);
            const std::size_t n = constraintGroupSize(s.constraints, int(g));
            QVERIFY2(n > 0, s.constraintGroups[g].name.c_str());
            elements += n;
        }
        names.sort();
        groups.sort();
        QCOMPARE(names, groups);
        QCOMPARE(elements, s.constraints.elementCount()); // every element in exactly one group
        QVERIFY(validateScene(s).empty());
    }

    void derivedGroupsKeepTheBuildersMaterial() {
        // A cloth built with the builders directly has no groups; deriving them changes no
        // element's compliance beyond rounding and takes the builder's moduli.
        Scene s;
        ClothSheetSpec sheet;
        sheet.columns = sheet.rows = 12;
        s.bodies.push_back(makeClothSheet(s.particles, sheet, "sheet"));
        StrainTriangleMaterial m;
        m.stretchU = 3e4;
        m.stretchV = 2e3;
        m.shear = 700;
        QVERIFY(addStrainTriangles(s.constraints, s.particles, s.bodies[0], m).added > 0);
        addDihedralBending(s.constraints, s.particles, s.bodies[0], 0.25, 0.5);
        const ConstraintSet before = s.constraints;
        QCOMPARE(ensureConstraintGroups(s), std::size_t(2));
        QCOMPARE(ensureConstraintGroups(s), std::size_t(0)); // nothing left ungrouped
        const ConstraintGroup& strain =
            s.constraintGroups[std::size_t(findGroup(s, "sheet strain"))];
        QVERIFY(strain.type == ConstraintType::StrainTriangle);
        QCOMPARE(strain.body, 0);
        // The builders' moduli come back exactly, and grouping changes no element's material.
        QCOMPARE(strain.material[0], 3e4);
        QCOMPARE(strain.material[1], 2e3);
        QCOMPARE(strain.material[2], 700.0);
        const ConstraintGroup& bending =
            s.constraintGroups[std::size_t(findGroup(s, "sheet bending"))];
        QCOMPARE(bending.material[0], 0.25);
        QCOMPARE(bending.pbdStiffness[0], 0.5);
        QVERIFY(s.constraints.strainTriangles.compliance == before.strainTriangles.compliance);
        QVERIFY(s.constraints.strainTriangles.stiffness == before.strainTriangles.stiffness);
        QVERIFY(s.constraints.strainTriangles.rest == before.strainTriangles.rest);
        QVERIFY(s.constraints.bending.compliance == before.bending.compliance);
    }

    void editingAGroupSetsItsElements() {
        Scene s = scene("cloth-sbd");
        const int g = findGroup(s, "cloth strain");
        QVERIFY(g >= 0);
        ConstraintGroup group = s.constraintGroups[std::size_t(g)];
        group.material = {2e4, 50, 400, 0, 0, 0};
        group.restStretch = {1.1, 0.9, 1};
        group.pbdStiffness = {0.5, 0.25, 1, 1, 1, 1};
        applyConstraintGroup(s.constraints, g, group);
        const auto& b = s.constraints.strainTriangles;
        const auto& x = s.particles.positions;
        for (std::size_t e = 0; e < b.size(); ++e) {
            const auto& p = b.particles[e];
            const Real area = 0.5 * (x[p[1]] - x[p[0]]).cross(x[p[2]] - x[p[0]]).norm();
            QVERIFY(std::abs(b.measure[e] / area - 1) < 1e-12); // the rest area
            for (int k = 0; k < 3; ++k) {
                QCOMPARE(b.compliance[k][e], 1.0 / (group.material[k] * b.measure[e]));
                QCOMPARE(b.stiffness[k][e], group.pbdStiffness[k]);
            }
            QCOMPARE(b.rest[0][e], 1.1);
            QCOMPARE(b.rest[1][e], 0.9);
            QCOMPARE(b.rest[2][e], 0.0); // rest shear untouched
        }
        // The other groups are untouched.
        const Scene fresh = scene("cloth-sbd");
        QCOMPARE(s.constraints.bending.compliance[0], fresh.constraints.bending.compliance[0]);
        // Disabled: free; enabled again: the same numbers, bit for bit.
        const ConstraintSet edited = s.constraints;
        ConstraintGroup off = group;
        off.enabled = false;
        applyConstraintGroup(s.constraints, g, off);
        for (int k = 0; k < 3; ++k) {
            QVERIFY(std::all_of(b.compliance[k].begin(), b.compliance[k].end(),
                                [](Real a) { return a == kFreeCompliance; }));
            QVERIFY(std::all_of(b.stiffness[k].begin(), b.stiffness[k].end(),
                                [](Real stiffness) { return stiffness == 0; }));
        }
        applyConstraintGroup(s.constraints, g, group);
        QVERIFY(b.compliance == edited.strainTriangles.compliance);
        QVERIFY(b.stiffness == edited.strainTriangles.stiffness);
        // Hard (an infinite modulus) and free (0).
        group.material = {kRigid, 0, 400, 0, 0, 0};
        applyConstraintGroup(s.constraints, g, group);
        QCOMPARE(b.compliance[0][7], 0.0);
        QCOMPARE(b.compliance[1][7], kFreeCompliance);
    }

    void groupsFollowTheElementsThroughColouring() {
        Scene s = scene("tetbar");
        QVERIFY(addConstraintGroup(s, 0, ConstraintType::Volume).ok());
        std::vector<std::size_t> sizes;
        for (std::size_t g = 0; g < s.constraintGroups.size(); ++g) {
            sizes.push_back(constraintGroupSize(s.constraints, int(g)));
        }
        colourConstraints(s.constraints, s.particles.size());
        partitionColours(s.constraints, s.particles.size(), 2);
        for (std::size_t g = 0; g < s.constraintGroups.size(); ++g) {
            QCOMPARE(constraintGroupSize(s.constraints, int(g)), sizes[g]);
            ConstraintGroup group = s.constraintGroups[g];
            for (int k = 0; k < materialComponents(group.type); ++k) {
                group.material[k] = group.material[k] * 2 + 1;
            }
            applyConstraintGroup(s.constraints, int(g), group);
        }
        // Each element follows its own group's material with its own measure.
        const auto& t = s.constraints.strainTets;
        const int tetGroup = findGroup(s, "bar strain (tets)");
        QVERIFY(tetGroup >= 0);
        const ConstraintGroup& tg = s.constraintGroups[std::size_t(tetGroup)];
        QVERIFY(t.size() > 0);
        for (std::size_t e = 0; e < t.size(); ++e) {
            QCOMPARE(t.group[e], tetGroup);
            const auto& p = t.particles[e];
            const auto& x = s.particles.positions;
            Mat3 Q;
            Q << x[p[1]] - x[p[0]], x[p[2]] - x[p[0]], x[p[3]] - x[p[0]];
            QVERIFY(std::abs(t.measure[e] / (std::abs(Q.determinant()) / 6) - 1) < 1e-12);
            for (int k = 0; k < 6; ++k) {
                QCOMPARE(t.compliance[k][e], 1.0 / ((tg.material[k] * 2 + 1) * t.measure[e]));
            }
        }
    }

    void removeAndGenerateAgain() {
        Scene s = scene("cloth");
        const std::size_t bending = s.constraints.bending.size();
        const int g = findGroup(s, "cloth bending");
        const int attachments = findGroup(s, "cloth attachments");
        QVERIFY(g >= 0 && attachments > g); // the attachments' group moves down
        removeConstraintGroup(s, g);
        QCOMPARE(s.constraints.bending.size(), std::size_t(0));
        QCOMPARE(findGroup(s, "cloth bending"), -1);
        QCOMPARE(findGroup(s, "cloth attachments"), attachments - 1);
        QCOMPARE(s.constraints.attachments.group.front(), attachments - 1);
        QVERIFY(validateScene(s).empty());

        const Result<int> added = addConstraintGroup(s, 0, ConstraintType::DihedralBending);
        QVERIFY2(added.ok(), added.error().c_str());
        QCOMPARE(s.constraints.bending.size(), bending);
        QCOMPARE(constraintGroupSize(s.constraints, *added), bending);
        QCOMPARE(s.constraintGroups[std::size_t(*added)].name, std::string("cloth bending"));
        QVERIFY(validateScene(s).empty());

        // Refusals name the body and the reason.
        const Result<int> again = addConstraintGroup(s, 0, ConstraintType::DihedralBending);
        QVERIFY(!again.ok());
        QVERIFY2(again.error().find("'cloth'") != std::string::npos, again.error().c_str());
        QVERIFY(again.error().find("already") != std::string::npos);
        const Result<int> volume = addConstraintGroup(s, 0, ConstraintType::Volume);
        QVERIFY(!volume.ok());
        QVERIFY2(volume.error().find("cannot have volume") != std::string::npos,
                 volume.error().c_str());
        const Result<int> pressure = addConstraintGroup(s, 0, ConstraintType::Pressure);
        QVERIFY(!pressure.ok());
        QVERIFY2(pressure.error().find("not a closed surface") != std::string::npos,
                 pressure.error().c_str());
        QVERIFY(!addConstraintGroup(s, 5, ConstraintType::Distance).ok());
        QVERIFY(validateScene(s).empty());

        // A closed surface takes pressure.
        Scene sample = scene("sample");
        const auto types = groupTypesFor(sample, 0); // the torus: a tet body
        QVERIFY(std::find(types.begin(), types.end(), ConstraintType::Volume) != types.end());
        const Result<int> volumes = addConstraintGroup(sample, 0, ConstraintType::Volume);
        QVERIFY2(volumes.ok(), volumes.error().c_str());
        QCOMPARE(constraintGroupSize(sample.constraints, *volumes), sample.bodies[0].tets.size());
    }

    void validationCatchesBadGroups() {
        Scene s = scene("cloth");
        s.constraints.distance.group[3] = 17;
        const auto problems = validateScene(s);
        QVERIFY(!problems.empty());
        QVERIFY2(problems.front().find("group 17") != std::string::npos, problems.front().c_str());
        s = scene("cloth");
        s.constraintGroups[0].pbdStiffness[0] = 2;
        QVERIFY(!validateScene(s).empty());
    }

    void groupMaterialChangesTheSimulation() {
        // Anisotropy: cloth-sbd with a soft v direction stretches along v and not along u, and
        // the other way round.
        const int steps = 150;
        Scene base = scene("cloth-sbd");
        const int g = findGroup(base, "cloth strain");
        auto run = [&](int softComponent) {
            Scene s = base;
            ConstraintGroup group = base.constraintGroups[std::size_t(g)];
            if (softComponent >= 0) {
                group.material[softComponent] = 20; // N/m
            }
            applyConstraintGroup(s.constraints, g, group);
            Solver solver(s);
            for (int i = 0; i < steps; ++i) {
                solver.step();
            }
            return meanStretch(s);
        };
        const auto stiff = run(-1), softU = run(0), softV = run(1);
        qInfo("mean stretch (u, v) after %d steps: default %.3f %.3f, soft u %.3f %.3f, soft v "
              "%.3f %.3f",
              steps, stiff[0], stiff[1], softU[0], softU[1], softV[0], softV[1]);
        // Each soft direction stretches further than the default; the other one does not.
        QVERIFY(softU[0] > stiff[0] + 0.05);
        QVERIFY(softU[1] < stiff[1] + 0.01);
        QVERIFY(softV[1] > stiff[1] + 0.08);
        QVERIFY(softV[0] < stiff[0] + 0.01);

        // A disabled stretch group lets the cloth's edges stretch; enabled, they hold.
        Scene cloth = scene("cloth");
        const int stretch = findGroup(cloth, "cloth stretch");
        Scene loose = cloth;
        ConstraintGroup off = cloth.constraintGroups[std::size_t(stretch)];
        off.enabled = false;
        applyConstraintGroup(loose.constraints, stretch, off);
        Solver a(cloth), b(loose);
        for (int i = 0; i < 100; ++i) {
            a.step();
            b.step();
        }
        qInfo("largest stretch: enabled %.3f, disabled %.3f", largestStretch(cloth),
              largestStretch(loose));
        // Without its stretch group the sheet falls away from its pinned corners (the edges at
        // the pins stretch without bound; 5 iterations over-stretch them when enabled, too).
        QVERIFY(largestStretch(cloth) < 4);
        QVERIFY(largestStretch(loose) > 5 * largestStretch(cloth));
    }

    void selectionsAreAttachedToPointsCollidersBodiesAndRigidBodies() {
        // A cloth (body 1, 40 x 40) over a torus (body 0), neither with constraints of its
        // own, so that only the attachments act.
        Scene s;
        TetTorusSpec torusSpec;
        torusSpec.center = Vec3(0, 0.25, 0);
        s.bodies.push_back(makeTetTorus(s.particles, torusSpec, "torus"));
        ClothSheetSpec sheet;
        sheet.center = Vec3(0, 0.8, 0);
        s.bodies.push_back(makeClothSheet(s.particles, sheet, "cloth"));
        ensureConstraintGroups(s);
        const Body& cloth = s.bodies[1];
        const Body& torus = s.bodies[0];
        std::vector<Index> edge; // the cloth's first row
        for (Index i = 0; i < 10; ++i) {
            edge.push_back(cloth.firstParticle + i);
        }
        const std::vector<Vec3> start = s.particles.positions;

        // To points: hard, in the cloth's attachment group; a second time they are skipped.
        const std::size_t before = s.constraints.attachments.size();
        Result<AttachResult> pinned = attachToPoints(s, edge);
        QVERIFY2(pinned.ok(), pinned.error().c_str());
        QCOMPARE(pinned->added, edge.size());
        QCOMPARE(s.constraints.attachments.size(), before + edge.size());
        QCOMPARE(s.constraintGroups[std::size_t(pinned->group)].name,
                 std::string("cloth attachments"));
        QCOMPARE(constraintGroupSize(s.constraints, pinned->group), edge.size());
        QVERIFY(!attachToPoints(s, edge).ok());
        QVERIFY(attachToPoints(s, {edge[0], cloth.firstParticle + 10})->skipped == 1);
        // A soft one goes in a group of its own, editable as a group.
        Result<AttachResult> soft = attachToPoints(s, {cloth.firstParticle + 20}, 1e-3);
        QVERIFY(soft.ok());
        QVERIFY(soft->group != pinned->group);
        QCOMPARE(s.constraintGroups[std::size_t(soft->group)].material[0], 1e-3);
        QVERIFY(validateScene(s).empty());

        // To another body: each to its nearest torus particle, at today's distance.
        std::vector<Index> middle;
        for (Index i = 0; i < 40; i += 7) {
            middle.push_back(cloth.firstParticle + 20 * 40 / 2 + i);
        }
        const std::size_t distances = s.constraints.distance.size();
        Result<AttachResult> tied = attachToBody(s, middle, 0);
        QVERIFY2(tied.ok(), tied.error().c_str());
        QCOMPARE(s.constraintGroups[std::size_t(tied->group)].name, std::string("cloth to torus"));
        QCOMPARE(s.constraintGroups[std::size_t(tied->group)].body, -1);
        for (std::size_t e = distances; e < s.constraints.distance.size(); ++e) {
            const auto& pq = s.constraints.distance.particles[e];
            QVERIFY(pq[1] >= torus.firstParticle &&
                    pq[1] < torus.firstParticle + torus.particleCount);
            QCOMPARE(s.constraints.distance.restLength[e], (start[pq[0]] - start[pq[1]]).norm());
        }
        const Result<AttachResult> itself = attachToBody(s, {torus.firstParticle}, 0);
        QVERIFY(!itself.ok());
        QVERIFY2(itself.error().find("belongs to 'torus' itself") != std::string::npos,
                 itself.error().c_str());

        // To a collider: onto its surface.
        s.colliders.push_back(Collider::sphere(Vec3(0, -3, 0), 0.5));
        const Index corner = cloth.firstParticle + cloth.particleCount - 1;
        Result<AttachResult> onSphere = attachToCollider(s, {corner}, 0);
        QVERIFY(onSphere.ok());
        QVERIFY(
            std::abs(closestSurfacePoint(s.colliders[0], s.constraints.attachments.target.back())
                         .distance) < 1e-12);
        QVERIFY(!attachToCollider(s, {corner}, 3).ok());
        QVERIFY(!attachToPoints(s, {}).ok());
        QVERIFY(!attachToPoints(s, {Index(s.particles.size())}).ok());
        QVERIFY(validateScene(s).empty());

        // Simulated: the pinned row stays, the tied particles keep their distances to the
        // torus within 1 mm while the cloth falls onto it.
        s.solver.threads = 1;
        Solver solver(s);
        for (int i = 0; i < 100; ++i) {
            solver.step();
        }
        for (Index p : edge) {
            QCOMPARE(s.particles.positions[p], start[p]);
        }
        Real worst = 0;
        for (std::size_t e = distances; e < distances + middle.size(); ++e) {
            const auto& pq = s.constraints.distance.particles[e];
            worst = std::max(
                worst,
                std::abs((s.particles.positions[pq[0]] - s.particles.positions[pq[1]]).norm() -
                         s.constraints.distance.restLength[e]));
        }
        Real moved = 0;
        for (Index p : middle) {
            moved = std::max(moved, (s.particles.positions[p] - start[p]).norm());
        }
        qInfo("tied to the torus: largest change of length %.2e m; they moved %.3f m", worst,
              moved);
        QVERIFY(moved > 0.01);
        QVERIFY(worst < 1e-3);
    }

    void selectionsAreCarriedByRigidBodies() {
        Scene s = scene("cloth-on-rigid");
        const Body& cloth = s.bodies[0];
        const std::size_t before = s.rigidAttachments.size();
        const std::vector<Index> some{cloth.firstParticle + 3, cloth.firstParticle + 4};
        Result<AttachResult> carried = attachToRigidBody(s, some, 0);
        QVERIFY2(carried.ok(), carried.error().c_str());
        QCOMPARE(s.rigidAttachments.size(), before + 2);
        const RigidBody& b = s.rigidBodies[0];
        const RigidAttachment& a = s.rigidAttachments.back();
        QVERIFY((b.x + b.q * a.local - s.particles.positions[a.particle]).norm() < 1e-12);
        QVERIFY(!attachToRigidBody(s, some, 0).ok());
        QVERIFY(!attachToRigidBody(s, some, 99).ok());
    }
};

QTEST_GUILESS_MAIN(TestGroups)
#include "tst_groups.moc"
