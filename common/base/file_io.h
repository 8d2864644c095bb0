#pragma once
// Whole-file reads and crash-safe writes: output goes to a temporary file in the same folder and
// is renamed into place only once complete, so a failed run never leaves a half-written file.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace tessera {

std::vector<uint8_t> read_file_bytes(const std::filesystem::path& path);
std::string read_file_text(const std::filesystem::path& path);

// Calls `write` with an open stream on a temporary file, then renames it to `path`.
// On any exception the temporary file is removed and the exception propagates. An existing
// `path` that is not a regular file (a device such as /dev/full, a pipe, a folder) is an Error
// and is left as it is.
void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(std::FILE*)>& write);
void write_file_atomically(const std::filesystem::path& path, const void* data, size_t size);

// The check write_file_atomically makes, for a program to fail before its work rather than after:
// an Error when `path` exists and is not a regular file.
void refuse_non_regular_output(const std::filesystem::path& path);

// Creates `path` for writing, which must not exist yet: O_EXCL, so never through a file or link
// that is already there, and with `permissions` (before the umask). For temporary files written
// bit by bit and renamed into place later. An Error says why it could not be created.
std::FILE* create_new_file(const std::filesystem::path& path, unsigned permissions);

// fwrite that throws on a short write (disk full, closed pipe).
void write_all(std::FILE* file, const void* data, size_t size);

}  // namespace tessera
