// The one translation unit with CGAL's 2D triangulation (CGAL templates are expensive to
// compile: keep them in few files).
#include "meshing/AirMeshing2D.h"

#include <CGAL/Constrained_Delaunay_triangulation_2.h>
#include <CGAL/Exact_predicates_inexact_constructions_kernel.h>
#include <CGAL/Triangulation_vertex_base_with_info_2.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace pbd {

namespace {

using Kernel = CGAL::Exact_predicates_inexact_constructions_kernel;
using VertexBase = CGAL::Triangulation_vertex_base_with_info_2<Index, Kernel>;
using FaceBase = CGAL::Constrained_triangulation_face_base_2<Kernel>;
using Tds = CGAL::Triangulation_data_structure_2<VertexBase, FaceBase>;
// Crossing constraints are an error here, not something to split.
using Cdt = CGAL::Constrained_Delaunay_triangulation_2<
    Kernel, Tds, CGAL::No_constraint_intersection_requiring_constructions_tag>;
using Point = Kernel::Point_2;

constexpr Index kNoParticle = std::numeric_limits<Index>::max();

// The edges of a body's triangles used by one triangle only: its outline.
std::vector<std::pair<Index, Index>> outline(const Body& body) {
    std::map<std::pair<Index, Index>, int> count;
    for (const Triangle& t : body.triangles) {
        for (int k = 0; k < 3; ++k) {
            const Index a = t[std::size_t(k)], b = t[std::size_t((k + 1) % 3)];
            ++count[{std::min(a, b), std::max(a, b)}];
        }
    }
    std::vector<std::pair<Index, Index>> edges;
    for (const auto& [edge, n] : count) {
        if (n == 1) {
            edges.push_back(edge);
        }
    }
    return edges;
}

// Whether p lies in triangle abc or on its edges (within rounding: a face's centroid on the
// diagonal of a body's square is inside it).
bool inside(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
    const auto side = [](const Vec3& u, const Vec3& v, const Vec3& q) {
        return (v.x() - u.x()) * (q.y() - u.y()) - (v.y() - u.y()) * (q.x() - u.x());
    };
    const Real area = std::abs(side(a, b, c));
    const Real eps = 1e-9 * area;
    const Real s0 = side(a, b, p), s1 = side(b, c, p), s2 = side(c, a, p);
    return (s0 >= -eps && s1 >= -eps && s2 >= -eps) || (s0 <= eps && s1 <= eps && s2 <= eps);
}

} // namespace

Result<Air2DReport> tessellateAir2D(Scene& scene, const Air2DOptions& options) {
    Particles& particles = scene.particles;
    if (particles.size() == 0) {
        return Error{"the scene has no particles to put air around"};
    }
    Bounds bounds;
    for (std::size_t i = 0; i < particles.size(); ++i) {
        const Vec3& p = particles.positions[i];
        if (!p.allFinite() || p.z() != 0) {
            return Error{"particle " + std::to_string(i) +
                         " is not in the plane z = 0: a 2D scene lies in the xy plane"};
        }
        bounds.add(p);
    }
    const int n = std::max(1, options.boxSubdivisions);
    const Vec3 size = bounds.max - bounds.min;
    const Real pad = std::max(options.margin, 0.0) * std::max(size.x(), size.y());
    if (!(pad > 0)) {
        return Error{"the air needs a margin around the bodies"};
    }
    const Vec3 lo = bounds.min - Vec3(pad, pad, 0), hi = bounds.max + Vec3(pad, pad, 0);

    Cdt cdt;
    std::vector<std::pair<Point, Index>> points;
    points.reserve(particles.size() + 4 * std::size_t(n));
    for (std::size_t i = 0; i < particles.size(); ++i) {
        points.emplace_back(Point(particles.positions[i].x(), particles.positions[i].y()),
                            Index(i));
    }
    // The container: n segments a side, counter-clockwise, its points immovable.
    const Index firstContainer = Index(particles.size());
    const Vec3 corners[4] = {lo, Vec3(hi.x(), lo.y(), 0), hi, Vec3(lo.x(), hi.y(), 0)};
    for (int side = 0; side < 4; ++side) {
        for (int k = 0; k < n; ++k) {
            const Vec3 p =
                corners[side] + (corners[(side + 1) % 4] - corners[side]) * (Real(k) / n);
            points.emplace_back(Point(p.x(), p.y()), particles.add(p, 0.0));
        }
    }
    const Index containerCount = Index(particles.size()) - firstContainer;
    // On failure the scene is left as it was.
    const auto fail = [&](std::string message) -> Result<Air2DReport> {
        particles.positions.resize(firstContainer);
        particles.velocities.resize(firstContainer);
        particles.inverseMasses.resize(firstContainer);
        if (!particles.forces.empty()) {
            particles.forces.resize(firstContainer);
        }
        return Error{std::move(message)};
    };
    cdt.insert(points.begin(), points.end());
    std::vector<Cdt::Vertex_handle> handle(particles.size());
    for (auto v = cdt.finite_vertices_begin(); v != cdt.finite_vertices_end(); ++v) {
        handle[v->info()] = v;
    }
    for (std::size_t i = 0; i < handle.size(); ++i) {
        if (handle[i] == Cdt::Vertex_handle()) {
            return fail("particle " + std::to_string(i) +
                        " lies on another particle: the 2D scene's points must be distinct");
        }
    }
    Air2DReport report;
    report.containerVertices = containerCount;
    try {
        for (const Body& body : scene.bodies) {
            if (body.triangles.empty()) { // a rope
                for (Index i = body.firstParticle; i + 1 < body.firstParticle + body.particleCount;
                     ++i) {
                    cdt.insert_constraint(handle[i], handle[i + 1]);
                    ++report.constrainedEdges;
                }
                continue;
            }
            for (const auto& [a, b] : outline(body)) {
                cdt.insert_constraint(handle[a], handle[b]);
                ++report.constrainedEdges;
            }
        }
        for (Index k = 0; k < containerCount; ++k) {
            cdt.insert_constraint(handle[firstContainer + k],
                                  handle[firstContainer + (k + 1) % containerCount]);
        }
    } catch (const std::exception&) {
        return fail("bodies or ropes cross each other in the plane: their outlines must not "
                    "intersect for the air between them to be triangulated");
    }
    // Air: the faces outside every body's triangles (a face's centroid decides).
    std::vector<Bounds> boxes;
    for (const Body& body : scene.bodies) {
        Bounds b;
        for (Index i = body.firstParticle; i < body.firstParticle + body.particleCount; ++i) {
            b.add(particles.positions[i]);
        }
        boxes.push_back(b);
    }
    AirMesh air;
    for (auto f = cdt.finite_faces_begin(); f != cdt.finite_faces_end(); ++f) {
        const Triangle t{f->vertex(0)->info(), f->vertex(1)->info(), f->vertex(2)->info()};
        if (std::find(t.begin(), t.end(), kNoParticle) != t.end()) {
            return fail("the triangulation made a point of its own");
        }
        const Vec3 c =
            (particles.positions[t[0]] + particles.positions[t[1]] + particles.positions[t[2]]) /
            3.0;
        bool solid = false;
        for (std::size_t b = 0; b < scene.bodies.size() && !solid; ++b) {
            const Bounds& box = boxes[b];
            if (c.x() < box.min.x() || c.x() > box.max.x() || c.y() < box.min.y() ||
                c.y() > box.max.y()) {
                continue;
            }
            for (const Triangle& s : scene.bodies[b].triangles) {
                if (inside(c, particles.positions[s[0]], particles.positions[s[1]],
                           particles.positions[s[2]])) {
                    solid = true;
                    break;
                }
            }
        }
        if (!solid) {
            air.triangles.push_back(t); // CGAL's faces are counter-clockwise
        }
    }
    air.firstParticle = firstContainer;
    air.particleCount = containerCount;
    report.triangles = air.triangles.size();
    scene.air = std::move(air);
    return report;
}

} // namespace pbd
