// deploy/bench-cluster on a small scene: the efficiency and its three factors (work ratio, balance,
// busy share) in results.csv and the tables, and over the emulated Wi-Fi link (where this machine
// lets it be set up) tiles go compressed: the master must not take the link for loopback.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include <unistd.h>

#include "cluster_test_support.h"

namespace tessera {
namespace {

using testing::TempDir;

// results.csv as rows of name -> value.
std::vector<std::map<std::string, std::string>> read_rows(const std::filesystem::path& csv) {
  std::istringstream in(read_file_text(csv));
  std::string line;
  std::vector<std::string> names;
  std::vector<std::map<std::string, std::string>> rows;
  const auto split = [](const std::string& text) {
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream s(text);
    while (std::getline(s, cell, ',')) cells.push_back(cell);
    if (!text.empty() && text.back() == ',') cells.emplace_back();
    return cells;
  };
  while (std::getline(in, line)) {
    if (names.empty()) {
      names = split(line);
      continue;
    }
    const auto cells = split(line);
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < names.size() && i < cells.size(); ++i) row[names[i]] = cells[i];
    rows.push_back(row);
  }
  return rows;
}

testing::CommandResult run_bench(const TempDir& dir, const std::string& net, const std::filesystem::path& out) {
  return testing::run_command("TESSERA_BUILD_DIR=" + testing::binary_dir().string() + " " +
                              (testing::source_dir() / "deploy/bench-cluster").string() + " --scene cornell=" +
                              testing::cornell_tpk().string() + " --workers 1,2 --net " + net +
                              " --schedules static,dynamic --tiles 16 --size 96x64 --frames 3 --no-plots --out " + out.string());
}

TEST(BenchCluster, EfficiencyIsTheProductOfItsFactors) {
  TempDir dir("bench_cluster");
  const auto out = dir / "results";
  const auto r = run_bench(dir, "none", out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto rows = read_rows(out / "results.csv");
  ASSERT_EQ(rows.size(), 4u) << read_file_text(out / "results.csv");
  std::map<std::string, double> share_at_1;
  for (const auto& row : rows)
    if (row.at("workers") == "1") share_at_1[row.at("schedule")] = std::stod(row.at("busy_share"));
  for (const auto& row : rows) {
    SCOPED_TRACE(row.at("workers") + " " + row.at("schedule"));
    const double efficiency = std::stod(row.at("efficiency")), work = std::stod(row.at("work_ratio")),
                 balance = std::stod(row.at("balance")), share = std::stod(row.at("busy_share"));
    EXPECT_GT(std::stod(row.at("busy_sum_ms")), 0.0);
    EXPECT_GE(std::stod(row.at("busy_sum_ms")), std::stod(row.at("busy_max_ms")));
    EXPECT_GT(std::stod(row.at("cpu_sum_ms")), 0.0);
    EXPECT_GT(balance, 0.0);
    EXPECT_LE(balance, 1.0005);
    EXPECT_GT(share, 0.0);
    EXPECT_LE(share, 1.0005);
    if (row.at("workers") == "1") {
      EXPECT_EQ(row.at("efficiency"), "1.000");
      EXPECT_EQ(row.at("work_ratio"), "1.000");
      EXPECT_EQ(row.at("balance"), "1.000");
    }
    // Three decimals each: the identity holds to their rounding.
    EXPECT_NEAR(efficiency, balance * share / (work * share_at_1.at(row.at("schedule"))), 0.01 * efficiency + 0.002);
  }
  const std::string tables = read_file_text(out / "tables.md");
  EXPECT_NE(tables.find("| efficiency | work ratio | balance | busy share | CPU/busy |"), std::string::npos) << tables;
  EXPECT_NE(tables.find("| cornell | 2 | dynamic | 16 |"), std::string::npos) << tables;
}

TEST(BenchCluster, TilesCrossTheEmulatedLinkCompressed) {
  if (::geteuid() != 0) GTEST_SKIP() << "the emulated link needs root (network namespaces)";
  TempDir dir("bench_cluster_wifi");
  const auto out = dir / "results";
  const auto r = run_bench(dir, "both", out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string network = read_file_text(out / "network.txt");
  if (network.find("namespaces+veth+bridge") == std::string::npos) GTEST_SKIP() << "no namespaces here: " << network;
  // Raw RGBA8 is 96 x 64 x 4 bytes = 24 KB a frame; zstd makes the Cornell box's flat colours far smaller.
  for (const auto& row : read_rows(out / "results.csv")) {
    SCOPED_TRACE(row.at("net") + " " + row.at("workers") + " " + row.at("schedule"));
    const double kb = std::stod(row.at("kb_per_frame"));
    if (row.at("net") == "wifi")
      EXPECT_LT(kb, 16.0);  // compressed
    else
      EXPECT_GT(kb, 24.0);  // loopback: raw, as --compression auto chooses there
  }
}

}  // namespace
}  // namespace tessera
