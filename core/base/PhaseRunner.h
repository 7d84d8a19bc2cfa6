#pragma once
// Phases run one after another on T threads, each phase in parts (Solver::runSubstepPhases, and
// the rigid substeps in RigidSolver::runSubstepsInPhases): a phase starts when every part of the
// phases before it has finished. The parts are claimed with a bit mask: thread k runs part k of
// a phase when it can, then any part nobody took, so a thread that never starts cannot stall the
// others. Threads wait for a phase by spinning (a substep has dozens of phases of tens of
// microseconds; waking a sleeping thread costs as much).
//
// A part that throws (std::bad_alloc in a runaway) stops every thread before its next phase
// rather than leaving the others waiting for it for ever; runPhases then throws what it threw
// (the first, if parts of one phase threw on several threads).

#include <atomic>
#include <cstdint>
#include <exception>
#include <immintrin.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>
#include <thread>
#include <vector>

namespace pbd {

// The threads phases run on: an arena of `count` (the solver's; the rigid step borrows it).
struct ThreadTeam {
    explicit ThreadTeam(int n)
        : count(n)
        , arena(n) {}
    int count;
    tbb::task_arena arena;
};

// Until the counter reaches the target or the flag is raised.
inline void spinWait(const std::atomic<int>& counter, int target,
                     const std::atomic<bool>& abandon) {
    for (int spins = 0; counter.load(std::memory_order_acquire) < target; ++spins) {
        if (abandon.load(std::memory_order_acquire)) {
            return;
        }
        if (spins < 4096) {
            _mm_pause();
        } else {
            std::this_thread::yield();
        }
    }
}

// run(phase, part) for every part of every phase (Phase has `int parts`, at most 64), on the
// arena's `threads` threads; on the calling thread alone when threads is 1.
template <class Phase, class Run>
void runPhases(tbb::task_arena& arena, int threads, const std::vector<Phase>& phases, Run&& run) {
    if (threads <= 1) {
        for (const Phase& phase : phases) {
            for (int part = 0; part < phase.parts; ++part) {
                run(phase, part);
            }
        }
        return;
    }
    std::vector<std::atomic<std::uint64_t>> claimed(phases.size());
    std::atomic<int> completed{0};
    std::atomic<bool> failed{false};
    std::exception_ptr failure;
    auto worker = [&](int k) {
        int firstTicket = 0;
        for (std::size_t f = 0; f < phases.size(); ++f) {
            const int parts = phases[f].parts;
            spinWait(completed, firstTicket, failed);
            if (failed.load(std::memory_order_acquire)) {
                return;
            }
            auto tryRun = [&](int part) {
                const std::uint64_t bit = std::uint64_t(1) << part;
                if ((claimed[f].fetch_or(bit, std::memory_order_relaxed) & bit) == 0) {
                    try {
                        run(phases[f], part);
                    } catch (...) {
                        if (!failed.exchange(true, std::memory_order_acq_rel)) {
                            failure = std::current_exception();
                        }
                    }
                    completed.fetch_add(1, std::memory_order_acq_rel);
                }
            };
            const int home = k % parts;
            tryRun(home);
            for (int part = 0; part < parts; ++part) {
                if (part != home) {
                    tryRun(part);
                }
            }
            firstTicket += parts;
        }
    };
    arena.execute([&] {
        tbb::parallel_for(
            tbb::blocked_range<int>(0, threads, 1),
            [&](const tbb::blocked_range<int>& r) {
                for (int t = r.begin(); t < r.end(); ++t) {
                    worker(t);
                }
            },
            tbb::static_partitioner());
    });
    if (failure) {
        std::rethrow_exception(failure);
    }
}

} // namespace pbd
