#include "meshing/ContainedProcess.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <new>
#include <poll.h>
#include <sstream>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace pbd {

namespace {

class Fd {
public:
    explicit Fd(int fd = -1)
        : fd_(fd) {}
    ~Fd() { reset(); }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }
    void reset() {
        if (fd_ >= 0) {
            ::close(fd_);
        }
        fd_ = -1;
    }

private:
    int fd_;
};

// The address space this process already has, bytes.
std::size_t currentAddressSpace() {
    std::ifstream statm("/proc/self/statm");
    std::size_t pages = 0;
    statm >> pages;
    return pages * std::size_t(::sysconf(_SC_PAGESIZE));
}

// In the child: the limits, the default crash behaviour, then the work; never returns.
[[noreturn]] void childMain(const std::function<int(int)>& work, const ContainedLimits& limits,
                            int resultFd) {
    const rlimit noCore{0, 0};
    setrlimit(RLIMIT_CORE, &noCore); // a crash here is expected to be possible; no core file
    // A crash must end this process with its signal, whatever handlers the parent installed
    // (a crash reporter, a sanitizer): the parent reports the signal.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
        std::signal(sig, SIG_DFL);
    }
    if (limits.memoryBytes > 0) {
        const rlim_t cap = rlim_t(currentAddressSpace() + limits.memoryBytes);
        const rlimit as{cap, cap};
        setrlimit(RLIMIT_AS, &as);
    }
    std::setvbuf(stdout, nullptr, _IONBF, 0);
    int code = kExitException;
    try {
        code = work(resultFd);
    } catch (const std::bad_alloc&) {
        code = kExitOutOfMemory;
    } catch (...) {
        code = kExitException;
    }
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(code); // no destructor or atexit handler of the parent's state
}

} // namespace

bool writeAllTo(int fd, const void* data, std::size_t size) {
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
        const ssize_t n = ::write(fd, p, size);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        p += n;
        size -= std::size_t(n);
    }
    return true;
}

std::string ContainedRun::describe(double timeoutSeconds) const {
    std::ostringstream s;
    switch (end) {
    case End::Finished:
        if (exitCode == kExitOutOfMemory) {
            s << "ran out of memory";
        } else if (exitCode == kExitException) {
            s << "stopped with an unexpected exception";
        } else {
            s << "failed (exit code " << exitCode << ")";
        }
        break;
    case End::Crashed:
        s << "crashed (signal " << signal << ", " << strsignal(signal) << ")";
        break;
    case End::TimedOut:
        s << "did not finish within " << timeoutSeconds << " s and was stopped";
        break;
    case End::Cancelled:
        s << kCancelledMessage;
        break;
    case End::NotStarted:
        s << "could not start: " << problem;
        break;
    }
    return s.str();
}

ContainedRun runContained(const std::function<int(int)>& work, const ContainedLimits& limits) {
    ContainedRun run;
    Fd result(memfd_create("pbdlab-contained", MFD_CLOEXEC));
    if (result.get() < 0) {
        run.problem = std::string("cannot create the result file: ") + std::strerror(errno);
        return run;
    }
    int pipeFds[2];
    if (pipe2(pipeFds, O_CLOEXEC) != 0) {
        run.problem = std::string("cannot create a pipe: ") + std::strerror(errno);
        return run;
    }
    Fd outputRead(pipeFds[0]);
    Fd outputWrite(pipeFds[1]);

    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = fork();
    if (pid < 0) {
        run.problem = std::string("cannot fork: ") + std::strerror(errno);
        return run;
    }
    if (pid == 0) {
        ::dup2(outputWrite.get(), STDOUT_FILENO);
        ::dup2(outputWrite.get(), STDERR_FILENO);
        childMain(work, limits, result.get());
    }
    outputWrite.reset(); // the child holds the only write end: EOF when it exits

    const auto start = std::chrono::steady_clock::now();
    std::string pending;
    bool cancelled = limits.keepGoing && !limits.keepGoing();
    bool timedOut = false;
    while (!cancelled) {
        pollfd p{outputRead.get(), POLLIN, 0};
        const int ready = ::poll(&p, 1, 50);
        if (ready > 0) {
            char buffer[4096];
            const ssize_t n = ::read(outputRead.get(), buffer, sizeof buffer);
            if (n == 0) {
                break; // the child exited (or closed its output)
            }
            if (n > 0) {
                run.output.append(buffer, std::size_t(n));
                pending.append(buffer, std::size_t(n));
                std::size_t eol;
                while ((eol = pending.find('\n')) != std::string::npos) {
                    if (limits.onLine) {
                        limits.onLine(pending.substr(0, eol));
                    }
                    pending.erase(0, eol + 1);
                }
            }
        } else if (ready < 0 && errno != EINTR) {
            break;
        }
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (elapsed > limits.timeoutSeconds) {
            timedOut = true;
            break;
        }
        if (limits.keepGoing && !limits.keepGoing()) {
            cancelled = true;
        }
    }
    if (cancelled || timedOut) {
        ::kill(pid, SIGKILL);
    }
    int status = 0;
    rusage usage{};
    while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
    }
    run.peakMemoryBytes = std::size_t(usage.ru_maxrss) * 1024;
    if (cancelled) {
        run.end = ContainedRun::End::Cancelled;
        return run;
    }
    if (timedOut) {
        run.end = ContainedRun::End::TimedOut;
        return run;
    }
    if (WIFSIGNALED(status)) {
        run.end = ContainedRun::End::Crashed;
        run.signal = WTERMSIG(status);
        return run;
    }
    run.end = ContainedRun::End::Finished;
    run.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    struct stat info {};
    if (::fstat(result.get(), &info) == 0 && info.st_size > 0 &&
        ::lseek(result.get(), 0, SEEK_SET) == 0) {
        run.result.resize(std::size_t(info.st_size));
        std::size_t got = 0;
        while (got < run.result.size()) {
            const ssize_t n =
                ::read(result.get(), run.result.data() + got, run.result.size() - got);
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                break;
            }
            got += std::size_t(n);
        }
        run.result.resize(got);
    }
    return run;
}

} // namespace pbd
