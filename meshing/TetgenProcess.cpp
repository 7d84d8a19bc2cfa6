#include "meshing/TetgenProcess.h"

#ifndef TETLIBRARY
#define TETLIBRARY // TetGen as a library: errors throw instead of calling exit()
#endif
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sstream>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <tetgen.h>
#include <unistd.h>

namespace pbd {

namespace {

constexpr std::uint64_t kMagic = 0x504244546574476eULL; // "PBDTetGn"

// Exit codes of the child: 0 success, 10 + TetGen's terminate code, 9 an unknown exception,
// 8 a write failure.
constexpr int kExitTetgenBase = 10;

bool writeAll(int fd, const void* data, std::size_t size) {
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

bool readAll(int fd, void* data, std::size_t size) {
    char* p = static_cast<char*>(data);
    while (size > 0) {
        const ssize_t n = ::read(fd, p, size);
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

// Runs in the child: mesh, write the result to `resultFd`, and leave without running any
// destructor or atexit handler of the parent's state.
[[noreturn]] void childMain(const TetgenInput& input, const std::string& switches,
                            TetgenFault fault, int resultFd) {
    const rlimit noCore{0, 0};
    setrlimit(RLIMIT_CORE, &noCore); // a crash here is expected to be possible; no core file
    // A crash must end this process with its signal, whatever handlers the parent installed
    // (a crash reporter, a sanitizer): the parent reports the signal.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
        std::signal(sig, SIG_DFL);
    }
    std::setvbuf(stdout, nullptr, _IONBF, 0);
    if (fault == TetgenFault::Crash) {
        std::printf("Delaunizing vertices...\n");
        std::raise(SIGSEGV);
    }
    if (fault == TetgenFault::Hang) {
        std::printf("Delaunizing vertices...\n");
        for (;;) {
            pause();
        }
    }

    tetgenio in;
    in.firstnumber = 0;
    in.numberofpoints = int(input.points.size());
    in.pointlist = new REAL[3 * input.points.size()];
    for (std::size_t i = 0; i < input.points.size(); ++i) {
        for (int k = 0; k < 3; ++k) {
            in.pointlist[3 * i + k] = input.points[i][k];
        }
    }
    in.numberoffacets = int(input.facets.size());
    in.facetlist = new tetgenio::facet[input.facets.size()];
    in.facetmarkerlist = new int[input.facets.size()];
    for (std::size_t f = 0; f < input.facets.size(); ++f) {
        tetgenio::facet& facet = in.facetlist[f];
        tetgenio::init(&facet);
        facet.numberofpolygons = 1;
        facet.polygonlist = new tetgenio::polygon[1];
        tetgenio::init(&facet.polygonlist[0]);
        facet.polygonlist[0].numberofvertices = 3;
        facet.polygonlist[0].vertexlist = new int[3];
        for (int k = 0; k < 3; ++k) {
            facet.polygonlist[0].vertexlist[k] = int(input.facets[f][k]);
        }
        in.facetmarkerlist[f] = 1;
    }
    if (!input.holes.empty()) {
        in.numberofholes = int(input.holes.size());
        in.holelist = new REAL[3 * input.holes.size()];
        for (std::size_t h = 0; h < input.holes.size(); ++h) {
            for (int k = 0; k < 3; ++k) {
                in.holelist[3 * h + k] = input.holes[h][k];
            }
        }
    }
    if (!input.regions.empty()) {
        in.numberofregions = int(input.regions.size());
        in.regionlist = new REAL[5 * input.regions.size()];
        for (std::size_t r = 0; r < input.regions.size(); ++r) {
            for (int k = 0; k < 3; ++k) {
                in.regionlist[5 * r + k] = input.regions[r].seed[k];
            }
            in.regionlist[5 * r + 3] = input.regions[r].attribute;
            in.regionlist[5 * r + 4] = input.regions[r].maxVolume;
        }
    }

    tetgenio out;
    try {
        std::vector<char> sw(switches.begin(), switches.end());
        sw.push_back('\0');
        tetrahedralize(sw.data(), &in, &out);
    } catch (int code) {
        std::fflush(stdout);
        _exit(kExitTetgenBase + code);
    } catch (...) {
        _exit(9);
    }
    const std::uint64_t header[4] = {kMagic, std::uint64_t(out.numberofpoints),
                                     std::uint64_t(out.numberoftetrahedra),
                                     std::uint64_t(out.numberoftetrahedronattributes)};
    bool ok = writeAll(resultFd, header, sizeof header);
    ok = ok && writeAll(resultFd, out.pointlist, sizeof(REAL) * 3 * out.numberofpoints);
    ok = ok && writeAll(resultFd, out.tetrahedronlist,
                        sizeof(int) * out.numberofcorners * out.numberoftetrahedra);
    if (out.numberoftetrahedronattributes > 0) {
        ok = ok &&
             writeAll(resultFd, out.tetrahedronattributelist,
                      sizeof(REAL) * out.numberoftetrahedronattributes * out.numberoftetrahedra);
    }
    std::fflush(stdout);
    _exit(ok ? 0 : 8);
}

std::string terminateReason(int code) {
    switch (code) {
    case 1:
        return "TetGen ran out of memory";
    case 2:
        return "TetGen hit an internal error";
    case 3:
        return "TetGen found a self-intersection in the input surfaces";
    case 4:
        return "TetGen found an input feature too small to mesh (tolerance)";
    case 5:
        return "TetGen found two input facets too close to each other";
    case 10:
        return "TetGen found the input has no volume to mesh";
    default:
        return "TetGen stopped with code " + std::to_string(code);
    }
}

// Progress through TetGen's stages, from the lines it prints.
double stageFraction(const std::string& line, std::string& stage) {
    static const struct {
        const char* text;
        const char* stage;
        double fraction;
    } stages[] = {
        {"Delaunizing vertices", "Delaunay tetrahedralization", 0.05},
        {"Creating surface mesh", "surface mesh", 0.2},
        {"Recovering boundaries", "boundary recovery", 0.3},
        {"Removing exterior", "removing exterior tets", 0.45},
        {"Recovering Delaunayness", "Delaunay recovery", 0.5},
        {"Refining mesh", "quality refinement", 0.55},
        {"Optimizing mesh", "optimisation", 0.85},
        {"Jettisoning", "output", 0.95},
    };
    for (const auto& s : stages) {
        if (line.find(s.text) != std::string::npos) {
            stage = s.stage;
            return s.fraction;
        }
    }
    return -1;
}

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

} // namespace

Result<TetgenOutput> runTetgen(const TetgenInput& input, const std::string& switches,
                               const TetgenRunOptions& options) {
    Fd result(memfd_create("pbdlab-tetgen", MFD_CLOEXEC));
    if (result.get() < 0) {
        return Error{std::string("cannot create TetGen's result file: ") + std::strerror(errno)};
    }
    int pipeFds[2];
    if (pipe2(pipeFds, O_CLOEXEC) != 0) {
        return Error{std::string("cannot create a pipe for TetGen: ") + std::strerror(errno)};
    }
    Fd logRead(pipeFds[0]);
    Fd logWrite(pipeFds[1]);

    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid < 0) {
        return Error{std::string("cannot start TetGen's process: ") + std::strerror(errno)};
    }
    if (pid == 0) {
        ::dup2(logWrite.get(), STDOUT_FILENO);
        ::dup2(logWrite.get(), STDERR_FILENO);
        childMain(input, switches, options.fault, result.get());
    }
    logWrite.reset(); // the child holds the only write end: EOF when it exits

    TetgenOutput output;
    const auto start = std::chrono::steady_clock::now();
    std::string pending;
    std::string stage = "starting TetGen";
    bool cancelled = false;
    bool timedOut = false;
    if (options.progress && !options.progress(0.0, stage)) {
        cancelled = true;
    }
    while (!cancelled) {
        pollfd p{logRead.get(), POLLIN, 0};
        const int ready = ::poll(&p, 1, 50);
        if (ready > 0) {
            char buffer[4096];
            const ssize_t n = ::read(logRead.get(), buffer, sizeof buffer);
            if (n == 0) {
                break; // the child exited (or closed its output)
            }
            if (n > 0) {
                output.log.append(buffer, std::size_t(n));
                pending.append(buffer, std::size_t(n));
                std::size_t eol;
                while ((eol = pending.find('\n')) != std::string::npos) {
                    const double f = stageFraction(pending.substr(0, eol), stage);
                    pending.erase(0, eol + 1);
                    if (f >= 0 && options.progress && !options.progress(f, stage)) {
                        cancelled = true;
                    }
                }
            }
        } else if (ready < 0 && errno != EINTR) {
            break;
        }
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (elapsed > options.timeoutSeconds) {
            timedOut = true;
            break;
        }
        if (options.progress && !options.progress(-1.0, stage)) { // poll for Cancel
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
    output.peakMemoryBytes = std::size_t(usage.ru_maxrss) * 1024;
    if (cancelled) {
        return Error{kCancelledMessage};
    }
    if (timedOut) {
        std::ostringstream s;
        s << "TetGen did not finish within " << options.timeoutSeconds << " s (during " << stage
          << ") and was stopped";
        return Error{s.str()};
    }
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        return Error{"TetGen crashed (signal " + std::to_string(sig) + ", " + strsignal(sig) +
                     ") during " + stage + "; the input was left unchanged"};
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code >= kExitTetgenBase) {
        return Error{terminateReason(code - kExitTetgenBase)};
    }
    if (code != 0) {
        return Error{"TetGen's process failed (exit code " + std::to_string(code) + ")"};
    }

    std::uint64_t header[4];
    if (::lseek(result.get(), 0, SEEK_SET) != 0 || !readAll(result.get(), header, sizeof header) ||
        header[0] != kMagic) {
        return Error{"TetGen's process returned no mesh"};
    }
    const std::size_t points = header[1];
    const std::size_t tets = header[2];
    const std::size_t attributes = header[3];
    std::vector<double> xyz(3 * points);
    std::vector<int> corners(4 * tets);
    std::vector<double> attr(attributes * tets);
    if (!readAll(result.get(), xyz.data(), xyz.size() * sizeof(double)) ||
        !readAll(result.get(), corners.data(), corners.size() * sizeof(int)) ||
        (!attr.empty() && !readAll(result.get(), attr.data(), attr.size() * sizeof(double)))) {
        return Error{"TetGen's process returned a truncated mesh"};
    }
    output.points.resize(points);
    for (std::size_t i = 0; i < points; ++i) {
        output.points[i] = Vec3(xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]);
    }
    output.tets.resize(tets);
    for (std::size_t t = 0; t < tets; ++t) {
        for (int k = 0; k < 4; ++k) {
            const int v = corners[4 * t + k];
            if (v < 0 || std::size_t(v) >= points) {
                return Error{"TetGen returned a tet with an invalid vertex"};
            }
            output.tets[t][k] = Index(v);
        }
    }
    if (attributes > 0) {
        output.tetAttributes.resize(tets);
        for (std::size_t t = 0; t < tets; ++t) {
            output.tetAttributes[t] = int(std::lround(attr[attributes * t]));
        }
    }
    if (options.progress) {
        options.progress(1.0, "done");
    }
    return output;
}

} // namespace pbd
