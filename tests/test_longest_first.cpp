// Work-groups longest first (kernels/render/ordered_groups.h, worker/render/longest_first.h): the
// order puts the costliest groups first, a launch runs exactly the groups its order names, each
// once, and every group records what it cost.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <numeric>

#include "common/cl/commands.h"
#include "common/cl/device.h"
#include "common/cl/device_memory.h"
#include "common/cl/program.h"
#include "opencl_test_support.h"
#include "worker/render/longest_first.h"

namespace tessera {
namespace {

TEST(LongestFirst, CostliestFirstWithTiesInGridOrder) {
  EXPECT_EQ(longest_first({3, 9, 3, 0, 9}), (std::vector<uint32_t>{1, 4, 0, 2, 3}));
  EXPECT_EQ(longest_first({0, 0, 0}), (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_TRUE(longest_first({}).empty());
}

// Levels: costs in equal steps from 0 to the largest, each level in grid order.
TEST(LongestFirst, LevelsKeepGridOrderWithinALevel) {
  const std::vector<uint32_t> costs{10, 100, 95, 40, 12, 90, 0};
  EXPECT_EQ(longest_first(costs), (std::vector<uint32_t>{1, 2, 5, 3, 4, 0, 6}));
  // 4 levels of 25: 100 and 95 and 90 share the top one, 10 and 12 and 0 the lowest
  EXPECT_EQ(longest_first(costs, 4), (std::vector<uint32_t>{1, 2, 5, 3, 0, 4, 6}));
  EXPECT_EQ(longest_first(costs, 1), (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6}));
}

// A group's pixels from black through red and yellow to white for the costliest.
TEST(LongestFirst, CostPicture) {
  const ImageRgba8 image = group_cost_image({0, 50, 100, 25}, 2, 2, 3);
  ASSERT_EQ(image.width(), 4);
  ASSERT_EQ(image.height(), 6);
  const auto pixel = [&](int x, int y) {
    const uint8_t* p = image.row(y) + 4 * x;
    return std::array<int, 4>{p[0], p[1], p[2], p[3]};
  };
  EXPECT_EQ(pixel(1, 2), (std::array<int, 4>{0, 0, 0, 255}));      // group 0: nothing
  EXPECT_EQ(pixel(2, 0), (std::array<int, 4>{255, 128, 0, 255}));  // group 1: half
  EXPECT_EQ(pixel(1, 3), (std::array<int, 4>{255, 255, 255, 255}));  // group 2: the costliest
  EXPECT_EQ(pixel(3, 5), (std::array<int, 4>{191, 0, 0, 255}));    // group 3: a quarter
}

// Each work item counts its pixel once and does work growing with its virtual group; the group's
// leader notes which hardware group ran it.
constexpr const char* kOrderedSource = R"(
#include "kernels/render/ordered_groups.h"
__kernel void k(__global uint* ran_by, __global uint* visits, __global uint* sink, __global const uint* order,
                volatile __global uint* costs) {
  uint group_count = get_num_groups(0) * get_num_groups(1);
  uint g = ordered_group(order), ticket = ordered_group_start(costs, group_count);
  uint x = (g % get_num_groups(0)) * get_local_size(0) + get_local_id(0);
  uint y = (g / get_num_groups(0)) * get_local_size(1) + get_local_id(1);
  uint acc = x + y, i;
  for (i = 0u; i < g * 500u; ++i) acc = acc * 1664525u + 1013904223u;
  if (acc == 7u) sink[0] = acc;
  atomic_inc(&visits[y * get_global_size(0) + x]);
  if (ordered_group_leader()) ran_by[g] = get_group_id(1) * get_num_groups(0) + get_group_id(0);
  ordered_group_end(costs, group_count, g, ticket);
}
)";

TEST(LongestFirst, LaunchRunsItsOrderAndRecordsEveryGroup) {
  if (!testing::opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  const cl::Device device = cl::Device::open("auto");
  cl::DeviceMemoryBudget budget(device);
  const cl::Program program =
      cl::build_program_from_source(device, kOrderedSource, "", "ordered_groups_test.cl", cl::CacheUse::disabled);
  cl::Kernel kernel = program.kernel("k");
  const uint32_t groups_x = 5, groups_y = 3, groups = groups_x * groups_y, side = 4;
  const size_t items = size_t(groups) * side * side;
  cl::Buffer ran_by = budget.create("ran_by", groups * 4), visits = budget.create("visits", items * 4),
             sink = budget.create("sink", 4);
  LongestFirstOrder order(device, budget, groups, "test");
  kernel.set_arg(0, ran_by);
  kernel.set_arg(1, visits);
  kernel.set_arg(2, sink);
  order.set_args(kernel, 3);
  std::vector<uint32_t> grid(groups);
  std::iota(grid.begin(), grid.end(), 0u);
  EXPECT_EQ(order.order(), grid);  // no costs yet: grid order
  EXPECT_TRUE(order.costs().empty());
  for (int launch = 0; launch < 3; ++launch) {
    SCOPED_TRACE(launch);
    const std::vector<uint32_t> ran = order.order();
    cl::write_buffer(device, visits, std::vector<uint32_t>(items, 0u));
    order.before_launch();
    cl::launch_2d(device, kernel, {groups_x * side, groups_y * side}, {side, side}).wait();
    order.after_launch();
    const auto by = cl::read_buffer<uint32_t>(device, ran_by, groups);
    for (uint32_t h = 0; h < groups; ++h) EXPECT_EQ(by[ran[h]], h) << "hardware group " << h;
    const auto v = cl::read_buffer<uint32_t>(device, visits, items);
    EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](uint32_t n) { return n == 1u; }));
    ASSERT_EQ(order.costs().size(), groups);
    EXPECT_TRUE(std::all_of(order.costs().begin(), order.costs().end(), [](uint32_t c) { return c >= 1u; }));
    EXPECT_EQ(order.order(), longest_first(order.costs(), kLongestFirstLevels));
  }
}

}  // namespace
}  // namespace tessera
