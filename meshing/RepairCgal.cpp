// The CGAL rungs of the repair ladder: hole filling, self-intersection removal, alpha wrapping
// and the wrap's Hausdorff distance, kept in one translation unit (see RepairCgal.h).

#include "meshing/RepairCgal.h"

#include <CGAL/Exact_predicates_inexact_constructions_kernel.h>
#include <CGAL/Polygon_mesh_processing/corefinement.h>
#include <CGAL/Polygon_mesh_processing/distance.h>
#include <CGAL/Polygon_mesh_processing/measure.h>
#include <CGAL/Polygon_mesh_processing/orient_polygon_soup.h>
#include <CGAL/Polygon_mesh_processing/orientation.h>
#include <CGAL/Polygon_mesh_processing/polygon_soup_to_polygon_mesh.h>
#include <CGAL/Polygon_mesh_processing/repair_polygon_soup.h>
#include <CGAL/Polygon_mesh_processing/repair_self_intersections.h>
#include <CGAL/Polygon_mesh_processing/self_intersections.h>
#include <CGAL/Polygon_mesh_processing/triangulate_hole.h>
#include <CGAL/Surface_mesh.h>
#include <CGAL/alpha_wrap_3.h>
#include <cmath>
#include <map>

namespace pbd::cgal {

namespace {

namespace PMP = CGAL::Polygon_mesh_processing;
using Kernel = CGAL::Exact_predicates_inexact_constructions_kernel;
using Point = Kernel::Point_3;
using Mesh = CGAL::Surface_mesh<Point>;

Point toPoint(const Vec3& p) {
    return Point(p.x(), p.y(), p.z());
}
Vec3 toVec(const Point& p) {
    return Vec3(p.x(), p.y(), p.z());
}

// The mesh's vertices and triangles, compacted (removed elements skipped).
void readMesh(const Mesh& mesh, std::vector<Vec3>& points, std::vector<Triangle>& triangles,
              std::vector<long>* origin = nullptr,
              const Mesh::Property_map<Mesh::Face_index, long>* from = nullptr) {
    std::vector<Index> index(mesh.number_of_vertices() + mesh.number_of_removed_vertices(), 0);
    points.clear();
    for (Mesh::Vertex_index v : mesh.vertices()) {
        index[v] = Index(points.size());
        points.push_back(toVec(mesh.point(v)));
    }
    triangles.clear();
    if (origin) {
        origin->clear();
    }
    for (Mesh::Face_index f : mesh.faces()) {
        Triangle t{};
        int k = 0;
        for (Mesh::Vertex_index v : mesh.vertices_around_face(mesh.halfedge(f))) {
            if (k < 3) {
                t[k] = index[v];
            }
            ++k;
        }
        if (k != 3) {
            continue;
        }
        triangles.push_back(t);
        if (origin && from) {
            origin->push_back((*from)[f]);
        }
    }
}

// The soup as a halfedge mesh, made manifold and consistently oriented the way CGAL does it
// (vertices duplicated where needed). Empty when nothing is left.
Mesh meshOfSoup(const std::vector<Vec3>& points, const std::vector<Triangle>& triangles) {
    std::vector<Point> p;
    p.reserve(points.size());
    for (const Vec3& x : points) {
        p.push_back(toPoint(x));
    }
    std::vector<std::vector<std::size_t>> polygons;
    polygons.reserve(triangles.size());
    for (const Triangle& t : triangles) {
        polygons.push_back({std::size_t(t[0]), std::size_t(t[1]), std::size_t(t[2])});
    }
    PMP::repair_polygon_soup(p, polygons);
    PMP::orient_polygon_soup(p, polygons);
    Mesh mesh;
    PMP::polygon_soup_to_polygon_mesh(p, polygons, mesh);
    return mesh;
}

// The surface as a halfedge mesh; false when a triangle does not fit (not manifold, not
// consistently oriented).
bool buildMesh(const std::vector<Vec3>& points, const std::vector<Triangle>& triangles,
               Mesh& mesh) {
    std::vector<Mesh::Vertex_index> vertex;
    vertex.reserve(points.size());
    for (const Vec3& p : points) {
        vertex.push_back(mesh.add_vertex(toPoint(p)));
    }
    for (const Triangle& t : triangles) {
        if (mesh.add_face(vertex[t[0]], vertex[t[1]], vertex[t[2]]) == Mesh::null_face()) {
            return false;
        }
    }
    return true;
}

// Merges vertices at exactly the same place (corefinement can construct one intersection point
// twice, once from each surface) and drops the triangles that collapse.
void weldCoincident(std::vector<Vec3>& points, std::vector<Triangle>& triangles) {
    std::map<std::array<double, 3>, Index> first;
    std::vector<Index> to(points.size());
    std::vector<Vec3> kept;
    for (std::size_t i = 0; i < points.size(); ++i) {
        const auto [it, inserted] = first.try_emplace(
            std::array<double, 3>{points[i].x(), points[i].y(), points[i].z()}, Index(kept.size()));
        if (inserted) {
            kept.push_back(points[i]);
        }
        to[i] = it->second;
    }
    std::vector<Triangle> out;
    out.reserve(triangles.size());
    for (Triangle t : triangles) {
        for (Index& v : t) {
            v = to[v];
        }
        if (t[0] != t[1] && t[1] != t[2] && t[0] != t[2]) {
            out.push_back(t);
        }
    }
    points = std::move(kept);
    triangles = std::move(out);
}

// Closed, outward and not crossing itself: what corefinement needs.
bool boundsVolume(const Mesh& mesh) {
    return CGAL::is_closed(mesh) && !PMP::does_self_intersect(mesh) &&
           PMP::does_bound_a_volume(mesh) && PMP::volume(mesh) > 0;
}

} // namespace

bool unite(std::vector<Vec3>& points, std::vector<Triangle>& triangles,
           const std::vector<Vec3>& otherPoints, const std::vector<Triangle>& otherTriangles) {
    Mesh a, b, out;
    if (!buildMesh(points, triangles, a) || !buildMesh(otherPoints, otherTriangles, b) ||
        !boundsVolume(a) || !boundsVolume(b)) {
        return false;
    }
    try {
        if (!PMP::corefine_and_compute_union(a, b, out)) {
            return false;
        }
    } catch (const std::exception&) {
        return false;
    }
    readMesh(out, points, triangles);
    weldCoincident(points, triangles);
    return true;
}

std::vector<std::array<int, 3>> triangulateHole(const std::vector<Vec3>& loop) {
    std::vector<Point> polyline;
    polyline.reserve(loop.size());
    for (const Vec3& p : loop) {
        polyline.push_back(toPoint(p));
    }
    std::vector<CGAL::Triple<int, int, int>> patch;
    PMP::triangulate_hole_polyline(polyline, std::back_inserter(patch));
    std::vector<std::array<int, 3>> out;
    out.reserve(patch.size());
    for (const auto& t : patch) {
        out.push_back({t.first, t.second, t.third});
    }
    return out;
}

bool removeSelfIntersections(std::vector<Vec3>& points, std::vector<Triangle>& triangles,
                             std::vector<long>& origin) {
    Mesh mesh;
    if (!buildMesh(points, triangles, mesh)) {
        return false; // not a manifold, consistently oriented surface
    }
    // Faces are numbered in the order they were added: face t is triangle t. New faces the
    // removal makes get -1.
    auto [from, created] = mesh.add_property_map<Mesh::Face_index, long>("f:origin", -1);
    (void)created;
    for (Mesh::Face_index f : mesh.faces()) {
        from[f] = long(f.idx());
    }
    try {
        PMP::experimental::remove_self_intersections(mesh, CGAL::parameters::preserve_genus(false));
    } catch (const std::exception&) {
        return false;
    }
    if (PMP::does_self_intersect(mesh) || !CGAL::is_closed(mesh)) {
        return false;
    }
    mesh.collect_garbage();
    readMesh(mesh, points, triangles, &origin, &from);
    return true;
}

namespace {

// Stops a wrap from its visitor: alpha_wrap_3 (CGAL 5.5) has no other way out; its state is
// all local to the call, so unwinding frees it.
struct WrapCancelled {};

struct CancellingVisitor : CGAL::Alpha_wraps_3::internal::Wrapping_default_visitor {
    const std::function<bool()>* keepGoing = nullptr;
    std::size_t facets = 0;
    template <typename Wrapper, typename Gate>
    void before_facet_treatment(const Wrapper&, const Gate&) {
        if (++facets % 4096 == 0 && *keepGoing && !(*keepGoing)()) {
            throw WrapCancelled{};
        }
    }
};

} // namespace

Wrap alphaWrap(const std::vector<Vec3>& points, const std::vector<Triangle>& triangles,
               double alpha, double offset, bool measure, const std::function<bool()>& keepGoing) {
    std::vector<Point> p;
    p.reserve(points.size());
    for (const Vec3& x : points) {
        p.push_back(toPoint(x));
    }
    // Degenerate faces are dropped: alpha_wrap_3 (CGAL 5.5) crashes on a soup of only those.
    std::vector<std::array<std::size_t, 3>> faces;
    faces.reserve(triangles.size());
    for (const Triangle& t : triangles) {
        if (t[0] != t[1] && t[1] != t[2] && t[0] != t[2] &&
            !CGAL::collinear(p[t[0]], p[t[1]], p[t[2]])) {
            faces.push_back({std::size_t(t[0]), std::size_t(t[1]), std::size_t(t[2])});
        }
    }
    Mesh wrap;
    Wrap out;
    if (faces.empty()) {
        return out;
    }
    if (keepGoing) {
        CancellingVisitor visitor;
        visitor.keepGoing = &keepGoing;
        try {
            // The visitor is an output parameter (the builder's), after the input's.
            CGAL::alpha_wrap_3(p, faces, alpha, offset, wrap, CGAL::parameters::default_values(),
                               CGAL::parameters::visitor(std::ref(visitor)));
        } catch (const WrapCancelled&) {
            out.cancelled = true;
            return out;
        }
    } else {
        CGAL::alpha_wrap_3(p, faces, alpha, offset, wrap);
    }
    if (wrap.number_of_faces() == 0) {
        return out;
    }
    if (PMP::volume(wrap) < 0) {
        PMP::reverse_face_orientations(wrap);
    }
    out.volume = PMP::volume(wrap);
    readMesh(wrap, out.points, out.triangles);
    if (!measure) {
        return out;
    }
    const Mesh original = meshOfSoup(points, triangles);
    if (original.number_of_faces() > 0) {
        out.hausdorffError = offset * 0.5;
        out.wrapToInput = PMP::bounded_error_Hausdorff_distance<CGAL::Sequential_tag>(
            wrap, original, out.hausdorffError);
        out.inputToWrap = PMP::bounded_error_Hausdorff_distance<CGAL::Sequential_tag>(
            original, wrap, out.hausdorffError);
    }
    return out;
}

} // namespace pbd::cgal
