#pragma once
// Routes VTK's warnings and errors (vtkOutputWindow) to a handler, such as the Log dock,
// instead of stderr, and counts them so tests can assert that rendering raised none.

#include "widgets/Severity.h"

#include <vtkOutputWindow.h>

#include <atomic>
#include <functional>

namespace pbd {

class VtkMessageRelay : public vtkOutputWindow {
public:
    static VtkMessageRelay* New();
    vtkTypeMacro(VtkMessageRelay, vtkOutputWindow)

        // Makes a relay VTK's output window for the whole process (once) and returns it.
        static VtkMessageRelay* install();

    using Handler = std::function<void(Severity, const QString&)>;
    void setHandler(Handler handler) { handler_ = std::move(handler); }

    int errorCount() const { return errors_; }
    int warningCount() const { return warnings_; }

    void DisplayText(const char* text) override;
    void DisplayErrorText(const char* text) override;
    void DisplayWarningText(const char* text) override;
    void DisplayGenericWarningText(const char* text) override;
    void DisplayDebugText(const char* text) override;

private:
    VtkMessageRelay() = default;
    void relay(Severity severity, const char* text);

    Handler handler_;
    std::atomic<int> errors_{0};
    std::atomic<int> warnings_{0};
};

} // namespace pbd
