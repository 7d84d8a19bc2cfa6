#include "core/anim/Character.h"

#include "core/base/TextValues.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <sstream>

namespace pbd {

std::size_t Character::meshVertexCount() const {
    std::size_t n = 0;
    for (const CharacterMesh& m : meshes) {
        n += m.vertices.size();
    }
    return n;
}

std::size_t Character::meshTriangleCount() const {
    std::size_t n = 0;
    for (const CharacterMesh& m : meshes) {
        n += m.triangles.size();
    }
    return n;
}

std::size_t Character::trianglesPerMeshTriangle() const {
    return std::size_t(1) << (2 * std::clamp(subdivisions, 0, kMostSubdivisions));
}

namespace {

// The character's surface levels: its own where they fit its meshes and subdivisions, else
// made in `scratch` (a character edited without refineCharacter).
const std::vector<LoopLevel>& levelsOf(const Character& c, std::vector<LoopLevel>& scratch) {
    const std::size_t levels = std::size_t(std::clamp(c.subdivisions, 0, kMostSubdivisions));
    const auto fits = [&](const std::vector<LoopLevel>& l) {
        return l.size() == levels &&
               (levels == 0 || (l[0].coarseVertices == c.meshVertexCount() &&
                                l[0].coarseTriangles == c.meshTriangleCount()));
    };
    if (fits(c.surfaceLevels)) {
        return c.surfaceLevels;
    }
    scratch.clear();
    std::vector<Triangle> triangles = meshTriangles(c);
    std::size_t vertices = c.meshVertexCount();
    for (std::size_t k = 0; k < levels; ++k) {
        scratch.push_back(loopSubdivide(triangles, vertices));
        triangles = scratch.back().triangles;
        vertices = scratch.back().vertexCount();
    }
    return scratch;
}

} // namespace

void refineCharacter(Character& character) {
    character.surfaceLevels.clear();
    std::vector<LoopLevel> levels;
    character.surfaceLevels = levelsOf(character, levels);
}

std::size_t Character::vertexCount() const {
    if (subdivisions <= 0) {
        return meshVertexCount();
    }
    std::vector<LoopLevel> scratch;
    return levelsOf(*this, scratch).back().vertexCount();
}

std::size_t Character::triangleCount() const {
    return meshTriangleCount() * trianglesPerMeshTriangle();
}

Real Character::clipTime(Real t) const {
    if (clip < 0 || clip >= int(clips.size())) {
        return 0;
    }
    const Real whole = clips[std::size_t(clip)].duration;
    const Real duration = end > 0 ? std::min(end, whole) : whole;
    const Real time = start + speed * t;
    if (!(duration > 0)) {
        return 0;
    }
    if (wrap == ClipWrap::Clamp) {
        return std::clamp(time, Real(0), duration);
    }
    const Real r = std::fmod(time, duration);
    return r < 0 ? r + duration : r;
}

namespace {

// The key interval around `time`: the index of the key at or before it and the fraction to the
// next (0 before the first key, the last key after the last).
std::pair<std::size_t, Real> keyAt(const std::vector<Real>& times, Real time) {
    if (times.size() < 2 || time <= times.front()) {
        return {0, 0};
    }
    if (time >= times.back()) {
        return {times.size() - 1, 0};
    }
    const std::size_t i =
        std::size_t(std::upper_bound(times.begin(), times.end(), time) - times.begin()) - 1;
    const Real span = times[i + 1] - times[i];
    return {i, span > 0 ? (time - times[i]) / span : 0};
}

Vec3 lerpKeys(const std::vector<Real>& times, const std::vector<Vec3>& values, Real time) {
    const auto [i, f] = keyAt(times, time);
    return f > 0 ? Vec3((1 - f) * values[i] + f * values[i + 1]) : values[i];
}

} // namespace

Affine3 trackTransform(const NodeTrack& track, const Affine3& rest, Real time) {
    Mat3 rotation, scaling;
    rest.computeRotationScaling(&rotation, &scaling);
    Vec3 position = rest.translation();
    Quat q(rotation);
    Vec3 scale = scaling.diagonal();
    if (!track.positions.empty()) {
        position = lerpKeys(track.positionTimes, track.positions, time);
    }
    if (!track.scales.empty()) {
        scale = lerpKeys(track.scaleTimes, track.scales, time);
    }
    if (!track.rotations.empty()) {
        const auto [i, f] = keyAt(track.rotationTimes, time);
        q = f > 0 ? track.rotations[i].slerp(f, track.rotations[i + 1]) : track.rotations[i];
        q.normalize();
    }
    Affine3 local = Affine3::Identity();
    local.translate(position);
    local.rotate(q);
    local.scale(scale);
    return local;
}

void poseNodes(const Character& character, Real t, std::vector<Affine3>& globals) {
    const std::size_t n = character.nodes.size();
    globals.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        globals[i] = character.nodes[i].rest;
    }
    if (character.clip >= 0 && character.clip < int(character.clips.size())) {
        const AnimationClip& clip = character.clips[std::size_t(character.clip)];
        const Real time = character.clipTime(t);
        for (const NodeTrack& track : clip.tracks) {
            globals[std::size_t(track.node)] =
                trackTransform(track, character.nodes[std::size_t(track.node)].rest, time);
        }
    }
    for (std::size_t i = 0; i < n; ++i) {
        const int parent = character.nodes[i].parent;
        globals[i] = parent >= 0 ? globals[std::size_t(parent)] * globals[i]
                                 : character.placement * globals[i];
    }
}

void skinCharacter(const Character& character, Real t, std::vector<Vec3>& surface,
                   std::vector<Affine3>& globals) {
    poseNodes(character, t, globals);
    // The meshes' vertices, into the surface's vector when it is the meshes' own, else into
    // scratch that the levels then subdivide (into the surface at the last).
    thread_local std::vector<Vec3> posed, between;
    std::vector<LoopLevel> levelScratch;
    const std::vector<LoopLevel>& levels =
        character.subdivisions > 0 ? levelsOf(character, levelScratch) : character.surfaceLevels;
    std::vector<Vec3>& vertices = character.subdivisions > 0 ? posed : surface;
    vertices.resize(character.meshVertexCount());
    std::size_t out = 0;
    std::vector<Affine3> skin;
    for (const CharacterMesh& mesh : character.meshes) {
        const Affine3& carrier = globals[std::size_t(mesh.node)];
        skin.resize(mesh.bones.size());
        for (std::size_t b = 0; b < mesh.bones.size(); ++b) {
            skin[b] = globals[std::size_t(mesh.bones[b].node)] * mesh.bones[b].offset;
        }
        for (std::size_t v = 0; v < mesh.vertices.size(); ++v, ++out) {
            const Vec3& x = mesh.vertices[v];
            if (mesh.bones.empty() || mesh.weightStart[v] == mesh.weightStart[v + 1]) {
                vertices[out] = carrier * x;
                continue;
            }
            Vec3 sum = Vec3::Zero();
            Real total = 0;
            for (Index k = mesh.weightStart[v]; k < mesh.weightStart[v + 1]; ++k) {
                sum += mesh.weight[k] * (skin[std::size_t(mesh.weightBone[k])] * x);
                total += mesh.weight[k];
            }
            // Weights that do not add up to one (files round them) are normalised.
            vertices[out] = total > 0 ? Vec3(sum / total) : Vec3(carrier * x);
        }
    }
    if (character.subdivisions > 0) {
        for (std::size_t k = 0; k < levels.size(); ++k) {
            const std::vector<Vec3>& from = k % 2 == 0 ? posed : between;
            std::vector<Vec3>& to = k + 1 == levels.size() ? surface : k % 2 == 0 ? between : posed;
            levels[k].apply(from, to);
        }
    }
}

std::vector<Vec3> skinCharacter(const Character& character, Real t) {
    std::vector<Vec3> vertices;
    std::vector<Affine3> globals;
    skinCharacter(character, t, vertices, globals);
    return vertices;
}

Vec3 pinTarget(const CharacterPin& pin, const std::vector<Vec3>& skin,
               const std::vector<Triangle>& triangles) {
    const Triangle& t = triangles[pin.triangle];
    const Vec3& a = skin[t[0]];
    const Vec3& b = skin[t[1]];
    const Vec3& c = skin[t[2]];
    const Vec3 q = pin.barycentric[0] * a + pin.barycentric[1] * b + pin.barycentric[2] * c;
    return q + pinFrame(a, b, c) * pin.offset;
}

Mat3 pinFrame(const Vec3& a, const Vec3& b, const Vec3& c) {
    Mat3 frame = Mat3::Identity();
    const Vec3 n = (b - a).cross(c - a);
    const Vec3 e = b - a;
    if (!(n.norm() > 0) || !(e.norm() > 0)) {
        return frame; // a collapsed triangle: the offset as it is
    }
    frame.col(0) = e.normalized();
    frame.col(2) = n.normalized();
    frame.col(1) = frame.col(2).cross(frame.col(0));
    return frame;
}

std::vector<Triangle> characterTriangles(const Character& character) {
    if (character.subdivisions > 0) {
        std::vector<LoopLevel> scratch;
        return levelsOf(character, scratch).back().triangles;
    }
    return meshTriangles(character);
}

std::vector<Triangle> meshTriangles(const Character& character) {
    std::vector<Triangle> triangles;
    triangles.reserve(character.meshTriangleCount());
    Index offset = 0;
    for (const CharacterMesh& mesh : character.meshes) {
        for (const Triangle& t : mesh.triangles) {
            triangles.push_back({t[0] + offset, t[1] + offset, t[2] + offset});
        }
        offset += Index(mesh.vertices.size());
    }
    return triangles;
}

namespace {

bool finite(const Affine3& a) {
    return a.matrix().allFinite();
}

bool sortedFinite(const std::vector<Real>& times) {
    for (std::size_t i = 0; i < times.size(); ++i) {
        if (!std::isfinite(times[i]) || (i > 0 && times[i] < times[i - 1])) {
            return false;
        }
    }
    return true;
}

} // namespace

std::string checkCharacter(const Character& c) {
    const std::string who = "character '" + c.name + "'";
    const int nodes = int(c.nodes.size());
    for (int i = 0; i < nodes; ++i) {
        const CharacterNode& node = c.nodes[std::size_t(i)];
        if (node.parent >= i || node.parent < -1) {
            return who + ": node '" + node.name + "' has parent " + std::to_string(node.parent) +
                   ", not an earlier node";
        }
        if (!finite(node.rest)) {
            return who + ": node '" + node.name + "' has a non-finite transform";
        }
    }
    if (!finite(c.placement)) {
        return who + ": the placement is not finite";
    }
    if (!std::isfinite(c.start) || !std::isfinite(c.speed)) {
        return who + ": the clip's start and speed must be finite";
    }
    if (!std::isfinite(c.end) || c.end < 0) {
        return who + ": the clip's end must be a time of 0 or more (0: the clip's own end)";
    }
    if (c.subdivisions < 0 || c.subdivisions > kMostSubdivisions) {
        return who + ": " + std::to_string(c.subdivisions) + " levels of subdivision (0 to " +
               std::to_string(kMostSubdivisions) + ")";
    }
    if (c.clip < -1 || c.clip >= int(c.clips.size())) {
        return who + ": clip " + std::to_string(c.clip) + " does not exist (it has " +
               std::to_string(c.clips.size()) + ")";
    }
    for (const AnimationClip& clip : c.clips) {
        const std::string where = who + ", clip '" + clip.name + "'";
        if (!std::isfinite(clip.duration) || clip.duration < 0) {
            return where + ": the duration is not a finite time";
        }
        for (const NodeTrack& t : clip.tracks) {
            if (t.node < 0 || t.node >= nodes) {
                return where + ": a track keys node " + std::to_string(t.node) +
                       ", which does "
                       "not exist";
            }
            const std::string track = where + ", node '" + c.nodes[std::size_t(t.node)].name + "'";
            if (t.positionTimes.size() != t.positions.size() ||
                t.rotationTimes.size() != t.rotations.size() ||
                t.scaleTimes.size() != t.scales.size()) {
                return track + ": key times and values differ in number";
            }
            if (!sortedFinite(t.positionTimes) || !sortedFinite(t.rotationTimes) ||
                !sortedFinite(t.scaleTimes)) {
                return track + ": key times are not finite and increasing";
            }
            for (const Vec3& v : t.positions) {
                if (!v.allFinite()) {
                    return track + ": a position key is not finite";
                }
            }
            for (const Vec3& v : t.scales) {
                if (!v.allFinite()) {
                    return track + ": a scale key is not finite";
                }
            }
            for (const Quat& q : t.rotations) {
                if (!q.coeffs().allFinite() || !(q.norm() > 1e-12)) {
                    return track + ": a rotation key is not a rotation";
                }
            }
        }
    }
    for (const CharacterPin& pin : c.pins) {
        if (pin.triangle >= c.triangleCount() || !pin.barycentric.allFinite() ||
            !pin.offset.allFinite()) {
            return who + ": a pin names triangle " + std::to_string(pin.triangle) + " of " +
                   std::to_string(c.triangleCount());
        }
    }
    for (const CharacterMesh& m : c.meshes) {
        const std::string where = who + ", mesh '" + m.name + "'";
        if (m.node < 0 || m.node >= nodes) {
            return where + ": carried by node " + std::to_string(m.node) + ", which does not exist";
        }
        for (const Vec3& v : m.vertices) {
            if (!v.allFinite()) {
                return where + ": a vertex is not finite";
            }
        }
        for (const Triangle& t : m.triangles) {
            for (Index i : t) {
                if (i >= m.vertices.size()) {
                    return where + ": a triangle names vertex " + std::to_string(i) + " of " +
                           std::to_string(m.vertices.size());
                }
            }
        }
        for (const SkinBone& b : m.bones) {
            if (b.node < 0 || b.node >= nodes || !finite(b.offset)) {
                return where + ": a bone names node " + std::to_string(b.node) +
                       " or has a non-finite offset";
            }
        }
        if (m.bones.empty()) {
            continue;
        }
        if (m.weightStart.size() != m.vertices.size() + 1 || m.weightStart.front() != 0 ||
            m.weightStart.back() != m.weight.size() || m.weightBone.size() != m.weight.size()) {
            return where + ": the skin weights do not match the vertices";
        }
        for (std::size_t v = 0; v < m.vertices.size(); ++v) {
            if (m.weightStart[v] > m.weightStart[v + 1]) {
                return where + ": the skin weights do not match the vertices";
            }
            for (Index k = m.weightStart[v]; k < m.weightStart[v + 1]; ++k) {
                if (m.weightBone[k] < 0 || m.weightBone[k] >= int(m.bones.size()) ||
                    !std::isfinite(m.weight[k]) || m.weight[k] < 0) {
                    return where + ": vertex " + std::to_string(v) + " has a bad skin weight";
                }
            }
        }
    }
    return {};
}

namespace {

// The rotation taking the file's up axis to +y (right-handed, a quarter turn about x or z).
bool upRotation(const std::string& up, Mat3& r) {
    const Real q = std::numbers::pi / 2;
    if (up == "y") {
        r = Mat3::Identity();
    } else if (up == "z") {
        r = Eigen::AngleAxis<Real>(-q, Vec3::UnitX()).toRotationMatrix();
    } else if (up == "-z") {
        r = Eigen::AngleAxis<Real>(q, Vec3::UnitX()).toRotationMatrix();
    } else if (up == "x") {
        r = Eigen::AngleAxis<Real>(q, Vec3::UnitZ()).toRotationMatrix();
    } else if (up == "-x") {
        r = Eigen::AngleAxis<Real>(-q, Vec3::UnitZ()).toRotationMatrix();
    } else if (up == "-y") {
        r = Eigen::AngleAxis<Real>(2 * q, Vec3::UnitX()).toRotationMatrix();
    } else {
        return false;
    }
    return true;
}

} // namespace

std::string editCharacter(Character& c, const std::string& edits) {
    std::vector<std::pair<std::string, std::string>> items;
    std::string badItem;
    if (!splitKeyValues(edits, items, badItem)) {
        return "character edit '" + badItem + "' is not KEY=VALUE";
    }
    Character edited = c;
    Mat3 up = Mat3::Identity();
    Real scale = 1;
    Vec3 position = Vec3::Zero();
    bool placed = false;
    {
        Mat3 rotation, scaling;
        c.placement.computeRotationScaling(&rotation, &scaling);
        up = rotation;
        scale = scaling(0, 0);
        position = c.placement.translation();
    }
    for (const auto& [key, value] : items) {
        const std::string bad = "character '" + c.name + "': " + key + " cannot be '" + value + "'";
        Real x = 0;
        if (key == "clip") {
            if (value == "none") {
                edited.clip = -1;
                continue;
            }
            int found = -1;
            for (std::size_t i = 0; i < c.clips.size(); ++i) {
                if (c.clips[i].name == value) {
                    found = int(i);
                }
            }
            if (found < 0 && parseReal(value, x) && x == std::floor(x) && x >= 0 &&
                x < Real(c.clips.size())) {
                found = int(x);
            }
            if (found < 0) {
                std::string names;
                for (const AnimationClip& clip : c.clips) {
                    names += (names.empty() ? "'" : ", '") + clip.name + "'";
                }
                return bad + " (clips: " + (names.empty() ? "none" : names) +
                       ", by name or index, or 'none')";
            }
            edited.clip = found;
        } else if (key == "up") {
            if (!upRotation(value, up)) {
                return bad + " (x, y, z, -x, -y or -z)";
            }
            placed = true;
        } else if (key == "scale") {
            if (!parseReal(value, x) || !(x > 0)) {
                return bad + " (a positive number)";
            }
            scale = x;
            placed = true;
        } else if (key == "position") {
            if (!parseVec(value, position)) {
                return bad + " (three numbers, e.g. '0 1 0')";
            }
            placed = true;
        } else if (key == "start" || key == "speed") {
            if (!parseReal(value, x)) {
                return bad + " (a number)";
            }
            (key == "start" ? edited.start : edited.speed) = x;
        } else if (key == "end") {
            if (value == "none") {
                edited.end = 0;
            } else if (!parseReal(value, x) || !(x > 0)) {
                return bad + " (a clip time in seconds, above 0, or 'none' for the clip's end)";
            } else {
                edited.end = x;
            }
        } else if (key == "wrap") {
            if (value != "loop" && value != "clamp") {
                return bad + " (loop or clamp)";
            }
            edited.wrap = value == "loop" ? ClipWrap::Loop : ClipWrap::Clamp;
        } else if (key == "subdivide") {
            if (!parseReal(value, x) || x != std::floor(x) || x < 0 || x > kMostSubdivisions) {
                return bad + " (levels of subdivision, 0 to " + std::to_string(kMostSubdivisions) +
                       ")";
            }
            edited.subdivisions = int(x);
        } else {
            return "character '" + c.name + "' has no '" + key +
                   "'; keys: clip, up, scale, position, start, speed, end, wrap, subdivide";
        }
    }
    if (placed) {
        edited.placement = Affine3::Identity();
        edited.placement.translate(position);
        edited.placement.scale(scale);
        edited.placement.rotate(up);
    }
    if (std::string problem = checkCharacter(edited); !problem.empty()) {
        return problem;
    }
    refineCharacter(edited);
    c = std::move(edited);
    return {};
}

std::string describeCharacter(const Character& c) {
    std::size_t bones = 0;
    for (const CharacterMesh& m : c.meshes) {
        bones += m.bones.size();
    }
    std::ostringstream out;
    out << "'" << c.name << "': " << c.nodes.size() << " nodes, " << bones << " bones, "
        << c.meshes.size() << " meshes, " << c.triangleCount() << " triangles";
    if (c.subdivisions > 0) {
        out << " (" << c.meshTriangleCount() << " subdivided " << c.subdivisions << "x)";
    }
    out << ", " << c.clips.size() << " clip(s)";
    for (std::size_t i = 0; i < c.clips.size(); ++i) {
        out << (i == 0 ? ": " : ", ") << "'" << c.clips[i].name << "' " << c.clips[i].duration
            << " s";
    }
    return out.str();
}

} // namespace pbd
