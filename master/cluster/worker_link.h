#pragma once
// The master's side of one worker connection: connect, handshake (version, mutual proof of the
// shared secret), scene load by hash or push in chunks, then forwarding of tile results and
// errors to the scheduling thread. Runs on the cluster's io thread; send() and close() may be
// called from any thread.
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/net/address.h"
#include "common/net/asio.h"
#include "common/net/connection.h"
#include "common/net/handshake.h"
#include "master/cluster/link_event.h"
#include "master/cluster/scene_file.h"

namespace tessera::master {

struct LinkOptions {
  std::string secret;
  std::string client_name = "tessera-master";
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds handshake_timeout{5000};
  std::chrono::milliseconds scene_timeout{300000};  // push + load on the worker
  // A worker whose handshake broke for a temporary reason (LinkEvent::temporary) is tried again
  // within this time from Cluster::start, before the failure is reported.
  std::chrono::milliseconds startup_timeout{60000};
  std::chrono::milliseconds heartbeat_interval{500};
  std::chrono::milliseconds heartbeat_timeout{5000};
  std::string mode = "raytrace";            // a worker must list it in WorkerInfo.modes
  std::optional<wire::VctParams> prepare_vct;  // vct: sent with LoadScene, the worker voxelizes while loading
};

class WorkerLink : public std::enable_shared_from_this<WorkerLink> {
 public:
  using Sink = std::function<void(LinkEvent)>;  // called on the io thread
  // `open_pool` opens the link's large sealed frames (net::Connection::set_open_pool).
  WorkerLink(asio::io_context& io, int index, net::HostPort address, const LinkOptions& options,
             std::shared_ptr<const SceneFile> scene, TaskPool* open_pool, Sink sink);
  // Io thread: starts connecting; ends in a ready or failed event (and later, maybe, lost).
  void connect();
  void send(const wire::Envelope& message);
  void close(const std::string& reason);

 private:
  enum class State { connecting, handshake, await_scene, pushing, ready, closed };
  void connected(asio::ip::tcp::socket socket);
  void on_message(wire::Envelope& message);
  void handle_handshake(const wire::Envelope& message);
  void authenticated();
  void on_closed(const std::string& reason);
  void refuse(const std::string& reason);
  void push_chunk(uint64_t offset);
  void give_up(const std::string& reason);  // before a connection exists

  asio::io_context& io_;
  int index_;
  net::HostPort address_;
  const LinkOptions& options_;
  std::shared_ptr<const SceneFile> scene_;
  TaskPool* open_pool_;
  Sink sink_;
  State state_ = State::connecting;
  std::string failure_;  // the first reason we know, reported instead of a vaguer later one
  // A failure in the handshake other than a refusal for good (wrong secret, other version):
  // the worker may have been busy or have given our slot away, so trying again soon may work.
  bool temporary_ = true;
  std::optional<net::MasterHandshake> handshake_;
  wire::WorkerInfo info_;
  bool pushed_ = false;
  asio::ip::tcp::resolver resolver_;
  asio::ip::tcp::socket socket_;
  asio::steady_timer connect_timer_;
  std::shared_ptr<net::Connection> connection_;
};

}  // namespace tessera::master
