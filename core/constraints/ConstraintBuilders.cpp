#include "core/constraints/ConstraintBuilders.h"

#include "core/constraints/ConstraintMath.h"

#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <tuple>

namespace pbd {

Real complianceOf(Real modulus, Real measure) {
    if (std::isinf(modulus) || !(measure > 0)) {
        return 0; // rigid
    }
    if (!(modulus > 0)) {
        return kFreeCompliance;
    }
    return 1.0 / (modulus * measure);
}

namespace {

math::V3<Real> v3(const Vec3& v) {
    return {v.x(), v.y(), v.z()};
}

std::string elementName(const Body& body, const char* what, std::size_t index) {
    std::string s = "body '";
    s.append(body.name).append("', ").append(what).append(" ").append(std::to_string(index));
    return s;
}

} // namespace

std::size_t addEdgeDistances(ConstraintSet& set, const Particles& particles, const Body& body,
                             Real compliance, Real pbdStiffness) {
    std::vector<std::pair<Index, Index>> edges;
    auto addEdge = [&](Index a, Index b) { edges.emplace_back(std::min(a, b), std::max(a, b)); };
    if (!body.tets.empty()) {
        for (const Tetrahedron& t : body.tets) {
            for (int i = 0; i < 4; ++i) {
                for (int j = i + 1; j < 4; ++j) {
                    addEdge(t[i], t[j]);
                }
            }
        }
    } else {
        for (const Triangle& t : body.triangles) {
            for (int i = 0; i < 3; ++i) {
                addEdge(t[i], t[(i + 1) % 3]);
            }
        }
    }
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    const auto& x = particles.positions;
    for (auto [a, b] : edges) {
        set.distance.add(a, b, (x[a] - x[b]).norm(), compliance, pbdStiffness);
    }
    return edges.size();
}

HingeRest hingeRest(BendingModel model, const std::array<Vec3, 4>& x) {
    HingeRest r;
    math::V3<Real> q[4];
    for (int k = 0; k < 4; ++k) {
        q[k] = v3(x[k]);
    }
    math::V3<Real> g[4];
    switch (model) {
    case BendingModel::Bridson:
        r.rest = math::evaluateDihedralBridson<Real>(q, 0.0, g);
        break;
    case BendingModel::PbdAppendix:
        r.rest = math::evaluateDihedralPbd<Real>(q, 0.0, g);
        break;
    case BendingModel::Isometric: {
        // Wing tips a, b; shared edge u -> v. The cotangents of the angles at u and v in each
        // triangle: K_a = (cot_u,a + cot_v,a) / |e|, K_u = -(cot_v,a + cot_v,b) / |e|, ...
        // (Bergou et al. 2006, with the edge's length divided out). A degenerate triangle (no
        // angle to speak of) leaves the weights 0: the hinge does nothing.
        const Vec3& a = x[0];
        const Vec3& b = x[1];
        const Vec3& u = x[2];
        const Vec3& v = x[3];
        const Vec3 e = v - u;
        const Real length = e.norm();
        bool ok = length > 0;
        auto cot = [&](const Vec3& s, const Vec3& t) {
            const Real sine = s.cross(t).norm();
            ok = ok && sine > 1e-12 * s.norm() * t.norm() && std::isfinite(sine);
            return ok ? s.dot(t) / sine : 0.0;
        };
        const Real cua = cot(e, a - u), cva = cot(-e, a - v);
        const Real cub = cot(e, b - u), cvb = cot(-e, b - v);
        if (!ok) {
            return r;
        }
        r.weight = {(cua + cva) / length, (cub + cvb) / length, -(cva + cvb) / length};
        const math::V3<Real> curvature =
            math::isometricCurvature<Real>(q, r.weight[0], r.weight[1], r.weight[2]);
        r.rest = std::sqrt(math::norm2(curvature));
        // Flat to within a millionth of a radian: exactly flat, so the solver's quick path (no
        // square root or division) takes it.
        if (r.rest < kFlatHinge) {
            r.rest = 0;
        }
        break;
    }
    }
    return r;
}

Result<BendingModel> bendingModelNamed(std::string_view name) {
    if (const auto model = bendingModelFromString(name)) {
        return *model;
    }
    std::string message = "'"; // appended, not "'" + string: GCC 12 warns (-Wrestrict)
    message += name;
    message += "' is not a bending model (bridson, pbd-appendix or isometric)";
    return Error{std::move(message)};
}

void setBendingModel(ConstraintSet& set, const std::vector<Vec3>& rest, BendingModel model) {
    BendingConstraints& b = set.bending;
    const bool wasAppendix = b.model == BendingModel::PbdAppendix;
    const bool toAppendix = model == BendingModel::PbdAppendix;
    b.model = model;
    for (auto& w : b.weight) {
        w.clear();
    }
    for (auto& l : b.lambdaYZ) {
        l.clear();
    }
    for (std::size_t e = 0; e < b.size(); ++e) {
        auto& p = b.particles[e];
        if (wasAppendix != toAppendix) {
            p = {p[2], p[3], p[0], p[1]}; // (wing tips, edge) <-> (edge, wing tips)
        }
        const HingeRest r = hingeRest(model, {rest[p[0]], rest[p[1]], rest[p[2]], rest[p[3]]});
        b.restAngle[e] = r.rest;
        b.lambda[0][e] = 0;
        if (model == BendingModel::Isometric) {
            for (int k = 0; k < 3; ++k) {
                b.weight[k].push_back(r.weight[k]);
            }
            b.lambdaYZ[0].push_back(0);
            b.lambdaYZ[1].push_back(0);
        }
    }
}

std::size_t addDihedralBending(ConstraintSet& set, const Particles& particles, const Body& body,
                               Real compliance, Real pbdStiffness) {
    // Half-edges (min, max, triangle, corner of the edge start); an interior edge of a
    // consistently wound surface has exactly two, running in opposite directions.
    std::vector<std::tuple<Index, Index, Index, int>> half;
    for (Index t = 0; t < body.triangles.size(); ++t) {
        const Triangle& tri = body.triangles[t];
        for (int c = 0; c < 3; ++c) {
            const Index a = tri[c];
            const Index b = tri[(c + 1) % 3];
            half.emplace_back(std::min(a, b), std::max(a, b), t, c);
        }
    }
    std::sort(half.begin(), half.end());
    const auto& x = particles.positions;
    std::size_t added = 0;
    for (std::size_t i = 0; i < half.size();) {
        std::size_t j = i;
        while (j < half.size() && std::get<0>(half[j]) == std::get<0>(half[i]) &&
               std::get<1>(half[j]) == std::get<1>(half[i])) {
            ++j;
        }
        if (j - i == 2) {
            const auto [lo, hi, ta, ca] = half[i];
            const auto [lo2, hi2, tb, cb] = half[i + 1];
            const Triangle& A = body.triangles[ta];
            const Triangle& B = body.triangles[tb];
            const Index u = A[ca];
            const Index v = A[(ca + 1) % 3];
            const Index wingA = A[(ca + 2) % 3];
            const Index wingB = B[(cb + 2) % 3];
            if (B[cb] == v && wingA != wingB) { // opposite direction in B: consistent winding
                std::array<Index, 4> p{wingA, wingB, u, v};
                if (set.bending.model == BendingModel::PbdAppendix) {
                    p = {u, v, wingA, wingB};
                }
                const HingeRest r =
                    hingeRest(set.bending.model, {x[p[0]], x[p[1]], x[p[2]], x[p[3]]});
                if (set.bending.model == BendingModel::Isometric) {
                    set.bending.addIsometric(p, r.weight, r.rest, compliance, pbdStiffness);
                } else {
                    set.bending.add(p, r.rest, compliance, pbdStiffness);
                }
                ++added;
            }
        }
        i = j;
    }
    return added;
}

TriangleMaterialFrame triangleMaterialFrame(const Vec3& x0, const Vec3& x1, const Vec3& x2,
                                            const Vec2* uv) {
    TriangleMaterialFrame frame;
    const Vec3 e1 = x1 - x0;
    const Vec3 e2 = x2 - x0;
    const Vec3 normal = e1.cross(e2);
    const Real area2 = normal.norm();
    if (!(area2 > 1e-14 * std::max(e1.squaredNorm(), e2.squaredNorm())) || !(area2 > 0)) {
        return frame;
    }
    const Vec3 n = normal / area2;
    frame.restArea = 0.5 * area2;
    Vec3 axisU = e1.normalized();
    if (uv != nullptr) {
        Eigen::Matrix2d duv;
        duv << uv[1].x() - uv[0].x(), uv[2].x() - uv[0].x(), uv[1].y() - uv[0].y(),
            uv[2].y() - uv[0].y();
        const Real det = duv.determinant();
        const Real scale = duv.cwiseAbs().maxCoeff();
        if (std::abs(det) > 1e-12 * scale * scale && scale > 0) {
            // (t_u, t_v) = (x1 - x0, x2 - x0) (duv)^-1, SBD eq. 37; only t_u's direction is used.
            Eigen::Matrix<Real, 3, 2> e;
            e << e1, e2;
            const Eigen::Matrix<Real, 3, 2> t = e * duv.inverse();
            const Vec3 tu = t.col(0) - n * n.dot(t.col(0)); // into the triangle's plane
            if (tu.norm() > 0) {
                axisU = tu.normalized();
                frame.fromUVs = true;
            }
        }
    }
    const Vec3 axisV = n.cross(axisU);
    Eigen::Matrix2d Q; // SBD eq. 38: q_k = [n1, n2]^T (x_k - x0)
    Q << axisU.dot(e1), axisU.dot(e2), axisV.dot(e1), axisV.dot(e2);
    const Eigen::Matrix2d qi = Q.inverse();
    frame.qInverse = {qi(0, 0), qi(1, 0), qi(0, 1), qi(1, 1)};
    frame.valid = true;
    return frame;
}

BuildReport addStrainTriangles(ConstraintSet& set, const Particles& particles, const Body& body,
                               const StrainTriangleMaterial& m) {
    BuildReport report;
    auto& b = set.strainTriangles;
    b.normalisedShear = m.normalisedShear;
    const auto& x = particles.positions;
    std::size_t fallback = 0;
    std::size_t firstFallback = 0;
    for (std::size_t t = 0; t < body.triangles.size(); ++t) {
        const Triangle& tri = body.triangles[t];
        const Vec2* uv = body.hasUVs() ? body.triangleUVs[t].data() : nullptr;
        const TriangleMaterialFrame f = triangleMaterialFrame(x[tri[0]], x[tri[1]], x[tri[2]], uv);
        if (!f.valid) {
            report.warnings.push_back(elementName(body, "triangle", t) +
                                      " has zero area and gets no strain constraint");
            continue;
        }
        if (!f.fromUVs && fallback++ == 0) {
            firstFallback = t;
        }
        const std::size_t e = b.addElement(tri);
        for (int k = 0; k < 4; ++k) {
            b.qInverse[k].push_back(f.qInverse[k]);
        }
        const Real moduli[3] = {m.stretchU, m.stretchV, m.shear};
        b.measure[e] = f.restArea;
        const Real rest[3] = {1, 1, 0};
        for (int k = 0; k < 3; ++k) {
            b.rest[k].push_back(rest[k]);
            b.setMaterial(e, k, complianceOf(moduli[k], f.restArea), m.pbdStiffness[k]);
        }
        ++report.added;
    }
    set.colourCount = 0; // to be coloured again
    if (fallback > 0) {
        report.warnings.push_back(
            elementName(body, "triangle", firstFallback) + (fallback > 1 ? " and " : "") +
            (fallback > 1 ? std::to_string(fallback - 1) + " more" : std::string()) +
            (body.hasUVs() ? " have degenerate UVs" : " have no UVs") +
            ": their material frame follows the first edge");
    }
    return report;
}

namespace {

// Q = [q1 - q0, q2 - q0, q3 - q0] (SBD eq. 6); false when the tet is flat.
bool restShape(const std::vector<Vec3>& x, const Tetrahedron& t, Mat3& Q) {
    Q.col(0) = x[t[1]] - x[t[0]];
    Q.col(1) = x[t[2]] - x[t[0]];
    Q.col(2) = x[t[3]] - x[t[0]];
    const Real scale = std::max({Q.col(0).norm(), Q.col(1).norm(), Q.col(2).norm()});
    return std::abs(Q.determinant()) > 1e-12 * scale * scale * scale && scale > 0;
}

} // namespace

BuildReport addStrainTets(ConstraintSet& set, const Particles& particles, const Body& body,
                          const StrainTetMaterial& m) {
    BuildReport report;
    auto& b = set.strainTets;
    b.normalisedShear = m.normalisedShear;
    for (std::size_t i = 0; i < body.tets.size(); ++i) {
        const Tetrahedron& t = body.tets[i];
        Mat3 Q;
        if (!restShape(particles.positions, t, Q)) {
            report.warnings.push_back(elementName(body, "tet", i) +
                                      " is flat and gets no strain constraint");
            continue;
        }
        const Real volume = std::abs(Q.determinant()) / 6.0;
        if (!body.tetFrames.empty()) {
            Q = body.tetFrames[i].transpose() * Q; // rest edges in the tet's material axes
        }
        const Mat3 qi = Q.inverse();
        const std::size_t e = b.addElement(t);
        for (int k = 0; k < 9; ++k) {
            b.qInverse[k].push_back(qi(k % 3, k / 3));
        }
        for (int k = 0; k < 6; ++k) {
            const Real modulus = k < 3 ? m.stretch[k] : m.shear[k - 3];
            b.measure[e] = volume;
            b.rest[k].push_back(k < 3 ? 1.0 : 0.0);
            b.setMaterial(e, k, complianceOf(modulus, volume), m.pbdStiffness[k]);
        }
        ++report.added;
    }
    set.colourCount = 0; // to be coloured again
    return report;
}

BuildReport addTetVolumes(ConstraintSet& set, const Particles& particles, const Body& body,
                          Real bulkModulus, Real pbdStiffness, Real restScale) {
    BuildReport report;
    auto& b = set.volume;
    for (std::size_t i = 0; i < body.tets.size(); ++i) {
        const Tetrahedron& t = body.tets[i];
        Mat3 Q;
        if (!restShape(particles.positions, t, Q)) {
            report.warnings.push_back(elementName(body, "tet", i) +
                                      " is flat and gets no volume constraint");
            continue;
        }
        const Real det = Q.determinant();
        const std::size_t e = b.addElement(t);
        b.restValue.push_back(det * restScale);
        // C = 6 (V - V0): energy k/2 V0 ((V - V0)/V0)^2 = C^2 / (2 * 36 V0 / k).
        b.measure[e] = 6.0 / (36.0 * std::abs(det));
        b.setMaterial(e, 0, complianceOf(bulkModulus, b.measure[e]), pbdStiffness);
        ++report.added;
    }
    set.colourCount = 0; // to be coloured again
    return report;
}

BuildReport addTriangleAreas(ConstraintSet& set, const Particles& particles, const Body& body,
                             Real modulus, Real pbdStiffness) {
    BuildReport report;
    auto& b = set.area;
    const auto& x = particles.positions;
    for (std::size_t i = 0; i < body.triangles.size(); ++i) {
        const Triangle& t = body.triangles[i];
        const Real n2 = (x[t[1]] - x[t[0]]).cross(x[t[2]] - x[t[0]]).squaredNorm();
        if (!(n2 > 0)) {
            report.warnings.push_back(elementName(body, "triangle", i) +
                                      " has zero area and gets no area constraint");
            continue;
        }
        const Real area = 0.5 * std::sqrt(n2);
        const std::size_t e = b.addElement(t);
        b.restValue.push_back(n2);
        // C = 4 (A^2 - A0^2) ~ 8 A0 (A - A0), so the energy k/2 A0 ((A - A0)/A0)^2 is
        // C^2 / (2 alpha) with alpha = 64 A0^3 / k.
        b.measure[e] = 1.0 / (64.0 * area * area * area);
        b.setMaterial(e, 0, complianceOf(modulus, b.measure[e]), pbdStiffness);
        ++report.added;
    }
    set.colourCount = 0; // to be coloured again
    return report;
}

BuildReport addPlanarAreas(ConstraintSet& set, const Particles& particles, const Body& body,
                           Real modulus, Real pbdStiffness) {
    BuildReport report;
    auto& b = set.planarArea;
    const auto& x = particles.positions;
    for (std::size_t i = 0; i < body.triangles.size(); ++i) {
        const Triangle& t = body.triangles[i];
        const Vec3 a = x[t[1]] - x[t[0]];
        const Vec3 c = x[t[2]] - x[t[0]];
        const Real twice = a.x() * c.y() - a.y() * c.x();
        if (!(twice > 0)) {
            report.warnings.push_back(elementName(body, "triangle", i) +
                                      " is not counter-clockwise in the xy plane and gets no "
                                      "area constraint");
            continue;
        }
        const std::size_t e = b.addElement(t);
        b.restValue.push_back(twice);
        // C = 2 (A - A0), so the energy k/2 A0 ((A - A0)/A0)^2 is C^2 / (2 alpha) with
        // alpha = 4 A0 / k.
        b.measure[e] = 1.0 / (2.0 * twice);
        b.setMaterial(e, 0, complianceOf(modulus, b.measure[e]), pbdStiffness);
        ++report.added;
    }
    set.colourCount = 0; // to be coloured again
    return report;
}

Result<std::size_t> addPressure(ConstraintSet& set, const Particles& particles, const Body& body,
                                Real pressure, Real compliance, Real pbdStiffness) {
    if (body.triangles.empty()) {
        return Error{"body '" + body.name + "' has no surface triangles for a pressure constraint"};
    }
    // Closed and consistently wound: each directed edge once, and its reverse once.
    std::vector<std::pair<Index, Index>> directed;
    for (const Triangle& t : body.triangles) {
        for (int i = 0; i < 3; ++i) {
            directed.emplace_back(t[i], t[(i + 1) % 3]);
        }
    }
    std::sort(directed.begin(), directed.end());
    for (std::size_t i = 0; i < directed.size(); ++i) {
        const auto [a, b] = directed[i];
        if (i > 0 && directed[i - 1] == directed[i]) {
            return Error{"body '" + body.name + "' is not a closed surface: edge " +
                         std::to_string(a) + "-" + std::to_string(b) +
                         " is used twice in the same direction"};
        }
        if (!std::binary_search(directed.begin(), directed.end(), std::make_pair(b, a))) {
            return Error{"body '" + body.name + "' is not a closed surface: edge " +
                         std::to_string(a) + "-" + std::to_string(b) + " is open"};
        }
    }
    PressureConstraint c;
    c.body = body.name;
    std::vector<Index> local(particles.size(), Index(-1));
    for (const Triangle& t : body.triangles) {
        Triangle lt;
        for (int k = 0; k < 3; ++k) {
            if (local[t[k]] == Index(-1)) {
                local[t[k]] = static_cast<Index>(c.particles.size());
                c.particles.push_back(t[k]);
            }
            lt[k] = local[t[k]];
        }
        c.localTriangles.push_back(lt);
        const auto& x = particles.positions;
        c.restVolume6 += x[t[0]].cross(x[t[1]]).dot(x[t[2]]);
    }
    c.pressure = pressure;
    c.compliance = compliance;
    c.stiffness = pbdStiffness;
    set.pressure.push_back(std::move(c));
    return set.pressure.size() - 1;
}

} // namespace pbd
