// One libFuzzer target; PBDLAB_FUZZ_TARGET names which (tests/fuzz/CMakeLists.txt builds one
// executable per target from this file).
#include "tests/fuzz/FuzzEntries.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

pbd::fuzz::Entry entry() {
    static const pbd::fuzz::Entry found = [] {
        for (const pbd::fuzz::Target& t : pbd::fuzz::targets()) {
            if (t.name == PBDLAB_FUZZ_TARGET) {
                return t.entry;
            }
        }
        std::fprintf(stderr, "no fuzz target '%s'\n", PBDLAB_FUZZ_TARGET);
        std::abort();
    }();
    return found;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    entry()(data, size);
    return 0;
}
