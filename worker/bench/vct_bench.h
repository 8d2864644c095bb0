#pragma once
// `tessera-bench vct`: the timings of papers/001 Tables 5.2 - 5.5 for the vct mode, per scene, in one
// run (so a GPU run is one command):
//   Table 5.2  frame time of the five presets, with and without voxelizing every frame
//   Table 5.3  per step for preset 5: primary rays (preset 1), voxelize, mip levels, trace, total
//   Table 5.4  preset 5 for soft-shadow cone angles (10, 7.5, 5, 2.5 degrees)
//   Table 5.5  voxelize, mip levels and the trace of presets 3, 4, 5 for grids 64 .. 512
// plus relighting (a moved light), the grid's memory per grid size, the filled-voxelization comparison
// of Fig. 6.1 (cone-traced AO of hollow and filled grids against AO by rays through the kd-tree), and
// PSNR / SSIM of the diffuse-GI image against reference images when given.
// Device times come from OpenCL profiling events (wall time with --device host); each is the median of
// the timed passes after a warm-up.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera::bench {

struct VctBenchOptions {
  std::string device = "auto";
  uint32_t size = 400;                           // square frame, as in the thesis
  uint32_t grid = 256;                           // Tables 5.2 - 5.4
  std::vector<uint32_t> grids{64, 128, 256, 512};  // Table 5.5
  std::vector<float> angles{10.0f, 7.5f, 5.0f, 2.5f};  // Table 5.4
  int passes = 5;        // timed traces (after one warm-up)
  int build_passes = 3;  // timed voxelizations (after the first)
  bool solid_compare = true;
  uint32_t ao_reference_rays = 256;
  std::vector<std::string> references;  // PNGs: reference image of scene i (default camera), e.g. path traced
  std::string image_dir;                // when set, writes the preset images and AO images there
};

// Runs everything for every scene; returns {"device", "size", ..., "scenes": [...]}.
nlohmann::json run_vct_bench(const std::vector<std::string>& scenes, const VctBenchOptions& options);
// The tables as text, like the thesis prints them.
std::string format_vct_bench(const nlohmann::json& result);

}  // namespace tessera::bench
