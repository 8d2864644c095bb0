#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <csignal>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/base/frame_memory.h"
#include "common/base/hash.h"
#include "common/base/temporary_files.h"
#include "common/base/zstd_codec.h"

namespace tessera {
namespace {

TEST(ZstdCodec, RoundTripsAndRejectsWrongSize) {
  std::vector<uint8_t> raw(10000);
  for (size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<uint8_t>(i * 7 % 13);
  const auto packed = zstd_compress(raw, 3);
  EXPECT_LT(packed.size(), raw.size());
  EXPECT_EQ(zstd_decompress(packed, raw.size()), raw);
  EXPECT_THROW(zstd_decompress(packed, raw.size() + 1), Error);
  std::vector<uint8_t> garbage(64, 0xAB);
  EXPECT_THROW(zstd_decompress(garbage, 10), Error);
}

TEST(FileIo, AtomicWriteLeavesNothingOnFailure) {
  const auto dir = std::filesystem::temp_directory_path() / "tessera_test_atomic";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto target = dir / "out.bin";
  EXPECT_THROW(write_file_atomically(target, [](std::FILE*) { throw Error("boom"); }), Error);
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  const char text[] = "hello";
  write_file_atomically(target, text, 5);
  EXPECT_EQ(read_file_text(target), "hello");
  EXPECT_THROW(read_file_bytes(dir / "missing"), Error);
  std::filesystem::remove_all(dir);
}

// A program interrupted while it writes (Ctrl-C in tessera-pack) removes its temporary file and still
// ends by the signal.
TEST(FileIo, InterruptedWriteRemovesItsTemporaryFile) {
  const auto dir = std::filesystem::temp_directory_path() / "tessera_test_interrupted";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      remove_temporary_files_on_signal();
      write_file_atomically(dir / "out.tpk", [&](std::FILE* file) {
        std::fputs("half", file);
        std::fflush(file);
        std::raise(signal_number);
      });
      ::_exit(0);  // not reached: the signal ends the child
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == signal_number) << status;
    EXPECT_TRUE(std::filesystem::is_empty(dir)) << signal_number;
  }
  std::filesystem::remove_all(dir);
}

// A transient (a held pose's accumulation, a slow link's backlog) freed under
// keep_frame_buffers_resident stays resident until release_free_heap_memory gives it back.
TEST(FrameMemory, ReleaseGivesAFreedTransientBackToTheSystem) {
#if defined(__SANITIZE_ADDRESS__) || !defined(__GLIBC__)
  GTEST_SKIP() << "glibc's allocator only (the sanitizers bring their own)";
#endif
  keep_frame_buffers_resident();
  constexpr size_t kTransient = 48u << 20;  // under the 64 MiB mmap threshold: from the heap
  {
    auto transient = std::make_unique<char[]>(kTransient);
    std::memset(transient.get(), 1, kTransient);
    auto pinned = std::make_unique<char[]>(4096);  // a live block above it, as a running session has
    std::memset(pinned.get(), 2, 4096);
    transient.reset();
    EXPECT_GE(release_free_heap_memory(), kTransient - (8u << 20));
  }
  EXPECT_LT(release_free_heap_memory(), kTransient / 2);  // nothing left to give back
}

TEST(Hash, StableAndSensitive) {
  const char a[] = "tessera";
  EXPECT_EQ(hash64(a, 7), hash64(a, 7));
  EXPECT_NE(hash64(a, 7), hash64(a, 6));
  EXPECT_EQ(hash64_hex(0x1234).size(), 16u);
}

TEST(FileIo, AtomicWriteRefusesToReplaceSpecialFiles) {
  const auto dir = std::filesystem::temp_directory_path() / ("tessera_test_special_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto fifo = dir / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::filesystem::create_directories(dir / "folder");
  for (const auto& target : {fifo, dir / "folder"}) {
    try {
      write_file_atomically(target, "png", 3);
      ADD_FAILURE() << "replaced " << target;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
  EXPECT_TRUE(std::filesystem::is_directory(dir / "folder"));
  // Nothing but the two targets is left behind, and a regular file is still replaced.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()), 2);
  write_file_atomically(dir / "plain", "a", 1);
  write_file_atomically(dir / "plain", "bc", 2);
  EXPECT_EQ(read_file_text(dir / "plain"), "bc");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessera
