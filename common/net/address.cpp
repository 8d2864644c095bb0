#include "common/net/address.h"

#include <sstream>

#include "common/base/error.h"
#include "common/base/file_io.h"

namespace tessera::net {

std::string HostPort::text() const {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

HostPort parse_host_port(const std::string& text, const std::string& what, bool allow_port_zero) {
  const auto bad = [&](const std::string& why) { return Error("bad " + what + " '" + text + "': " + why); };
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) throw bad("expected HOST:PORT");
  HostPort result;
  result.host = text.substr(0, colon);
  if (result.host.size() >= 2 && result.host.front() == '[' && result.host.back() == ']')
    result.host = result.host.substr(1, result.host.size() - 2);
  if (result.host.empty()) throw bad("no host before the ':'");
  const std::string port = text.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos)
    throw bad("the port must be a number");
  const unsigned long value = std::stoul(port);
  if (value > 65535 || (value == 0 && !allow_port_zero))
    throw bad(allow_port_zero ? "the port must lie in 0..65535 (0: any free port)" : "the port must lie in 1..65535");
  result.port = uint16_t(value);
  return result;
}

std::vector<HostPort> parse_host_port_list(const std::string& text, const std::string& what) {
  std::vector<HostPort> list;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    if (item.empty()) throw Error("bad " + what + " '" + text + "': empty entry");
    list.push_back(parse_host_port(item, what));
  }
  if (list.empty()) throw Error(what + " names no worker");
  return list;
}

std::vector<HostPort> read_host_port_file(const std::filesystem::path& path) {
  std::string text;
  try {
    text = read_file_text(path);
  } catch (const std::exception& e) {
    throw Error("cannot read the workers file: " + std::string(e.what()));
  }
  std::vector<HostPort> list;
  std::stringstream stream(text);
  std::string line;
  int number = 0;
  while (std::getline(stream, line)) {
    ++number;
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const size_t last = line.find_last_not_of(" \t\r");
    list.push_back(parse_host_port(line.substr(first, last - first + 1), path.string() + " line " + std::to_string(number)));
  }
  if (list.empty()) throw Error("workers file " + path.string() + " names no worker");
  return list;
}

}  // namespace tessera::net
