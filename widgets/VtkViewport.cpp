#include "widgets/VtkViewport.h"

#include <QElapsedTimer>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QOpenGLContext>
#include <QOpenGLExtraFunctions>
#include <QOpenGLFramebufferObject>
#include <QOpenGLFunctions>
#include <QRubberBand>
#include <QSurfaceFormat>
#include <QTimer>
#include <QWheelEvent>

#include <vtkCallbackCommand.h>
#include <vtkCamera.h>
#include <vtkCaptionActor2D.h>
#include <vtkCellPicker.h>
#include <vtkCommand.h>
#include <vtkLightKit.h>
#include <vtkRendererCollection.h>
#include <vtkTextProperty.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>

namespace pbd {

QSurfaceFormat VtkViewport::surfaceFormat() {
    // VTK's OpenGL2 backend needs a 3.2 core profile; it renders into its own framebuffer,
    // so the widget's depth and stencil buffers are not used.
    QSurfaceFormat format;
    format.setRenderableType(QSurfaceFormat::OpenGL);
    format.setVersion(3, 2);
    format.setProfile(QSurfaceFormat::CoreProfile);
    format.setSwapBehavior(QSurfaceFormat::DoubleBuffer);
    format.setRedBufferSize(8);
    format.setGreenBufferSize(8);
    format.setBlueBufferSize(8);
    format.setAlphaBufferSize(8);
    format.setDepthBufferSize(24);
    format.setStencilBufferSize(0);
    format.setSamples(0);
    return format;
}

namespace {

constexpr double kDegreesPerPixel = 0.4;
// A press and release closer than this (logical pixels) is a click, not a drag.
constexpr int kClickTolerancePixels = 3;
constexpr double kZoomPerWheelStep = 1.15;

} // namespace

VtkViewport::VtkViewport(QWidget* parent)
    : QOpenGLWidget(parent) {
    setFormat(surfaceFormat());
    setFocusPolicy(Qt::StrongFocus);
    setMinimumSize(64, 64);
    setMouseTracking(true); // hover picking
    restTimer_ = new QTimer(this);
    restTimer_->setSingleShot(true);
    restTimer_->setInterval(kRestMs);
    connect(restTimer_, &QTimer::timeout, this, [this] {
        moving_ = false;
        if (lastFrameReduced_) {
            update(); // the view at rest, at full size
        }
    });
    hoverTimer_ = new QTimer(this);
    hoverTimer_->setSingleShot(true);
    hoverTimer_->setInterval(100);
    connect(hoverTimer_, &QTimer::timeout, this, [this] {
        if (drag_ == Drag::None) {
            emit hovered(lastMouse_); // where the last move event left the mouse
        }
    });

    renderWindow_->SetOwnContext(false);
    renderWindow_->SetReadyForRendering(false); // only render inside paintGL / renderImage
    renderWindow_->SetFrameBlitModeToBlitToCurrent();
    renderWindow_->SetMultiSamples(0);
    renderWindow_->SetNumberOfLayers(2);
    for (unsigned long id : {vtkCommand::WindowMakeCurrentEvent, vtkCommand::WindowIsCurrentEvent,
                             vtkCommand::WindowFrameEvent}) {
        vtkNew<vtkCallbackCommand> callback;
        callback->SetCallback(&VtkViewport::onWindowEvent);
        callback->SetClientData(this);
        renderWindow_->AddObserver(id, callback);
    }

    renderer_->SetLayer(0);
    renderer_->GradientBackgroundOn();
    // Key, fill and back lights that follow the camera: shapes read at any angle.
    vtkNew<vtkLightKit> lights;
    lights->AddLightsToRenderer(renderer_);
    renderWindow_->AddRenderer(renderer_);
    setBackground(QColor(38, 41, 48), QColor(84, 92, 110));

    // Orientation triad in the lower-left corner, drawn over the scene with its own camera.
    axesRenderer_->SetLayer(1);
    axesRenderer_->SetViewport(0.0, 0.0, 0.16, 0.22);
    axesRenderer_->InteractiveOff();
    axesRenderer_->AddActor(axes_);
    axes_->SetShaftTypeToCylinder();
    axes_->SetTotalLength(1, 1, 1);
    for (vtkCaptionActor2D* caption :
         {axes_->GetXAxisCaptionActor2D(), axes_->GetYAxisCaptionActor2D(),
          axes_->GetZAxisCaptionActor2D()}) {
        caption->GetCaptionTextProperty()->SetFontSize(14);
        caption->GetCaptionTextProperty()->ShadowOff();
        caption->GetCaptionTextProperty()->ItalicOff();
    }
    renderWindow_->AddRenderer(axesRenderer_);
    resetCamera();
}

VtkViewport::~VtkViewport() {
    releaseGraphics();
    // QOpenGLWidget's destructor destroys the context, whose aboutToBeDestroyed must not reach
    // this object any more: by then only its QOpenGLWidget part is left.
    if (QOpenGLContext* c = context()) {
        disconnect(c, &QOpenGLContext::aboutToBeDestroyed, this, &VtkViewport::releaseGraphics);
    }
}

vtkRenderer* VtkViewport::renderer() const {
    return renderer_.Get();
}

vtkGenericOpenGLRenderWindow* VtkViewport::renderWindow() const {
    return renderWindow_.Get();
}

vtkCamera* VtkViewport::camera() const {
    return renderer_->GetActiveCamera();
}

void VtkViewport::onWindowEvent(vtkObject*, unsigned long eventId, void* clientData,
                                void* callData) {
    auto* self = static_cast<VtkViewport*>(clientData);
    QOpenGLContext* ctx = self->context();
    switch (eventId) {
    case vtkCommand::WindowMakeCurrentEvent:
        // QOpenGLWidget::makeCurrent() would rebind the widget's framebuffer under VTK's feet;
        // only make the context current when it is not.
        if (ctx != nullptr && QOpenGLContext::currentContext() != ctx) {
            ctx->makeCurrent(ctx->surface());
        }
        break;
    case vtkCommand::WindowIsCurrentEvent:
        *static_cast<bool*>(callData) = ctx != nullptr && QOpenGLContext::currentContext() == ctx;
        break;
    case vtkCommand::WindowFrameEvent:
        break; // QOpenGLWidget composes and swaps on its own
    default:
        break;
    }
}

void VtkViewport::initializeGL() {
    renderWindow_->SetMapped(1);
    renderWindow_->SetIsDirect(1);
    renderWindow_->SetSupportsOpenGL(1);
    renderWindow_->SetForceMaximumHardwareLineWidth(1);
    renderWindow_->OpenGLInitContext();
    graphicsReady_ = true;
    connect(context(), &QOpenGLContext::aboutToBeDestroyed, this, &VtkViewport::releaseGraphics,
            Qt::UniqueConnection);
}

void VtkViewport::releaseGraphics() {
    if (!graphicsReady_) {
        return;
    }
    graphicsReady_ = false;
    makeCurrent();
    reduced_.reset();
    renderWindow_->Finalize();
    doneCurrent();
}

void VtkViewport::resizeGL(int, int) {
    // The size is applied per frame in renderVtk, in device pixels.
}

void VtkViewport::syncAxesCamera() {
    vtkCamera* main = renderer_->GetActiveCamera();
    vtkCamera* axesCamera = axesRenderer_->GetActiveCamera();
    double direction[3];
    main->GetDirectionOfProjection(direction);
    constexpr double distance = 6.0;
    axesCamera->SetFocalPoint(0, 0, 0);
    axesCamera->SetPosition(-direction[0] * distance, -direction[1] * distance,
                            -direction[2] * distance);
    axesCamera->SetViewUp(main->GetViewUp());
    axesCamera->SetViewAngle(30);
    axesRenderer_->ResetCameraClippingRange();
}

void VtkViewport::renderVtk(int pixelWidth, int pixelHeight, double textScale) {
    renderWindow_->SetSize(pixelWidth, pixelHeight);
    renderWindow_->SetScreenSize(pixelWidth, pixelHeight);
    renderWindow_->SetDPI(std::max(1, int(std::lround(72 * devicePixelRatioF() * textScale))));
    renderer_->ResetCameraClippingRange();
    syncAxesCamera();
    renderWindow_->SetReadyForRendering(true);
    renderWindow_->Render();
    renderWindow_->SetReadyForRendering(false);
    ++frames_;
    checkGlErrors();
}

void VtkViewport::checkGlErrors() {
    QOpenGLFunctions* gl = context()->functions();
    for (GLenum error = gl->glGetError(); error != GL_NO_ERROR; error = gl->glGetError()) {
        ++glErrors_;
        emit glErrorOccurred(
            QStringLiteral("OpenGL error 0x%1 after a frame").arg(error, 4, 16, QLatin1Char('0')));
    }
}

void VtkViewport::paintGL() {
    if (!graphicsReady_) {
        return;
    }
    const qreal dpr = devicePixelRatioF();
    QElapsedTimer clock;
    clock.start();
    const int w = int(std::lround(width() * dpr));
    const int h = int(std::lround(height() * dpr));
    const bool reduce = moving_ && movingScale_ < 1 && lastFullRenderMs_ > movingBudgetMs_;
    emit frameStarting(reduce);
    if (reduce) {
        renderReduced(w, h);
    } else {
        renderVtk(w, h);
    }
    lastRenderMs_ = double(clock.nsecsElapsed()) / 1e6;
    if (!reduce) {
        lastFullRenderMs_ = lastRenderMs_;
    }
    lastFrameReduced_ = reduce;
    emit frameRendered();
}

void VtkViewport::renderReduced(int pixelWidth, int pixelHeight) {
    const QSize size(std::max(1, int(std::lround(pixelWidth * movingScale_))),
                     std::max(1, int(std::lround(pixelHeight * movingScale_))));
    if (!reduced_ || reduced_->size() != size) {
        QOpenGLFramebufferObjectFormat format;
        format.setAttachment(QOpenGLFramebufferObject::CombinedDepthStencil);
        reduced_ = std::make_unique<QOpenGLFramebufferObject>(size, format);
    }
    if (!reduced_->isValid() || !reduced_->bind()) {
        reduced_.reset();
        renderVtk(pixelWidth, pixelHeight); // no framebuffer to spare: full size
        return;
    }
    renderVtk(size.width(), size.height(), movingScale_);
    QOpenGLExtraFunctions* gl = context()->extraFunctions();
    gl->glBindFramebuffer(GL_READ_FRAMEBUFFER, reduced_->handle());
    gl->glBindFramebuffer(GL_DRAW_FRAMEBUFFER, defaultFramebufferObject());
    gl->glBlitFramebuffer(0, 0, size.width(), size.height(), 0, 0, pixelWidth, pixelHeight,
                          GL_COLOR_BUFFER_BIT, GL_LINEAR);
    gl->glBindFramebuffer(GL_FRAMEBUFFER, defaultFramebufferObject());
    checkGlErrors();
}

void VtkViewport::setMovingResolution(double scale) {
    movingScale_ = std::clamp(scale, 0.1, 1.0);
    if (lastFrameReduced_) {
        update();
    }
}

void VtkViewport::cameraMoved() {
    moving_ = true;
    restTimer_->start(); // restarts: the camera rests kRestMs after its last move
}

double VtkViewport::displayScale() const {
    const int* drawn = renderWindow_->GetSize();
    const double device = height() * devicePixelRatioF();
    return drawn != nullptr && drawn[1] > 0 && device > 0 ? device / drawn[1] : 1.0;
}

QImage VtkViewport::renderImage(const QSize& pixelSize) {
    if (!graphicsReady_ || pixelSize.isEmpty()) {
        return {};
    }
    makeCurrent();
    QOpenGLFramebufferObjectFormat format;
    format.setAttachment(QOpenGLFramebufferObject::CombinedDepthStencil);
    QOpenGLFramebufferObject target(pixelSize, format);
    if (!target.isValid() || !target.bind()) {
        doneCurrent();
        return {};
    }
    renderVtk(pixelSize.width(), pixelSize.height());
    QImage image = target.toImage(/*flipped=*/true); // GL rows run bottom-up
    target.release();
    doneCurrent();
    update(); // the widget's own frame is drawn at its size again
    return image.convertToFormat(QImage::Format_RGB32);
}

void VtkViewport::frameBounds(const double bounds[6]) {
    // A point or a flat box still gets a view of some size around it.
    double b[6];
    double largest = 0;
    for (int a = 0; a < 3; ++a) {
        largest = std::max(largest, bounds[2 * a + 1] - bounds[2 * a]);
    }
    const double pad = std::max(largest * 0.25, 1e-3);
    for (int a = 0; a < 3; ++a) {
        b[2 * a] = bounds[2 * a] - pad;
        b[2 * a + 1] = bounds[2 * a + 1] + pad;
    }
    renderer_->ResetCamera(b);
    renderer_->ResetCameraClippingRange();
    emit cameraChanged();
    update();
}

void VtkViewport::resetCamera() {
    vtkCamera* cam = renderer_->GetActiveCamera();
    cam->SetFocalPoint(0, 0, 0);
    if (planar_) {
        cam->SetPosition(0, 0, 1); // straight at the plane
    } else {
        cam->SetPosition(0.55, 0.45, 1.0); // front, a little right and above: y up
    }
    cam->SetParallelProjection(planar_);
    cam->SetViewUp(0, 1, 0);
    cam->SetViewAngle(30);
    renderer_->ResetCamera(); // the bounding sphere in view: everything shows, loosely
    int* size = renderWindow_->GetSize();
    if (size[0] > 1 && size[1] > 1) {
        // Tighter: the bounding box's corners as seen on screen fill the view, less a margin.
        renderer_->ResetCameraScreenSpace();
        cam->Zoom(0.9);
    }
    emit cameraChanged();
    update();
}

void VtkViewport::setPlanar(bool planar) {
    planar_ = planar;
    resetCamera();
}

void VtkViewport::setAxesVisible(bool visible) {
    axes_->SetVisibility(visible);
    update();
}

bool VtkViewport::axesVisible() const {
    return axes_->GetVisibility() != 0;
}

void VtkViewport::setBackground(const QColor& bottom, const QColor& top) {
    renderer_->SetBackground(bottom.redF(), bottom.greenF(), bottom.blueF());
    renderer_->SetBackground2(top.redF(), top.greenF(), top.blueF());
    update();
}

void VtkViewport::rotateCamera(double azimuthDegrees, double elevationDegrees) {
    // Turntable: yaw about the world's y axis through the focal point, pitch about the camera's
    // right axis, with the elevation kept short of the poles so "up" stays up.
    vtkCamera* cam = renderer_->GetActiveCamera();
    double focalArray[3], positionArray[3];
    cam->GetFocalPoint(focalArray);
    cam->GetPosition(positionArray);
    const Eigen::Vector3d focal(focalArray[0], focalArray[1], focalArray[2]);
    Eigen::Vector3d offset =
        Eigen::Vector3d(positionArray[0], positionArray[1], positionArray[2]) - focal;
    const double distance = offset.norm();
    if (distance <= 0) {
        return;
    }
    const double toRadians = M_PI / 180.0;
    const double elevation = std::asin(std::clamp(offset.y() / distance, -1.0, 1.0)) / toRadians;
    const double pitch = std::clamp(elevation + elevationDegrees, -88.0, 88.0) - elevation;
    offset = Eigen::AngleAxisd(azimuthDegrees * toRadians, Eigen::Vector3d::UnitY()) * offset;
    const Eigen::Vector3d right = Eigen::Vector3d::UnitY().cross(offset).normalized();
    offset = Eigen::AngleAxisd(-pitch * toRadians, right) * offset;
    const Eigen::Vector3d position = focal + offset;
    cam->SetPosition(position.x(), position.y(), position.z());
    cam->SetViewUp(0, 1, 0);
    cam->OrthogonalizeViewUp();
    cameraMoved();
    emit cameraChanged();
    update();
}

void VtkViewport::panCamera(const QPointF& pixelDelta) {
    vtkCamera* cam = renderer_->GetActiveCamera();
    const double heightPx = std::max(1.0, height() * devicePixelRatioF());
    const double worldPerPixel =
        2.0 * cam->GetDistance() * std::tan(cam->GetViewAngle() * M_PI / 360.0) / heightPx;
    double up[3], direction[3], right[3];
    cam->GetViewUp(up);
    cam->GetDirectionOfProjection(direction);
    right[0] = direction[1] * up[2] - direction[2] * up[1];
    right[1] = direction[2] * up[0] - direction[0] * up[2];
    right[2] = direction[0] * up[1] - direction[1] * up[0];
    const double dx = -pixelDelta.x() * devicePixelRatioF() * worldPerPixel;
    const double dy = pixelDelta.y() * devicePixelRatioF() * worldPerPixel;
    double focal[3], position[3];
    cam->GetFocalPoint(focal);
    cam->GetPosition(position);
    for (int i = 0; i < 3; ++i) {
        const double shift = dx * right[i] + dy * up[i];
        focal[i] += shift;
        position[i] += shift;
    }
    cam->SetFocalPoint(focal);
    cam->SetPosition(position);
    cameraMoved();
    emit cameraChanged();
    update();
}

void VtkViewport::zoomCamera(double factor) {
    if (!(factor > 0)) {
        return;
    }
    vtkCamera* cam = renderer_->GetActiveCamera();
    if (cam->GetParallelProjection()) {
        cam->Zoom(factor); // a parallel view zooms by its scale: dollying would change nothing
    } else {
        cam->Dolly(factor);
    }
    cameraMoved();
    emit cameraChanged();
    update();
}

void VtkViewport::mousePressEvent(QMouseEvent* event) {
    lastMouse_ = event->position();
    pressPosition_ = event->position();
    pressModifiers_ = event->modifiers();
    pressMoved_ = false;
    if (event->button() == Qt::LeftButton && selecting_ &&
        !(event->modifiers() & Qt::ShiftModifier)) {
        drag_ = Drag::Select;
    } else if (event->button() == Qt::LeftButton) {
        drag_ = (event->modifiers() & Qt::ShiftModifier)     ? Drag::Pan
                : (event->modifiers() & Qt::ControlModifier) ? Drag::Zoom
                                                             : Drag::Rotate;
    } else if (event->button() == Qt::MiddleButton) {
        drag_ = Drag::Pan;
    } else if (event->button() == Qt::RightButton) {
        drag_ = Drag::Zoom;
    }
    event->accept();
}

void VtkViewport::mouseMoveEvent(QMouseEvent* event) {
    const QPointF delta = event->position() - lastMouse_;
    lastMouse_ = event->position();
    if (drag_ != Drag::None &&
        (event->position() - pressPosition_).manhattanLength() > kClickTolerancePixels) {
        pressMoved_ = true;
    }
    if (drag_ == Drag::None && hoverTimer_ != nullptr) {
        hoverTimer_->start(); // restarts: hover fires once the mouse rests
    }
    switch (drag_) {
    case Drag::Rotate:
        rotateCamera(-delta.x() * kDegreesPerPixel, delta.y() * kDegreesPerPixel);
        break;
    case Drag::Pan:
        panCamera(delta);
        break;
    case Drag::Zoom:
        zoomCamera(std::pow(1.01, -delta.y()));
        break;
    case Drag::Select:
        if (pressMoved_) {
            if (rubberBand_ == nullptr) {
                rubberBand_ = new QRubberBand(QRubberBand::Rectangle, this);
            }
            rubberBand_->setGeometry(
                QRectF(pressPosition_, event->position()).normalized().toRect());
            rubberBand_->show();
        }
        break;
    case Drag::None:
        return;
    }
    event->accept();
}

void VtkViewport::mouseReleaseEvent(QMouseEvent* event) {
    const bool click = event->button() == Qt::LeftButton && drag_ != Drag::None && !pressMoved_;
    const bool select = drag_ == Drag::Select;
    drag_ = Drag::None;
    if (rubberBand_ != nullptr) {
        rubberBand_->hide();
    }
    if (select) {
        const bool add = pressModifiers_ & Qt::ControlModifier;
        if (click) {
            emit selectionClicked(event->position(), add);
        } else if (event->button() == Qt::LeftButton) {
            emit boxSelected(QRectF(pressPosition_, event->position()).normalized(), add);
        }
        event->accept();
        return;
    }
    if (click) {
        if (pressModifiers_ & Qt::ShiftModifier) {
            emit shiftClicked(event->position());
        } else {
            emit clicked(event->position());
        }
    }
    event->accept();
}

void VtkViewport::setSelecting(bool on) {
    selecting_ = on;
    setCursor(on ? Qt::CrossCursor : Qt::ArrowCursor);
}

bool VtkViewport::project(const double world[3], QPointF& widgetPosition) const {
    vtkRenderer* r = renderer();
    if (r == nullptr || width() <= 0 || height() <= 0) {
        return false;
    }
    // In front of the camera? (Behind it, the projection mirrors the point.)
    vtkCamera* cam = r->GetActiveCamera();
    double position[3], focal[3];
    cam->GetPosition(position);
    cam->GetFocalPoint(focal);
    double ahead = 0;
    for (int k = 0; k < 3; ++k) {
        ahead += (world[k] - position[k]) * (focal[k] - position[k]);
    }
    if (ahead <= 0 && !cam->GetParallelProjection()) {
        return false;
    }
    r->SetWorldPoint(world[0], world[1], world[2], 1.0);
    r->WorldToDisplay();
    double display[3];
    r->GetDisplayPoint(display);
    const double ratio = devicePixelRatioF() / displayScale();
    widgetPosition = QPointF(display[0] / ratio, height() - display[1] / ratio);
    return true;
}

VtkViewport::Pick VtkViewport::pick(const QPointF& widgetPosition) const {
    Pick result;
    vtkRenderer* r = renderer();
    if (r == nullptr || width() <= 0 || height() <= 0) {
        return result;
    }
    // VTK's display coordinates are the pixels it drew the last frame in (device pixels, or
    // fewer while the camera moves), origin at the bottom left.
    const double ratio = devicePixelRatioF() / displayScale();
    const double x = widgetPosition.x() * ratio;
    const double y = (height() - widgetPosition.y()) * ratio;
    vtkNew<vtkCellPicker> picker;
    picker->SetTolerance(0.002);
    if (picker->Pick(x, y, 0, r) == 0) {
        return result;
    }
    result.actor = picker->GetActor();
    result.cell = picker->GetCellId();
    picker->GetPickPosition(result.position);
    return result;
}

void VtkViewport::leaveEvent(QEvent* event) {
    hoverTimer_->stop(); // no hover report for a mouse that has gone
    QOpenGLWidget::leaveEvent(event);
}

void VtkViewport::wheelEvent(QWheelEvent* event) {
    const double steps = event->angleDelta().y() / 120.0;
    if (steps != 0) {
        zoomCamera(std::pow(kZoomPerWheelStep, steps));
    }
    event->accept();
}

void VtkViewport::keyPressEvent(QKeyEvent* event) {
    switch (event->key()) {
    case Qt::Key_R:
        resetCamera();
        break;
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        zoomCamera(kZoomPerWheelStep);
        break;
    case Qt::Key_Minus:
        zoomCamera(1.0 / kZoomPerWheelStep);
        break;
    case Qt::Key_Left:
        rotateCamera(5, 0);
        break;
    case Qt::Key_Right:
        rotateCamera(-5, 0);
        break;
    case Qt::Key_Up:
        rotateCamera(0, 5);
        break;
    case Qt::Key_Down:
        rotateCamera(0, -5);
        break;
    default:
        QOpenGLWidget::keyPressEvent(event);
        return;
    }
    event->accept();
}

} // namespace pbd
