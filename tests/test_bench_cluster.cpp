// deploy/bench-cluster on a small scene: the efficiency and its three factors (work ratio, balance,
// busy share) in results.csv and the tables, and over the emulated Wi-Fi link (where this machine
// lets it be set up) tiles go compressed: the master must not take the link for loopback. The
// workers' compute budgets: placement by CPU topology, and the quota at work where cgroups allow.
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

// deploy/lib/cpu-budget.sh on made-up topologies: 16 workers get one thread of a physical core each
// (hyperthread siblings idle), core 0 is kept for the master and the relay, and workers that must
// share a core get budgets that add up to at most one.
TEST(BenchCluster, WorkersGetOneThreadOfAPhysicalCoreAndBudgetsThatFit) {
  TempDir dir("bench_cluster_topology");
  const std::string script = R"sh(set -euo pipefail
make_cpus() { # DIR CORES THREADS: thread t of core c is cpu c + t * CORES, as Linux numbers them
  local d="$1" n="$2" t="$3" c k j sib
  mkdir -p "$d"; echo "0-$((n * t - 1))" >"$d/online"
  for ((c = 0; c < n; c++)); do for ((k = 0; k < t; k++)); do
    sib=""; for ((j = 0; j < t; j++)); do sib+="${sib:+,}$((c + j * n))"; done
    mkdir -p "$d/cpu$((c + k * n))/topology"
    echo "$sib" >"$d/cpu$((c + k * n))/topology/thread_siblings_list"
    echo 0 >"$d/cpu$((c + k * n))/topology/physical_package_id"
  done; done
}
source "$1/deploy/lib/cpu-budget.sh"
make_cpus "$2/ht" 8 2
make_cpus "$2/flat" 16 1
for topo in ht flat; do
  BUDGET_SYSFS_CPU="$2/$topo" BUDGET_ALLOWED=0-15 budget_place 16 1 auto auto
  echo "$topo pct=$BUDGET_PCT per_core=$BUDGET_PER_CORE workers=$(IFS=' '; echo "${BUDGET_WORKER_CPUS[*]}") master16=$(budget_master_cpus 16 1) master4=$(budget_master_cpus 4 1)"
done
BUDGET_SYSFS_CPU="$2/flat" BUDGET_ALLOWED=0-15 budget_place 8 1 0 auto
echo "flat8 pct=$BUDGET_PCT per_core=$BUDGET_PER_CORE master8=$(budget_master_cpus 8 1)"
BUDGET_SYSFS_CPU="$2/ht" BUDGET_ALLOWED=0-15 budget_place 16 1 auto 50 || echo "refused: $BUDGET_WHY"
)sh";
  testing::write_text(dir / "placement.sh", script);
  const auto r = testing::run_command("bash " + (dir / "placement.sh").string() + " " + testing::source_dir().string() + " " +
                                      dir.path().string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // 8 cores x 2 threads: core 0 (threads 0 and 8) for the master, 7 cores for 16 workers, 3 a core.
  EXPECT_NE(r.output.find("ht pct=31 per_core=3 workers=1 2 3 4 5 6 7 1 2 3 4 5 6 7 1 2 master16=0,8 "
                          "master4=0,8,5,13,6,14,7,15\n"),
            std::string::npos)
      << r.output;
  // 16 cores: 15 for 16 workers, 2 on core 1.
  EXPECT_NE(r.output.find("flat pct=47 per_core=2 workers=1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 1 master16=0 "
                          "master4=0,5,6,7,8,9,10,11,12,13,14,15\n"),
            std::string::npos)
      << r.output;
  // No core kept: 8 workers alone on a core each, the whole core's time; the master beside them on the rest.
  EXPECT_NE(r.output.find("flat8 pct=100 per_core=1 master8=8,9,10,11,12,13,14,15\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("refused: --cpu-budget 50: 3 workers share each core at S=16 (7 for workers), so at most 33"),
            std::string::npos)
      << r.output;
}

// A quota below one thread's time is what the workers run under: the kernel reports them throttled,
// and the results say so.
TEST(BenchCluster, TheCpuBudgetThrottlesTheWorkers) {
  if (::geteuid() != 0) GTEST_SKIP() << "cgroups need root";
  TempDir dir("bench_cluster_budget");
  const auto out = dir / "results";
  const auto r = testing::run_command("TESSERA_BUILD_DIR=" + testing::binary_dir().string() + " " +
                                      (testing::source_dir() / "deploy/bench-cluster").string() + " --scene cornell=" +
                                      testing::cornell_tpk().string() +
                                      " --workers 1,2 --net none --schedules dynamic --tiles 64 --size 256x256 --frames 3"
                                      " --cpu-budget 30 --master-cores 0 --no-plots --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string network = read_file_text(out / "network.txt");
  if (network.find("NOT emulated: worker CPU budget") != std::string::npos) GTEST_SKIP() << "no cgroup cpu controller here: " << network;
  EXPECT_NE(network.find("worker CPU budget 30% of a hardware thread"), std::string::npos) << network;
  EXPECT_NE(read_file_text(out / "tables.md").find("worker CPU budget 30%"), std::string::npos);
  const auto at = network.find("worker cgroups throttled: ");
  ASSERT_NE(at, std::string::npos) << network;
  EXPECT_GT(std::stod(network.substr(at + 26)), 0.0) << network;
  EXPECT_EQ(read_rows(out / "results.csv").size(), 2u);
  // The cgroups are gone afterwards.
  const auto path = network.find("; /sys/fs/cgroup/", at);
  ASSERT_NE(path, std::string::npos) << network;
  const std::string cgroup = network.substr(path + 2, network.find(", removed", path) - path - 2);
  EXPECT_NE(cgroup.find("tessera-bench-"), std::string::npos) << cgroup;
  EXPECT_FALSE(std::filesystem::exists(cgroup)) << cgroup;
}

}  // namespace
}  // namespace tessera
