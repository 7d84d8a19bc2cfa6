#pragma once
// Marks on the elements of a set (tets, particles, bodies), all cleared at once in constant
// time: each use takes a new stamp, and an element is marked while it holds the stamp. The
// array is zeroed only when the stamps wrap around.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace pbd {

class Marks {
public:
    // Clears every mark, for at least `size` elements.
    void begin(std::size_t size) {
        if (marks_.size() < size) {
            marks_.resize(size, 0);
        }
        if (++stamp_ == 0) {
            std::fill(marks_.begin(), marks_.end(), 0);
            stamp_ = 1;
        }
    }
    // Marks element i: false when it was marked since begin.
    bool mark(std::size_t i) {
        if (marks_[i] == stamp_) {
            return false;
        }
        marks_[i] = stamp_;
        return true;
    }

private:
    std::vector<std::uint32_t> marks_;
    std::uint32_t stamp_ = 0;
};

} // namespace pbd
