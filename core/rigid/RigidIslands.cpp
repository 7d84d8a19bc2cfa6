// The rigid step's islands and sleep (source 004, スリープ): the dynamic bodies joined by
// contacts and joints; an island whose bodies all stayed still for the sleep time falls asleep,
// unless a kinematic body drives it.
#include "core/rigid/RigidStep.h"

#include <limits>

namespace pbd {

using namespace rigid;

// The islands: the dynamic bodies joined by a manifold or a joint (the manifolds are this
// step's; made before the sweeps, beside the colouring, and read by sleepIslands at the end).
void RigidSolver::uniteIslands(Step& st) {
    const std::vector<RigidBody>& bodies = st.bodies;
    const std::vector<std::uint8_t>& motion = bodyMotion_;
    UnionFind islands(std::size_t(st.n));
    for (const auto& [a, b] : manifoldBodies_) {
        if (motion[std::size_t(a)] == kDynamicMotion && motion[std::size_t(b)] == kDynamicMotion) {
            islands.unite(a, b);
        }
    }
    for (const RigidJoint& j : st.joints) {
        if (j.bodyA >= 0 && j.bodyB >= 0 && bodies[j.bodyA].isDynamic() &&
            bodies[j.bodyB].isDynamic()) {
            islands.unite(j.bodyA, j.bodyB);
        }
    }
    islandParents_ = std::move(islands.parent);
}

void RigidSolver::sleepIslands(Step& st) {
    std::vector<RigidBody>& bodies = st.bodies;
    const std::vector<RigidJoint>& joints = st.joints;
    const RigidSettings& settings = st.settings;
    const int n = st.n;
    const Real h = st.h;
    // What the passes over the manifolds read, compact: each body's motion and each
    // manifold's bodies (listManifoldBodies), and whether it is deeper than the slop allows
    // (below; its points, read in parts on the team's threads).
    const std::vector<std::uint8_t>& motion = bodyMotion_;
    const std::vector<std::pair<int, int>>& pairs = manifoldBodies_;
    // A body still pushed out of a penetration deeper than the slop is not at rest, however
    // slowly it moves (the push need not show in its velocity): it would freeze that deep.
    // 10% over the slop lets the approach to it, which is geometric, end.
    std::vector<std::uint8_t>& deep = manifoldDeep_;
    deep.resize(manifolds_.size());
    st.inParts(manifolds_.size(), 1024, [&](int, std::size_t begin, std::size_t end) {
        for (std::size_t k = begin; k < end; ++k) {
            const RigidManifold& m = manifolds_[k].manifold;
            bool deeper = false;
            for (int p = 0; p < m.count; ++p) {
                deeper = deeper || -m.points[std::size_t(p)].separation > 1.1 * settings.slop;
            }
            deep[k] = deeper;
        }
    });
    UnionFind islands(0);
    islands.parent.swap(islandParents_);
    std::vector<char> tooDeep(n, 0);
    for (std::size_t k = 0; k < pairs.size(); ++k) {
        if (deep[k]) {
            tooDeep[pairs[k].first] = tooDeep[pairs[k].second] = 1;
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
    for (const auto& [a, b] : pairs) {
        if (motion[std::size_t(a)] == kKinematicMotion &&
            motion[std::size_t(b)] == kDynamicMotion) {
            islandPinnedAwake[islands.find(b)] = 1;
        }
        if (motion[std::size_t(b)] == kKinematicMotion &&
            motion[std::size_t(a)] == kDynamicMotion) {
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
