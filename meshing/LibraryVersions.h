#pragma once
// Versions of the libraries core and meshing are built with, for About boxes and bug reports.

#include <string>
#include <vector>

namespace pbd {

struct LibraryVersion {
    std::string name;
    std::string version;
};

std::vector<LibraryVersion> meshingLibraryVersions();

} // namespace pbd
