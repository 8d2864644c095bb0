// The OpenCL device layer, run on whatever platform is installed (PoCL on machines without a GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <filesystem>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/cl/cl_error.h"
#include "common/cl/commands.h"
#include "common/cl/device.h"
#include "common/cl/device_memory.h"
#include "common/cl/device_selection.h"
#include "common/cl/memory_size.h"
#include "common/cl/program.h"
#include "common/cl/program_cache.h"
#include "common/cl/source_resolver.h"
#include "kernels/base/vec.h"

#include "test_helpers.h"

namespace tessera::cl {
namespace {

constexpr uint64_t MiB = uint64_t{1} << 20;

// Devices of this machine, or nullopt when there is no OpenCL platform (the tests then skip).
const std::optional<std::vector<DeviceInfo>>& machine_devices() {
  static const std::optional<std::vector<DeviceInfo>> devices = []() -> std::optional<std::vector<DeviceInfo>> {
    try {
      return enumerate_devices();
    } catch (const Error&) {
      return std::nullopt;
    }
  }();
  return devices;
}

#define REQUIRE_OPENCL()                                                                          \
  if (!machine_devices()) GTEST_SKIP() << "no OpenCL platform or device on this machine"; \
  static_assert(true)

using testing::ScopedEnv;

class TempDir {
 public:
  explicit TempDir(const std::string& tag)
      : path_(std::filesystem::temp_directory_path() /
              ("tessera_test_" + tag + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no exception)";
}

// ---- no device needed ----

TEST(ClError, MessageNamesCallErrorAndCode) {
  try {
    throw_cl_error(CL_MEM_OBJECT_ALLOCATION_FAILURE, "clCreateBuffer(kd_nodes, 412 MB)");
    FAIL();
  } catch (const ClError& e) {
    EXPECT_STREQ(e.what(), "clCreateBuffer(kd_nodes, 412 MB) failed: CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)");
    EXPECT_EQ(e.code(), CL_MEM_OBJECT_ALLOCATION_FAILURE);
  }
  EXPECT_STREQ(cl_error_name(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
  EXPECT_STREQ(cl_error_name(-12345), "unknown OpenCL error");
  EXPECT_NO_THROW(check_cl(CL_SUCCESS, "clFinish"));
}

TEST(MemorySize, ParsesUnitsAndRejectsGarbage) {
  EXPECT_EQ(parse_memory_size("950M"), 950 * MiB);
  EXPECT_EQ(parse_memory_size("950MB"), 950 * MiB);
  EXPECT_EQ(parse_memory_size("950 MiB"), 950 * MiB);
  EXPECT_EQ(parse_memory_size("1.5G"), 1536 * MiB);
  EXPECT_EQ(parse_memory_size("2GiB"), 2048 * MiB);
  EXPECT_EQ(parse_memory_size("2gib"), 2048 * MiB);
  EXPECT_EQ(parse_memory_size("512K"), 512u * 1024);
  EXPECT_EQ(parse_memory_size("1048576"), 1048576u);
  EXPECT_EQ(parse_memory_size("4096B"), 4096u);
  EXPECT_EQ(parse_memory_size("0.1K"), 102u);
  EXPECT_EQ(parse_memory_size("1T"), uint64_t{1} << 40);
  for (const char* bad : {"", "abc", "M", "12X", "1.5.3G", "-5M", "1.5", "0", "0M", "1e9", "5 M B", "1.G",
                          "99999999999999999999", "20000000T", "inf"}) {
    EXPECT_THROW(parse_memory_size(bad), Error) << bad;
  }
  EXPECT_NE(message_of([] { parse_memory_size("lots"); }).find("invalid memory size 'lots'"), std::string::npos);
}

TEST(MemorySize, FormatsThreeSignificantDigits) {
  EXPECT_EQ(format_memory_size(512), "512 B");
  EXPECT_EQ(format_memory_size(1536), "1.5 KB");
  EXPECT_EQ(format_memory_size(610 * MiB), "610 MB");
  EXPECT_EQ(format_memory_size(950 * MiB), "950 MB");
  EXPECT_EQ(format_memory_size(1239 * MiB), "1.21 GB");
  EXPECT_EQ(format_memory_size(2048 * MiB), "2 GB");
  EXPECT_EQ(format_memory_size(15 * MiB + 300 * 1024), "15.3 MB");
  EXPECT_EQ(format_memory_size(1023 * MiB + 1000 * 1024), "1 GB");
}

TEST(SourceResolver, InlinesEachFileOnceWithLineDirectives) {
  const SourceMap files = {
      {"kernels/a.h", "#ifndef A_H\n#define A_H\n#include \"kernels/b.h\"\nint a;\n#endif\n"},
      {"kernels/b.h", "#ifndef B_H\n#define B_H\nint b;\n#endif\n"},
      {"kernels/c.h",
       "#ifdef __OPENCL_C_VERSION__\n#include \"kernels/b.h\"\n#else\n#include \"host_only.h\"\n#endif\nint c;\n"},
  };
  const ResolvedSource resolved =
      resolve_includes("#include \"kernels/a.h\"\n#include \"kernels/b.h\"\nkernel k;\n", "main.cl", files);
  EXPECT_EQ(resolved.text,
            "#line 1 \"main.cl\"\n"
            "#line 1 \"kernels/a.h\"\n#ifndef A_H\n#define A_H\n"
            "#line 1 \"kernels/b.h\"\n#ifndef B_H\n#define B_H\nint b;\n#endif\n"
            "#line 4 \"kernels/a.h\"\nint a;\n#endif\n"
            "#line 2 \"main.cl\"\n"
            "\n"  // second include of b.h: already inlined
            "kernel k;\n");
  // Compilers that ignore #line (NVIDIA) report positions in the combined text; map them back.
  EXPECT_EQ(resolved.location(8), "kernels/b.h:3");  // "int b;"
  EXPECT_EQ(resolved.location(2), "");  // a #line directive we added
  EXPECT_EQ(map_log_locations("<kernel>:8:5: error: x\n<kernel>:15:1: note\n<kernel>:999: y", resolved),
            "kernels/b.h:3:5: error: x\nmain.cl:3:1: note\n<kernel>:999: y");

  // Inside a conditional: inlined (maybe inactive), not marked done, so an unconditional include
  // later inlines it again; a missing file there is left for the compiler.
  const std::string conditional =
      resolve_includes("#include \"kernels/c.h\"\n#include \"kernels/b.h\"\n", "main.cl", files).text;
  EXPECT_NE(conditional.find("#include \"host_only.h\""), std::string::npos);
  size_t copies = 0;
  for (size_t pos = 0; (pos = conditional.find("int b;", pos)) != std::string::npos; ++pos) ++copies;
  EXPECT_EQ(copies, 2u);

  const std::string missing = message_of([&] { resolve_includes("\n#include \"kernels/nope.h\"\n", "m.cl", files); });
  EXPECT_NE(missing.find("m.cl:2: #include \"kernels/nope.h\" is not among the embedded"), std::string::npos);
  EXPECT_THROW(load_kernel_source("kernels/not_there.cl", files), Error);
}

TEST(SourceResolver, ResolvesEmbeddedHeaders) {
  const std::string out = load_kernel_source("kernels/base/vec.h").text;
  EXPECT_EQ(out.rfind("#line 1 \"kernels/base/vec.h\"\n", 0), 0u);
  EXPECT_NE(out.find("#line 1 \"kernels/base/compat.h\""), std::string::npos);
  EXPECT_EQ(out.find("#include \"kernels/"), std::string::npos);
}

TEST(ProgramOptions, AddsClStdAndRefusesRelaxedMath) {
  EXPECT_EQ(final_build_options(""), "-cl-std=CL1.2");
  EXPECT_EQ(final_build_options("-DTILE=16"), "-cl-std=CL1.2 -DTILE=16");
  EXPECT_EQ(final_build_options("-cl-std=CL2.0"), "-cl-std=CL2.0");
  EXPECT_THROW(final_build_options("-DX -cl-fast-relaxed-math"), Error);
  EXPECT_THROW(final_build_options("-cl-mad-enable"), Error);
}

TEST(ProgramCache, RoundTripsAndIgnoresCorruptEntries) {
  TempDir dir("clcache_unit");
  {
    ScopedEnv cache("TESSERA_CACHE_DIR", dir.path().string());
    EXPECT_EQ(kernel_cache_dir(), dir.path());
  }
  {
    ScopedEnv cache("TESSERA_CACHE_DIR", "");
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(kernel_cache_dir(), std::filesystem::path("/xdg/tessera/kernels"));
  }
  const std::vector<uint8_t> binary = {1, 2, 3, 4, 5};
  ASSERT_TRUE(store_cached_binary(dir.path(), 42, binary));
  EXPECT_EQ(load_cached_binary(dir.path(), 42), binary);
  EXPECT_FALSE(load_cached_binary(dir.path(), 43));
  std::vector<uint8_t> bytes = read_file_bytes(program_cache_file(dir.path(), 42));
  bytes.back() ^= 0xFF;
  write_file_atomically(program_cache_file(dir.path(), 42), bytes.data(), bytes.size());
  EXPECT_FALSE(load_cached_binary(dir.path(), 42));
  write_file_atomically(program_cache_file(dir.path(), 42), bytes.data(), 10);  // truncated
  EXPECT_FALSE(load_cached_binary(dir.path(), 42));
}

TEST(DeviceSelection, RulesOnSyntheticDeviceLists) {
  std::vector<DeviceInfo> devices(3);
  devices[0].type = DeviceType::cpu;
  devices[0].name = "cpu0";
  devices[1].type = DeviceType::gpu;
  devices[1].name = "gpu1";
  devices[2].type = DeviceType::gpu;
  devices[2].name = "gpu2";
  for (size_t i = 0; i < devices.size(); ++i) devices[i].index = i;
  EXPECT_EQ(select_device(devices, "auto").name, "gpu1");
  EXPECT_EQ(select_device(devices, "GPU").name, "gpu1");
  EXPECT_EQ(select_device(devices, "cpu").name, "cpu0");
  EXPECT_EQ(select_device(devices, "2").name, "gpu2");
  EXPECT_NE(message_of([&] { select_device(devices, "3"); }).find("out of range"), std::string::npos);
  EXPECT_NE(message_of([&] { select_device(devices, "fastest"); }).find("unknown device"), std::string::npos);
  EXPECT_NE(message_of([&] { select_device(devices, "-1"); }).find("unknown device"), std::string::npos);
  const std::vector<DeviceInfo> cpus_only(devices.begin(), devices.begin() + 1);
  EXPECT_EQ(select_device(cpus_only, "auto").name, "cpu0");
  EXPECT_NE(message_of([&] { select_device(cpus_only, "gpu"); }).find("no OpenCL GPU device"), std::string::npos);
  EXPECT_NE(message_of([] { select_device(std::vector<DeviceInfo>{}, "auto"); }).find("no OpenCL platform found"),
            std::string::npos);
  const std::string table = format_device_list(devices);
  EXPECT_NE(table.find("gpu2"), std::string::npos);
  EXPECT_NE(table.find("*"), std::string::npos);
}

// ---- on this machine's OpenCL ----

TEST(OpenCl, SelectsCpuAndAutoDevices) {
  REQUIRE_OPENCL();
  const std::vector<DeviceInfo>& devices = *machine_devices();
  const std::string table = format_device_list(devices);
  for (const DeviceInfo& d : devices) {
    EXPECT_NE(table.find(d.name), std::string::npos);
    EXPECT_GT(d.compute_units, 0u);
    EXPECT_GT(d.max_alloc_bytes, 0u);
  }
  const bool has_gpu = std::any_of(devices.begin(), devices.end(), [](auto& d) { return d.type == DeviceType::gpu; });
  const bool has_cpu = std::any_of(devices.begin(), devices.end(), [](auto& d) { return d.type == DeviceType::cpu; });
  const Device automatic = Device::open("auto");
  if (has_gpu) {
    EXPECT_EQ(automatic.info().type, DeviceType::gpu);
  }
  EXPECT_FALSE(automatic.info().name.empty());
  EXPECT_GT(automatic.info().max_work_group_size, 0u);
  EXPECT_NE(automatic.queue(), nullptr);
  if (has_cpu) {
    EXPECT_EQ(Device::open("cpu").info().type, DeviceType::cpu);
  }
  if (!has_gpu) {
    EXPECT_THROW(select_device("gpu"), Error);
  }
  EXPECT_THROW(select_device(std::to_string(devices.size())), Error);
  EXPECT_THROW(select_device("bogus"), Error);
}

// Cross products of a few vectors through an embedded header, on the device and on the host.
const char kCrossSource[] = R"(#include "kernels/base/vec.h"
__kernel void cross3(__global const float* a, __global const float* b, __global float* out, uint count) {
  const uint i = get_global_id(0) + get_global_id(1) * get_global_size(0);
  if (i >= count) return;
  const float3 r = v3_cross(v3_load(a + 3 * i), v3_load(b + 3 * i));
  out[3 * i] = r.x;
  out[3 * i + 1] = r.y;
  out[3 * i + 2] = r.z;
}
)";

void run_cross(const Device& device, const Program& program) {
  const std::vector<float> a = {1, 0, 0, 0.1f, 0.2f, 0.3f, -3.5f, 2.25f, 1e-3f, 1e6f, -7, 0.333f};
  const std::vector<float> b = {0, 1, 0, 0.7f, -0.4f, 0.9f, 0.125f, 8, -2, 3, 1e-4f, -1e5f};
  const uint32_t count = static_cast<uint32_t>(a.size() / 3);
  DeviceMemoryBudget budget(device);
  Buffer da = budget.create("a", a.size() * sizeof(float), BufferAccess::read_only);
  Buffer db = budget.create("b", b.size() * sizeof(float), BufferAccess::read_only);
  Buffer dout = budget.create("out", a.size() * sizeof(float), BufferAccess::write_only);
  EXPECT_EQ(budget.used_bytes(), 3 * a.size() * sizeof(float));
  write_buffer(device, da, a);
  write_buffer(device, db, b);
  Kernel kernel = program.kernel("cross3");
  kernel.set_args(da, db, dout, count);
  const EventTiming timing = launch_2d(device, kernel, {2, 2}, {1, 1}).timing();
  EXPECT_LE(timing.start_ns, timing.end_ns);
  const std::vector<float> out = read_buffer<float>(device, dout, a.size());
  for (uint32_t i = 0; i < count; ++i) {
    const float3 r = v3_cross(v3_load(&a[3 * i]), v3_load(&b[3 * i]));
    EXPECT_EQ(out[3 * i], r.x) << i;  // bit-exact: no contraction on either side
    EXPECT_EQ(out[3 * i + 1], r.y) << i;
    EXPECT_EQ(out[3 * i + 2], r.z) << i;
  }
}

// What every program is built with: the OpenCL C version, and on CPU devices the define that
// selects the kernels' CPU paths.
// Devices that can divide and take square roots correctly rounded are asked to, as the host does.
std::string rounding_options(const Device& device) {
  return device.info().correctly_rounded_divide_sqrt ? " -cl-fp32-correctly-rounded-divide-sqrt" : "";
}

std::string expected_options(const Device& device) {
  return (uses_cpu_paths(device) ? "-cl-std=CL1.2 -D TS_DEVICE_CPU=1" : "-cl-std=CL1.2") + rounding_options(device);
}

TEST(OpenCl, CpuDevicesTakeTheCpuPathsUnlessTurnedOff) {
  REQUIRE_OPENCL();
  const Device device = Device::open("auto");
  const bool cpu = device.info().type == DeviceType::cpu;
  EXPECT_EQ(uses_cpu_paths(device), cpu);
  ScopedEnv off("TESSERA_CPU_PATHS", "off");
  EXPECT_FALSE(uses_cpu_paths(device));
  EXPECT_EQ(build_program_from_source(device, "__kernel void k(__global int* o) { o[0] = 1; }", "", "k.cl",
                                      CacheUse::disabled)
                .report()
                .options,
            "-cl-std=CL1.2" + rounding_options(device));
}

TEST(OpenCl, EnvironmentAddsBuildOptionsAndChoosesTheDivision) {
  REQUIRE_OPENCL();
  const Device device = Device::open("auto");
  const char* source = "__kernel void k(__global int* o) { o[0] = X; }";
  {
    ScopedEnv extra("TESSERA_CL_OPTIONS", "-D X=7");
    const Program p = build_program_from_source(device, source, "", "k.cl", CacheUse::disabled);
    EXPECT_NE(p.report().options.find(" -D X=7"), std::string::npos) << p.report().options;  // and X compiled
    ScopedEnv fast("TESSERA_CL_DIVIDE", "fast");
    EXPECT_EQ(build_program_from_source(device, source, "", "k.cl", CacheUse::disabled).report().options.find("correctly-rounded"),
              std::string::npos);
  }
  ScopedEnv forbidden("TESSERA_CL_OPTIONS", "-D X=1 -cl-fast-relaxed-math");
  EXPECT_THROW(build_program_from_source(device, source, "", "k.cl", CacheUse::disabled), Error);
}

TEST(OpenCl, BuildsRunsAndCachesProgram) {
  REQUIRE_OPENCL();
  TempDir dir("clcache");
  ScopedEnv cache("TESSERA_CACHE_DIR", dir.path().string());
  const Device device = Device::open("auto");

  const Program first = build_program_from_source(device, kCrossSource, "", "cross3.cl");
  EXPECT_FALSE(first.cache_hit());
  EXPECT_EQ(first.report().options, expected_options(device));
  run_cross(device, first);
  if (!std::filesystem::exists(first.report().cache_file))
    GTEST_SKIP() << "driver exports no program binary: " << first.report().cache_note;

  const Program second = build_program_from_source(device, kCrossSource, "", "cross3.cl");
  EXPECT_TRUE(second.cache_hit()) << second.report().cache_note;
  run_cross(device, second);

  // Other options are another cache entry.
  EXPECT_NE(program_cache_key(device.info(), "x", "-DA"), program_cache_key(device.info(), "x", "-DB"));

  // A corrupt entry is ignored, rebuilt and replaced.
  write_file_atomically(second.report().cache_file, "garbage", 7);
  const Program third = build_program_from_source(device, kCrossSource, "", "cross3.cl");
  EXPECT_FALSE(third.cache_hit());
  EXPECT_NE(third.report().cache_note.find("corrupt"), std::string::npos) << third.report().cache_note;
  run_cross(device, third);
  EXPECT_GT(std::filesystem::file_size(third.report().cache_file), 7u);
}

TEST(OpenCl, BrokenKernelReportsBuildLog) {
  REQUIRE_OPENCL();
  const Device device = Device::open("auto");
  const std::string source =
      "#include \"kernels/base/vec.h\"\n"
      "__kernel void broken(__global float* out) {\n"
      "  out[0] = no_such_symbol_xyz;\n"
      "}\n";
  try {
    build_program_from_source(device, source, "", "broken.cl", CacheUse::disabled);
    FAIL() << "broken kernel built";
  } catch (const ClError& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.code(), CL_BUILD_PROGRAM_FAILURE);
    EXPECT_NE(message.find("clBuildProgram(broken.cl, " + expected_options(device) +
                           ") failed: CL_BUILD_PROGRAM_FAILURE (-11)"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("no_such_symbol_xyz"), std::string::npos) << message;
    EXPECT_NE(message.find("broken.cl:3"), std::string::npos) << message;  // #line kept the real position
  }
}

TEST(OpenCl, MemoryBudgetRefusesWithBufferList) {
  REQUIRE_OPENCL();
  const Device device = Device::open("auto");
  DeviceMemoryBudget budget(device, parse_memory_size("950M"));
  const std::vector<BufferRequest> scene = {
      {"triangles", 150 * MiB}, {"kd_nodes", 610 * MiB}, {"positions", 479 * MiB}};
  EXPECT_EQ(message_of([&] { budget.check(scene); }),
            "scene needs 1.21 GB of device memory (kd_nodes 610 MB, positions 479 MB, triangles 150 MB) but "
            "--gpu-mem-limit is 950 MB");
  EXPECT_NO_THROW(budget.check({{"kd_nodes", 610 * MiB}}));

  Buffer frame = budget.create("framebuffer", 1 * MiB);
  Buffer empty = budget.create("textures", 0);  // empty scene sections still get a valid buffer
  EXPECT_TRUE(empty);
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_NE(message_of([&] { budget.check({{"kd_nodes", 949 * MiB}}); })
                .find("is already in use (framebuffer 1 MB, textures 16 B)"),
            std::string::npos);
  EXPECT_EQ(budget.live_buffers().size(), 2u);
  const uint64_t used = budget.used_bytes();
  frame.release();
  EXPECT_EQ(budget.used_bytes(), used - MiB);
  EXPECT_EQ(budget.peak_bytes(), used);

  DeviceMemoryBudget unlimited(device);
  const uint64_t too_big = device.info().max_alloc_bytes + 1;
  if (too_big < device.info().global_mem_bytes) {
    const std::string message = message_of([&] { unlimited.create("kd_nodes", too_big); });
    EXPECT_NE(message.find("buffer kd_nodes ("), std::string::npos) << message;
    EXPECT_NE(message.find("CL_DEVICE_MAX_MEM_ALLOC_SIZE"), std::string::npos) << message;
  }
  const std::string message = message_of([&] { unlimited.check({{"huge", device.info().max_alloc_bytes + 1}}); });
  EXPECT_TRUE(message.find("CL_DEVICE_MAX_MEM_ALLOC_SIZE") != std::string::npos ||
              message.find("global memory") != std::string::npos)
      << message;

  EXPECT_THROW(write_buffer(device, empty, "0123456789abcdefXYZ", 17), Error);  // beyond the requested 0 bytes
}

}  // namespace
}  // namespace tessera::cl
