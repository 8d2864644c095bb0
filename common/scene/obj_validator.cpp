#include "common/scene/obj_validator.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/base/error.h"
#include "common/scene/triangle_mesh.h"

namespace tessera {
namespace {

struct Cursor {
  const char* p;
  const char* end;
  void skip_spaces() {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) ++p;
  }
  bool at_end() {
    skip_spaces();
    return p >= end;
  }
  std::string_view token() {
    skip_spaces();
    const char* start = p;
    while (p < end && *p != ' ' && *p != '\t' && *p != '\r') ++p;
    return {start, size_t(p - start)};
  }
};

[[noreturn]] void fail(const std::string& file, size_t line, const std::string& what) {
  throw Error(file + ":" + std::to_string(line) + ": " + what);
}

// Plain decimals ("-1.25", "3", ".5"): all a mesh file normally holds, and finite within the
// 64 characters allowed. Anything else (exponents, inf, hex) goes through strtod.
bool is_plain_decimal(std::string_view token) {
  size_t i = token[0] == '-' || token[0] == '+' ? 1 : 0;
  bool digits = false, point = false;
  for (; i < token.size(); ++i) {
    const char c = token[i];
    if (c >= '0' && c <= '9')
      digits = true;
    else if (c == '.' && !point)
      point = true;
    else
      return false;
  }
  return digits;
}

// Only whether the token is a number and its value is finite matter to the validator.
bool parse_finite_float(std::string_view token, bool& finite) {
  if (token.empty() || token.size() > 64) return false;
  if (is_plain_decimal(token)) {
    finite = true;
    return true;
  }
  char buffer[65];
  token.copy(buffer, token.size());
  buffer[token.size()] = 0;
  char* end = nullptr;
  errno = 0;
  finite = std::isfinite(std::strtod(buffer, &end));
  return end == buffer + token.size();
}

bool parse_int(std::string_view token, long& value) {
  if (token.empty() || token.size() > 20) return false;
  // Up to 18 digits, optionally negative, cannot overflow: the common case, without strtol.
  const size_t first = token[0] == '-' ? 1 : 0;
  if (token.size() > first && token.size() - first <= 18 &&
      std::all_of(token.begin() + first, token.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    long v = 0;
    for (size_t i = first; i < token.size(); ++i) v = 10 * v + (token[i] - '0');
    value = first ? -v : v;
    return true;
  }
  char buffer[21];
  token.copy(buffer, token.size());
  buffer[token.size()] = 0;
  char* end = nullptr;
  value = std::strtol(buffer, &end, 10);
  return end == buffer + token.size();
}

// Checks one index of a face corner against the number of records defined so far
// (OBJ indices are 1-based, negative ones count back from the latest record).
void check_index(std::string_view token, size_t count, const char* what, const std::string& file, size_t line) {
  long index = 0;
  if (!parse_int(token, index) || index == 0) fail(file, line, std::string("bad ") + what + " index '" + std::string(token) + "'");
  const long resolved = index > 0 ? index : long(count) + index + 1;
  if (resolved < 1 || resolved > long(count))
    fail(file, line, std::string(what) + " index " + std::to_string(index) + " out of range (" + std::to_string(count) + " defined so far)");
}

}  // namespace

void validate_obj_text(std::string_view text, const std::string& file) {
  size_t positions = 0, texcoords = 0, normals = 0, line = 0;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    const char* eol = static_cast<const char*>(std::memchr(p, '\n', size_t(end - p)));
    if (!eol) eol = end;
    ++line;
    Cursor c{p, eol};
    p = eol + 1;
    const std::string_view keyword = c.token();
    if (keyword.empty() || keyword[0] == '#') continue;
    if (keyword == "v" || keyword == "vn" || keyword == "vt") {
      const int needed = keyword == "vt" ? 1 : 3;  // vt may have 1-3 components
      int read = 0;
      while (!c.at_end()) {
        const std::string_view token = c.token();
        if (token[0] == '#') break;
        bool finite = false;
        if (!parse_finite_float(token, finite)) fail(file, line, "'" + std::string(token) + "' is not a number");
        if (!finite) fail(file, line, std::string(keyword) + " has a non-finite coordinate");
        ++read;
      }
      if (read < needed) fail(file, line, std::string(keyword) + " needs " + std::to_string(needed) + " coordinates");
      if (keyword == "v")
        ++positions;
      else if (keyword == "vn")
        ++normals;
      else
        ++texcoords;
    } else if (keyword == "f") {
      int corners = 0;
      while (!c.at_end()) {
        const std::string_view corner = c.token();
        if (corner[0] == '#') break;
        // v, v/vt, v//vn or v/vt/vn
        const size_t s1 = corner.find('/');
        check_index(corner.substr(0, s1), positions, "vertex", file, line);
        if (s1 != std::string_view::npos) {
          const std::string_view rest = corner.substr(s1 + 1);
          const size_t s2 = rest.find('/');
          const std::string_view vt = rest.substr(0, s2);
          if (!vt.empty()) check_index(vt, texcoords, "texcoord", file, line);
          if (s2 != std::string_view::npos) check_index(rest.substr(s2 + 1), normals, "normal", file, line);
        }
        if (size_t(++corners) > kMaxPolygonVertices)
          fail(file, line, "a face has more than " + std::to_string(kMaxPolygonVertices) + " vertices");
      }
      if (corners < 3) fail(file, line, "a face needs at least 3 vertices");
    }
    // Other statements (g, o, s, usemtl, mtllib, l, p, ...) are left to tinyobjloader.
  }
}

}  // namespace tessera
