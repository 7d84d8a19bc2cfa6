#include "core/rigid/RigidBody.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <set>

namespace pbd {

namespace {

constexpr Real kPi = std::numbers::pi_v<Real>;

// Orders the vertices of a planar convex polygon counter-clockwise about the normal n.
void sortCounterClockwise(const std::vector<Vec3>& points, std::vector<int>& loop, const Vec3& n) {
    Vec3 centre = Vec3::Zero();
    for (int i : loop) {
        centre += points[i];
    }
    centre /= Real(loop.size());
    const Vec3 u = (points[loop[0]] - centre).normalized();
    const Vec3 w = n.cross(u);
    std::sort(loop.begin(), loop.end(), [&](int a, int b) {
        const Vec3 da = points[a] - centre, db = points[b] - centre;
        return std::atan2(da.dot(w), da.dot(u)) < std::atan2(db.dot(w), db.dot(u));
    });
}

// Faces, normals and offsets given; fills the edges and the merged edge directions.
void finishPolyhedron(ConvexPolyhedron& p) {
    std::set<std::pair<int, int>> seen;
    for (const std::vector<int>& f : p.faces) {
        for (std::size_t i = 0; i < f.size(); ++i) {
            const int a = f[i], b = f[(i + 1) % f.size()];
            if (seen.insert({std::min(a, b), std::max(a, b)}).second) {
                p.edges.push_back({std::min(a, b), std::max(a, b)});
            }
        }
    }
    for (const auto& e : p.edges) {
        const Vec3 d = (p.vertices[e[1]] - p.vertices[e[0]]).normalized();
        const bool parallel = std::any_of(p.edgeDirections.begin(), p.edgeDirections.end(),
                                          [&](const Vec3& o) { return d.cross(o).norm() < 1e-6; });
        if (!parallel) {
            p.edgeDirections.push_back(d);
        }
    }
}

// Covariance of the tet (0, a, b, c) for unit density (Blow and Binstock).
Mat3 tetCovariance(const Vec3& a, const Vec3& b, const Vec3& c) {
    Mat3 canonical;
    canonical << 2, 1, 1, 1, 2, 1, 1, 1, 2;
    canonical /= 120.0;
    Mat3 A;
    A.col(0) = a;
    A.col(1) = b;
    A.col(2) = c;
    return A.determinant() * A * canonical * A.transpose();
}

Mat3 crossMatrixSquared(const Vec3& d) {
    return d.squaredNorm() * Mat3::Identity() - d * d.transpose();
}

} // namespace

Real ConvexPolyhedron::volume() const {
    Real v = 0;
    for (const std::vector<int>& f : faces) {
        for (std::size_t i = 1; i + 1 < f.size(); ++i) {
            v += vertices[f[0]].dot(vertices[f[i]].cross(vertices[f[i + 1]])) / 6.0;
        }
    }
    return v;
}

Vec3 ConvexPolyhedron::centroid() const {
    Vec3 c = Vec3::Zero();
    Real v = 0;
    for (const std::vector<int>& f : faces) {
        for (std::size_t i = 1; i + 1 < f.size(); ++i) {
            const Vec3 &a = vertices[f[0]], &b = vertices[f[i]], &d = vertices[f[i + 1]];
            const Real tv = a.dot(b.cross(d)) / 6.0;
            v += tv;
            c += tv * (a + b + d) / 4.0;
        }
    }
    return v != 0 ? Vec3(c / v) : Vec3::Zero();
}

Mat3 ConvexPolyhedron::unitInertia() const {
    Mat3 covariance = Mat3::Zero();
    for (const std::vector<int>& f : faces) {
        for (std::size_t i = 1; i + 1 < f.size(); ++i) {
            covariance += tetCovariance(vertices[f[0]], vertices[f[i]], vertices[f[i + 1]]);
        }
    }
    return covariance.trace() * Mat3::Identity() - covariance;
}

ConvexPolyhedron boxPolyhedron(const Vec3& h) {
    ConvexPolyhedron p;
    for (int i = 0; i < 8; ++i) {
        p.vertices.emplace_back((i & 1) ? h.x() : -h.x(), (i & 2) ? h.y() : -h.y(),
                                (i & 4) ? h.z() : -h.z());
    }
    for (int axis = 0; axis < 3; ++axis) {
        for (int sign = -1; sign <= 1; sign += 2) {
            std::vector<int> loop;
            for (int i = 0; i < 8; ++i) {
                if (((i >> axis) & 1) == (sign > 0 ? 1 : 0)) {
                    loop.push_back(i);
                }
            }
            Vec3 n = Vec3::Zero();
            n[axis] = sign;
            sortCounterClockwise(p.vertices, loop, n);
            p.faces.push_back(loop);
            p.normals.push_back(n);
            p.offsets.push_back(h[axis]);
        }
    }
    finishPolyhedron(p);
    return p;
}

Result<ConvexPolyhedron> convexHull(const std::vector<Vec3>& input) {
    if (input.size() < 4) {
        return Error{"a convex hull needs at least 4 points, got " + std::to_string(input.size())};
    }
    Bounds bounds;
    for (const Vec3& p : input) {
        if (!p.allFinite()) {
            return Error{"a convex hull point is not finite (NaN or infinity)"};
        }
        bounds.add(p);
    }
    const Real scale = bounds.size().maxCoeff();
    const Real eps = 1e-9 * std::max<Real>(scale, 1e-12);
    // The initial tet: the extreme points on x, the point farthest from their line, the point
    // farthest from their plane.
    int i0 = 0, i1 = 0;
    for (int i = 0; i < int(input.size()); ++i) {
        if (input[i].x() < input[i0].x())
            i0 = i;
        if (input[i].x() > input[i1].x())
            i1 = i;
    }
    if ((input[i1] - input[i0]).norm() <= eps) {
        for (int i = 0; i < int(input.size()); ++i) {
            if ((input[i] - input[i0]).norm() > (input[i1] - input[i0]).norm())
                i1 = i;
        }
    }
    const Vec3 line = (input[i1] - input[i0]).normalized();
    int i2 = -1;
    Real best = eps;
    for (int i = 0; i < int(input.size()); ++i) {
        const Real d = (input[i] - input[i0]).cross(line).norm();
        if (d > best) {
            best = d;
            i2 = i;
        }
    }
    if (i2 < 0) {
        return Error{"the convex hull's points lie on a line"};
    }
    const Vec3 planeNormal = (input[i1] - input[i0]).cross(input[i2] - input[i0]).normalized();
    int i3 = -1;
    best = eps * 10;
    for (int i = 0; i < int(input.size()); ++i) {
        const Real d = std::abs((input[i] - input[i0]).dot(planeNormal));
        if (d > best) {
            best = d;
            i3 = i;
        }
    }
    if (i3 < 0) {
        return Error{"the convex hull's points lie in a plane (it would have no volume)"};
    }
    struct Face {
        std::array<int, 3> v;
        Vec3 n;
        Real d;
    };
    std::vector<Face> faces;
    const auto makeFace = [&](int a, int b, int c) {
        const Vec3 n = (input[b] - input[a]).cross(input[c] - input[a]).normalized();
        return Face{{a, b, c}, n, n.dot(input[a])};
    };
    const Vec3 inside = (input[i0] + input[i1] + input[i2] + input[i3]) / 4.0;
    for (std::array<int, 3> t : std::array<std::array<int, 3>, 4>{
             {{i0, i1, i2}, {i0, i1, i3}, {i0, i2, i3}, {i1, i2, i3}}}) {
        Face f = makeFace(t[0], t[1], t[2]);
        if (f.n.dot(inside) - f.d > 0) {
            f = makeFace(t[0], t[2], t[1]);
        }
        faces.push_back(f);
    }
    for (int p = 0; p < int(input.size()); ++p) {
        if (p == i0 || p == i1 || p == i2 || p == i3) {
            continue;
        }
        std::vector<bool> visible(faces.size(), false);
        bool any = false;
        for (std::size_t f = 0; f < faces.size(); ++f) {
            if (faces[f].n.dot(input[p]) - faces[f].d > eps) {
                visible[f] = any = true;
            }
        }
        if (!any) {
            continue;
        }
        std::set<std::pair<int, int>> visibleEdges;
        for (std::size_t f = 0; f < faces.size(); ++f) {
            if (visible[f]) {
                for (int k = 0; k < 3; ++k) {
                    visibleEdges.insert({faces[f].v[k], faces[f].v[(k + 1) % 3]});
                }
            }
        }
        std::vector<Face> kept;
        for (std::size_t f = 0; f < faces.size(); ++f) {
            if (!visible[f]) {
                kept.push_back(faces[f]);
            }
        }
        for (const auto& [a, b] : visibleEdges) {
            if (!visibleEdges.count({b, a})) {
                kept.push_back(makeFace(a, b, p));
            }
        }
        faces = std::move(kept);
    }
    // Merge coplanar neighbours into polygons: group triangles by plane, then walk each group's
    // boundary.
    ConvexPolyhedron hull;
    std::map<int, int> newIndex;
    const auto index = [&](int i) {
        auto [it, added] = newIndex.try_emplace(i, int(hull.vertices.size()));
        if (added) {
            hull.vertices.push_back(input[i]);
        }
        return it->second;
    };
    std::vector<int> group(faces.size(), -1);
    for (std::size_t f = 0; f < faces.size(); ++f) {
        if (group[f] >= 0) {
            continue;
        }
        std::vector<std::size_t> members;
        for (std::size_t g = f; g < faces.size(); ++g) {
            if (group[g] < 0 && faces[g].n.dot(faces[f].n) > 1 - 1e-9 &&
                std::abs(faces[g].d - faces[f].d) <= eps * 10) {
                group[g] = int(f);
                members.push_back(g);
            }
        }
        std::set<std::pair<int, int>> directed;
        for (std::size_t g : members) {
            for (int k = 0; k < 3; ++k) {
                directed.insert({faces[g].v[k], faces[g].v[(k + 1) % 3]});
            }
        }
        std::map<int, int> next;
        for (const auto& [a, b] : directed) {
            if (!directed.count({b, a})) {
                next[a] = b;
            }
        }
        std::vector<int> loop;
        int start = next.begin()->first, at = start;
        do {
            loop.push_back(index(at));
            at = next[at];
        } while (at != start && loop.size() <= next.size());
        hull.faces.push_back(loop);
        hull.normals.push_back(faces[f].n);
        hull.offsets.push_back(faces[f].d);
    }
    finishPolyhedron(hull);
    return hull;
}

std::string_view toString(RigidShapeType type) {
    switch (type) {
    case RigidShapeType::Sphere:
        return "sphere";
    case RigidShapeType::Capsule:
        return "capsule";
    case RigidShapeType::Box:
        return "box";
    case RigidShapeType::Hull:
        return "hull";
    }
    return "?";
}

std::string_view toString(RigidMotion motion) {
    switch (motion) {
    case RigidMotion::Dynamic:
        return "dynamic";
    case RigidMotion::Static:
        return "static";
    case RigidMotion::Kinematic:
        return "kinematic";
    }
    return "?";
}

std::string_view toString(RigidJointType type) {
    switch (type) {
    case RigidJointType::Ball:
        return "ball";
    case RigidJointType::Hinge:
        return "hinge";
    case RigidJointType::Fixed:
        return "fixed";
    }
    return "?";
}

RigidShape RigidShape::sphere(Real radius) {
    RigidShape s;
    s.type = RigidShapeType::Sphere;
    s.radius = radius;
    return s;
}

RigidShape RigidShape::box(const Vec3& halfExtents) {
    RigidShape s;
    s.type = RigidShapeType::Box;
    s.halfExtents = halfExtents;
    s.polyhedron = std::make_shared<const ConvexPolyhedron>(boxPolyhedron(halfExtents));
    return s;
}

RigidShape RigidShape::capsule(Real radius, Real halfHeight) {
    RigidShape s;
    s.type = RigidShapeType::Capsule;
    s.radius = radius;
    s.halfHeight = halfHeight;
    return s;
}

Result<RigidShape> RigidShape::hull(const std::vector<Vec3>& points) {
    Result<ConvexPolyhedron> h = convexHull(points);
    if (!h) {
        return Error{h.error()};
    }
    RigidShape s;
    s.type = RigidShapeType::Hull;
    s.polyhedron = std::make_shared<const ConvexPolyhedron>(std::move(h).value());
    return s;
}

Real RigidShape::volume() const {
    switch (type) {
    case RigidShapeType::Sphere:
        return 4.0 / 3.0 * kPi * radius * radius * radius;
    case RigidShapeType::Capsule:
        return kPi * radius * radius * (2 * halfHeight) +
               4.0 / 3.0 * kPi * radius * radius * radius;
    case RigidShapeType::Box:
        return 8 * halfExtents.prod();
    case RigidShapeType::Hull:
        return polyhedron->volume();
    }
    return 0;
}

Mat3 RigidShape::unitInertia() const {
    switch (type) {
    case RigidShapeType::Sphere:
        return Mat3::Identity() * (0.4 * volume() * radius * radius);
    case RigidShapeType::Capsule: {
        // A cylinder of height H and two hemispheres of mass m_h each, whose centres of mass lie
        // 3r/8 beyond the cylinder's ends.
        const Real r = radius, H = 2 * halfHeight;
        const Real cylinder = kPi * r * r * H;
        const Real hemisphere = 2.0 / 3.0 * kPi * r * r * r;
        const Real axial = cylinder * r * r / 2 + 2 * hemisphere * 0.4 * r * r;
        const Real across = cylinder * (H * H / 12 + r * r / 4) +
                            2 * hemisphere * (0.4 * r * r + H * H / 4 + 3 * H * r / 8);
        return Vec3(across, axial, across).asDiagonal();
    }
    case RigidShapeType::Box: {
        const Vec3 h2 = halfExtents.cwiseProduct(halfExtents);
        return Vec3(h2.y() + h2.z(), h2.z() + h2.x(), h2.x() + h2.y()).asDiagonal() *
               (volume() / 3);
    }
    case RigidShapeType::Hull:
        return polyhedron->unitInertia();
    }
    return Mat3::Zero();
}

Vec3 RigidShape::centroid() const {
    return type == RigidShapeType::Hull ? polyhedron->centroid() : Vec3::Zero();
}

Real RigidShape::boundingRadius() const {
    switch (type) {
    case RigidShapeType::Sphere:
        return radius;
    case RigidShapeType::Capsule:
        return radius + halfHeight;
    case RigidShapeType::Box:
        return halfExtents.norm();
    case RigidShapeType::Hull: {
        Real r = 0;
        for (const Vec3& v : polyhedron->vertices) {
            r = std::max(r, v.norm());
        }
        return r;
    }
    }
    return 0;
}

Mat3 RigidBody::inertiaWorld() const {
    const Mat3 R = rotation();
    return R * inertiaBody * R.transpose();
}

Mat3 RigidBody::inverseInertiaWorld() const {
    const Mat3 R = rotation();
    return R * inverseInertiaBody * R.transpose();
}

void RigidBody::setAngularVelocity(const Vec3& w) {
    omega = w;
    if (isDynamic()) {
        L = inertiaWorld() * w;
    }
}

Real RigidBody::kineticEnergy() const {
    if (!isDynamic()) {
        return 0;
    }
    return 0.5 * mass * v.squaredNorm() + 0.5 * omega.dot(L);
}

void finishRigidBody(RigidBody& body) {
    Real volume = 0;
    Vec3 weighted = Vec3::Zero();
    for (const RigidShape& s : body.shapes) {
        const Real v = s.volume();
        volume += v;
        weighted += v * (s.position + s.rotation * s.centroid());
    }
    const Vec3 com = volume > 0 ? Vec3(weighted / volume) : Vec3::Zero();
    Mat3 inertia = Mat3::Zero();
    for (const RigidShape& s : body.shapes) {
        const Real v = s.volume();
        const Vec3 c = s.centroid();
        // About the shape's centroid, then turned into the body frame and moved to the centre of
        // mass (parallel axes).
        const Mat3 atCentroid = s.unitInertia() - v * crossMatrixSquared(c);
        const Vec3 d = s.position + s.rotation * c - com;
        inertia += s.rotation * atCentroid * s.rotation.transpose() + v * crossMatrixSquared(d);
    }
    for (RigidShape& s : body.shapes) {
        s.position -= com;
    }
    body.x += body.q * com;
    body.mass = body.density * volume;
    body.inertiaBody = body.density * inertia;
    if (body.isDynamic() && body.mass > 0) {
        body.inverseMass = 1 / body.mass;
        body.inverseInertiaBody = body.inertiaBody.inverse();
        body.L = body.inertiaWorld() * body.omega;
    } else {
        body.inverseMass = 0;
        body.inverseInertiaBody = Mat3::Zero();
    }
}

ShapePose shapePose(const RigidBody& body, const RigidShape& shape) {
    const Mat3 R = body.rotation();
    return {body.x + R * shape.position, R * shape.rotation};
}

Bounds shapeBounds(const RigidBody& body, const RigidShape& shape) {
    const ShapePose pose = shapePose(body, shape);
    Bounds b;
    switch (shape.type) {
    case RigidShapeType::Sphere:
        b.add(pose.position - Vec3::Constant(shape.radius));
        b.add(pose.position + Vec3::Constant(shape.radius));
        break;
    case RigidShapeType::Capsule: {
        const Vec3 axis = pose.rotation.col(1) * shape.halfHeight;
        for (const Vec3& end : {Vec3(pose.position + axis), Vec3(pose.position - axis)}) {
            b.add(end - Vec3::Constant(shape.radius));
            b.add(end + Vec3::Constant(shape.radius));
        }
        break;
    }
    case RigidShapeType::Box: {
        const Vec3 extent = pose.rotation.cwiseAbs() * shape.halfExtents;
        b.add(pose.position - extent);
        b.add(pose.position + extent);
        break;
    }
    case RigidShapeType::Hull:
        for (const Vec3& v : shape.polyhedron->vertices) {
            b.add(pose.position + pose.rotation * v);
        }
        break;
    }
    return b;
}

namespace {

Vec3 toLocal(const std::vector<RigidBody>& bodies, int i, const Vec3& world) {
    return i < 0 ? world : Vec3(bodies[i].q.conjugate() * (world - bodies[i].x));
}

Vec3 directionToLocal(const std::vector<RigidBody>& bodies, int i, const Vec3& world) {
    return i < 0 ? world : Vec3(bodies[i].q.conjugate() * world);
}

Quat orientation(const std::vector<RigidBody>& bodies, int i) {
    return i < 0 ? Quat::Identity() : bodies[i].q;
}

} // namespace

RigidJoint ballJoint(const std::vector<RigidBody>& bodies, int a, int b, const Vec3& anchor) {
    RigidJoint j;
    j.type = RigidJointType::Ball;
    j.bodyA = a;
    j.bodyB = b;
    j.anchorA = toLocal(bodies, a, anchor);
    j.anchorB = toLocal(bodies, b, anchor);
    return j;
}

RigidJoint hingeJoint(const std::vector<RigidBody>& bodies, int a, int b, const Vec3& anchor,
                      const Vec3& axis) {
    RigidJoint j = ballJoint(bodies, a, b, anchor);
    j.type = RigidJointType::Hinge;
    const Vec3 n = axis.normalized();
    const Vec3 reference = n.unitOrthogonal();
    j.axisA = directionToLocal(bodies, a, n);
    j.axisB = directionToLocal(bodies, b, n);
    j.referenceA = directionToLocal(bodies, a, reference);
    j.referenceB = directionToLocal(bodies, b, reference);
    return j;
}

RigidJoint fixedJoint(const std::vector<RigidBody>& bodies, int a, int b, const Vec3& anchor) {
    RigidJoint j = ballJoint(bodies, a, b, anchor);
    j.type = RigidJointType::Fixed;
    j.restRotation = orientation(bodies, a).conjugate() * orientation(bodies, b);
    return j;
}

Real hingeAngle(const std::vector<RigidBody>& bodies, const RigidJoint& joint) {
    const Quat qa = orientation(bodies, joint.bodyA), qb = orientation(bodies, joint.bodyB);
    const Vec3 axis = qa * joint.axisA;
    const Vec3 ra = qa * joint.referenceA, rb = qb * joint.referenceB;
    return std::atan2(ra.cross(rb).dot(axis), ra.dot(rb));
}

std::array<Vec3, 2> jointAnchors(const std::vector<RigidBody>& bodies, const RigidJoint& joint) {
    const auto world = [&](int i, const Vec3& local) {
        return i < 0 ? local : bodies[i].toWorld(local);
    };
    return {world(joint.bodyA, joint.anchorA), world(joint.bodyB, joint.anchorB)};
}

RigidTotals rigidTotals(const std::vector<RigidBody>& bodies, const Vec3& gravity) {
    RigidTotals t;
    for (const RigidBody& b : bodies) {
        if (!b.isDynamic()) {
            continue;
        }
        t.linearMomentum += b.mass * b.v;
        t.angularMomentum += b.x.cross(b.mass * b.v) + b.L;
        t.kineticEnergy += b.kineticEnergy();
        t.potentialEnergy -= b.mass * gravity.dot(b.x);
    }
    return t;
}

} // namespace pbd
