#include "widgets/PythonConsolePanel.h"

#include <QFontDatabase>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QTextCharFormat>
#include <QVBoxLayout>

namespace pbd {

PythonConsolePanel::PythonConsolePanel(QWidget* parent)
    : QWidget(parent) {
    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    output_ = new QPlainTextEdit(this);
    output_->setObjectName("pythonOutput");
    output_->setReadOnly(true);
    output_->setFont(mono);
    output_->setMaximumBlockCount(20000);
    output_->setPlaceholderText(
        tr("Python, in this window: 'scene' is the open scene (scene.set(iterations=10), "
           "scene.edit_group('...'), scene.play(), scene.positions...; every change is one "
           "undo step); 'pbdlab' is the module. File ▸ Run Script… runs a file."));
    prompt_ = new QLabel(">>>", this);
    prompt_->setFont(mono);
    input_ = new QLineEdit(this);
    input_->setObjectName("pythonInput");
    input_->setFont(mono);
    input_->installEventFilter(this);
    stop_ = new QPushButton(tr("Stop"), this);
    stop_->setToolTip(tr("Interrupt the running code (KeyboardInterrupt)"));
    stop_->setEnabled(false);
    auto* clear = new QPushButton(tr("Clear"), this);
    auto* row = new QHBoxLayout;
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(prompt_);
    row->addWidget(input_, 1);
    row->addWidget(stop_);
    row->addWidget(clear);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(output_, 1);
    layout->addLayout(row);
    connect(input_, &QLineEdit::returnPressed, this, &PythonConsolePanel::submit);
    connect(stop_, &QPushButton::clicked, this, &PythonConsolePanel::interruptRequested);
    connect(clear, &QPushButton::clicked, this, &PythonConsolePanel::clear);
}

QString PythonConsolePanel::text() const {
    return output_->toPlainText();
}

void PythonConsolePanel::setHistory(const QStringList& lines) {
    history_ = lines.mid(std::max<qsizetype>(0, lines.size() - kHistoryLength));
    historyIndex_ = int(history_.size());
}

void PythonConsolePanel::append(const QString& text, Kind kind) {
    QTextCharFormat format;
    switch (kind) {
    case Kind::Input:
        format.setForeground(palette().color(QPalette::PlaceholderText));
        break;
    case Kind::Error:
        format.setForeground(QColor(200, 40, 40));
        break;
    case Kind::Note:
        format.setFontItalic(true);
        break;
    case Kind::Output:
        break;
    }
    QScrollBar* bar = output_->verticalScrollBar();
    const bool atEnd = bar->value() == bar->maximum();
    QTextCursor cursor(output_->document());
    cursor.movePosition(QTextCursor::End);
    cursor.insertText(text, format);
    if (atEnd) {
        bar->setValue(bar->maximum());
    }
}

void PythonConsolePanel::setContinuation(bool more) {
    prompt_->setText(more ? "..." : ">>>");
}

void PythonConsolePanel::setBusy(bool busy) {
    stop_->setEnabled(busy);
}

void PythonConsolePanel::clear() {
    output_->clear();
}

void PythonConsolePanel::submit() {
    const QString line = input_->text();
    input_->clear();
    if (!line.trimmed().isEmpty() && (history_.isEmpty() || history_.back() != line)) {
        history_.push_back(line);
        if (history_.size() > kHistoryLength) {
            history_.removeFirst();
        }
    }
    historyIndex_ = int(history_.size());
    typing_.clear();
    append(prompt_->text() + " " + line + "\n", Kind::Input);
    emit submitted(line);
}

bool PythonConsolePanel::eventFilter(QObject* watched, QEvent* event) {
    if (watched == input_ && event->type() == QEvent::KeyPress) {
        const int key = static_cast<QKeyEvent*>(event)->key();
        if ((key == Qt::Key_Up || key == Qt::Key_Down) && !history_.isEmpty()) {
            if (historyIndex_ == history_.size()) {
                typing_ = input_->text();
            }
            historyIndex_ =
                std::clamp(historyIndex_ + (key == Qt::Key_Up ? -1 : 1), 0, int(history_.size()));
            input_->setText(historyIndex_ == history_.size() ? typing_ : history_[historyIndex_]);
            return true;
        }
        if (key == Qt::Key_Tab) { // indentation inside a block, not focus to the next widget
            input_->insert("    ");
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

} // namespace pbd
