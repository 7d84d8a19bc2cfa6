#pragma once
// Garments fitted to a character: a skirt of several layers, each a cloth cone around the skin's
// cross-section at the waist, with UVs for material frames (u around, v down), distance and
// bending constraints, and its waistband pinned to the skin (attachToCharacter) so it follows
// the dance.

#include "core/base/Result.h"
#include "core/scene/Scene.h"

#include <string_view>

namespace pbd {

struct SkirtSpec {
    int layers = 3;
    int segments = 128;         // around the waist
    int rows = 62;              // from the waist to the hem
    Real waistHeight = 1.0;     // y of the waistband in the scene, m
    Real length = 0.5;          // of the innermost layer, waist to hem, m
    Real layerGap = 0.02;       // between layers, m
    Real flare = 1.5;           // hem radius over waist radius
    Real ease = 0.015;          // the innermost layer's distance from the skin at the waist, m
    Real arealDensity = 0.15;   // kg/m^2
    Real bendingCompliance = 1; // 1/(N m), XPBD
};

// What is wrong with a spec (counts, lengths, a gap the layers cannot keep), naming the value;
// empty when it is fine.
std::string checkSkirt(const SkirtSpec& spec);

// Fits a skirt to character `character` of `scene`, posed as its collider is now (the time the
// scene shows), and adds its layers as cloth bodies
// ("skirt 1" innermost); returns the index of the first. The waist is the widest loop where the
// plane at the waist height cuts the skin (the hips, not a hand beside them). Fails when the
// plane cuts no skin.
Result<std::size_t> addSkirt(Scene& scene, int character, const SkirtSpec& spec);

// addSkirt from the "KEY=VALUE,..." edits the command line, Python and the window take:
// character (its index, default 0), layers, segments, rows, waist (the waistband's height, m),
// length, gap, flare, ease, density (kg/m^2), bending (compliance); the rest as SkirtSpec's
// defaults. An unknown key or a bad value is refused, naming it.
Result<std::size_t> addSkirtFromSpec(Scene& scene, std::string_view edits);

} // namespace pbd
