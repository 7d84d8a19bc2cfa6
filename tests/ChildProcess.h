#pragma once
// Tests that start pbdlab or pbdlab-cli as a user would.

#include <QtGlobal>

namespace pbd::test {

// How long a test waits for a pbdlab or pbdlab-cli it started: 2 minutes, or
// PBDLAB_TEST_CHILD_TIMEOUT seconds (scripts/sanitize raises it: instrumented children run 3 to 15
// times slower).
inline int childTimeoutMs() {
    bool ok = false;
    const int seconds = qEnvironmentVariableIntValue("PBDLAB_TEST_CHILD_TIMEOUT", &ok);
    return (ok && seconds > 0 ? seconds : 120) * 1000;
}

} // namespace pbd::test
