#pragma once
// Turns a kernel entry file and the headers it includes into the single source string handed to
// clCreateProgramWithSource: the device compiler never sees the file system, so every
// `#include "kernels/..."` is replaced by the embedded file's text. `#line` directives keep
// compiler messages pointing at the real file names and line numbers.
//
// Each file is inlined once. An include that sits inside a preprocessor conditional (other than
// the file's include guard) is inlined each time it appears, since the inactive copy may be the
// first; include guards make the repeats harmless. A quoted include that is not embedded is an
// error unless it is inside a conditional (e.g. a host-only branch), where it is left as is.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::cl {

using SourceMap = std::map<std::string, std::string, std::less<>>;  // path -> text

// Every embedded kernel source, keyed by path such as "kernels/base/vec.h".
const SourceMap& embedded_source_map();

struct ResolvedSource {
  struct Origin {
    uint32_t file = 0;  // index into `files`
    uint32_t line = 0;  // 1-based; 0 for the #line directives the resolver added
  };
  std::string text;
  std::vector<std::string> files;
  std::vector<Origin> lines;  // lines[i] is where line i + 1 of `text` came from

  // "kernels/base/vec.h:12" for a line of `text`, or "" if it is out of range or one we added.
  std::string location(size_t text_line) const;
};

// Resolves includes in `source` (named `source_name` in #line directives and errors).
ResolvedSource resolve_includes(std::string_view source, std::string_view source_name,
                                const SourceMap& files = embedded_source_map());

// The embedded file `entry_path` with its includes resolved; throws Error if it is not embedded.
ResolvedSource load_kernel_source(std::string_view entry_path, const SourceMap& files = embedded_source_map());

// Some compilers ignore #line (NVIDIA reports "<kernel>:94:12: error: ..."): rewrites such
// positions in a build log to the real file and line ("broken.cl:3:12: error: ...").
std::string map_log_locations(std::string_view log, const ResolvedSource& source);

}  // namespace tessera::cl
