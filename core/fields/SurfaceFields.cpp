#include "core/fields/SurfaceFields.h"

#include "core/constraints/ConstraintBuilders.h"
#include "core/scene/Topology.h"

#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <map>

namespace pbd {

std::string_view toString(SurfaceField field) {
    switch (field) {
    case SurfaceField::None:
        return "none";
    case SurfaceField::StrainU:
        return "strain_u";
    case SurfaceField::StrainV:
        return "strain_v";
    case SurfaceField::StrainW:
        return "strain_w";
    case SurfaceField::Shear:
        return "shear";
    case SurfaceField::MaxStretch:
        return "max_stretch";
    case SurfaceField::MinStretch:
        return "min_stretch";
    case SurfaceField::VolumeRatio:
        return "volume_ratio";
    case SurfaceField::AirVolume:
        return "air_volume";
    case SurfaceField::AirQuality:
        return "air_quality";
    }
    return "none";
}

std::string_view labelOf(SurfaceField field) {
    switch (field) {
    case SurfaceField::None:
        return "None";
    case SurfaceField::StrainU:
        return "Green strain u (axis 1)";
    case SurfaceField::StrainV:
        return "Green strain v (axis 2)";
    case SurfaceField::StrainW:
        return "Green strain w (axis 3)";
    case SurfaceField::Shear:
        return "Shear strain (1-2)";
    case SurfaceField::MaxStretch:
        return "Largest principal stretch";
    case SurfaceField::MinStretch:
        return "Smallest principal stretch";
    case SurfaceField::VolumeRatio:
        return "Volume ratio det F";
    case SurfaceField::AirVolume:
        return "Air volume ratio V/V0";
    case SurfaceField::AirQuality:
        return "Air tet quality";
    }
    return "None";
}

bool isSigned(SurfaceField field) {
    return field == SurfaceField::StrainU || field == SurfaceField::StrainV ||
           field == SurfaceField::StrainW || field == SurfaceField::Shear ||
           isAirField(field); // centred on zero: inverted air is the other colour
}

std::vector<Real> SurfaceFieldEvaluator::evaluateAir(const Scene& scene, SurfaceField field) const {
    const auto& x = scene.particles.positions;
    const auto& x0 = restPositions_;
    std::vector<Real> values(scene.air.size(), 0.0);
    for (std::size_t k = 0; k < scene.air.triangles.size() && scene.air.tets.empty(); ++k) {
        // 2D: area ratio, or the triangle's signed quality.
        const Triangle& t = scene.air.triangles[k];
        const auto twice = [&](const std::vector<Vec3>& p) {
            const Vec3 a = p[t[1]] - p[t[0]], b = p[t[2]] - p[t[0]];
            return a.x() * b.y() - a.y() * b.x();
        };
        if (field == SurfaceField::AirQuality) {
            const Real sum = (x[t[1]] - x[t[0]]).squaredNorm() + (x[t[2]] - x[t[1]]).squaredNorm() +
                             (x[t[0]] - x[t[2]]).squaredNorm();
            values[k] = sum > 0 ? 2.0 * std::sqrt(3.0) * twice(x) / sum : 0.0;
        } else if (std::max({t[0], t[1], t[2]}) < x0.size() && twice(x0) > 0) {
            values[k] = twice(x) / twice(x0);
        }
    }
    for (std::size_t t = 0; t < scene.air.tets.size(); ++t) {
        const Tetrahedron& tet = scene.air.tets[t];
        if (field == SurfaceField::AirQuality) {
            values[t] = tetQuality(x[tet[0]], x[tet[1]], x[tet[2]], x[tet[3]]);
            continue;
        }
        if (std::max({tet[0], tet[1], tet[2], tet[3]}) >= x0.size()) {
            continue;
        }
        const Real rest = signedVolume(x0[tet[0]], x0[tet[1]], x0[tet[2]], x0[tet[3]]);
        if (rest > 0) {
            values[t] = signedVolume(x[tet[0]], x[tet[1]], x[tet[2]], x[tet[3]]) / rest;
        }
    }
    return values;
}

SurfaceFieldEvaluator::SurfaceFieldEvaluator(const Scene& rest) {
    const auto& x = rest.particles.positions;
    if (!rest.air.empty()) {
        restPositions_ = x;
    }
    for (const Body& body : rest.bodies) {
        BodyRest r;
        r.tets = !body.tets.empty();
        if (r.tets) {
            // Each boundary face belongs to exactly one tet: find it by its vertex set.
            std::map<std::array<Index, 3>, std::size_t> faceToTet;
            for (std::size_t t = 0; t < body.tets.size(); ++t) {
                const Tetrahedron& tet = body.tets[t];
                for (int skip = 0; skip < 4; ++skip) {
                    std::array<Index, 3> f{};
                    int k = 0;
                    for (int v = 0; v < 4; ++v) {
                        if (v != skip) {
                            f[k++] = tet[v];
                        }
                    }
                    std::sort(f.begin(), f.end());
                    faceToTet[f] = t;
                }
            }
            for (const Triangle& tri : body.triangles) {
                std::array<Index, 3> f = tri;
                std::sort(f.begin(), f.end());
                const auto it = faceToTet.find(f);
                Mat3 qi = Mat3::Zero();
                Tetrahedron tet{};
                bool ok = false;
                if (it != faceToTet.end()) {
                    tet = body.tets[it->second];
                    Mat3 Q;
                    Q << x[tet[1]] - x[tet[0]], x[tet[2]] - x[tet[0]], x[tet[3]] - x[tet[0]];
                    if (!body.tetFrames.empty()) {
                        Q = body.tetFrames[it->second].transpose() * Q;
                    }
                    Eigen::FullPivLU<Mat3> lu(Q);
                    ok = lu.isInvertible();
                    if (ok) {
                        qi = lu.inverse();
                    }
                }
                r.tetQInverse.push_back(qi);
                r.tet.push_back(tet);
                r.valid.push_back(ok);
            }
        } else {
            for (std::size_t t = 0; t < body.triangles.size(); ++t) {
                const Triangle& tri = body.triangles[t];
                const Vec2* uv = body.hasUVs() ? body.triangleUVs[t].data() : nullptr;
                const TriangleMaterialFrame f =
                    triangleMaterialFrame(x[tri[0]], x[tri[1]], x[tri[2]], uv);
                Eigen::Matrix2d qi;
                qi << f.qInverse[0], f.qInverse[2], f.qInverse[1], f.qInverse[3];
                r.triQInverse.push_back(qi);
                r.valid.push_back(f.valid);
            }
        }
        bodies_.push_back(std::move(r));
    }
}

std::vector<Real> SurfaceFieldEvaluator::evaluate(const Scene& scene, std::size_t b,
                                                  SurfaceField field) const {
    const Body& body = scene.bodies.at(b);
    const BodyRest& r = bodies_.at(b);
    const auto& x = scene.particles.positions;
    if (isAirField(field)) {
        return {};
    }
    std::vector<Real> values(body.triangles.size(), 0.0);
    if (field == SurfaceField::None) {
        return values;
    }
    for (std::size_t t = 0; t < body.triangles.size() && t < r.valid.size(); ++t) {
        if (!r.valid[t]) {
            continue;
        }
        Mat3 C = Mat3::Identity(); // F^T F (2x2 in the top left for triangles)
        Real volume = 0;
        int dims = 3;
        if (r.tets) {
            const Tetrahedron& tet = r.tet[t];
            Mat3 P;
            P << x[tet[1]] - x[tet[0]], x[tet[2]] - x[tet[0]], x[tet[3]] - x[tet[0]];
            const Mat3 F = P * r.tetQInverse[t];
            C = F.transpose() * F;
            volume = F.determinant();
        } else {
            const Triangle& tri = body.triangles[t];
            Eigen::Matrix<Real, 3, 2> P;
            P << x[tri[1]] - x[tri[0]], x[tri[2]] - x[tri[0]];
            const Eigen::Matrix<Real, 3, 2> F = P * r.triQInverse[t];
            C.topLeftCorner<2, 2>() = F.transpose() * F;
            volume = F.col(0).cross(F.col(1)).norm();
            dims = 2;
        }
        switch (field) {
        case SurfaceField::StrainU:
            values[t] = 0.5 * (C(0, 0) - 1);
            break;
        case SurfaceField::StrainV:
            values[t] = 0.5 * (C(1, 1) - 1);
            break;
        case SurfaceField::StrainW:
            values[t] = dims == 3 ? 0.5 * (C(2, 2) - 1) : 0.0;
            break;
        case SurfaceField::Shear:
            values[t] = 0.5 * C(0, 1);
            break;
        case SurfaceField::MaxStretch:
        case SurfaceField::MinStretch: {
            Eigen::Vector3d ev = Eigen::Vector3d::Ones();
            if (dims == 3) {
                ev = Eigen::SelfAdjointEigenSolver<Mat3>(C, Eigen::EigenvaluesOnly).eigenvalues();
            } else {
                const Eigen::Matrix2d C2 = C.topLeftCorner<2, 2>();
                const Eigen::Vector2d e2 =
                    Eigen::SelfAdjointEigenSolver<Eigen::Matrix2d>(C2, Eigen::EigenvaluesOnly)
                        .eigenvalues();
                ev = Eigen::Vector3d(e2(0), e2(1), e2(1));
            }
            const Real lo = std::sqrt(std::max(0.0, ev.minCoeff()));
            const Real hi = std::sqrt(std::max(0.0, ev.maxCoeff()));
            values[t] = field == SurfaceField::MaxStretch ? hi : lo;
            break;
        }
        case SurfaceField::VolumeRatio:
            values[t] = volume;
            break;
        case SurfaceField::None:
        case SurfaceField::AirVolume: // on the air mesh (evaluateAir)
        case SurfaceField::AirQuality:
            break;
        }
    }
    return values;
}

} // namespace pbd
