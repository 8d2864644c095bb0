#include "worker/daemon/scene_store.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/base/hash.h"
#include "common/net/log.h"
#include "common/scene/tpk_file.h"
#include "common/scene/tpk_index.h"
#include "worker/render/scene_decode_budget.h"
#include "worker/render/scene_memory_choice.h"

namespace tessera::worker {
namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// A plain file name for a pushed scene: no folders, no hidden files, ends in .tpk.
std::string safe_name(const std::string& name, uint64_t hash) {
  std::string base = std::filesystem::path(name).filename().string();
  std::string clean;
  for (char c : base) clean.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ? c : '_');
  while (!clean.empty() && clean.front() == '.') clean.erase(clean.begin());
  if (clean.empty()) clean = hash64_hex(hash);
  if (clean.size() >= 4 && clean.substr(clean.size() - 4) == ".tpk") clean.resize(clean.size() - 4);
  // file systems take 255 bytes a name; room for "-<hash>" (a name taken) and ".tpk"
  if (clean.size() > 200) clean.resize(200);
  return clean + ".tpk";
}

}  // namespace

SceneStore::SceneStore(std::filesystem::path dir, RendererOptions renderer_options, size_t cache_size, uint64_t quota_bytes,
                       std::optional<DecodeBudget> decode_budget)
    : dir_(std::move(dir)),
      renderer_options_(std::move(renderer_options)),
      cache_size_(std::max<size_t>(1, cache_size)),
      quota_bytes_(quota_bytes),
      decode_budget_(decode_budget ? std::move(*decode_budget) : scene_decode_budget(renderer_options_)) {
  std::error_code ec;
  const bool existed = std::filesystem::exists(dir_, ec);
  if (ec) throw Error("scene directory " + dir_.string() + " cannot be reached: " + ec.message());
  std::filesystem::create_directories(dir_, ec);
  if (!std::filesystem::is_directory(dir_, ec))
    throw Error("scene directory " + dir_.string() + " does not exist and cannot be created" + (ec ? ": " + ec.message() : ""));
  // said aloud: a mistyped --scenes would otherwise start an empty worker that every master pushes to
  if (!existed) net::log_info("scene directory " + dir_.string() + " did not exist: created it, empty");
  std::error_code list_error;
  std::filesystem::directory_iterator items(dir_, list_error);
  if (list_error) throw Error("scene directory " + dir_.string() + " cannot be read: " + list_error.message());
  if (::access(dir_.c_str(), W_OK) != 0)
    net::log_warning("scene directory " + dir_.string() + " is not writable: scenes cannot be pushed to this worker");
  remove_stale_pushes();
  for (const auto& item : items) {
    std::error_code ec;
    if (item.is_regular_file(ec) && item.path().extension() == ".tpk") index_file(item.path());
  }
}

// Indexes a scene file by its content hash once its header, manifest and stored checksums are
// right, without decoding its sections (that happens when a master uses the scene); a damaged one
// (cut short, bytes flipped) is left out with one warning, so a master pushes that scene again
// instead of failing on it later. Callers hold no lock.
void SceneStore::index_file(const std::filesystem::path& path) {
  try {
    const auto bytes = read_file_bytes(path);
    const uint64_t hash = inspect_tpk(bytes, path.filename().string()).content_hash;
    std::error_code ec;
    const auto written = std::filesystem::last_write_time(path, ec);
    {
      std::lock_guard lock(mutex_);
      index_[hash] = {path, bytes.size(), written};
    }
    net::log_info("scene " + path.filename().string() + " (" + hash64_hex(hash) + ")");
  } catch (const std::exception& e) {
    net::log_warning("skipping " + path.string() + ": " + e.what() + " (a master will push the scene)");
  }
}

namespace {

bool is_partial_push(const std::string& file) { return file.starts_with(".push-") && file.ends_with(".part"); }

}  // namespace

// .push-*.part files that no process holds locked: the leftovers of a worker that stopped mid-push
// (several workers may share a directory: another one's push in progress is locked, and left
// alone). A lock, not the process id in the name: in a container every worker is PID 1.
void SceneStore::remove_stale_pushes() {
  std::error_code ec;
  for (const auto& item : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string file = item.path().filename().string();
    if (!is_partial_push(file)) continue;
    const int fd = ::open(item.path().c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) != 0) {  // a push in progress
      ::close(fd);
      continue;
    }
    std::error_code removed;
    std::filesystem::remove(item.path(), removed);
    if (fd >= 0) ::close(fd);
    if (!removed) net::log_info("removed the partial push " + file + " of a worker that has stopped");
  }
}

uint64_t SceneStore::partial_push_bytes(const std::filesystem::path& except) const {
  uint64_t bytes = 0;
  std::error_code ec;
  for (const auto& item : std::filesystem::directory_iterator(dir_, ec)) {
    std::error_code size_error;
    const uint64_t size = item.file_size(size_error);
    if (is_partial_push(item.path().filename().string()) && item.path() != except && !size_error) bytes += size;
  }
  return bytes;
}

SceneStore::PartialPush SceneStore::create_partial_push(const std::filesystem::path& path) {
  PartialPush push;
  push.file = create_new_file(path, 0600);
  const int fd = ::dup(::fileno(push.file));  // shares the lock, which lasts until both are closed
  if (fd < 0 || ::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (fd >= 0) ::close(fd);
    std::fclose(push.file);
    std::error_code ec;
    std::filesystem::remove(path, ec);
    throw Error("cannot lock " + path.string());
  }
  push.lock = std::shared_ptr<const int>(new int(fd), [](const int* held) {
    ::close(*held);
    delete held;
  });
  return push;
}

void SceneStore::mark_used(uint64_t hash) {
  std::lock_guard lock(mutex_);
  const auto it = index_.find(hash);
  if (it == index_.end()) return;
  it->second.last_used = std::filesystem::file_time_type::clock::now();
  std::error_code ec;  // a read-only directory keeps its order for this run only
  std::filesystem::last_write_time(it->second.path, it->second.last_used, ec);
}

void SceneStore::make_room(uint64_t incoming_bytes, const std::filesystem::path& incoming) {
  if (quota_bytes_ == 0) return;
  if (incoming_bytes > quota_bytes_)
    throw Error("scene of " + std::to_string(incoming_bytes) + " bytes exceeds the scene quota of " +
                std::to_string(quota_bytes_) + " bytes");
  const uint64_t partial = partial_push_bytes(incoming);  // other pushes in progress take room too
  std::lock_guard lock(mutex_);
  uint64_t used = partial;
  for (const auto& [hash, entry] : index_) used += entry.size;
  // In use: held by a master's session besides the cache (an idle cached scene can go).
  auto in_use = [&](uint64_t hash) {
    return std::any_of(cache_.begin(), cache_.end(), [&](const auto& c) { return c->hash == hash && c.use_count() > 1; });
  };
  while (used + incoming_bytes > quota_bytes_) {
    auto oldest = index_.end();
    for (auto it = index_.begin(); it != index_.end(); ++it)
      if (!in_use(it->first) && (oldest == index_.end() || it->second.last_used < oldest->second.last_used)) oldest = it;
    if (oldest == index_.end())
      throw Error("scene quota of " + std::to_string(quota_bytes_) + " bytes is taken by scenes in use" +
                  (partial ? " and " + std::to_string(partial) + " bytes of pushes in progress" : ""));
    std::error_code ec;
    std::filesystem::remove(oldest->second.path, ec);
    if (ec) throw Error("scene quota: cannot remove " + oldest->second.path.string() + ": " + ec.message());
    net::log_info("scene quota: removed the least recently used scene " + oldest->second.path.filename().string());
    std::erase_if(cache_, [&](const auto& c) { return c->hash == oldest->first; });
    used -= oldest->second.size;
    index_.erase(oldest);
  }
}

std::vector<wire::SceneEntry> SceneStore::entries() const {
  std::lock_guard lock(mutex_);
  std::vector<wire::SceneEntry> list;
  for (const auto& [hash, entry] : index_) {
    wire::SceneEntry e;
    e.set_content_hash(hash);
    e.set_name(entry.path.filename().string());
    e.set_size_bytes(entry.size);
    list.push_back(e);
  }
  return list;
}

bool SceneStore::has(uint64_t hash) const {
  std::lock_guard lock(mutex_);
  return index_.count(hash) != 0;
}

std::shared_ptr<LoadedScene> SceneStore::make_loaded(PackedScene scene, uint64_t hash, const std::string& name, double read_ms) {
  const auto start = std::chrono::steady_clock::now();
  // Drop cached scenes first, so the device holds at most cache_size scenes at a time.
  while (cache_.size() >= cache_size_) cache_.erase(cache_.begin());
  auto loaded = std::make_shared<LoadedScene>();
  loaded->hash = hash;
  loaded->name = name;
  loaded->scene = std::move(scene);
  const SceneMemoryDecision memory = choose_scene_memory(loaded->scene, memory_mode_, renderer_options_);
  loaded->memory = memory.memory;
  loaded->renderer = make_tile_renderer(loaded->scene, renderer_options(*loaded));
  loaded->motion = SceneMotion::of_scene(loaded->scene, name);
  net::log_info("scene " + name + ": " + memory.summary);
  loaded->load_ms = read_ms + ms_since(start);
  cache_.push_back(loaded);
  return loaded;
}

std::shared_ptr<LoadedScene> SceneStore::load(uint64_t hash) {
  for (auto it = cache_.begin(); it != cache_.end(); ++it)
    if ((*it)->hash == hash) {
      auto hit = *it;
      cache_.erase(it);
      cache_.push_back(hit);
      mark_used(hash);
      return hit;
    }
  std::filesystem::path path;
  {
    std::lock_guard lock(mutex_);
    const auto it = index_.find(hash);
    if (it == index_.end()) throw Error("scene " + hash64_hex(hash) + " is not in " + dir_.string());
    path = it->second.path;
  }
  const auto start = std::chrono::steady_clock::now();
  const auto bytes = read_file_bytes(path);
  // The file may have changed since indexing: its identity is its content.
  if (hash64(bytes.data(), bytes.size()) != hash) {  // another scene now: index what the file holds
    {
      std::lock_guard lock(mutex_);
      index_.erase(hash);
    }
    index_file(path);
    throw Error(path.string() + " changed since the worker started");
  }
  PackedScene scene = PackedScene::from_contents(parse_tpk(bytes, path.string(), decode_budget_), path.string());
  mark_used(hash);
  return make_loaded(std::move(scene), hash, path.filename().string(), ms_since(start));
}

std::filesystem::path SceneStore::temp_path_for_push(uint64_t hash) const {
  static std::atomic<unsigned> counter{0};
  return dir_ / (".push-" + hash64_hex(hash) + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".part");
}

std::shared_ptr<LoadedScene> SceneStore::adopt_pushed(const std::filesystem::path& temp_file, uint64_t hash, const std::string& name) {
  struct RemoveTemp {
    const std::filesystem::path& path;
    ~RemoveTemp() {
      std::error_code ec;
      std::filesystem::remove(path, ec);
    }
  } remove_temp{temp_file};
  const auto start = std::chrono::steady_clock::now();
  const auto bytes = read_file_bytes(temp_file);
  const uint64_t actual = hash64(bytes.data(), bytes.size());
  if (actual != hash)
    throw Error("pushed scene has content hash " + hash64_hex(actual) + ", not the announced " + hash64_hex(hash));
  PackedScene scene = PackedScene::from_contents(parse_tpk(bytes, name, decode_budget_), name);  // full validation
  std::filesystem::path target = dir_ / safe_name(name, hash);
  {
    std::lock_guard lock(mutex_);
    for (const auto& [h, entry] : index_)
      if (entry.path == target) target = dir_ / (target.stem().string() + "-" + hash64_hex(hash) + ".tpk");
  }
  bool stored = false;
  if (std::filesystem::exists(target) && !has(hash)) {
    // Workers sharing the folder (deploy/local-cluster) are pushed the same scene at once: the one
    // that finishes second finds the very scene stored and keeps that file rather than a second copy.
    try {
      const auto there = read_file_bytes(target);
      stored = hash64(there.data(), there.size()) == hash;
    } catch (const std::exception&) {
    }
    if (!stored) target = dir_ / (target.stem().string() + "-" + hash64_hex(hash) + ".tpk");  // a file we could not index: keep it
  }
  if (!stored) {
    make_room(bytes.size(), temp_file);
    std::filesystem::rename(temp_file, target);  // same folder: atomic
  }
  {
    std::lock_guard lock(mutex_);
    index_[hash] = {target, bytes.size(), std::filesystem::file_time_type::clock::now()};
  }
  net::log_info((stored ? "pushed scene already stored as " : "stored pushed scene as ") + target.string());
  return make_loaded(std::move(scene), hash, target.filename().string(), ms_since(start));
}

}  // namespace tessera::worker
