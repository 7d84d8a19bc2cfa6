#pragma once
// Animated characters: a node hierarchy (the skeleton), animation clips that key the nodes'
// local transforms, and meshes skinned to the nodes by linear blend skinning. A character is
// kinematic: the solver poses it at every substep's time and moves the mesh collider it drives,
// so cloth meets a moving surface with the surface's own velocity (for friction).
//
// Conventions are assimp's, which reads the files (meshing/CharacterImport): a node's global
// transform is its parent's global times its local transform; a bone's offset takes the mesh's
// bind-pose coordinates into the bone's space, so a skinned vertex is
//   x = sum_i w_i G(bone_i) offset_i v,
// and an unskinned mesh (or a vertex no bone weighs) follows its node: x = G(node) v. At the
// rest pose, G(bone) offset = G(mesh node), so both agree with the file's mesh.

#include "core/anim/LoopSubdivision.h"
#include "core/base/LinearAlgebra.h"

#include <string>
#include <vector>

namespace pbd {

// Unaligned: the scene holds them, and the solver's AVX-512 files would otherwise lay a 4x4
// matrix out with another alignment (64 bytes) than the rest of the program (32).
using Affine3 = Eigen::Transform<Real, 3, Eigen::Affine, Eigen::DontAlign>;
using Quat = Eigen::Quaterniond; // as core/rigid/RigidBody.h (32 bytes: 32-aligned everywhere)

struct CharacterNode {
    std::string name;
    int parent = -1;                    // an earlier node, or -1 for a root
    Affine3 rest = Affine3::Identity(); // local transform without animation
};

// One node's keys in a clip, times in seconds from the clip's start. A component without keys
// keeps the node's rest value.
struct NodeTrack {
    int node = 0;
    std::vector<Real> positionTimes;
    std::vector<Vec3> positions;
    std::vector<Real> rotationTimes;
    std::vector<Quat> rotations;
    std::vector<Real> scaleTimes;
    std::vector<Vec3> scales;
};

struct AnimationClip {
    std::string name;
    Real duration = 0; // seconds
    std::vector<NodeTrack> tracks;
};

struct SkinBone {
    int node = 0;
    Affine3 offset = Affine3::Identity(); // mesh bind space -> bone space
};

struct CharacterMesh {
    std::string name;
    int node = 0;               // the node that carries the mesh
    std::vector<Vec3> vertices; // bind pose, in the mesh's own space
    std::vector<Triangle> triangles;
    std::vector<SkinBone> bones; // empty: the mesh follows its node rigidly
    // Vertex v's weights are [weightStart[v], weightStart[v + 1]): bone (into `bones`) and
    // weight. Empty when the mesh has no bones.
    std::vector<Index> weightStart;
    std::vector<int> weightBone;
    std::vector<Real> weight;
};

enum class ClipWrap { Loop, Clamp };

// An attachment (the scene's constraints.attachments[attachment]) whose target rides on the
// skin: the point at `barycentric` in triangle `triangle` of characterTriangles, plus `offset`
// in the triangle's own frame (its first edge, the normal cross that edge, the normal),
// wherever the pose puts the triangle.
struct CharacterPin {
    Index attachment = 0;
    Index triangle = 0;
    Vec3 barycentric = Vec3::Zero();
    Vec3 offset = Vec3::Zero();
};
// The frame of skin triangle (a, b, c) that pins ride in: columns edge, normal x edge, normal.
Mat3 pinFrame(const Vec3& a, const Vec3& b, const Vec3& c);
// Where a pin's target is on skin vertices `skin` with triangles `triangles`.
Vec3 pinTarget(const CharacterPin& pin, const std::vector<Vec3>& skin,
               const std::vector<Triangle>& triangles);

inline constexpr int kMostSubdivisions = 3;

struct Character {
    std::string name;
    std::string source; // the file it was read from, for messages
    std::vector<CharacterNode> nodes;
    std::vector<AnimationClip> clips;
    std::vector<CharacterMesh> meshes;

    // Where the file's space goes in the scene: up axis, unit scale, position.
    Affine3 placement = Affine3::Identity();
    // The clip played (-1: the rest pose), and how the simulation's time maps to the clip's:
    // clip time = start + speed * simulation time, looped or held at the ends. `end` (> 0) cuts
    // the clip short: it loops over [0, end) or holds end's pose, as a clip of that length
    // would (0: the clip's own end).
    int clip = 0;
    Real start = 0;
    Real speed = 1;
    Real end = 0;
    ClipWrap wrap = ClipWrap::Loop;
    // The scene collider (a mesh) the character moves; -1 until it is added to a scene.
    int collider = -1;
    // Attachments that follow the skin (a garment's waistband, a skin body's vertices).
    std::vector<CharacterPin> pins;
    // The scene body whose particles ride on the skin (addSkinBody: the air's boundary at the
    // legs); -1 when there is none.
    int body = -1;
    // Levels of Loop subdivision of the meshes' surface (core/anim/LoopSubdivision.h), 0 to
    // kMostSubdivisions: the skin the collider, the pins and the window use. 0 is the file's
    // mesh; each level has four times the triangles, and turns its ridges by about half.
    int subdivisions = 0;
    // The levels' maps for the meshes and `subdivisions` as they are (refineCharacter makes
    // them; skinCharacter makes its own where they do not fit).
    std::vector<LoopLevel> surfaceLevels;

    // The skin's vertices and triangles (subdivided, when it is).
    std::size_t vertexCount() const;
    std::size_t triangleCount() const;
    // The meshes' own, as the file gives them.
    std::size_t meshVertexCount() const;
    std::size_t meshTriangleCount() const;
    // The skin's triangles made from each of a mesh's: mesh triangle t's are
    // [t * this, (t + 1) * this) of characterTriangles, the meshes' one after another.
    std::size_t trianglesPerMeshTriangle() const;
    // The clip time at simulation time `t`.
    Real clipTime(Real t) const;
};

// Every node's global transform (placement included) at simulation time `t`.
void poseNodes(const Character& character, Real t, std::vector<Affine3>& globals);
// The local transform of track `track` at clip time `time` (keys interpolated: positions and
// scales linearly, rotations by spherical interpolation; held before the first and after the
// last key).
Affine3 trackTransform(const NodeTrack& track, const Affine3& rest, Real time);

// Makes character.surfaceLevels for its meshes and subdivisions (after either changes).
void refineCharacter(Character& character);

// The skinned vertices of all meshes, one after another in mesh order, at simulation time `t`,
// then subdivided as character.subdivisions says (the meshes' vertices first, moved by Loop's
// rule, then the edges'). `globals` is scratch (the posed nodes).
void skinCharacter(const Character& character, Real t, std::vector<Vec3>& vertices,
                   std::vector<Affine3>& globals);
std::vector<Vec3> skinCharacter(const Character& character, Real t);
// The skin's triangles, indexing the vertices skinCharacter writes.
std::vector<Triangle> characterTriangles(const Character& character);
// The meshes' own triangles, one mesh after another, indexing their vertices in that order.
std::vector<Triangle> meshTriangles(const Character& character);

// What is wrong with a character's data (a parent after its child, an index out of range, keys
// out of order, a non-finite value, weights that do not add up), naming the node, mesh or clip;
// empty when it is fine.
std::string checkCharacter(const Character& character);

// "clip=NAME|INDEX|none,up=y|z|-z|x|-x,scale=S,position=X Y Z,start=S,speed=S,end=S|none,
// wrap=loop|clamp,subdivide=N":
// edits the clip choice, time mapping and placement (the placement's rotation takes the file's
// up axis to +y, then scales, then moves). An unknown key or bad value is refused, naming it.
std::string editCharacter(Character& character, const std::string& edits);

// A one-line summary: nodes, bones, meshes, triangles, clips with their durations.
std::string describeCharacter(const Character& character);

} // namespace pbd
