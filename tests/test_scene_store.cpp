// The worker's scene directory: pushed scenes stay within a quota (least recently used scenes
// go first, never one in use), partial pushes of a worker that died are cleaned up at start, and
// a push is received into a new file of the worker's own (never through a planted link).
#include <gtest/gtest.h>

#include <csignal>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/base/hash.h"
#include "scene-packer/packer.h"
#include "cluster_test_support.h"
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

TEST(SceneStore, PartialPushesOfStoppedWorkersAreRemovedAtStartEvenUnderPid1) {
  TempDir dir("store_parts");
  // A pid that is not running (a child that has exited and been reaped).
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  int status = 0;
  ::waitpid(gone, &status, 0);
  const auto stale = dir / (".push-00000000000000ab-" + std::to_string(gone) + "-0.part");
  // A worker in a container is PID 1, which is always alive: the name of its leftover names a
  // running process (here: this one), and it must go all the same.
  const auto stale_alive_pid = dir / (".push-00000000000000ab-" + std::to_string(::getpid()) + "-1.part");
  testing::write_text(stale, "half a scene");
  testing::write_text(stale_alive_pid, "half a scene of PID 1");
  // A push in progress (another worker sharing the directory) holds its file's lock.
  const auto live = dir / (".push-00000000000000ab-" + std::to_string(::getpid()) + "-2.part");
  const worker::SceneStore::PartialPush in_progress = worker::SceneStore::create_partial_push(live);
  std::fclose(in_progress.file);
  testing::write_text(dir / "notes.txt", "kept");
  worker::SceneStore store(dir.path(), host());
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_FALSE(std::filesystem::exists(stale_alive_pid));
  EXPECT_TRUE(std::filesystem::exists(live));
  EXPECT_TRUE(std::filesystem::exists(dir / "notes.txt"));
}

TEST(SceneStore, IdleCachedScenesDoNotBlockTheQuotaButScenesInUseDo) {
  TempDir packs("store_packs_idle"), dir("store_idle");
  const PackedFile a = pack(packs, "cornell_box/cornell_box.obj");
  const PackedFile b = pack(packs, "teapot/teapot_lowpoly.obj");
  const PackedFile c = pack(packs, "stanford_bunny/bun_zipper_res4.ply");
  const uint64_t quota = a.bytes.size() + b.bytes.size() + c.bytes.size() - 1;  // not all three
  worker::SceneStore store(dir.path(), host(), 2, quota);
  push(store, a, "a.tpk");
  push(store, b, "b.tpk");  // both cached, neither used by a master any more
  push(store, c, "c.tpk");  // takes a's place
  EXPECT_FALSE(store.has(a.hash));
  EXPECT_TRUE(store.has(b.hash));
  EXPECT_TRUE(store.has(c.hash));
  // With both held by masters' sessions, there is no room, and the reason says so.
  const auto held_b = store.load(b.hash), held_c = store.load(c.hash);
  const auto temp = store.temp_path_for_push(a.hash);
  write_file_atomically(temp, a.bytes.data(), a.bytes.size());
  try {
    store.adopt_pushed(temp, a.hash, "a.tpk");
    FAIL() << "a scene in use was removed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("taken by scenes in use"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(store.has(b.hash));
  EXPECT_TRUE(store.has(c.hash));
}

TEST(SceneStore, PushesInProgressCountTowardTheQuota) {
  TempDir packs("store_packs_partial"), dir("store_partial");
  const PackedFile a = pack(packs, "cornell_box/cornell_box.obj");
  const PackedFile b = pack(packs, "teapot/teapot_lowpoly.obj");
  // Room for a and b, and for b twice, but not for a and b twice.
  const uint64_t quota = a.bytes.size() + 2 * b.bytes.size() - 1;
  worker::SceneStore store(dir.path(), host(), 1, quota);
  push(store, a, "a.tpk");
  // Another worker on this directory is receiving a scene of b's size.
  const worker::SceneStore::PartialPush other = worker::SceneStore::create_partial_push(dir / ".push-00000000000000cd-1-0.part");
  write_all(other.file, b.bytes.data(), b.bytes.size());
  std::fclose(other.file);
  push(store, b, "b.tpk");  // a, the other push and b do not fit: a goes
  EXPECT_FALSE(store.has(a.hash));
  EXPECT_TRUE(store.has(b.hash));
}

TEST(SceneStore, APushGoesIntoANewPrivateFileNeverThroughAPlantedLink) {
  using namespace std::chrono_literals;
  TempDir dir("scene_push_file");
  const auto scenes = dir / "scenes";
  std::filesystem::create_directories(scenes);
  testing::write_secret(dir / "secret", testing::kClusterSecret);
  testing::WorkerProcess worker(dir.path(), "w", scenes, dir / "secret");
  ASSERT_FALSE(worker.address().empty()) << worker.log();
  const PackedFile f = pack(dir, "cornell_box/cornell_box.obj");
  testing::SealedClient client(worker.port(), testing::kClusterSecret);
  ASSERT_TRUE(client.ready()) << worker.log();
  const auto load = [&] {
    wire::Envelope m;
    m.mutable_load_scene()->set_content_hash(f.hash);
    m.mutable_load_scene()->set_name("c.tpk");
    m.mutable_load_scene()->set_size_bytes(f.bytes.size());
    EXPECT_TRUE(client.send(m));
    const auto status = client.receive(20s);
    EXPECT_TRUE(status && status->has_scene_status()) << worker.log();
    return status ? status->scene_status() : wire::SceneStatus{};
  };
  // Someone who can write to the scene directory plants a link where the first push will go.
  const auto victim = dir / "victim.txt";
  testing::write_text(victim, "not the worker's");
  const auto planted = scenes / (".push-" + hash64_hex(f.hash) + "-" + std::to_string(worker.process().pid()) + "-0.part");
  std::filesystem::create_symlink(victim, planted);
  const auto refused = load();
  EXPECT_EQ(refused.state(), wire::SceneStatus::FAILED) << worker.log();
  EXPECT_NE(refused.message().find("cannot be received"), std::string::npos) << refused.message();
  EXPECT_EQ(read_file_text(victim), "not the worker's");
  std::filesystem::remove(planted);

  ASSERT_EQ(load().state(), wire::SceneStatus::MISSING) << worker.log();
  const size_t half = f.bytes.size() / 2;
  const auto chunk = [&](size_t offset, size_t size) {
    wire::Envelope m;
    auto& c = *m.mutable_scene_chunk();
    c.set_content_hash(f.hash);
    c.set_offset(offset);
    c.set_total_size(f.bytes.size());
    c.set_data(f.bytes.data() + offset, size);
    c.set_last(offset + size == f.bytes.size());
    EXPECT_TRUE(client.send(m));
  };
  chunk(0, half);
  // Half sent: the push's .part file is there, the worker's alone.
  std::optional<std::filesystem::path> part;
  for (int i = 0; i < 500 && !part; ++i) {
    for (const auto& e : std::filesystem::directory_iterator(scenes))
      if (e.path().extension() == ".part") part = e.path();
    if (!part) std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(part) << worker.log();
  struct stat st{};
  ASSERT_EQ(::lstat(part->c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  chunk(half, f.bytes.size() - half);
  const auto ready = client.receive(30s);
  ASSERT_TRUE(ready && ready->has_scene_status()) << worker.log();
  EXPECT_EQ(ready->scene_status().state(), wire::SceneStatus::READY) << ready->scene_status().message();
}

// A damaged file in the scene directory is left out at start (so a master pushes that scene rather
// than failing on it), and a file replaced while the worker runs is indexed again by what it holds.
TEST(SceneStore, DamagedAndReplacedFilesAreIndexedByWhatTheyHold) {
  TempDir packs("store_damaged_packs"), dir("store_damaged");
  const PackedFile a = pack(packs, "cornell_box/cornell_box.obj");
  const PackedFile b = pack(packs, "teapot/teapot_lowpoly.obj");
  std::vector<uint8_t> cut(a.bytes.begin(), a.bytes.begin() + ptrdiff_t(a.bytes.size() / 2));
  write_file_atomically(dir / "cut.tpk", cut.data(), cut.size());
  std::vector<uint8_t> flipped = a.bytes;
  for (size_t i = flipped.size() - 64; i < flipped.size() - 60; ++i) flipped[i] ^= 0xFF;
  write_file_atomically(dir / "flipped.tpk", flipped.data(), flipped.size());
  write_file_atomically(dir / "scene.tpk", a.bytes.data(), a.bytes.size());
  worker::SceneStore store(dir.path(), host());
  EXPECT_EQ(store.entries().size(), 1u);
  EXPECT_TRUE(store.has(a.hash));
  // replaced in place: loading the old hash fails once, then the store knows the new content
  write_file_atomically(dir / "scene.tpk", b.bytes.data(), b.bytes.size());
  EXPECT_THROW(store.load(a.hash), Error);
  EXPECT_FALSE(store.has(a.hash));
  EXPECT_TRUE(store.has(b.hash));
  EXPECT_EQ(store.load(b.hash)->hash, b.hash);
}

// A master names a pushed scene as it likes: a name past what a file system takes is shortened.
TEST(SceneStore, PushedSceneWithAVeryLongNameIsStored) {
  TempDir packs("store_long_packs"), dir("store_long");
  const PackedFile a = pack(packs, "cornell_box/cornell_box.obj");
  worker::SceneStore store(dir.path(), host());
  push(store, a, std::string(300, 'n') + ".tpk");
  EXPECT_TRUE(store.has(a.hash));
  ASSERT_EQ(store.entries().size(), 1u);
  EXPECT_LE(store.entries()[0].name().size(), 255u);
}

// Two workers sharing a folder are pushed the same scene at once: one file, not two copies.
TEST(SceneStore, WorkersSharingAFolderKeepOneCopyOfAScenePushedToBoth) {
  TempDir packs("store_shared_packs"), dir("store_shared");
  const PackedFile a = pack(packs, "cornell_box/cornell_box.obj");
  worker::SceneStore first(dir.path(), host()), second(dir.path(), host());
  push(first, a, "cornell.tpk");
  push(second, a, "cornell.tpk");
  EXPECT_TRUE(second.has(a.hash));
  size_t files = 0;
  for (const auto& item : std::filesystem::directory_iterator(dir.path())) files += item.path().extension() == ".tpk";
  EXPECT_EQ(files, 1u);
}

}  // namespace
}  // namespace tessera
