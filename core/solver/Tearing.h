#pragma once
// Tearing (PBD §5): when a cloth edge is stretched beyond a limit, one of its vertices is split by
// the plane through it perpendicular to the edge; the triangles on the edge's side keep the
// vertex, the others get a copy. Constraints follow their triangles: those on one side move to
// the copy, hinges across the cut are removed and edges along it are duplicated.

#include "core/scene/Scene.h"

#include <string>
#include <vector>

namespace pbd {

struct TearEvent {
    std::string body;
    Index vertex = 0; // the vertex that was split
    Index copy = 0;   // the new particle (indices after it shifted by one)
    Real stretch = 0; // length / rest length of the edge that tore
};

// Splits up to `maxTears` vertices of cloth bodies whose distance constraints are stretched
// beyond `stretchLimit` (length / rest length), most stretched first. Bodies with a pressure
// constraint do not tear. The scene's constraints must be re-coloured afterwards (the function
// marks them as not coloured).
std::vector<TearEvent> tearOverstretchedEdges(Scene& scene, Real stretchLimit,
                                              std::size_t maxTears);

// Inserts a particle at the end of body `bodyIndex`'s range and shifts every later index in the
// scene (bodies, constraints, attachments, pressure) by one. Returns the new index.
Index insertParticle(Scene& scene, std::size_t bodyIndex, const Vec3& position,
                     const Vec3& velocity, Real inverseMass);

} // namespace pbd
