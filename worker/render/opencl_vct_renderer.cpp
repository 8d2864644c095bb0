#include "worker/render/opencl_vct_renderer.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "common/base/error.h"
#include "common/cl/commands.h"
#include "common/cl/launch_1d.h"
#include "worker/render/batch_launch_list.h"
#include "common/scene/scene_motion.h"
#include "worker/render/pixel_work_items.h"
#include "worker/render/vct_instances.h"

namespace tessera {
namespace {

constexpr size_t kLocal1d = 64;
constexpr size_t kTileLocal = 8;

bool same_lights(const std::vector<VctLight>& a, const std::vector<VctLight>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(VctLight)) == 0);
}

}  // namespace

OpenClVctRenderer::OpenClVctRenderer(const PackedScene& scene, const std::string& device_spec,
                                     std::optional<uint64_t> memory_limit, const VctOptions& options,
                                     std::vector<VctLight> lights, SceneMemory scene_memory)
    : device_(cl::Device::open(device_spec)),
      budget_(device_, memory_limit),
      scene_(device_, budget_, scene, kd_node_layout_from_environment(), scene_memory),
      program_(cl::build_program(device_, "kernels/device/opencl/vct.cl", scene_.build_options())),
      voxelize_(program_.kernel("vct_voxelize")),
      interior_columns_(program_.kernel("vct_interior_columns")),
      interior_mark_(program_.kernel("vct_interior_mark")),
      parent_masks_(program_.kernel("vct_parent_masks")),
      count_(program_.kernel("vct_count")),
      assign_(program_.kernel("vct_assign")),
      finalize_(program_.kernel("vct_finalize")),
      relight_(program_.kernel("vct_relight")),
      mip_(program_.kernel("vct_mip")),
      tile_(program_.kernel("vct_tile")),
      tile_primary_(program_.kernel("vct_tile_primary")),
      tile_shade_(program_.kernel("vct_tile_shade")),
      update_cells_(program_.kernel("vct_update_cells")),
      copy_kept_(program_.kernel("vct_copy_kept")),
      region_bricks_(program_.kernel("vct_region_bricks")),
      finalize_region_(program_.kernel("vct_finalize_region")),
      update_light_(program_.kernel("vct_update_light")),
      dirty_parents_(program_.kernel("vct_dirty_parents")),
      update_mip_(program_.kernel("vct_update_mip")),
      options_(options),
      lights_(std::move(lights)) {
  if (!cl::uses_cpu_paths(device_))
    batch_.emplace(BatchKernels{program_.kernel("vct_tiles"), program_.kernel("vct_tiles_primary"), program_.kernel("vct_tiles_shade")});
  const Aabb bounds = vct_grid_bounds(scene);
  geometry_ = cpu::vct_grid_geometry(bounds.min.data(), bounds.max.data(), options.grid);
  work_items_ = scene.triangle_count();
  if (scene.instanced()) {
    top_ = SceneMotion::of_scene(scene, "scene")->top_level();  // as DeviceScene placed it
    blocks_ = vct_triangle_blocks(scene);
  }
  set_spans();
  build_times_ = build();
}

VctStepTimes OpenClVctRenderer::revoxelize() { return build(); }

double OpenClVctRenderer::device_ms(const std::vector<cl::Event>& events) {
  double ms = 0;
  for (const auto& e : events) ms += e.timing().run_ms();
  return ms;
}

// Triangles get several lanes on a GPU, so the big ones (walls, floors) do not hold a wave back.
uint32_t OpenClVctRenderer::voxelize_lanes() const { return device_.info().type == cl::DeviceType::gpu ? 16 : 4; }

void OpenClVctRenderer::set_voxelize_args(uint32_t pass, const VctRegion& region, const cl::Buffer& spans, uint32_t span_count,
                                          uint32_t items, const cl::Buffer& dense_masks, const cl::Buffer& map,
                                          const cl::Buffer& bricks, const cl::Buffer& accum) {
  cl_uint arg = scene_.set_scene_args(voxelize_, 0);
  arg = scene_.set_shading_args(voxelize_, arg);
  voxelize_.set_arg(arg++, params_);
  voxelize_.set_arg(arg++, region);
  voxelize_.set_arg(arg++, spans);
  voxelize_.set_arg(arg++, cl_uint(span_count));
  voxelize_.set_arg(arg++, cl_uint(items));
  voxelize_.set_arg(arg++, cl_uint(voxelize_lanes()));
  voxelize_.set_arg(arg++, cl_uint(pass));
  voxelize_.set_arg(arg++, dense_masks);
  voxelize_.set_arg(arg++, map);
  voxelize_.set_arg(arg++, bricks);
  voxelize_.set_arg(arg++, accum);
}

void OpenClVctRenderer::set_spans() {
  std::vector<uint4> spans;
  if (scene_.scene().instanced()) spans = vct_spans(scene_.scene(), top_);
  span_count_ = uint32_t(spans.size());
  if (!spans.empty()) work_items_ = spans.back().w + spans.back().z;
  budget_.ensure(spans_, "vct_spans", std::max<size_t>(spans.size(), 1) * sizeof(uint4), cl::BufferAccess::read_only);
  if (!spans.empty()) cl::write_buffer(device_, spans_, spans.data(), spans.size() * sizeof(uint4));
}

VctUpdateTimes OpenClVctRenderer::place_instances(const TopLevelBvh& top) {
  VctUpdateTimes u;
  if (!scene_.scene().instanced() || top.instances == top_.instances) return u;
  const auto start = std::chrono::steady_clock::now();
  const VctUpdatePlan plan = vct_plan_update(scene_.scene(), params_, top_, top, &blocks_);
  u.moved = plan.moved;
  top_ = top;
  scene_.place_instances(device_, budget_, top_);
  set_spans();
  if (u.moved == 0) return u;
  if (update_mode_ == VctUpdateMode::full || options_.solid || plan.whole_grid || !masks_) u.steps = build();
  else update(plan, u);
  u.total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return u;
}

std::string OpenClVctRenderer::description() const {
  return device_.info().name + " (OpenCL, " + device_.info().platform_name + ")";
}

VctStepTimes OpenClVctRenderer::build() {
  const VctOptions& options = options_;
  for (cl::Buffer* b : {&map_, &bricks_, &radiance_, &positions_, &albedo_, &normal_, &dense_, &masks_}) b->release();
  params_ = geometry_;
  VctStepTimes times;
  const uint32_t n = params_.resolution, levels = params_.level_count, cells = cpu::vct_total_cells(params_);
  const uint32_t triangles = work_items_;
  const uint64_t vote_words = uint64_t(n) * n * n / 32;
  const uint64_t mask_bytes = uint64_t(cells) * 8, vote_bytes = options.solid ? vote_words * 4 * 3 : 0;
  const uint32_t lanes = voxelize_lanes();
  std::vector<cl::Event> structure, fill, attributes;

  std::vector<cl::BufferRequest> transient{{"vct_brick_masks", mask_bytes}, {"vct_counters", 8 * TS_VCT_MAX_LEVELS}};
  if (options.solid) transient.push_back({"vct_fill_votes", vote_bytes});
  budget_.check(transient, "VCT grid");
  cl::Buffer masks = budget_.create("vct_brick_masks", mask_bytes);
  cl::Buffer counters = budget_.create("vct_counters", 8 * TS_VCT_MAX_LEVELS);
  structure.push_back(cl::fill_buffer_u32(device_, masks, 0, mask_bytes));

  auto set_voxelize = [&](uint32_t pass, const cl::Buffer& dense, const cl::Buffer& map, const cl::Buffer& bricks,
                          const cl::Buffer& accum) {
    set_voxelize_args(pass, vct_whole_grid(&params_), spans_, span_count_, work_items_, dense, map, bricks, accum);
  };
  const cl::Range2D voxelize_global{lanes, std::max<size_t>(triangles, 1)}, voxelize_local{lanes, 64 / lanes};

  // 1. Surface fragments -> level-0 brick masks (the other buffer arguments are unused in this pass).
  set_voxelize(TS_VCT_PASS_MARK, masks, masks, masks, masks);
  if (triangles) structure.push_back(cl::launch_2d(device_, voxelize_, voxelize_global, voxelize_local));

  // 2. Filled voxelization: three axes of column rays, two votes of three make an interior voxel.
  if (options.solid) {
    cl::Buffer votes = budget_.create("vct_fill_votes", vote_bytes);
    fill.push_back(cl::fill_buffer_u32(device_, votes, 0, vote_bytes));
    const cl_uint axis_arg = scene_.set_scene_args(interior_columns_, 0) + 1;
    interior_columns_.set_arg(axis_arg - 1, params_);
    interior_columns_.set_arg(axis_arg + 1, votes);
    for (uint32_t axis = 0; axis < 3; ++axis) {
      interior_columns_.set_arg(axis_arg, cl_uint(axis));
      fill.push_back(cl::launch_2d(device_, interior_columns_, {n, n}, {8, 8}));
    }
    interior_mark_.set_args(params_, cl_uint(vote_words), votes, masks);
    fill.push_back(cl::launch_1d(device_, interior_mark_, vote_words, kLocal1d));
    device_.finish();
  }

  // 3. Coarser levels' masks, then bricks and voxels counted per level.
  for (uint32_t l = 0; l + 1 < levels; ++l) {
    const uint32_t level_cells = cpu::vct_level_cells(params_, l);
    parent_masks_.set_args(params_, cl_uint(l), cl_uint(level_cells), masks);
    structure.push_back(cl::launch_1d(device_, parent_masks_, level_cells, kLocal1d));
  }
  structure.push_back(cl::fill_buffer_u32(device_, counters, 0, 8 * TS_VCT_MAX_LEVELS));
  for (uint32_t l = 0; l < levels; ++l) {
    const uint32_t level_cells = cpu::vct_level_cells(params_, l);
    count_.set_args(params_, cl_uint(l), cl_uint(level_cells), masks, counters);
    structure.push_back(cl::launch_1d(device_, count_, level_cells, kLocal1d));
  }
  const auto counts = cl::read_buffer<uint32_t>(device_, counters, 2 * TS_VCT_MAX_LEVELS);
  cpu::vct_set_offsets(params_, counts);

  // 4. The grid itself, checked against the budget as one set before anything is allocated.
  const uint64_t voxels = params_.voxel_offset[levels], level0 = params_.voxel_offset[1];
  const uint64_t brick_count = params_.brick_offset[levels];
  const uint64_t dense_bytes = uint64_t(params_.dense_offset[levels]) * 4;
  budget_.check({{"vct_map", uint64_t(cells) * 4},
                 {"vct_bricks", brick_count * 16},
                 {"vct_radiance", voxels * 4},
                 {"vct_positions", voxels * 4},
                 {"vct_albedo", level0 * 4},
                 {"vct_normal", level0 * 4},
                 {"vct_dense", dense_bytes},
                 {"vct_accumulators", level0 * TS_VCT_ACCUM_WORDS * 4}},
                "VCT grid");
  map_ = budget_.create("vct_map", uint64_t(cells) * 4);
  bricks_ = budget_.create("vct_bricks", brick_count * 16);
  radiance_ = budget_.create("vct_radiance", voxels * 4);
  positions_ = budget_.create("vct_positions", voxels * 4);
  albedo_ = budget_.create("vct_albedo", level0 * 4);
  normal_ = budget_.create("vct_normal", level0 * 4);
  dense_ = budget_.create("vct_dense", dense_bytes);
  structure.push_back(cl::fill_buffer_u32(device_, dense_, 0, dense_bytes));  // empty voxels of levels >= 1
  structure.push_back(cl::fill_buffer_u32(device_, counters, 0, 8 * TS_VCT_MAX_LEVELS));
  for (uint32_t l = 0; l < levels; ++l) {
    const uint32_t level_cells = cpu::vct_level_cells(params_, l);
    assign_.set_args(params_, cl_uint(l), cl_uint(level_cells), masks, counters, map_, bricks_, positions_, dense_);
    structure.push_back(cl::launch_1d(device_, assign_, level_cells, kLocal1d));
  }
  device_.finish();
  times.structure_ms = device_ms(structure);
  times.fill_ms = device_ms(fill);
  // An instanced grid keeps its masks for incremental updates (not a filled one: see vct_update_cpu.h).
  if (scene_.scene().instanced() && !options.solid) masks_ = std::move(masks);
  else masks.release();

  // 5. Level-0 attributes: the same fragments, summed into their voxels, then averaged.
  cl::Buffer accum = budget_.create("vct_accumulators", level0 * TS_VCT_ACCUM_WORDS * 4);
  attributes.push_back(cl::fill_buffer_u32(device_, accum, 0, level0 * TS_VCT_ACCUM_WORDS * 4));
  set_voxelize(TS_VCT_PASS_ACCUMULATE, accum, map_, bricks_, accum);
  if (triangles && level0) attributes.push_back(cl::launch_2d(device_, voxelize_, voxelize_global, voxelize_local));
  {
    cl_uint arg = scene_.set_shading_args(finalize_, 0);
    finalize_.set_arg(arg++, cl_uint(level0));
    finalize_.set_arg(arg++, accum);
    finalize_.set_arg(arg++, albedo_);
    finalize_.set_arg(arg++, normal_);
    attributes.push_back(cl::launch_1d(device_, finalize_, level0, kLocal1d));
  }
  device_.finish();
  times.attributes_ms = device_ms(attributes);
  accum.release();

  const VctStepTimes lit = relight();
  times.light_ms = lit.light_ms;
  times.mips_ms = lit.mips_ms;
  const uint64_t marking = mask_bytes + vote_bytes + 8 * TS_VCT_MAX_LEVELS;
  const uint64_t summing = level0 * TS_VCT_ACCUM_WORDS * 4;
  stats_ = vct_grid_stats(params_, std::max(marking, summing));
  return times;
}

VctStepTimes OpenClVctRenderer::relight() {
  VctStepTimes t;
  const uint64_t light_bytes = std::max<size_t>(1, lights_.size()) * sizeof(VctLight);
  if (!lights_buffer_ || lights_buffer_.size() < light_bytes) {
    lights_buffer_.release();
    lights_buffer_ = budget_.create("vct_lights", light_bytes, cl::BufferAccess::read_only);
  }
  if (!lights_.empty()) cl::write_buffer(device_, lights_buffer_, lights_.data(), lights_.size() * sizeof(VctLight));
  const uint32_t level0 = params_.voxel_offset[1];
  cl_uint arg = scene_.set_scene_args(relight_, 0);
  arg = scene_.set_shading_args(relight_, arg);
  relight_.set_arg(arg++, params_);
  relight_.set_arg(arg++, lights_buffer_);
  relight_.set_arg(arg++, cl_uint(lights_.size()));
  relight_.set_arg(arg++, positions_);
  relight_.set_arg(arg++, albedo_);
  relight_.set_arg(arg++, normal_);
  relight_.set_arg(arg++, radiance_);
  std::vector<cl::Event> light, mips;
  light.push_back(cl::launch_1d(device_, relight_, level0, kLocal1d));
  for (uint32_t l = 1; l < params_.level_count; ++l) {
    mip_.set_args(params_, cl_uint(l), map_, bricks_, radiance_, positions_, dense_);
    mips.push_back(cl::launch_1d(device_, mip_, params_.voxel_offset[l + 1] - params_.voxel_offset[l], kLocal1d));
  }
  device_.finish();
  t.light_ms = device_ms(light);
  t.mips_ms = device_ms(mips);
  return t;
}

VctStepTimes OpenClVctRenderer::set_lights(const std::vector<VctLight>& lights) {
  if (same_lights(lights, lights_)) return {};
  lights_ = lights;
  return relight();
}

void OpenClVctRenderer::render_tile(const CameraParams& camera, const RenderSettings& settings, const VctFrameSettings& frame,
                                    const TileRect& tile, std::span<uint32_t> out) {
  const uint64_t bytes = uint64_t(tile.width) * tile.height * 4;
  if (out.size() != size_t(tile.width) * tile.height) throw Error("tile buffer has the wrong size");
  budget_.ensure(output_, "tile_output", bytes, cl::BufferAccess::write_only);
  const VctSettings vs = make_vct_settings(frame, params_, uint32_t(lights_.size()));
  const cl::Range2D global{tile.width, tile.height}, local{kTileLocal, kTileLocal};
  // The shade half's arguments, which the single kernel takes too, followed by the tile.
  auto set_shade_args = [&](cl::Kernel& k) {
    cl_uint arg = scene_.set_scene_args(k, 0);
    arg = scene_.set_shading_args(k, arg);
    k.set_arg(arg++, settings);
    k.set_arg(arg++, camera);
    k.set_arg(arg++, params_);
    k.set_arg(arg++, map_);
    k.set_arg(arg++, bricks_);
    k.set_arg(arg++, radiance_);
    k.set_arg(arg++, dense_);
    k.set_arg(arg++, vs);
    k.set_arg(arg++, lights_buffer_);
    k.set_arg(arg++, cl_uint(tile.x0));
    k.set_arg(arg++, cl_uint(tile.y0));
    k.set_arg(arg++, cl_uint(tile.width));
    k.set_arg(arg++, cl_uint(tile.height));
    return arg;
  };
  last_primary_ms_ = last_shade_ms_ = 0;
  if (!split_tile_ || vs.output == TS_VCT_OUTPUT_AO_REFERENCE) {
    tile_.set_arg(set_shade_args(tile_), output_);
    const cl::Event run = cl::launch_2d(device_, tile_, global, local);
    cl::read_buffer(device_, output_, out.data(), bytes);
    last_tile_ms_ = run.timing().run_ms();
    return;
  }
  const uint64_t record_bytes = uint64_t(tile.width) * tile.height * TS_VCT_SURFACE_PLANES * 16;
  budget_.ensure(records_, "vct_surface_records", record_bytes);
  cl_uint arg = scene_.set_scene_args(tile_primary_, 0);
  arg = scene_.set_shading_args(tile_primary_, arg);
  tile_primary_.set_arg(arg++, settings);
  tile_primary_.set_arg(arg++, camera);
  tile_primary_.set_arg(arg++, cl_uint(tile.x0));
  tile_primary_.set_arg(arg++, cl_uint(tile.y0));
  tile_primary_.set_arg(arg++, cl_uint(tile.width));
  tile_primary_.set_arg(arg++, cl_uint(tile.height));
  tile_primary_.set_arg(arg++, records_);
  arg = set_shade_args(tile_shade_);
  tile_shade_.set_arg(arg++, records_);
  tile_shade_.set_arg(arg++, output_);
  const cl::Event primary =
      cl::launch_2d(device_, tile_primary_, pixel_work_items(device_, tile.width, tile.height), local);
  const cl::Event shade = cl::launch_2d(device_, tile_shade_, global, local);
  cl::read_buffer(device_, output_, out.data(), bytes);
  last_primary_ms_ = primary.timing().run_ms();
  last_shade_ms_ = shade.timing().run_ms();
  last_tile_ms_ = last_primary_ms_ + last_shade_ms_;
}

BatchTiming OpenClVctRenderer::render_tiles(const std::array<CameraParams, 2>& cameras, const RenderSettings& settings,
                                            const VctFrameSettings& frame, std::span<const BatchTile> tiles,
                                            std::span<uint32_t> out, const StopRequested& stop) {
  // CPU devices: tile-sized launches are the fast ones there (as for raytrace batches).
  if (!batch_) return VctRenderer::render_tiles(cameras, settings, frame, tiles, out, stop);
  if (tiles.empty()) return {};
  if (stop && stop()) throw RenderCanceled();
  const BatchLaunchList list = batch_launch_list(tiles, out.size());
  const auto start = std::chrono::steady_clock::now();
  budget_.ensure(tile_list_, "tile_list", list.words.size() * sizeof(cl_uint), cl::BufferAccess::read_only);
  cl::write_buffer(device_, tile_list_, list.words);
  budget_.ensure(output_, "tile_output", list.pixels * 4, cl::BufferAccess::write_only);
  const VctSettings vs = make_vct_settings(frame, params_, uint32_t(lights_.size()));
  const cl::Range2D per_tile = pixel_work_items(device_, list.max_width, list.max_height);
  const cl::Range2D global{per_tile.x, per_tile.y * tiles.size()}, local{kTileLocal, kTileLocal};
  // What both the whole and the shade kernel take: the scene, the eyes, the grid.
  auto set_shade_args = [&](cl::Kernel& k) {
    cl_uint arg = scene_.set_scene_args(k, 0);
    arg = scene_.set_shading_args(k, arg);
    k.set_arg(arg++, settings);
    k.set_arg(arg++, cameras[0]);
    k.set_arg(arg++, cameras[1]);
    k.set_arg(arg++, params_);
    k.set_arg(arg++, map_);
    k.set_arg(arg++, bricks_);
    k.set_arg(arg++, radiance_);
    k.set_arg(arg++, dense_);
    k.set_arg(arg++, vs);
    k.set_arg(arg++, lights_buffer_);
    k.set_arg(arg++, tile_list_);
    k.set_arg(arg++, cl_uint(tiles.size()));
    k.set_arg(arg++, cl_uint(per_tile.y));
    return arg;
  };
  std::vector<cl::Event> runs;
  if (!split_tile_ || vs.output == TS_VCT_OUTPUT_AO_REFERENCE) {
    batch_->whole.set_arg(set_shade_args(batch_->whole), output_);
    runs.push_back(cl::launch_2d(device_, batch_->whole, global, local));
  } else {
    budget_.ensure(records_, "vct_surface_records", list.pixels * TS_VCT_SURFACE_PLANES * 16);
    cl::Kernel& primary = batch_->primary;
    cl_uint arg = scene_.set_scene_args(primary, 0);
    arg = scene_.set_shading_args(primary, arg);
    primary.set_arg(arg++, settings);
    primary.set_arg(arg++, cameras[0]);
    primary.set_arg(arg++, cameras[1]);
    primary.set_arg(arg++, tile_list_);
    primary.set_arg(arg++, cl_uint(tiles.size()));
    primary.set_arg(arg++, cl_uint(per_tile.y));
    primary.set_arg(arg++, cl_uint(list.pixels));
    primary.set_arg(arg++, records_);
    arg = set_shade_args(batch_->shade);
    batch_->shade.set_arg(arg++, cl_uint(list.pixels));
    batch_->shade.set_arg(arg++, records_);
    batch_->shade.set_arg(arg++, output_);
    runs.push_back(cl::launch_2d(device_, primary, global, local));
    runs.push_back(cl::launch_2d(device_, batch_->shade, global, local));
  }
  // The readback queues behind the launches; waiting on it waits for all.
  const cl::Event read = cl::read_buffer_async(device_, output_, out.data(), list.pixels * 4);
  read.wait();
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  last_primary_ms_ = runs.size() == 2 ? runs[0].timing().run_ms() : 0;
  last_shade_ms_ = runs.size() == 2 ? runs[1].timing().run_ms() : 0;
  last_tile_ms_ = 0;
  for (const auto& run : runs) last_tile_ms_ += run.timing().run_ms();
  BatchTiming timing;
  timing.readback_ms = read.timing().run_ms();
  timing.launch_ms = std::max(0.0, wall_ms - timing.readback_ms);
  return timing;
}

cpu::VctGridData OpenClVctRenderer::read_grid() const {
  cpu::VctGridData g;
  g.params = params_;
  const uint32_t levels = params_.level_count;
  g.map = cl::read_buffer<uint32_t>(device_, map_, cpu::vct_total_cells(params_));
  g.bricks.resize(params_.brick_offset[levels]);
  cl::read_buffer(device_, bricks_, g.bricks.data(), g.bricks.size() * sizeof(uint4));
  g.radiance = cl::read_buffer<uint32_t>(device_, radiance_, params_.voxel_offset[levels]);
  g.positions = cl::read_buffer<uint32_t>(device_, positions_, params_.voxel_offset[levels]);
  g.albedo = cl::read_buffer<uint32_t>(device_, albedo_, params_.voxel_offset[1]);
  g.normal = cl::read_buffer<uint32_t>(device_, normal_, params_.voxel_offset[1]);
  g.dense = cl::read_buffer<uint32_t>(device_, dense_, params_.dense_offset[levels]);
  return g;
}

}  // namespace tessera
