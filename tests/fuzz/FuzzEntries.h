#pragma once
// The fuzz targets' bodies: each runs one reader or parser PBD Lab owns or calls on a file's
// bytes, and what follows it when the file is accepted (welding, the scene's checks, a few
// solver steps), as the program would. Any input must return normally; a crash, a hang or a
// sanitizer report is a finding. The libFuzzer targets (scripts/fuzz) call these; so does no
// test: the suite reads the corpus and the regression files through the public paths instead
// (tst_fuzz_regressions).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace pbd::fuzz {

using Entry = void (*)(const std::uint8_t* data, std::size_t size);

struct Target {
    std::string name; // also the corpus folder's name under tests/fuzz/corpus
    Entry entry;
};

// ply, off, stl, obj, gltf, project, asset, scene, character
const std::vector<Target>& targets();

} // namespace pbd::fuzz
