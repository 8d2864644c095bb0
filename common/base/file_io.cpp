#include "common/base/file_io.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/error.h"
#include "common/base/temporary_files.h"

namespace tessera {
namespace {

std::string describe_errno() { return std::strerror(errno); }

}  // namespace

std::vector<uint8_t> read_file_bytes(const std::filesystem::path& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) throw Error("cannot open '" + path.string() + "': " + describe_errno());
  std::vector<uint8_t> bytes;
  uint8_t buffer[1 << 16];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, file)) > 0) bytes.insert(bytes.end(), buffer, buffer + got);
  const bool failed = std::ferror(file);
  std::fclose(file);
  if (failed) throw Error("cannot read '" + path.string() + "': " + describe_errno());
  return bytes;
}

std::string read_file_text(const std::filesystem::path& path) {
  std::vector<uint8_t> bytes = read_file_bytes(path);
  return std::string(bytes.begin(), bytes.end());
}

void write_all(std::FILE* file, const void* data, size_t size) {
  if (size && std::fwrite(data, 1, size, file) != size) throw Error("write failed: " + describe_errno());
}

// The rename replaces whatever `path` names: refuse anything but a regular file (a device, a
// pipe, a socket or a folder must never be swapped for our output).
void refuse_non_regular_output(const std::filesystem::path& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw Error("cannot write '" + path.string() + "': it exists and is not a regular file");
}

std::FILE* create_new_file(const std::filesystem::path& path, unsigned permissions) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode_t(permissions));
  std::FILE* file = fd >= 0 ? ::fdopen(fd, "wb") : nullptr;
  if (!file) {
    const std::string why = describe_errno();
    if (fd >= 0) {
      ::close(fd);
      std::error_code ec;
      std::filesystem::remove(path, ec);
    }
    throw Error("cannot create '" + path.string() + "': " + why);
  }
  return file;
}

void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::FILE*)>& write) {
  const auto refuse_special = [&] { refuse_non_regular_output(path); };
  refuse_special();
  static std::atomic<unsigned> counter{0};
  const std::filesystem::path temp =
      path.string() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  std::FILE* file = create_new_file(temp, 0666);
  const TemporaryFileRecord interrupted_removes(temp);
  try {
    write(file);
    if (std::fflush(file) != 0 || ::fsync(::fileno(file)) != 0)
      throw Error("cannot write '" + path.string() + "': " + describe_errno());
  } catch (...) {
    std::fclose(file);
    std::filesystem::remove(temp);
    throw;
  }
  if (std::fclose(file) != 0) {
    std::filesystem::remove(temp);
    throw Error("cannot write '" + path.string() + "': " + describe_errno());
  }
  std::error_code ec;
  try {
    refuse_special();  // again: it may have appeared while we wrote
  } catch (...) {
    std::filesystem::remove(temp, ec);
    throw;
  }
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::filesystem::remove(temp);
    throw Error("cannot write '" + path.string() + "': " + ec.message());
  }
}

void write_file_atomically(const std::filesystem::path& path, const void* data, size_t size) {
  write_file_atomically(path, [&](std::FILE* file) { write_all(file, data, size); });
}

}  // namespace tessera
