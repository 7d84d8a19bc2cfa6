// core: the scene model, topology helpers, generated bodies and the scene catalogue.

#include "core/scene/Embedding.h"
#include "core/scene/Mass.h"
#include "core/scene/Topology.h"
#include "core/scenes/PrimitiveMeshes.h"
#include "core/scenes/SceneLibrary.h"

#include <QTest>

#include <map>
#include <numbers>
#include <set>

using namespace pbd;

namespace {

// Volume enclosed by a closed surface, by the divergence theorem; positive for outward normals.
double enclosedVolume(const std::vector<Triangle>& faces, const std::vector<Vec3>& x) {
    double v = 0;
    for (const Triangle& f : faces) {
        v += x[f[0]].dot(x[f[1]].cross(x[f[2]])) / 6.0;
    }
    return v;
}

double tetVolume(const Body& body, const std::vector<Vec3>& x) {
    double v = 0;
    for (const Tetrahedron& t : body.tets) {
        v += signedVolume(x[t[0]], x[t[1]], x[t[2]], x[t[3]]);
    }
    return v;
}

} // namespace

class TestScene : public QObject {
    Q_OBJECT
private slots:
    void boundaryOfOneTetIsOutward() {
        const std::vector<Vec3> x = {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1)};
        const std::vector<Tetrahedron> tets = {{0, 1, 2, 3}};
        QVERIFY(signedVolume(x[0], x[1], x[2], x[3]) > 0);
        const std::vector<Triangle> faces = boundaryFaces(tets);
        QCOMPARE(faces.size(), std::size_t(4));
        const Vec3 centroid = 0.25 * (x[0] + x[1] + x[2] + x[3]);
        for (const Triangle& f : faces) {
            const Vec3 n = (x[f[1]] - x[f[0]]).cross(x[f[2]] - x[f[0]]);
            const Vec3 faceCenter = (x[f[0]] + x[f[1]] + x[f[2]]) / 3.0;
            QVERIFY2(n.dot(faceCenter - centroid) > 0, "boundary face points inward");
        }
        QCOMPARE(enclosedVolume(faces, x), 1.0 / 6.0);
    }

    void sharedFaceIsInterior() {
        // Two tets sharing face (1, 2, 3): 6 boundary faces, none of them the shared one.
        const std::vector<Vec3> x = {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1),
                                     Vec3(1, 1, 1)};
        std::vector<Tetrahedron> tets = {{0, 1, 2, 3}, {4, 1, 3, 2}};
        QCOMPARE(orientPositively(tets, x), std::size_t(0));
        const std::vector<Triangle> faces = boundaryFaces(tets);
        QCOMPARE(faces.size(), std::size_t(6));
        for (const Triangle& f : faces) {
            std::set<Index> s(f.begin(), f.end());
            QVERIFY(s != std::set<Index>({1, 2, 3}));
        }
        QVERIFY(std::abs(enclosedVolume(faces, x) - (1.0 / 6.0 + 1.0 / 3.0)) < 1e-12);
    }

    void orientPositivelyFlipsInvertedTets() {
        const std::vector<Vec3> x = {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1)};
        std::vector<Tetrahedron> tets = {{0, 2, 1, 3}};
        QCOMPARE(orientPositively(tets, x), std::size_t(1));
        QVERIFY(signedVolume(x[tets[0][0]], x[tets[0][1]], x[tets[0][2]], x[tets[0][3]]) > 0);
    }

    void torusIsAConformingPositiveTetMesh() {
        Particles particles;
        TetTorusSpec spec;
        spec.segments = 24;
        spec.sides = 10;
        spec.rings = 3;
        const Body torus = makeTetTorus(particles, spec, "torus");
        const int prisms = spec.segments * (spec.sides + 2 * spec.sides * (spec.rings - 1));
        QCOMPARE(torus.tets.size(), std::size_t(3 * prisms));
        QCOMPARE(torus.particleCount, Index(spec.segments * (1 + spec.rings * spec.sides)));
        for (const Tetrahedron& t : torus.tets) {
            QVERIFY(signedVolume(particles.positions[t[0]], particles.positions[t[1]],
                                 particles.positions[t[2]], particles.positions[t[3]]) > 1e-9);
        }
        // A non-conforming split would leave interior quads split two ways, which shows up as
        // extra boundary faces. Only the tube's outer surface may remain.
        QCOMPARE(torus.triangles.size(), std::size_t(2 * spec.segments * spec.sides));

        // The surface is a closed, consistently oriented 2-manifold of genus 1.
        std::map<std::pair<Index, Index>, int> directed;
        std::set<Index> vertices;
        for (const Triangle& f : torus.triangles) {
            for (int i = 0; i < 3; ++i) {
                ++directed[{f[i], f[(i + 1) % 3]}];
                vertices.insert(f[i]);
            }
        }
        for (const auto& [edge, count] : directed) {
            QCOMPARE(count, 1);
            QVERIFY2(directed.count({edge.second, edge.first}) == 1,
                     "surface edge without its twin");
        }
        const long long V = static_cast<long long>(vertices.size());
        const long long E = static_cast<long long>(directed.size() / 2);
        const long long F = static_cast<long long>(torus.triangles.size());
        QCOMPARE(V - E + F, 0LL); // Euler characteristic of a torus

        // The boundary encloses exactly the tets' volume, which approaches 2 pi^2 R r^2 up to
        // the polygonal cross-section (area factor sides/(2 pi) sin(2 pi/sides)) and the chords.
        const double volume = tetVolume(torus, particles.positions);
        QVERIFY(std::abs(enclosedVolume(torus.triangles, particles.positions) - volume) <
                1e-9 * volume);
        const double pi = std::numbers::pi;
        const double polygonFactor = spec.sides / (2 * pi) * std::sin(2 * pi / spec.sides);
        const double chordFactor = std::sin(2 * pi / spec.segments) / (2 * pi / spec.segments);
        const double expected = 2 * pi * pi * spec.majorRadius * spec.minorRadius *
                                spec.minorRadius * polygonFactor * chordFactor;
        QVERIFY2(std::abs(volume - expected) < 1e-9 * expected,
                 qPrintable(QString::number(volume / expected)));

        // Lumped masses add up to density times volume.
        QVERIFY(std::abs(totalMass(particles, torus) - spec.density * volume) <
                1e-9 * spec.density * volume);
    }

    void clothSheetHasUVsAndFacesUp() {
        Particles particles;
        ClothSheetSpec spec;
        spec.columns = 5;
        spec.rows = 4;
        spec.width = 2.0;
        spec.depth = 1.5;
        spec.center = Vec3(1, 2, 3);
        const Body sheet = makeClothSheet(particles, spec, "sheet");
        QCOMPARE(sheet.particleCount, Index(20));
        QCOMPARE(sheet.triangles.size(), std::size_t(2 * 4 * 3));
        QVERIFY(sheet.hasUVs());
        QCOMPARE(sheet.triangleUVs.size(), sheet.triangles.size());
        double area = 0;
        for (std::size_t t = 0; t < sheet.triangles.size(); ++t) {
            const Triangle& tri = sheet.triangles[t];
            const Vec3 n = (particles.positions[tri[1]] - particles.positions[tri[0]])
                               .cross(particles.positions[tri[2]] - particles.positions[tri[0]]);
            QVERIFY(n.y() > 0);
            QVERIFY(std::abs(n.x()) < 1e-12 && std::abs(n.z()) < 1e-12);
            area += 0.5 * n.norm();
            for (int c = 0; c < 3; ++c) {
                // u runs along x over the width, v along z over the depth.
                const Vec3& p = particles.positions[tri[c]];
                const Vec2& uv = sheet.triangleUVs[t][c];
                QVERIFY(std::abs(p.x() - (spec.center.x() + (uv.x() - 0.5) * spec.width)) < 1e-12);
                QVERIFY(std::abs(p.z() - (spec.center.z() + (uv.y() - 0.5) * spec.depth)) < 1e-12);
                QCOMPARE(p.y(), 2.0);
            }
        }
        QVERIFY(std::abs(area - 3.0) < 1e-12);
        QVERIFY(std::abs(totalMass(particles, sheet) - spec.arealDensity * 3.0) < 1e-12);
    }

    void sampleSceneIsValidWithClothAboveTorus() {
        Result<Scene> scene = makeScene("sample");
        QVERIFY(scene.ok());
        QCOMPARE(scene->bodies.size(), std::size_t(2));
        QVERIFY(validateScene(*scene).empty());
        const Body& torus = scene->bodies[0];
        const Body& cloth = scene->bodies[1];
        QVERIFY(torus.kind == BodyKind::TetBody);
        QVERIFY(cloth.kind == BodyKind::Cloth);
        QVERIFY(cloth.hasUVs());
        QVERIFY(scene->bounds(cloth).min.y() > scene->bounds(torus).max.y());
        QCOMPARE(sceneCatalogue().front().name, std::string("sample"));
    }

    void unknownSceneNamesTheAlternatives() {
        Result<Scene> scene = makeScene("no-such-scene");
        QVERIFY(!scene.ok());
        QVERIFY(scene.error().find("no-such-scene") != std::string::npos);
        QVERIFY(scene.error().find("sample") != std::string::npos);
    }

    void validationNamesBodyAndElement() {
        Result<Scene> scene = makeScene("sample");
        QVERIFY(scene.ok());
        Scene broken = *scene;
        broken.bodies[1].triangles[7][2] = 3; // a torus particle, outside the cloth's range
        broken.particles.positions[5] = Vec3(std::nan(""), 0, 0);
        std::swap(broken.bodies[0].tets[11][0], broken.bodies[0].tets[11][1]); // inverted
        const std::vector<std::string> problems = validateScene(broken);
        QCOMPARE(problems.size(),
                 std::size_t(2)); // inverted-tet check is skipped once indices are bad
        QVERIFY(problems[0].find("particle 5") != std::string::npos);
        QVERIFY(problems[1].find("'cloth'") != std::string::npos);
        QVERIFY(problems[1].find("triangle 7") != std::string::npos);

        Scene inverted = *scene;
        std::swap(inverted.bodies[0].tets[11][0], inverted.bodies[0].tets[11][1]);
        const std::vector<std::string> p2 = validateScene(inverted);
        QCOMPARE(p2.size(), std::size_t(1));
        QVERIFY(p2[0].find("'torus'") != std::string::npos &&
                p2[0].find("tetrahedron 11") != std::string::npos);

        // A zero mass and a negative compliance: the solver's denominators would vanish or flip.
        Scene massless = *scene;
        massless.particles.inverseMasses[5] = std::numeric_limits<Real>::infinity();
        const std::vector<std::string> p3 = validateScene(massless);
        QCOMPARE(p3.size(), std::size_t(1));
        QVERIFY2(p3[0].find("particle 5 (vertex 5 of body 'torus')") == 0 &&
                     p3[0].find("zero mass") != std::string::npos,
                 p3[0].c_str());
        Result<Scene> rope = makeScene("rope");
        QVERIFY(rope.ok() && rope->constraints.distance.size() > 4);
        Scene negative = *rope;
        negative.constraints.distance.compliance[0][4] = -1e-3;
        const std::vector<std::string> p4 = validateScene(negative);
        QCOMPARE(p4.size(), std::size_t(1));
        QVERIFY2(p4[0].find("constraint 4 (on particle") != std::string::npos &&
                     p4[0].find("has compliance -0.001") != std::string::npos &&
                     p4[0].find("of body '") != std::string::npos,
                 p4[0].c_str());
    }

    void bodyDensityIsMeasuredAndSetFromTheMasses() {
        // The torus at 1234 kg/m^3 weighs 1234 times its volume; the cloth at 0.5 kg/m^2, half
        // its area; pinned particles stay pinned; the density reads back.
        Result<Scene> made = makeScene("sample");
        QVERIFY(made.ok());
        Scene s = *made;
        const Body& torus = s.bodies[0];
        const Body& cloth = s.bodies[1];
        setBodyDensity(s.particles, torus, 1234);
        Real volume = 0;
        for (const Tetrahedron& t : torus.tets) {
            const auto& x = s.particles.positions;
            volume += signedVolume(x[t[0]], x[t[1]], x[t[2]], x[t[3]]);
        }
        QVERIFY(std::abs(totalMass(s.particles, torus) / (1234 * volume) - 1) < 1e-12);
        QVERIFY(std::abs(bodyDensity(s.particles, torus) / 1234 - 1) < 1e-12);

        const std::vector<Index> pinned{cloth.firstParticle, cloth.firstParticle + 39};
        for (Index i : pinned) {
            s.particles.inverseMasses[i] = 0;
        }
        const Real before = bodyDensity(s.particles, cloth);
        setBodyDensity(s.particles, cloth, 0.5);
        QVERIFY(std::abs(bodyDensity(s.particles, cloth) / 0.5 - 1) < 1e-12);
        for (Index i : pinned) {
            QCOMPARE(s.particles.inverseMasses[i], 0.0);
        }
        setBodyDensity(s.particles, cloth, before);
        QVERIFY(std::abs(bodyDensity(s.particles, cloth) / before - 1) < 1e-12);
        // A body whose particles are all pinned has no density to measure.
        Particles all = s.particles;
        for (Index i = cloth.firstParticle; i < cloth.firstParticle + cloth.particleCount; ++i) {
            all.inverseMasses[i] = 0;
        }
        QVERIFY(std::isnan(bodyDensity(all, cloth)));
    }

    void embeddedMeshFollowsItsTets() {
        // A box of 4 x 5 x 4 vertices (1 x 2 x 1 m) carries 2,000 points spread through it: at
        // rest they come back to 1e-12; an affine motion of the box (rotation, stretch, shift)
        // moves them exactly as it moves any point; a bending field, which is not linear, comes
        // back within the linear interpolation's bound, c h^2 / 2 for a field of second
        // derivative c and tets of longest edge h.
        Particles particles;
        TetBoxSpec spec;
        spec.vertices = {4, 5, 4};
        spec.size = Vec3(1, 2, 1);
        const Body box = makeTetBox(particles, spec, "box");
        EmbeddedMesh mesh;
        mesh.name = "points";
        std::uint64_t state = 12345;
        const auto uniform = [&] {
            state = state * 6364136223846793005ULL + 1442695040888963407ULL;
            return double(state >> 11) / double(1ULL << 53);
        };
        for (int i = 0; i < 2000; ++i) {
            mesh.restPositions.emplace_back(uniform() - 0.5, 2 * uniform() - 1, uniform() - 0.5);
        }
        TetBinding b = bindToTets(particles.positions, box.tets, mesh.restPositions);
        QCOMPARE(b.outside, std::size_t(0));
        mesh.corners = b.corners;
        mesh.weights = b.weights;
        QVERIFY(validateEmbedded(mesh, particles.size()).empty());
        std::vector<Vec3> out;
        const auto largestError = [&](const std::vector<Vec3>& x, auto&& expected) {
            embeddedPositions(mesh, x, out);
            double error = 0;
            for (std::size_t v = 0; v < out.size(); ++v) {
                error = std::max(error, (out[v] - expected(mesh.restPositions[v])).norm());
            }
            return error;
        };
        const auto same = [](const Vec3& p) { return p; };
        QVERIFY(largestError(particles.positions, same) < 1e-12);
        for (const auto& w : mesh.weights) {
            QVERIFY(*std::min_element(w.begin(), w.end()) >= -1e-12);
        }
        Mat3 a = Eigen::AngleAxisd(0.7, Vec3(1, 2, 3).normalized()).toRotationMatrix();
        a *= Vec3(1.3, 0.8, 1.1).asDiagonal();
        const Vec3 shift(0.4, -2, 5);
        const auto affine = [&](const Vec3& p) { return Vec3(a * p + shift); };
        std::vector<Vec3> moved;
        for (const Vec3& p : particles.positions) {
            moved.push_back(affine(p));
        }
        QVERIFY(largestError(moved, affine) < 1e-12);
        const double c = 0.2;
        const auto bend = [&](const Vec3& p) { return Vec3(p + Vec3(c * p.y() * p.y(), 0, 0)); };
        moved.clear();
        for (const Vec3& p : particles.positions) {
            moved.push_back(bend(p));
        }
        double h = 0;
        for (const Tetrahedron& t : box.tets) {
            for (int i = 0; i < 4; ++i) {
                for (int j = i + 1; j < 4; ++j) {
                    h = std::max(h, (particles.positions[t[i]] - particles.positions[t[j]]).norm());
                }
            }
        }
        const double bendError = largestError(moved, bend);
        QVERIFY2(bendError > 1e-6 && bendError <= c * h * h / 2,
                 (std::to_string(bendError) + " vs " + std::to_string(c * h * h / 2)).c_str());
    }

    void pointsOutsideGoToTheNearestTet() {
        // 0.3 m above the top of a unit box, and 0.2 m beside a corner along x: each is carried
        // by the box's closest point, and the binding reports how far out the farthest is.
        Particles particles;
        TetBoxSpec spec;
        spec.vertices = {3, 3, 3};
        spec.size = Vec3(1, 1, 1);
        const Body box = makeTetBox(particles, spec, "box");
        const std::vector<Vec3> points{Vec3(0.1, 0.8, -0.2), Vec3(0.7, 0.5, 0.5), Vec3(0, 0, 0)};
        const TetBinding b = bindToTets(particles.positions, box.tets, points);
        QCOMPARE(b.outside, std::size_t(2));
        QVERIFY(std::abs(b.largestOutsideDistance - 0.3) < 1e-12);
        EmbeddedMesh mesh;
        mesh.restPositions = points;
        mesh.corners = b.corners;
        mesh.weights = b.weights;
        std::vector<Vec3> out;
        embeddedPositions(mesh, particles.positions, out);
        QVERIFY((out[0] - Vec3(0.1, 0.5, -0.2)).norm() < 1e-12);
        QVERIFY((out[1] - Vec3(0.5, 0.5, 0.5)).norm() < 1e-12);
        QVERIFY((out[2] - points[2]).norm() < 1e-12);
        // A corner out of range, or weights that do not sum to 1, are named.
        mesh.name = "m";
        mesh.weights[1][0] += 0.5;
        QVERIFY(validateEmbedded(mesh, particles.size()).front().find("vertex 1 has weights") !=
                std::string::npos);
        mesh.weights[1][0] -= 0.5;
        mesh.corners[2][3] = Index(particles.size());
        QVERIFY(validateEmbedded(mesh, particles.size()).front().find("vertex 2 is carried") !=
                std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestScene)
#include "tst_scene.moc"
