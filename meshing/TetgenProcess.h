#pragma once
// Runs TetGen 1.5 in a child process. TetGen can crash or loop forever on inputs it dislikes,
// and neither can be caught inside a process; in a forked child, a crash becomes a message, a
// hang becomes a timeout, and the user can cancel at any moment. The parent reads TetGen's
// stage messages for progress and gets the mesh back through an anonymous memory file.

#include "core/base/LinearAlgebra.h"
#include "core/base/Result.h"
#include "meshing/ContainedProcess.h"

#include <functional>
#include <string>
#include <vector>

namespace pbd {

struct TetgenInput {
    std::vector<Vec3> points;
    std::vector<Triangle> facets; // indices into points
    std::vector<Vec3> holes;      // a point inside each region that must stay empty
    struct Region {
        Vec3 seed;
        int attribute = 0;
        double maxVolume = -1; // m^3; negative: no limit of its own
    };
    std::vector<Region> regions; // used with the A switch
};

struct TetgenOutput {
    std::vector<Vec3> points; // the input points first, in order (J switch), then Steiner points
    std::vector<Tetrahedron> tets;
    std::vector<int> tetAttributes;  // the region attribute per tet, when regions were given
    std::string log;                 // what TetGen printed
    std::size_t peakMemoryBytes = 0; // the child's peak resident memory
};

// For tests of the safety net itself: make the child crash or hang instead of meshing.
enum class TetgenFault { None, Crash, Hang };

struct TetgenRunOptions {
    double timeoutSeconds = 300;
    ProgressCallback progress; // called on the calling thread, also to poll for Cancel
    TetgenFault fault = TetgenFault::None;
};

// `switches` are TetGen's command-line switches without the dash ("pYJq1.5"). The error says
// which of these happened: crashed (with the signal), timed out, cancelled, rejected the
// input (TetGen's own reason: self-intersection, tiny feature, close facets, out of memory).
Result<TetgenOutput> runTetgen(const TetgenInput& input, const std::string& switches,
                               const TetgenRunOptions& options = {});

} // namespace pbd
