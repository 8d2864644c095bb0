// Deployment: cluster files (master/cluster/cluster_file.h) in-process, and the scripts
// deploy/hosts (with a local host and an ssh stand-in that runs the commands here) and
// deploy/android (with an adb stand-in that runs the phone's shell commands here) driving real
// tessera-worker daemons that tessera-master then renders with.
#include <gtest/gtest.h>

#include <algorithm>

#include "cluster_test_support.h"
#include "common/base/error.h"
#include "common/net/asio.h"
#include "master/cluster/cluster_file.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

TEST(DeployClusterFile, ReadsWorkersAndPathsBesideTheFile) {
  TempDir dir("cluster_file");
  testing::write_text(dir / "cluster.txtpb",
                      "# two workers\n"
                      "secret_file: \"keys/secret\"\n"
                      "scene: \"/scenes/sponza.tpk\"\n"
                      "worker { address: \"10.0.0.21:7100\" ssh: \"tessera@10.0.0.21\" device: \"gpu\" }\n"
                      "worker { address: \"[::1]:7101\" name: \"bench-2\" args: \"--threads\" args: \"2\" }\n");
  const auto c = master::read_cluster_file(dir / "cluster.txtpb");
  ASSERT_EQ(c.workers.size(), 2u);
  EXPECT_EQ(c.workers[0].text(), "10.0.0.21:7100");
  EXPECT_EQ(c.workers[1].host, "::1");
  EXPECT_EQ(c.file.secret_file(), (dir.path() / "keys/secret").lexically_normal().string());
  EXPECT_EQ(c.file.scene(), "/scenes/sponza.tpk");
  EXPECT_EQ(master::cluster_file_as_lines(c),
            "secret_file\t" + c.file.secret_file() + "\n" +
                "scene\t/scenes/sponza.tpk\n"
                "remote_dir\ttessera-worker\n"
                "worker\t10.0.0.21:7100\ttessera@10.0.0.21\tgpu\t-\n"
                "worker\t[::1]:7101\t::1\tauto\tbench-2\t--threads\t2\n");
}

TEST(DeployClusterFile, InvalidFilesAreOneClearError) {
  TempDir dir("cluster_file_bad");
  const auto error_of = [&](const std::string& text) {
    testing::write_text(dir / "c.txtpb", text);
    try {
      master::read_cluster_file(dir / "c.txtpb");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("worker { address: \"a:1\" }").find("secret_file is missing"), std::string::npos);
  EXPECT_NE(error_of("secret_file: \"s\"\nworker { address: \"a\" }").find("HOST:PORT"), std::string::npos);
  EXPECT_NE(error_of("secret_file: \"s\"\nworker { ssh: \"x\" }").find("worker 1 has no address"), std::string::npos);
  EXPECT_NE(error_of("secret_file: \"s\"\nworker { address: \"a:1\" }\nworker { address: \"a:1\" }").find("listed twice"),
            std::string::npos);
  EXPECT_NE(error_of("secret_file: \"s\"\nworkers { address: \"a:1\" }").find("c.txtpb:2:"), std::string::npos);
  EXPECT_NE(error_of("secret_file: \"s\"\nworker { address: \"a:1\" name: \"x\\ty\" }").find("tabs"), std::string::npos);
  EXPECT_THROW(master::read_cluster_file(dir / "missing.txtpb"), Error);
}

// ---- the scripts, with real workers ----

uint16_t free_tcp_port() {
  asio::io_context io;
  asio::ip::tcp::acceptor a(io, asio::ip::tcp::endpoint(asio::ip::address_v4::loopback(), 0));
  return a.local_endpoint().port();
}

std::string script(const std::string& name) { return (testing::source_dir() / "deploy" / name).string(); }

void write_executable(const fs::path& path, const std::string& text) {
  testing::write_text(path, text);
  fs::permissions(path, fs::perms::owner_all);
}

std::string master_render(const std::string& workers_option, const fs::path& dir) {
  return "timeout 60 " + testing::master_binary().string() + " " + workers_option + " --no-status --size 32x32 --tile 16 --poses camera " +
         "--reconnect-interval 0 --no-worker-timeout 1 --out " + (dir / "frames").string();
}

TEST(DeployScripts, HostsStartStatusStopWithTheClusterFileTheMasterReads) {
  TempDir dir("deploy_hosts");
  testing::write_secret(dir / "secret", testing::kClusterSecret);
  // ssh stand-in: drops the options, "--" and the destination, runs the command line here.
  write_executable(dir / "fake-ssh",
                   "#!/bin/bash\nwhile [ \"$1\" = -o ]; do shift 2; done\n[ \"$1\" = -- ] && shift\nshift\nexec bash -c \"$1\"\n");
  const uint16_t p1 = free_tcp_port();
  uint16_t p2 = free_tcp_port();
  while (p2 == p1) p2 = free_tcp_port();
  testing::write_text(dir / "cluster.txtpb", "secret_file: \"secret\"\nscene: \"" + testing::cornell_tpk().string() + "\"\n" +
                                                 "remote_dir: \"" + (dir / "remote").string() + "\"\n" +
                                                 "worker { address: \"127.0.0.1:" + std::to_string(p1) +
                                                 "\" ssh: \"local\" device: \"host\" args: \"--threads\" args: \"1\" }\n" +
                                                 "worker { address: \"127.0.0.1:" + std::to_string(p2) +
                                                 "\" ssh: \"somebody@far-away\" device: \"host\" name: \"far\" }\n");
  const std::string env = "TESSERA_BUILD_DIR=" + testing::binary_dir().string() + " TESSERA_SSH=" + (dir / "fake-ssh").string() + " ";
  const std::string hosts = env + script("hosts") + " ";
  const std::string file = (dir / "cluster.txtpb").string();

  const auto started = testing::run_command(hosts + "start " + file);
  ASSERT_EQ(started.exit_code, 0) << started.output;
  EXPECT_TRUE(fs::exists(dir / "remote" / "scenes" / testing::cornell_tpk().filename())) << started.output;
  EXPECT_EQ(fs::status(dir / "remote" / "secret").permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  const auto status = testing::run_command(hosts + "status " + file);
  EXPECT_EQ(status.exit_code, 0) << status.output;
  EXPECT_NE(status.output.find("somebody@far-away"), std::string::npos) << status.output;
  EXPECT_EQ(testing::run_command(hosts + "start " + file + " --no-push").exit_code, 0);  // already running: fine

  const auto rendered = testing::run_command(master_render("--cluster-file " + file, dir.path()));
  EXPECT_EQ(rendered.exit_code, 0) << rendered.output;
  EXPECT_TRUE(fs::exists(dir / "frames" / "frame_000000.png")) << rendered.output;
  // The workers found the scene deployed beside them: nothing was pushed over the wire protocol.
  EXPECT_NE(rendered.output.find("loaded in"), std::string::npos) << rendered.output;
  EXPECT_EQ(rendered.output.find("pushed and loaded"), std::string::npos) << rendered.output;

  const auto stopped = testing::run_command(hosts + "stop " + file);
  EXPECT_EQ(stopped.exit_code, 0) << stopped.output;
  const auto after = testing::run_command(hosts + "status " + file);
  EXPECT_EQ(after.exit_code, 3) << after.output;
  EXPECT_NE(after.output.find("stopped"), std::string::npos) << after.output;

  const auto missing = testing::run_command(hosts + "start " + (dir / "nope.txtpb").string());
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.output.rfind("hosts: error: ", 0), 0u) << missing.output;
  EXPECT_EQ(std::count(missing.output.begin(), missing.output.end(), '\n'), 1) << missing.output;
}

// ssh takes a destination that starts with '-' as an option (-oProxyCommand=... runs a command
// here): such ssh: and address: values must never reach it.
TEST(DeployScripts, HostsRefusesSshTargetsThatLookLikeOptions) {
  TempDir dir("deploy_hosts_options");
  testing::write_secret(dir / "secret", testing::kClusterSecret);
  write_executable(dir / "fake-ssh", "#!/bin/bash\nprintf '%s\\n' \"$@\" >>" + (dir / "ssh-args").string() + "\necho stopped\n");
  const std::string hosts = "TESSERA_BUILD_DIR=" + testing::binary_dir().string() + " TESSERA_SSH=" + (dir / "fake-ssh").string() + " " +
                            script("hosts") + " ";
  for (const std::string worker : {"worker { address: \"127.0.0.1:7100\" ssh: \"-oProxyCommand=touch owned\" }",
                                   "worker { address: \"-oProxyCommand=x:7100\" }"}) {
    testing::write_text(dir / "cluster.txtpb", "secret_file: \"secret\"\n" + worker + "\n");
    for (const char* command : {"status ", "stop ", "push "}) {
      const auto r = testing::run_command(hosts + command + (dir / "cluster.txtpb").string());
      EXPECT_NE(r.exit_code, 0) << worker << r.output;
      EXPECT_EQ(r.output.rfind("hosts: error: ", 0), 0u) << r.output;
      EXPECT_NE(r.output.find("'-"), std::string::npos) << r.output;
    }
  }
  EXPECT_FALSE(fs::exists(dir / "ssh-args")) << read_file_text(dir / "ssh-args");
}

// local-cluster keeps its state (secret, pids) in a folder only its user can change, and stop
// signals only the tessera-worker processes it started.
TEST(DeployScripts, LocalClusterStateIsPrivateAndStopKillsOnlyItsWorkers) {
  TempDir dir("deploy_local_cluster");
  const std::string lc = "TESSERA_BUILD_DIR=" + testing::binary_dir().string() + " " + script("local-cluster") + " ";
  fs::create_directories(dir / "run");
  fs::permissions(dir / "run", fs::perms::owner_all);
  const auto status = testing::run_command("env -u TESSERA_CLUSTER_STATE XDG_RUNTIME_DIR=" + (dir / "run").string() + " " + lc + "status");
  EXPECT_NE(status.output.find((dir / "run" / "tessera-cluster").string()), std::string::npos) << status.output;
  EXPECT_EQ(status.output.find("/tmp/tessera-cluster-"), std::string::npos) << status.output;

  fs::create_directories(dir / "open");
  fs::permissions(dir / "open", fs::perms::all);
  fs::create_directories(dir / "real");
  fs::permissions(dir / "real", fs::perms::owner_all);
  fs::create_directory_symlink(dir / "real", dir / "link");
  for (const auto& [state, why] : {std::pair{"open", "group or others"}, std::pair{"link", "symbolic link"}}) {
    const auto r = testing::run_command(lc + "start 1 --device host --base-port 0 --state " + (dir / state).string());
    testing::run_command(lc + "stop --state " + (dir / state).string());
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find(why), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(dir / state / "secret")) << r.output;
  }

  fs::create_directories(dir / "mine");
  fs::permissions(dir / "mine", fs::perms::owner_all);
  testing::Process bystander({"/bin/sleep", "30"}, dir / "sleep.log");
  testing::write_text(dir / "mine" / "pids", std::to_string(bystander.pid()) + "\n");
  testing::write_text(dir / "mine" / "workers", "127.0.0.1:1\n");
  const auto stopped = testing::run_command(lc + "stop --state " + (dir / "mine").string());
  EXPECT_FALSE(bystander.wait(std::chrono::milliseconds(300))) << "a process that is no worker of this cluster was killed: " << stopped.output;
}

TEST(DeployScripts, AndroidPushStartStopAndAddressesThroughAdb) {
  TempDir dir("deploy_android");
  testing::write_secret(dir / "secret", testing::kClusterSecret);
  // adb stand-in for one phone "FAKE01": push copies, shell runs the command line here, and
  // wlan0 has an address.
  write_executable(dir / "fake-adb",
                   "#!/bin/bash\n"
                   "[ \"$1\" = devices ] && { printf 'List of devices attached\\nFAKE01\\tdevice\\nOTHER\\tunauthorized\\n\\n'; exit 0; }\n"
                   "[ \"$1\" = -s ] && [ \"$2\" = FAKE01 ] || { echo \"adb: device '$2' not found\" >&2; exit 1; }\n"
                   "shift 2\n"
                   "case \"$1\" in\n"
                   "  push) mkdir -p \"$(dirname \"$3\")\" && cp \"$2\" \"$3\" ;;\n"
                   "  shell) case \"$2\" in 'ip -4 addr show wlan0') printf '47: wlan0: <UP>\\n    inet 192.168.7.23/24 brd 192.168.7.255 "
                   "scope global wlan0\\n' ;; *) exec bash -c \"$2\" ;; esac ;;\n"
                   "  *) exit 1 ;;\n"
                   "esac\n");
  const uint16_t port = free_tcp_port();
  const std::string android = "ADB=" + (dir / "fake-adb").string() + " " + script("android") + " ";
  const std::string common = " --dir " + (dir / "phone").string() + " --port " + std::to_string(port);

  const auto pushed = testing::run_command(android + "push" + common + " --binary " + testing::worker_binary().string() + " --secret " +
                                           (dir / "secret").string() + " --scene " + testing::cornell_tpk().string());
  ASSERT_EQ(pushed.exit_code, 0) << pushed.output;
  EXPECT_TRUE(fs::exists(dir / "phone" / "scenes" / testing::cornell_tpk().filename()));
  const auto started = testing::run_command(android + "start" + common + " --device host -- --threads 1");
  ASSERT_EQ(started.exit_code, 0) << started.output;
  EXPECT_NE(started.output.find("FAKE01: started"), std::string::npos) << started.output;

  const auto addresses = testing::run_command(android + "addresses" + common + " --workers-file " + (dir / "workers").string());
  EXPECT_EQ(addresses.exit_code, 0) << addresses.output;
  EXPECT_NE(addresses.output.find("FAKE01\t192.168.7.23:" + std::to_string(port)), std::string::npos) << addresses.output;
  EXPECT_EQ(read_file_text(dir / "workers"), "192.168.7.23:" + std::to_string(port) + "\n");

  const auto rendered = testing::run_command(master_render("--workers 127.0.0.1:" + std::to_string(port) + " --scene " +
                                                               testing::cornell_tpk().string() + " --secret-file " + (dir / "secret").string(),
                                                           dir.path()));
  EXPECT_EQ(rendered.exit_code, 0) << rendered.output;
  EXPECT_NE(read_file_text(dir / "phone" / "worker.log").find("as 'FAKE01'"), std::string::npos);

  EXPECT_EQ(testing::run_command(android + "status" + common).exit_code, 0);
  const auto stopped = testing::run_command(android + "stop" + common);
  EXPECT_NE(stopped.output.find("FAKE01: stopped"), std::string::npos) << stopped.output;
  const auto after = testing::run_command(android + "status" + common);
  EXPECT_EQ(after.exit_code, 3) << after.output;

  // Missing tools and bad input: one error line each.
  const auto one_line = [](const testing::CommandResult& r, const std::string& needle, int code = 1) {
    EXPECT_EQ(r.exit_code, code) << r.output;
    EXPECT_EQ(r.output.rfind("android: error: ", 0), 0u) << r.output;
    EXPECT_NE(r.output.find(needle), std::string::npos) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  };
  one_line(testing::run_command("ADB=/nonexistent/adb " + script("android") + " status"), "adb not found");
  one_line(testing::run_command("env -u ANDROID_NDK " + script("android") + " build"), "ANDROID_NDK is not set");
  one_line(testing::run_command("ANDROID_NDK=" + dir.path().string() + " " + script("android") + " build"), "does not point at an NDK");
  one_line(testing::run_command(android + "start --serial NOPE" + common), "did not start");
  one_line(testing::run_command(android + "push" + common), "--secret", 2);  // a usage error
}

// deploy/kernel-sass reads Tessera's kernel cache entries: a PTX entry gives one line a kernel with its
// registers (ptxas, where the CUDA toolkit is installed), anything else one error line.
TEST(DeployScripts, KernelSassReadsCacheEntries) {
  TempDir dir("kernel_sass");
  const std::string script = testing::shell_word(testing::source_dir() / "deploy" / "kernel-sass");
  // A cache entry: magic, key, size, checksum (8 bytes each; the script checks the magic only), then the binary.
  auto entry = [&](const std::string& name, const std::string& binary) {
    testing::write_text(dir / name, "TSCLBIN1" + std::string(24, 'x') + binary);
  };
  entry("pocl.clbin", "an ELF object, not PTX");
  const auto not_ptx = testing::run_command_split(script + " " + testing::shell_word(dir / "pocl.clbin") + " -o " +
                                                  testing::shell_word(dir / "out"));
  const bool has_ptxas = testing::run_command("command -v ptxas || test -x /usr/local/cuda/bin/ptxas").exit_code == 0;
  EXPECT_EQ(not_ptx.exit_code, 1) << not_ptx.err;
  EXPECT_EQ(std::count(not_ptx.err.begin(), not_ptx.err.end(), '\n'), 1) << not_ptx.err;
  EXPECT_NE(not_ptx.err.find(has_ptxas ? "holds no PTX" : "ptxas not found"), std::string::npos) << not_ptx.err;
  testing::write_text(dir / "stray.clbin", "not a cache entry");
  const auto stray = testing::run_command_split(script + " " + testing::shell_word(dir / "stray.clbin"));
  EXPECT_EQ(stray.exit_code, 1);
  if (!has_ptxas) GTEST_SKIP() << "no ptxas here: the PTX case needs the CUDA toolkit";
  EXPECT_NE(stray.err.find("not a Tessera kernel cache entry"), std::string::npos) << stray.err;
  entry("nvidia.clbin", ".version 7.0\n.target sm_50\n.address_size 64\n"
                        ".visible .entry add_one(.param .u64 p)\n{\n  .reg .b32 %r<3>;\n  .reg .b64 %rd<3>;\n"
                        "  ld.param.u64 %rd1, [p];\n  cvta.to.global.u64 %rd2, %rd1;\n  ld.global.u32 %r1, [%rd2];\n"
                        "  add.s32 %r2, %r1, 1;\n  st.global.u32 [%rd2], %r2;\n  ret;\n}\n");
  const auto ok = testing::run_command_split(script + " " + testing::shell_word(dir / "nvidia.clbin") + " --arch sm_90 -o " +
                                             testing::shell_word(dir / "out"));
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("nvidia add_one"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find(" registers,"), std::string::npos) << ok.out;
  EXPECT_TRUE(fs::exists(dir / "out" / "nvidia.ptx"));
}

}  // namespace
}  // namespace tessera
