#include "common/scene/ply_reader.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "common/base/error.h"
#include "common/base/file_io.h"

namespace tessera {
namespace {

enum class Type { Int8, Uint8, Int16, Uint16, Int32, Uint32, Float32, Float64 };

Type parse_type(const std::string& name, const std::string& where) {
  if (name == "char" || name == "int8") return Type::Int8;
  if (name == "uchar" || name == "uint8") return Type::Uint8;
  if (name == "short" || name == "int16") return Type::Int16;
  if (name == "ushort" || name == "uint16") return Type::Uint16;
  if (name == "int" || name == "int32") return Type::Int32;
  if (name == "uint" || name == "uint32") return Type::Uint32;
  if (name == "float" || name == "float32") return Type::Float32;
  if (name == "double" || name == "float64") return Type::Float64;
  throw Error(where + ": unknown PLY type '" + name + "'");
}

size_t type_size(Type t) {
  switch (t) {
    case Type::Int8: case Type::Uint8: return 1;
    case Type::Int16: case Type::Uint16: return 2;
    case Type::Int32: case Type::Uint32: case Type::Float32: return 4;
    case Type::Float64: return 8;
  }
  return 0;
}

struct Property {
  std::string name;
  Type type = Type::Float32;
  bool is_list = false;
  Type count_type = Type::Uint8;
};

struct Element {
  std::string name;
  size_t count = 0;
  std::vector<Property> properties;
};

// Reads values either from ASCII tokens or from little-endian binary.
class ValueReader {
 public:
  ValueReader(std::span<const uint8_t> data, size_t pos, bool binary, std::string file)
      : data_(data), pos_(pos), binary_(binary), file_(std::move(file)) {}

  double read(Type t) {
    if (!binary_) return read_ascii();
    const size_t n = type_size(t);
    if (pos_ + n > data_.size()) throw Error(file_ + ": PLY data ends early");
    const uint8_t* p = data_.data() + pos_;
    pos_ += n;
    switch (t) {
      case Type::Int8: return int8_t(p[0]);
      case Type::Uint8: return p[0];
      case Type::Int16: { int16_t v; std::memcpy(&v, p, 2); return v; }
      case Type::Uint16: { uint16_t v; std::memcpy(&v, p, 2); return v; }
      case Type::Int32: { int32_t v; std::memcpy(&v, p, 4); return v; }
      case Type::Uint32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
      case Type::Float32: { float v; std::memcpy(&v, p, 4); return v; }
      case Type::Float64: { double v; std::memcpy(&v, p, 8); return v; }
    }
    return 0;
  }

 private:
  double read_ascii() {
    while (pos_ < data_.size() && std::isspace(data_[pos_])) ++pos_;
    if (pos_ >= data_.size()) throw Error(file_ + ": PLY data ends early");
    const size_t start = pos_;
    while (pos_ < data_.size() && !std::isspace(data_[pos_])) ++pos_;
    const std::string token(data_.begin() + start, data_.begin() + pos_);
    char* end = nullptr;
    const double v = std::strtod(token.c_str(), &end);
    if (end != token.c_str() + token.size()) throw Error(file_ + ": '" + token + "' is not a number");
    return v;
  }

  std::span<const uint8_t> data_;
  size_t pos_;
  bool binary_;
  std::string file_;
};

// A list length or face index read as a double: a whole number in [0, limit), else an Error.
size_t checked_count(double value, double limit, const std::string& what) {
  if (!(value >= 0 && value < limit) || value != std::floor(value)) throw Error(what);
  return size_t(value);
}

}  // namespace

TriangleMesh read_ply(const std::filesystem::path& path) { return parse_ply(read_file_bytes(path), path.string()); }

TriangleMesh parse_ply(std::span<const uint8_t> data, const std::string& file) {
  const std::string head(data.begin(), data.begin() + std::min<size_t>(data.size(), 65536));
  const size_t header_end = head.find("end_header");
  if (head.rfind("ply", 0) != 0 || header_end == std::string::npos) throw Error(file + ": not a PLY file");
  size_t body = head.find('\n', header_end);
  if (body == std::string::npos) throw Error(file + ": PLY header is not terminated");
  ++body;

  std::istringstream header(head.substr(0, header_end));
  std::vector<Element> elements;
  bool binary = false;
  std::string line;
  size_t line_no = 0;
  while (std::getline(header, line)) {
    ++line_no;
    std::istringstream words(line);
    std::string keyword;
    words >> keyword;
    const std::string where = file + ":" + std::to_string(line_no);
    if (keyword == "format") {
      std::string format;
      words >> format;
      if (format == "binary_little_endian") binary = true;
      else if (format != "ascii") throw Error(where + ": unsupported PLY format '" + format + "'");
    } else if (keyword == "element") {
      Element e;
      long long count = -1;
      words >> e.name >> count;
      if (count < 0) throw Error(where + ": bad element count");
      e.count = size_t(count);
      elements.push_back(e);
    } else if (keyword == "property") {
      if (elements.empty()) throw Error(where + ": property before any element");
      Property prop;
      std::string type;
      words >> type;
      if (type == "list") {
        std::string count_type, item_type;
        words >> count_type >> item_type;
        prop.is_list = true;
        prop.count_type = parse_type(count_type, where);
        prop.type = parse_type(item_type, where);
      } else {
        prop.type = parse_type(type, where);
      }
      words >> prop.name;
      elements.back().properties.push_back(prop);
    }
  }

  // Every record of an element takes at least one byte, so no element may count more records
  // than the file has bytes left (and one without properties would be read forever).
  for (const Element& e : elements) {
    if (e.count > 0 && e.properties.empty()) throw Error(file + ": PLY element '" + e.name + "' has no properties");
    if (e.count > data.size() - body)
      throw Error(file + ": PLY element '" + e.name + "' counts " + std::to_string(e.count) + " records, more than the file holds");
  }

  TriangleMesh mesh;
  ValueReader reader(data, body, binary, file);
  size_t vertex_count = 0;
  bool has_normals = false, has_uv = false;
  for (const Element& e : elements) {
    if (e.name == "vertex") {
      vertex_count = e.count;
      auto has = [&](const char* n) {
        for (auto& p : e.properties) if (p.name == n) return true;
        return false;
      };
      has_normals = has("nx") && has("ny") && has("nz");
      has_uv = (has("u") && has("v")) || (has("s") && has("t"));
      for (size_t i = 0; i < e.count; ++i) {
        float pos[3] = {0, 0, 0}, nrm[3] = {0, 0, 0}, uv[2] = {0, 0};
        for (const Property& p : e.properties) {
          if (p.is_list) {
            const size_t n = checked_count(reader.read(p.count_type), double(data.size()), file + ": bad PLY list length");
            for (size_t k = 0; k < n; ++k) reader.read(p.type);
            continue;
          }
          const double value = reader.read(p.type);
          const auto v = [&] {  // beyond float's range (or NaN) the conversion is undefined: refuse it
            if (!(std::fabs(value) <= double(std::numeric_limits<float>::max())))
              throw Error(file + ": vertex " + std::to_string(i) + " has a " + p.name + " that is not a finite float");
            return float(value);
          };
          if (p.name == "x") pos[0] = v();
          else if (p.name == "y") pos[1] = v();
          else if (p.name == "z") pos[2] = v();
          else if (p.name == "nx") nrm[0] = v();
          else if (p.name == "ny") nrm[1] = v();
          else if (p.name == "nz") nrm[2] = v();
          else if (p.name == "u" || p.name == "s") uv[0] = v();
          else if (p.name == "v" || p.name == "t") uv[1] = v();
        }
        for (float c : pos)
          if (!std::isfinite(c)) throw Error(file + ": vertex " + std::to_string(i) + " has a non-finite coordinate");
        mesh.positions.insert(mesh.positions.end(), pos, pos + 3);
        if (has_normals) mesh.normals.insert(mesh.normals.end(), nrm, nrm + 3);
        if (has_uv) mesh.texcoords.insert(mesh.texcoords.end(), uv, uv + 2);
      }
    } else if (e.name == "face") {
      for (size_t i = 0; i < e.count; ++i) {
        for (const Property& p : e.properties) {
          if (!p.is_list) {
            reader.read(p.type);
            continue;
          }
          const double n = reader.read(p.count_type);
          if (!(n >= 3 && n <= double(kMaxPolygonVertices)) || n != std::floor(n))
            throw Error(file + ": face " + std::to_string(i) + " has " + std::to_string(n) + " vertices (3 to " +
                        std::to_string(kMaxPolygonVertices) + ")");
          std::vector<uint32_t> corners(static_cast<size_t>(n));
          for (auto& c : corners)
            c = uint32_t(checked_count(reader.read(p.type), double(vertex_count),
                                       file + ": face " + std::to_string(i) + " has a vertex index out of range (" +
                                           std::to_string(vertex_count) + " vertices)"));
          if (p.name != "vertex_indices" && p.name != "vertex_index") continue;
          for (size_t k = 1; k + 1 < corners.size(); ++k) {
            mesh.triangles.insert(mesh.triangles.end(), {corners[0], corners[k], corners[k + 1]});
            mesh.triangle_materials.push_back(0);
          }
        }
      }
    } else {
      for (size_t i = 0; i < e.count; ++i)
        for (const Property& p : e.properties) {
          const size_t n = p.is_list ? checked_count(reader.read(p.count_type), double(data.size()), file + ": bad PLY list length") : 1;
          for (size_t k = 0; k < n; ++k) reader.read(p.type);
        }
    }
  }
  return mesh;
}

}  // namespace tessera
