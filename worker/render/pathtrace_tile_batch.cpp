#include "worker/render/pathtrace_tile_batch.h"

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

#include "common/base/environment.h"
#include "common/base/error.h"
#include "common/cl/commands.h"
#include "common/cl/launch_1d.h"
#include "kernels/render/tile_batch.h"
#include "worker/render/batch_launch_list.h"
#include "worker/render/persistent_launch.h"

namespace tessera {

cl_uint set_pathtrace_view_args(cl::Kernel& kernel, const DeviceScene& scene, const PtLaunch& launch,
                                const PathTraceParams& pt) {
  cl_uint arg = scene.set_scene_args(kernel, 0);
  arg = scene.set_shading_args(kernel, arg);
  kernel.set_arg(arg++, launch.settings);
  kernel.set_arg(arg++, pt);
  kernel.set_arg(arg++, launch.left);
  kernel.set_arg(arg++, launch.right);
  return arg;
}

uint32_t pathtrace_waves_from_environment() {
  return count_from_environment("TESSERA_PT_WAVES", 1, 64, "waves a batch of pairs").value_or(1);
}

namespace {

constexpr size_t kLocal = 8;  // 8 x 8 work groups, as a single tile's launch
constexpr uint64_t kMinReadPixels = 16384;  // of a read-back (64 KiB)

void ensure(cl::DeviceMemoryBudget& budget, cl::Buffer& buffer, std::string name, uint64_t bytes) {
  budget.ensure(buffer, std::move(name), std::max<uint64_t>(bytes, 4));
}


// Waits for the device before an exception leaves render(): reads still in flight write into the
// caller's output and the host counters.
class FinishOnThrow {
 public:
  explicit FinishOnThrow(const cl::Device& device) : device_(device) {}
  ~FinishOnThrow() {
    if (std::uncaught_exceptions() > exceptions_) try {
        device_.finish();
      } catch (...) {  // the device failed too: the first error is the one that counts
      }
  }

 private:
  const cl::Device& device_;
  const int exceptions_ = std::uncaught_exceptions();
};

}  // namespace

PathTraceTileBatch::PathTraceTileBatch(const cl::Device& device, cl::DeviceMemoryBudget& budget, const DeviceScene& scene,
                                       const cl::Program& program, PathTraceDeviceAccumulator& accumulator)
    : device_(device),
      budget_(budget),
      scene_(scene),
      accumulator_(accumulator),
      persistent_groups_(persistent_groups_from_environment()),
      waves_(pathtrace_waves_from_environment()),
      primary_(program.kernel("pathtrace_primary_tiles")),
      paths_(program.kernel(persistent_groups_ ? "pathtrace_paths_tiles_persistent" : "pathtrace_paths_tiles")) {}

cl_uint PathTraceTileBatch::set_common_args(cl::Kernel& kernel, const PtLaunch& base, const cl::Buffer& tiles,
                                            cl_uint tile_count, cl_uint rows_per_tile, cl_uint sample) {
  PathTraceParams pt = base.pt;
  pt.samples = 1;
  cl_uint arg = set_pathtrace_view_args(kernel, scene_, base, pt);
  kernel.set_arg(arg++, tiles);
  kernel.set_arg(arg++, tile_count);
  kernel.set_arg(arg++, rows_per_tile);
  kernel.set_arg(arg++, sample);
  return arg;
}

void PathTraceTileBatch::render(const PtLaunch& base, std::span<const PtBatchTileWork> tiles, uint32_t spp,
                                uint32_t per_launch, const ResolveOptions& resolve, std::span<uint32_t> out,
                                const StopRequested& stop, const PtBatchPairDone& on_pair_done) {
  if (tiles.empty()) return;
  if (spp == 0 || per_launch == 0) throw Error("pathtrace: a batch needs samples");
  const uint32_t eyes = base.pt.eye_count;
  const uint32_t launches = (spp + per_launch - 1) / per_launch;
  // Waves of pairs, each with its tile list: an entry per eye of every pair, then each entry's
  // first sample.
  struct Wave {
    size_t first = 0, end = 0;  // its pairs
    BatchLaunchList list;
    uint64_t pixels = 0;  // of its pairs, an eye
    uint64_t begin = UINT64_MAX;  // its pairs' first pixel in the output (it ends at list.pixels)
    double kernel_ms = -1;  // its tracing kernels' device time, once known
  };
  const size_t wave_count = std::max<size_t>(1, std::min<size_t>(waves_, tiles.size() / 2));
  std::vector<Wave> waves(wave_count);
  // Counters, a pair's together (so that one read brings them): the groups of each launch's
  // merge, then of its resolve (median pixels).
  std::vector<size_t> pair_groups(tiles.size()), counters_at(tiles.size());
  size_t groups = 0;
  uint64_t pixels = 0;  // where the launches' output ends
  for (size_t w = 0; w < wave_count; ++w) {
    Wave& wave = waves[w];
    wave.first = tiles.size() * w / wave_count;
    wave.end = tiles.size() * (w + 1) / wave_count;
    std::vector<BatchTile> entries;
    std::vector<cl_uint> first_samples;
    for (size_t i = wave.first; i < wave.end; ++i) {
      const PtBatchTileWork& t = tiles[i];
      if (!t.sums) throw Error("pathtrace: a batch tile without device sums");
      const uint64_t n = uint64_t(t.rect.width) * t.rect.height;
      for (uint32_t e = 0; e < eyes; ++e) {
        entries.push_back({t.rect, e, t.offset + e * n});
        first_samples.push_back(t.first_sample);
      }
      wave.pixels += n;
      wave.begin = std::min(wave.begin, t.offset);
      pair_groups[i] = PathTraceDeviceAccumulator::groups(n * eyes);
      counters_at[i] = groups;
      groups += pair_groups[i] * (launches + 1);
    }
    wave.list = batch_launch_list(entries, out.size());
    wave.list.words.insert(wave.list.words.end(), first_samples.begin(), first_samples.end());
    pixels = std::max(pixels, wave.list.pixels);
  }
  host_partials_.assign(groups * TS_PT_TOTALS, 0);

  if (tiles_.size() < wave_count) tiles_.resize(wave_count);
  for (size_t w = 0; w < wave_count; ++w)
    ensure(budget_, tiles_[w], "pathtrace_batch_tiles" + (w ? std::to_string(w) : std::string()),
           waves[w].list.words.size() * sizeof(cl_uint));
  ensure(budget_, own_, "pathtrace_batch_own", pixels * sizeof(PtPixelOut));
  ensure(budget_, reproj_, "pathtrace_batch_reproj", pixels * 4 * sizeof(float));
  ensure(budget_, primaries_, "pathtrace_batch_primaries", pixels * pt_primary_bytes(scene_.scene().instanced()));
  ensure(budget_, mean_, "pathtrace_batch_mean", pixels * 3 * sizeof(float));
  ensure(budget_, linear_, "pathtrace_batch_linear", pixels * 3 * sizeof(float));
  ensure(budget_, rgba_, "pathtrace_batch_rgba", pixels * sizeof(uint32_t));
  ensure(budget_, partials_, "pathtrace_batch_partials", host_partials_.size() * sizeof(uint32_t));
  if (persistent_groups_)  // a group counter a sample, reset every wave
    ensure(budget_, group_counters_, "pathtrace_batch_group_counters", uint64_t(spp) * 4);
  // Blocking writes, so all before anything is queued: later they would wait for the device.
  for (size_t w = 0; w < wave_count; ++w) cl::write_buffer(device_, tiles_[w], waves[w].list.words);

  const FinishOnThrow finish_on_throw(device_);
  std::vector<cl::Event> traces;
  std::vector<size_t> wave_traces(wave_count + 1, 0);  // wave w's are traces[wave_traces[w], wave_traces[w + 1])
  std::vector<std::vector<cl::Event>> merges(tiles.size());  // a pair's, a launch each
  // A read brings a run of neighbouring pairs (in the output and the counters) of at least
  // kMinReadPixels, or one pair: small tiles do not cost a read each.
  struct Reads {
    cl::Event pixels, counters;
  };
  std::vector<Reads> reads;
  std::vector<size_t> read_of(tiles.size());  // a pair's read
  std::vector<cl::Event> resolve_starts(tiles.size());
  size_t handed_over = 0;
  // Hands over the pairs before `end` (whose reads are queued), in order, as their reads complete.
  const auto hand_over = [&](size_t end) {
    for (; handed_over < end; ++handed_over) {
      const size_t i = handed_over;
      const PtBatchTileWork& t = tiles[i];
      const Reads& read = reads[read_of[i]];
      read.counters.wait();
      read.pixels.wait();
      const size_t w = size_t(std::find_if(waves.begin(), waves.end(), [&](const Wave& v) { return i < v.end; }) - waves.begin());
      Wave& wave = waves[w];
      if (wave.kernel_ms < 0) {  // its kernels are done: its pixels came after them
        wave.kernel_ms = 0;
        for (size_t k = wave_traces[w]; k < wave_traces[w + 1]; ++k) wave.kernel_ms += traces[k].timing().run_ms();
      }
      const uint64_t n = uint64_t(t.rect.width) * t.rect.height;
      PtBatchPair pair;
      pair.index = i;
      pair.pixels = std::span<const uint32_t>(out).subspan(t.offset, n * eyes);
      const auto counters = [&](size_t group) {
        return std::span<const uint32_t>(host_partials_).subspan(group * TS_PT_TOTALS, pair_groups[i] * TS_PT_TOTALS);
      };
      for (uint32_t l = 0; l < launches; ++l) pair.merged.push_back(sum_partials(counters(counters_at[i] + l * pair_groups[i])));
      const auto median = counters(counters_at[i] + launches * pair_groups[i]);
      for (size_t g = 0; g < median.size(); g += TS_PT_TOTALS) pair.median_pixels += median[g];
      pair.kernel_ms = wave.kernel_ms * double(n) / double(wave.pixels);
      for (const cl::Event& e : merges[i]) pair.merge_ms += e.timing().run_ms();
      // On the device's clock: the launches before it queued are not the resolve's time.
      const cl::EventTiming first = resolve_starts[i].timing(), last = read.pixels.timing();
      pair.resolve_ms = last.end_ns > first.start_ns ? double(last.end_ns - first.start_ns) * 1e-6 : 0.0;
      on_pair_done(pair);
    }
  };

  for (size_t w = 0; w < wave_count; ++w) {
    const Wave& wave = waves[w];
    const BatchLaunchList& list = wave.list;
    const cl_uint tile_count = cl_uint((wave.end - wave.first) * eyes), rows = cl_uint(list.max_height);
    const cl::Range2D global{list.max_width, size_t(list.max_height) * tile_count};
    if (persistent_groups_) cl::fill_buffer_u32(device_, group_counters_, 0, uint64_t(spp) * 4);
    wave_traces[w] = traces.size();
    for (uint32_t l = 0; l < launches; ++l) {
      // Two launches in flight: the device never waits for the host, and `stop` is heard soon.
      if (l >= 2) merges[wave.end - 1][l - 2].wait();
      if (stop && stop()) throw RenderCanceled();  // once the device is idle (finish_on_throw)
      const uint64_t cleared = list.pixels - wave.begin;  // the wave's pairs' outputs
      cl::fill_buffer_u32(device_, own_, 0, cleared * sizeof(PtPixelOut), wave.begin * sizeof(PtPixelOut));
      cl::fill_buffer_u32(device_, reproj_, 0, cleared * 4 * sizeof(float), wave.begin * 4 * sizeof(float));
      const uint32_t samples = std::min(per_launch, spp - l * per_launch);
      for (uint32_t k = 0; k < samples; ++k) {  // a sample: first hits of both eyes, then the paths
        const cl_uint sample = cl_uint(l * per_launch + k);
        cl_uint arg = set_common_args(primary_, base, tiles_[w], tile_count, rows, sample);
        primary_.set_arg(arg++, primaries_);
        primary_.set_arg(arg++, own_);
        traces.push_back(cl::launch_2d(device_, primary_, global, {kLocal, kLocal}));
        arg = set_common_args(paths_, base, tiles_[w], tile_count, rows, sample);
        paths_.set_arg(arg++, primaries_);
        paths_.set_arg(arg++, own_);
        paths_.set_arg(arg++, reproj_);
        if (persistent_groups_) {
          paths_.set_arg(arg++, cl_uint(list.max_width));
          paths_.set_arg(arg++, group_counters_);
        }
        traces.push_back(cl::launch_2d(
            device_, paths_, persistent_groups_ ? persistent_range(device_, {kLocal, kLocal}, persistent_groups_) : global,
            {kLocal, kLocal}));
      }
      for (size_t i = wave.first; i < wave.end; ++i) {
        const PtBatchTileWork& t = tiles[i];
        merges[i].push_back(accumulator_.merge_at(*t.sums, own_, reproj_, size_t(t.rect.width) * t.rect.height * eyes,
                                                  t.offset, partials_, counters_at[i] + l * pair_groups[i]));
      }
      device_.flush();
      // The previous wave's pairs go while the device traces this one (queued behind their reads).
      if (l + 1 == std::min(launches, 2u)) hand_over(wave.first);
    }
    wave_traces[w + 1] = traces.size();
    // Each pair resolved and read back on its own (or with its small neighbours), so that it can
    // go as soon as it is on the host.
    size_t read_first = wave.first;  // the first pair of the read being gathered
    for (size_t i = wave.first; i < wave.end; ++i) {
      const PtBatchTileWork& t = tiles[i];
      resolve_starts[i] = accumulator_.resolve_at(*t.sums, resolve, t.rect, eyes, mean_, linear_, rgba_, t.offset, partials_,
                                                  counters_at[i] + launches * pair_groups[i]);
      read_of[i] = reads.size();
      const PtBatchTileWork& first = tiles[read_first];
      const uint64_t end = t.offset + uint64_t(t.rect.width) * t.rect.height * eyes;
      const bool last = i + 1 == wave.end || tiles[i + 1].offset != end || end - first.offset >= kMinReadPixels;
      if (!last) continue;
      const size_t first_counter = counters_at[read_first] * TS_PT_TOTALS;
      const size_t end_counter = (counters_at[i] + (launches + 1) * pair_groups[i]) * TS_PT_TOTALS;
      reads.push_back({cl::read_buffer_async(device_, rgba_, out.data() + first.offset, (end - first.offset) * sizeof(uint32_t),
                                             first.offset * sizeof(uint32_t)),
                       cl::read_buffer_async(device_, partials_, host_partials_.data() + first_counter,
                                             (end_counter - first_counter) * sizeof(uint32_t), first_counter * sizeof(uint32_t))});
      device_.flush();
      read_first = i + 1;
    }
  }
  hand_over(tiles.size());
}

}  // namespace tessera
