#include "common/cl/source_resolver.h"

#include <set>
#include <vector>

#include "common/base/error.h"
#include "common/cl/embedded_sources.h"

namespace tessera::cl {
namespace {

constexpr int kMaxIncludeDepth = 64;

struct Directive {
  std::string_view name;      // "include", "ifndef", ... ; empty if the line is no directive
  std::string_view argument;  // rest of the line, leading blanks removed
};

bool blank(char c) { return c == ' ' || c == '\t'; }

Directive parse_directive(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && blank(line[i])) ++i;
  if (i == line.size() || line[i] != '#') return {};
  ++i;
  while (i < line.size() && blank(line[i])) ++i;
  const size_t start = i;
  while (i < line.size() && ((line[i] >= 'a' && line[i] <= 'z') || line[i] == '_')) ++i;
  Directive d{line.substr(start, i - start), {}};
  while (i < line.size() && blank(line[i])) ++i;
  d.argument = line.substr(i);
  return d;
}

// The path of `#include "path"`, or empty for anything else (including <...> forms).
std::string_view quoted_include(const Directive& d) {
  if (d.name != "include" || d.argument.empty() || d.argument[0] != '"') return {};
  const size_t end = d.argument.find('"', 1);
  if (end == std::string_view::npos) return {};
  return d.argument.substr(1, end - 1);
}

std::string_view first_word(std::string_view text) {
  size_t end = 0;
  while (end < text.size() && !blank(text[end]) && text[end] != '\r' && text[end] != '/') ++end;
  return text.substr(0, end);
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// True if the file's first two directives are `#ifndef X` / `#define X`: its outermost
// conditional is then an include guard, not a real condition.
bool has_include_guard(const std::vector<std::string_view>& lines) {
  std::vector<Directive> first;
  for (std::string_view line : lines) {
    Directive d = parse_directive(line);
    if (d.name.empty()) continue;
    first.push_back(d);
    if (first.size() == 2) break;
  }
  return first.size() == 2 && first[0].name == "ifndef" && first[1].name == "define" &&
         first_word(first[0].argument) == first_word(first[1].argument);
}

std::string line_directive(size_t line, std::string_view file) {
  return "#line " + std::to_string(line) + " \"" + std::string(file) + "\"\n";
}

class Resolver {
 public:
  explicit Resolver(const SourceMap& files) : files_(files) {}

  void add(std::string_view text, std::string_view name, bool conditional, int depth) {
    if (depth > kMaxIncludeDepth) throw Error(std::string(name) + ": kernel includes nested too deeply");
    on_stack_.insert(std::string(name));
    const uint32_t file_index = static_cast<uint32_t>(out_.files.size());
    out_.files.emplace_back(name);
    const std::vector<std::string_view> lines = split_lines(text);
    const int guard_depth = has_include_guard(lines) ? 1 : 0;
    int if_depth = 0;
    emit(line_directive(1, name), {});
    for (size_t n = 0; n < lines.size(); ++n) {
      const ResolvedSource::Origin origin{file_index, static_cast<uint32_t>(n + 1)};
      const Directive d = parse_directive(lines[n]);
      if (d.name == "if" || d.name == "ifdef" || d.name == "ifndef") ++if_depth;
      if (d.name == "endif" && if_depth > 0) --if_depth;
      const std::string_view path = quoted_include(d);
      if (path.empty()) {
        emit(lines[n], origin);
        continue;
      }
      const bool inner_conditional = conditional || if_depth > guard_depth;
      const auto file = files_.find(path);
      if (file == files_.end()) {
        if (!inner_conditional)
          throw Error(std::string(name) + ":" + std::to_string(n + 1) + ": #include \"" + std::string(path) +
                      "\" is not among the embedded kernel sources (kernels/**/*.h, *.cl)");
        emit(lines[n], origin);
        continue;
      }
      if (done_.count(file->first) || on_stack_.count(file->first)) {
        emit("", origin);  // keeps line numbers of the including file
        continue;
      }
      if (!inner_conditional) done_.insert(file->first);
      add(file->second, file->first, inner_conditional, depth + 1);
      emit(line_directive(n + 2, name), {});
    }
    on_stack_.erase(std::string(name));
  }

  ResolvedSource take() { return std::move(out_); }

 private:
  // One line of output; `line` has no newline, or ends with one (line directives).
  void emit(std::string_view line, ResolvedSource::Origin origin) {
    out_.text += line;
    if (line.empty() || line.back() != '\n') out_.text += '\n';
    out_.lines.push_back(origin);
  }

  const SourceMap& files_;
  std::set<std::string, std::less<>> done_;
  std::set<std::string, std::less<>> on_stack_;
  ResolvedSource out_;
};

}  // namespace

const SourceMap& embedded_source_map() {
  static const SourceMap map = [] {
    SourceMap m;
    for (const auto& source : cl_embedded::all_sources()) m.emplace(source.path, source.text);
    return m;
  }();
  return map;
}

std::string ResolvedSource::location(size_t text_line) const {
  if (text_line == 0 || text_line > lines.size() || lines[text_line - 1].line == 0) return {};
  const Origin& origin = lines[text_line - 1];
  return files[origin.file] + ":" + std::to_string(origin.line);
}

ResolvedSource resolve_includes(std::string_view source, std::string_view source_name, const SourceMap& files) {
  Resolver resolver(files);
  resolver.add(source, source_name, false, 0);
  return resolver.take();
}

ResolvedSource load_kernel_source(std::string_view entry_path, const SourceMap& files) {
  const auto entry = files.find(entry_path);
  if (entry == files.end())
    throw Error("kernel source '" + std::string(entry_path) + "' is not embedded in this binary");
  return resolve_includes(entry->second, entry->first, files);
}

std::string map_log_locations(std::string_view log, const ResolvedSource& source) {
  static constexpr std::string_view kMarker = "<kernel>:";
  std::string out;
  size_t pos = 0;
  while (true) {
    const size_t hit = log.find(kMarker, pos);
    if (hit == std::string_view::npos) break;
    size_t end = hit + kMarker.size();
    size_t line = 0;
    while (end < log.size() && log[end] >= '0' && log[end] <= '9' && line < 100000000) line = line * 10 + (log[end++] - '0');
    const std::string location = end > hit + kMarker.size() ? source.location(line) : std::string();
    out += log.substr(pos, hit - pos);
    out += location.empty() ? log.substr(hit, end - hit) : std::string_view(location);
    pos = end;
  }
  out += log.substr(pos);
  return out;
}

}  // namespace tessera::cl
