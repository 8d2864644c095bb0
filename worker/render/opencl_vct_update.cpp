// The OpenCL grid's incremental update when instances move: the steps of the host's
// (kernels/device/cpu/vct_update_cpu.h) as kernels over the same work items (kernels/vct/vct_update.h),
// all on the device. The sparse re-layout's prefix sums are the full build's atomic counters
// (vct_count, vct_assign): bricks land in another order than the host's, which nothing depends on
// (voxels are found through the map); only the per-level counts come back, to size the new arrays.
#include <algorithm>

#include "common/base/error.h"
#include "common/cl/commands.h"
#include "common/cl/launch_1d.h"
#include "kernels/vct/vct_update.h"
#include "worker/render/opencl_vct_renderer.h"

namespace tessera {
namespace {

constexpr size_t kLocal1d = 64;

}  // namespace

void OpenClVctRenderer::update(const VctUpdatePlan& plan, VctUpdateTimes& u) {
  const uint32_t levels = params_.level_count, cells = cpu::vct_total_cells(params_);
  const uint32_t regions = uint32_t(plan.regions.size());
  std::vector<cl::Event> structure, attributes, light, mips;

  const std::vector<uint32_t> boxes = cpu::vct_update_boxes(params_, plan.regions);
  const std::vector<float> grown = cpu::vct_grown_boxes(params_, plan.changed);
  const uint32_t changed_boxes = uint32_t(plan.changed.size() / 6);
  cl::Buffer box_buffer = budget_.create("vct_update_boxes", std::max<size_t>(boxes.size(), 1) * 4, cl::BufferAccess::read_only);
  if (!boxes.empty()) cl::write_buffer(device_, box_buffer, boxes);
  cl::Buffer grown_buffer = budget_.create("vct_update_changed", std::max<size_t>(grown.size(), 1) * 4, cl::BufferAccess::read_only);
  if (!grown.empty()) cl::write_buffer(device_, grown_buffer, grown);
  std::vector<cl::Buffer> spans;  // each region's runs of triangles
  for (const cpu::VctUpdateRegion& r : plan.regions) {
    spans.push_back(budget_.create("vct_region_spans", std::max<size_t>(r.spans.size(), 1) * sizeof(uint4),
                                   cl::BufferAccess::read_only));
    if (!r.spans.empty()) cl::write_buffer(device_, spans.back(), r.spans.data(), r.spans.size() * sizeof(uint4));
  }
  auto box_cells = [&](uint32_t r, uint32_t l) { return vct_box_count(boxes.data() + 6 * (size_t(r) * levels + l)); };
  // vct_update_cells: op on `count` cells of box (r, l) (kernels/device/opencl/vct.cl).
  auto cells_op = [&](uint32_t r, uint32_t l, uint32_t op, uint32_t count, const cl::Buffer& words,
                      std::vector<cl::Event>& into) {
    if (count == 0) return;
    update_cells_.set_args(params_, box_buffer, cl_uint(r), cl_uint(l), cl_uint(op), cl_uint(count), words);
    into.push_back(cl::launch_1d(device_, update_cells_, count, kLocal1d));
  };
  const uint32_t lanes = voxelize_lanes();
  auto voxelize_region = [&](uint32_t r, uint32_t pass, const cl::Buffer& dense_masks, const cl::Buffer& map,
                             const cl::Buffer& bricks, const cl::Buffer& accum, std::vector<cl::Event>& into) {
    const std::vector<uint4>& s = plan.regions[r].spans;
    if (s.empty()) return;
    const uint32_t items = s.back().w + s.back().z;
    set_voxelize_args(pass, plan.regions[r].voxels, spans[r], uint32_t(s.size()), items, dense_masks, map, bricks, accum);
    into.push_back(cl::launch_2d(device_, voxelize_, {lanes, items}, {lanes, 64 / lanes}));
  };

  // 1. Structure: the regions' level-0 masks cleared and marked again, the coarser levels' over them.
  for (uint32_t r = 0; r < regions; ++r) {
    cells_op(r, 0, 0, box_cells(r, 0), masks_, structure);
    voxelize_region(r, TS_VCT_PASS_MARK, masks_, masks_, masks_, masks_, structure);
  }
  for (uint32_t l = 0; l + 1 < levels; ++l) {
    for (uint32_t r = 0; r < regions; ++r) cells_op(r, l + 1, 0, box_cells(r, l + 1), masks_, structure);
    for (uint32_t r = 0; r < regions; ++r) cells_op(r, l, 1, vct_children_count(&params_, boxes.data(), r, l), masks_, structure);
  }

  // 2. The sparse layout again from the masks; the old arrays stay until the kept voxels are copied.
  cl::Buffer counters = budget_.create("vct_counters", 8 * TS_VCT_MAX_LEVELS);
  structure.push_back(cl::fill_buffer_u32(device_, counters, 0, 8 * TS_VCT_MAX_LEVELS));
  for (uint32_t l = 0; l < levels; ++l) {
    const uint32_t level_cells = cpu::vct_level_cells(params_, l);
    count_.set_args(params_, cl_uint(l), cl_uint(level_cells), masks_, counters);
    structure.push_back(cl::launch_1d(device_, count_, level_cells, kLocal1d));
  }
  const VctGridParams old_params = params_;
  cpu::vct_set_offsets(params_, cl::read_buffer<uint32_t>(device_, counters, 2 * TS_VCT_MAX_LEVELS));
  cl::Buffer old_map = std::move(map_), old_bricks = std::move(bricks_), old_radiance = std::move(radiance_),
             old_albedo = std::move(albedo_), old_normal = std::move(normal_);
  positions_.release();
  const uint64_t voxels = params_.voxel_offset[levels], level0 = params_.voxel_offset[1];
  const uint64_t brick_count = params_.brick_offset[levels];
  budget_.check({{"vct_map", uint64_t(cells) * 4},
                 {"vct_bricks", brick_count * 16},
                 {"vct_radiance", voxels * 4},
                 {"vct_positions", voxels * 4},
                 {"vct_albedo", level0 * 4},
                 {"vct_normal", level0 * 4}},
                "VCT grid update");
  map_ = budget_.create("vct_map", uint64_t(cells) * 4);
  bricks_ = budget_.create("vct_bricks", std::max<uint64_t>(brick_count, 1) * 16);
  radiance_ = budget_.create("vct_radiance", std::max<uint64_t>(voxels, 1) * 4);
  positions_ = budget_.create("vct_positions", std::max<uint64_t>(voxels, 1) * 4);
  albedo_ = budget_.create("vct_albedo", std::max<uint64_t>(level0, 1) * 4);
  normal_ = budget_.create("vct_normal", std::max<uint64_t>(level0, 1) * 4);
  for (uint32_t l = 1; l < levels; ++l)  // the dense words of recomputed cells: empty until their mips
    for (uint32_t r = 0; r < regions; ++r) cells_op(r, l, 2, box_cells(r, l), dense_, structure);
  structure.push_back(cl::fill_buffer_u32(device_, counters, 0, 8 * TS_VCT_MAX_LEVELS));
  for (uint32_t l = 0; l < levels; ++l) {
    const uint32_t level_cells = cpu::vct_level_cells(params_, l);
    assign_.set_args(params_, cl_uint(l), cl_uint(level_cells), masks_, counters, map_, bricks_, positions_, dense_);
    structure.push_back(cl::launch_1d(device_, assign_, level_cells, kLocal1d));
  }
  if (brick_count) {
    copy_kept_.set_args(params_, old_params, box_buffer, cl_uint(regions), bricks_, old_map, old_bricks, old_radiance,
                        old_albedo, old_normal, radiance_, albedo_, normal_);
    structure.push_back(cl::launch_1d(device_, copy_kept_, brick_count, kLocal1d));
  }
  device_.finish();
  for (cl::Buffer* b : {&old_map, &old_bricks, &old_radiance, &old_albedo, &old_normal}) b->release();

  // 3. The regions' attributes: fragment sums for their voxels alone (bricks renumbered from the regions'
  //    first voxel), then averaged.
  const uint32_t bricks0 = params_.brick_offset[1];
  uint32_t region_voxels = 0, region_bricks = 0;
  cl::Buffer local_bricks = budget_.create("vct_region_local_bricks", std::max<uint64_t>(bricks0, 1) * 16);
  cl::Buffer list = budget_.create("vct_region_brick_list", std::max<uint64_t>(bricks0, 1) * 4);
  if (bricks0) {
    attributes.push_back(cl::fill_buffer_u32(device_, counters, 0, 8));
    region_bricks_.set_args(params_, box_buffer, cl_uint(regions), bricks_, local_bricks, counters, list);
    attributes.push_back(cl::launch_1d(device_, region_bricks_, bricks0, kLocal1d));
    const auto c = cl::read_buffer<uint32_t>(device_, counters, 2);
    region_voxels = c[0], region_bricks = c[1];
  }
  if (region_voxels) {
    const uint64_t accum_bytes = uint64_t(region_voxels) * TS_VCT_ACCUM_WORDS * 4;
    cl::Buffer accum = budget_.create("vct_accumulators", accum_bytes);
    attributes.push_back(cl::fill_buffer_u32(device_, accum, 0, accum_bytes));
    for (uint32_t r = 0; r < regions; ++r) voxelize_region(r, TS_VCT_PASS_ACCUMULATE, accum, map_, local_bricks, accum, attributes);
    cl_uint arg = scene_.set_shading_args(finalize_region_, 0);
    finalize_region_.set_arg(arg++, cl_uint(region_bricks));
    finalize_region_.set_arg(arg++, list);
    finalize_region_.set_arg(arg++, bricks_);
    finalize_region_.set_arg(arg++, local_bricks);
    finalize_region_.set_arg(arg++, accum);
    finalize_region_.set_arg(arg++, albedo_);
    finalize_region_.set_arg(arg++, normal_);
    attributes.push_back(cl::launch_1d(device_, finalize_region_, region_bricks, kLocal1d));
    device_.finish();
  }
  local_bricks.release();
  list.release();

  // 4. Light: the regions' voxels, and those elsewhere whose shadow rays may cross a changed box.
  cl::Buffer dirty = budget_.create("vct_update_dirty", uint64_t(cells) * 4);
  light.push_back(cl::fill_buffer_u32(device_, dirty, 0, uint64_t(cells) * 4));
  light.push_back(cl::fill_buffer_u32(device_, counters, 0, 8));
  if (bricks0) {
    cl_uint arg = scene_.set_scene_args(update_light_, 0);
    arg = scene_.set_shading_args(update_light_, arg);
    update_light_.set_arg(arg++, params_);
    update_light_.set_arg(arg++, lights_buffer_);
    update_light_.set_arg(arg++, cl_uint(lights_.size()));
    update_light_.set_arg(arg++, box_buffer);
    update_light_.set_arg(arg++, cl_uint(regions));
    update_light_.set_arg(arg++, grown_buffer);
    update_light_.set_arg(arg++, cl_uint(changed_boxes));
    update_light_.set_arg(arg++, bricks_);
    update_light_.set_arg(arg++, positions_);
    update_light_.set_arg(arg++, albedo_);
    update_light_.set_arg(arg++, normal_);
    update_light_.set_arg(arg++, radiance_);
    update_light_.set_arg(arg++, dirty);
    update_light_.set_arg(arg++, counters);
    light.push_back(cl::launch_1d(device_, update_light_, bricks0, kLocal1d));
  }
  const auto tally = cl::read_buffer<uint32_t>(device_, counters, 2);

  // 5. Mips over the recomputed cells and above every changed one, level by level.
  for (uint32_t l = 1; l < levels; ++l) {
    for (uint32_t r = 0; r < regions; ++r) cells_op(r, l, 3, box_cells(r, l), dirty, mips);
    const uint32_t child_cells = cpu::vct_level_cells(params_, l - 1);
    dirty_parents_.set_args(params_, cl_uint(l - 1), cl_uint(child_cells), dirty);
    mips.push_back(cl::launch_1d(device_, dirty_parents_, child_cells, kLocal1d));
    const uint32_t level_bricks = params_.brick_offset[l + 1] - params_.brick_offset[l];
    if (level_bricks == 0) continue;
    update_mip_.set_args(params_, cl_uint(l), map_, bricks_, radiance_, positions_, dense_, dirty);
    mips.push_back(cl::launch_1d(device_, update_mip_, level_bricks, kLocal1d));
  }
  device_.finish();

  u.incremental = true;
  u.region_voxels = region_voxels;
  u.relit_outside = tally[0];
  u.steps.structure_ms = device_ms(structure);
  u.steps.attributes_ms = device_ms(attributes);
  u.steps.light_ms = device_ms(light);
  u.steps.mips_ms = device_ms(mips);
  stats_ = vct_grid_stats(params_, stats_.transient_peak_bytes);
}

}  // namespace tessera
