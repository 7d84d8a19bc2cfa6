#include "core/solver/Colliders.h"

#include "core/base/TextValues.h"
#include "core/solver/SelfCollision.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <sstream>
#include <string>

namespace pbd {

std::string_view toString(ColliderShape shape) {
    switch (shape) {
    case ColliderShape::Plane:
        return "plane";
    case ColliderShape::Sphere:
        return "sphere";
    case ColliderShape::Box:
        return "box";
    case ColliderShape::Capsule:
        return "capsule";
    case ColliderShape::Mesh:
        return "mesh";
    }
    return "unknown";
}

Collider Collider::plane(const Vec3& point, const Vec3& normal) {
    Collider c;
    c.shape = ColliderShape::Plane;
    c.name = "plane";
    c.center = point;
    c.normal = normal.normalized();
    return c;
}

Collider Collider::sphere(const Vec3& center, Real radius) {
    Collider c;
    c.shape = ColliderShape::Sphere;
    c.name = "sphere";
    c.center = center;
    c.radius = radius;
    return c;
}

Collider Collider::box(const Vec3& center, const Vec3& halfExtents, const Mat3& rotation) {
    Collider c;
    c.shape = ColliderShape::Box;
    c.name = "box";
    c.center = center;
    c.halfExtents = halfExtents;
    c.rotation = rotation;
    return c;
}

Collider Collider::capsule(const Vec3& a, const Vec3& b, Real radius) {
    Collider c;
    c.shape = ColliderShape::Capsule;
    c.name = "capsule";
    c.a = a;
    c.b = b;
    c.radius = radius;
    return c;
}

Collider Collider::mesh(std::vector<Vec3> vertices, std::vector<Triangle> triangles) {
    Collider c;
    c.shape = ColliderShape::Mesh;
    c.name = "mesh";
    c.vertices = std::move(vertices);
    c.triangles = std::move(triangles);
    return c;
}

Vec3 colliderPosition(const Collider& c) {
    switch (c.shape) {
    case ColliderShape::Capsule:
        return 0.5 * (c.a + c.b);
    case ColliderShape::Mesh: {
        Vec3 sum = Vec3::Zero();
        for (const Vec3& v : c.vertices) {
            sum += v;
        }
        return c.vertices.empty() ? sum : Vec3(sum / Real(c.vertices.size()));
    }
    default:
        return c.center;
    }
}

void moveCollider(Collider& c, const Vec3& p) {
    const Vec3 d = p - colliderPosition(c);
    switch (c.shape) {
    case ColliderShape::Capsule:
        c.a += d;
        c.b += d;
        break;
    case ColliderShape::Mesh:
        for (Vec3& v : c.vertices) {
            v += d;
        }
        break;
    default:
        c.center = p;
        break;
    }
}

Vec3 eulerAnglesOf(const Mat3& r) {
    const Vec3 zyx = r.eulerAngles(2, 1, 0);
    return {zyx.z(), zyx.y(), zyx.x()};
}

Mat3 rotationFromEulerAngles(const Vec3& a) {
    return (Eigen::AngleAxis<Real>(a.z(), Vec3::UnitZ()) *
            Eigen::AngleAxis<Real>(a.y(), Vec3::UnitY()) *
            Eigen::AngleAxis<Real>(a.x(), Vec3::UnitX()))
        .toRotationMatrix();
}

std::string checkCollider(const Collider& c) {
    const std::string who = "collider '" + c.name + "' (" + std::string(toString(c.shape)) + ")";
    auto finite = [](const Vec3& v) { return v.allFinite(); };
    if (!finite(c.center) || !finite(c.normal) || !finite(c.a) || !finite(c.b) ||
        !c.rotation.allFinite() || !std::isfinite(c.radius)) {
        return who + ": a coordinate is not a finite number";
    }
    if ((c.shape == ColliderShape::Sphere || c.shape == ColliderShape::Capsule) &&
        !(c.radius > 0)) {
        std::ostringstream radius;
        radius << c.radius;
        return who + ": the radius must be positive, not " + radius.str();
    }
    if (c.shape == ColliderShape::Plane && !(c.normal.norm() > 1e-12)) {
        return who + ": the normal is zero";
    }
    if (c.shape == ColliderShape::Box) {
        if (!(c.halfExtents.minCoeff() > 0) || !finite(c.halfExtents)) {
            return who + ": every half extent must be positive";
        }
        if ((c.rotation.transpose() * c.rotation - Mat3::Identity()).norm() > 1e-6 ||
            c.rotation.determinant() < 0) {
            return who + ": the rotation is not a rotation";
        }
    }
    if (!(c.friction >= 0) || !std::isfinite(c.friction)) {
        return who + ": the friction must be a number >= 0";
    }
    if (!(c.restitution >= 0 && c.restitution <= 1)) {
        return who + ": the restitution must be in [0, 1]";
    }
    for (const Triangle& t : c.triangles) {
        for (Index v : t) {
            if (v >= c.vertices.size()) {
                return who + ": a triangle refers to vertex " + std::to_string(v) + " of " +
                       std::to_string(c.vertices.size());
            }
        }
    }
    return {};
}

Collider defaultCollider(ColliderShape shape, const Bounds& bodies) {
    const Vec3 centre = bodies.empty() ? Vec3::Zero() : bodies.center();
    const Real size = bodies.empty() ? 1.0 : std::max(bodies.size().maxCoeff(), Real(0.1));
    const Real lowest = bodies.empty() ? 0.0 : bodies.min.y();
    const Real r = size / 6;
    switch (shape) {
    case ColliderShape::Plane:
        return Collider::plane(Vec3(centre.x(), lowest - 0.05 * size, centre.z()), Vec3::UnitY());
    case ColliderShape::Sphere:
        return Collider::sphere(Vec3(centre.x(), lowest - r, centre.z()), r);
    case ColliderShape::Box:
        return Collider::box(Vec3(centre.x(), lowest - r, centre.z()), Vec3::Constant(r));
    case ColliderShape::Capsule:
        return Collider::capsule(Vec3(centre.x() - r, lowest - r, centre.z()),
                                 Vec3(centre.x() + r, lowest - r, centre.z()), r / 2);
    case ColliderShape::Mesh:
        break;
    }
    return Collider::mesh({}, {});
}

Result<Collider> editCollider(Collider c, std::string_view edits) {
    std::vector<std::pair<std::string, std::string>> items;
    std::string badItem;
    if (!splitKeyValues(edits, items, badItem)) {
        return Error{"collider edit '" + badItem + "' is not KEY=VALUE"};
    }
    for (const auto& [key, value] : items) {
        Vec3 v;
        Real x = 0;
        const std::string bad = "collider '" + c.name + "': " + key + " cannot be '" + value + "'";
        if (key == "name") {
            if (value.empty()) {
                return Error{"collider '" + c.name + "': the name cannot be empty"};
            }
            c.name = value;
        } else if (key == "position" || key == "center") {
            if (!parseVec(value, v)) {
                return Error{bad + " (three numbers, e.g. '0 1 0')"};
            }
            moveCollider(c, v);
        } else if (key == "normal" || key == "half_extents" || key == "a" || key == "b" ||
                   key == "rotation") {
            if (!parseVec(value, v)) {
                return Error{bad + " (three numbers, e.g. '0 1 0')"};
            }
            if (key == "normal") {
                c.normal = v.norm() > 0 ? Vec3(v.normalized()) : v;
            } else if (key == "half_extents") {
                c.halfExtents = v;
            } else if (key == "a") {
                c.a = v;
            } else if (key == "b") {
                c.b = v;
            } else {
                c.rotation = rotationFromEulerAngles(v * (std::numbers::pi / 180));
            }
        } else if (key == "radius" || key == "friction" || key == "restitution") {
            if (!parseReal(value, x)) {
                return Error{bad + " (a number)"};
            }
            (key == "radius" ? c.radius : key == "friction" ? c.friction : c.restitution) = x;
        } else {
            return Error{"collider '" + c.name + "' has no '" + key +
                         "'; keys: name, position, normal, radius, half_extents, rotation, a, b, "
                         "friction, restitution"};
        }
    }
    if (std::string problem = checkCollider(c); !problem.empty()) {
        return Error{problem};
    }
    return c;
}

Result<Collider> colliderFromSpec(std::string_view spec, const Bounds& bodies) {
    const std::size_t colon = spec.find(':');
    const std::string_view shape = spec.substr(0, colon);
    for (ColliderShape s : {ColliderShape::Plane, ColliderShape::Sphere, ColliderShape::Box,
                            ColliderShape::Capsule}) {
        if (shape == toString(s)) {
            return editCollider(defaultCollider(s, bodies), colon == std::string_view::npos
                                                                ? std::string_view()
                                                                : spec.substr(colon + 1));
        }
    }
    return Error{"unknown collider shape '" + std::string(shape) +
                 "'; shapes: plane, sphere, box, capsule"};
}

namespace {

Vec3 anyPerpendicular(const Vec3& v) {
    return std::abs(v.x()) < 0.9 ? v.cross(Vec3::UnitX()).normalized()
                                 : v.cross(Vec3::UnitY()).normalized();
}

Vec3 closestOnTriangle(const Vec3& x, const Vec3& a, const Vec3& b, const Vec3& c) {
    const Vec3 w = closestBarycentric(x, a, b, c);
    return w[0] * a + w[1] * b + w[2] * c;
}

SurfacePoint closestOnMesh(const Collider& c, const Vec3& x) {
    SurfacePoint best;
    best.distance = std::numeric_limits<Real>::infinity();
    std::size_t bestTriangle = 0;
    for (std::size_t i = 0; i < c.triangles.size(); ++i) {
        const Triangle& t = c.triangles[i];
        const Vec3 q = closestOnTriangle(x, c.vertices[t[0]], c.vertices[t[1]], c.vertices[t[2]]);
        const Real d = (x - q).squaredNorm();
        if (d < best.distance) {
            best.distance = d;
            best.point = q;
            bestTriangle = i;
        }
    }
    if (c.triangles.empty()) {
        return best;
    }
    // Inside or out by the parity of crossings along a fixed, skewed ray (robust away from
    // edges, unlike the sign of the nearest face's normal at an edge or corner).
    const Vec3 dir = Vec3(0.5773, 0.5774, 0.5771).normalized();
    int crossings = 0;
    for (const Triangle& t : c.triangles) {
        if (rayTriangle(x, dir, c.vertices[t[0]], c.vertices[t[1]], c.vertices[t[2]]) > 0) {
            ++crossings;
        }
    }
    const bool inside = crossings % 2 == 1;
    const Real d = std::sqrt(best.distance);
    const Triangle& t = c.triangles[bestTriangle];
    const Vec3 face = (c.vertices[t[1]] - c.vertices[t[0]])
                          .cross(c.vertices[t[2]] - c.vertices[t[0]])
                          .normalized();
    best.normal = d > 1e-12 ? Vec3((inside ? -1.0 : 1.0) * (x - best.point) / d) : face;
    best.distance = inside ? -d : d;
    return best;
}

} // namespace

SurfacePoint closestSurfacePoint(const Collider& c, const Vec3& x) {
    SurfacePoint s;
    switch (c.shape) {
    case ColliderShape::Plane:
        s.distance = (x - c.center).dot(c.normal);
        s.point = x - s.distance * c.normal;
        s.normal = c.normal;
        return s;
    case ColliderShape::Sphere: {
        const Vec3 r = x - c.center;
        const Real len = r.norm();
        s.normal = len > 0 ? Vec3(r / len) : Vec3::UnitY();
        s.distance = len - c.radius;
        s.point = c.center + c.radius * s.normal;
        return s;
    }
    case ColliderShape::Box: {
        const Vec3 local = c.rotation.transpose() * (x - c.center);
        const Vec3 clamped = local.cwiseMax(-c.halfExtents).cwiseMin(c.halfExtents);
        if (local != clamped) {
            const Vec3 r = local - clamped;
            s.distance = r.norm();
            s.normal = c.rotation * (r / s.distance);
            s.point = c.center + c.rotation * clamped;
            return s;
        }
        int axis = 0;
        (c.halfExtents - local.cwiseAbs()).minCoeff(&axis);
        const Real sign = local[axis] >= 0 ? 1.0 : -1.0;
        Vec3 onFace = local;
        onFace[axis] = sign * c.halfExtents[axis];
        s.distance = -(c.halfExtents[axis] - std::abs(local[axis]));
        s.normal = c.rotation * (sign * Vec3::Unit(axis));
        s.point = c.center + c.rotation * onFace;
        return s;
    }
    case ColliderShape::Capsule: {
        const Vec3 ab = c.b - c.a;
        const Real len2 = ab.squaredNorm();
        const Real t = len2 > 0 ? std::clamp((x - c.a).dot(ab) / len2, 0.0, 1.0) : 0.0;
        const Vec3 axisPoint = c.a + t * ab;
        const Vec3 r = x - axisPoint;
        const Real len = r.norm();
        s.normal = len > 0 ? Vec3(r / len) : anyPerpendicular(len2 > 0 ? ab : Vec3::UnitY());
        s.distance = len - c.radius;
        s.point = axisPoint + c.radius * s.normal;
        return s;
    }
    case ColliderShape::Mesh:
        return closestOnMesh(c, x);
    }
    return s;
}

bool firstEntry(const Collider& c, const Vec3& x, const Vec3& p, SegmentHit& hit) {
    const Vec3 d = p - x;
    switch (c.shape) {
    case ColliderShape::Plane: {
        const Real dx = (x - c.center).dot(c.normal);
        const Real dp = (p - c.center).dot(c.normal);
        if (dx >= 0 && dp < 0) {
            hit.t = dx / (dx - dp);
            hit.normal = c.normal;
            return true;
        }
        return false;
    }
    case ColliderShape::Sphere: {
        const Vec3 m = x - c.center;
        const Real A = d.squaredNorm();
        const Real B = m.dot(d);
        const Real C = m.squaredNorm() - c.radius * c.radius;
        if (C < 0 || A <= 0 || B >= 0) {
            return false; // starts inside, does not move, or moves away
        }
        const Real disc = B * B - A * C;
        if (disc < 0) {
            return false;
        }
        const Real t = (-B - std::sqrt(disc)) / A;
        if (t < 0 || t > 1) {
            return false;
        }
        hit.t = t;
        hit.normal = (m + t * d).normalized();
        return true;
    }
    case ColliderShape::Box: {
        // Slabs in the box frame: the entry is the largest near-plane crossing.
        const Vec3 o = c.rotation.transpose() * (x - c.center);
        const Vec3 dir = c.rotation.transpose() * d;
        Real tEnter = 0, tExit = 1;
        int enterAxis = -1;
        Real enterSign = 1;
        for (int i = 0; i < 3; ++i) {
            if (std::abs(dir[i]) < 1e-300) {
                if (std::abs(o[i]) > c.halfExtents[i]) {
                    return false;
                }
                continue;
            }
            Real t0 = (-c.halfExtents[i] - o[i]) / dir[i];
            Real t1 = (c.halfExtents[i] - o[i]) / dir[i];
            Real sign = -1;
            if (t0 > t1) {
                std::swap(t0, t1);
                sign = 1;
            }
            if (t0 > tEnter) {
                tEnter = t0;
                enterAxis = i;
                enterSign = sign;
            }
            tExit = std::min(tExit, t1);
            if (tEnter > tExit) {
                return false;
            }
        }
        if (enterAxis < 0) {
            return false; // starts inside
        }
        hit.t = tEnter;
        hit.normal = c.rotation * (enterSign * Vec3::Unit(enterAxis));
        return true;
    }
    case ColliderShape::Capsule: {
        // Sphere tracing on the exact distance: converges to the entry of a convex shape.
        const Real len = d.norm();
        if (len <= 0 || closestSurfacePoint(c, x).distance < 0) {
            return false;
        }
        Real t = 0;
        for (int i = 0; i < 64 && t <= 1; ++i) {
            const SurfacePoint s = closestSurfacePoint(c, x + t * d);
            if (s.distance < 1e-9 * (1 + c.radius)) {
                hit.t = t;
                hit.normal = s.normal;
                return true;
            }
            t += s.distance / len;
        }
        return false;
    }
    case ColliderShape::Mesh: {
        Real best = 2;
        Vec3 normal = Vec3::UnitY();
        for (const Triangle& tri : c.triangles) {
            const Vec3& a = c.vertices[tri[0]];
            const Vec3& b = c.vertices[tri[1]];
            const Vec3& cc = c.vertices[tri[2]];
            const Vec3 n = (b - a).cross(cc - a);
            if (n.dot(d) >= 0) {
                continue; // only entering through a front face
            }
            const Real t = rayTriangle(x, d, a, b, cc);
            if (t >= 0 && t <= 1 && t < best) {
                best = t;
                normal = n.normalized();
            }
        }
        if (best > 1) {
            return false;
        }
        hit.t = best;
        hit.normal = normal;
        return true;
    }
    }
    return false;
}

Real rayTriangle(const Vec3& o, const Vec3& d, const Vec3& a, const Vec3& b, const Vec3& c,
                 Vec3* barycentric) {
    const Vec3 e1 = b - a, e2 = c - a;
    const Vec3 h = d.cross(e2);
    const Real det = e1.dot(h);
    if (std::abs(det) < 1e-300) {
        return -1;
    }
    const Real f = 1 / det;
    const Vec3 s = o - a;
    const Real u = f * s.dot(h);
    if (u < 0 || u > 1) {
        return -1;
    }
    const Vec3 q = s.cross(e1);
    const Real v = f * d.dot(q);
    if (v < 0 || u + v > 1) {
        return -1;
    }
    if (barycentric != nullptr) {
        *barycentric = Vec3(1 - u - v, u, v);
    }
    return f * e2.dot(q);
}

bool contactFor(const Collider& c, const Vec3& x, const Vec3& p, Real margin, Vec3& q, Vec3& n) {
    const SurfacePoint sx = closestSurfacePoint(c, x);
    if (sx.distance < margin) {
        q = sx.point;
        n = sx.normal;
        return true;
    }
    SegmentHit hit;
    if (firstEntry(c, x, p, hit)) {
        q = x + hit.t * (p - x);
        n = hit.normal;
        return true;
    }
    const SurfacePoint sp = closestSurfacePoint(c, p);
    if (sp.distance < margin) {
        q = sp.point;
        n = sp.normal;
        return true;
    }
    return false;
}

} // namespace pbd
