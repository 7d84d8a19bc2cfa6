#pragma once
// Python inside the window (the Python dock and File ▸ Run Script…): the process's embedded
// interpreter, on a thread of its own so code never blocks the GUI thread, started the first
// time it is needed; each console has a namespace of its own. Its namespace holds `scene`, the open
// document: reading it reads the latest state the solver handed over; changing it (settings,
// constraint groups, pins, play, undo) goes through the document on the GUI thread, each change one
// undo step, as if made in the window. `pbdlab` (the module) is imported when it can be found.

#include <QObject>
#include <QString>

#include <memory>
#include <utility>

namespace pbd {

class SceneDocument;

class PythonConsole : public QObject {
    Q_OBJECT
public:
    // `window` holds the actions scripts trigger (play, pause, reset).
    PythonConsole(SceneDocument* document, QObject* window, QObject* parent = nullptr);
    ~PythonConsole() override; // interrupts what runs and waits for it

    // A line of the interactive console (a statement may take several: see continuation).
    void submit(const QString& line);
    // A script file, run in the console's namespace (so `scene` is there).
    void runFile(const QString& path);
    // KeyboardInterrupt in the running code; nothing when nothing runs.
    void interrupt();
    bool busy() const;
    // Whether Python was asked for anything yet (it starts then).
    bool started() const { return started_; }

signals:
    void output(const QString& text, bool error);
    void continuation(bool more);
    void busyChanged(bool busy);
    // A job ended (a line or a file), with whether it raised.
    void finished(bool ok);

private:
    struct Job {
        bool file = false;
        QString text;
    };
    struct State;
    void enqueue(Job job);
    std::pair<bool, bool> runJob(State& state, const Job& job); // ok, more

    SceneDocument* document_;
    QObject* window_;
    std::shared_ptr<State> state_;
    bool started_ = false;
};

} // namespace pbd
