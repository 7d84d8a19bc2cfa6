#include "core/base/TextValues.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace pbd {

bool parseReal(std::string_view text, Real& out) {
    const std::string s(text);
    char* end = nullptr;
    out = std::strtod(s.c_str(), &end);
    return !s.empty() && end == s.c_str() + s.size() && std::isfinite(out);
}

bool parseVec(std::string_view text, Vec3& out) {
    std::string s(text);
    std::replace(s.begin(), s.end(), ';', ' ');
    std::istringstream in(s);
    std::string word;
    int n = 0;
    while (in >> word) {
        if (n == 3 || !parseReal(word, out[n])) {
            return false;
        }
        ++n;
    }
    return n == 3;
}

namespace {

std::string_view trimmed(std::string_view s) {
    const std::size_t first = s.find_first_not_of(" \t");
    if (first == std::string_view::npos) {
        return {};
    }
    return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

} // namespace

bool splitKeyValues(std::string_view edits, std::vector<std::pair<std::string, std::string>>& items,
                    std::string& bad) {
    items.clear();
    std::size_t start = 0;
    while (start < edits.size()) {
        const std::size_t comma = std::min(edits.find(',', start), edits.size());
        const std::string_view item = trimmed(edits.substr(start, comma - start));
        start = comma + 1;
        if (item.empty()) {
            continue;
        }
        const std::size_t eq = item.find('=');
        if (eq == std::string_view::npos) {
            bad = std::string(item);
            return false;
        }
        // Spaces around a key or a value are the typist's ("start=0.3, up = z").
        items.emplace_back(std::string(trimmed(item.substr(0, eq))),
                           std::string(trimmed(item.substr(eq + 1))));
    }
    return true;
}

} // namespace pbd
