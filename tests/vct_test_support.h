#pragma once
// Comparing two vct grids voxel by voxel (tests/test_vct.cpp, test_instanced_vct.cpp): their brick
// layouts may order bricks differently, so voxels are matched by position.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "kernels/device/cpu/vct_cpu.h"

namespace tessera::testing {

// The same voxels, each word within a tolerance: at most max_differing of them differ, by a little.
inline void expect_same_grids(const cpu::VctGridData& a, const cpu::VctGridData& b, double max_differing = 0.0) {
  ASSERT_EQ(a.params.level_count, b.params.level_count);
  uint64_t differing = 0, total = 0;
  for (uint32_t l = 0; l < a.params.level_count; ++l) {
    ASSERT_EQ(a.level_voxels(l), b.level_voxels(l)) << "level " << l;
    ASSERT_EQ(a.level_bricks(l), b.level_bricks(l)) << "level " << l;
    for (uint32_t i = a.params.voxel_offset[l]; i < a.params.voxel_offset[l + 1]; ++i) {
      const uint32_t p = a.positions[i];
      const uint32_t wb = b.word_at(l, vct_pos_x(p), vct_pos_y(p), vct_pos_z(p));
      ASSERT_NE(wb, 0u) << "level " << l << " voxel missing";
      ++total;
      if (wb != a.radiance[i]) {
        ++differing;
        const VctVoxel x = vct_decode_voxel(a.radiance[i]), y = vct_decode_voxel(wb);
        ASSERT_NEAR(x.alpha, y.alpha, 0.01f);
        ASSERT_NEAR(x.radiance.x, y.radiance.x, 0.05f * std::max(x.radiance.x, 1e-3f));
      }
    }
  }
  EXPECT_LE(double(differing), max_differing * double(total)) << differing << " of " << total << " voxels differ";
}

}  // namespace tessera::testing
