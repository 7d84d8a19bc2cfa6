#pragma once
// Runs work that can crash or hang (TetGen, assimp, tinyobjloader on a hostile file) in a
// forked child process with a time limit, a memory limit and cancel. A crash in the child is a
// result here, not the end of PBD Lab: the parent reads what the child wrote to an anonymous
// memory file, its output line by line, and how it ended.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>

namespace pbd {

// Returns false to cancel. fraction in [0, 1], or negative when nothing advanced and the
// call only asks whether to go on (it comes about every 50 ms during long steps).
using ProgressCallback = std::function<bool(double fraction, const std::string& stage)>;

// The message of a cancelled run, so callers can tell a cancel from a failure.
inline const std::string kCancelledMessage = "cancelled";

struct ContainedLimits {
    double timeoutSeconds = 120;
    // Address space the child may add to what it inherits; 0: no limit of its own.
    std::size_t memoryBytes = 0;
    // Polled about every 50 ms; false cancels (the child is killed).
    std::function<bool()> keepGoing;
    // The child's stdout and stderr, a line at a time, as they come.
    std::function<void(const std::string& line)> onLine;
};

struct ContainedRun {
    enum class End { Finished, Crashed, TimedOut, Cancelled, NotStarted };
    End end = End::NotStarted;
    int exitCode = -1;  // Finished: the child's exit code (what `work` returned)
    int signal = 0;     // Crashed: the signal that ended it
    std::string result; // what the child wrote to its result file
    std::string output; // all it printed
    std::size_t peakMemoryBytes = 0;
    std::string problem; // NotStarted: why

    bool succeeded() const { return end == End::Finished && exitCode == 0; }
    // How it ended, for a message: "crashed (signal 11, Segmentation fault)", "did not finish
    // within 120 s and was stopped", ...
    std::string describe(double timeoutSeconds) const;
};

// `work` runs in the child with the result file's descriptor (write the result there) and
// returns the child's exit code: 0 for success, below 100 for the caller's own failures. An
// exception out of `work` ends the child with kExitException, std::bad_alloc with
// kExitOutOfMemory.
inline constexpr int kExitException = 101;
inline constexpr int kExitOutOfMemory = 102;
ContainedRun runContained(const std::function<int(int resultFd)>& work,
                          const ContainedLimits& limits);

// For the child: writes all of `size` bytes (false on failure).
bool writeAllTo(int fd, const void* data, std::size_t size);

// For the parent: reads what the child wrote, every read checked against the end.
class ResultReader {
public:
    explicit ResultReader(std::string_view data)
        : data_(data) {}
    bool read(void* to, std::size_t size) {
        if (data_.size() - at_ < size) {
            return false;
        }
        if (size == 0) {
            return true; // `to` may be null (an empty array's data)
        }
        std::memcpy(to, data_.data() + at_, size);
        at_ += size;
        return true;
    }
    template <class T> bool read(T& value) { return read(&value, sizeof value); }
    // A length (std::uint64_t) and that many bytes.
    bool readString(std::string& s) {
        std::uint64_t size = 0;
        if (!read(size) || size > remaining()) {
            return false;
        }
        s.assign(data_.data() + at_, std::size_t(size));
        at_ += std::size_t(size);
        return true;
    }
    std::size_t remaining() const { return data_.size() - at_; }

private:
    std::string_view data_;
    std::size_t at_ = 0;
};

} // namespace pbd
