#pragma once
// The rigid bodies in the 3D view (§5): each body drawn with its shapes and moved by its pose;
// sleeping bodies greyed; contact points as glyphs along their normals coloured by the contact
// force, with a scalar bar; joints as their anchors with body A's frame axes. GUI thread only.

#include "core/rigid/RigidSolver.h"
#include "core/scene/Scene.h"

#include <QColor>

#include <vtkSmartPointer.h>

#include <vector>

class vtkActor;
class vtkLookupTable;
class vtkPolyData;
class vtkRenderer;
class vtkScalarBarActor;

namespace pbd {

class RigidActors {
public:
    explicit RigidActors(vtkRenderer* renderer);
    ~RigidActors();
    RigidActors(const RigidActors&) = delete;
    RigidActors& operator=(const RigidActors&) = delete;

    // Replaces the actors with those of the scene's rigid bodies (none without).
    void setScene(const Scene& scene);
    // Moves the bodies to their poses, greys the sleeping ones and redraws the contacts (force
    // = normal impulse / h, N) and joints.
    void update(const Scene& scene, const std::vector<RigidContact>& contacts, Real h);
    void clear();

    // Contact and joint glyphs with the force bar.
    void setContactsShown(bool shown);
    bool contactsShown() const { return contactsShown_; }

    std::size_t bodyCount() const { return bodies_.size(); }
    vtkActor* actor(std::size_t body) const { return bodies_.at(body); }
    // The body's drawn colour now (sleeping bodies grey).
    QColor bodyColour(std::size_t body) const;
    vtkPolyData* contactGlyphs() const { return contactLines_; }
    vtkPolyData* jointGlyphs() const { return jointLines_; }
    vtkScalarBarActor* forceBar() const { return forceBar_; }

    static QColor colourFor(RigidMotion motion, bool sleeping);

private:
    vtkRenderer* renderer_;
    std::vector<vtkSmartPointer<vtkActor>> bodies_;
    std::vector<char> sleeping_;
    std::vector<RigidMotion> motions_;
    Real glyphLength_ = 0.25;
    bool contactsShown_ = true;
    vtkSmartPointer<vtkPolyData> contactLines_;
    vtkSmartPointer<vtkActor> contactActor_;
    vtkSmartPointer<vtkPolyData> jointLines_;
    vtkSmartPointer<vtkActor> jointActor_;
    vtkSmartPointer<vtkLookupTable> forceColours_;
    vtkSmartPointer<vtkScalarBarActor> forceBar_;
};

// A rigid body's surface in its own frame: every shape tessellated and placed.
vtkSmartPointer<vtkPolyData> rigidBodySurface(const RigidBody& body);

} // namespace pbd
