// deploy/bench-latency from a deploy/make-bundle bundle: workers started, the master run per mode and
// eye layout, a results table with the stage breakdown and the pathtrace ratio to tessera-bench.
#include <gtest/gtest.h>

#include "cluster_test_support.h"

namespace tessera {
namespace {

using testing::TempDir;

TEST(BenchLatency, RunsFromABundleAndWritesTheTable) {
  TempDir dir("bench_latency");
  const auto bundle = dir / "bundle";
  const auto made = testing::run_command("TESSERA_BUILD_DIR=" + testing::binary_dir().string() + " " +
                                         (testing::source_dir() / "deploy/make-bundle").string() +
                                         " --programs tessera-pack,tessera-worker,tessera-master,tessera-bench " + bundle.string());
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const auto out = dir / "results";
  // A clean environment: only the bundle's programs and libraries.
  const auto r = testing::run_command(
      "env -i PATH=/usr/bin:/bin " + (testing::source_dir() / "deploy/bench-latency").string() + " --build " + bundle.string() +
      " --device host --workers 1 --modes raytrace,pathtrace --eyes stereo --schedules dynamic --sizes 48x32 --pt-sizes 32x32"
      " --frames 4 --warmup 1 --scene " + testing::cornell_tpk().string() + " --pt-scene " + testing::cornell_tpk().string() +
      " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string csv = read_file_text(out / "results.csv");
  EXPECT_NE(csv.find("median_latency_ms"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nraytrace,stereo,48x32,1,dynamic,host,3,"), std::string::npos) << csv;
  const auto pathtrace = csv.find("\npathtrace,stereo,32x32,1,dynamic,host,3,");
  ASSERT_NE(pathtrace, std::string::npos) << csv;
  const std::string row = csv.substr(pathtrace + 1, csv.find('\n', pathtrace + 1) - pathtrace - 1);
  EXPECT_NE(row.back(), ',') << "no ratio to tessera-bench: " << row;
  const std::string table = read_file_text(out / "table.md");
  EXPECT_NE(table.find("| raytrace stereo 48x32 | 1 | dynamic |"), std::string::npos) << table;
  // The one-process reference is measured once and named beside the ratio.
  EXPECT_NE(table.find("one process; 32x32: "), std::string::npos) << table;
  EXPECT_TRUE(std::filesystem::exists(out / "latency.png") || r.output.find("skipped the plot") != std::string::npos) << r.output;
}

TEST(BenchLatency, BadOptionsAreOneClearError) {
  for (const std::string args : {"--modes raytrace,teapot", "--frames 2 --warmup 5", "--schedules sometimes", "--poses spiral", "--bogus"}) {
    const auto r = testing::run_command((testing::source_dir() / "deploy/bench-latency").string() + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find("bench-latency: error: "), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace tessera
