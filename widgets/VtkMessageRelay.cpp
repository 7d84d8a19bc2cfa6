#include "widgets/VtkMessageRelay.h"

#include <vtkObjectFactory.h>
#include <vtkSmartPointer.h>

#include <cstdio>

namespace pbd {

vtkStandardNewMacro(VtkMessageRelay);

VtkMessageRelay* VtkMessageRelay::install() {
    static vtkSmartPointer<VtkMessageRelay> relay = [] {
        auto r = vtkSmartPointer<VtkMessageRelay>::New();
        vtkOutputWindow::SetInstance(r);
        return r;
    }();
    return relay;
}

void VtkMessageRelay::relay(Severity severity, const char* text) {
    QString message = QString::fromUtf8(text).trimmed();
    if (handler_) {
        handler_(severity, message);
    } else {
        std::fprintf(stderr, "VTK %s: %s\n", qPrintable(toDisplayString(severity)),
                     qPrintable(message));
    }
}

void VtkMessageRelay::DisplayText(const char* text) {
    relay(Severity::Info, text);
}

void VtkMessageRelay::DisplayErrorText(const char* text) {
    ++errors_;
    relay(Severity::Error, text);
}

void VtkMessageRelay::DisplayWarningText(const char* text) {
    ++warnings_;
    relay(Severity::Warning, text);
}

void VtkMessageRelay::DisplayGenericWarningText(const char* text) {
    ++warnings_;
    relay(Severity::Warning, text);
}

void VtkMessageRelay::DisplayDebugText(const char* text) {
    relay(Severity::Info, text);
}

} // namespace pbd
