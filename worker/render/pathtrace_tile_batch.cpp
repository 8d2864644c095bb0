#include "worker/render/pathtrace_tile_batch.h"

#include <algorithm>
#include <vector>

#include "common/base/error.h"
#include "common/cl/commands.h"
#include "common/cl/launch_1d.h"
#include "kernels/render/tile_batch.h"
#include "worker/render/batch_launch_list.h"

namespace tessera {
namespace {

constexpr size_t kLocal = 8;  // 8 x 8 work groups, as a single tile's launch

void ensure(cl::DeviceMemoryBudget& budget, cl::Buffer& buffer, const char* name, uint64_t bytes) {
  budget.ensure(buffer, name, std::max<uint64_t>(bytes, 4));
}

}  // namespace

PathTraceTileBatch::PathTraceTileBatch(const cl::Device& device, cl::DeviceMemoryBudget& budget, const DeviceScene& scene,
                                       const cl::Program& program, PathTraceDeviceAccumulator& accumulator)
    : device_(device),
      budget_(budget),
      scene_(scene),
      accumulator_(accumulator),
      primary_(program.kernel("pathtrace_primary_tiles")),
      paths_(program.kernel("pathtrace_paths_tiles")) {}

cl_uint PathTraceTileBatch::set_common_args(cl::Kernel& kernel, const PtLaunch& base, cl_uint tile_count,
                                            cl_uint rows_per_tile, cl_uint sample) {
  PathTraceParams pt = base.pt;
  pt.samples = 1;
  cl_uint arg = scene_.set_scene_args(kernel, 0);
  arg = scene_.set_shading_args(kernel, arg);
  kernel.set_arg(arg++, base.settings);
  kernel.set_arg(arg++, pt);
  kernel.set_arg(arg++, base.left);
  kernel.set_arg(arg++, base.right);
  kernel.set_arg(arg++, tiles_);
  kernel.set_arg(arg++, tile_count);
  kernel.set_arg(arg++, rows_per_tile);
  kernel.set_arg(arg++, sample);
  return arg;
}

PtBatchDone PathTraceTileBatch::render(const PtLaunch& base, std::span<const PtBatchTileWork> tiles, uint32_t spp,
                                       uint32_t per_launch, const ResolveOptions& resolve, std::span<uint32_t> out,
                                       const StopRequested& stop) {
  PtBatchDone done;
  if (tiles.empty()) return done;
  if (spp == 0 || per_launch == 0) throw Error("pathtrace: a batch needs samples");
  const uint32_t eyes = base.pt.eye_count;
  // The tile list: an entry per eye of every pair, then each entry's first sample.
  std::vector<BatchTile> entries;
  std::vector<cl_uint> first_samples;
  std::vector<size_t> groups_before(tiles.size());  // a pair's first work group in a launch's counters
  size_t groups = 0;
  for (size_t i = 0; i < tiles.size(); ++i) {
    const PtBatchTileWork& t = tiles[i];
    if (!t.sums) throw Error("pathtrace: a batch tile without device sums");
    const uint64_t n = uint64_t(t.rect.width) * t.rect.height;
    for (uint32_t e = 0; e < eyes; ++e) {
      entries.push_back({t.rect, e, t.offset + e * n});
      first_samples.push_back(t.first_sample);
    }
    groups_before[i] = groups;
    groups += PathTraceDeviceAccumulator::groups(n * eyes);
  }
  BatchLaunchList list = batch_launch_list(entries, out.size());
  list.words.insert(list.words.end(), first_samples.begin(), first_samples.end());
  const uint64_t pixels = list.pixels;
  const uint32_t launches = (spp + per_launch - 1) / per_launch;
  // Counters: groups of every launch's merges, then of the resolve (median pixels).
  std::vector<uint32_t> partials(size_t(launches + 1) * groups * TS_PT_TOTALS);

  ensure(budget_, tiles_, "pathtrace_batch_tiles", list.words.size() * sizeof(cl_uint));
  ensure(budget_, own_, "pathtrace_batch_own", pixels * sizeof(PtPixelOut));
  ensure(budget_, reproj_, "pathtrace_batch_reproj", pixels * 4 * sizeof(float));
  ensure(budget_, primaries_, "pathtrace_batch_primaries", pixels * sizeof(PtPrimary));
  ensure(budget_, mean_, "pathtrace_batch_mean", pixels * 3 * sizeof(float));
  ensure(budget_, linear_, "pathtrace_batch_linear", pixels * 3 * sizeof(float));
  ensure(budget_, rgba_, "pathtrace_batch_rgba", pixels * sizeof(uint32_t));
  ensure(budget_, partials_, "pathtrace_batch_partials", partials.size() * sizeof(uint32_t));
  cl::write_buffer(device_, tiles_, list.words);

  const cl_uint tile_count = cl_uint(entries.size()), rows = cl_uint(list.max_height);
  const cl::Range2D global{list.max_width, size_t(list.max_height) * entries.size()};
  std::vector<cl::Event> traces, merges;
  for (uint32_t l = 0; l < launches; ++l) {
    // Two launches in flight: the device never waits for the host, and `stop` is heard soon.
    if (l >= 2) merges[size_t(l - 2) * tiles.size() + tiles.size() - 1].wait();
    if (stop && stop()) {
      device_.finish();
      throw RenderCanceled();
    }
    cl::fill_buffer_u32(device_, own_, 0, pixels * sizeof(PtPixelOut));
    cl::fill_buffer_u32(device_, reproj_, 0, pixels * 4 * sizeof(float));
    const uint32_t samples = std::min(per_launch, spp - l * per_launch);
    for (uint32_t k = 0; k < samples; ++k) {  // a sample: first hits of both eyes, then the paths
      const cl_uint sample = cl_uint(l * per_launch + k);
      cl_uint arg = set_common_args(primary_, base, tile_count, rows, sample);
      primary_.set_arg(arg++, primaries_);
      primary_.set_arg(arg++, own_);
      traces.push_back(cl::launch_2d(device_, primary_, global, {kLocal, kLocal}));
      arg = set_common_args(paths_, base, tile_count, rows, sample);
      paths_.set_arg(arg++, primaries_);
      paths_.set_arg(arg++, own_);
      paths_.set_arg(arg++, reproj_);
      traces.push_back(cl::launch_2d(device_, paths_, global, {kLocal, kLocal}));
    }
    for (size_t i = 0; i < tiles.size(); ++i) {
      const PtBatchTileWork& t = tiles[i];
      merges.push_back(accumulator_.merge_at(*t.sums, own_, reproj_, size_t(t.rect.width) * t.rect.height * eyes, t.offset,
                                             partials_, size_t(l) * groups + groups_before[i]));
    }
    device_.flush();
  }

  cl::Event resolve_start;
  for (size_t i = 0; i < tiles.size(); ++i) {
    cl::Event started = accumulator_.resolve_at(*tiles[i].sums, resolve, tiles[i].rect, eyes, mean_, linear_, rgba_,
                                                tiles[i].offset, partials_, size_t(launches) * groups + groups_before[i]);
    if (i == 0) resolve_start = std::move(started);
  }
  const cl::Event read_counters = cl::read_buffer_async(device_, partials_, partials.data(), partials.size() * sizeof(uint32_t));
  const cl::Event read_pixels = cl::read_buffer_async(device_, rgba_, out.data(), pixels * sizeof(uint32_t));
  device_.flush();
  read_counters.wait();
  read_pixels.wait();
  // On the device's clock: the launches before it queued are not the resolve's time.
  const cl::EventTiming first = resolve_start.timing(), last = read_pixels.timing();
  done.resolve_ms = last.end_ns > first.start_ns ? double(last.end_ns - first.start_ns) * 1e-6 : 0.0;

  done.merged.resize(tiles.size());
  done.median_pixels.resize(tiles.size());
  for (size_t i = 0; i < tiles.size(); ++i) {
    const size_t tile_groups = PathTraceDeviceAccumulator::groups(size_t(tiles[i].rect.width) * tiles[i].rect.height * eyes);
    const auto counters = [&](size_t first_group) {
      return std::span<const uint32_t>(partials).subspan(first_group * TS_PT_TOTALS, tile_groups * TS_PT_TOTALS);
    };
    for (uint32_t l = 0; l < launches; ++l) done.merged[i].push_back(sum_partials(counters(size_t(l) * groups + groups_before[i])));
    const auto median = counters(size_t(launches) * groups + groups_before[i]);
    for (size_t g = 0; g < median.size(); g += TS_PT_TOTALS) done.median_pixels[i] += median[g];
  }
  for (const cl::Event& e : traces) done.kernel_ms += e.timing().run_ms();
  for (const cl::Event& e : merges) done.merge_ms += e.timing().run_ms();
  return done;
}

}  // namespace tessera
