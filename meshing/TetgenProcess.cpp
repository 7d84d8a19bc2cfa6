#include "meshing/TetgenProcess.h"

#ifndef TETLIBRARY
#define TETLIBRARY // TetGen as a library: errors throw instead of calling exit()
#endif
#include <csignal>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <tetgen.h>
#include <unistd.h>

namespace pbd {

namespace {

constexpr std::uint64_t kMagic = 0x504244546574476eULL; // "PBDTetGn"

// Exit codes of the child: 0 success, 10 + TetGen's terminate code, 8 a write failure (and
// runContained's own for an exception or running out of memory).
constexpr int kExitTetgenBase = 10;

// Runs in the child (runContained): mesh and write the result to `resultFd`; the exit code.
int meshInChild(const TetgenInput& input, const std::string& switches, TetgenFault fault,
                int resultFd) {
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
        return kExitTetgenBase + code;
    }
    const std::uint64_t header[4] = {kMagic, std::uint64_t(out.numberofpoints),
                                     std::uint64_t(out.numberoftetrahedra),
                                     std::uint64_t(out.numberoftetrahedronattributes)};
    bool ok = writeAllTo(resultFd, header, sizeof header);
    ok = ok && writeAllTo(resultFd, out.pointlist, sizeof(REAL) * 3 * out.numberofpoints);
    ok = ok && writeAllTo(resultFd, out.tetrahedronlist,
                          sizeof(int) * out.numberofcorners * out.numberoftetrahedra);
    if (out.numberoftetrahedronattributes > 0) {
        ok = ok &&
             writeAllTo(resultFd, out.tetrahedronattributelist,
                        sizeof(REAL) * out.numberoftetrahedronattributes * out.numberoftetrahedra);
    }
    return ok ? 0 : 8;
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

} // namespace

Result<TetgenOutput> runTetgen(const TetgenInput& input, const std::string& switches,
                               const TetgenRunOptions& options) {
    TetgenOutput output;
    std::string stage = "starting TetGen";
    bool cancelled = options.progress && !options.progress(0.0, stage);
    ContainedLimits limits;
    limits.timeoutSeconds = options.timeoutSeconds;
    limits.keepGoing = [&] {
        cancelled = cancelled || (options.progress && !options.progress(-1.0, stage));
        return !cancelled;
    };
    limits.onLine = [&](const std::string& line) {
        const double f = stageFraction(line, stage);
        if (f >= 0 && options.progress && !options.progress(f, stage)) {
            cancelled = true;
        }
    };
    const ContainedRun run = runContained(
        [&](int fd) { return meshInChild(input, switches, options.fault, fd); }, limits);
    output.log = run.output;
    output.peakMemoryBytes = run.peakMemoryBytes;
    switch (run.end) {
    case ContainedRun::End::Cancelled:
        return Error{kCancelledMessage};
    case ContainedRun::End::TimedOut: {
        std::ostringstream s;
        s << "TetGen did not finish within " << options.timeoutSeconds << " s (during " << stage
          << ") and was stopped";
        return Error{s.str()};
    }
    case ContainedRun::End::Crashed:
        return Error{"TetGen crashed (signal " + std::to_string(run.signal) + ", " +
                     strsignal(run.signal) + ") during " + stage +
                     "; the input was left unchanged"};
    case ContainedRun::End::NotStarted:
        return Error{"cannot start TetGen's process: " + run.problem};
    case ContainedRun::End::Finished:
        break;
    }
    if (run.exitCode >= kExitTetgenBase && run.exitCode < 100) {
        return Error{terminateReason(run.exitCode - kExitTetgenBase)};
    }
    if (run.exitCode != 0) {
        return Error{"TetGen's process " + run.describe(options.timeoutSeconds)};
    }

    ResultReader result(run.result);
    std::uint64_t header[4];
    if (!result.read(header) || header[0] != kMagic) {
        return Error{"TetGen's process returned no mesh"};
    }
    const std::size_t points = header[1];
    const std::size_t tets = header[2];
    const std::size_t attributes = header[3];
    if (points > result.remaining() / 24 || tets > result.remaining() / 16 || attributes > 64) {
        return Error{"TetGen's process returned a truncated mesh"};
    }
    std::vector<double> xyz(3 * points);
    std::vector<int> corners(4 * tets);
    std::vector<double> attr(attributes * tets);
    if (!result.read(xyz.data(), xyz.size() * sizeof(double)) ||
        !result.read(corners.data(), corners.size() * sizeof(int)) ||
        (!attr.empty() && !result.read(attr.data(), attr.size() * sizeof(double)))) {
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
