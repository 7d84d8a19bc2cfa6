#include "core/solver/KernelPaths.h"

#include <atomic>
#include <cstdlib>
#include <string>

// The paths this build compiled (core/CMakeLists.txt defines PBDLAB_KERNELS_<NAME> for each).
#ifdef PBDLAB_KERNELS_AVX512
namespace pbd::kernels::avx512 {
extern const KernelPath path;
}
#endif
#ifdef PBDLAB_KERNELS_AVX2
namespace pbd::kernels::avx2 {
extern const KernelPath path;
}
#endif
#ifdef PBDLAB_KERNELS_SSE2
namespace pbd::kernels::sse2 {
extern const KernelPath path;
}
#endif
#ifdef PBDLAB_KERNELS_NATIVE
namespace pbd::kernels::native {
extern const KernelPath path;
}
#endif

namespace pbd::kernels {
namespace {

struct Built {
    const KernelPath* path;
    bool runs; // this CPU has the instructions
};

// Fastest first.
std::vector<Built> built() {
    std::vector<Built> all;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
#endif
#ifdef PBDLAB_KERNELS_NATIVE
    all.push_back({&native::path, true});
#endif
#ifdef PBDLAB_KERNELS_AVX512
    all.push_back({&avx512::path, __builtin_cpu_supports("x86-64-v4") > 0});
#endif
#ifdef PBDLAB_KERNELS_AVX2
    all.push_back({&avx2::path, __builtin_cpu_supports("x86-64-v3") > 0});
#endif
#ifdef PBDLAB_KERNELS_SSE2
    all.push_back({&sse2::path, true});
#endif
    return all;
}

const KernelPath* find(std::string_view name) {
    for (const Built& b : built()) {
        if (b.runs && (name.empty() || name == "auto" || b.path->name == name)) {
            return b.path;
        }
    }
    return nullptr;
}

const KernelPath* initial() {
    const char* env = std::getenv("PBDLAB_KERNELS");
    if (const KernelPath* p = find(env ? std::string_view(env) : std::string_view())) {
        return p;
    }
    return find({});
}

std::atomic<const KernelPath*>& current() {
    static std::atomic<const KernelPath*> path{initial()};
    return path;
}

} // namespace

std::vector<const KernelPath*> kernelPaths() {
    std::vector<const KernelPath*> paths;
    for (const Built& b : built()) {
        if (b.runs) {
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

const KernelPath& kernelPath() {
    return *current().load(std::memory_order_relaxed);
}

bool selectKernelPath(std::string_view name) {
    const KernelPath* p = find(name);
    if (!p) {
        return false;
    }
    current().store(p, std::memory_order_relaxed);
    return true;
}

} // namespace pbd::kernels
