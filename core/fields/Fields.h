#pragma once
// Per-element fields for visual debugging, computed from the current positions against the rest
// state captured once: Green strain along the material axes, principal stretches and the volume
// (or area) ratio det F; and per-constraint residual C and lambda, in batch order.

#include "core/constraints/Constraints.h"
#include "core/scene/Scene.h"

#include <array>
#include <vector>

namespace pbd {

// Q^-1 of every tet and triangle of the scene (bodies in order), from the positions at capture
// time. Triangles use their UV material frame (SBD §3.3) when the body has UVs.
struct RestFrames {
    std::vector<Mat3> tetQInverse;
    std::vector<Eigen::Matrix2d> triangleQInverse;
    std::vector<bool> triangleValid; // false for zero-area triangles (their fields are 0)
};
RestFrames captureRestFrames(const Scene& scene);

struct ElementFields {
    // Tets, in scene order: E = (F^T F - I) / 2 as xx, yy, zz, xy, xz, yz.
    std::vector<std::array<Real, 6>> tetGreenStrain;
    std::vector<Vec3> tetPrincipalStretch; // singular values of F, largest first
    std::vector<Real> tetVolumeRatio;      // det F; negative for an inverted tet
    // Triangles, in scene order: E as uu, vv, uv; stretches; area ratio |F1 x F2|.
    std::vector<std::array<Real, 3>> triangleGreenStrain;
    std::vector<Vec2> trianglePrincipalStretch;
    std::vector<Real> triangleAreaRatio;

    std::size_t invertedTets() const;
};
ElementFields computeElementFields(const Scene& scene, const RestFrames& rest);

// Residual C and the lambda of the last substep for each scalar constraint of a batch,
// component-major: value[k * elements + e].
struct ConstraintResiduals {
    ConstraintType type;
    int components = 1;
    std::vector<Real> residual;
    std::vector<Real> lambda;

    Real maxAbsResidual() const;
};
std::vector<ConstraintResiduals> computeConstraintResiduals(const Scene& scene);

// Constraints as line segments for drawing, with the residual and force of each: distance
// constraints and bending hinges between their particles, attachments from the particle to its
// target, contacts from the particle to the contact point.
struct ConstraintLines {
    enum Kind : unsigned char { Distance, Bending, Attachment, Contact };
    std::vector<Vec3> a, b;
    std::vector<unsigned char> kind;
    std::vector<float> residual; // |C| (m, rad, m)
    std::vector<float> lambda;   // |lambda| of the last substep (force times h^2)
    std::size_t size() const { return kind.size(); }
};

// The scene's distance constraints, bending hinges and attachments (at `time`) and the given
// contacts as lines, with |C| and |lambda| of each.
ConstraintLines constraintLines(const Scene& scene, Real time,
                                const std::vector<Contact>& contacts);

} // namespace pbd
