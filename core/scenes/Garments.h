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
    // The waistband's pins, m/N. A hard pin (0) is immovable within a substep: where the hip
    // folds under the waistband, the rows below it are squeezed between pins that cannot give
    // and the skin, the air and the other layers, and dancer-small on one thread tangled for
    // good (14,291 crossing pairs after 1,000 steps). A soft pin is solved with the rest, so
    // the band can give where it must (0 pairs at the end): most pins stay within nanometres
    // of their skin point, the one furthest off is 2 mm away on a typical step and up to 27 mm
    // in the leaps (docs/characters.md).
    Real pinCompliance = 1e-7;
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
// length, gap, flare, ease, density (kg/m^2), bending (compliance), pin (the waistband's
// compliance, m/N; 0 for hard pins); the rest as SkirtSpec's
// defaults. An unknown key or a bad value is refused, naming it.
Result<std::size_t> addSkirtFromSpec(Scene& scene, std::string_view edits);

} // namespace pbd
