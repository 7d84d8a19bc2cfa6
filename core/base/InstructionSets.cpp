#include "core/base/InstructionSets.h"

#include <atomic>
#include <cstdlib>
#include <optional>

namespace pbd::isa {
namespace {

Level detect() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
#if defined(__clang__)
    // Clang (14, the fuzzing build's) knows no "x86-64-vN" here: the levels' features instead
    // (every CPU with these also has the rest of its level: LZCNT, MOVBE, F16C).
    const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                    __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
    const bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                    __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                    __builtin_cpu_supports("avx512cd");
#else
    const bool v3 = __builtin_cpu_supports("x86-64-v3");
    const bool v4 = __builtin_cpu_supports("x86-64-v4");
#endif
    if (v4) {
        return Level::Avx512;
    }
    if (v3) {
        return Level::Avx2;
    }
#endif
    return Level::Sse2;
}

// The level PBDLAB_KERNELS names, when it names one this CPU runs.
std::optional<Level> environmentLevel(Level cpu) {
    const char* env = std::getenv("PBDLAB_KERNELS");
    for (Level l : {Level::Sse2, Level::Avx2, Level::Avx512}) {
        if (env != nullptr && toString(l) == env && l <= cpu) {
            return l;
        }
    }
    return std::nullopt;
}

Level initial() {
    const Level cpu = detect();
    return environmentLevel(cpu).value_or(cpu);
}

std::atomic<Level>& active() {
    static std::atomic<Level> level{initial()};
    return level;
}

} // namespace

std::string_view toString(Level level) {
    switch (level) {
    case Level::Sse2:
        return "sse2";
    case Level::Avx2:
        return "avx2";
    case Level::Avx512:
        return "avx512";
    }
    return "sse2";
}

Level cpuLevel() {
    static const Level cpu = detect();
    return cpu;
}

Level activeLevel() {
    return active().load(std::memory_order_relaxed);
}

std::string environmentProblem() {
    const char* env = std::getenv("PBDLAB_KERNELS");
    if (env == nullptr || *env == 0 || std::string_view(env) == "auto" ||
        environmentLevel(cpuLevel())) {
        return {};
    }
    std::string runs;
    for (Level l : {Level::Avx512, Level::Avx2, Level::Sse2}) {
        if (l <= cpuLevel()) {
            runs += (runs.empty() ? "" : ", ") + std::string(toString(l));
        }
    }
    return "PBDLAB_KERNELS=" + std::string(env) + " is not an instruction set this CPU runs (" +
           runs + "); using " + std::string(toString(cpuLevel()));
}

bool selectLevel(Level level) {
    if (level > cpuLevel()) {
        return false;
    }
    active().store(level, std::memory_order_relaxed);
    return true;
}

} // namespace pbd::isa
