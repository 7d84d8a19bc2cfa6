#pragma once
// Which x86 instruction sets the hot loops use. A portable build (PBDLAB_NATIVE_ARCH off)
// compiles them for more than one: the constraint sweeps once per set (core/solver/KernelPaths),
// other loops as a second copy for AVX2 + FMA inside PBDLAB_WIDE_PATH. The level in use is
// the highest this CPU runs unless PBDLAB_KERNELS or selectLevel chose a lower one. A native
// build compiles everything for the building machine and has one level.

#include <string>
#include <string_view>

namespace pbd::isa {

enum class Level {
    Sse2,   // x86-64: every 64-bit x86 CPU
    Avx2,   // x86-64-v3: AVX2, FMA, BMI2 (2015 on)
    Avx512, // x86-64-v4: AVX-512 F, VL, DQ, BW, CD
};
std::string_view toString(Level level); // "sse2", "avx2", "avx512"

// The highest level this CPU runs.
Level cpuLevel();
// The level the hot loops use now.
Level activeLevel();
// Uses `level` from now on; false, with nothing changed, above cpuLevel(). Not for use while a
// solver steps.
bool selectLevel(Level level);
// What is wrong with the environment variable PBDLAB_KERNELS, for a warning ("" when it is unset
// or names a level this CPU runs; otherwise it is ignored and the highest level is used).
std::string environmentProblem();

// Always inlined: the SIMD kernels (core/base/Lanes.h), and functions the AVX2 copy must compile
// as its own.
#define PBD_KERNEL_INLINE __attribute__((always_inline)) inline
// A lambda that is always inlined: the body of a function PBDLAB_WIDE_PATH runs, and the hot
// lambdas inside it, so the AVX2 copy has all of its code compiled for AVX2.
#define PBD_INLINE_LAMBDA __attribute__((always_inline))

#if !defined(PBDLAB_NATIVE_BUILD) && (defined(__x86_64__) || defined(__i386__))
// Runs the statements compiled for AVX2 + FMA when the active level has them, else as compiled
// for the baseline. What they call is compiled into the AVX2 copy only where it is inlined;
// anything else runs its baseline code.
#define PBDLAB_WIDE_PATH(...)                                                                      \
    do {                                                                                           \
        if (::pbd::isa::activeLevel() >= ::pbd::isa::Level::Avx2) {                                \
            [&]() __attribute__((target("avx2,fma,bmi,bmi2,lzcnt,popcnt,f16c"))) {                 \
                __VA_ARGS__;                                                                       \
            }                                                                                      \
            ();                                                                                    \
        } else {                                                                                   \
            __VA_ARGS__;                                                                           \
        }                                                                                          \
    } while (false)
// The same, with a third copy for AVX-512 (F, VL, DQ, BW) when the active level has it: for
// code latency-bound on chains of 8-lane float updates, whose two interleaved batches need more
// than AVX2's 16 vector registers (VL gives 256-bit code 32 of them). The lanes stay 8 floats
// and the operations the same: the AVX-512 and AVX2 copies of the rigid sweeps give the same
// bits (simulate pyramid-100, pyramid, chain).
#define PBDLAB_WIDEST_PATH(...)                                                                    \
    do {                                                                                           \
        if (::pbd::isa::activeLevel() >= ::pbd::isa::Level::Avx512) {                              \
            [&]() __attribute__((target(                                                           \
                "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma,bmi,bmi2,lzcnt,popcnt,f16c"))) {      \
                __VA_ARGS__;                                                                       \
            }                                                                                      \
            ();                                                                                    \
        } else {                                                                                   \
            PBDLAB_WIDE_PATH(__VA_ARGS__);                                                         \
        }                                                                                          \
    } while (false)
#else
#define PBDLAB_WIDE_PATH(...)                                                                      \
    do {                                                                                           \
        __VA_ARGS__;                                                                               \
    } while (false)
#define PBDLAB_WIDEST_PATH(...) PBDLAB_WIDE_PATH(__VA_ARGS__)
#endif

} // namespace pbd::isa
