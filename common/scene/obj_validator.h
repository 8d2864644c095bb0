#pragma once
// A strict pass over OBJ text before tinyobjloader reads it: tinyobjloader is lenient (it reads
// "v 1 x 3" as a zero), so numbers, face index ranges and NaN/Inf are checked here, and the first
// problem is reported as "file:line: what".
#include <string>
#include <string_view>

namespace tessera {

// Throws tessera::Error on the first malformed statement.
void validate_obj_text(std::string_view text, const std::string& file_name);

}  // namespace tessera
