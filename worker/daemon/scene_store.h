#pragma once
// The worker's scene directory: .tpk files indexed by content hash (XXH64 of the file) at
// start-up from their manifests and checksums (sections are decoded when a scene is used, within
// the decode budget), scenes pushed by a master written into it atomically once verified, and a
// small cache of loaded scenes with their renderers. A quota bounds the directory's scenes and the
// partial pushes beside them: a push that would exceed it first deletes the least recently used
// scenes (a file's modification time is its last use, so the order survives restarts), never one
// a connected master is using (an idle cached scene goes, and leaves the cache). A push in
// progress holds a lock on its .part file; at start-up, partial files nobody holds are removed.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/scene/packed_scene.h"
#include "common/scene/scene_motion.h"
#include "common/scene/tpk_decode_budget.h"
#include "worker/render/pathtrace_renderer.h"
#include "worker/render/tile_renderer.h"
#include "worker/render/vct_renderer.h"
#include "wire.pb.h"

namespace tessera::worker {

// A voxel grid of the `vct` mode, built for one grid size and fill option.
struct VctGridSlot {
  VctOptions options;
  std::vector<VctLight> scene_lights;  // the scene's own lights (requests may move one)
  std::unique_ptr<VctRenderer> renderer;
};

// A scene ready to render: the scene and a renderer on the worker's device. The renderers of the
// other modes are made on the render thread when a frame first needs them (mode_renderers.h) and
// are only ever touched there.
struct LoadedScene {
  uint64_t hash = 0;
  std::string name;
  PackedScene scene;
  SceneMemory memory = SceneMemory::fast;  // the profile its renderers hold it in (worker/render/scene_memory_choice.h)
  std::unique_ptr<TileRenderer> renderer;  // refers to `scene`: declared after it
  double load_ms = 0;
  std::unique_ptr<PathTraceRenderer> pathtrace;  // holds every tile's progressive accumulation
  std::vector<VctGridSlot> vct;                  // most recently used last
  // Instanced scenes: the instances posed at each frame's instant (worker/daemon/frame_motion.h), by
  // the render thread before the frame's tiles render; none for a single-level scene.
  std::optional<SceneMotion> motion;
};

class SceneStore {
 public:
  // Indexes `dir` (created if missing). Unreadable files are skipped with a warning.
  // quota_bytes: most bytes of scenes the directory may hold (0: no limit).
  // decode_budget: what a scene may take once decoded (scene_decode_budget of the renderer options).
  SceneStore(std::filesystem::path dir, RendererOptions renderer_options, size_t cache_size = 2, uint64_t quota_bytes = 0,
             std::optional<DecodeBudget> decode_budget = std::nullopt);

  std::vector<wire::SceneEntry> entries() const;
  bool has(uint64_t hash) const;
  const std::filesystem::path& dir() const { return dir_; }
  // The device options of a loaded scene's renderers: the worker's, in the scene's profile.
  RendererOptions renderer_options(const LoadedScene& scene) const {
    RendererOptions o = renderer_options_;
    o.scene_memory = scene.memory;
    return o;
  }
  const RendererOptions& renderer_options() const { return renderer_options_; }
  // --scene-memory: how scenes are loaded from now on (automatic unless set).
  void set_scene_memory_mode(SceneMemoryMode mode) { memory_mode_ = mode; }

  // Loads (or takes from the cache) the scene with this hash and sets up its renderer.
  // Render thread only. Throws Error with the reason.
  std::shared_ptr<LoadedScene> load(uint64_t hash);

  // Verifies a pushed file (size, hash, every section and index), makes room for it under the
  // quota and moves it into the directory under `name` (or name-<hash>.tpk if that is taken by
  // other content), then loads it. Render thread only. Throws Error with the reason (also when
  // the quota cannot make room); the temporary file is removed either way.
  std::shared_ptr<LoadedScene> adopt_pushed(const std::filesystem::path& temp_file, uint64_t hash,
                                            const std::string& name);

  // A fresh path in the directory for an incoming push.
  std::filesystem::path temp_path_for_push(uint64_t hash) const;
  // Creates that file (new, mode 600) and locks it for as long as the returned lock lives, so that
  // no worker starting on the same directory takes it for the leftover of a stopped one.
  struct PartialPush {
    std::FILE* file = nullptr;  // the caller writes and closes it
    std::shared_ptr<const int> lock;  // the lock's descriptor: keep it until adopt_pushed returns
  };
  static PartialPush create_partial_push(const std::filesystem::path& path);

 private:
  struct Entry {
    std::filesystem::path path;
    uint64_t size = 0;
    std::filesystem::file_time_type last_used;
  };
  std::shared_ptr<LoadedScene> make_loaded(PackedScene scene, uint64_t hash, const std::string& name, double read_ms);
  void remove_stale_pushes();
  void index_file(const std::filesystem::path& path);
  void mark_used(uint64_t hash);
  // Render thread (reads cache_); `incoming` is the pushed file, not counted as a partial push.
  void make_room(uint64_t incoming_bytes, const std::filesystem::path& incoming);
  uint64_t partial_push_bytes(const std::filesystem::path& except) const;

  std::filesystem::path dir_;
  RendererOptions renderer_options_;
  SceneMemoryMode memory_mode_ = SceneMemoryMode::automatic;
  size_t cache_size_;
  uint64_t quota_bytes_;
  DecodeBudget decode_budget_;
  mutable std::mutex mutex_;
  std::map<uint64_t, Entry> index_;
  std::vector<std::shared_ptr<LoadedScene>> cache_;  // most recently used last; render thread only
};

}  // namespace tessera::worker
