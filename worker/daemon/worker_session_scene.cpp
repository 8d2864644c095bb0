// WorkerSession: a master's LoadScene answered from the scene directory or by a push it sends,
// received into a temporary file; the scene loads (and voxelizes for vct) on the render thread.
#include <cstdio>
#include <filesystem>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/base/hash.h"
#include "common/net/log.h"
#include "common/net/protocol.h"
#include "worker/daemon/mode_renderers.h"
#include "worker/daemon/worker_session.h"
#include "worker/daemon/worker_session_parts.h"

namespace tessera::worker {

using net::ProtocolError;

void WorkerSession::handle_load_scene(const wire::LoadScene& load) {
  if (push_.file) throw ProtocolError("load_scene while a scene push is still in progress");
  if (scene_loading_) throw ProtocolError("load_scene while the previous scene is still loading");
  const uint64_t hash = load.content_hash();
  prepare_vct_.reset();
  if (load.has_prepare_vct()) prepare_vct_ = load.prepare_vct();
  if (scene_ && scene_->hash == hash) {
    wire::Envelope m;
    auto& status = *m.mutable_scene_status();
    status.set_content_hash(hash);
    status.set_state(wire::SceneStatus::READY);
    status.set_device(scene_->renderer->description());
    status.set_device_bytes(scene_->renderer->scene_device_bytes());
    status.set_scene_memory(scene_memory_name(scene_->memory));
    connection_->send(m);
    return;
  }
  scene_.reset();
  if (context_.scenes.has(hash)) return load_scene_async(hash, load.name(), {}, load);
  ask_for_push(load);
}

// The scene is not here (or its file turned out to hold another): MISSING, and the push that follows
// is received into a temporary file.
void WorkerSession::ask_for_push(const wire::LoadScene& load) {
  const uint64_t hash = load.content_hash();
  wire::Envelope m;
  auto& status = *m.mutable_scene_status();
  status.set_content_hash(hash);
  if (load.size_bytes() == 0 || load.size_bytes() > context_.config.max_scene_bytes) {
    status.set_state(wire::SceneStatus::FAILED);
    status.set_message("scene of " + std::to_string(load.size_bytes()) + " bytes: this worker accepts 1.." +
                       std::to_string(context_.config.max_scene_bytes) + " bytes");
    connection_->send(m);
    return;
  }
  push_.hash = hash;
  push_.size = load.size_bytes();
  push_.received = 0;
  push_.name = load.name();
  push_.temp = context_.scenes.temp_path_for_push(hash);
  try {  // a new file only (never through a link or file already there), readable by this user alone
    SceneStore::PartialPush partial = SceneStore::create_partial_push(push_.temp);
    push_.file = partial.file;
    push_.lock = std::move(partial.lock);
  } catch (const Error& e) {
    status.set_state(wire::SceneStatus::FAILED);
    status.set_message("scene " + hash64_hex(hash) + " is missing and cannot be received into the scene directory: " + e.what());
    net::log_warning(peer() + ": " + status.message());
    connection_->send(m);
    return;
  }
  net::log_info(peer() + ": scene " + hash64_hex(hash) + " (" + load.name() + ") missing, asking for a push");
  status.set_state(wire::SceneStatus::MISSING);
  connection_->send(m);
}

void WorkerSession::abort_push() {
  if (!push_.file) return;
  std::fclose(push_.file);
  push_.file = nullptr;
  std::error_code ec;
  std::filesystem::remove(push_.temp, ec);
  push_.lock.reset();
}

void WorkerSession::handle_scene_chunk(const wire::SceneChunk& chunk) {
  if (!push_.file) throw ProtocolError("scene chunk without a load_scene that asked for it");
  if (chunk.content_hash() != push_.hash || chunk.total_size() != push_.size || chunk.offset() != push_.received ||
      chunk.data().size() > push_.size - push_.received)
    throw ProtocolError("scene chunk out of order or inconsistent with the announced scene");
  if (std::fwrite(chunk.data().data(), 1, chunk.data().size(), push_.file) != chunk.data().size()) {
    abort_push();
    throw ProtocolError("cannot write the pushed scene into the scene directory (disk full?)");
  }
  push_.received += chunk.data().size();
  if (push_.received < push_.size) {
    if (chunk.last()) throw ProtocolError("scene push ended early");
    return;
  }
  const bool ok = std::fclose(push_.file) == 0;
  push_.file = nullptr;
  if (!ok) {
    abort_push();
    throw ProtocolError("cannot write the pushed scene into the scene directory");
  }
  load_scene_async(push_.hash, push_.name, push_.temp.string(), {}, std::move(push_.lock));
}

void WorkerSession::load_scene_async(uint64_t hash, const std::string& name, const std::string& pushed_file,
                                     std::optional<wire::LoadScene> push_if_gone, std::shared_ptr<const int> push_lock) {
  scene_loading_ = true;
  auto self = shared_from_this();
  context_.render.post([self, hash, name, pushed_file, prepare = prepare_vct_, push_if_gone, push_lock]() mutable {
    std::shared_ptr<LoadedScene> loaded;
    std::string failure;
    try {
      loaded = pushed_file.empty() ? self->context_.scenes.load(hash) : self->context_.scenes.adopt_pushed(pushed_file, hash, name);
    } catch (const std::exception& e) {
      failure = e.what();
    }
    push_lock.reset();  // the .part file is adopted or removed
    if (loaded && prepare) {  // the master announced vct frames: voxelize now, not in the first frame
      try {
        vct_grid(*loaded, self->context_.scenes.renderer_options(), vct_options(*prepare, loaded->scene));
      } catch (const std::exception& e) {
        failure = std::string("vct voxelization failed: ") + e.what();
        loaded.reset();
      }
    }
    asio::post(self->connection_->executor(), [self, hash, loaded, failure, push_if_gone] {
      self->scene_loading_ = false;
      if (!self->connection_->is_open()) return;
      if (!loaded && push_if_gone && !self->context_.scenes.has(hash)) {  // the file changed under us
        net::log_warning(self->peer() + ": " + failure);
        return self->ask_for_push(*push_if_gone);
      }
      wire::Envelope m;
      auto& status = *m.mutable_scene_status();
      status.set_content_hash(hash);
      if (loaded) {
        self->scene_ = loaded;
        status.set_state(wire::SceneStatus::READY);
        status.set_device(loaded->renderer->description());
        status.set_device_bytes(loaded->renderer->scene_device_bytes());
        status.set_scene_memory(scene_memory_name(loaded->memory));
        status.set_load_ms(loaded->load_ms);
        net::log_info(self->peer() + ": scene " + loaded->name + " ready on " + loaded->renderer->description());
      } else {
        status.set_state(wire::SceneStatus::FAILED);
        status.set_message(failure);
        net::log_warning(self->peer() + ": scene " + hash64_hex(hash) + " failed: " + failure);
      }
      self->connection_->send(m);
    });
  });
}

}  // namespace tessera::worker
