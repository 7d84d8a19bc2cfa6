#include "core/solver/KernelPaths.h"

#include "core/base/InstructionSets.h"

// The paths this build compiled (core/CMakeLists.txt defines PBDLAB_KERNELS_<NAME> for each).
#define PBDLAB_KERNEL_PATH(isa)                                                                    \
    namespace pbd::kernels::isa {                                                                  \
    extern const KernelPath path;                                                                  \
    }
#ifdef PBDLAB_KERNELS_AVX512
PBDLAB_KERNEL_PATH(avx512)
#endif
#ifdef PBDLAB_KERNELS_AVX2
PBDLAB_KERNEL_PATH(avx2)
#endif
#ifdef PBDLAB_KERNELS_SSE2
PBDLAB_KERNEL_PATH(sse2)
#endif
#ifdef PBDLAB_KERNELS_NATIVE
PBDLAB_KERNEL_PATH(native)
#endif
#undef PBDLAB_KERNEL_PATH

namespace pbd::kernels {
namespace {

struct Built {
    const KernelPath* path;
    isa::Level needs; // the instruction sets it was compiled for
};

// Fastest first.
std::vector<Built> built() {
    std::vector<Built> all;
#ifdef PBDLAB_KERNELS_NATIVE
    all.push_back({&native::path, isa::Level::Sse2}); // runs where it was built
#endif
#ifdef PBDLAB_KERNELS_AVX512
    all.push_back({&avx512::path, isa::Level::Avx512});
#endif
#ifdef PBDLAB_KERNELS_AVX2
    all.push_back({&avx2::path, isa::Level::Avx2});
#endif
#ifdef PBDLAB_KERNELS_SSE2
    all.push_back({&sse2::path, isa::Level::Sse2});
#endif
    return all;
}

} // namespace

std::vector<const KernelPath*> kernelPaths() {
    std::vector<const KernelPath*> paths;
    for (const Built& b : built()) {
        if (b.needs <= isa::cpuLevel()) {
            paths.push_back(b.path);
        }
    }
    return paths;
}

std::vector<std::string_view> builtKernelPaths() {
    std::vector<std::string_view> names;
    for (const Built& b : built()) {
        names.push_back(b.path->name);
    }
    return names;
}

std::string kernelPathNames() {
    std::string names;
    for (const KernelPath* path : kernelPaths()) {
        names += (names.empty() ? "" : ", ") + std::string(path->name);
    }
    return names;
}

const KernelPath& kernelPath() {
    static const std::vector<Built> all = built();
    for (const Built& b : all) {
        if (b.needs <= isa::activeLevel()) {
            return *b.path;
        }
    }
    return *all.back().path;
}

bool selectKernelPath(std::string_view name) {
    if (name.empty() || name == "auto") {
        return isa::selectLevel(isa::cpuLevel());
    }
    for (const Built& b : built()) {
        if (b.path->name == name) {
            return b.needs <= isa::cpuLevel() && isa::selectLevel(b.needs);
        }
    }
    return false;
}

} // namespace pbd::kernels
