#pragma once
// The Python dock's widget: what was typed and printed, a prompt (">>>" or "..." while a
// statement goes on), the input line with its history (Up and Down), and Stop. It knows nothing
// of Python: the app's console runs what it submits and sends back what to show.

#include <QStringList>
#include <QWidget>

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;

namespace pbd {

class PythonConsolePanel : public QWidget {
    Q_OBJECT
public:
    enum class Kind { Input, Output, Error, Note };

    explicit PythonConsolePanel(QWidget* parent = nullptr);

    QString text() const; // everything shown, as plain text
    QLineEdit* input() const { return input_; }
    QStringList history() const { return history_; }
    void setHistory(const QStringList& lines);
    static constexpr int kHistoryLength = 500;

public slots:
    void append(const QString& text, pbd::PythonConsolePanel::Kind kind);
    // True while a statement goes on ("..."), false for a new one (">>>").
    void setContinuation(bool more);
    // While code runs, the line stays open for the next input; Stop interrupts.
    void setBusy(bool busy);
    void clear();

signals:
    void submitted(const QString& line);
    void interruptRequested();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void submit();

    QPlainTextEdit* output_;
    QLabel* prompt_;
    QLineEdit* input_;
    QPushButton* stop_;
    QStringList history_;
    int historyIndex_ = 0; // == history_.size(): the line being typed
    QString typing_;       // what was typed before walking the history
};

} // namespace pbd
