// Python's headers name a struct member `slots`, which Qt defines as a macro: they come first.
#pragma push_macro("slots")
#undef slots
#include "python/JsonToPython.h"
#include "python/SceneSettings.h"

#include <pybind11/embed.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>
#pragma pop_macro("slots")

#include "app/PythonConsole.h"
#include "app/SceneDocument.h"
#include "app/SimulationWorker.h"
#include "app/cli/ReportJson.h"
#include "core/constraints/ConstraintBuilders.h"
#include "core/constraints/ConstraintGroups.h"

#include <QAction>
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QMetaObject>
#include <QPointer>
#include <QThread>
#include <QUndoStack>

#include <atomic>
#include <chrono>
#include <optional>

namespace py = pybind11;

namespace pbd {

namespace {

// Where the pbdlab module is: beside the executable in the build tree (build/app/pbdlab ->
// build/python), or installed (<prefix>/bin/pbdlab -> <prefix>/lib/python3/dist-packages, which
// Debian's interpreter already searches for /usr).
QStringList modulePaths() {
    const QDir app(QCoreApplication::applicationDirPath());
    QStringList paths;
    for (const QString& candidate : {app.absoluteFilePath("../python"),
                                     app.absoluteFilePath("../lib/python3/dist-packages")}) {
        if (QDir(candidate).exists("pbdlab")) {
            paths.push_back(QDir::cleanPath(candidate));
        }
    }
    return paths;
}

// The console's `scene`: the open document, read and changed on the GUI thread. The GIL is
// released while the GUI thread works, so the GUI thread never waits for Python.
class WindowScene {
public:
    WindowScene(SceneDocument* document, QObject* window, const std::atomic<bool>* interrupted)
        : document_(document)
        , window_(window)
        , interrupted_(interrupted) {}

    // Runs f on the GUI thread and returns its result; an error message it returns (or a
    // closed window) becomes a Python exception here.
    template <class F> auto gui(F&& f) const {
        using R = decltype(f());
        std::optional<R> result;
        std::string error;
        {
            py::gil_scoped_release unlocked;
            QPointer<SceneDocument> document(document_);
            const bool ran = document && QMetaObject::invokeMethod(
                                             document_,
                                             [&] {
                                                 try {
                                                     result.emplace(f());
                                                 } catch (const std::exception& e) {
                                                     error = e.what();
                                                 }
                                             },
                                             Qt::BlockingQueuedConnection);
            // Not run (or the call dropped unrun, its receiver gone): the window is closing.
            if ((!ran || !result) && error.empty()) {
                error = "the window is closing";
            }
        }
        if (!error.empty()) {
            throw std::invalid_argument(error);
        }
        return std::move(*result);
    }

    std::string name() const {
        return gui([this] { return document_->scene().name; });
    }

    std::shared_ptr<const SimulationSnapshot> latest() const {
        return gui([this] { return document_->worker()->latest(); });
    }

    py::dict settings() const {
        const SolverSettings s = gui([this] { return document_->scene().solver; });
        return python::toPython(cli::settingsJson(s));
    }

    void set(const py::kwargs& kw) const {
        SolverSettings after = gui([this] { return document_->scene().solver; });
        for (const auto& [key, value] : kw) {
            python::setSetting(after, key.cast<std::string>(), value);
        }
        gui([this, after] {
            document_->setSolverSettings(after);
            return true;
        });
    }

    py::list groups() const {
        const nlohmann::json g = gui([this] { return cli::groupsJson(document_->scene()); });
        return python::toPython(g);
    }

    void editGroup(const std::string& spec) const {
        gui([this, spec] {
            // The groups alone (the edit is applied to the elements by the document's command):
            // copying the whole scene stalled the GUI thread on large scenes.
            Scene edited;
            edited.constraintGroups = document_->scene().constraintGroups;
            const Result<int> index = editConstraintGroup(edited, spec);
            if (!index) {
                throw std::invalid_argument(index.error());
            }
            QString error;
            if (!document_->setConstraintGroup(
                    index.value(), edited.constraintGroups[std::size_t(index.value())], &error)) {
                throw std::invalid_argument(error.toStdString());
            }
            return true;
        });
    }

    std::string bendingModel() const {
        return gui(
            [this] { return std::string(toString(document_->scene().constraints.bending.model)); });
    }

    void setBendingModel(const std::string& name) const {
        const Result<BendingModel> model = bendingModelNamed(name);
        if (!model) {
            throw std::invalid_argument("bending_model: " + model.error());
        }
        gui([this, model] {
            QString error;
            if (!document_->setBendingModel(*model, &error)) {
                throw std::invalid_argument(error.toStdString());
            }
            return true;
        });
    }

    std::size_t pin(const std::vector<Index>& particles) const {
        return gui([this, particles] {
            const std::size_t n = document_->scene().particles.size();
            for (Index p : particles) {
                if (p >= n) {
                    throw std::invalid_argument("pin: particle " + std::to_string(p) +
                                                " is out of range (the scene has " +
                                                std::to_string(n) + ")");
                }
            }
            std::size_t pinned = 0;
            document_->undoStack()->beginMacro(
                QObject::tr("Pin %n particles", "", int(particles.size())));
            for (Index p : particles) {
                if (!document_->isPinned(p)) {
                    document_->togglePin(p);
                    ++pinned;
                }
            }
            document_->undoStack()->endMacro();
            return pinned;
        });
    }

    void trigger(const char* action, std::optional<bool> checked) const {
        gui([this, action, checked] {
            auto* a = window_->findChild<QAction*>(QString::fromLatin1(action));
            if (!a) {
                throw std::invalid_argument(std::string("the window has no action ") + action);
            }
            if (checked) {
                a->setChecked(*checked);
            } else {
                a->trigger();
            }
            return true;
        });
    }

    // Asks for `steps` steps; with wait, returns when they are done (the GUI goes on).
    std::size_t step(int steps, bool wait) const {
        if (steps < 1) {
            throw std::invalid_argument("step: at least 1 step");
        }
        const std::size_t target = gui([this, steps] {
            SimulationWorker* w = document_->worker();
            const auto s = w->latest();
            w->step(steps);
            return (s ? s->steps : 0) + std::size_t(steps);
        });
        if (!wait) {
            return target;
        }
        for (;;) {
            const auto s = latest();
            if (s && s->steps >= target) {
                return s->steps;
            }
            {
                py::gil_scoped_release unlocked;
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
            if (interrupted_->load()) {
                PyErr_SetNone(PyExc_KeyboardInterrupt);
                throw py::error_already_set();
            }
        }
    }

    void undo(bool redo) const {
        gui([this, redo] {
            redo ? document_->undoStack()->redo() : document_->undoStack()->undo();
            return true;
        });
    }

private:
    SceneDocument* document_;
    QObject* window_;
    const std::atomic<bool>* interrupted_;
};

// Output of print() and tracebacks, to the dock (from the interpreter's thread, queued).
struct Writer {
    std::function<void(const QString&)> write;
};

} // namespace

} // namespace pbd

PYBIND11_EMBEDDED_MODULE(pbdlab_window, m) {
    using pbd::WindowScene;
    m.doc() = "The open window, for the Python console: see `scene`.";
    py::class_<pbd::Writer>(m, "_Writer")
        .def("write",
             [](pbd::Writer& w, const std::string& text) {
                 w.write(QString::fromStdString(text));
                 return text.size();
             })
        .def("flush", [](pbd::Writer&) {})
        .def_property_readonly("encoding", [](pbd::Writer&) { return "utf-8"; })
        .def("isatty", [](pbd::Writer&) { return false; });
    py::class_<WindowScene>(m, "WindowScene",
                            "The scene open in the window. Reading gives the latest state the "
                            "solver handed over; every change goes through the window as one "
                            "undo step (Edit ▸ Undo undoes it).")
        .def_property_readonly("name", &WindowScene::name, "The scene's name.")
        .def_property_readonly(
            "positions",
            [](const WindowScene& s) {
                const auto snap = s.latest();
                const std::size_t n = snap ? snap->positions.size() : 0;
                py::array_t<double> a({py::ssize_t(n), py::ssize_t(3)});
                auto rows = a.mutable_unchecked<2>();
                for (std::size_t i = 0; i < n; ++i) {
                    for (int k = 0; k < 3; ++k) {
                        rows(py::ssize_t(i), k) = snap->positions[i][k];
                    }
                }
                return a;
            },
            "Particle positions of the latest step, (N, 3) float64 (a copy).")
        .def_property_readonly(
            "time",
            [](const WindowScene& s) {
                const auto snap = s.latest();
                return snap ? double(snap->time) : 0.0;
            },
            "Simulated time of the latest step, s.")
        .def_property_readonly(
            "step_count",
            [](const WindowScene& s) {
                const auto snap = s.latest();
                return snap ? snap->steps : 0;
            },
            "Steps since the scene was loaded or reset.")
        .def_property_readonly("settings", &WindowScene::settings,
                               "The solver settings, as pbdlab-cli reports them.")
        .def("set", &WindowScene::set,
             "Sets solver settings by name as pbdlab.Scene.set does (iterations, substeps, dt, "
             "threads, method, gravity, air_optimization, ...): one undo step.")
        .def_property_readonly("groups", &WindowScene::groups, "The constraint groups.")
        .def("edit_group", &WindowScene::editGroup, py::arg("spec"),
             "Edits a constraint group ('NAME:KEY=VALUE[,...]', as pbdlab-cli's --group): one "
             "undo step.")
        .def_property("bending_model", &WindowScene::bendingModel, &WindowScene::setBendingModel,
                      "The bending model ('bridson', 'pbd-appendix' or 'isometric'); setting it "
                      "gives every hinge the model from the authored shape: one undo step.")
        .def("pin", &WindowScene::pin, py::arg("particles"),
             "Pins the particles where they are: one undo step. Returns how many were pinned.")
        .def(
            "play", [](const WindowScene& s) { s.trigger("actionPlay", true); },
            "Plays the simulation (as Space).")
        .def(
            "pause", [](const WindowScene& s) { s.trigger("actionPlay", false); }, "Pauses it.")
        .def(
            "reset", [](const WindowScene& s) { s.trigger("actionResetSimulation", std::nullopt); },
            "Resets the simulation to the loaded state (as Home).")
        .def("step", &WindowScene::step, py::arg("steps") = 1, py::arg("wait") = true,
             "Steps the simulation; with wait (default) returns when the steps are done, the "
             "window staying responsive meanwhile. Returns the step count reached (or aimed at).")
        .def(
            "undo", [](const WindowScene& s) { s.undo(false); }, "Edit ▸ Undo.")
        .def(
            "redo", [](const WindowScene& s) { s.undo(true); }, "Edit ▸ Redo.")
        .def("__repr__", [](const WindowScene& s) { return "<window scene '" + s.name() + "'>"; });
}

namespace pbd {

namespace {

// The process's one interpreter, on a thread of its own, never finalised (numpy cannot be
// imported again after Py_Finalize, so a second window would crash): consoles hand it tasks,
// which run one at a time with the GIL; between tasks the GIL is free.
class PythonHost {
public:
    static PythonHost& instance() {
        static PythonHost* host = new PythonHost; // lives until the process ends
        return *host;
    }

    void post(std::function<void()> task) {
        {
            std::lock_guard lock(mutex_);
            tasks_.push_back(std::move(task));
        }
        wake_.notify_all();
    }

    // The interpreter thread's id (for PyThreadState_SetAsyncExc), 0 until it started.
    unsigned long threadId() const { return threadId_.load(); }

private:
    PythonHost() {
        std::thread([this] { run(); }).detach();
    }

    void run() {
        py::initialize_interpreter(false); // no signal handlers: the window has its own
        threadId_ = PyThread_get_thread_ident();
        py::module_ sys = py::module_::import("sys");
        sys.attr("argv") = py::make_tuple("");
        for (const QString& path : modulePaths()) {
            sys.attr("path").attr("insert")(0, path.toStdString());
        }
        py::module_::import("pbdlab_window");
        for (;;) {
            std::function<void()> task;
            {
                py::gil_scoped_release unlocked;
                std::unique_lock lock(mutex_);
                wake_.wait(lock, [this] { return !tasks_.empty(); });
                task = std::move(tasks_.front());
                tasks_.pop_front();
            }
            task();
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::function<void()>> tasks_;
    std::atomic<unsigned long> threadId_ = 0;
};

} // namespace

// What a console keeps in the interpreter: its namespace and its code.InteractiveConsole.
// Made, used and destroyed on the interpreter's thread only.
// Hidden, as pybind11's types are.
struct __attribute__((visibility("hidden"))) PythonConsole::State {
    // Shared with the interpreter's thread, under the mutex.
    std::mutex mutex;
    PythonConsole* owner = nullptr; // null once the console is going
    bool busy = false;
    std::atomic<bool> interrupted = false;
    // The interpreter's side, touched with the GIL only.
    py::object ns; // a dict, made on the interpreter's thread
    py::object console;
    bool ready = false;

    // Output to the dock while the console lives (a thread a script started may print later).
    void write(const QString& text, bool error) {
        std::lock_guard lock(mutex);
        if (owner) {
            emit owner->output(text, error);
        }
    }
};

PythonConsole::PythonConsole(SceneDocument* document, QObject* window, QObject* parent)
    : QObject(parent)
    , document_(document)
    , window_(window)
    , state_(std::make_shared<State>()) {
    state_->owner = this;
}

PythonConsole::~PythonConsole() {
    interrupt();
    // A job that runs may be waiting for the GUI thread (a `scene` call): serve it until it ends.
    QElapsedTimer waited;
    waited.start();
    for (;;) {
        {
            std::lock_guard lock(state_->mutex);
            if (!state_->busy) {
                state_->owner = nullptr; // queued jobs are skipped, late output dropped
                break;
            }
        }
        QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
        if (waited.elapsed() > 500) {
            interrupt(); // again: code that caught the first one
            waited.restart();
        }
    }
    if (started_) {
        // The namespace goes on the interpreter's thread, with the GIL.
        PythonHost::instance().post([state = state_] {
            state->console = py::object();
            state->ns = py::object();
        });
    }
}

void PythonConsole::submit(const QString& line) {
    enqueue({false, line});
}

void PythonConsole::runFile(const QString& path) {
    enqueue({true, path});
}

void PythonConsole::enqueue(Job job) {
    started_ = true;
    PythonHost::instance().post([this, job, state = state_] {
        {
            std::lock_guard lock(state->mutex);
            if (!state->owner) {
                return; // the console is gone: `this` with it
            }
            state->busy = true;
            state->interrupted = false;
        }
        PyThreadState_SetAsyncExc(PyThread_get_thread_ident(), nullptr); // one left from before
        emit busyChanged(true);
        const auto [ok, more] = runJob(*state, job);
        // A KeyboardInterrupt set just as the job ended would hit the next one: drop it.
        PyThreadState_SetAsyncExc(PyThread_get_thread_ident(), nullptr);
        emit busyChanged(false);
        emit continuation(more);
        emit finished(ok);
        std::lock_guard lock(state->mutex); // after this, the console may go
        state->busy = false;
    });
}

bool PythonConsole::busy() const {
    std::lock_guard lock(state_->mutex);
    return state_->busy;
}

void PythonConsole::interrupt() {
    unsigned long thread = 0;
    {
        std::lock_guard lock(state_->mutex);
        thread = PythonHost::instance().threadId();
        if (!state_->busy || thread == 0) {
            return;
        }
        state_->interrupted = true; // for waits in C++ (scene.step), which Python cannot break
    }
    // Not under the mutex: the interpreter's thread takes it holding the GIL.
    const PyGILState_STATE gil = PyGILState_Ensure();
    {
        std::lock_guard lock(state_->mutex);
        if (state_->busy) { // still this console's job
            PyThreadState_SetAsyncExc(thread, PyExc_KeyboardInterrupt);
        }
    }
    PyGILState_Release(gil);
}

std::pair<bool, bool> PythonConsole::runJob(State& state, const Job& job) {
    py::module_ sys = py::module_::import("sys");
    std::weak_ptr<State> weak = state_;
    sys.attr("stdout") = Writer{[weak](const QString& t) {
        if (auto s = weak.lock()) {
            s->write(t, false);
        }
    }};
    sys.attr("stderr") = Writer{[weak](const QString& t) {
        if (auto s = weak.lock()) {
            s->write(t, true);
        }
    }};
    if (!state.ready) {
        state.ready = true;
        try {
            py::dict ns;
            ns["__name__"] = "__main__";
            ns["__builtins__"] = py::module_::import("builtins");
            ns["scene"] = WindowScene(document_, window_, &state.interrupted);
            try {
                ns["pbdlab"] = py::module_::import("pbdlab");
            } catch (const py::error_already_set& e) {
                emit output(tr("(the pbdlab module was not found: %1)\n").arg(e.what()), true);
            }
            state.console = py::module_::import("code").attr("InteractiveConsole")(ns, "<console>");
            state.ns = ns;
        } catch (const std::exception& e) {
            emit output(tr("Python could not start: %1\n").arg(e.what()), true);
        }
    }
    if (!state.console) {
        return {false, false};
    }
    if (job.file) {
        try {
            py::dict globals = state.ns;
            globals["__file__"] = job.text.toStdString();
            py::module_ builtins = py::module_::import("builtins");
            py::object source = py::module_::import("io").attr("open")(job.text.toStdString(), "r");
            py::object code =
                builtins.attr("compile")(source.attr("read")(), job.text.toStdString(), "exec");
            source.attr("close")();
            builtins.attr("exec")(code, globals);
            globals.attr("pop")("__file__", py::none());
            return {true, false};
        } catch (py::error_already_set& e) {
            state.ns.attr("pop")("__file__", py::none());
            e.restore();
            PyErr_Print(); // the traceback, to sys.stderr: the dock
            return {false, false};
        }
    }
    try {
        return {true, state.console.attr("push")(job.text.toStdString()).cast<bool>()};
    } catch (py::error_already_set& e) {
        e.restore(); // SystemExit: exit() in the console
        PyErr_Clear();
        emit output(tr("(exit() and quit() do not close the window)\n"), true);
        return {false, false};
    }
}

} // namespace pbd
