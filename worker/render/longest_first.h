#pragma once
// Host side of work-groups longest first (kernels/render/ordered_groups.h): a launch that repeats
// (the passes of tessera-bench rays) runs its work-groups costliest first, by what each cost in
// the launch before, without changing what any work item computes. It bounds what the end of a
// launch costs (a launch drains with few warps in flight while its costliest last groups run on);
// the costs of other rays (another view, another kind) order worse than the grid (docs/ray-traversal.md).
#include <cstdint>
#include <string>
#include <vector>

#include "common/cl/commands.h"
#include "common/cl/device.h"
#include "common/cl/device_memory.h"
#include "common/cl/kernel.h"
#include "common/image/image.h"

namespace tessera {

// Group indices, costliest first by cost level: the costs in `levels` equal steps from 0 to the
// largest, groups of one level in grid order. Neighbouring groups of like cost then still run
// side by side and share their caches, and clock noise does not shuffle them (levels 0: exact
// costs). Unknown (all equal) costs give grid order.
std::vector<uint32_t> longest_first(const std::vector<uint32_t>& costs, uint32_t levels = 0);

// The levels LongestFirstOrder takes. H100, tessera-bench rays, against exact costs: Dabrovic Sponza
// +1.5-2.5 % primary and shadow rays, Crytek Sponza within 1 %; 4 levels lose 5-10 %.
constexpr uint32_t kLongestFirstLevels = 16;

// A picture of what the groups of a grid launch cost: each group's local_x x local_y pixels from black
// through red and yellow to white for the costliest (costs: groups_x a row, row by row).
ImageRgba8 group_cost_image(const std::vector<uint32_t>& costs, uint32_t groups_x, uint32_t local_x, uint32_t local_y);

// Build options for kernels that include kernels/render/ordered_groups.h: the device's own clock
// where a kernel can read one (NVIDIA), else none (the logical clock).
std::string group_clock_build_options(const cl::Device& device);

// The order and cost buffers of one repeated launch of `group_count` work-groups. The first launch
// runs in grid order, each later one in the order the costs of the one before give
// (kLongestFirstLevels levels).
class LongestFirstOrder {
 public:
  LongestFirstOrder(const cl::Device& device, cl::DeviceMemoryBudget& budget, uint32_t group_count,
                    const std::string& name);

  // Sets the kernel's order and costs arguments at `arg` and `arg + 1`.
  void set_args(cl::Kernel& kernel, cl_uint arg) const;
  // Uploads the order of the next launch (queued before it).
  void before_launch();
  // Once a launch has completed: reads what its groups cost and orders the next one by it.
  void after_launch();

  const std::vector<uint32_t>& order() const { return order_; }
  // What each group cost in the last launch (clock ticks, at least 1 a group); empty before one.
  const std::vector<uint32_t>& costs() const { return costs_; }

 private:
  const cl::Device& device_;
  uint32_t group_count_;
  cl::Buffer order_buffer_, cost_buffer_;  // costs: a slot per group, then the clock
  std::vector<uint32_t> order_, costs_;
};

}  // namespace tessera
