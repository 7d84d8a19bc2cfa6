#pragma once
// The VTK picture of a core::Scene: one surface actor per body, kept in step with the scene's
// particle positions. GUI thread only.

#include "core/fields/Fields.h"
#include "core/scene/Scene.h"
#include "meshing/SurfaceProblems.h"

#include <QColor>
#include <QStringList>

#include <vtkActor.h>
#include <vtkDataArray.h>
#include <vtkLookupTable.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkScalarBarActor.h>
#include <vtkSmartPointer.h>
#include <vtkUnstructuredGrid.h>

#include <vector>

class vtkRenderer;

namespace pbd {

// A printf format for a scalar bar's `labels` evenly spaced labels over [lo, hi] that tells
// them apart: as many significant digits as the spacing needs against the largest magnitude
// (3 at least, 12 at most), so a field from 0.9999 to 1.0001 does not read "1.00" five times.
std::string scalarBarLabelFormat(double lo, double hi, int labels);

class SceneActors {
public:
    explicit SceneActors(vtkRenderer* renderer);
    ~SceneActors();
    SceneActors(const SceneActors&) = delete;
    SceneActors& operator=(const SceneActors&) = delete;

    // Replaces all actors with those of `scene`.
    void setScene(const Scene& scene);
    // Moves the existing surfaces to new particle positions (same topology).
    void updatePositions(const Scene& scene);
    void clear();

    void setWireframe(bool wireframe);
    bool wireframe() const { return wireframe_; }
    void setBodyVisible(std::size_t body, bool visible);
    bool bodyVisible(std::size_t body) const;

    std::size_t bodyCount() const { return bodies_.size(); }
    // The render meshes cages carry (Scene::embedded), drawn where the cage carries them and
    // moved with it every frame. The bodies that carry them start hidden (the cage on a toggle:
    // setBodyVisible).
    std::size_t embeddedCount() const { return embedded_.size(); }
    void setEmbeddedVisible(std::size_t mesh, bool visible);
    bool embeddedVisible(std::size_t mesh) const;
    vtkActor* embeddedActor(std::size_t mesh) const { return embedded_.at(mesh).actor; }
    vtkPolyData* embeddedSurface(std::size_t mesh) const { return embedded_.at(mesh).surface; }
    // The scene's colliders, drawn in grey (planes as a finite square around the bodies).
    std::size_t colliderCount() const { return colliders_.size(); }
    vtkActor* colliderActor(std::size_t i) const { return colliders_.at(i); }
    // Draws the scene's colliders again (after an edit), collider `selected` highlighted.
    void setColliders(const Scene& scene, int selected = -1);
    int selectedCollider() const { return selectedCollider_; }
    vtkActor* actor(std::size_t body) const { return bodies_.at(body).actor; }
    vtkPolyData* surface(std::size_t body) const { return bodies_.at(body).surface; }

    // Field colouring: per-triangle values of body `b` drawn through one colour map shared by all
    // bodies, with a scalar bar titled `title`. A signed field uses a diverging map centred on
    // zero (blue, white, red), the others a sequential one (purple to yellow).
    // `preset` picks another map: the names of colourMapPresets() ("auto" keeps the rule above).
    void setFieldMap(const QString& title, double lo, double hi, bool diverging,
                     const QString& preset = QStringLiteral("auto"));
    static QStringList colourMapPresets();
    void setBodyField(std::size_t body, const std::vector<double>& values);
    // Back to plain body colours, no scalar bar.
    void clearFields();
    bool fieldShown() const { return fieldShown_; }
    vtkScalarBarActor* scalarBar() const { return scalarBar_; }
    vtkLookupTable* lookupTable() const { return lookupTable_; }

    // The body selected in the Scene dock, drawn with magenta edges (-1: none).
    void setHighlightedBody(long body);
    long highlightedBody() const { return highlighted_; }

    // The body an actor draws, or -1 for any other actor (colliders, markers, air).
    long bodyOf(const vtkActor* actor) const;

    // Pinned particles, drawn as red dots that follow the particles' positions.
    void setPinned(const Scene& scene, const std::vector<Index>& particles);
    std::size_t pinnedCount() const { return pinned_.size(); }
    vtkActor* pinActor() const { return pinActor_; }
    // Selected particles (the vertex selection attachments are made from), drawn as yellow
    // dots that follow the particles.
    void setSelected(const Scene& scene, const std::vector<Index>& particles);
    std::size_t selectedCount() const { return selected_.size(); }
    vtkActor* selectionActor() const { return selectionActor_; }

    // The air mesh (Air Meshes §4): hidden, wireframe edges, or translucent faces. Air tets (or
    // 2D triangles) inverted beyond rounding are drawn red in both modes.
    enum class AirMode { Hidden, Wireframe, Transparent };
    void setAirMode(AirMode mode);
    AirMode airMode() const { return airMode_; }
    vtkActor* airActor() const { return airActor_; }
    std::size_t invertedAirTets() const { return invertedAir_; }
    // Colours the air tets by `values` through the field colour map (setFieldMap); empty goes
    // back to the healthy / inverted colours.
    void setAirField(const std::vector<double>& values);
    // The air changed (the optimisation re-meshed it): draws the scene's air tets or (2D)
    // triangles.
    void setAirTets(const Scene& scene);

    // A clip plane through the tet bodies: tets whose centroid lies on the positive side of
    // the plane (normal n, through `origin`) are removed and the faces of the rest drawn, so the
    // inside shows; faces of inverted tets are red. Other bodies are not clipped.
    void setClip(const Scene& scene, bool enabled, const Vec3& normal, const Vec3& origin);
    bool clipEnabled() const { return clip_; }
    // The faces drawn for body b's clipped tets (null when the body is not clipped).
    vtkPolyData* clipSurface(std::size_t body) const { return bodies_.at(body).clipSurface; }
    std::size_t invertedClippedTets() const { return invertedClipped_; }

    // Material-frame glyphs: at each UV-mapped triangle's centre, its material u axis (red) and
    // v axis (green) in the current shape (SBD eq. 37: the columns of F), so warp and weft can
    // be seen, and how they shear.
    void setFrameGlyphs(const Scene& scene, bool shown);
    bool frameGlyphsShown() const { return frameGlyphs_; }
    vtkPolyData* frameGlyphData() const { return frameLines_; }

    // Characters' skeletons: a line from each node to its parent, posed at `time`, over a
    // see-through skin (as an X-ray view), so the bones can be followed inside it.
    void setSkeletons(const Scene& scene, Real time, bool shown);
    void updateSkeletons(const Scene& scene, Real time);
    bool skeletonsShown() const { return skeletons_; }
    vtkPolyData* skeletonData() const { return skeletonLines_; }

    // Constraints drawn as lines (kinds indexed by ConstraintLines::Kind), coloured by |C| or by
    // |lambda| through their own map and scalar bar (left). Nothing drawn when no kind is on.
    void setConstraintLines(const ConstraintLines& lines, const std::array<bool, 4>& kinds,
                            bool byLambda);
    void hideConstraintLines();
    vtkPolyData* constraintLineData() const { return constraintLines_; }
    vtkScalarBarActor* constraintBar() const { return constraintBar_; }

    // Surface problems (meshing/SurfaceProblems.h) drawn over the mesh in their kinds' colours
    // (widgets/ProblemsPanel.h): faces, border and non-manifold edges as thick lines, vertices
    // as dots; problem `selected` (-1: none) again on top in white, thicker. They follow the
    // particles. Empty clears them.
    void setProblems(const Scene& scene, const std::vector<SurfaceProblem>& problems,
                     int selected = -1);
    std::size_t problemCount() const { return problems_.size(); }
    vtkPolyData* problemData() const { return problemData_; }
    vtkPolyData* selectedProblemData() const { return selectedProblemData_; }
    vtkActor* problemActor() const { return problemActor_; }

    // The colour a body of this kind is drawn with (front faces).
    static QColor colorFor(BodyKind kind);

    // While the camera moves over a heavy view (VtkViewport::frameStarting), bodies of more
    // than kCoarseFrom triangles are drawn from a coarser mesh, made once from the body's
    // triangles by merging each vertex's neighbours into it (a level of detail, as ParaView's
    // while it is turned), its points following the particles; the same actor, colours and
    // field. Off again before anything is picked (the frame after).
    static constexpr std::size_t kCoarseFrom = 60000;
    void setCoarse(bool coarse);
    // The size of a pixel of the frame about to be drawn, in the view's pixels (0.5 for a
    // moving camera's half-size frame): the colour bars keep their size on screen.
    void setPixelScale(double scale);
    // The coarse mesh's triangle count for a body (0: none made, or the body is drawn whole).
    std::size_t coarseTriangles(std::size_t body) const;

private:
    struct BodyActor {
        vtkSmartPointer<vtkPolyData> surface;
        vtkSmartPointer<vtkActor> actor;
        vtkSmartPointer<vtkPolyData> clipSurface; // tet bodies only
        vtkSmartPointer<vtkActor> clipActor;
        std::vector<Triangle>
            localTriangles; // the body's triangles, indexed from its first particle
        bool visible = true;
        // Its level of detail (setCoarse): the mapper of the coarse surface, the body-local
        // point each coarse point follows, the triangle each coarse triangle stands for, and
        // the full surface's modification time it was last brought up to.
        vtkSmartPointer<vtkMapper> fullMapper;
        vtkSmartPointer<vtkPolyDataMapper> coarseMapper;
        vtkSmartPointer<vtkPolyData> coarseSurface;
        std::vector<Index> coarseSeeds;
        std::vector<Triangle> coarseTriangles;
        std::vector<vtkIdType> coarseSource;
        vtkMTimeType coarseFrom = 0;
    };
    void makeCoarse(BodyActor& b);
    void updateCoarse(BodyActor& b);
    bool coarse_ = false;
    double pixelScale_ = 1;
    void updateClip(const Scene& scene);
    void applyRepresentation(vtkActor* actor) const;
    void addColliders(const Scene& scene);

    void updateAir(const Scene& scene);
    void updatePins(const Scene& scene);

    vtkRenderer* renderer_;
    std::vector<Index> pinned_;
    vtkSmartPointer<vtkPolyData> pinPoints_;
    vtkSmartPointer<vtkActor> pinActor_;
    std::vector<Index> selected_;
    vtkSmartPointer<vtkPolyData> selectionPoints_;
    vtkSmartPointer<vtkActor> selectionActor_;
    // Dots at `particles`: made (with the colour and size) on first use, points updated.
    void setMarkers(const Scene& scene, const std::vector<Index>& particles,
                    vtkSmartPointer<vtkPolyData>& points, vtkSmartPointer<vtkActor>& actor,
                    const double colour[3], double size);
    static void updateMarkers(const Scene& scene, const std::vector<Index>& particles,
                              vtkPolyData* points, vtkActor* actor);
    AirMode airMode_ = AirMode::Hidden;
    std::vector<Tetrahedron> airTets_;
    std::vector<Triangle> airTriangles_; // 2D scenes
    void writeAirCells();
    std::size_t airCells() const; // air tets, or (2D) air triangles
    vtkSmartPointer<vtkUnstructuredGrid> airGrid_;
    vtkSmartPointer<vtkActor> airActor_;
    std::size_t invertedAir_ = 0;
    std::vector<double> airField_;
    vtkSmartPointer<vtkDataArray> airHealth_;
    void writeAirScalars();
    vtkSmartPointer<vtkLookupTable> airHealthColours_;
    void updateFrameGlyphs(const Scene& scene);
    vtkSmartPointer<vtkPolyData> constraintLines_;
    vtkSmartPointer<vtkActor> constraintActor_;
    vtkSmartPointer<vtkLookupTable> constraintTable_;
    vtkSmartPointer<vtkScalarBarActor> constraintBar_;
    bool skeletons_ = false;
    Real skeletonTime_ = 0;
    vtkSmartPointer<vtkPolyData> skeletonLines_;
    vtkSmartPointer<vtkActor> skeletonActor_;
    void applySkinOpacity(const Scene& scene);
    bool frameGlyphs_ = false;
    vtkSmartPointer<vtkPolyData> frameLines_;
    vtkSmartPointer<vtkActor> frameActor_;
    bool clip_ = false;
    Vec3 clipNormal_ = Vec3::UnitX();
    Vec3 clipOrigin_ = Vec3::Zero();
    std::size_t invertedClipped_ = 0;
    std::vector<BodyActor> bodies_;
    std::vector<BodyActor> embedded_; // surface and actor only
    std::vector<SurfaceProblem> problems_;
    vtkSmartPointer<vtkPolyData> problemData_, selectedProblemData_;
    vtkSmartPointer<vtkActor> problemActor_, selectedProblemActor_;
    void updateProblems(const Scene& scene);
    void updateEmbedded(const Scene& scene);
    std::vector<vtkSmartPointer<vtkActor>> colliders_;
    int selectedCollider_ = -1;
    long highlighted_ = -1;
    bool wireframe_ = false;
    bool fieldShown_ = false;
    vtkSmartPointer<vtkLookupTable> lookupTable_;
    vtkSmartPointer<vtkScalarBarActor> scalarBar_;
};

} // namespace pbd
