#include "core/rigid/RigidCollision.h"

#include "core/base/ClosestPoints.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace pbd {

namespace {

constexpr Real kInfinity = std::numeric_limits<Real>::infinity();

bool isPolyhedron(RigidShapeType t) {
    return t == RigidShapeType::Box || t == RigidShapeType::Hull;
}

std::uint32_t mixFeature(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    std::uint32_t h = a * 0x9E3779B1u;
    h ^= b + 0x7F4A7C15u + (h << 6) + (h >> 2);
    h ^= c + 0x94D049BBu + (h << 6) + (h >> 2);
    return h;
}

Vec3 closestOnSegment(const Vec3& a, const Vec3& b, const Vec3& p) {
    const Vec3 d = b - a;
    const Real l2 = d.squaredNorm();
    const Real t = l2 > 0 ? std::clamp((p - a).dot(d) / l2, Real(0), Real(1)) : 0;
    return a + t * d;
}

// Signed distance to a polyhedron in its own frame, with the outward normal.
Real polyhedronDistance(const RigidShape& shape, const Vec3& p, Vec3& normal) {
    if (shape.type == RigidShapeType::Box) {
        const Vec3& h = shape.halfExtents;
        const Vec3 q = p.cwiseAbs() - h;
        if (q.maxCoeff() <= 0) {
            int axis = 0;
            q.maxCoeff(&axis);
            normal = Vec3::Zero();
            normal[axis] = p[axis] >= 0 ? 1 : -1;
            return q[axis];
        }
        const Vec3 outside = q.cwiseMax(0.0);
        normal = outside.cwiseProduct(p.cwiseSign()).normalized();
        return outside.norm();
    }
    const ConvexPolyhedron& poly = *shape.polyhedron;
    Real deepest = -kInfinity;
    int face = 0;
    for (std::size_t i = 0; i < poly.faces.size(); ++i) {
        const Real d = poly.normals[i].dot(p) - poly.offsets[i];
        if (d > deepest) {
            deepest = d;
            face = int(i);
        }
    }
    if (deepest <= 0) {
        normal = poly.normals[face];
        return deepest;
    }
    // Outside: the closest point over the faces the point is in front of.
    Real best = kInfinity;
    Vec3 closest = p;
    for (std::size_t i = 0; i < poly.faces.size(); ++i) {
        const Vec3& n = poly.normals[i];
        const Real d = n.dot(p) - poly.offsets[i];
        if (d <= 0) {
            continue;
        }
        const std::vector<int>& f = poly.faces[i];
        const Vec3 projected = p - d * n;
        bool inside = true;
        for (std::size_t k = 0; k < f.size() && inside; ++k) {
            const Vec3& a = poly.vertices[f[k]];
            const Vec3& b = poly.vertices[f[(k + 1) % f.size()]];
            inside = (b - a).cross(projected - a).dot(n) >= 0;
        }
        if (inside) {
            if (d < best) {
                best = d;
                closest = projected;
            }
            continue;
        }
        for (std::size_t k = 0; k < f.size(); ++k) {
            const Vec3 c =
                closestOnSegment(poly.vertices[f[k]], poly.vertices[f[(k + 1) % f.size()]], p);
            const Real dist = (p - c).norm();
            if (dist < best) {
                best = dist;
                closest = c;
            }
        }
    }
    normal = best > 0 ? Vec3((p - closest) / best) : poly.normals[face];
    return best;
}

void addPoint(RigidManifold& m, const Vec3& position, Real separation, std::uint32_t feature) {
    if (m.count < int(m.points.size())) {
        m.points[m.count++] = {position, separation, feature};
    }
}

// Sphere (or the closest point of a capsule's core) against a shape's distance: one point.
bool pointAgainst(const RigidShape& shape, const ShapePose& pose, const Vec3& centre, Real radius,
                  Real margin, std::uint32_t feature, RigidManifold& m) {
    Vec3 n;
    const Real d = shapeSignedDistance(shape, pose, centre, n);
    const Real separation = d - radius;
    if (separation > margin) {
        return false;
    }
    // The normal points from the shape towards the point; from A (the point's side) to B it is
    // the opposite.
    m.normal = -n;
    addPoint(m, centre - n * (radius + d) * 0.5, separation, feature);
    return true;
}

bool sphereSphere(const Vec3& ca, Real ra, const Vec3& cb, Real rb, Real margin,
                  std::uint32_t feature, RigidManifold& m) {
    const Vec3 d = cb - ca;
    const Real dist = d.norm();
    const Real separation = dist - ra - rb;
    if (separation > margin) {
        return false;
    }
    m.normal = dist > 1e-12 ? Vec3(d / dist) : Vec3::UnitY();
    const Vec3 onA = ca + m.normal * ra, onB = cb - m.normal * rb;
    addPoint(m, 0.5 * (onA + onB), separation, feature);
    return true;
}

std::array<Vec3, 2> capsuleEnds(const RigidShape& s, const ShapePose& pose) {
    const Vec3 axis = pose.rotation.col(1) * s.halfHeight;
    return {pose.position - axis, pose.position + axis};
}

bool capsuleCapsule(const RigidShape& a, const ShapePose& pa, const RigidShape& b,
                    const ShapePose& pb, Real margin, RigidManifold& m) {
    const auto [a0, a1] = capsuleEnds(a, pa);
    const auto [b0, b1] = capsuleEnds(b, pb);
    Real s = 0, t = 0;
    closestSegmentParameters(a0, a1, b0, b1, s, t);
    const Vec3 pA = a0 + s * (a1 - a0), pB = b0 + t * (b1 - b0);
    if (!sphereSphere(pA, a.radius, pB, b.radius, margin, 2, m)) {
        return false;
    }
    const Vec3 da = a1 - a0, db = b1 - b0;
    const bool parallel = da.cross(db).norm() <= 1e-3 * da.norm() * db.norm();
    if (!parallel || da.norm() < 1e-12) {
        return true;
    }
    // Lying side by side: the two ends of the overlap, so that the pair cannot roll about the
    // single point.
    m.count = 0;
    const Vec3 n = m.normal;
    std::array<std::pair<Vec3, std::uint32_t>, 4> candidates = {std::pair{a0, 0u},
                                                                {a1, 1u},
                                                                {closestOnSegment(a0, a1, b0), 2u},
                                                                {closestOnSegment(a0, a1, b1), 3u}};
    const Vec3 dir = da.normalized();
    Real lo = kInfinity, hi = -kInfinity;
    int iLo = -1, iHi = -1;
    for (int i = 0; i < 4; ++i) {
        const Vec3& p = candidates[i].first;
        const Vec3 q = closestOnSegment(b0, b1, p);
        if ((q - p).dot(n) - a.radius - b.radius > margin) {
            continue;
        }
        const Real along = p.dot(dir);
        if (along < lo) {
            lo = along;
            iLo = i;
        }
        if (along > hi) {
            hi = along;
            iHi = i;
        }
    }
    for (int i : {iLo, iHi}) {
        if (i < 0 || (i == iHi && iHi == iLo)) {
            continue;
        }
        const Vec3& p = candidates[i].first;
        const Vec3 q = closestOnSegment(b0, b1, p);
        const Real separation = (q - p).dot(n) - a.radius - b.radius;
        addPoint(m, 0.5 * (p + n * a.radius + q - n * b.radius), separation, candidates[i].second);
    }
    if (m.count == 0) {
        addPoint(m, 0.5 * (pA + pB), (pB - pA).dot(n) - a.radius - b.radius, 2);
    }
    return true;
}

// A capsule against a polyhedron: the polyhedron's distance is convex along the capsule's
// segment, so its minimum is found by golden-section search (segmentSignedDistance); the ends
// are contacts too, so a capsule lying on a face rests on two points.
bool capsulePolyhedron(const RigidShape& a, const ShapePose& pa, const RigidShape& b,
                       const ShapePose& pb, Real margin, RigidManifold& m) {
    const std::array<Vec3, 2> ends = capsuleEnds(a, pa); // not bound: clang 14 cannot capture them
    const Vec3 a0 = ends[0], a1 = ends[1];
    const auto distanceAt = [&](Real t, Vec3& n) {
        return shapeSignedDistance(b, pb, a0 + t * (a1 - a0), n);
    };
    Real tMin = 0;
    Vec3 nMin;
    const Real dMin = segmentSignedDistance(b, pb, a0, a1, tMin, nMin);
    Vec3 n0, n1;
    const Real d0 = distanceAt(0, n0), d1 = distanceAt(1, n1);
    const Real r = a.radius;
    if (std::min({d0, d1, dMin}) - r > margin) {
        return false;
    }
    Real deepest = kInfinity;
    const auto consider = [&](Real t, Real d, const Vec3& normal, std::uint32_t feature) {
        if (d - r > margin) {
            return;
        }
        const Vec3 c = a0 + t * (a1 - a0);
        addPoint(m, c - normal * (r + d) * 0.5, d - r, feature);
        if (d < deepest) {
            deepest = d;
            m.normal = -normal;
        }
    };
    consider(0, d0, n0, 0);
    consider(1, d1, n1, 1);
    const Real scale = std::max<Real>(a.halfHeight, 1e-9);
    if (tMin > 1e-3 && tMin < 1 - 1e-3 && dMin < std::min(d0, d1) - 1e-6 * scale) {
        consider(tMin, dMin, nMin, 2);
    }
    return m.count > 0;
}

// The separating axis test over face normals and edge-pair crossings, then the incident face
// clipped against the reference face (Gregorius, "The Separating Axis Test between Convex
// Polyhedra", GDC 2013; Ericson §5.2.1).
struct WorldPolyhedron {
    const ConvexPolyhedron* shape;
    Mat3 R;
    Vec3 t;
    std::vector<Vec3> vertices;
    Vec3 centre;

    void set(const RigidShape& s, const ShapePose& pose) {
        shape = s.polyhedron.get();
        R = pose.rotation;
        t = pose.position;
        vertices.resize(shape->vertices.size());
        centre = Vec3::Zero();
        for (std::size_t i = 0; i < vertices.size(); ++i) {
            vertices[i] = t + R * shape->vertices[i];
            centre += vertices[i];
        }
        centre /= Real(vertices.size());
    }
    Vec3 normal(int face) const { return R * shape->normals[face]; }
    Real offset(int face) const { return normal(face).dot(t) + shape->offsets[face]; }
    Real minAlong(const Vec3& axis) const {
        Real m = kInfinity;
        for (const Vec3& v : vertices) {
            m = std::min(m, v.dot(axis));
        }
        return m;
    }
    Real maxAlong(const Vec3& axis) const {
        Real m = -kInfinity;
        for (const Vec3& v : vertices) {
            m = std::max(m, v.dot(axis));
        }
        return m;
    }
};

struct FaceQuery {
    int face = -1;
    Real separation = -kInfinity;
};

FaceQuery queryFaces(const WorldPolyhedron& a, const WorldPolyhedron& b) {
    FaceQuery q;
    for (int i = 0; i < int(a.shape->faces.size()); ++i) {
        const Vec3 n = a.normal(i);
        const Real s = b.minAlong(n) - a.offset(i);
        if (s > q.separation) {
            q.separation = s;
            q.face = i;
        }
    }
    return q;
}

struct EdgeQuery {
    Vec3 axis = Vec3::Zero();
    int directionA = -1, directionB = -1;
    Real separation = -kInfinity;
};

EdgeQuery queryEdges(const WorldPolyhedron& a, const WorldPolyhedron& b) {
    EdgeQuery q;
    const Vec3 between = b.centre - a.centre;
    for (int i = 0; i < int(a.shape->edgeDirections.size()); ++i) {
        const Vec3 ea = a.R * a.shape->edgeDirections[i];
        for (int j = 0; j < int(b.shape->edgeDirections.size()); ++j) {
            const Vec3 eb = b.R * b.shape->edgeDirections[j];
            Vec3 axis = ea.cross(eb);
            const Real length = axis.norm();
            if (length < 1e-6) {
                continue;
            }
            axis /= length;
            if (axis.dot(between) < 0) {
                axis = -axis;
            }
            const Real s = b.minAlong(axis) - a.maxAlong(axis);
            if (s > q.separation) {
                q = {axis, i, j, s};
            }
        }
    }
    return q;
}

// Of the polyhedron's edges parallel to the direction, the one farthest along the axis.
int supportEdge(const WorldPolyhedron& p, const Vec3& direction, const Vec3& axis) {
    int best = -1;
    Real bestAlong = -kInfinity;
    for (int e = 0; e < int(p.shape->edges.size()); ++e) {
        const Vec3& a = p.vertices[p.shape->edges[e][0]];
        const Vec3& b = p.vertices[p.shape->edges[e][1]];
        const Vec3 d = b - a;
        if (d.cross(direction).norm() > 1e-4 * d.norm()) {
            continue;
        }
        const Real along = (a + b).dot(axis);
        if (along > bestAlong) {
            bestAlong = along;
            best = e;
        }
    }
    return best;
}

struct ClipVertex {
    Vec3 p;
    std::uint32_t id;
};

// Sutherland-Hodgman against the plane s·x <= o, naming each cut point by the two points it
// lies between and the plane, so that the same geometry gives the same IDs every step.
void clipPolygon(const std::vector<ClipVertex>& in, const Vec3& s, Real o, std::uint32_t plane,
                 std::vector<ClipVertex>& out) {
    out.clear();
    const std::size_t n = in.size();
    for (std::size_t i = 0; i < n; ++i) {
        const ClipVertex& p = in[i];
        const ClipVertex& q = in[(i + 1) % n];
        const Real dp = s.dot(p.p) - o, dq = s.dot(q.p) - o;
        if (dp <= 0) {
            out.push_back(p);
        }
        if ((dp <= 0) != (dq <= 0)) {
            const Real t = dp / (dp - dq);
            out.push_back({p.p + t * (q.p - p.p),
                           mixFeature(std::min(p.id, q.id), std::max(p.id, q.id), plane + 1)});
        }
    }
}

// Keeps four of the points: the deepest, the farthest from it, the one making the largest
// triangle with them, and the one adding the most area to that triangle.
void reduceToFour(std::vector<ClipVertex>& points, std::vector<Real>& separations, const Vec3& n) {
    const int count = int(points.size());
    std::array<int, 4> chosen{};
    chosen[0] = int(std::min_element(separations.begin(), separations.end()) - separations.begin());
    Real best = -1;
    for (int i = 0; i < count; ++i) {
        const Real d = (points[i].p - points[chosen[0]].p).squaredNorm();
        if (d > best) {
            best = d;
            chosen[1] = i;
        }
    }
    const Vec3 a = points[chosen[0]].p, b = points[chosen[1]].p;
    best = -1;
    Real signedArea = 0;
    for (int i = 0; i < count; ++i) {
        const Real area = (b - a).cross(points[i].p - a).dot(n);
        if (std::abs(area) > best) {
            best = std::abs(area);
            chosen[2] = i;
            signedArea = area;
        }
    }
    const Vec3 c = points[chosen[2]].p;
    // With the triangle wound counter-clockwise about n, a point outside an edge has a
    // negative area with it.
    const std::array<Vec3, 3> tri =
        signedArea >= 0 ? std::array<Vec3, 3>{a, b, c} : std::array<Vec3, 3>{a, c, b};
    best = -kInfinity;
    chosen[3] = chosen[0];
    for (int i = 0; i < count; ++i) {
        for (int k = 0; k < 3; ++k) {
            const Real outside = -(tri[(k + 1) % 3] - tri[k]).cross(points[i].p - tri[k]).dot(n);
            if (outside > best) {
                best = outside;
                chosen[3] = i;
            }
        }
    }
    std::vector<ClipVertex> keptPoints;
    std::vector<Real> keptSeparations;
    for (int k = 0; k < 4; ++k) {
        if (std::find(chosen.begin(), chosen.begin() + k, chosen[k]) != chosen.begin() + k) {
            continue;
        }
        keptPoints.push_back(points[chosen[k]]);
        keptSeparations.push_back(separations[chosen[k]]);
    }
    points = std::move(keptPoints);
    separations = std::move(keptSeparations);
}

// The box of each edge direction of a box polyhedron: which of its axes it runs along.
int boxAxisOf(const Vec3& direction) {
    int axis = 0;
    direction.cwiseAbs().maxCoeff(&axis);
    return axis;
}

// The same three queries for two boxes in closed form, in A's frame (Gottschalk's OBB test):
// 15 axes at a few flops each instead of projecting every vertex. False when separated by more
// than the margin.
bool queryBoxes(const RigidShape& sa, const ShapePose& pa, const RigidShape& sb,
                const ShapePose& pb, Real margin, FaceQuery& fa, FaceQuery& fb, EdgeQuery& e) {
    const Vec3& ha = sa.halfExtents;
    const Vec3& hb = sb.halfExtents;
    const Mat3 R = pa.rotation.transpose() * pb.rotation;
    const Mat3 absR = R.cwiseAbs();
    const Vec3 t = pa.rotation.transpose() * (pb.position - pa.position);
    fa = {};
    for (int i = 0; i < 3; ++i) {
        const Real sep = std::abs(t[i]) - ha[i] - hb.dot(absR.row(i));
        if (sep > fa.separation) {
            fa = {2 * i + (t[i] > 0 ? 1 : 0), sep};
        }
    }
    if (fa.separation > margin) {
        return false;
    }
    const Vec3 tb = R.transpose() * t; // A to B in B's frame
    fb = {};
    for (int j = 0; j < 3; ++j) {
        const Real sep = std::abs(tb[j]) - hb[j] - ha.dot(absR.col(j));
        if (sep > fb.separation) {
            fb = {2 * j + (tb[j] < 0 ? 1 : 0), sep}; // B's face that looks at A
        }
    }
    if (fb.separation > margin) {
        return false;
    }
    e = {};
    const auto& dirsA = sa.polyhedron->edgeDirections;
    const auto& dirsB = sb.polyhedron->edgeDirections;
    for (int k = 0; k < int(dirsA.size()); ++k) {
        const int i = boxAxisOf(dirsA[k]);
        const int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
        for (int l = 0; l < int(dirsB.size()); ++l) {
            const int j = boxAxisOf(dirsB[l]);
            const Real length = std::sqrt(std::max<Real>(0, 1 - R(i, j) * R(i, j)));
            if (length < 1e-6) {
                continue;
            }
            const int j1 = (j + 1) % 3, j2 = (j + 2) % 3;
            const Real distance = t[i2] * R(i1, j) - t[i1] * R(i2, j);
            const Real ra = ha[i1] * absR(i2, j) + ha[i2] * absR(i1, j);
            const Real rb = hb[j1] * absR(i, j2) + hb[j2] * absR(i, j1);
            const Real sep = (std::abs(distance) - ra - rb) / length;
            if (sep > e.separation) {
                // a_i x b_j in A's frame, oriented from A towards B.
                Vec3 axis = Vec3::Unit(i).cross(R.col(j)) / length;
                if (axis.dot(t) < 0) {
                    axis = -axis;
                }
                e = {pa.rotation * axis, k, l, sep};
            }
        }
    }
    return e.separation <= margin;
}

bool polyhedronPolyhedron(const RigidShape& sa, const ShapePose& pa, const RigidShape& sb,
                          const ShapePose& pb, Real margin, RigidManifold& m) {
    thread_local WorldPolyhedron a, b;
    FaceQuery fa, fb;
    EdgeQuery e;
    if (sa.type == RigidShapeType::Box && sb.type == RigidShapeType::Box) {
        if (!queryBoxes(sa, pa, sb, pb, margin, fa, fb, e)) {
            return false;
        }
        a.set(sa, pa);
        b.set(sb, pb);
    } else {
        a.set(sa, pa);
        b.set(sb, pb);
        fa = queryFaces(a, b);
        if (fa.separation > margin) {
            return false;
        }
        fb = queryFaces(b, a);
        if (fb.separation > margin) {
            return false;
        }
        e = queryEdges(a, b);
        if (e.separation > margin) {
            return false;
        }
    }
    // Faces are preferred (they give several points); an edge pair only when clearly better.
    const Real size = std::min(sa.boundingRadius(), sb.boundingRadius());
    const Real tolerance = 0.005 * size;
    const Real faceSeparation = std::max(fa.separation, fb.separation);
    if (e.directionA >= 0 && e.separation > faceSeparation + tolerance) {
        const int ea = supportEdge(a, a.R * a.shape->edgeDirections[e.directionA], e.axis);
        const int eb = supportEdge(b, b.R * b.shape->edgeDirections[e.directionB], -e.axis);
        if (ea >= 0 && eb >= 0) {
            const Vec3& a0 = a.vertices[a.shape->edges[ea][0]];
            const Vec3& a1 = a.vertices[a.shape->edges[ea][1]];
            const Vec3& b0 = b.vertices[b.shape->edges[eb][0]];
            const Vec3& b1 = b.vertices[b.shape->edges[eb][1]];
            Real s = 0, t = 0;
            closestSegmentParameters(a0, a1, b0, b1, s, t);
            const Vec3 onA = a0 + s * (a1 - a0), onB = b0 + t * (b1 - b0);
            m.normal = e.axis;
            addPoint(m, 0.5 * (onA + onB), e.separation,
                     0x40000000u | (std::uint32_t(ea) << 12) | std::uint32_t(eb));
            return true;
        }
    }
    const bool flip = fb.separation > fa.separation + tolerance;
    const WorldPolyhedron& ref = flip ? b : a;
    const WorldPolyhedron& inc = flip ? a : b;
    const int refFace = flip ? fb.face : fa.face;
    const Vec3 n = ref.normal(refFace);
    const Real refOffset = ref.offset(refFace);
    // The incident face: the most anti-parallel to the reference normal.
    int incFace = 0;
    Real most = kInfinity;
    for (int i = 0; i < int(inc.shape->faces.size()); ++i) {
        const Real d = inc.normal(i).dot(n);
        if (d < most) {
            most = d;
            incFace = i;
        }
    }
    thread_local std::vector<ClipVertex> polygon, clipped;
    polygon.clear();
    for (int v : inc.shape->faces[incFace]) {
        polygon.push_back({inc.vertices[v], std::uint32_t(v)});
    }
    const std::vector<int>& face = ref.shape->faces[refFace];
    for (std::size_t k = 0; k < face.size() && !polygon.empty(); ++k) {
        const Vec3& v0 = ref.vertices[face[k]];
        const Vec3& v1 = ref.vertices[face[(k + 1) % face.size()]];
        const Vec3 side = (v1 - v0).cross(n).normalized();
        // A little beyond the face's edge is kept: stacked boxes of one size have their
        // corners on it, and a corner that hovered in and out would change its feature ID
        // (and lose its warm start) every step.
        clipPolygon(polygon, side, side.dot(v0) + tolerance, std::uint32_t(k), clipped);
        std::swap(polygon, clipped);
    }
    thread_local std::vector<Real> separations;
    thread_local std::vector<ClipVertex> kept;
    separations.clear();
    kept.clear();
    for (const ClipVertex& c : polygon) {
        const Real s = n.dot(c.p) - refOffset;
        if (s <= margin) {
            kept.push_back(c);
            separations.push_back(s);
        }
    }
    if (kept.empty()) {
        return false;
    }
    if (kept.size() > 4) {
        reduceToFour(kept, separations, n);
    }
    m.normal = flip ? Vec3(-n) : n;
    const std::uint32_t faceBits =
        (std::uint32_t(refFace) & 0x7F) << 24 | (flip ? 0x80000000u : 0u);
    for (std::size_t i = 0; i < kept.size(); ++i) {
        addPoint(m, kept[i].p - n * separations[i] * 0.5, separations[i],
                 faceBits | (kept[i].id & 0xFFFFFF));
    }
    return true;
}

} // namespace

Real shapeSignedDistance(const RigidShape& shape, const ShapePose& pose, const Vec3& point,
                         Vec3& normal) {
    switch (shape.type) {
    case RigidShapeType::Sphere: {
        const Vec3 d = point - pose.position;
        const Real l = d.norm();
        normal = l > 1e-12 ? Vec3(d / l) : Vec3::UnitY();
        return l - shape.radius;
    }
    case RigidShapeType::Capsule: {
        const auto [e0, e1] = capsuleEnds(shape, pose);
        const Vec3 d = point - closestOnSegment(e0, e1, point);
        const Real l = d.norm();
        normal = l > 1e-12 ? Vec3(d / l) : Vec3(pose.rotation.col(1).unitOrthogonal());
        return l - shape.radius;
    }
    case RigidShapeType::Box:
    case RigidShapeType::Hull: {
        Vec3 local;
        const Real d =
            polyhedronDistance(shape, pose.rotation.transpose() * (point - pose.position), local);
        normal = pose.rotation * local;
        return d;
    }
    }
    normal = Vec3::UnitY();
    return kInfinity;
}

Real segmentSignedDistance(const RigidShape& shape, const ShapePose& pose, const Vec3& a,
                           const Vec3& b, Real& t, Vec3& normal, int iterations, Real cutoff) {
    // The signed distance of a convex shape is convex along a line: golden-section search.
    const auto distanceAt = [&](Real u, Vec3& n) {
        return shapeSignedDistance(shape, pose, a + u * (b - a), n);
    };
    constexpr Real golden = 0.6180339887498949;
    Real lo = 0, hi = 1;
    Real x1 = hi - golden * (hi - lo), x2 = lo + golden * (hi - lo);
    Vec3 n;
    Real f1 = distanceAt(x1, n), f2 = distanceAt(x2, n);
    const Real length = (b - a).norm();
    for (int i = 0; i < iterations; ++i) {
        // The minimum lies in [lo, hi] and the distance is 1-Lipschitz.
        if (std::min(f1, f2) - (hi - lo) * length >= cutoff) {
            t = f1 < f2 ? x1 : x2;
            return distanceAt(t, normal);
        }
        if (f1 < f2) {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - golden * (hi - lo);
            f1 = distanceAt(x1, n);
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + golden * (hi - lo);
            f2 = distanceAt(x2, n);
        }
    }
    t = 0.5 * (lo + hi);
    return distanceAt(t, normal);
}

bool collideShapes(const RigidShape& a, const ShapePose& poseA, const RigidShape& b,
                   const ShapePose& poseB, Real margin, RigidManifold& m) {
    m.count = 0;
    if (a.type > b.type) {
        if (!collideShapes(b, poseB, a, poseA, margin, m)) {
            return false;
        }
        m.normal = -m.normal;
        return true;
    }
    switch (a.type) {
    case RigidShapeType::Sphere:
        if (b.type == RigidShapeType::Sphere) {
            return sphereSphere(poseA.position, a.radius, poseB.position, b.radius, margin, 0, m);
        }
        return pointAgainst(b, poseB, poseA.position, a.radius, margin, 0, m);
    case RigidShapeType::Capsule:
        if (b.type == RigidShapeType::Capsule) {
            return capsuleCapsule(a, poseA, b, poseB, margin, m);
        }
        return capsulePolyhedron(a, poseA, b, poseB, margin, m);
    case RigidShapeType::Box:
    case RigidShapeType::Hull:
        return isPolyhedron(b.type) && polyhedronPolyhedron(a, poseA, b, poseB, margin, m);
    }
    return false;
}

} // namespace pbd
