#pragma once
// The Log dock: timestamped messages with a severity, filterable, newest at the bottom.
// append() may be called from any thread; it is delivered on the GUI thread.

#include "widgets/Severity.h"

#include <QWidget>

class QComboBox;
class QTreeWidget;

namespace pbd {

class LogPanel : public QWidget {
    Q_OBJECT
public:
    explicit LogPanel(QWidget* parent = nullptr);

    int count(Severity severity) const;
    int messageCount() const;
    QString message(int row) const;
    Severity severity(int row) const;

public slots:
    void append(pbd::Severity severity, const QString& message);
    void clear();

signals:
    void messageAdded(pbd::Severity severity, const QString& message);

private:
    void applyFilter();

    QTreeWidget* list_;
    QComboBox* filter_;
    int counts_[3] = {0, 0, 0};
};

} // namespace pbd
