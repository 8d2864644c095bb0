#include "common/cl/program.h"

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "common/base/error.h"
#include "common/cl/cl_error.h"
#include "common/cl/device.h"
#include "common/cl/program_cache.h"
#include "common/cl/source_resolver.h"
#include "common/scene/kd_blocked_layout.h"

namespace tessera::cl {
namespace {

// Enough for the first errors, which are the ones that matter; a broken header can otherwise
// produce megabytes of follow-on errors.
constexpr size_t kMaxLogLines = 60;
constexpr size_t kMaxLogChars = 8000;

const char* const kForbiddenOptions[] = {"-cl-fast-relaxed-math", "-cl-mad-enable", "-cl-unsafe-math-optimizations",
                                         "-cl-finite-math-only", "-cl-no-signed-zeros", "-cl-denorms-are-zero"};

std::string trim_log(std::string log) {
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n' || log.back() == ' ' || log.back() == '\r'))
    log.pop_back();
  size_t pos = 0, lines = 0;
  while (pos < log.size() && lines < kMaxLogLines && pos < kMaxLogChars) {
    const size_t end = log.find('\n', pos);
    if (end == std::string::npos) return log.size() > kMaxLogChars ? log.substr(0, kMaxLogChars) + "\n..." : log;
    pos = end + 1;
    ++lines;
  }
  if (pos >= log.size()) return log;
  size_t rest = 1;
  for (size_t i = pos; i < log.size(); ++i) rest += log[i] == '\n';
  return log.substr(0, std::min(pos, kMaxLogChars)) + "... (" + std::to_string(rest) + " more lines of build log)";
}

std::string build_log(cl_program program, cl_device_id device) {
  size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS || size == 0)
    return {};
  std::string log(size, '\0');
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) != CL_SUCCESS) return {};
  return trim_log(std::move(log));
}

// TESSERA_CL_OPTIONS adds build options to every kernel build (e.g. -D switches of kernel variants,
// to compare them in one program run); the forbidden options stay forbidden.
std::string with_environment_options(std::string_view options) {
  const char* env = std::getenv("TESSERA_CL_OPTIONS");
  if (!env || !*env) return std::string(options);
  return options.empty() ? std::string(env) : std::string(options) + " " + env;
}

std::string build_call(std::string_view name, const std::string& options) {
  return "clBuildProgram(" + std::string(name) + ", " + options + ")";
}

// Null when the driver rejects the cached binary (e.g. after an update that kept the version string).
ProgramHandle program_from_binary(const Device& device, const std::vector<uint8_t>& binary, const std::string& options) {
  const size_t size = binary.size();
  const unsigned char* data = binary.data();
  cl_int binary_status = CL_SUCCESS, status = CL_SUCCESS;
  ProgramHandle program(
      clCreateProgramWithBinary(device.context(), 1, &device.info().id, &size, &data, &binary_status, &status));
  if (status != CL_SUCCESS || binary_status != CL_SUCCESS) return {};
  const cl_device_id id = device.id();
  if (clBuildProgram(program.get(), 1, &id, options.c_str(), nullptr, nullptr) != CL_SUCCESS) return {};
  return program;
}

ProgramHandle program_from_source(const Device& device, const ResolvedSource& source, std::string_view name,
                                  const std::string& options, std::string& log) {
  const char* text = source.text.c_str();
  const size_t length = source.text.size();
  cl_int status = CL_SUCCESS;
  ProgramHandle program(clCreateProgramWithSource(device.context(), 1, &text, &length, &status));
  TESSERA_CL_CHECK(status, "clCreateProgramWithSource(" + std::string(name) + ")");
  const cl_device_id id = device.id();
  status = clBuildProgram(program.get(), 1, &id, options.c_str(), nullptr, nullptr);
  log = map_log_locations(build_log(program.get(), id), source);
  if (status != CL_SUCCESS) {
    std::string message = build_call(name, options) + " failed: " + cl_error_name(status) + " (" +
                          std::to_string(status) + ") on " + device.info().name;
    message += log.empty() ? "; the build log is empty" : "; build log:\n" + log;
    throw ClError(message, status);
  }
  return program;
}

// Empty when the driver cannot export a binary; the program then simply is not cached.
std::vector<uint8_t> program_binary(cl_program program) {
  size_t size = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS || size == 0)
    return {};
  std::vector<uint8_t> binary(size);
  unsigned char* data = binary.data();
  if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof data, &data, nullptr) != CL_SUCCESS) return {};
  return binary;
}

Program build(const Device& device, const ResolvedSource& source, std::string_view name,
              std::string_view user_options, CacheUse cache) {
  const auto start = std::chrono::steady_clock::now();
  BuildReport report;
  report.options = final_build_options(with_environment_options(user_options));
  if (uses_cpu_paths(device)) report.options += " -D TS_DEVICE_CPU=1";
  // The kd-tree node layout DeviceScene uploads (TESSERA_KD_LAYOUT), so kernel and buffer agree.
  if (const std::string layout = kd_node_layout_from_environment().build_options(); !layout.empty())
    report.options += " " + layout;
  // Divisions and square roots rounded as on the host: without it NVIDIA's OpenCL divides to within
  // 2.5 ulp and its primary hits differ from the host's in some pixels (tessera-bench rays
  // hits_xxh64); with it they are bit-identical. TESSERA_CL_DIVIDE=fast leaves the device's default.
  const char* divide = std::getenv("TESSERA_CL_DIVIDE");
  if (device.info().correctly_rounded_divide_sqrt && !(divide && std::string_view(divide) == "fast"))
    report.options += " -cl-fp32-correctly-rounded-divide-sqrt";
  const std::filesystem::path dir = cache == CacheUse::enabled ? kernel_cache_dir() : std::filesystem::path();
  const uint64_t key = program_cache_key(device.info(), source.text, report.options);
  if (!dir.empty()) report.cache_file = program_cache_file(dir, key);
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };

  ProgramHandle program;
  if (!dir.empty()) {
    std::error_code ec;
    const bool exists = std::filesystem::exists(report.cache_file, ec);
    if (std::optional<std::vector<uint8_t>> binary = load_cached_binary(dir, key)) {
      program = program_from_binary(device, *binary, report.options);
      if (program) {
        report.cache_hit = true;
        report.seconds = elapsed();
        return Program(std::move(program), std::string(name), std::move(report));
      }
      report.cache_note = "cached binary rejected by the driver; rebuilt from source";
    } else if (exists) {
      report.cache_note = "cache entry unreadable or corrupt; rebuilt from source";
    }
  } else {
    report.cache_note = cache == CacheUse::enabled ? "no cache directory (set TESSERA_CACHE_DIR)" : "cache disabled";
  }

  program = program_from_source(device, source, name, report.options, report.log);
  if (!dir.empty()) {
    const std::vector<uint8_t> binary = program_binary(program.get());
    if (binary.empty()) report.cache_note = "driver provided no program binary; not cached";
    else if (!store_cached_binary(dir, key, binary))
      report.cache_note = "cannot write " + report.cache_file.string() + "; not cached";
  }
  report.seconds = elapsed();
  return Program(std::move(program), std::string(name), std::move(report));
}

}  // namespace

std::string final_build_options(std::string_view options) {
  std::istringstream words{std::string(options)};
  bool has_std = false;
  for (std::string word; words >> word;) {
    for (const char* forbidden : kForbiddenOptions)
      if (word == forbidden)
        throw Error("OpenCL build option " + word +
                    " is not allowed: host and device renders must round identically");
    has_std = has_std || word.rfind("-cl-std=", 0) == 0;
  }
  std::string result = has_std ? std::string() : std::string("-cl-std=CL1.2");
  if (!options.empty()) result += (result.empty() ? "" : " ") + std::string(options);
  return result;
}

bool uses_cpu_paths(const Device& device) {
  const char* env = std::getenv("TESSERA_CPU_PATHS");
  return device.info().type == DeviceType::cpu && !(env && std::string_view(env) == "off");
}

Program build_program(const Device& device, std::string_view entry_path, std::string_view options, CacheUse cache) {
  return build(device, load_kernel_source(entry_path), entry_path, options, cache);
}

Program build_program_from_source(const Device& device, std::string_view source, std::string_view options,
                                  std::string_view source_name, CacheUse cache) {
  return build(device, resolve_includes(source, source_name), source_name, options, cache);
}

}  // namespace tessera::cl
