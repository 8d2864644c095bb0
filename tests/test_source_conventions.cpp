// Rules of the source tree that the compiler cannot see on its own.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "test_helpers.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

// Asio picks its handler allocator (aligned_alloc or operator new) per translation unit by include
// order; only common/net/asio.h makes every unit pick the same one (see there). A unit including
// <asio.hpp> itself can allocate with one and free with the other.
TEST(SourceConventions, AsioComesOnlyThroughItsWrapper) {
  const std::regex direct_include(R"(#\s*include\s*<asio[./])");
  std::vector<std::string> offenders;
  size_t scanned = 0;
  for (const char* folder : {"common", "master", "worker", "deploy", "scene-packer", "tests", "fuzz"}) {
    const fs::path root = testing::source_dir() / folder;
    if (!fs::exists(root)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      const auto extension = entry.path().extension();
      if (!entry.is_regular_file() || (extension != ".h" && extension != ".cpp")) continue;
      if (entry.path() == testing::source_dir() / "common/net/asio.h") continue;
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      ++scanned;
      if (std::regex_search(text.str(), direct_include)) offenders.push_back(entry.path().string());
    }
  }
  EXPECT_GT(scanned, 100u);
  EXPECT_TRUE(offenders.empty()) << "include \"common/net/asio.h\" instead of asio in: " << ::testing::PrintToString(offenders);
}

}  // namespace
}  // namespace tessera
