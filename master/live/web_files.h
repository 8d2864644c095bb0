#pragma once
// The page's files (master/web/), embedded into the binary at build time (master/web/embed_web.cmake),
// so tessera-master serves its page from anywhere without files beside it.
#include <string_view>

namespace tessera::master::live {

struct WebFile {
  std::string_view path;          // "/index.html", "/app.js", ...
  std::string_view content;
  std::string_view content_type;  // from the file's extension
};

// nullptr when there is no such file.
const WebFile* find_web_file(std::string_view path);

}  // namespace tessera::master::live
