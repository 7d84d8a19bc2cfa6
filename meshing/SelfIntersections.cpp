// The one translation unit that instantiates CGAL's Polygon Mesh Processing (each costs ~20 s
// and 1.5 GB to compile): exact triangle-triangle intersection tests over all bodies at once.

#include "meshing/SurfaceCheck.h"

#include <CGAL/Exact_predicates_inexact_constructions_kernel.h>
#include <CGAL/Polygon_mesh_processing/self_intersections.h>
#include <CGAL/Surface_mesh.h>
#include <algorithm>
#include <unordered_map>

namespace pbd {

namespace {

using Kernel = CGAL::Exact_predicates_inexact_constructions_kernel;
using Point = Kernel::Point_3;
using Mesh = CGAL::Surface_mesh<Point>;

struct FaceOrigin {
    std::size_t body = 0;
    std::size_t triangle = 0;
};

const std::vector<Vec3>& skin0() {
    static const std::vector<Vec3> none;
    return none;
}
const std::vector<Triangle>& triangles0() {
    static const std::vector<Triangle> none;
    return none;
}

} // namespace

std::string intersectionBodyName(const Scene& scene, std::size_t body) {
    if (body < scene.bodies.size()) {
        return scene.bodies[body].name;
    }
    const std::size_t k = body - scene.bodies.size();
    return k < scene.characters.size() ? scene.characters[k].name : std::string("?");
}

std::vector<TriangleIntersection> findIntersections(const Scene& scene, bool characters) {
    // One mesh holds every body. A triangle wound against its neighbours joins them turned
    // round (the winding does not matter to whether triangles cross, and its neighbours stay
    // neighbours, not triangles that touch). One that still cannot join the halfedge structure
    // (a non-manifold edge or vertex) gets its own copies of its vertices; it is then tested
    // against its neighbours like any other triangle, which is what a broken surface deserves.
    Mesh mesh;
    std::vector<FaceOrigin> origin;
    // The surfaces tested: the bodies', then the characters' skins.
    struct Surface {
        const std::vector<Vec3>* x;
        const std::vector<Triangle>* triangles;
    };
    std::vector<Surface> surfaces;
    for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
        // A body that rides on a character's skin is that skin, tested as the character.
        const bool skin =
            characters && std::any_of(scene.characters.begin(), scene.characters.end(),
                                      [&](const Character& c) { return c.body == int(b); });
        surfaces.push_back(
            {&scene.particles.positions, skin ? &triangles0() : &scene.bodies[b].triangles});
    }
    if (characters) {
        for (const Character& c : scene.characters) {
            if (c.collider >= 0 && std::size_t(c.collider) < scene.colliders.size()) {
                const Collider& skin = scene.colliders[std::size_t(c.collider)];
                surfaces.push_back({&skin.vertices, &skin.triangles});
            } else {
                surfaces.push_back({&skin0(), &triangles0()});
            }
        }
    }
    for (std::size_t b = 0; b < surfaces.size(); ++b) {
        const auto& x = *surfaces[b].x;
        const std::vector<Triangle>& triangles = *surfaces[b].triangles;
        std::unordered_map<Index, Mesh::Vertex_index> vertexOf;
        auto vertex = [&](Index i) {
            auto [it, inserted] = vertexOf.try_emplace(i);
            if (inserted) {
                it->second = mesh.add_vertex(Point(x[i].x(), x[i].y(), x[i].z()));
            }
            return it->second;
        };
        for (std::size_t t = 0; t < triangles.size(); ++t) {
            const Triangle& tri = triangles[t];
            const Point p0(x[tri[0]].x(), x[tri[0]].y(), x[tri[0]].z());
            const Point p1(x[tri[1]].x(), x[tri[1]].y(), x[tri[1]].z());
            const Point p2(x[tri[2]].x(), x[tri[2]].y(), x[tri[2]].z());
            if (tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2] ||
                CGAL::collinear(p0, p1, p2)) {
                continue; // degenerate: reported separately, and a precondition of PMP
            }
            Mesh::Face_index f = mesh.add_face(vertex(tri[0]), vertex(tri[1]), vertex(tri[2]));
            if (f == Mesh::null_face()) {
                f = mesh.add_face(vertex(tri[0]), vertex(tri[2]), vertex(tri[1]));
            }
            if (f == Mesh::null_face()) {
                f = mesh.add_face(mesh.add_vertex(p0), mesh.add_vertex(p1), mesh.add_vertex(p2));
            }
            if (f == Mesh::null_face()) {
                continue;
            }
            if (origin.size() <= std::size_t(f)) {
                origin.resize(std::size_t(f) + 1);
            }
            origin[std::size_t(f)] = {b, t};
        }
    }

    std::vector<std::pair<Mesh::Face_index, Mesh::Face_index>> pairs;
    CGAL::Polygon_mesh_processing::self_intersections(mesh, std::back_inserter(pairs));

    std::vector<TriangleIntersection> result;
    result.reserve(pairs.size());
    const std::size_t bodies = scene.bodies.size();
    // Skin against skin is not listed (a character's meshes overlap where they meet), but its
    // triangles mark the pairs of bodies with them: the skin folds through itself there.
    std::vector<std::pair<std::size_t, std::size_t>> folded;
    for (const auto& [fa, fb] : pairs) {
        const FaceOrigin a = origin[std::size_t(fa)];
        const FaceOrigin b = origin[std::size_t(fb)];
        if (a.body >= bodies && b.body >= bodies) {
            folded.emplace_back(a.body, a.triangle);
            folded.emplace_back(b.body, b.triangle);
        }
    }
    std::sort(folded.begin(), folded.end());
    for (const auto& [fa, fb] : pairs) {
        FaceOrigin a = origin[std::size_t(fa)];
        FaceOrigin b = origin[std::size_t(fb)];
        if (a.body >= bodies && b.body >= bodies) {
            continue;
        }
        if (b.body < a.body || (b.body == a.body && b.triangle < a.triangle)) {
            std::swap(a, b);
        }
        // Bodies come before skins: b is the skin, if either is.
        const bool atFold = b.body >= bodies && std::binary_search(folded.begin(), folded.end(),
                                                                   std::pair{b.body, b.triangle});
        result.push_back({a.body, a.triangle, b.body, b.triangle, atFold});
    }
    std::sort(result.begin(), result.end(), [](const auto& l, const auto& r) {
        return std::tie(l.bodyA, l.triangleA, l.bodyB, l.triangleB) <
               std::tie(r.bodyA, r.triangleA, r.bodyB, r.triangleB);
    });
    return result;
}

std::size_t countAtSkinFolds(const std::vector<TriangleIntersection>& pairs) {
    return std::size_t(std::count_if(pairs.begin(), pairs.end(),
                                     [](const TriangleIntersection& p) { return p.atSkinFold; }));
}

} // namespace pbd
