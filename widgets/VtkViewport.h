#pragma once
// The 3D view: a QOpenGLWidget that lets VTK render into Qt's framebuffer through a
// vtkGenericOpenGLRenderWindow (Debian's VTK Qt module is built for Qt 5, so we bridge it
// ourselves). Camera interaction is done here, in Qt events, on the GUI thread:
//   left drag: rotate, middle drag or Shift+left drag: pan, right drag or wheel: zoom,
//   R: reset camera; a click (Shift+click) without dragging is reported for picking. All VTK
//   calls happen on the GUI thread.

#include <QColor>
#include <QImage>
#include <QOpenGLWidget>
#include <QPoint>
#include <QSurfaceFormat>

#include <vtkAxesActor.h>
#include <vtkGenericOpenGLRenderWindow.h>
#include <vtkNew.h>
#include <vtkRenderer.h>

#include <memory>

class QOpenGLFramebufferObject;
class QRubberBand;
class QTimer;
class vtkActor;
class vtkCamera;
class vtkObject;

namespace pbd {

class VtkViewport : public QOpenGLWidget {
    Q_OBJECT
public:
    explicit VtkViewport(QWidget* parent = nullptr);
    ~VtkViewport() override;

    // The OpenGL format VTK needs (3.2 core). Set it as the default before QApplication exists
    // so that Qt's compositing context and the view's context can share.
    static QSurfaceFormat surfaceFormat();

    vtkRenderer* renderer() const;
    vtkGenericOpenGLRenderWindow* renderWindow() const;
    vtkCamera* camera() const;

    // Looks at everything visible from the default direction (front, slightly above).
    void resetCamera();
    // Keeps the view direction and moves the camera so the box (xmin, xmax, ymin, ymax, zmin,
    // zmax) fills the view, with some room around it.
    void frameBounds(const double bounds[6]);
    // 2D scenes (everything in the xy plane): the camera looks straight at the plane, in
    // parallel projection, and Reset Camera comes back to that.
    void setPlanar(bool planar);
    bool planar() const { return planar_; }
    void setAxesVisible(bool visible);
    bool axesVisible() const;
    void setBackground(const QColor& bottom, const QColor& top);

    // Renders the current view into an image of exactly `pixelSize` pixels, independent of the
    // widget's size. Returns a null image when GL is not ready.
    QImage renderImage(const QSize& pixelSize);

    // OpenGL errors seen after frames so far (glGetError); 0 on a healthy driver.
    int glErrorCount() const { return glErrors_; }
    int framesRendered() const { return frames_; }
    // How long the last frame drawn on screen took VTK, ms (pbdlab --bench-view).
    double lastRenderMilliseconds() const { return lastRenderMs_; }

    // While the camera moves (a drag, the wheel, the keys, rotateCamera) a view whose last
    // full-size frame took longer than kMovingFrameBudgetMs (1/30 s) is drawn at `scale` of its
    // size in each direction and stretched to the widget, as ParaView and Blender draw a heavy view
    // while it is turned; the frame after the camera has rested kRestMs is full size again.
    // 1 draws every frame at full size. Default 0.5 (Preferences ▸ View).
    static constexpr double kMovingFrameBudgetMs = 1000.0 / 30;
    static constexpr int kRestMs = 250;
    void setMovingResolution(double scale);
    // The frame time past which a view counts as heavy, ms (tests set 0: every view is).
    void setMovingFrameBudget(double milliseconds) { movingBudgetMs_ = milliseconds; }
    double movingResolution() const { return movingScale_; }
    bool cameraMoving() const { return moving_; }
    // Whether the last frame on screen was drawn at the reduced size.
    bool lastFrameReduced() const { return lastFrameReduced_; }

    // Rotates the camera by the given angles (degrees) about the focal point, as a drag would.
    void rotateCamera(double azimuthDegrees, double elevationDegrees);
    void panCamera(const QPointF& pixelDelta);
    void zoomCamera(double factor);

    // What is under a point of the widget (logical pixels, origin top left): the actor, its
    // cell and the world position hit, found by casting a ray (vtkCellPicker). No actor when
    // the ray hits nothing.
    struct Pick {
        vtkActor* actor = nullptr;
        long long cell = -1;
        double position[3] = {0, 0, 0};
    };
    Pick pick(const QPointF& widgetPosition) const;
    // Where a world point appears in the widget (logical pixels, origin top left); false when
    // it is behind the camera.
    bool project(const double world[3], QPointF& widgetPosition) const;

    // Vertex selection mode: a left drag draws a box (boxSelected) instead of rotating, and a
    // click is reported as selectionClicked; with Ctrl held both add to the selection.
    // Middle drag pans, right drag and the wheel zoom as always.
    void setSelecting(bool on);
    bool selecting() const { return selecting_; }

signals:
    // A left click without dragging; with Shift held, shiftClicked instead.
    void clicked(const QPointF& position);
    void shiftClicked(const QPointF& position);
    void selectionClicked(const QPointF& position, bool add);
    void boxSelected(const QRectF& rect, bool add);
    // The mouse rests over the view (no button pressed), at most every 100 ms.
    void hovered(const QPointF& position);
    void cameraChanged();
    // Just before a frame on screen is drawn: whether it is a moving camera's frame of a heavy
    // view (drawn smaller; a scene's actors may draw coarser meshes until frameRendered).
    void frameStarting(bool moving);
    void frameRendered();
    void glErrorOccurred(const QString& message);

protected:
    void initializeGL() override;
    void resizeGL(int w, int h) override;
    void paintGL() override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void leaveEvent(QEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;

private:
    // `textScale`: of the view's own text size (a frame drawn at half size for a moving camera
    // draws its labels at half size too, so that stretched they read as always).
    void renderVtk(int pixelWidth, int pixelHeight, double textScale = 1);
    // A frame drawn at movingScale_ of (pixelWidth, pixelHeight) into reduced_, then stretched
    // into the widget's framebuffer.
    void renderReduced(int pixelWidth, int pixelHeight);
    void cameraMoved();
    // Device pixels of the widget per pixel VTK drew the last frame in (1, or 1 / scale after
    // a reduced frame): picking and projecting convert through it.
    double displayScale() const;
    void syncAxesCamera();
    void releaseGraphics();
    void checkGlErrors();
    static void onWindowEvent(vtkObject* caller, unsigned long eventId, void* clientData,
                              void* callData);

    vtkNew<vtkGenericOpenGLRenderWindow> renderWindow_;
    vtkNew<vtkRenderer> renderer_;
    vtkNew<vtkRenderer> axesRenderer_;
    vtkNew<vtkAxesActor> axes_;
    bool graphicsReady_ = false;
    int glErrors_ = 0;
    int frames_ = 0;
    double lastRenderMs_ = 0;
    double lastFullRenderMs_ = 0;
    double movingScale_ = 0.5;
    double movingBudgetMs_ = kMovingFrameBudgetMs;
    bool moving_ = false;
    bool lastFrameReduced_ = false;
    QTimer* restTimer_ = nullptr;
    std::unique_ptr<QOpenGLFramebufferObject> reduced_;

    enum class Drag { None, Rotate, Pan, Zoom, Select };
    Drag drag_ = Drag::None;
    QPointF lastMouse_;
    QPointF pressPosition_;
    Qt::KeyboardModifiers pressModifiers_;
    bool pressMoved_ = false;
    QTimer* hoverTimer_ = nullptr;
    bool planar_ = false;
    bool selecting_ = false;
    QRubberBand* rubberBand_ = nullptr;
};

} // namespace pbd
