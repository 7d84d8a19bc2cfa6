#pragma once
// The timeline under the view, as in Blender and Houdini: transport buttons (start, back, play,
// forward, end, loop), a track with the frame cache's range marked and the current frame as a
// playhead that scrubs when dragged, the current frame and the end frame, and what the cache
// holds. A frame is a step. The buttons are the window's actions (so their shortcuts and menu
// entries are the same); the bar only asks for frames.

#include <QWidget>

#include <cstddef>

class QAction;
class QLabel;
class QSpinBox;
class QToolButton;

namespace pbd {

// The track: frames 0..end, the cached range in a band, the playhead.
class TimelineTrack : public QWidget {
    Q_OBJECT
public:
    explicit TimelineTrack(QWidget* parent = nullptr);
    void setEnd(std::size_t end);
    void setCurrent(std::size_t frame);
    void setCached(std::size_t first, std::size_t last, bool any);
    // A line drawn in the top right corner (what the cache holds).
    void setLabel(const QString& text);
    QString label() const { return label_; }
    std::size_t end() const { return end_; }
    std::size_t current() const { return current_; }
    // The frame under x (widget pixels).
    std::size_t frameAt(int x) const;
    int xOf(std::size_t frame) const;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    void scrubbed(std::size_t frame);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;

private:
    std::size_t end_ = 250;
    std::size_t current_ = 0;
    std::size_t cachedFirst_ = 0, cachedLast_ = 0;
    bool anyCached_ = false;
    QString label_;
};

class TimelineBar : public QWidget {
    Q_OBJECT
public:
    // The transport actions in button order; null entries leave a gap.
    TimelineBar(const QList<QAction*>& transport, QWidget* parent = nullptr);

    // The shown frame (a step) and its time, s.
    void setCurrent(std::size_t frame, double time);
    // The cache: its range and frames, the bytes in memory, frames spilled and dropped.
    void setCache(std::size_t first, std::size_t last, std::size_t frames, std::size_t bytes,
                  std::size_t spilled, std::size_t dropped);
    // The last frame of the track (grows as the run passes it).
    void setEnd(std::size_t end);
    std::size_t end() const;
    std::size_t current() const;
    TimelineTrack* track() const { return track_; }

signals:
    // The user asked for a frame: dragged the playhead or typed one.
    void frameRequested(std::size_t frame);
    void endChanged(std::size_t end);

private:
    TimelineTrack* track_;
    QSpinBox* frame_;
    QSpinBox* end_;
    QLabel* time_;
    bool updating_ = false;
};

} // namespace pbd
