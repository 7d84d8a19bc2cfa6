#pragma once
// PBD Lab's own readers of the simple mesh formats: PLY (ASCII, binary little- and big-endian),
// OFF (with or without normals, colours and texture coordinates, colours after a face's
// indices) and STL (ASCII, several solids, and binary). They are strict where a mistake would
// corrupt the mesh and lenient where nothing is lost: every count is checked against the bytes
// that could hold it before anything is allocated, every index against the vertices, every read
// against the end of the data. A problem is a message naming the file, the place (line, or byte
// offset in binary data) and what was wrong; nothing here can crash or hang on any input (the
// fuzz targets in tests/fuzz run them on mutated files).

#include "core/base/Result.h"
#include "meshing/SurfaceAssembly.h"

#include <string>
#include <string_view>
#include <vector>

namespace pbd {

struct MeshFileContents {
    std::vector<TriangleSoup> parts;   // one per mesh in the file (an STL solid)
    std::vector<std::string> warnings; // what was skipped or dropped, with counts
};

// `data` is the file's bytes; `label` names it in messages ("cannot read 'LABEL': ..."), and
// `stem` names the parts that have no name of their own. Coordinates are multiplied by scale.
Result<MeshFileContents> parsePly(std::string_view data, const std::string& label,
                                  const std::string& stem, double scale = 1.0);
Result<MeshFileContents> parseOff(std::string_view data, const std::string& label,
                                  const std::string& stem, double scale = 1.0);
Result<MeshFileContents> parseStl(std::string_view data, const std::string& label,
                                  const std::string& stem, double scale = 1.0);

} // namespace pbd
