// The Debian packages (./tessera package): built with CPack from this build, unpacked into a scratch
// root with dpkg-deb (no root, nothing installed on this machine), then the installed programs run
// from there: --version, a scene packed by the installed tessera-pack, one frame rendered by the
// installed tessera-render on the host backend, compared with the build tree's render of it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "common/base/version.h"
#include "common/image/png_io.h"
#include "test_helpers.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

using testing::shell_word;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A box on a floor under an emissive quad: composed by the settings file alone, no mesh files.
constexpr const char* kTinyScene = R"(camera { position { x: 0 y: 1.5 z: 4 } qw: 1 qx: 0 qy: 0 qz: 0 vertical_fov_degrees: 50 }
point_lights { position { x: 1 y: 3 z: 2 } intensity { x: 20 y: 20 z: 20 } }
add_materials { name: "floor" diffuse { x: 0.7 y: 0.7 z: 0.7 } }
add_materials { name: "box" diffuse { x: 0.2 y: 0.4 z: 0.8 } }
add_materials { name: "light" type: EMISSIVE emission { x: 5 y: 5 z: 5 } }
quad { a { x: -3 y: 0 z: -3 } b { x: -3 y: 0 z: 3 } c { x: 3 y: 0 z: 3 } d { x: 3 y: 0 z: -3 } material: "floor" }
box { min { x: -0.5 y: 0 z: -0.5 } max { x: 0.5 y: 1 z: 0.5 } material: "box" }
quad { a { x: -1 y: 3 z: -1 } b { x: 1 y: 3 z: -1 } c { x: 1 y: 3 z: 1 } d { x: -1 y: 3 z: 1 } material: "light" }
)";

// The Debian package that owns a library on this machine ("libzstd1:amd64: /usr/lib/..." -> "libzstd1"),
// under any of its names: as ldd printed it, with symbolic links resolved, with or without the /usr
// prefix (Debian 12 merges /lib into /usr/lib, but packages register either).
std::string owning_package(const std::string& file) {
  static std::map<std::string, std::string> known;  // dpkg -S takes a while: once a library
  if (const auto hit = known.find(file); hit != known.end()) return hit->second;
  std::vector<std::string> names;
  for (const std::string& path : {file, fs::canonical(file).string()}) {
    names.push_back(path);
    names.push_back(path.rfind("/usr/", 0) == 0 ? path.substr(4) : "/usr" + path);
  }
  for (const auto& name : names) {
    const auto r = testing::run_command("dpkg -S " + shell_word(name) + " 2>/dev/null");
    if (r.exit_code == 0) return known[file] = r.output.substr(0, r.output.find(':'));
  }
  return {};
}

TEST(Package, DebsInstallIntoAScratchRootAndRender) {
  for (const char* tool : {"cpack", "dpkg-deb", "dpkg-shlibdeps"})
    if (testing::run_command(std::string("command -v ") + tool).exit_code != 0) GTEST_SKIP() << tool << " not installed";
  testing::TempDir dir("package");
  const fs::path packages = dir / "packages", root = dir / "root";

  // gzip instead of the packages' xz: the same contents, packed in a fraction of the time.
  const auto cpack = testing::run_command("cd " + shell_word(testing::binary_dir()) + " && cpack -G DEB -B " + shell_word(packages) +
                                          " -D CPACK_DEBIAN_COMPRESSION_TYPE=gzip");
  ASSERT_EQ(cpack.exit_code, 0) << cpack.output;
  std::map<std::string, fs::path> debs;
  for (const auto& entry : fs::directory_iterator(packages))
    if (entry.path().extension() == ".deb") debs[entry.path().filename().string().substr(0, entry.path().filename().string().find('_'))] = entry.path();
  ASSERT_EQ(debs.size(), 3u) << cpack.output;
  for (const char* name : {"tessera-worker", "tessera-master", "tessera-tools"}) ASSERT_TRUE(debs.count(name)) << name;
  for (const auto& [name, deb] : debs) {
    const auto x = testing::run_command("dpkg-deb -x " + shell_word(deb) + " " + shell_word(root));
    ASSERT_EQ(x.exit_code, 0) << x.output;
    EXPECT_NE(deb.filename().string().find("_" + build_info().version + "_"), std::string::npos) << deb;
  }

  // Every library a packaged program links (its ELF NEEDED entries, as ldd resolves them here) belongs
  // to a package its .deb depends on; those libraries' own needs are their packages' business.
  for (const auto& [name, deb] : debs) {
    const std::string depends = testing::run_command("dpkg-deb -f " + shell_word(deb) + " Depends").output;
    const std::string contents = testing::run_command("dpkg-deb -c " + shell_word(deb) + " | grep -o './usr/bin/[^ ]*[^/]$'").output;
    std::istringstream programs(contents);
    for (std::string program; std::getline(programs, program);) {
      const fs::path installed = root / program.substr(2);
      const auto ldd = testing::run_command(
          "ldd " + shell_word(installed) + " | awk -v needed=\" $(readelf -d " + shell_word(installed) +
          " | sed -n 's/.*(NEEDED).*\\[\\(.*\\)\\]/\\1/p' | tr '\\n' ' ')\" "
          "'$2 == \"=>\" && index(needed, \" \" $1 \" \") {print $3}'");
      ASSERT_EQ(ldd.exit_code, 0) << ldd.output;
      std::istringstream libraries(ldd.output);
      size_t checked = 0;
      for (std::string library; std::getline(libraries, library); ++checked) {
        const std::string owner = owning_package(library);
        ASSERT_FALSE(owner.empty()) << library << " belongs to no package";
        EXPECT_NE(depends.find(owner), std::string::npos)
            << name << ": " << installed.filename() << " links " << library << " of " << owner << ", not in Depends: " << depends;
      }
      EXPECT_GE(checked, 4u) << installed << ": " << ldd.output;  // libc, libm, libstdc++, libgcc_s at least
    }
  }

  const fs::path bin = root / "usr/bin";
  for (const char* program : {"tessera-worker", "tessera-master", "tessera-compare", "tessera-pack", "tessera-render",
                              "tessera-bench", "tessera-netem-relay"}) {
    EXPECT_TRUE(fs::exists(bin / program)) << program;
    EXPECT_TRUE(fs::exists(root / "usr/share/bash-completion/completions" / program)) << program;
    if (testing::run_command("command -v help2man").exit_code == 0) {
      EXPECT_TRUE(fs::exists(root / "usr/share/man/man1" / (std::string(program) + ".1.gz"))) << program;
    }
  }
  const std::string unit = read_text(root / "usr/lib/systemd/system/tessera-worker@.service");
  EXPECT_NE(unit.find("\nExecStart=/usr/bin/tessera-worker "), std::string::npos) << unit;
  EXPECT_EQ(unit.find("\nExecStart=/usr/local"), std::string::npos);
  EXPECT_TRUE(fs::exists(root / "usr/share/tessera/worker.env.example"));
  if (fs::exists(testing::source_dir() / "master/web")) {
    EXPECT_TRUE(fs::exists(root / "usr/share/tessera/web"));
  }

  // The installed programs at work.
  const auto version = testing::run_command(shell_word(bin / "tessera-worker") + " --version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.output, "tessera-worker " + build_description() + "\n");
  testing::write_text(dir / "tiny.scene.txtpb", kTinyScene);
  const auto pack = testing::run_command(shell_word(bin / "tessera-pack") + " " + shell_word(dir / "tiny.scene.txtpb") + " -o " +
                                         shell_word(dir / "tiny.tpk"));
  ASSERT_EQ(pack.exit_code, 0) << pack.output;
  const std::string render_args = " " + shell_word(dir / "tiny.tpk") + " --device host --size 96x64 -o ";
  const auto render = testing::run_command(shell_word(bin / "tessera-render") + render_args + shell_word(dir / "installed.png"));
  ASSERT_EQ(render.exit_code, 0) << render.output;
  const auto reference =
      testing::run_command(shell_word(testing::binary_dir() / "worker/tessera-render") + render_args + shell_word(dir / "built.png"));
  ASSERT_EQ(reference.exit_code, 0) << reference.output;
  const auto compare = testing::run_command(shell_word(bin / "tessera-compare") + " --json " + shell_word(dir / "installed.png") + " " +
                                            shell_word(dir / "built.png"));
  ASSERT_EQ(compare.exit_code, 0) << compare.output;
  EXPECT_NE(compare.output.find("\"identical\": true"), std::string::npos) << compare.output;
  // A real picture: the lit box and floor give many grey levels.
  const ImageRgba8 image = read_image(dir / "installed.png");
  std::set<uint8_t> levels;
  for (size_t i = 0; i < image.pixels().size(); i += 4) levels.insert(image.pixels()[i + 2]);
  EXPECT_GT(levels.size(), 20u);
}

}  // namespace
}  // namespace tessera
