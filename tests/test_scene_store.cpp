// The worker's scene directory: pushed scenes stay within a quota (least recently used scenes
// go first, never one in use) and partial pushes of a worker that died are cleaned up at start.
#include <gtest/gtest.h>

#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/base/hash.h"
#include "scene-packer/packer.h"
#include "test_helpers.h"
#include "worker/daemon/scene_store.h"

namespace tessera {
namespace {

using testing::TempDir;

struct PackedFile {
  std::vector<uint8_t> bytes;
  uint64_t hash = 0;
};

PackedFile pack(const TempDir& dir, const std::string& scene) {
  pack::PackOptions o;
  o.input = testing::scene_path(scene);
  o.output = dir / "packed.tpk";
  o.show_progress = false;
  o.zstd_level = 1;
  pack::pack_scene(o);
  PackedFile f{read_file_bytes(o.output)};
  f.hash = hash64(f.bytes.data(), f.bytes.size());
  return f;
}

RendererOptions host() {
  RendererOptions o;
  o.device = "host";
  o.host_threads = 1;
  return o;
}

// What a push does: the bytes into a fresh .part file, then adopt_pushed.
void push(worker::SceneStore& store, const PackedFile& f, const std::string& name) {
  const auto temp = store.temp_path_for_push(f.hash);
  write_file_atomically(temp, f.bytes.data(), f.bytes.size());
  store.adopt_pushed(temp, f.hash, name);
}

TEST(SceneStore, QuotaEvictsTheLeastRecentlyUsedScene) {
  TempDir packs("store_packs"), dir("store_quota");
  const PackedFile a = pack(packs, "cornell_box/cornell_box.obj");
  const PackedFile b = pack(packs, "teapot/teapot_lowpoly.obj");
  const PackedFile c = pack(packs, "stanford_bunny/bun_zipper_res4.ply");
  const uint64_t quota = a.bytes.size() + b.bytes.size() + c.bytes.size() - 1;  // not all three
  {
    worker::SceneStore store(dir.path(), host(), 1, quota);
    push(store, a, "a.tpk");
    push(store, b, "b.tpk");  // the cache (size 1) now holds b only
    store.load(a.hash);       // a is used again: b is now the least recently used, and not cached
    push(store, c, "c.tpk");
    EXPECT_TRUE(store.has(a.hash));
    EXPECT_FALSE(store.has(b.hash));
    EXPECT_TRUE(store.has(c.hash));
    EXPECT_FALSE(std::filesystem::exists(dir / "b.tpk"));
  }
  // After a restart: c is used, then a (cached); pushing b again drops c, the older one.
  {
    worker::SceneStore store(dir.path(), host(), 1, quota);
    store.load(c.hash);
    store.load(a.hash);  // cache holds a; c is older
    push(store, b, "b.tpk");
    EXPECT_FALSE(store.has(c.hash));
    EXPECT_TRUE(store.has(a.hash));
    EXPECT_TRUE(store.has(b.hash));
  }
}

TEST(SceneStore, ScenesLargerThanTheQuotaAreRefused) {
  TempDir packs("store_packs_big"), dir("store_big");
  const PackedFile a = pack(packs, "cornell_box/cornell_box.obj");
  worker::SceneStore store(dir.path(), host(), 1, a.bytes.size() - 1);
  const auto temp = store.temp_path_for_push(a.hash);
  write_file_atomically(temp, a.bytes.data(), a.bytes.size());
  try {
    store.adopt_pushed(temp, a.hash, "a.tpk");
    FAIL() << "accepted a scene above the quota";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("quota"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(store.has(a.hash));
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));  // no .part left
}

TEST(SceneStore, PartialPushesOfStoppedWorkersAreRemovedAtStart) {
  TempDir dir("store_parts");
  // A pid that is not running (a child that has exited and been reaped).
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  int status = 0;
  ::waitpid(gone, &status, 0);
  const auto stale = dir / (".push-00000000000000ab-" + std::to_string(gone) + "-0.part");
  const auto live = dir / (".push-00000000000000ab-" + std::to_string(::getpid()) + "-0.part");
  testing::write_text(stale, "half a scene");
  testing::write_text(live, "a push in progress");
  testing::write_text(dir / "notes.txt", "kept");
  worker::SceneStore store(dir.path(), host());
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_TRUE(std::filesystem::exists(live));  // another worker sharing the directory is pushing
  EXPECT_TRUE(std::filesystem::exists(dir / "notes.txt"));
}

}  // namespace
}  // namespace tessera
