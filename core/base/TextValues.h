#pragma once
// The "KEY=VALUE,KEY=VALUE" edits the command line and the Python module give to colliders and
// characters: numbers and vectors as text, checked whole.

#include "core/base/LinearAlgebra.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pbd {

// A finite number and nothing else.
bool parseReal(std::string_view text, Real& out);
// Three numbers separated by spaces or semicolons ("0 1 0").
bool parseVec(std::string_view text, Vec3& out);
// The items of "KEY=VALUE,KEY=VALUE" (empty items skipped, spaces around keys and values
// dropped); false with `bad` naming the first item that is not KEY=VALUE.
bool splitKeyValues(std::string_view edits, std::vector<std::pair<std::string, std::string>>& items,
                    std::string& bad);

} // namespace pbd
