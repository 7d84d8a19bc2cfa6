#pragma once
// How serious a message for the user is.

#include <QString>

namespace pbd {

enum class Severity { Info, Warning, Error };

inline QString toDisplayString(Severity s) {
    switch (s) {
    case Severity::Info:
        return QStringLiteral("Info");
    case Severity::Warning:
        return QStringLiteral("Warning");
    case Severity::Error:
        return QStringLiteral("Error");
    }
    return {};
}

} // namespace pbd
