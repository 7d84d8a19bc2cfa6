#pragma once
// Fields on the drawn surfaces: for every surface triangle of a body, a value of its element
// (the triangle itself for cloth, the tet behind a boundary face for tet bodies) against the
// rest state captured at construction. Used by the views to colour meshes.

#include "core/scene/Scene.h"

#include <string_view>
#include <vector>

namespace pbd {

enum class SurfaceField {
    None,
    StrainU,     // Green strain along material axis 1 (u for cloth, x for tets)
    StrainV,     // ... axis 2
    StrainW,     // ... axis 3 (tets; 0 on cloth)
    Shear,       // Green strain E_12
    MaxStretch,  // largest principal stretch
    MinStretch,  // smallest principal stretch
    VolumeRatio, // det F for tets, area ratio for triangles; negative: inverted
    AirVolume,   // V / V0 of each air tet (on the air mesh, not the bodies); negative: inverted
    AirQuality,  // quality 12/sqrt(2) V / l_rms^3 of each air tet (what the optimisation raises)
};
inline constexpr SurfaceField kSurfaceFields[] = {
    SurfaceField::None,       SurfaceField::StrainU,     SurfaceField::StrainV,
    SurfaceField::StrainW,    SurfaceField::Shear,       SurfaceField::MaxStretch,
    SurfaceField::MinStretch, SurfaceField::VolumeRatio, SurfaceField::AirVolume,
    SurfaceField::AirQuality};
// The fields that live on the air mesh rather than on the bodies' surfaces.
inline bool isAirField(SurfaceField field) {
    return field == SurfaceField::AirVolume || field == SurfaceField::AirQuality;
}

std::string_view toString(SurfaceField field); // "strain_u", ... (command-line names)
std::string_view labelOf(SurfaceField field);  // "Green strain u", ... (with units)
// Strains and shear are shown on a diverging map centred on zero, the rest on a sequential one.
bool isSigned(SurfaceField field);

class SurfaceFieldEvaluator {
public:
    // Captures the rest shape of every surface element of `rest`.
    explicit SurfaceFieldEvaluator(const Scene& rest);
    // One value per triangle of scene.bodies[body] at the scene's current positions.
    // (Empty for the air fields, which live on the air mesh.)
    std::vector<Real> evaluate(const Scene& scene, std::size_t body, SurfaceField field) const;
    // AirVolume or AirQuality of every air tet of the scene. V0 is the tet's volume at the
    // rest positions, so the ratio stays defined when the optimisation re-meshes the air (a
    // new tet that would be flat or inverted at rest gets 0).
    std::vector<Real> evaluateAir(const Scene& scene,
                                  SurfaceField field = SurfaceField::AirVolume) const;

private:
    struct BodyRest {
        bool tets = false;
        std::vector<Mat3> tetQInverse;            // per surface triangle: its tet's Q^-1
        std::vector<Tetrahedron> tet;             // ... and the tet
        std::vector<Eigen::Matrix2d> triQInverse; // cloth: per triangle
        std::vector<bool> valid;
    };
    std::vector<BodyRest> bodies_;
    std::vector<Vec3> restPositions_;
};

} // namespace pbd
