#pragma once
// Everything a cluster run is asked to do (tessera-master's options, minus the wiring).
#include <array>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/scene/scene_nodes.h"
#include "master/schedule/tile_scheduler.h"
#include "wire.pb.h"

namespace tessera::master {

struct SessionOptions {
  uint32_t width = 1024, height = 1024, tile_size = 128;
  float ipd = 0;                            // > 0: stereo, eyes side by side; < 0 with stereo: the scene's default
  bool stereo = false;                      // both eyes side by side (also when ipd > 0)
  std::optional<float> fov;                 // default: the scene's
  std::string mode = "raytrace";            // raytrace | pathtrace | vct: which parameters below go out
  wire::RaytraceParams raytrace;            // max_depth, light_samples, exposure
  wire::PathtraceParams pathtrace;
  wire::VctParams vct;
  std::optional<std::array<float, 2>> gaze; // for poses without one (workers take the image centre)
  // Live sessions (master/session/rendered_eyes.h): every eye rendered this much wider on every side
  // than asked, the image grown to match (needs workers listing eye_views; 0: off).
  float guard_band_degrees = 0;
  // Depth and alpha beside the colour (workers listing aux_outputs); all unset: colour alone, opaque.
  wire::AuxOutputs aux;
  std::optional<wire::SunOverride> sun;     // the scene's sun replaced (workers listing sun_override)
  // Things that move (FrameRequest.scene_time_s, instance_transforms; workers listing scene_motion).
  // Offline, a frame's scene time is scene_time_start + time_scale x its pose's time since the first
  // pose's (--scene-time, --time-scale); a live session sets scene_time from its clock for every frame.
  double scene_time_start = 0;
  double time_scale = 1;
  std::optional<double> scene_time;
  struct PlacedInstance {
    uint32_t instance = 0;
    Transform3x4 world;  // object to world, checked (check_transform)
  };
  std::vector<PlacedInstance> instance_transforms;  // live: instances the pages moved, by index
  wire::TileEncoding encoding = wire::ZSTD_RGBA8;
  bool compression_auto = false;            // per link: raw on loopback and fast links, else `encoding`
  bool inflight_auto = false;               // dynamic: in-flight depth from each worker's measured round trip
  int zstd_level = 1;
  SchedulerPolicy policy;
  unsigned pipeline = 1;                    // frames in flight at once
  size_t frames = 0;                        // 0: as many as the pose source has
  std::optional<std::filesystem::path> out_dir;  // none: frames are not written
  bool overlay = false;
  std::optional<std::filesystem::path> stats_path;
  bool status_line = true;
  std::chrono::milliseconds startup_timeout{60000};   // for every worker to be ready or to fail once
  std::chrono::milliseconds frame_timeout{120000};    // a frame not whole by then is skipped
  std::chrono::milliseconds stall_timeout{60000};     // a worker holding tiles without finishing one
  std::chrono::milliseconds no_worker_timeout{10000}; // with work left and no worker: give up
  // A live session outlives its workers: after no_worker_timeout its open frames are dropped, but it
  // keeps serving its pages and reconnecting, and renders again when a worker is back.
  bool wait_for_workers = false;
};

}  // namespace tessera::master
