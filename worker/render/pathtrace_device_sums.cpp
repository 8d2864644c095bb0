#include "worker/render/pathtrace_device_sums.h"

#include <string>

#include "common/base/error.h"
#include "common/cl/commands.h"
#include "common/cl/launch_1d.h"
#include "common/image/srgb_thresholds.h"

namespace tessera {
namespace {

constexpr size_t kGroup = 64;  // TS_PT_GROUP of pathtrace_accumulate.cl

class OpenClPtSums final : public PtDeviceSums {
 public:
  OpenClPtSums(PathTraceDeviceAccumulator& accumulator, size_t pixels)
      : accumulator_(accumulator), pixels_(pixels), sums_(accumulator.create("pathtrace_sums", pixels * sizeof(PtPixelAccum))) {}

  const cl::Buffer& buffer() const { return sums_; }
  size_t pixels() const override { return pixels_; }
  void clear() override { accumulator_.clear(sums_); }
  PtBatchTotals merge(const PtBatch& batch) override { return accumulator_.merge(sums_, batch); }
  PtResolved resolve(const ResolveOptions& options, const TileRect& rect, uint32_t eye_count, bool want_linear) override {
    return accumulator_.resolve(sums_, options, rect, eye_count, want_linear);
  }
  std::vector<PtPixelAccum> read() override {
    std::vector<PtPixelAccum> out(pixels_);
    cl::read_buffer(accumulator_.device(), sums_, out.data(), pixels_ * sizeof(PtPixelAccum));
    return out;
  }

 private:
  PathTraceDeviceAccumulator& accumulator_;
  size_t pixels_;
  cl::Buffer sums_;
};

}  // namespace

size_t PathTraceDeviceAccumulator::groups(size_t pixels) { return (pixels + kGroup - 1) / kGroup; }

PtBatchTotals PtPendingMerge::wait() {
  read.wait();
  return sum_partials(partials);
}

PtBatchTotals sum_partials(std::span<const uint32_t> partials) {
  uint64_t t[TS_PT_TOTALS] = {};
  for (size_t i = 0; i < partials.size(); ++i) t[i % TS_PT_TOTALS] += partials[i];
  PtBatchTotals totals;
  totals.own_samples = t[TS_PT_TOTAL_OWN];
  totals.reprojected = t[TS_PT_TOTAL_REPROJECTED];
  totals.segments = t[TS_PT_TOTAL_SEGMENTS];
  totals.stopped = t[TS_PT_TOTAL_STOPPED];
  return totals;
}

PathTraceDeviceAccumulator::PathTraceDeviceAccumulator(const cl::Device& device, cl::DeviceMemoryBudget& budget)
    : device_(device),
      budget_(budget),
      program_(cl::build_program(device, "kernels/device/opencl/pathtrace_accumulate.cl")),
      merge_(program_.kernel("pathtrace_merge")),
      mean_(program_.kernel("pathtrace_mean")),
      resolve_(program_.kernel("pathtrace_resolve")),
      thresholds_(budget.create("pathtrace_srgb_thresholds", sizeof(float) * 255)) {
  cl::write_buffer(device_, thresholds_, linear_to_srgb8_thresholds().data(), sizeof(float) * 255);
}

std::unique_ptr<PtDeviceSums> PathTraceDeviceAccumulator::make_sums(size_t pixels) {
  return std::make_unique<OpenClPtSums>(*this, pixels);
}

void PathTraceDeviceAccumulator::clear(const cl::Buffer& buffer) { cl::fill_buffer_u32(device_, buffer, 0, buffer.size()); }

const cl::Buffer& PathTraceDeviceAccumulator::buffer_of(PtDeviceSums& sums) {
  auto* device_sums = dynamic_cast<OpenClPtSums*>(&sums);
  if (!device_sums) throw Error("pathtrace: the tile's sums are not on this device");
  return device_sums->buffer();
}

PtPendingMerge PathTraceDeviceAccumulator::merge(PtDeviceSums& sums, const cl::Buffer& own, const cl::Buffer& reproj,
                                                 size_t pixels) {
  return merge(buffer_of(sums), own, reproj, pixels);
}

cl::Event PathTraceDeviceAccumulator::merge_at(PtDeviceSums& sums, const cl::Buffer& own, const cl::Buffer& reproj,
                                               size_t pixels, size_t first, const cl::Buffer& partials, size_t first_group) {
  const cl::Buffer& buffer = buffer_of(sums);
  if (buffer.size() < pixels * sizeof(PtPixelAccum)) throw Error("pathtrace: launch larger than the tile's sums");
  if (own.size() < (first + pixels) * sizeof(PtPixelOut) || reproj.size() < (first + pixels) * 4 * sizeof(float) ||
      partials.size() < (first_group + groups(pixels)) * TS_PT_TOTALS * sizeof(uint32_t))
    throw Error("pathtrace: counters outside the batch's buffer");
  merge_.set_args(buffer, own, reproj, cl_uint(pixels), cl_uint(first), partials, cl_uint(first_group));
  return cl::launch_2d(device_, merge_, {pixels, 1}, {kGroup, 1});
}

cl::Event PathTraceDeviceAccumulator::resolve_at(PtDeviceSums& sums, const ResolveOptions& options, const TileRect& rect,
                                            uint32_t eye_count, const cl::Buffer& mean, const cl::Buffer& linear,
                                            const cl::Buffer& rgba, size_t first, const cl::Buffer& partials,
                                            size_t first_group) {
  const cl::Buffer& buffer = buffer_of(sums);
  const size_t pixels = size_t(rect.width) * rect.height * eye_count;
  if (buffer.size() < pixels * sizeof(PtPixelAccum)) throw Error("pathtrace: tile larger than its sums");
  if (rgba.size() < (first + pixels) * sizeof(uint32_t) || mean.size() < (first + pixels) * 3 * sizeof(float) ||
      linear.size() < (first + pixels) * 3 * sizeof(float) ||
      partials.size() < (first_group + groups(pixels)) * TS_PT_TOTALS * sizeof(uint32_t))
    throw Error("pathtrace: tile outside the batch's buffers");
  const PtResolveParams rp = resolve_params(options, rect, eye_count);
  mean_.set_args(buffer, cl_uint(pixels), mean, cl_uint(first));
  cl::Event started = cl::launch_2d(device_, mean_, {pixels, 1}, {kGroup, 1});
  resolve_.set_args(buffer, mean, rp, thresholds_, linear, rgba, cl_uint(first), partials, cl_uint(first_group));
  cl::launch_2d(device_, resolve_, {pixels, 1}, {kGroup, 1});
  return started;
}

PtPendingMerge PathTraceDeviceAccumulator::merge(const cl::Buffer& sums, const cl::Buffer& own, const cl::Buffer& reproj,
                                                 size_t pixels) {
  if (sums.size() < pixels * sizeof(PtPixelAccum)) throw Error("pathtrace: launch larger than the tile's sums");
  PtPendingMerge m;
  m.partials.resize(groups(pixels) * TS_PT_TOTALS);
  budget_.ensure(partials_, "pathtrace_partials", m.partials.size() * sizeof(uint32_t));
  merge_.set_args(sums, own, reproj, cl_uint(pixels), cl_uint(0), partials_, cl_uint(0));
  m.kernel = cl::launch_2d(device_, merge_, {pixels, 1}, {kGroup, 1});
  m.read = cl::read_buffer_async(device_, partials_, m.partials.data(), m.partials.size() * sizeof(uint32_t));
  return m;
}

PtBatchTotals PathTraceDeviceAccumulator::merge(const cl::Buffer& sums, const PtBatch& batch) {
  const size_t pixels = batch.own.size();
  if (batch.reproj.size() != 4 * pixels) throw Error("pathtrace: malformed batch");
  budget_.ensure(upload_own_, "pathtrace_upload_own", pixels * sizeof(PtPixelOut));
  budget_.ensure(upload_reproj_, "pathtrace_upload_reproj", batch.reproj.size() * sizeof(float));
  cl::write_buffer(device_, upload_own_, batch.own);
  cl::write_buffer(device_, upload_reproj_, batch.reproj);
  return merge(sums, upload_own_, upload_reproj_, pixels).wait();
}

PtResolved PathTraceDeviceAccumulator::resolve(const cl::Buffer& sums, const ResolveOptions& options, const TileRect& rect,
                                               uint32_t eye_count, bool want_linear) {
  const size_t n = size_t(rect.width) * rect.height, pixels = n * eye_count;
  if (sums.size() < pixels * sizeof(PtPixelAccum)) throw Error("pathtrace: tile larger than its sums");
  budget_.ensure(mean_buffer_, "pathtrace_mean", pixels * 3 * sizeof(float));
  budget_.ensure(linear_, "pathtrace_linear", pixels * 3 * sizeof(float));
  budget_.ensure(rgba_, "pathtrace_rgba", pixels * sizeof(uint32_t));
  std::vector<uint32_t> partials(groups(pixels) * TS_PT_TOTALS);
  budget_.ensure(partials_, "pathtrace_partials", partials.size() * sizeof(uint32_t));
  const PtResolveParams rp = resolve_params(options, rect, eye_count);
  mean_.set_args(sums, cl_uint(pixels), mean_buffer_, cl_uint(0));
  cl::launch_2d(device_, mean_, {pixels, 1}, {kGroup, 1});
  resolve_.set_args(sums, mean_buffer_, rp, thresholds_, linear_, rgba_, cl_uint(0), partials_, cl_uint(0));
  cl::launch_2d(device_, resolve_, {pixels, 1}, {kGroup, 1});
  PtResolved r;
  std::vector<cl::Event> reads;
  for (uint32_t e = 0; e < eye_count; ++e) {
    r.eyes[e].resize(n);
    reads.push_back(cl::read_buffer_async(device_, rgba_, r.eyes[e].data(), n * sizeof(uint32_t), e * n * sizeof(uint32_t)));
    if (want_linear) {
      r.linear[e].resize(3 * n);
      reads.push_back(cl::read_buffer_async(device_, linear_, r.linear[e].data(), 3 * n * sizeof(float), e * 3 * n * sizeof(float)));
    }
  }
  reads.push_back(cl::read_buffer_async(device_, partials_, partials.data(), partials.size() * sizeof(uint32_t)));
  device_.flush();
  for (const cl::Event& e : reads) e.wait();
  for (size_t g = 0; g < partials.size(); g += TS_PT_TOTALS) r.median_pixels += partials[g];
  return r;
}

}  // namespace tessera
