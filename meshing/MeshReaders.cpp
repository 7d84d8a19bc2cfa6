#include "meshing/MeshReaders.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <sstream>

namespace pbd {

namespace {

// A problem at a place in the file: "cannot read 'LABEL': line 12: WHAT".
Error failure(const std::string& label, const std::string& where, const std::string& what) {
    return Error{"cannot read '" + label + "': " + (where.empty() ? "" : where + ": ") + what};
}

std::string lineAt(int line) {
    return "line " + std::to_string(line);
}

std::string byteAt(std::size_t offset) {
    return "byte " + std::to_string(offset);
}

std::string plural(std::uint64_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

// A number as text: what from_chars reads, and '+' in front; out of range is infinite (or zero
// for an underflow), as strtod has it.
bool toDouble(std::string_view t, double& value) {
    if (!t.empty() && t.front() == '+') {
        t.remove_prefix(1);
    }
    if (t.empty()) {
        return false;
    }
    const char* end = t.data() + t.size();
    const auto [ptr, ec] = std::from_chars(t.data(), end, value);
    if (ptr != end) {
        return false;
    }
    if (ec == std::errc::result_out_of_range) {
        value = std::strtod(std::string(t).c_str(), nullptr);
        return true;
    }
    return ec == std::errc();
}

bool toWhole(std::string_view t, std::int64_t& value) {
    if (!t.empty() && t.front() == '+') {
        t.remove_prefix(1);
    }
    const char* end = t.data() + t.size();
    const auto [ptr, ec] = std::from_chars(t.data(), end, value);
    return !t.empty() && ec == std::errc() && ptr == end;
}

std::string quoted(std::string_view t) {
    std::string s(t.substr(0, 40));
    for (char& c : s) {
        if (static_cast<unsigned char>(c) < 32 || static_cast<unsigned char>(c) > 126) {
            c = '?';
        }
    }
    return "'" + s + (t.size() > 40 ? "...'" : "'");
}

// ASCII data as whitespace-separated tokens, each with its line; '#' comments (OFF) skipped
// when asked.
class Tokens {
public:
    Tokens(std::string_view data, std::size_t start, int line, bool hashComments)
        : d_(data)
        , p_(start)
        , line_(line)
        , tokenLine_(line)
        , hash_(hashComments) {}

    // The next token, or empty at the end of the data.
    std::string_view next() {
        skipSpace(true);
        tokenLine_ = line_;
        const std::size_t begin = p_;
        while (p_ < d_.size() && !isSpace(d_[p_])) {
            ++p_;
        }
        return d_.substr(begin, p_ - begin);
    }
    // Whether another token follows on the current line.
    bool lineHasMore() {
        skipSpace(false);
        return p_ < d_.size() && d_[p_] != '\n' && d_[p_] != '\r' && !(hash_ && d_[p_] == '#');
    }
    // On to the start of the next line.
    void skipLine() {
        while (p_ < d_.size() && d_[p_] != '\n') {
            ++p_;
        }
        if (p_ < d_.size()) {
            ++p_;
            ++line_;
        }
    }
    int line() const { return tokenLine_; }
    std::size_t remaining() const { return d_.size() - std::min(p_, d_.size()); }

private:
    static bool isSpace(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
    }
    void skipSpace(bool crossLines) {
        while (p_ < d_.size()) {
            const char c = d_[p_];
            if (c == '\n') {
                if (!crossLines) {
                    return;
                }
                ++line_;
                ++p_;
            } else if (isSpace(c)) {
                ++p_;
            } else if (hash_ && c == '#') {
                while (p_ < d_.size() && d_[p_] != '\n') {
                    ++p_;
                }
            } else {
                return;
            }
        }
    }

    std::string_view d_;
    std::size_t p_;
    int line_;
    int tokenLine_;
    bool hash_;
};

// Triangles by vertex index, as read, before they become corners: fans of the polygons, each
// with the face it came from (for messages).
struct IndexedMesh {
    std::vector<Vec3> vertices;
    std::vector<Vec2> vertexUVs; // per vertex, or empty
    std::vector<std::array<std::int64_t, 3>> triangles;
    std::vector<std::uint64_t> triangleFace;
    std::vector<Vec2> cornerUVs;  // 3 per triangle, or empty
    std::uint64_t shortFaces = 0; // faces of fewer than three corners, skipped
};

// Checks the indices and makes the soup; the vertices no face uses are counted in a warning.
Result<MeshFileContents> soupOf(IndexedMesh& m, const std::string& label, const std::string& stem,
                                const char* faceWord) {
    MeshFileContents out;
    const std::uint64_t n = m.vertices.size();
    std::vector<char> used(n, 0);
    for (std::size_t t = 0; t < m.triangles.size(); ++t) {
        for (const std::int64_t v : m.triangles[t]) {
            if (v < 0 || std::uint64_t(v) >= n) {
                return failure(label,
                               std::string(faceWord) + " " + std::to_string(m.triangleFace[t]),
                               "refers to vertex " + std::to_string(v) + ", but the file has " +
                                   plural(n, "vertex", "vertices") + " (numbered from 0)");
            }
            used[std::size_t(v)] = 1;
        }
    }
    if (m.triangles.empty()) {
        return failure(label, "",
                       "it has no faces, only " + plural(n, "vertex", "vertices") +
                           " (a point cloud is not a surface PBD Lab can simulate)");
    }
    TriangleSoup soup;
    soup.name = stem;
    soup.corners.reserve(3 * m.triangles.size());
    const bool cornerUVs = m.cornerUVs.size() == 3 * m.triangles.size();
    const bool vertexUVs = !cornerUVs && m.vertexUVs.size() == n;
    if (cornerUVs || vertexUVs) {
        soup.uvs.reserve(3 * m.triangles.size());
    }
    for (std::size_t t = 0; t < m.triangles.size(); ++t) {
        for (int k = 0; k < 3; ++k) {
            const std::size_t v = std::size_t(m.triangles[t][std::size_t(k)]);
            soup.corners.push_back(m.vertices[v]);
            if (cornerUVs) {
                soup.uvs.push_back(m.cornerUVs[3 * t + std::size_t(k)]);
            } else if (vertexUVs) {
                soup.uvs.push_back(m.vertexUVs[v]);
            }
        }
    }
    const auto unused = std::uint64_t(std::count(used.begin(), used.end(), 0));
    if (unused > 0) {
        out.warnings.push_back("body '" + stem + "': dropped " +
                               plural(unused, "vertex", "vertices") + " that no face uses");
    }
    if (m.shortFaces > 0) {
        out.warnings.push_back("body '" + stem + "': skipped " +
                               plural(m.shortFaces, "face", "faces") +
                               " with fewer than three corners");
    }
    out.parts.push_back(std::move(soup));
    return out;
}

// A polygon of `count` corners (indices at `corners`) as a fan of triangles.
void addPolygon(IndexedMesh& m, const std::int64_t* corners, std::size_t count, std::uint64_t face,
                const Vec2* uvs) {
    if (count < 3) {
        ++m.shortFaces;
        return;
    }
    for (std::size_t k = 1; k + 1 < count; ++k) {
        m.triangles.push_back({corners[0], corners[k], corners[k + 1]});
        m.triangleFace.push_back(face);
        if (uvs != nullptr) {
            m.cornerUVs.push_back(uvs[0]);
            m.cornerUVs.push_back(uvs[k]);
            m.cornerUVs.push_back(uvs[k + 1]);
        }
    }
}

// ---- PLY -----------------------------------------------------------------------------------

enum class PlyType { Int8, UInt8, Int16, UInt16, Int32, UInt32, Float32, Float64 };

std::optional<PlyType> plyType(std::string_view name) {
    static const std::pair<std::string_view, PlyType> names[] = {
        {"char", PlyType::Int8},      {"int8", PlyType::Int8},       {"uchar", PlyType::UInt8},
        {"uint8", PlyType::UInt8},    {"short", PlyType::Int16},     {"int16", PlyType::Int16},
        {"ushort", PlyType::UInt16},  {"uint16", PlyType::UInt16},   {"int", PlyType::Int32},
        {"int32", PlyType::Int32},    {"uint", PlyType::UInt32},     {"uint32", PlyType::UInt32},
        {"float", PlyType::Float32},  {"float32", PlyType::Float32}, {"double", PlyType::Float64},
        {"float64", PlyType::Float64}};
    for (const auto& [n, t] : names) {
        if (n == name) {
            return t;
        }
    }
    return std::nullopt;
}

std::size_t plySize(PlyType t) {
    switch (t) {
    case PlyType::Int8:
    case PlyType::UInt8:
        return 1;
    case PlyType::Int16:
    case PlyType::UInt16:
        return 2;
    case PlyType::Int32:
    case PlyType::UInt32:
    case PlyType::Float32:
        return 4;
    case PlyType::Float64:
        return 8;
    }
    return 1;
}

bool plyIntegral(PlyType t) {
    return t != PlyType::Float32 && t != PlyType::Float64;
}

// What a property is to the importer.
enum class PlyRole { Other, X, Y, Z, U, V, Indices, TexCoords };

struct PlyProperty {
    std::string name;
    bool list = false;
    PlyType countType = PlyType::UInt8, type = PlyType::Float32;
    PlyRole role = PlyRole::Other;
};

struct PlyElement {
    std::string name;
    std::uint64_t count = 0;
    std::vector<PlyProperty> properties;
};

enum class PlyFormat { Ascii, BinaryLittle, BinaryBig };

// Binary values at an offset, checked against the end.
class BinaryValues {
public:
    BinaryValues(std::string_view data, std::size_t start, bool bigEndian)
        : d_(data)
        , p_(start)
        , swap_(bigEndian != (std::endian::native == std::endian::big)) {}

    bool read(PlyType t, double& value) {
        const std::size_t size = plySize(t);
        if (d_.size() - p_ < size) {
            return false;
        }
        unsigned char b[8];
        std::memcpy(b, d_.data() + p_, size);
        p_ += size;
        if (swap_) {
            std::reverse(b, b + size);
        }
        switch (t) {
        case PlyType::Int8:
            value = double(std::int8_t(b[0]));
            break;
        case PlyType::UInt8:
            value = double(b[0]);
            break;
        case PlyType::Int16:
            value = double(load<std::int16_t>(b));
            break;
        case PlyType::UInt16:
            value = double(load<std::uint16_t>(b));
            break;
        case PlyType::Int32:
            value = double(load<std::int32_t>(b));
            break;
        case PlyType::UInt32:
            value = double(load<std::uint32_t>(b));
            break;
        case PlyType::Float32:
            value = double(load<float>(b));
            break;
        case PlyType::Float64:
            value = load<double>(b);
            break;
        }
        return true;
    }
    std::string where() const { return byteAt(p_); }
    std::size_t remaining() const { return d_.size() - p_; }
    std::size_t minimumBytes(PlyType t) const { return plySize(t); }

private:
    template <class T> static T load(const unsigned char* b) {
        T v;
        std::memcpy(&v, b, sizeof v);
        return v;
    }
    std::string_view d_;
    std::size_t p_;
    bool swap_;
};

class AsciiValues {
public:
    AsciiValues(std::string_view data, std::size_t start, int line)
        : t_(data, start, line, false) {}

    bool read(PlyType, double& value) {
        const std::string_view token = t_.next();
        last_ = token;
        return toDouble(token, value);
    }
    std::string where() const { return lineAt(t_.line()); }
    std::size_t remaining() const { return t_.remaining(); }
    std::size_t minimumBytes(PlyType) const { return 2; } // a digit and a separator
    std::string_view last() const { return last_; }

private:
    Tokens t_;
    std::string_view last_;
};

template <class Values>
std::string badValue(const Values& values, const PlyElement& e, std::uint64_t item,
                     const PlyProperty& p) {
    std::string what = e.name + " " + std::to_string(item) + ", property '" + p.name + "': ";
    if constexpr (std::is_same_v<Values, AsciiValues>) {
        return what + (values.last().empty() ? "the file ends here"
                                             : "expected a number, found " + quoted(values.last()));
    } else {
        return what + "the file ends here";
    }
}

template <class Values>
Result<MeshFileContents> readPlyData(Values values, const std::vector<PlyElement>& elements,
                                     const std::string& label, const std::string& stem,
                                     double scale) {
    IndexedMesh m;
    bool sawVertices = false;
    std::vector<std::int64_t> corners;
    std::vector<Vec2> wedgeUVs;
    std::vector<double> texcoords;
    for (const PlyElement& e : elements) {
        // Before anything is allocated: can the rest of the file hold this many?
        std::size_t least = 0;
        for (const PlyProperty& p : e.properties) {
            least += values.minimumBytes(p.list ? p.countType : p.type);
        }
        if (least > 0 && e.count > values.remaining() / least) {
            return failure(label, values.where(),
                           "the header declares " + std::to_string(e.count) + " " + e.name +
                               " elements, more than the " + std::to_string(values.remaining()) +
                               " bytes left can hold (the file is truncated or corrupt)");
        }
        if (least == 0) {
            continue; // an element without properties: nothing to read, however many
        }
        const bool isVertex = e.name == "vertex";
        const bool isFace = e.name == "face";
        bool hasU = false, hasV = false;
        for (const PlyProperty& p : e.properties) {
            hasU = hasU || p.role == PlyRole::U;
            hasV = hasV || p.role == PlyRole::V;
        }
        if (isVertex) {
            if (sawVertices) {
                return failure(label, values.where(), "a second 'vertex' element");
            }
            sawVertices = true;
            m.vertices.reserve(std::size_t(e.count));
            if (hasU && hasV) {
                m.vertexUVs.reserve(std::size_t(e.count));
            }
        }
        for (std::uint64_t item = 0; item < e.count; ++item) {
            Vec3 x = Vec3::Zero();
            Vec2 uv = Vec2::Zero();
            corners.clear();
            texcoords.clear();
            bool hadIndices = false;
            for (const PlyProperty& p : e.properties) {
                double value = 0;
                if (!p.list) {
                    if (!values.read(p.type, value)) {
                        return failure(label, values.where(), badValue(values, e, item, p));
                    }
                    switch (p.role) {
                    case PlyRole::X:
                        x.x() = value * scale;
                        break;
                    case PlyRole::Y:
                        x.y() = value * scale;
                        break;
                    case PlyRole::Z:
                        x.z() = value * scale;
                        break;
                    case PlyRole::U:
                        uv.x() = value;
                        break;
                    case PlyRole::V:
                        uv.y() = value;
                        break;
                    default:
                        break;
                    }
                    continue;
                }
                double countValue = 0;
                if (!values.read(p.countType, countValue)) {
                    return failure(label, values.where(), badValue(values, e, item, p));
                }
                if (!(countValue >= 0) || countValue != std::floor(countValue) ||
                    countValue > double(values.remaining() / values.minimumBytes(p.type))) {
                    // Formatted here only: this runs for every face.
                    std::ostringstream shown;
                    shown.precision(17);
                    shown << countValue;
                    const std::string list =
                        e.name + " " + std::to_string(item) + ", list '" + p.name + "': ";
                    if (!(countValue >= 0) || countValue != std::floor(countValue)) {
                        return failure(label, values.where(),
                                       list + "expected a whole length, found " + shown.str());
                    }
                    return failure(label, values.where(),
                                   list + shown.str() + " items, more than the " +
                                       std::to_string(values.remaining()) +
                                       " bytes left can hold (the file is truncated or corrupt)");
                }
                const auto count = std::size_t(countValue);
                const bool indices = isFace && p.role == PlyRole::Indices && !hadIndices;
                const bool uvs = isFace && p.role == PlyRole::TexCoords;
                hadIndices = hadIndices || indices;
                for (std::size_t k = 0; k < count; ++k) {
                    if (!values.read(p.type, value)) {
                        return failure(label, values.where(), badValue(values, e, item, p));
                    }
                    if (indices) {
                        if (value != std::floor(value) || std::abs(value) > 9e15) {
                            return failure(label, values.where(),
                                           "face " + std::to_string(item) + ": vertex index " +
                                               std::to_string(value) + " is not a whole number");
                        }
                        corners.push_back(std::int64_t(value));
                    } else if (uvs) {
                        texcoords.push_back(value);
                    }
                }
            }
            if (isVertex) {
                m.vertices.push_back(x);
                if (hasU && hasV) {
                    m.vertexUVs.push_back(uv);
                }
            } else if (isFace) {
                // Per-corner texture coordinates (MeshLab's 'texcoord'): two per corner.
                const bool wedges = texcoords.size() == 2 * corners.size() && !corners.empty() &&
                                    (item == 0 || m.cornerUVs.size() == 3 * m.triangles.size());
                wedgeUVs.clear();
                if (wedges) {
                    for (std::size_t k = 0; k < corners.size(); ++k) {
                        wedgeUVs.emplace_back(texcoords[2 * k], texcoords[2 * k + 1]);
                    }
                } else if (!m.cornerUVs.empty()) {
                    m.cornerUVs.clear(); // not every face has them: none
                }
                addPolygon(m, corners.data(), corners.size(), item,
                           wedges ? wedgeUVs.data() : nullptr);
            }
        }
    }
    if (!sawVertices) {
        return failure(label, "", "the header declares no 'vertex' element");
    }
    return soupOf(m, label, stem, "face");
}

} // namespace

Result<MeshFileContents> parsePly(std::string_view data, const std::string& label,
                                  const std::string& stem, double scale) {
    // The header: lines up to end_header.
    std::size_t p = 0;
    int line = 0;
    std::optional<PlyFormat> format;
    std::vector<PlyElement> elements;
    bool ended = false;
    while (p < data.size() && !ended) {
        const std::size_t eol = data.find('\n', p);
        std::string_view text =
            data.substr(p, (eol == std::string_view::npos ? data.size() : eol) - p);
        p = eol == std::string_view::npos ? data.size() : eol + 1;
        ++line;
        if (!text.empty() && text.back() == '\r') {
            text.remove_suffix(1);
        }
        Tokens words(text, 0, line, false);
        const std::string_view keyword = words.next();
        if (line == 1) {
            if (keyword != "ply") {
                return failure(label, lineAt(1), "not a PLY file (it does not start with 'ply')");
            }
            continue;
        }
        if (line > 10000) {
            return failure(label, "", "no 'end_header' in the first 10000 lines");
        }
        if (keyword == "format") {
            const std::string_view kind = words.next();
            if (kind == "ascii") {
                format = PlyFormat::Ascii;
            } else if (kind == "binary_little_endian") {
                format = PlyFormat::BinaryLittle;
            } else if (kind == "binary_big_endian") {
                format = PlyFormat::BinaryBig;
            } else {
                return failure(label, lineAt(line), "unknown format " + quoted(kind));
            }
        } else if (keyword == "element") {
            PlyElement e;
            e.name = std::string(words.next());
            std::int64_t count = -1;
            if (e.name.empty() || !toWhole(words.next(), count) || count < 0) {
                return failure(label, lineAt(line),
                               "an element needs a name and a count: " + quoted(text));
            }
            e.count = std::uint64_t(count);
            elements.push_back(std::move(e));
        } else if (keyword == "property") {
            if (elements.empty()) {
                return failure(label, lineAt(line), "a property before any element");
            }
            PlyProperty prop;
            std::string_view type = words.next();
            if (type == "list") {
                prop.list = true;
                const std::optional<PlyType> countType = plyType(words.next());
                if (!countType || !plyIntegral(*countType)) {
                    return failure(label, lineAt(line),
                                   "a list's length needs an integer type: " + quoted(text));
                }
                prop.countType = *countType;
                type = words.next();
            }
            const std::optional<PlyType> t = plyType(type);
            prop.name = std::string(words.next());
            if (!t || prop.name.empty()) {
                return failure(label, lineAt(line),
                               "a property needs a known type and a name: " + quoted(text));
            }
            prop.type = *t;
            const std::string& element = elements.back().name;
            const std::string& n = prop.name;
            if (element == "vertex" && !prop.list) {
                prop.role =
                    n == "x"                                                       ? PlyRole::X
                    : n == "y"                                                     ? PlyRole::Y
                    : n == "z"                                                     ? PlyRole::Z
                    : n == "s" || n == "u" || n == "texture_u" || n == "texture_s" ? PlyRole::U
                    : n == "t" || n == "v" || n == "texture_v" || n == "texture_t" ? PlyRole::V
                                                                                   : PlyRole::Other;
            } else if (element == "face" && prop.list) {
                prop.role = n == "vertex_indices" || n == "vertex_index" ? PlyRole::Indices
                            : n == "texcoord"                            ? PlyRole::TexCoords
                                                                         : PlyRole::Other;
                if (prop.role == PlyRole::Indices && !plyIntegral(prop.type)) {
                    // Indices stored as floats are still read; whole numbers are checked.
                }
            }
            elements.back().properties.push_back(std::move(prop));
        } else if (keyword == "end_header") {
            ended = true;
        }
        // comment, obj_info and any other line (exporters write free text): nothing to read.
    }
    if (!ended) {
        return failure(label, "", "the header has no 'end_header' line");
    }
    if (!format) {
        return failure(label, "", "the header has no 'format' line");
    }
    for (const PlyElement& e : elements) {
        if (e.name == "vertex") {
            int axes = 0;
            for (const PlyProperty& prop : e.properties) {
                axes +=
                    prop.role == PlyRole::X || prop.role == PlyRole::Y || prop.role == PlyRole::Z;
            }
            if (axes != 3) {
                return failure(label, "", "the vertex element lacks an x, y or z property");
            }
        }
    }
    if (*format == PlyFormat::Ascii) {
        return readPlyData(AsciiValues(data, p, line + 1), elements, label, stem, scale);
    }
    return readPlyData(BinaryValues(data, p, *format == PlyFormat::BinaryBig), elements, label,
                       stem, scale);
}

// ---- OFF -----------------------------------------------------------------------------------

Result<MeshFileContents> parseOff(std::string_view data, const std::string& label,
                                  const std::string& stem, double scale) {
    Tokens t(data, 0, 1, true);
    const std::string_view header = t.next();
    const std::size_t off = header.rfind("OFF");
    if (off == std::string_view::npos || off + 3 != header.size() ||
        header.substr(0, off).find_first_not_of("STCN") != std::string_view::npos) {
        if (header.size() >= 3 && header.substr(header.size() - 3) == "OFF") {
            return failure(label, lineAt(t.line()),
                           "the " + quoted(header) +
                               " variant (4D or n-dimensional) is not supported");
        }
        return failure(label, lineAt(t.line()),
                       "not an OFF file (it does not start with 'OFF'), found " + quoted(header));
    }
    const bool textured = header.substr(0, off).find("ST") != std::string_view::npos;
    std::int64_t vertices = -1, faces = -1;
    std::string_view token = t.next();
    if (token == "BINARY") {
        return failure(label, lineAt(t.line()), "binary OFF is not supported");
    }
    if (!toWhole(token, vertices) || vertices < 0 || !toWhole(t.next(), faces) || faces < 0) {
        return failure(label, lineAt(t.line()),
                       "expected the vertex and face counts after '" + std::string(header) + "'");
    }
    if (t.lineHasMore()) {
        t.next(); // the edge count, which nothing needs
    }
    t.skipLine();
    // A vertex takes at least 6 bytes ("0 0 0\n"), a face at least 2 ("0\n").
    if (double(vertices) * 6 + double(faces) * 2 > double(t.remaining())) {
        return failure(label, lineAt(t.line()),
                       "the header declares " + std::to_string(vertices) + " vertices and " +
                           std::to_string(faces) + " faces, more than the file's " +
                           std::to_string(data.size()) + " bytes can hold");
    }
    IndexedMesh m;
    m.vertices.reserve(std::size_t(vertices));
    std::vector<double> extra;
    for (std::int64_t v = 0; v < vertices; ++v) {
        Vec3 x;
        for (int k = 0; k < 3; ++k) {
            const std::string_view word = t.next();
            if (!toDouble(word, x[k])) {
                return failure(label, lineAt(t.line()),
                               "vertex " + std::to_string(v) + ": " +
                                   (word.empty() ? "the file ends here"
                                                 : "expected a number, found " + quoted(word)));
            }
            x[k] *= scale;
        }
        m.vertices.push_back(x);
        if (textured) {
            // Texture coordinates are the last two numbers of the line (after normals and
            // colours, when those are there).
            extra.clear();
            while (t.lineHasMore()) {
                double value = 0;
                if (toDouble(t.next(), value)) {
                    extra.push_back(value);
                }
            }
            m.vertexUVs.push_back(extra.size() >= 2 ? Vec2(extra[extra.size() - 2], extra.back())
                                                    : Vec2::Zero());
        }
        t.skipLine();
    }
    std::vector<std::int64_t> corners;
    for (std::int64_t f = 0; f < faces; ++f) {
        std::int64_t count = -1;
        const std::string_view word = t.next();
        if (!toWhole(word, count) || count < 0) {
            return failure(label, lineAt(t.line()),
                           "face " + std::to_string(f) + ": " +
                               (word.empty() ? "the file ends here"
                                             : "expected its corner count, found " + quoted(word)));
        }
        if (std::uint64_t(count) > t.remaining() / 2) {
            return failure(label, lineAt(t.line()),
                           "face " + std::to_string(f) + " lists " + std::to_string(count) +
                               " corners, more than the file holds");
        }
        corners.clear();
        for (std::int64_t k = 0; k < count; ++k) {
            std::int64_t index = -1;
            const std::string_view w = t.next();
            if (!toWhole(w, index)) {
                return failure(label, lineAt(t.line()),
                               "face " + std::to_string(f) + ": " +
                                   (w.empty() ? "the file ends here"
                                              : "expected a vertex index, found " + quoted(w)));
            }
            corners.push_back(index);
        }
        addPolygon(m, corners.data(), corners.size(), std::uint64_t(f), nullptr);
        t.skipLine(); // a colour after the indices, as many OFF writers add
    }
    return soupOf(m, label, stem, "face");
}

// ---- STL -----------------------------------------------------------------------------------

namespace {

Result<MeshFileContents> parseBinaryStl(std::string_view data, const std::string& label,
                                        const std::string& stem, double scale) {
    if (data.size() < 84) {
        return failure(label, "",
                       "a binary STL file needs at least 84 bytes, this one has " +
                           std::to_string(data.size()));
    }
    std::uint32_t count = 0;
    std::memcpy(&count, data.data() + 80, 4);
    if constexpr (std::endian::native == std::endian::big) {
        count = __builtin_bswap32(count);
    }
    const std::uint64_t needed = 84 + 50 * std::uint64_t(count);
    MeshFileContents out;
    if (needed > data.size()) {
        return failure(label, "",
                       "it declares " + plural(count, "triangle", "triangles") + " (" +
                           std::to_string(needed) + " bytes) but has " +
                           std::to_string(data.size()) + " bytes (the file is truncated)");
    }
    if (needed < data.size()) {
        out.warnings.push_back("'" + label + "': ignored " + std::to_string(data.size() - needed) +
                               " bytes after the declared triangles");
    }
    if (count == 0) {
        return failure(label, "", "it has no triangles");
    }
    TriangleSoup soup;
    soup.name = stem;
    soup.corners.resize(3 * std::size_t(count));
    const char* at = data.data() + 84;
    for (std::size_t t = 0; t < count; ++t, at += 50) {
        float f[9];
        std::memcpy(f, at + 12, sizeof f);
        for (int c = 0; c < 3; ++c) {
            if constexpr (std::endian::native == std::endian::big) {
                for (int k = 0; k < 3; ++k) {
                    f[3 * c + k] = std::bit_cast<float>(
                        __builtin_bswap32(std::bit_cast<std::uint32_t>(f[3 * c + k])));
                }
            }
            soup.corners[3 * t + std::size_t(c)] =
                Vec3(f[3 * c], f[3 * c + 1], f[3 * c + 2]) * scale;
        }
    }
    out.parts.push_back(std::move(soup));
    return out;
}

Result<MeshFileContents> parseAsciiStl(std::string_view data, const std::string& label,
                                       const std::string& stem, double scale) {
    Tokens t(data, 0, 1, false);
    MeshFileContents out;
    std::uint64_t emptySolids = 0;
    const auto expect = [&](std::string_view word,
                            std::string_view wanted) -> std::optional<Error> {
        if (word == wanted) {
            return std::nullopt;
        }
        return failure(label, lineAt(t.line()),
                       "expected '" + std::string(wanted) + "', found " +
                           (word.empty() ? std::string("the end of the file") : quoted(word)));
    };
    std::string_view word = t.next();
    while (!word.empty()) {
        if (auto e = expect(word, "solid")) {
            return *e;
        }
        TriangleSoup soup;
        std::string name;
        while (t.lineHasMore()) {
            if (!name.empty()) {
                name += ' ';
            }
            name += t.next();
        }
        if (name.empty()) {
            name = stem;
            if (!out.parts.empty()) {
                name += '-';
                name += std::to_string(out.parts.size() + 1);
            }
        }
        soup.name = name;
        for (word = t.next(); word == "facet"; word = t.next()) {
            // facet normal nx ny nz: the normal is not needed (the winding says the same).
            t.skipLine();
            if (auto e = expect(t.next(), "outer")) {
                return *e;
            }
            if (auto e = expect(t.next(), "loop")) {
                return *e;
            }
            Vec3 corners[3];
            int count = 0;
            for (word = t.next(); word == "vertex"; word = t.next()) {
                Vec3 x;
                for (int k = 0; k < 3; ++k) {
                    const std::string_view number = t.next();
                    if (!toDouble(number, x[k])) {
                        return failure(label, lineAt(t.line()),
                                       "expected a coordinate, found " +
                                           (number.empty() ? std::string("the end of the file")
                                                           : quoted(number)));
                    }
                }
                x *= scale;
                // A loop of more than three vertices is a polygon: a fan of triangles.
                if (count < 3) {
                    corners[count++] = x;
                } else {
                    soup.corners.push_back(corners[0]);
                    soup.corners.push_back(corners[2]);
                    soup.corners.push_back(x);
                    corners[2] = x;
                    continue;
                }
                if (count == 3) {
                    soup.corners.insert(soup.corners.end(), corners, corners + 3);
                }
            }
            if (count < 3) {
                return failure(label, lineAt(t.line()),
                               "a facet with " + std::to_string(count) + " vertices");
            }
            if (auto e = expect(word, "endloop")) {
                return *e;
            }
            if (auto e = expect(t.next(), "endfacet")) {
                return *e;
            }
        }
        if (auto e = expect(word, "endsolid")) {
            return *e;
        }
        t.skipLine(); // endsolid's name
        if (soup.corners.empty()) {
            ++emptySolids;
        } else {
            out.parts.push_back(std::move(soup));
        }
        word = t.next();
    }
    if (emptySolids > 0) {
        out.warnings.push_back("'" + label + "': skipped " +
                               plural(emptySolids, "solid", "solids") + " without facets");
    }
    if (out.parts.empty()) {
        return failure(label, "", "it has no triangles");
    }
    return out;
}

} // namespace

Result<MeshFileContents> parseStl(std::string_view data, const std::string& label,
                                  const std::string& stem, double scale) {
    // Binary when the size matches the triangle count (many binary files start with "solid"
    // too); ASCII when it starts with "solid" and its start is text; binary otherwise.
    if (data.size() >= 84) {
        std::uint32_t count = 0;
        std::memcpy(&count, data.data() + 80, 4);
        if constexpr (std::endian::native == std::endian::big) {
            count = __builtin_bswap32(count);
        }
        if (84 + 50 * std::uint64_t(count) == data.size()) {
            return parseBinaryStl(data, label, stem, scale);
        }
    }
    const std::size_t first = data.find_first_not_of(" \t\r\n");
    const std::string_view start = data.substr(0, 512);
    if (first != std::string_view::npos && data.substr(first, 5) == "solid" &&
        start.find('\0') == std::string_view::npos) {
        return parseAsciiStl(data, label, stem, scale);
    }
    return parseBinaryStl(data, label, stem, scale);
}

} // namespace pbd
