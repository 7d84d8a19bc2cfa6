#pragma once
// JSON pieces shared by the project file and the cooked asset (meshing/ only, not installed):
// load errors that name the JSON path, flat arrays of vectors and elements, and the
// serialisation of colliders, rigid bodies, joints and solver settings.

#include "core/base/Result.h"
#include "core/scene/Scene.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

namespace pbd::sceneio {

// JSON as text; a string that is not valid UTF-8 (a name from a file) is written with U+FFFD
// in place of its bad bytes instead of throwing.
inline std::string dumpJson(const nlohmann::json& j, int indent = -1) {
    return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

using nlohmann::json;

// A load error with the JSON path where it happened.
struct FormatError {
    std::string message;
};

inline json vec(const Vec3& v) {
    return json::array({v.x(), v.y(), v.z()});
}

inline json flat(const std::vector<Vec3>& v) {
    json a = json::array();
    for (const Vec3& p : v) {
        a.push_back(p.x());
        a.push_back(p.y());
        a.push_back(p.z());
    }
    return a;
}

inline json flat(const Mat3& m) {
    json a = json::array();
    for (int k = 0; k < 9; ++k) {
        a.push_back(m(k % 3, k / 3));
    }
    return a;
}

template <std::size_t N> json flat(const std::vector<std::array<Index, N>>& elements) {
    json a = json::array();
    for (const auto& e : elements) {
        for (Index i : e) {
            a.push_back(i);
        }
    }
    return a;
}

template <std::size_t K> json arrays(const std::array<std::vector<Real>, K>& values) {
    json a = json::array();
    for (const auto& v : values) {
        a.push_back(v);
    }
    return a;
}

inline const json& at(const json& object, const char* key, const std::string& where) {
    if (!object.is_object() || !object.contains(key)) {
        throw FormatError{where + ": missing '" + key + "'"};
    }
    return object[key];
}

// A whole number of type T (an index, a count), checked: a negative, fractional or too large
// value is a FormatError, never a wrapped or undefined conversion.
template <class T> T wholeNumber(const json& v, const std::string& where) {
    static_assert(std::is_integral_v<T>);
    constexpr auto lo = std::numeric_limits<T>::min();
    constexpr auto hi = std::numeric_limits<T>::max();
    if (v.is_number_unsigned()) {
        const auto u = v.get<std::uint64_t>();
        if (u <= std::uint64_t(hi)) {
            return T(u);
        }
    } else if (v.is_number_integer()) {
        const auto i = v.get<std::int64_t>();
        if ((std::is_signed_v<T> || i >= 0) && i >= std::int64_t(lo) &&
            (i < 0 || std::uint64_t(i) <= std::uint64_t(hi))) {
            return T(i);
        }
    } else if (v.is_number_float()) {
        const double d = v.get<double>();
        if (d != std::floor(d)) {
            throw FormatError{where + ": expected a whole number, found " + v.dump()};
        }
        if (d >= double(lo) && d <= double(hi)) {
            return T(d);
        }
    } else {
        throw FormatError{where + ": expected a whole number"};
    }
    throw FormatError{where + ": " + v.dump() + " is out of range"};
}

// A std::vector of whole numbers (indices, groups): read element by element with wholeNumber.
template <class T> struct IsWholeNumberVector : std::false_type {};
template <class U, class A>
struct IsWholeNumberVector<std::vector<U, A>>
    : std::bool_constant<std::is_integral_v<U> && !std::is_same_v<U, bool>> {};

template <class T> T get(const json& object, const char* key, const std::string& where) {
    const json& v = at(object, key, where);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        return wholeNumber<T>(v, where + "." + key);
    } else if constexpr (IsWholeNumberVector<T>::value) {
        // Not nlohmann's conversion: 3.3e19 as an int is undefined (UBSan, fuzz_project).
        if (!v.is_array()) {
            throw FormatError{where + ": '" + key + "' has the wrong type"};
        }
        T out;
        out.reserve(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) {
            out.push_back(wholeNumber<typename T::value_type>(v[i], where + "." + key + "[" +
                                                                        std::to_string(i) + "]"));
        }
        return out;
    } else {
        try {
            return v.get<T>();
        } catch (const json::exception&) {
            throw FormatError{where + ": '" + key + "' has the wrong type"};
        }
    }
}

template <class T>
T getOr(const json& object, const char* key, T fallback, const std::string& where) {
    return object.contains(key) ? get<T>(object, key, where) : fallback;
}

inline Vec3 toVec(const json& a, const std::string& where) {
    if (!a.is_array() || a.size() != 3) {
        throw FormatError{where + ": expected 3 numbers"};
    }
    return Vec3(a[0].get<Real>(), a[1].get<Real>(), a[2].get<Real>());
}

inline std::vector<Vec3> toVecs(const json& a, const std::string& where) {
    const auto v = a.get<std::vector<Real>>();
    if (v.size() % 3 != 0) {
        throw FormatError{where + ": the number of coordinates is not a multiple of 3"};
    }
    std::vector<Vec3> out(v.size() / 3);
    for (std::size_t i = 0; i < out.size(); ++i) {
        out[i] = Vec3(v[3 * i], v[3 * i + 1], v[3 * i + 2]);
    }
    return out;
}

template <std::size_t N>
std::vector<std::array<Index, N>> toElements(const json& a, const std::string& where) {
    if (!a.is_array()) {
        throw FormatError{where + ": expected an array of indices"};
    }
    std::vector<Index> v;
    v.reserve(a.size());
    for (const json& e : a) {
        v.push_back(wholeNumber<Index>(e, where));
    }
    if (v.size() % N != 0) {
        throw FormatError{where + ": the number of indices is not a multiple of " +
                          std::to_string(N)};
    }
    std::vector<std::array<Index, N>> out(v.size() / N);
    for (std::size_t i = 0; i < out.size(); ++i) {
        for (std::size_t k = 0; k < N; ++k) {
            out[i][k] = v[N * i + k];
        }
    }
    return out;
}

template <std::size_t K>
void toArrays(const json& a, std::array<std::vector<Real>, K>& out, std::size_t size,
              const std::string& where) {
    if (!a.is_array() || a.size() != K) {
        throw FormatError{where + ": expected " + std::to_string(K) + " arrays"};
    }
    for (std::size_t k = 0; k < K; ++k) {
        out[k] = a[k].get<std::vector<Real>>();
        if (out[k].size() != size) {
            throw FormatError{where + ": array " + std::to_string(k) + " has " +
                              std::to_string(out[k].size()) + " values for " +
                              std::to_string(size) + " elements"};
        }
    }
}

template <class Enum, int Count> Enum parseEnum(const std::string& text, const std::string& where) {
    for (int i = 0; i < Count; ++i) {
        if (toString(Enum(i)) == text) {
            return Enum(i);
        }
    }
    throw FormatError{where + ": unknown value '" + text + "'"};
}

inline void checkSize(const std::vector<Real>& v, std::size_t size, const std::string& where) {
    if (v.size() != size) {
        throw FormatError{where + ": " + std::to_string(v.size()) + " values for " +
                          std::to_string(size) + " elements"};
    }
}

// A material value: a number, or "infinity" (a hard constraint's modulus; JSON has no inf).
inline json material(Real v) {
    return std::isinf(v) ? json("infinity") : json(v);
}
inline Real materialFrom(const json& v, const std::string& where) {
    if (v.is_string() && v.get<std::string>() == "infinity") {
        return std::numeric_limits<Real>::infinity();
    }
    if (!v.is_number()) {
        throw FormatError{where + ": expected a number or \"infinity\""};
    }
    return v.get<Real>();
}

json colliderToJson(const Collider& c);
Collider colliderFromJson(const json& j, const std::string& w);
json matrixJson(const Mat3& m);
Mat3 toMatrix(const json& j, const std::string& w);
json quatJson(const Quat& q);
Quat toQuat(const json& j, const std::string& w);
json rigidBodyToJson(const RigidBody& b);
RigidBody rigidBodyFromJson(const json& j, const std::string& w);
json rigidJointToJson(const RigidJoint& r);
RigidJoint rigidJointFromJson(const json& j, const std::string& w);
json rigidSettingsToJson(const RigidSettings& r);
RigidSettings rigidSettingsFromJson(const json& j, const std::string& w);
// Attachments and pressure constraints, with each one's constraint group or without (the
// cooked asset has no groups; a group array read back must match the constraints).
json attachmentsToJson(const Attachments& a, bool groups);
Attachments attachmentsFromJson(const json& j, const std::string& w);
json pressureToJson(const std::vector<PressureConstraint>& pressure, bool groups);
std::vector<PressureConstraint> pressureFromJson(const json& j, const std::string& w);
// The rigid bodies, joints and particle-to-body attachments of a scene, as the keys
// "rigidBodies", "rigidJoints" and "rigidAttachments" of `j` (none when there are no bodies).
void rigidToJson(const Scene& scene, json& j);
void rigidFromJson(const json& j, Scene& scene, const std::string& w);
// Texture coordinates per triangle corner, six numbers a triangle; read back from the key "uvs"
// of `object` for `triangles` triangles (a FormatError naming `where` when they do not fit).
json uvsToJson(const std::vector<std::array<Vec2, 3>>& uvs);
std::vector<std::array<Vec2, 3>> uvsFromJson(const json& object, std::size_t triangles,
                                             const std::string& where);
// The render meshes cages carry, as the key "embedded" of `j` (none when there are none): each
// with its rest vertices, triangles, UVs per corner, and per vertex the four particles that
// carry it ("corners") and their weights, four numbers a vertex.
void embeddedToJson(const Scene& scene, json& j);
// Characters whole (skeleton, clips, skin), so a scene file needs no other file; their
// colliders are made to move again (connectCharacters).
void charactersToJson(const Scene& scene, json& j);
void charactersFromJson(const json& j, Scene& scene, const std::string& w);
void embeddedFromJson(const json& j, Scene& scene, const std::string& w);
json solverToJson(const SolverSettings& s);
SolverSettings solverFromJson(const json& j, const std::string& w);

// The scene of a parsed project file or cooked asset; errors name `origin` and the JSON path.
Result<Scene> projectFromDocument(const json& j, const std::string& origin);
Result<Scene> cookedAssetFromDocument(const json& j, const std::string& origin);

} // namespace pbd::sceneio

namespace pbd {

// A file's text, or an error naming it.
Result<std::string> readTextFile(const std::filesystem::path& path);
// 'path', for messages.
std::string quotedPath(const std::filesystem::path& path);
// The parsed document, or "ORIGIN is not valid JSON (byte N)".
Result<nlohmann::json> parseJson(const std::string& text, const std::string& origin);

} // namespace pbd
