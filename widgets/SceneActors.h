#pragma once
// The VTK picture of a core::Scene: one surface actor per body, kept in step with the scene's
// particle positions. GUI thread only.

#include "core/Scene.h"

#include <QColor>

#include <vtkActor.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>

#include <vector>

class vtkRenderer;

namespace pbd {

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
    vtkActor* actor(std::size_t body) const { return bodies_.at(body).actor; }
    vtkPolyData* surface(std::size_t body) const { return bodies_.at(body).surface; }

    // The colour a body of this kind is drawn with (front faces).
    static QColor colorFor(BodyKind kind);

private:
    struct BodyActor {
        vtkSmartPointer<vtkPolyData> surface;
        vtkSmartPointer<vtkActor> actor;
    };
    void applyRepresentation(vtkActor* actor) const;

    vtkRenderer* renderer_;
    std::vector<BodyActor> bodies_;
    bool wireframe_ = false;
};

} // namespace pbd
