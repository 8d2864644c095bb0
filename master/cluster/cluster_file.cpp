#include "master/cluster/cluster_file.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <set>

#include "common/base/error.h"
#include "common/base/file_io.h"

namespace tessera::master {
namespace {

class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
    if (first.empty()) first = std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message;
  }
  std::string first;
};

std::string absolute_beside(const std::filesystem::path& file, const std::string& path) {
  if (path.empty()) return path;
  const std::filesystem::path p(path);
  return (p.is_absolute() ? p : std::filesystem::absolute(file).parent_path() / p).lexically_normal().string();
}

// Tabs and newlines would break the line format; nothing legitimate contains them.
void check_field(const std::filesystem::path& file, const std::string& what, const std::string& value) {
  if (value.find_first_of("\t\n\r") != std::string::npos)
    throw Error(file.string() + ": " + what + " must not contain tabs or line breaks");
}

}  // namespace

ClusterFileContents read_cluster_file(const std::filesystem::path& path) {
  std::string text;
  try {
    text = read_file_text(path);
  } catch (const std::exception& e) {
    throw Error("cannot read the cluster file: " + std::string(e.what()));
  }
  ClusterFileContents out;
  google::protobuf::TextFormat::Parser parser;
  FirstErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, &out.file))
    throw Error(path.string() + ":" + (errors.first.empty() ? std::string("cannot parse the cluster file") : errors.first));
  auto& f = out.file;
  if (f.secret_file().empty()) throw Error(path.string() + ": secret_file is missing");
  f.set_secret_file(absolute_beside(path, f.secret_file()));
  f.set_scene(absolute_beside(path, f.scene()));
  check_field(path, "secret_file", f.secret_file());
  check_field(path, "scene", f.scene());
  check_field(path, "remote_dir", f.remote_dir());
  std::set<std::string> seen;
  for (int i = 0; i < f.worker_size(); ++i) {
    const auto& w = f.worker(i);
    const std::string what = "worker " + std::to_string(i + 1);
    if (w.address().empty()) throw Error(path.string() + ": " + what + " has no address");
    net::HostPort a;
    try {
      a = net::parse_host_port(w.address(), what + " address");
    } catch (const Error& e) {
      throw Error(path.string() + ": " + e.what());
    }
    if (!seen.insert(a.text()).second) throw Error(path.string() + ": worker " + a.text() + " is listed twice");
    for (const std::string* field : {&w.ssh(), &w.device(), &w.name()}) check_field(path, what, *field);
    for (const auto& arg : w.args()) check_field(path, what + " args", arg);
    out.workers.push_back(a);
  }
  return out;
}

std::string cluster_file_as_lines(const ClusterFileContents& contents) {
  const auto& f = contents.file;
  std::string out = "secret_file\t" + f.secret_file() + "\n";
  out += "scene\t" + f.scene() + "\n";
  out += "remote_dir\t" + (f.remote_dir().empty() ? std::string("tessera-worker") : f.remote_dir()) + "\n";
  for (int i = 0; i < f.worker_size(); ++i) {
    const auto& w = f.worker(i);
    const auto& a = contents.workers[size_t(i)];
    out += "worker\t" + a.text() + "\t" + (w.ssh().empty() ? a.host : w.ssh()) + "\t" + (w.device().empty() ? "auto" : w.device()) +
           "\t" + (w.name().empty() ? "-" : w.name());
    for (const auto& arg : w.args()) out += "\t" + arg;
    out += "\n";
  }
  return out;
}

}  // namespace tessera::master
