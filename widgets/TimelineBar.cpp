#include "widgets/TimelineBar.h"

#include <QAction>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QMouseEvent>
#include <QPainter>
#include <QSpinBox>
#include <QToolButton>

#include <algorithm>
#include <cmath>

namespace pbd {

namespace {
constexpr int kMargin = 8; // pixels left and right of frames 0 and end
}

TimelineTrack::TimelineTrack(QWidget* parent)
    : QWidget(parent) {
    setObjectName(QStringLiteral("timelineTrack"));
    setMouseTracking(false);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    setToolTip(tr("Drag to scrub the cached frames (the marked band); frames past it are "
                  "computed by Play"));
}

QSize TimelineTrack::sizeHint() const {
    return {400, 30};
}
QSize TimelineTrack::minimumSizeHint() const {
    return {100, 30};
}

void TimelineTrack::setLabel(const QString& text) {
    if (text != label_) {
        label_ = text;
        update();
    }
}

void TimelineTrack::setEnd(std::size_t end) {
    end_ = std::max<std::size_t>(end, 1);
    update();
}

void TimelineTrack::setCurrent(std::size_t frame) {
    if (frame != current_) {
        current_ = frame;
        update();
    }
}

void TimelineTrack::setCached(std::size_t first, std::size_t last, bool any) {
    if (first != cachedFirst_ || last != cachedLast_ || any != anyCached_) {
        cachedFirst_ = first;
        cachedLast_ = last;
        anyCached_ = any;
        update();
    }
}

int TimelineTrack::xOf(std::size_t frame) const {
    const double w = std::max(1, width() - 2 * kMargin);
    return kMargin + int(std::lround(w * double(std::min(frame, end_)) / double(end_)));
}

std::size_t TimelineTrack::frameAt(int x) const {
    const double w = std::max(1, width() - 2 * kMargin);
    const double f = std::clamp((x - kMargin) / w, 0.0, 1.0) * double(end_);
    return std::size_t(std::lround(f));
}

void TimelineTrack::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing, false);
    const QPalette& pal = palette();
    const int h = height();
    p.fillRect(rect(), pal.color(QPalette::Base));
    // Ticks: about one per 60 pixels, at round frame counts.
    const double pixelsPerFrame = double(std::max(1, width() - 2 * kMargin)) / double(end_);
    std::size_t tick = 1;
    for (std::size_t t :
         {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000}) {
        tick = t;
        if (double(t) * pixelsPerFrame >= 60) {
            break;
        }
    }
    p.setPen(pal.color(QPalette::Mid));
    QFont small = font();
    small.setPointSizeF(std::max(6.0, small.pointSizeF() * 0.8));
    p.setFont(small);
    for (std::size_t f = 0; f <= end_; f += tick) {
        const int x = xOf(f);
        p.drawLine(x, h - 6, x, h - 1);
        p.drawText(x + 2, h - 8, QString::number(f));
    }
    // The cached range: a band along the bottom.
    if (anyCached_) {
        const int x0 = xOf(cachedFirst_), x1 = std::max(xOf(cachedLast_), x0 + 2);
        QColor band = pal.color(QPalette::Highlight);
        band.setAlpha(140);
        p.fillRect(QRect(x0, h - 5, x1 - x0, 5), band);
    }
    // What the cache holds, in the top right corner.
    p.setPen(pal.color(QPalette::Text));
    p.drawText(rect().adjusted(0, 1, -kMargin, 0), Qt::AlignRight | Qt::AlignTop, label_);
    // The playhead.
    const int x = xOf(current_);
    p.setPen(QPen(QColor(220, 60, 40), 2));
    p.drawLine(x, 0, x, h);
}

void TimelineTrack::mousePressEvent(QMouseEvent* event) {
    if (event->button() == Qt::LeftButton) {
        emit scrubbed(frameAt(int(event->position().x())));
    }
}

void TimelineTrack::mouseMoveEvent(QMouseEvent* event) {
    if (event->buttons() & Qt::LeftButton) {
        const std::size_t f = frameAt(int(event->position().x()));
        if (f != current_) {
            emit scrubbed(f);
        }
    }
}

TimelineBar::TimelineBar(const QList<QAction*>& transport, QWidget* parent)
    : QWidget(parent)
    , track_(new TimelineTrack(this))
    , frame_(new QSpinBox(this))
    , end_(new QSpinBox(this))
    , time_(new QLabel(this)) {
    setObjectName(QStringLiteral("timelineBar"));
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(4, 2, 4, 2);
    row->setSpacing(2);
    for (QAction* a : transport) {
        if (!a) {
            row->addSpacing(6);
            continue;
        }
        auto* b = new QToolButton(this);
        b->setDefaultAction(a);
        b->setAutoRaise(true);
        b->setObjectName(QStringLiteral("timeline_") + a->objectName());
        row->addWidget(b);
    }
    row->addSpacing(6);
    row->addWidget(track_, 3);
    frame_->setObjectName(QStringLiteral("timelineFrame"));
    frame_->setRange(0, 9999999);
    frame_->setToolTip(tr("The frame shown (a frame is a step); type one to go to it"));
    frame_->setKeyboardTracking(false);
    end_->setObjectName(QStringLiteral("timelineEnd"));
    end_->setRange(1, 9999999);
    end_->setPrefix(tr("/ "));
    end_->setValue(int(track_->end()));
    end_->setToolTip(tr("The track's last frame; with Loop on, playback goes back to the start "
                        "there"));
    end_->setKeyboardTracking(false);
    frame_->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
    end_->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
    time_->setObjectName(QStringLiteral("timelineTime"));
    time_->setMinimumWidth(fontMetrics().horizontalAdvance(QStringLiteral("t = 00.000 s")));
    row->addWidget(frame_);
    row->addWidget(time_);
    row->addWidget(end_);
    time_->setText(QStringLiteral("t = 0.000 s"));
    setCache(0, 0, 0, 0, 0, 0);
    connect(track_, &TimelineTrack::scrubbed, this, &TimelineBar::frameRequested);
    connect(frame_, &QSpinBox::valueChanged, this, [this](int v) {
        if (!updating_) {
            emit frameRequested(std::size_t(v));
        }
    });
    connect(end_, &QSpinBox::valueChanged, this, [this](int v) {
        track_->setEnd(std::size_t(v));
        if (!updating_) {
            emit endChanged(std::size_t(v));
        }
    });
}

void TimelineBar::setCurrent(std::size_t frame, double time) {
    updating_ = true;
    if (frame > track_->end()) {
        setEnd(frame); // the run went past the end: the track follows it
    }
    track_->setCurrent(frame);
    if (!frame_->hasFocus()) {
        frame_->setValue(int(frame));
    }
    time_->setText(QStringLiteral("t = %1 s").arg(time, 0, 'f', 3));
    updating_ = false;
}

void TimelineBar::setCache(std::size_t first, std::size_t last, std::size_t frames,
                           std::size_t bytes, std::size_t spilled, std::size_t dropped) {
    track_->setCached(first, last, frames > 0);
    QString text = frames == 0 ? tr("cache empty")
                               : tr("cache %1–%2, %3")
                                     .arg(first)
                                     .arg(last)
                                     .arg(QLocale().formattedDataSize(qint64(bytes)));
    if (spilled > 0) {
        text += tr(" · %1 on disk").arg(spilled);
    }
    if (dropped > 0) {
        text += tr(" · %1 dropped").arg(dropped);
    }
    // Drawn in the track's corner, so it never widens the window.
    track_->setLabel(text);
    track_->setToolTip(tr("The frame cache: %1 frames, %2. Drag to show a cached frame; frames "
                          "past the band are computed by Play")
                           .arg(frames)
                           .arg(text));
}

void TimelineBar::setEnd(std::size_t end) {
    const bool was = updating_;
    updating_ = true;
    end_->setValue(int(std::max<std::size_t>(end, 1)));
    track_->setEnd(std::max<std::size_t>(end, 1));
    updating_ = was;
}

std::size_t TimelineBar::end() const {
    return track_->end();
}
std::size_t TimelineBar::current() const {
    return track_->current();
}

} // namespace pbd
