#include "core/scenes/Ground.h"

#include "core/scenes/RigidScenes.h"

#include <algorithm>

namespace pbd {

namespace {

bool isGroundCollider(const Collider& c) {
    return c.shape == ColliderShape::Plane && c.name == kGroundName;
}

bool isGroundBody(const RigidBody& b) {
    return b.motion == RigidMotion::Static && b.name == kGroundName;
}

constexpr Real kGroundFriction = 0.5;

} // namespace

bool hasGround(const Scene& scene) {
    return std::any_of(scene.colliders.begin(), scene.colliders.end(), isGroundCollider) ||
           std::any_of(scene.rigidBodies.begin(), scene.rigidBodies.end(), isGroundBody);
}

Real groundHeight(const Scene& scene) {
    const Bounds b = scene.bounds(); // the bodies and moving rigid bodies, not a static ground
    return b.empty() ? 0 : b.min.y();
}

void addGround(Scene& scene, Real height) {
    if (hasGround(scene)) {
        return;
    }
    if (scene.rigidBodies.empty()) {
        Collider plane = Collider::plane(Vec3(0, height, 0), Vec3::UnitY());
        plane.name = kGroundName;
        plane.friction = kGroundFriction;
        scene.colliders.push_back(plane);
        return;
    }
    // Wide enough for everything to spread out on: four times the scene's extent, 4 m at least.
    const Bounds b = scene.bounds();
    const Real extent = b.empty() ? 1 : b.size().maxCoeff();
    RigidBody ground = rigidGround(std::max<Real>(4, 2 * extent));
    ground.x.y() += height;
    ground.friction = kGroundFriction;
    scene.rigidBodies.push_back(ground); // last: no joint or attachment index moves
}

void removeGround(Scene& scene) {
    std::erase_if(scene.colliders, isGroundCollider);
    for (std::size_t i = scene.rigidBodies.size(); i-- > 0;) {
        if (!isGroundBody(scene.rigidBodies[i])) {
            continue;
        }
        scene.rigidBodies.erase(scene.rigidBodies.begin() + std::ptrdiff_t(i));
        const int removed = int(i);
        std::erase_if(scene.rigidJoints, [&](const RigidJoint& j) {
            return j.bodyA == removed || j.bodyB == removed;
        });
        std::erase_if(scene.rigidAttachments,
                      [&](const RigidAttachment& a) { return a.body == removed; });
        for (RigidJoint& j : scene.rigidJoints) {
            for (int* body : {&j.bodyA, &j.bodyB}) {
                if (*body > removed) {
                    --*body;
                }
            }
        }
        for (RigidAttachment& a : scene.rigidAttachments) {
            if (a.body > removed) {
                --a.body;
            }
        }
    }
}

} // namespace pbd
