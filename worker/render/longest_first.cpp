#include "worker/render/longest_first.h"

#include <algorithm>
#include <numeric>

namespace tessera {

std::vector<uint32_t> longest_first(const std::vector<uint32_t>& costs, uint32_t levels) {
  std::vector<uint32_t> order(costs.size());
  std::iota(order.begin(), order.end(), 0u);
  std::vector<uint64_t> key(costs.begin(), costs.end());
  const uint64_t top = costs.empty() ? 0 : *std::max_element(costs.begin(), costs.end());
  if (levels > 0 && top > 0)
    for (uint64_t& k : key) k = std::min<uint64_t>(k * levels / top, levels - 1);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return key[a] > key[b]; });
  return order;
}

ImageRgba8 group_cost_image(const std::vector<uint32_t>& costs, uint32_t groups_x, uint32_t local_x, uint32_t local_y) {
  const uint32_t groups_y = groups_x ? uint32_t((costs.size() + groups_x - 1) / groups_x) : 0;
  ImageRgba8 image(int(groups_x * local_x), int(groups_y * local_y), Rgba8{0, 0, 0, 255});
  const uint32_t top = costs.empty() ? 0 : *std::max_element(costs.begin(), costs.end());
  const auto channel = [](double v) { return uint8_t(std::clamp(v, 0.0, 1.0) * 255.0 + 0.5); };
  for (int y = 0; y < image.height(); ++y) {
    uint8_t* row = image.row(y);
    for (int x = 0; x < image.width(); ++x) {
      const size_t g = size_t(y / local_y) * groups_x + size_t(x / local_x);
      const double t = g < costs.size() && top ? double(costs[g]) / top : 0.0;
      row[4 * x] = channel(3 * t);
      row[4 * x + 1] = channel(3 * t - 1);
      row[4 * x + 2] = channel(3 * t - 2);
    }
  }
  return image;
}

std::string group_clock_build_options(const cl::Device& device) {
  const auto& info = device.info();
  const bool nvidia = info.platform_name.find("NVIDIA") != std::string::npos;
  return nvidia ? "-D TS_GROUP_CLOCK_GLOBALTIMER=1" : "";
}

LongestFirstOrder::LongestFirstOrder(const cl::Device& device, cl::DeviceMemoryBudget& budget, uint32_t group_count,
                                     const std::string& name)
    : device_(device),
      group_count_(group_count),
      order_buffer_(budget.create(name + "_group_order", uint64_t(group_count) * 4)),
      cost_buffer_(budget.create(name + "_group_costs", (uint64_t(group_count) + 1) * 4)),
      order_(longest_first(std::vector<uint32_t>(group_count, 0u))) {}

void LongestFirstOrder::set_args(cl::Kernel& kernel, cl_uint arg) const {
  kernel.set_arg(arg, order_buffer_);
  kernel.set_arg(arg + 1, cost_buffer_);
}

void LongestFirstOrder::before_launch() { cl::write_buffer(device_, order_buffer_, order_); }

void LongestFirstOrder::after_launch() {
  costs_ = cl::read_buffer<uint32_t>(device_, cost_buffer_, group_count_);
  order_ = longest_first(costs_, kLongestFirstLevels);
}

}  // namespace tessera
