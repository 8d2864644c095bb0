#pragma once
// Who renders which tile. Pure bookkeeping, no I/O: decisions go out through ScheduleOutput.
//   static  (Strategy II): a frame's tiles, enumerated row by row, are dealt round-robin to the
//           ready workers when the frame opens (optionally weighted by each worker's measured
//           speed); each worker returns its share as one batch.
//   dynamic (Strategy I): tiles are handed out on demand, `inflight` at a time per worker, and
//           each returns as soon as it is done; a freed slot takes the next tile of the oldest
//           open frame, so with frame pipelining the next frame starts while this one finishes.
//           Costliest first: once tiles' render times are known (record_cost, from the frames
//           before), a frame's tiles go out in falling order of cost, so the cheap ones fill the
//           gaps at its end. Its tail: when no tile waits any more, a worker with a free slot is
//           also given a copy of a tile another worker still holds, if by the predicted times
//           (costs, the holder's queue before it, the link's round trip) it would have it back
//           sooner; the first copy back counts, the other is discarded.
// A worker that is lost gives its outstanding tiles back: they go to the others at once, or wait
// for a worker to (re)join when none is left.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <vector>

namespace tessera::master {

enum class Schedule { static_split, dynamic };
enum class Balance { even, measured };

struct SchedulerPolicy {
  Schedule schedule = Schedule::static_split;
  unsigned inflight = 2;            // dynamic: tiles per worker at once
  Balance balance = Balance::even;  // static: shares by measured speed
  // dynamic: a worker with a free slot first takes a pending tile it delivered last time, then one
  // nobody ready delivered, and only then another worker's (the one that worker would reach last),
  // so tiles stay where they were (pathtrace keeps accumulating them there). The static deal is
  // the same every frame anyway while the workers and the balance stay the same.
  bool tile_affinity = false;
  // dynamic: costliest tiles first, once their costs are known (else row by row).
  bool cost_order = true;
  // dynamic: copies of held tiles to workers that would finish them sooner, at a frame's end.
  bool reissue = true;
};

class ScheduleOutput {
 public:
  virtual ~ScheduleOutput() = default;
  // The worker's first tiles of `frame` (a FrameRequest carrying them).
  virtual void request_tiles(int worker, uint64_t frame, const std::vector<uint32_t>& tiles) = 0;
  // More tiles of a frame the worker already has.
  virtual void assign_tiles(int worker, uint64_t frame, const std::vector<uint32_t>& tiles) = 0;
  virtual void cancel_frame(int worker, uint64_t frame) = 0;
};

// --tile auto: the largest power of two in 32..256 that still gives every worker 8 tiles (tile
// pairs in pathtrace stereo count once per eye) a frame, so the dynamic schedule can balance, and
// from 4 workers on 2 x S tiles a worker: the frame's tail (the last tiles of S workers, each
// finishing at its own time) grows with S while each worker's share of the frame shrinks; on the
// emulated Wi-Fi, 16 host workers on Crytek Sponza reached 0.72 of linear speed-up in 32-pixel
// tiles and 0.59 in 64-pixel ones. Workers render a request's tiles in one launch, so small tiles
// cost no launches. pathtrace (`pathtrace`) 4 a worker: its GPU workers batch a request's tile
// pairs too, but a pair reprojects only within itself, is merged, resolved and encoded on its own,
// and a dynamic batch holds only the pairs in flight. On an H100, pathtrace stereo 2x640x480 with
// 2 workers, a launch per pair, took 17.8 ms a frame in 128-pixel tiles and 9.5 ms in 256-pixel ones.
// Never more than kMaxAutoTilesPerFrame tiles, though: the master spends 20-70 us of CPU a tile
// (docs/scale.md), so 128 workers at stereo 2x1024² in 32-pixel tiles (2,048) held it to 53 frames/s
// on a 16-core host, 64-pixel ones (512) to 95.
inline constexpr uint64_t kMaxAutoTilesPerFrame = 1024;
uint32_t auto_tile_size(uint32_t width, uint32_t height, bool stereo, size_t workers, bool pathtrace = false);

class TileScheduler {
 public:
  TileScheduler(SchedulerPolicy policy, ScheduleOutput& output);

  void add_worker(int worker);
  // Takes the worker's outstanding tiles back and gives them to the others; returns how many.
  uint32_t remove_worker(int worker);
  // Tiles per second, for the measured static split (exponential moving average).
  void record_speed(int worker, double tiles_per_second);

  // Another schedule, depth or balance (a live settings change); only while no frame is open.
  void set_policy(SchedulerPolicy policy);

  // `excluded`: workers that cannot render this frame (they lack a feature it needs); its tiles
  // wait for another worker.
  void open_frame(uint64_t frame, uint32_t tile_count, std::set<int> excluded = {});
  enum class Receipt { accepted, duplicate, unknown_frame };
  Receipt tile_done(int worker, uint64_t frame, uint32_t tile);
  // A tile's render time (any frame; tile ids are the same every frame while the tile size stays).
  void record_cost(int worker, uint32_t tile, double ms);
  // The link's round trip (request out and result back, less the time on the worker), for the
  // tail's copies: a copy pays it before it can be back.
  void set_round_trip_ms(double ms) { round_trip_ms_ = ms; }
  // A message came from the worker (heartbeats every 0.5 s). A worker not heard from for kSilentAfter
  // is taken to be stalled: the others get copies of every tile it holds (either schedule, tile
  // affinity or not), so a phone that froze costs the frame about a second, not the 5 s until its
  // connection is dropped.
  static constexpr std::chrono::milliseconds kSilentAfter{1000};
  void heard_from(int worker, std::chrono::steady_clock::time_point when = std::chrono::steady_clock::now());
  // Forgets the frame; workers still holding its tiles are told to drop them.
  void close_frame(uint64_t frame);

  bool fully_assigned(uint64_t frame) const;  // no tile of it waits for a worker
  size_t ready_workers() const;
  uint32_t outstanding(int worker) const;     // tiles given to it, not yet back
  uint32_t assignments(uint64_t frame) const; // tiles handed out, reassignments included (tail copies not)
  uint32_t reassigned(uint64_t frame) const;
  uint32_t reissued(uint64_t frame) const;          // tile copies given at the frame's tail
  bool was_reissued(uint64_t frame, uint32_t tile) const;  // a second copy of it went out
  double speed(int worker) const;
  // dynamic: between hold() and release(), freed slots are not refilled; release() refills them
  // all at once (one assignment per worker for a burst of finished tiles).
  void hold() { held_ = true; }
  void release();
  // dynamic: tiles per worker at once from now on (at least 1).
  void set_inflight(unsigned inflight);
  unsigned inflight() const { return policy_.inflight; }

 private:
  struct Worker {
    bool ready = false;
    uint32_t outstanding = 0;
    double speed = 0;
    std::chrono::steady_clock::time_point heard{};  // none yet: not taken as silent
  };
  struct Frame {
    uint32_t count = 0;
    std::deque<uint32_t> pending;
    std::vector<int> holder;
    std::vector<int> copy;             // per tile: the worker holding a second copy (-1 none)
    std::vector<uint64_t> order;       // per tile: when the holder got it (assignment sequence)
    std::vector<uint64_t> copy_order;  // when the copy's holder got it
    std::vector<uint8_t> done;
    std::vector<uint8_t> copied;       // a second copy went out (the later of the two is discarded)
    std::set<int> requested;  // workers that got this frame's FrameRequest on their current connection
    std::set<int> excluded;   // workers not to be given its tiles
    std::set<int> moot;       // workers that may still render a copy another worker returned first
    uint32_t assigned = 0, reassigned = 0, reissued = 0;
  };
  using Batch = std::map<std::pair<int, uint64_t>, std::vector<uint32_t>>;

  void take(Batch& batch, int worker, uint64_t frame, uint32_t tile);
  void send(const Batch& batch);
  void deal(uint64_t frame, std::vector<uint32_t> tiles, Batch& batch);  // static split over ready workers
  void place_pending();                                                   // after any change
  bool can_render(const Frame& frame, int worker) const;                  // ready and not excluded
  std::deque<uint32_t>::iterator pick(std::deque<uint32_t>& pending, int worker);  // dynamic: the tile it takes
  void reissue_tail(Batch& batch);  // dynamic: copies of held tiles at the frames' end
  void rescue_silent(Batch& batch);  // copies of the tiles silent workers hold
  void give_copy(Batch& batch, uint64_t frame, uint32_t tile, int worker);  // a second copy of a held tile
  bool is_silent(int worker, std::chrono::steady_clock::time_point now) const;
  double cost(uint32_t tile) const;  // predicted render ms on a worker of average speed (0: none known)
  double slowness(int worker) const;  // its render time over an average worker's (1 unknown)

  SchedulerPolicy policy_;
  ScheduleOutput& output_;
  std::map<int, Worker> workers_;
  std::map<uint64_t, Frame> frames_;
  std::vector<int> last_owner_;  // per tile id: the worker that delivered it last, -1 none
  std::vector<double> cost_ms_;  // per tile id: its last render time, 0 unknown
  double cost_sum_ = 0;
  uint32_t costs_known_ = 0;
  double round_trip_ms_ = 0;
  uint64_t sequence_ = 0;
  bool held_ = false;
};

}  // namespace tessera::master
