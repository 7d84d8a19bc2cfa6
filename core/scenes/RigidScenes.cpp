#include "core/scenes/RigidScenes.h"

#include "core/constraints/ConstraintBuilders.h"
#include "core/rigid/RigidCoupling.h"
#include "core/scenes/PrimitiveMeshes.h"

#include <cmath>
#include <limits>
#include <string>

namespace pbd {

namespace {

Scene rigidScene(std::string name, std::string description) {
    Scene scene;
    scene.name = std::move(name);
    scene.description = std::move(description);
    scene.solver.timeStep = 1.0 / 60.0;
    scene.solver.substeps = 1;
    scene.solver.iterations = 1; // the particle sweeps; the rigid solve has its own
    return scene;
}

} // namespace

RigidBody boxBody(std::string name, const Vec3& halfExtents, const Vec3& position) {
    RigidBody b;
    b.name = std::move(name);
    b.shapes.push_back(RigidShape::box(halfExtents));
    b.x = position;
    finishRigidBody(b);
    return b;
}

RigidBody rigidGround(Real halfSize) {
    RigidBody g;
    g.name = "ground";
    g.motion = RigidMotion::Static;
    g.friction = 0.6;
    g.shapes.push_back(RigidShape::box(Vec3(halfSize, 0.5, halfSize)));
    g.x = Vec3(0, -0.5, 0);
    finishRigidBody(g);
    return g;
}

Scene makeRigidPyramid(int base) {
    Scene scene = rigidScene(base == 20 ? "pyramid" : "pyramid-" + std::to_string(base),
                             "A wall pyramid of " + std::to_string(base * (base + 1) / 2) +
                                 " boxes (1 m) on the ground, " + std::to_string(base) +
                                 " in the bottom row");
    scene.rigidBodies.push_back(rigidGround(0.6 * base + 4));
    // Placed as they rest: each contact pressed in by the slop.
    const Real h = 0.5, gap = 0.04, slop = scene.solver.rigid.slop;
    for (int row = 0; row < base; ++row) {
        const int count = base - row;
        for (int i = 0; i < count; ++i) {
            const Real x = (i - (count - 1) * 0.5) * (2 * h + gap);
            const Real y = h - slop + row * (2 * h - slop);
            scene.rigidBodies.push_back(
                boxBody("box " + std::to_string(row) + "." + std::to_string(i), Vec3::Constant(h),
                        Vec3(x, y, 0)));
        }
    }
    if (base > 60) {
        // PGS's 20 sweeps hold pyramids up to base 60 (support climbs a few layers per sweep);
        // taller ones stand under the soft step: 4 substeps of two sweeps and one relax, 20 Hz
        // contacts, the lower body of a contact 1.3 times heavier, the friction impulses
        // warm-started in full (without, it collapses). With one sweep a substep (at 4
        // substeps; it stood at 8), or a larger amplification (1.4), the wall buckles out of
        // its plane (z) and falls; it stands from 1.2 to 1.35 at 20 Hz and from 15 to 23 Hz at
        // 1.3 (docs/performance.md, *`pyramid-100` at four substeps*).
        RigidSettings& r = scene.solver.rigid;
        r.substeps = 4;
        r.iterations = 2;
        r.relaxIterations = 1;
        r.contactHertz = 20;
        r.weightAmplification = 1.3;
        r.frictionWarmStart = 1;
    }
    return scene;
}

Scene makeRigidStack(int count) {
    Scene scene = rigidScene("stack", "A vertical stack of " + std::to_string(count) +
                                          " boxes (1 m) on the ground");
    scene.rigidBodies.push_back(rigidGround(5));
    for (int i = 0; i < count; ++i) {
        const Real slop = scene.solver.rigid.slop;
        scene.rigidBodies.push_back(boxBody("box " + std::to_string(i), Vec3::Constant(0.5),
                                            Vec3(0, 0.5 - slop + i * (1 - slop), 0)));
    }
    return scene;
}

Scene makeRigidChain(int links, Real massRatio, bool hinged) {
    Scene scene = rigidScene(hinged ? "chain-hinged" : "chain",
                             std::to_string(links) + " capsule links on " +
                                 (hinged ? "hinges" : "ball joints") +
                                 " released from horizontal, the last carrying a sphere " +
                                 std::to_string(int(massRatio)) + " times as heavy as a link");
    const Real radius = 0.05, halfHeight = 0.2, length = 2 * halfHeight + 2 * radius;
    const Vec3 top(0, 10, 0);
    const Mat3 lying = Eigen::AngleAxisd(-M_PI / 2, Vec3::UnitZ()).toRotationMatrix();
    for (int i = 0; i < links; ++i) {
        RigidBody link;
        link.name = "link " + std::to_string(i);
        RigidShape s = RigidShape::capsule(radius, halfHeight);
        s.rotation = lying; // along x
        link.shapes.push_back(s);
        link.x = top + Vec3((i + 0.5) * length, 0, 0);
        finishRigidBody(link);
        scene.rigidBodies.push_back(link);
    }
    const Real linkMass = scene.rigidBodies.front().mass;
    RigidBody weight;
    weight.name = "weight";
    weight.shapes.push_back(RigidShape::sphere(0.25));
    weight.density = massRatio * linkMass / weight.shapes.front().volume();
    weight.x = top + Vec3(links * length + 0.25, 0, 0);
    finishRigidBody(weight);
    scene.rigidBodies.push_back(weight);
    const Vec3 axis = Vec3::UnitZ();
    for (int i = 0; i <= links; ++i) {
        const Vec3 anchor = top + Vec3(i * length, 0, 0);
        const int a = i - 1, b = i;
        scene.rigidJoints.push_back(hinged ? hingeJoint(scene.rigidBodies, a, b, anchor, axis)
                                           : ballJoint(scene.rigidBodies, a, b, anchor));
    }
    // The heavy end needs small steps: 16 substeps of 10 sweeps keep the joints within 1 cm.
    scene.solver.substeps = 16;
    scene.solver.rigid.iterations = 10;
    scene.solver.rigid.sleeping = false;
    return scene;
}

Scene makeSpinningTop() {
    Scene scene = rigidScene("spinning-top",
                             "A T-handle spinning about its intermediate axis in zero gravity, "
                             "omega = (10, 1, 0) rad/s: it flips over and over (Dzhanibekov)");
    scene.solver.gravity = Vec3::Zero();
    scene.solver.timeStep = 1.0 / 240.0;
    scene.solver.rigid.sleeping = false;
    RigidBody t;
    t.name = "T-handle";
    RigidShape handle = RigidShape::box(Vec3(0.02, 0.25, 0.02)); // along y
    RigidShape stem = RigidShape::box(Vec3(0.15, 0.02, 0.02));   // along x, from the handle
    stem.position = Vec3(0.17, 0, 0);
    t.shapes = {handle, stem};
    t.x = Vec3(0, 1, 0);
    finishRigidBody(t);
    t.setAngularVelocity(Vec3(10, 1, 0));
    scene.rigidBodies.push_back(t);
    return scene;
}

Scene makeClothOnRigid() {
    Scene scene = rigidScene("cloth-on-rigid",
                             "A cloth hung from a carrier bar moving sideways, draped over a "
                             "block and weighted by a ball at a far corner: particles and "
                             "rigid bodies coupled both ways");
    scene.solver.timeStep = 1.0 / 120.0;
    scene.solver.substeps = 2;
    scene.solver.iterations = 10;
    scene.rigidBodies.push_back(rigidGround(4));
    RigidBody block = boxBody("block", Vec3(0.3, 0.3, 0.3), Vec3(0, 0.3 - 0.002, 0.1));
    scene.rigidBodies.push_back(block);
    RigidBody carrier;
    carrier.name = "carrier";
    carrier.motion = RigidMotion::Kinematic;
    carrier.shapes.push_back(RigidShape::box(Vec3(0.9, 0.04, 0.04)));
    carrier.x = Vec3(0, 1.25, -0.65);
    finishRigidBody(carrier);
    carrier.v = Vec3(0.15, 0, 0);
    scene.rigidBodies.push_back(carrier);
    const int carrierIndex = 2;

    ClothSheetSpec sheet;
    sheet.columns = 30;
    sheet.rows = 30;
    sheet.width = 1.6;
    sheet.depth = 1.6;
    sheet.center = Vec3(0, 1.2, 0.2);
    scene.bodies.push_back(makeClothSheet(scene.particles, sheet, "cloth"));
    const Body& cloth = scene.bodies.back();
    addEdgeDistances(scene.constraints, scene.particles, cloth, 0.0);
    addDihedralBending(scene.constraints, scene.particles, cloth, 5e3, 0.1);

    // The row nearest the carrier hangs from it; a far corner carries a ball.
    Real nearZ = std::numeric_limits<Real>::infinity(), farZ = -nearZ;
    for (Index i = cloth.firstParticle; i < cloth.firstParticle + cloth.particleCount; ++i) {
        nearZ = std::min(nearZ, scene.particles.positions[i].z());
        farZ = std::max(farZ, scene.particles.positions[i].z());
    }
    RigidBody ball;
    ball.name = "ball";
    ball.shapes.push_back(RigidShape::sphere(0.08));
    ball.density = 1500; // 3.2 kg
    ball.x = Vec3(0.8 + 0.1, 1.2, farZ);
    finishRigidBody(ball);
    scene.rigidBodies.push_back(ball);
    const int ballIndex = 3;
    for (Index i = cloth.firstParticle; i < cloth.firstParticle + cloth.particleCount; ++i) {
        const Vec3& p = scene.particles.positions[i];
        if (p.z() < nearZ + 1e-9) {
            scene.rigidAttachments.push_back(attachToRigidBody(scene, i, carrierIndex));
        } else if (p.z() > farZ - 1e-9 && p.x() > 0.79) {
            scene.rigidAttachments.push_back(attachToRigidBody(scene, i, ballIndex));
        }
    }
    scene.solver.rigid.sleeping = false; // a moving carrier keeps everything going
    return scene;
}

} // namespace pbd
