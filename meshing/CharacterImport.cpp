#include "meshing/CharacterImport.h"

#include "core/base/TextValues.h"
#include "meshing/ContainedProcess.h"

#include <algorithm>
#include <assimp/Importer.hpp>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <map>
#include <type_traits>

namespace pbd {

namespace fs = std::filesystem;

namespace {

Affine3 toAffine(const aiMatrix4x4& m) {
    Affine3 a = Affine3::Identity();
    const ai_real* rows[3] = {m[0], m[1], m[2]};
    for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 4; ++c) {
            a.matrix()(r, c) = Real(rows[r][c]);
        }
    }
    return a;
}

// The hierarchy, parents first; by name (for bones and channels); and the node that carries
// each mesh, in node order.
void addNodes(const aiNode* node, int parent, Character& c, std::map<std::string, int>& byName,
              std::vector<std::pair<int, unsigned>>& carried) {
    const int index = int(c.nodes.size());
    CharacterNode n;
    n.name = validUtf8(node->mName.C_Str());
    n.parent = parent;
    n.rest = toAffine(node->mTransformation);
    c.nodes.push_back(std::move(n));
    byName.emplace(node->mName.C_Str(), index); // the first of a name wins, as in assimp
    for (unsigned i = 0; i < node->mNumMeshes; ++i) {
        carried.emplace_back(index, node->mMeshes[i]);
    }
    for (unsigned i = 0; i < node->mNumChildren; ++i) {
        addNodes(node->mChildren[i], index, c, byName, carried);
    }
}

Result<ImportedCharacter> readWithAssimp(const fs::path& path) {
    Assimp::Importer importer;
    importer.SetPropertyInteger(AI_CONFIG_PP_SBP_REMOVE,
                                aiPrimitiveType_POINT | aiPrimitiveType_LINE);
    const aiScene* scene =
        importer.ReadFile(path.string(), aiProcess_Triangulate | aiProcess_JoinIdenticalVertices |
                                             aiProcess_SortByPType | aiProcess_LimitBoneWeights);
    if (scene == nullptr) {
        return Error{"cannot read '" + path.string() + "': " + importer.GetErrorString()};
    }
    if (scene->mRootNode == nullptr) {
        return Error{"cannot read '" + path.string() + "': the file has no node hierarchy"};
    }
    ImportedCharacter result;
    Character& c = result.character;
    c.name = validUtf8(path.stem().string());
    c.source = path.string();
    std::map<std::string, int> byName;
    std::vector<std::pair<int, unsigned>> carried;
    addNodes(scene->mRootNode, -1, c, byName, carried);
    std::size_t morphs = 0, skipped = 0;
    for (const auto& [node, m] : carried) {
        if (m >= scene->mNumMeshes) {
            continue;
        }
        const aiMesh* mesh = scene->mMeshes[m];
        morphs += mesh->mNumAnimMeshes;
        CharacterMesh out;
        out.name = validUtf8(mesh->mName.length > 0 ? mesh->mName.C_Str()
                                                    : c.nodes[std::size_t(node)].name.c_str());
        out.node = node;
        out.vertices.reserve(mesh->mNumVertices);
        for (unsigned v = 0; v < mesh->mNumVertices; ++v) {
            const aiVector3D& p = mesh->mVertices[v];
            out.vertices.emplace_back(p.x, p.y, p.z);
        }
        for (unsigned f = 0; f < mesh->mNumFaces; ++f) {
            const aiFace& face = mesh->mFaces[f];
            if (face.mNumIndices != 3) {
                ++skipped;
                continue;
            }
            out.triangles.push_back(
                {Index(face.mIndices[0]), Index(face.mIndices[1]), Index(face.mIndices[2])});
        }
        if (mesh->mNumBones > 0) {
            std::vector<std::vector<std::pair<int, Real>>> weights(mesh->mNumVertices);
            for (unsigned b = 0; b < mesh->mNumBones; ++b) {
                const aiBone* bone = mesh->mBones[b];
                const auto found = byName.find(bone->mName.C_Str());
                if (found == byName.end()) {
                    return Error{"cannot read '" + path.string() + "': mesh '" + out.name +
                                 "' has bone '" + validUtf8(bone->mName.C_Str()) +
                                 "', which is no node of the file"};
                }
                const int slot = int(out.bones.size());
                out.bones.push_back({found->second, toAffine(bone->mOffsetMatrix)});
                for (unsigned k = 0; k < bone->mNumWeights; ++k) {
                    const aiVertexWeight& w = bone->mWeights[k];
                    if (w.mVertexId < mesh->mNumVertices && w.mWeight > 0) {
                        weights[w.mVertexId].emplace_back(slot, Real(w.mWeight));
                    }
                }
            }
            out.weightStart.push_back(0);
            for (const auto& list : weights) {
                for (const auto& [bone, w] : list) {
                    out.weightBone.push_back(bone);
                    out.weight.push_back(w);
                }
                out.weightStart.push_back(Index(out.weight.size()));
            }
        }
        if (!out.triangles.empty()) {
            c.meshes.push_back(std::move(out));
        }
    }
    if (c.meshes.empty()) {
        return Error{"'" + path.string() + "' contains no triangle mesh"};
    }
    for (unsigned a = 0; a < scene->mNumAnimations; ++a) {
        const aiAnimation* anim = scene->mAnimations[a];
        const Real ticks = anim->mTicksPerSecond > 0 ? Real(anim->mTicksPerSecond) : 25.0;
        AnimationClip clip;
        clip.name =
            anim->mName.length > 0 ? validUtf8(anim->mName.C_Str()) : "clip " + std::to_string(a);
        clip.duration = Real(anim->mDuration) / ticks;
        for (unsigned ch = 0; ch < anim->mNumChannels; ++ch) {
            const aiNodeAnim* channel = anim->mChannels[ch];
            const auto found = byName.find(channel->mNodeName.C_Str());
            if (found == byName.end()) {
                continue; // keys for a node the file does not have move nothing
            }
            NodeTrack track;
            track.node = found->second;
            for (unsigned k = 0; k < channel->mNumPositionKeys; ++k) {
                const aiVectorKey& key = channel->mPositionKeys[k];
                track.positionTimes.push_back(Real(key.mTime) / ticks);
                track.positions.emplace_back(key.mValue.x, key.mValue.y, key.mValue.z);
            }
            for (unsigned k = 0; k < channel->mNumRotationKeys; ++k) {
                const aiQuatKey& key = channel->mRotationKeys[k];
                track.rotationTimes.push_back(Real(key.mTime) / ticks);
                track.rotations.emplace_back(key.mValue.w, key.mValue.x, key.mValue.y,
                                             key.mValue.z);
            }
            for (unsigned k = 0; k < channel->mNumScalingKeys; ++k) {
                const aiVectorKey& key = channel->mScalingKeys[k];
                track.scaleTimes.push_back(Real(key.mTime) / ticks);
                track.scales.emplace_back(key.mValue.x, key.mValue.y, key.mValue.z);
            }
            clip.tracks.push_back(std::move(track));
        }
        c.clips.push_back(std::move(clip));
    }
    c.clip = c.clips.empty() ? -1 : 0;
    if (morphs > 0) {
        result.warnings.push_back(std::to_string(morphs) +
                                  " morph target(s) left out: PBD Lab plays skeletons and nodes");
    }
    if (skipped > 0) {
        result.warnings.push_back(std::to_string(skipped) +
                                  " face(s) that are not triangles left out");
    }
    return result;
}

// The binary form between the child and here.
class Writer {
public:
    template <class T> void value(const T& v) {
        static_assert(std::is_trivially_copyable_v<T>);
        out.append(reinterpret_cast<const char*>(&v), sizeof v);
    }
    void string(const std::string& s) {
        value(std::uint64_t(s.size()));
        out += s;
    }
    template <class T> void values(const std::vector<T>& v) {
        value(std::uint64_t(v.size()));
        for (const T& x : v) {
            put(x);
        }
    }
    void put(const Real& x) { value(x); }
    void put(const int& x) { value(x); }
    void put(const Index& x) { value(x); }
    void put(const Vec3& x) { value(std::array<Real, 3>{x.x(), x.y(), x.z()}); }
    void put(const Quat& q) { value(std::array<Real, 4>{q.w(), q.x(), q.y(), q.z()}); }
    void put(const Triangle& t) { value(t); }
    void put(const Affine3& a) {
        for (int r = 0; r < 3; ++r) {
            for (int c = 0; c < 4; ++c) {
                value(a.matrix()(r, c));
            }
        }
    }
    std::string out;
};

class Reader {
public:
    explicit Reader(const std::string& bytes)
        : in(bytes) {}
    template <class T> bool value(T& v) { return in.read(v); }
    bool string(std::string& s) { return in.readString(s); }
    template <class T> bool values(std::vector<T>& v, std::size_t bytesEach) {
        std::uint64_t n = 0;
        if (!value(n) || n > in.remaining() / bytesEach) {
            return false;
        }
        v.resize(std::size_t(n));
        for (T& x : v) {
            if (!get(x)) {
                return false;
            }
        }
        return true;
    }
    bool get(Real& x) { return value(x); }
    bool get(int& x) { return value(x); }
    bool get(Index& x) { return value(x); }
    bool get(Triangle& t) { return value(t); }
    bool get(Vec3& x) {
        std::array<Real, 3> a;
        if (!value(a)) {
            return false;
        }
        x = Vec3(a[0], a[1], a[2]);
        return true;
    }
    bool get(Quat& q) {
        std::array<Real, 4> a;
        if (!value(a)) {
            return false;
        }
        q = Quat(a[0], a[1], a[2], a[3]);
        return true;
    }
    bool get(Affine3& m) {
        m = Affine3::Identity();
        for (int r = 0; r < 3; ++r) {
            for (int c = 0; c < 4; ++c) {
                if (!value(m.matrix()(r, c))) {
                    return false;
                }
            }
        }
        return true;
    }
    ResultReader in;
};

} // namespace

std::string encodeCharacter(const Character& c) {
    Writer w;
    w.string(c.name);
    w.string(c.source);
    w.value(std::uint64_t(c.nodes.size()));
    for (const CharacterNode& n : c.nodes) {
        w.string(n.name);
        w.put(n.parent);
        w.put(n.rest);
    }
    w.value(std::uint64_t(c.clips.size()));
    for (const AnimationClip& clip : c.clips) {
        w.string(clip.name);
        w.put(clip.duration);
        w.value(std::uint64_t(clip.tracks.size()));
        for (const NodeTrack& t : clip.tracks) {
            w.put(t.node);
            w.values(t.positionTimes);
            w.values(t.positions);
            w.values(t.rotationTimes);
            w.values(t.rotations);
            w.values(t.scaleTimes);
            w.values(t.scales);
        }
    }
    w.value(std::uint64_t(c.meshes.size()));
    for (const CharacterMesh& m : c.meshes) {
        w.string(m.name);
        w.put(m.node);
        w.values(m.vertices);
        w.values(m.triangles);
        w.value(std::uint64_t(m.bones.size()));
        for (const SkinBone& b : m.bones) {
            w.put(b.node);
            w.put(b.offset);
        }
        w.values(m.weightStart);
        w.values(m.weightBone);
        w.values(m.weight);
    }
    w.put(c.placement);
    w.put(c.clip);
    w.put(c.start);
    w.put(c.speed);
    w.put(c.end);
    w.value(std::int32_t(c.wrap == ClipWrap::Loop ? 0 : 1));
    w.put(c.subdivisions);
    w.put(c.collider);
    return std::move(w.out);
}

Result<Character> decodeCharacter(const std::string& bytes) {
    Reader r(bytes);
    Character c;
    const Error truncated{"the character data is truncated"};
    std::uint64_t n = 0;
    if (!r.string(c.name) || !r.string(c.source) || !r.value(n) || n > r.in.remaining() / 104) {
        return truncated;
    }
    c.nodes.resize(std::size_t(n));
    for (CharacterNode& node : c.nodes) {
        if (!r.string(node.name) || !r.get(node.parent) || !r.get(node.rest)) {
            return truncated;
        }
    }
    if (!r.value(n) || n > r.in.remaining() / 24) {
        return truncated;
    }
    c.clips.resize(std::size_t(n));
    for (AnimationClip& clip : c.clips) {
        if (!r.string(clip.name) || !r.get(clip.duration) || !r.value(n) ||
            n > r.in.remaining() / 52) {
            return truncated;
        }
        clip.tracks.resize(std::size_t(n));
        for (NodeTrack& t : clip.tracks) {
            if (!r.get(t.node) || !r.values(t.positionTimes, 8) || !r.values(t.positions, 24) ||
                !r.values(t.rotationTimes, 8) || !r.values(t.rotations, 32) ||
                !r.values(t.scaleTimes, 8) || !r.values(t.scales, 24)) {
                return truncated;
            }
        }
    }
    if (!r.value(n) || n > r.in.remaining() / 52) {
        return truncated;
    }
    c.meshes.resize(std::size_t(n));
    for (CharacterMesh& m : c.meshes) {
        if (!r.string(m.name) || !r.get(m.node) || !r.values(m.vertices, 24) ||
            !r.values(m.triangles, 12) || !r.value(n) || n > r.in.remaining() / 100) {
            return truncated;
        }
        m.bones.resize(std::size_t(n));
        for (SkinBone& b : m.bones) {
            if (!r.get(b.node) || !r.get(b.offset)) {
                return truncated;
            }
        }
        if (!r.values(m.weightStart, 4) || !r.values(m.weightBone, 4) || !r.values(m.weight, 8)) {
            return truncated;
        }
    }
    std::int32_t wrap = 0;
    if (!r.get(c.placement) || !r.get(c.clip) || !r.get(c.start) || !r.get(c.speed) ||
        !r.get(c.end) || !r.value(wrap) || !r.get(c.subdivisions) || !r.get(c.collider)) {
        return truncated;
    }
    c.wrap = wrap == 0 ? ClipWrap::Loop : ClipWrap::Clamp;
    if (std::string problem = checkCharacter(c); !problem.empty()) {
        return Error{problem};
    }
    refineCharacter(c);
    return c;
}

const std::vector<std::string>& supportedCharacterExtensions() {
    static const std::vector<std::string> extensions = {".gltf", ".glb",     ".fbx", ".dae",
                                                        ".x",    ".md5mesh", ".smd", ".ms3d",
                                                        ".b3d",  ".iqm",     ".ogex"};
    return extensions;
}

namespace {

std::string encodeResult(const Result<ImportedCharacter>& read) {
    Writer w;
    w.value(char(read ? 1 : 0));
    if (!read) {
        w.string(read.error());
        return std::move(w.out);
    }
    w.string(encodeCharacter(read->character));
    w.value(std::uint64_t(read->warnings.size()));
    for (const std::string& s : read->warnings) {
        w.string(s);
    }
    return std::move(w.out);
}

Result<ImportedCharacter> decodeResult(const std::string& bytes) {
    Reader r(bytes);
    char ok = 0;
    std::string text;
    if (!r.value(ok) || !r.string(text)) {
        return Error{"assimp returned a truncated character"};
    }
    if (ok == 0) {
        return Error{text};
    }
    Result<Character> c = decodeCharacter(text);
    if (!c) {
        return Error{c.error()};
    }
    ImportedCharacter result;
    result.character = std::move(c).value();
    std::uint64_t n = 0;
    if (!r.value(n) || n > r.in.remaining() / 8) {
        return Error{"assimp returned a truncated character"};
    }
    result.warnings.resize(std::size_t(n));
    for (std::string& s : result.warnings) {
        if (!r.string(s)) {
            return Error{"assimp returned a truncated character"};
        }
    }
    return result;
}

} // namespace

Result<ImportedCharacter> readCharacterUncontained(const fs::path& path) {
    if (lowerExtension(path) == ".glb") {
        if (const std::string problem = glbProblem(path); !problem.empty()) {
            return Error{problem};
        }
    }
    return readWithAssimp(path);
}

Result<ImportedCharacter> importCharacter(const fs::path& path, const std::string& edits,
                                          const ImportOptions& options,
                                          const ProgressCallback& progress) {
    if (std::string problem = openProblem(path); !problem.empty()) {
        return Error{problem};
    }
    const std::string ext = lowerExtension(path);
    const auto& known = supportedCharacterExtensions();
    if (std::find(known.begin(), known.end(), ext) == known.end()) {
        return Error{"cannot read a character from '" + path.string() + "': unsupported format '" +
                     ext +
                     "' (skinned meshes come as .gltf, .glb, .fbx, .dae, .x, .md5mesh, "
                     ".smd, .ms3d, .b3d, .iqm or .ogex)"};
    }
    if (ext == ".glb") {
        if (const std::string problem = glbProblem(path); !problem.empty()) {
            return Error{problem};
        }
    }
    Result<std::string> bytes = readContainedBytes(
        path, options, progress, "assimp", [&] { return encodeResult(readWithAssimp(path)); });
    if (!bytes) {
        return Error{bytes.error()};
    }
    Result<ImportedCharacter> result = decodeResult(*bytes);
    if (!result) {
        return result;
    }
    if (options.scale != 1.0 && options.scale > 0) {
        result->character.placement.prescale(options.scale);
    }
    if (std::string problem = editCharacter(result->character, edits); !problem.empty()) {
        return Error{problem};
    }
    return result;
}

Result<int> addCharacterFromSpec(Scene& scene, const std::string& spec,
                                 const ProgressCallback& progress,
                                 std::vector<std::string>* warnings) {
    const std::size_t comma = spec.find(',');
    const std::string file = spec.substr(0, comma);
    std::vector<std::pair<std::string, std::string>> items;
    std::string bad;
    if (comma != std::string::npos && !splitKeyValues(spec.substr(comma + 1), items, bad)) {
        return Error{"character edit '" + bad + "' is not KEY=VALUE"};
    }
    Real friction = 0.5;
    std::string edits;
    for (const auto& [key, value] : items) {
        if (key == "friction") {
            if (!parseReal(value, friction) || friction < 0) {
                return Error{"character friction cannot be '" + value + "' (a number >= 0)"};
            }
            continue;
        }
        edits += (edits.empty() ? "" : ",") + key + "=" + value;
    }
    Result<ImportedCharacter> read = importCharacter(file, edits, {}, progress);
    if (!read) {
        return Error{read.error()};
    }
    if (warnings != nullptr) {
        *warnings = read->warnings;
    }
    return addCharacter(scene, std::move(read->character), friction);
}

} // namespace pbd
