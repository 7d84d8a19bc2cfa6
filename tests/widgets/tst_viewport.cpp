// widgets: the Qt 6 / VTK viewport renders for real, reacts to mouse and keys, and raises no
// OpenGL or VTK errors. Run twice by ctest: at device pixel ratio 1 and 2.

#include "core/scene/Topology.h"
#include "core/scenes/PrimitiveMeshes.h"
#include "core/scenes/SceneLibrary.h"
#include "widgets/SceneActors.h"
#include "widgets/VtkMessageRelay.h"
#include "widgets/VtkViewport.h"

#include "GuiTestMain.h"
#include "ImageChecks.h"

#include <QMouseEvent>
#include <QWheelEvent>

#include <vtkCamera.h>
#include <vtkCellData.h>
#include <vtkDataArray.h>
#include <vtkMapper.h>
#include <vtkPointData.h>
#include <vtkPolyData.h>
#include <vtkProperty.h>

#include <algorithm>
#include <cmath>
#include <memory>

using namespace pbd;
using namespace pbd::test;

namespace {

Vec3 toVec(const double* v) {
    return Vec3(v[0], v[1], v[2]);
}

} // namespace

class TestViewport : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<VtkViewport> view_;
    std::unique_ptr<SceneActors> actors_;
    VtkMessageRelay* relay_ = nullptr;
    const QColor bottom_{30, 30, 30};
    const QColor top_{90, 100, 120};

    void sendMouse(QEvent::Type type, QPointF pos, Qt::MouseButton button, Qt::MouseButtons buttons,
                   Qt::KeyboardModifiers modifiers = Qt::NoModifier) {
        QMouseEvent event(type, pos, view_->mapToGlobal(pos), button, buttons, modifiers);
        QCoreApplication::sendEvent(view_.get(), &event);
    }

    void drag(QPointF from, QPointF to, Qt::MouseButton button,
              Qt::KeyboardModifiers modifiers = Qt::NoModifier) {
        sendMouse(QEvent::MouseButtonPress, from, button, button, modifiers);
        const int steps = 8;
        for (int i = 1; i <= steps; ++i) {
            sendMouse(QEvent::MouseMove, from + (to - from) * (double(i) / steps), Qt::NoButton,
                      button, modifiers);
        }
        sendMouse(QEvent::MouseButtonRelease, to, button, Qt::NoButton, modifiers);
    }

private slots:
    void initTestCase() {
        relay_ = VtkMessageRelay::install();
        view_ = std::make_unique<VtkViewport>();
        view_->setBackground(bottom_, top_);
        view_->resize(640, 400);
        actors_ = std::make_unique<SceneActors>(view_->renderer());
        Result<Scene> scene = makeScene("sample");
        QVERIFY(scene.ok());
        actors_->setScene(*scene);
        view_->resetCamera();
        view_->show();
        QVERIFY(QTest::qWaitForWindowExposed(view_.get()));
        QTRY_VERIFY(view_->framesRendered() > 0);
    }

    void rendersAtDevicePixelResolution() {
        const double expected = qEnvironmentVariableIntValue("PBDLAB_EXPECT_DPR") > 0
                                    ? qEnvironmentVariableIntValue("PBDLAB_EXPECT_DPR")
                                    : 1.0;
        QCOMPARE(view_->devicePixelRatioF(), expected);
        const QImage frame = view_->grabFramebuffer();
        const QSize devicePixels(int(std::lround(view_->width() * expected)),
                                 int(std::lround(view_->height() * expected)));
        QCOMPARE(frame.size(), devicePixels);
        const int* windowSize = view_->renderWindow()->GetSize();
        QCOMPARE(QSize(windowSize[0], windowSize[1]), devicePixels);
    }

    void objectColoursOnBackground() {
        const QImage frame = view_->grabFramebuffer().convertToFormat(QImage::Format_RGB32);
        const int pixels = frame.width() * frame.height();
        const int orange = countPixels(frame, isClothOrange);
        const int blue = countPixels(frame, isBodyBlue);
        QVERIFY2(orange > pixels / 50,
                 qPrintable(QString("cloth pixels: %1 of %2").arg(orange).arg(pixels)));
        QVERIFY2(blue > pixels / 100,
                 qPrintable(QString("torus pixels: %1 of %2").arg(blue).arg(pixels)));
        // Background elsewhere: the gradient's colours at the top and bottom right corners.
        QVERIFY(near(frame.pixel(frame.width() - 2, 1), top_, 6));
        QVERIFY(near(frame.pixel(frame.width() - 2, frame.height() - 2), bottom_, 6));
        // The cloth is above the torus (y up): the centre of orange pixels is higher on screen.
        double orangeY = 0, blueY = 0;
        for (int y = 0; y < frame.height(); ++y) {
            for (int x = 0; x < frame.width(); ++x) {
                orangeY += isClothOrange(frame.pixel(x, y)) ? y : 0;
                blueY += isBodyBlue(frame.pixel(x, y)) ? y : 0;
            }
        }
        QVERIFY(orangeY / orange < blueY / blue);
    }

    void leftDragRotatesTheCamera() {
        view_->resetCamera();
        const QImage before = view_->grabFramebuffer();
        vtkCamera* cam = view_->camera();
        const Vec3 focal = toVec(cam->GetFocalPoint());
        const Vec3 d0 = toVec(cam->GetPosition()) - focal;
        const double distance = cam->GetDistance();
        const QPointF c(view_->width() / 2.0, view_->height() / 2.0);
        drag(c, c + QPointF(50, 0), Qt::LeftButton); // 0.4 degrees per pixel about y
        const Vec3 d1 = toVec(cam->GetPosition()) - focal;
        QVERIFY(std::abs(cam->GetDistance() - distance) < 1e-9 * distance);
        const double angle0 = std::atan2(d0.x(), d0.z()), angle1 = std::atan2(d1.x(), d1.z());
        double turned = (angle1 - angle0) * 180 / M_PI;
        turned = std::remainder(turned, 360.0);
        QVERIFY2(std::abs(std::abs(turned) - 20.0) < 0.5, qPrintable(QString::number(turned)));
        QVERIFY(std::abs(d1.y() - d0.y()) < 1e-9); // horizontal drag keeps the elevation
        const QImage after = view_->grabFramebuffer();
        QVERIFY(differingPixels(before, after) > 1000);

        // A vertical drag raises the camera but never past the pole.
        drag(c, c + QPointF(0, 1000), Qt::LeftButton);
        double up[3];
        cam->GetViewUp(up);
        QVERIFY(up[1] > 0.03);
        QVERIFY(toVec(cam->GetPosition()).y() > focal.y());
    }

    void shiftDragPansAndWheelZooms() {
        view_->resetCamera();
        vtkCamera* cam = view_->camera();
        const Vec3 focal = toVec(cam->GetFocalPoint());
        const double distance = cam->GetDistance();
        const QPointF c(view_->width() / 2.0, view_->height() / 2.0);
        drag(c, c + QPointF(40, 0), Qt::LeftButton, Qt::ShiftModifier);
        const Vec3 moved = toVec(cam->GetFocalPoint());
        QVERIFY((moved - focal).norm() > 1e-3);
        QVERIFY(std::abs(cam->GetDistance() - distance) < 1e-9 * distance);
        // Dragging right moves the scene right: the focal point moves to the camera's left.
        const Vec3 right = toVec(cam->GetDirectionOfProjection()).cross(toVec(cam->GetViewUp()));
        QVERIFY((moved - focal).dot(right) < 0);

        QWheelEvent wheel(c, view_->mapToGlobal(c), QPoint(), QPoint(0, 120), Qt::NoButton,
                          Qt::NoModifier, Qt::NoScrollPhase, false);
        QCoreApplication::sendEvent(view_.get(), &wheel);
        QVERIFY(std::abs(cam->GetDistance() - distance / 1.15) < 1e-9 * distance);

        const double beforeMiddle = cam->GetDistance();
        drag(c, c + QPointF(0, -30), Qt::MiddleButton);
        QCOMPARE(cam->GetDistance(), beforeMiddle); // middle drag pans, never zooms
    }

    void keyRResetsTheCamera() {
        view_->resetCamera();
        vtkCamera* cam = view_->camera();
        const Vec3 home = toVec(cam->GetPosition());
        view_->rotateCamera(70, 20);
        view_->zoomCamera(2.0);
        QVERIFY((toVec(cam->GetPosition()) - home).norm() > 0.1);
        view_->setFocus();
        QTest::keyClick(view_.get(), Qt::Key_R);
        QVERIFY((toVec(cam->GetPosition()) - home).norm() < 1e-9);
    }

    void renderImageHasTheRequestedSize() {
        const QImage image = view_->renderImage(QSize(333, 177));
        QCOMPARE(image.size(), QSize(333, 177));
        QVERIFY(countPixels(image, isClothOrange) > 333 * 177 / 50);
        const QImage large =
            view_->renderImage(QSize(1600, 1000)); // larger than the widget and screen
        QCOMPARE(large.size(), QSize(1600, 1000));
        QVERIFY(countPixels(large, isClothOrange) > 1600 * 1000 / 50);
        // The widget renders at its own size again afterwards.
        QCOMPARE(view_->grabFramebuffer().size(), view_->size() * view_->devicePixelRatio());
    }

    void aMovingCameraDrawsAHeavyViewSmallerThenFullSize() {
        // Every view counts as heavy (budget 0): while the camera moves it is drawn at half
        // size and stretched to the widget; picking still finds what is under the mouse; once
        // the camera rests the view is drawn at full size again, without being asked.
        view_->resetCamera();
        (void)view_->grabFramebuffer(); // a full-size frame, timed
        view_->setMovingFrameBudget(0);
        const QPointF centre(view_->width() / 2.0, view_->height() / 2.0);
        const VtkViewport::Pick still = view_->pick(centre);
        QVERIFY(still.actor != nullptr);
        double world[3] = {still.position[0], still.position[1], still.position[2]};
        view_->rotateCamera(0.001, 0); // moves, by a hair
        QVERIFY(view_->cameraMoving());
        const QImage moving = view_->grabFramebuffer();
        QVERIFY(view_->lastFrameReduced());
        const double dpr = view_->devicePixelRatioF();
        const QSize device(int(std::lround(view_->width() * dpr)),
                           int(std::lround(view_->height() * dpr)));
        QCOMPARE(moving.size(), device); // stretched to the whole widget
        const int* drawn = view_->renderWindow()->GetSize();
        QCOMPARE(QSize(drawn[0], drawn[1]), QSize(int(std::lround(device.width() * 0.5)),
                                                  int(std::lround(device.height() * 0.5))));
        const QImage small = moving.convertToFormat(QImage::Format_RGB32);
        QVERIFY(countPixels(small, isClothOrange) > small.width() * small.height() / 50);
        const VtkViewport::Pick reduced = view_->pick(centre);
        QCOMPARE(reduced.actor, still.actor);
        QVERIFY((toVec(reduced.position) - toVec(still.position)).norm() < 0.05);
        QPointF projected;
        QVERIFY(view_->project(world, projected));
        QVERIFY((projected - centre).manhattanLength() < 4);
        // At rest: full size again, on its own.
        QTRY_VERIFY_WITH_TIMEOUT(!view_->cameraMoving(), 5000);
        QTRY_VERIFY_WITH_TIMEOUT(!view_->lastFrameReduced(), 5000);
        drawn = view_->renderWindow()->GetSize();
        QCOMPARE(QSize(drawn[0], drawn[1]), device);
        // Full size while moving too, when asked.
        view_->setMovingResolution(1);
        view_->rotateCamera(0.001, 0);
        (void)view_->grabFramebuffer();
        QVERIFY(!view_->lastFrameReduced());
        view_->setMovingResolution(0.5);
        view_->setMovingFrameBudget(VtkViewport::kMovingFrameBudgetMs);
        QTRY_VERIFY_WITH_TIMEOUT(!view_->cameraMoving(), 5000);
    }

    void aHeavyBodyIsDrawnCoarseWhileTheCameraMoves() {
        // A sheet of 240 x 240 vertices (114,242 triangles) is heavy: while the camera moves it
        // is drawn from a mesh of at most an eighth of its triangles whose points are its own
        // particles, with its field; the frame after, and anything picked, see it whole.
        Scene big;
        ClothSheetSpec sheet;
        sheet.columns = 240;
        sheet.rows = 240;
        sheet.center = Vec3(0, 3, 0); // above the sample, out of its way
        big.bodies.push_back(makeClothSheet(big.particles, sheet, "big"));
        const std::size_t triangles = big.bodies[0].triangles.size();
        QVERIFY(triangles > SceneActors::kCoarseFrom);
        SceneActors heavy(view_->renderer());
        heavy.setScene(big);
        vtkPolyData* full = heavy.surface(0);
        QCOMPARE(heavy.actor(0)->GetMapper()->GetInput(), full);
        QCOMPARE(heavy.coarseTriangles(0), std::size_t(0)); // made when first needed

        heavy.setCoarse(true);
        const std::size_t coarse = heavy.coarseTriangles(0);
        QVERIFY2(coarse <= triangles / 8 && coarse > triangles / 64,
                 qPrintable(QString::number(coarse)));
        auto* drawn = vtkPolyData::SafeDownCast(heavy.actor(0)->GetMapper()->GetInput());
        QVERIFY(drawn != nullptr && drawn != full);
        QCOMPARE(std::size_t(drawn->GetNumberOfPolys()), coarse);
        // Its points are particles of the sheet, and it spans the sheet.
        double fullBounds[6], coarseBounds[6];
        full->GetBounds(fullBounds);
        drawn->GetBounds(coarseBounds);
        for (int k = 0; k < 6; ++k) {
            QVERIFY(std::abs(fullBounds[k] - coarseBounds[k]) < 0.05);
        }
        for (vtkIdType i = 0; i < drawn->GetNumberOfPoints(); i += 97) {
            const Vec3 p = toVec(drawn->GetPoint(i));
            const auto it =
                std::find_if(big.particles.positions.begin(), big.particles.positions.end(),
                             [&](const Vec3& x) { return (x - p).norm() < 1e-12; });
            QVERIFY(it != big.particles.positions.end());
        }
        heavy.setCoarse(false);
        QCOMPARE(heavy.actor(0)->GetMapper()->GetInput(), full);

        // It follows the particles, and shows the field the whole sheet shows.
        for (Vec3& x : big.particles.positions) {
            x.y() += 0.5;
        }
        heavy.updatePositions(big);
        std::vector<double> field(triangles);
        for (std::size_t t = 0; t < triangles; ++t) {
            field[t] = double(t % 7);
        }
        heavy.setBodyField(0, field);
        heavy.setCoarse(true);
        drawn = vtkPolyData::SafeDownCast(heavy.actor(0)->GetMapper()->GetInput());
        drawn->GetBounds(coarseBounds);
        QVERIFY(std::abs(coarseBounds[2] - 3.5) < 1e-9 && std::abs(coarseBounds[3] - 3.5) < 1e-9);
        vtkDataArray* values = drawn->GetCellData()->GetScalars();
        QVERIFY(values != nullptr);
        QCOMPARE(std::size_t(values->GetNumberOfTuples()), coarse);
        QVERIFY(values->GetRange()[1] == 6 && values->GetRange()[0] == 0);
        QVERIFY(heavy.actor(0)->GetMapper()->GetScalarVisibility());
        heavy.setCoarse(false);
        heavy.clearFields();

        // The viewport's moving frames switch it for the frame only.
        const auto starting = connect(view_.get(), &VtkViewport::frameStarting, this,
                                      [&](bool moving) { heavy.setCoarse(moving); });
        bool coarseDuringFrame = false;
        const auto rendered = connect(view_.get(), &VtkViewport::frameRendered, this, [&] {
            coarseDuringFrame = heavy.actor(0)->GetMapper()->GetInput() != full;
            heavy.setCoarse(false);
        });
        (void)view_->grabFramebuffer();
        view_->setMovingFrameBudget(0);
        view_->rotateCamera(0.001, 0);
        (void)view_->grabFramebuffer();
        QVERIFY(view_->lastFrameReduced());
        QVERIFY(coarseDuringFrame);
        QCOMPARE(heavy.actor(0)->GetMapper()->GetInput(), full); // picking sees it whole
        QTRY_VERIFY_WITH_TIMEOUT(!view_->cameraMoving(), 5000);
        (void)view_->grabFramebuffer();
        QVERIFY(!coarseDuringFrame);
        view_->setMovingFrameBudget(VtkViewport::kMovingFrameBudgetMs);
        disconnect(starting);
        disconnect(rendered);
    }

    void wireframeAndVisibility() {
        view_->resetCamera();
        const int solid = countPixels(view_->grabFramebuffer(), isClothOrange);
        actors_->setWireframe(true);
        QCOMPARE(actors_->actor(1)->GetProperty()->GetRepresentation(), VTK_WIREFRAME);
        const int wire = countPixels(view_->grabFramebuffer(), isClothOrange);
        QVERIFY2(wire < solid * 0.8 && wire > 0,
                 qPrintable(QString("%1 vs %2").arg(wire).arg(solid)));
        actors_->setWireframe(false);
        actors_->setBodyVisible(1, false);
        QCOMPARE(countPixels(view_->grabFramebuffer(), isClothOrange), 0);
        actors_->setBodyVisible(1, true);
        QCOMPARE(countPixels(view_->grabFramebuffer(), isClothOrange), solid);
    }

    void movedParticlesReachTheSurfacesExactly() {
        // The view's update writes each body's points and vertex normals straight into the VTK
        // arrays: after a step of the sample, every point is the particle's position to the bit
        // and every normal the area-weighted one core computes.
        Result<Scene> made = makeScene("sample");
        QVERIFY(made.ok());
        Scene scene = *made;
        for (std::size_t i = 0; i < scene.particles.size(); ++i) {
            scene.particles.positions[i] += Vec3(0.01 * std::sin(double(i)), 0.02, 0.0);
        }
        actors_->updatePositions(scene);
        for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
            const Body& body = scene.bodies[b];
            vtkPolyData* surface = actors_->surface(b);
            QCOMPARE(surface->GetNumberOfPoints(), vtkIdType(body.particleCount));
            std::vector<Vec3> local(scene.particles.positions.begin() + body.firstParticle,
                                    scene.particles.positions.begin() + body.firstParticle +
                                        body.particleCount);
            std::vector<Triangle> triangles = body.triangles;
            for (Triangle& t : triangles) {
                for (Index& v : t) {
                    v -= body.firstParticle;
                }
            }
            const std::vector<Vec3> normals = vertexNormals(triangles, local);
            vtkDataArray* n = surface->GetPointData()->GetNormals();
            for (std::size_t i = 0; i < local.size(); ++i) {
                double x[3];
                surface->GetPoint(vtkIdType(i), x);
                QVERIFY(x[0] == local[i].x() && x[1] == local[i].y() && x[2] == local[i].z());
                const double* ni = n->GetTuple3(vtkIdType(i));
                QVERIFY2((Vec3(ni[0], ni[1], ni[2]) - normals[i]).norm() < 1e-12,
                         qPrintable(QString("body %1 vertex %2").arg(b).arg(i)));
            }
        }
        actors_->updatePositions(*made); // as it was, for the tests after this one
    }

    void axesToggle() {
        view_->setAxesVisible(false);
        const QImage without = view_->grabFramebuffer();
        view_->setAxesVisible(true);
        const QImage with = view_->grabFramebuffer();
        QVERIFY(view_->axesVisible());
        // The triad's red x axis appears only in the lower-left corner.
        const QRect corner(0, with.height() * 3 / 4, with.width() / 5, with.height() / 4);
        auto red = [](QRgb c) { return qRed(c) > 150 && qGreen(c) < 80 && qBlue(c) < 80; };
        QVERIFY(countPixels(with.copy(corner), red) > 10);
        QCOMPARE(countPixels(without.copy(corner), red), 0);
    }

    void noGlOrVtkErrors() {
        QVERIFY(view_->framesRendered() > 10);
        QCOMPARE(view_->glErrorCount(), 0);
        QCOMPARE(relay_->errorCount(), 0);
        QCOMPARE(relay_->warningCount(), 0);
    }

    void cleanupTestCase() {
        actors_.reset();
        view_.reset();
    }
};

PBDLAB_GUI_TEST_MAIN(TestViewport)
#include "tst_viewport.moc"
