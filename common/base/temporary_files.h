#pragma once
// Temporary files that an interrupted program removes: write_file_atomically writes into a
// temporary file beside its output and renames it into place, so Ctrl-C during the write would leave
// that file behind. One-shot programs (tessera-pack, tessera-render) install the handler; daemons keep
// their own signal handling and only record.
#include <filesystem>

namespace tessera {

// Records `path` for as long as the object lives (up to 16 at a time; beyond that, unrecorded).
class TemporaryFileRecord {
 public:
  explicit TemporaryFileRecord(const std::filesystem::path& path);
  ~TemporaryFileRecord();
  TemporaryFileRecord(const TemporaryFileRecord&) = delete;
  TemporaryFileRecord& operator=(const TemporaryFileRecord&) = delete;

 private:
  int slot_;
};

// SIGINT, SIGTERM and SIGHUP then remove every recorded temporary file and end the program as the
// signal would have.
void remove_temporary_files_on_signal();

}  // namespace tessera
