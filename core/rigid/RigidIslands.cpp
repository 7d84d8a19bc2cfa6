// The rigid step's islands and sleep (source 004, スリープ): the dynamic bodies joined by
// contacts and joints; an island whose bodies all stayed still for the sleep time falls asleep,
// unless a kinematic body drives it.
#include "core/rigid/RigidStep.h"

#include <limits>

namespace pbd {

using namespace rigid;

void RigidSolver::sleepIslands(Step& st) {
    std::vector<RigidBody>& bodies = st.bodies;
    const std::vector<RigidJoint>& joints = st.joints;
    const RigidSettings& settings = st.settings;
    const int n = st.n;
    const Real h = st.h;
    UnionFind islands(n);
    for (const CachedManifold& m : manifolds_) {
        const int a = m.manifold.bodyA, b = m.manifold.bodyB;
        if (bodies[a].isDynamic() && bodies[b].isDynamic()) {
            islands.unite(a, b);
        }
    }
    for (const RigidJoint& j : joints) {
        if (j.bodyA >= 0 && j.bodyB >= 0 && bodies[j.bodyA].isDynamic() &&
            bodies[j.bodyB].isDynamic()) {
            islands.unite(j.bodyA, j.bodyB);
        }
    }
    // A body still pushed out of a penetration deeper than the slop is not at rest, however
    // slowly it moves (the push need not show in its velocity): it would freeze that deep.
    // 10% over the slop lets the approach to it, which is geometric, end.
    std::vector<char> tooDeep(n, 0);
    for (const CachedManifold& m : manifolds_) {
        for (int k = 0; k < m.manifold.count; ++k) {
            if (-m.manifold.points[std::size_t(k)].separation > 1.1 * settings.slop) {
                tooDeep[m.manifold.bodyA] = tooDeep[m.manifold.bodyB] = 1;
            }
        }
    }
    std::vector<Real> islandRest(n, std::numeric_limits<Real>::infinity());
    std::vector<char> islandPinnedAwake(n, 0);
    for (int i = 0; i < n; ++i) {
        RigidBody& b = bodies[i];
        if (!b.isDynamic()) {
            continue;
        }
        const int root = islands.find(i);
        if (root == i) {
            ++stats_.islands;
        }
        if (b.sleeping) {
            continue;
        }
        const bool still = b.v.norm() < settings.sleepLinearSpeed &&
                           b.omega.norm() < settings.sleepAngularSpeed && !tooDeep[i];
        b.restTime = still ? b.restTime + h : 0;
        islandRest[root] = std::min(islandRest[root], b.restTime);
    }
    // Bodies jointed to the world or to a kinematic body stay awake with a moving driver.
    for (const RigidJoint& j : joints) {
        for (int side : {j.bodyA, j.bodyB}) {
            if (side >= 0 && bodies[side].isDynamic()) {
                const int other = side == j.bodyA ? j.bodyB : j.bodyA;
                if (other >= 0 && bodies[other].motion == RigidMotion::Kinematic) {
                    islandPinnedAwake[islands.find(side)] = 1;
                }
            }
        }
    }
    for (const CachedManifold& m : manifolds_) {
        const int a = m.manifold.bodyA, b = m.manifold.bodyB;
        if (bodies[a].motion == RigidMotion::Kinematic && bodies[b].isDynamic()) {
            islandPinnedAwake[islands.find(b)] = 1;
        }
        if (bodies[b].motion == RigidMotion::Kinematic && bodies[a].isDynamic()) {
            islandPinnedAwake[islands.find(a)] = 1;
        }
    }
    if (settings.sleeping) {
        for (int i = 0; i < n; ++i) {
            RigidBody& b = bodies[i];
            const int root = islands.find(i);
            if (b.isDynamic() && !b.sleeping && !islandPinnedAwake[root] &&
                islandRest[root] >= settings.sleepTime) {
                b.sleeping = true;
                b.v.setZero();
                b.L.setZero();
                b.omega.setZero();
            }
        }
    }
}

} // namespace pbd
