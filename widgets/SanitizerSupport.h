#pragma once
// Only for builds with AddressSanitizer (scripts/sanitize): Mesa unloads its driver at exit,
// before LeakSanitizer looks, so the driver's own allocations would be reported as leaks from an
// unknown module that no suppression can name. Loaded first and never unloaded, the driver keeps
// its name, which tests/sanitizers/lsan.supp suppresses. Does nothing in other builds.

#if defined(__SANITIZE_ADDRESS__)
#include <dlfcn.h>
#endif

namespace pbd {

inline void keepGlDriverLoadedForLeakChecks() {
#if defined(__SANITIZE_ADDRESS__)
    dlopen("/usr/lib/x86_64-linux-gnu/dri/swrast_dri.so", RTLD_NOW | RTLD_NODELETE);
#endif
}

} // namespace pbd
