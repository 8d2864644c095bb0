// Pieces of the cluster without processes: framing and limits, the tile grid, tile pixels on
// the wire, the schedulers' bookkeeping, pose records, the frame assembler, the statistics files
// and the worker build check.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/net/auth.h"
#include "common/net/framing.h"
#include "common/net/message_limits.h"
#include "common/net/protocol.h"
#include "common/net/tile_codec.h"
#include "common/net/tile_grid.h"
#include "master/cluster/worker_version.h"
#include "master/frame/frame_assembler.h"
#include "master/pose/pose_parse.h"
#include "master/schedule/tile_scheduler.h"
#include "master/stats/frame_stats.h"
#include "test_helpers.h"

namespace tessera {
namespace {

TEST(WireFraming, RoundTripAndLimits) {
  wire::Envelope m;
  m.mutable_tile_assign()->set_frame_id(7);
  m.mutable_tile_assign()->add_tiles(3);
  const auto frame = net::encode_frame(m);
  ASSERT_GT(frame.size(), 4u);
  const uint32_t length = net::decode_frame_length(std::span<const uint8_t, 4>(frame.data(), 4));
  EXPECT_EQ(length, frame.size() - 4);
  const auto back = net::decode_body({frame.data() + 4, length});
  EXPECT_EQ(back.tile_assign().frame_id(), 7u);
  EXPECT_THROW(net::check_frame_length(0, 100), net::ProtocolError);
  EXPECT_THROW(net::check_frame_length(101, 100), net::ProtocolError);
  EXPECT_NO_THROW(net::check_frame_length(100, 100));
  const std::vector<uint8_t> junk{0xff, 0xff, 0xff, 0xff, 0x0f};
  EXPECT_THROW(net::decode_body(junk), net::ProtocolError);
  wire::Envelope empty;
  EXPECT_THROW(net::decode_body(std::vector<uint8_t>{}), net::ProtocolError);
  // Nothing over its type's limit goes out.
  wire::Envelope huge;
  huge.mutable_heartbeat();
  huge.mutable_heartbeat()->GetReflection()->MutableUnknownFields(huge.mutable_heartbeat())->AddLengthDelimited(99, std::string(8192, 'x'));
  EXPECT_THROW(net::encode_frame(huge), net::ProtocolError);
  for (int body = 1; body <= 17; ++body) EXPECT_GT(net::max_body_bytes(wire::Envelope::BodyCase(body)), 0u) << body;
  // A worker takes frames of at most kMasterFrameBytes from a master: every body a master sends fits.
  for (const auto body : {wire::Envelope::kLoadScene, wire::Envelope::kSceneChunk, wire::Envelope::kFrameRequest,
                          wire::Envelope::kTileAssign, wire::Envelope::kCancelFrame, wire::Envelope::kHeartbeat,
                          wire::Envelope::kStatsRequest, wire::Envelope::kError})
    EXPECT_LE(net::max_body_bytes(body) + 64, net::kMasterFrameBytes) << body;
}

TEST(WireAuth, ProofsDependOnSecretRoleAndNonces) {
  const std::string m = net::random_nonce(), w = net::random_nonce();
  EXPECT_EQ(m.size(), net::kNonceBytes);
  EXPECT_NE(m, w);
  const std::string proof = net::make_proof("s3cret-s3cret-s3cret", net::Role::worker, 1, m, w);
  EXPECT_TRUE(net::check_proof("s3cret-s3cret-s3cret", net::Role::worker, 1, m, w, proof));
  EXPECT_FALSE(net::check_proof("s3cret-s3cret-s3creT", net::Role::worker, 1, m, w, proof));
  EXPECT_FALSE(net::check_proof("s3cret-s3cret-s3cret", net::Role::master, 1, m, w, proof));  // no reflection
  EXPECT_FALSE(net::check_proof("s3cret-s3cret-s3cret", net::Role::worker, 2, m, w, proof));
  EXPECT_FALSE(net::check_proof("s3cret-s3cret-s3cret", net::Role::worker, 1, w, m, proof));
  EXPECT_FALSE(net::check_proof("s3cret-s3cret-s3cret", net::Role::worker, 1, m, w, ""));
}

TEST(TileGrid, RowByRowWithCutEdgesAndStereo) {
  const net::TileGrid grid(100, 70, 32, 2);
  EXPECT_EQ(grid.tiles_x(), 4u);
  EXPECT_EQ(grid.tiles_y(), 3u);
  EXPECT_EQ(grid.tile_count(), 24u);
  const auto t5 = grid.tile(5);
  EXPECT_EQ(t5.x0, 32u);
  EXPECT_EQ(t5.y0, 32u);
  const auto last = grid.tile(11);
  EXPECT_EQ(last.width, 4u);
  EXPECT_EQ(last.height, 6u);
  EXPECT_EQ(grid.tile(12).eye, 1u);
  EXPECT_EQ(grid.tile(12).x0, 0u);
  EXPECT_THROW(grid.tile(24), Error);
  EXPECT_THROW(net::TileGrid(100, 70, 4), Error);
  EXPECT_THROW(net::TileGrid(0, 70, 32), Error);
  EXPECT_THROW(net::TileGrid(16384, 16384, 8), Error);  // too many tiles
}

TEST(TileCodec, ZstdAndRawRoundTrip) {
  std::vector<uint32_t> pixels(32 * 16);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = 0xff000000u | uint32_t(i % 7);
  for (int level : {0, 1, 9}) {
    wire::TileResult r;
    r.set_width(32);
    r.set_height(16);
    net::encode_tile_pixels(pixels, level, r);
    EXPECT_EQ(r.encoding(), level ? wire::ZSTD_RGBA8 : wire::RAW_RGBA8);
    const auto bytes = net::decode_tile_pixels(r);
    ASSERT_EQ(bytes.size(), pixels.size() * 4);
    EXPECT_EQ(std::memcmp(bytes.data(), pixels.data(), bytes.size()), 0);
  }
  wire::TileResult bad;
  bad.set_width(4);
  bad.set_height(4);
  bad.set_encoding(wire::RAW_RGBA8);
  bad.set_data("short");
  EXPECT_THROW(net::decode_tile_pixels(bad), Error);
  bad.set_encoding(wire::ZSTD_RGBA8);
  EXPECT_THROW(net::decode_tile_pixels(bad), Error);
}

// Records what the scheduler asks for.
struct Recorder : master::ScheduleOutput {
  std::map<int, std::vector<std::pair<uint64_t, uint32_t>>> given;
  std::vector<std::pair<int, uint64_t>> requests, cancels;
  void request_tiles(int w, uint64_t f, const std::vector<uint32_t>& tiles) override {
    requests.push_back({w, f});
    for (uint32_t t : tiles) given[w].push_back({f, t});
  }
  void assign_tiles(int w, uint64_t f, const std::vector<uint32_t>& tiles) override {
    for (uint32_t t : tiles) given[w].push_back({f, t});
  }
  void cancel_frame(int w, uint64_t f) override { cancels.push_back({w, f}); }
};

TEST(TileScheduler, StaticDealsRoundRobinOneRequestPerWorker) {
  Recorder out;
  master::TileScheduler s({master::Schedule::static_split, 2, master::Balance::even}, out);
  s.add_worker(0);
  s.add_worker(1);
  s.add_worker(2);
  s.open_frame(1, 8);
  EXPECT_EQ(out.requests.size(), 3u);
  EXPECT_EQ(out.given[0], (std::vector<std::pair<uint64_t, uint32_t>>{{1, 0}, {1, 3}, {1, 6}}));
  EXPECT_EQ(out.given[1], (std::vector<std::pair<uint64_t, uint32_t>>{{1, 1}, {1, 4}, {1, 7}}));
  EXPECT_EQ(out.given[2], (std::vector<std::pair<uint64_t, uint32_t>>{{1, 2}, {1, 5}}));
  EXPECT_TRUE(s.fully_assigned(1));
  EXPECT_EQ(s.tile_done(0, 1, 0), master::TileScheduler::Receipt::accepted);
  EXPECT_EQ(s.tile_done(0, 1, 0), master::TileScheduler::Receipt::duplicate);
  EXPECT_EQ(s.tile_done(0, 9, 0), master::TileScheduler::Receipt::unknown_frame);
  // Worker 1 is lost: its three tiles go to the others, in a new batch each.
  EXPECT_EQ(s.remove_worker(1), 3u);
  EXPECT_EQ(s.reassigned(1), 3u);
  EXPECT_EQ(s.outstanding(1), 0u);
  std::multiset<uint32_t> all;
  for (const auto& [w, tiles] : out.given)
    if (w != 1)
      for (const auto& [f, t] : tiles) all.insert(t);
  EXPECT_EQ(all, (std::multiset<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(TileScheduler, MeasuredSpeedsWeighTheStaticSplit) {
  Recorder out;
  master::TileScheduler s({master::Schedule::static_split, 2, master::Balance::measured}, out);
  s.add_worker(0);
  s.add_worker(1);
  s.record_speed(0, 30);
  s.record_speed(1, 10);
  s.open_frame(1, 40);
  EXPECT_EQ(out.given[0].size(), 30u);
  EXPECT_EQ(out.given[1].size(), 10u);
}

TEST(TileScheduler, DynamicKeepsInflightAndRefillsOldestFrameFirst) {
  Recorder out;
  master::TileScheduler s({master::Schedule::dynamic, 2, master::Balance::even}, out);
  s.add_worker(0);
  s.add_worker(1);
  s.open_frame(1, 5);
  EXPECT_EQ(s.outstanding(0), 2u);
  EXPECT_EQ(s.outstanding(1), 2u);
  EXPECT_FALSE(s.fully_assigned(1));
  s.open_frame(2, 3);  // pipelined: waits behind frame 1
  s.tile_done(0, 1, out.given[0][0].second);
  EXPECT_EQ(out.given[0].back(), (std::pair<uint64_t, uint32_t>{1, 4}));
  EXPECT_TRUE(s.fully_assigned(1));
  s.tile_done(1, 1, out.given[1][0].second);
  EXPECT_EQ(out.given[1].back().first, 2u);  // frame 2 starts while frame 1 finishes
  // A lost worker's tiles come first for the survivor.
  const auto held = s.outstanding(1);
  EXPECT_EQ(s.remove_worker(1), held);
  size_t counted = 0;
  for (const auto& [f, t] : out.given[0]) counted += f == 1;
  EXPECT_GE(counted, 3u);
  // Closing a frame that still has tiles out tells their holders.
  s.close_frame(1);
  EXPECT_EQ(out.cancels, (std::vector<std::pair<int, uint64_t>>{{0, 1}}));
  EXPECT_EQ(s.outstanding(0), 2u);  // refilled from frame 2
}

// A frame that some workers cannot render (they lack a feature it needs) goes to the others only;
// with nobody able, its tiles wait for a worker that is.
TEST(TileScheduler, ExcludedWorkersGetNoTilesOfThatFrame) {
  {
    Recorder out;
    master::TileScheduler s({master::Schedule::static_split, 2, master::Balance::even}, out);
    s.add_worker(0);
    s.add_worker(1);
    s.open_frame(1, 4, {1});
    EXPECT_EQ(out.given[0].size(), 4u);
    EXPECT_TRUE(out.given[1].empty());
    s.open_frame(2, 2, {0, 1});
    EXPECT_FALSE(s.fully_assigned(2));
    s.add_worker(2);
    EXPECT_TRUE(s.fully_assigned(2));
    EXPECT_EQ(out.given[2], (std::vector<std::pair<uint64_t, uint32_t>>{{2, 0}, {2, 1}}));
  }
  Recorder out;
  master::TileScheduler s({master::Schedule::dynamic, 2, master::Balance::even}, out);
  s.add_worker(0);
  s.add_worker(1);
  s.open_frame(1, 5, {1});
  EXPECT_EQ(s.outstanding(0), 2u);
  EXPECT_EQ(s.outstanding(1), 0u);
  s.open_frame(2, 2);  // worker 1 takes the next frame's tiles meanwhile
  EXPECT_EQ(out.given[1], (std::vector<std::pair<uint64_t, uint32_t>>{{2, 0}, {2, 1}}));
  for (const auto& [f, t] : out.given[0]) EXPECT_EQ(f, 1u);
}

TEST(PoseRecords, CsvJsonHeadersAndErrors) {
  const auto csv = master::parse_pose_record("0.5, 1,2,3, 1,0,0,0, 0.25,0.75", "x");
  ASSERT_TRUE(csv);
  EXPECT_DOUBLE_EQ(csv->time, 0.5);
  EXPECT_EQ(csv->pose.position[2], 3.0f);
  ASSERT_TRUE(csv->gaze);
  EXPECT_EQ((*csv->gaze)[1], 0.75f);
  const auto json = master::parse_pose_record(R"({"t":1,"position":[1,2,3],"orientation":[0,0,1,0]})", "x");
  ASSERT_TRUE(json);
  EXPECT_EQ(json->pose.orientation[2], 1.0f);
  EXPECT_FALSE(master::parse_pose_record("t,px,py,pz,qw,qx,qy,qz", "x"));
  EXPECT_FALSE(master::parse_pose_record("# comment", "x"));
  EXPECT_FALSE(master::parse_pose_record("   ", "x"));
  EXPECT_THROW(master::parse_pose_record("0,1,2,3,0.5,0,0,0", "x"), Error);  // not a rotation
  EXPECT_THROW(master::parse_pose_record("0,1,2,3,1,0,0", "x"), Error);
  EXPECT_THROW(master::parse_pose_record("0,1,2,3,1,0,0,0,2,0", "x"), Error);  // gaze outside [0, 1]
  EXPECT_THROW(master::parse_pose_record(R"({"position":[1,2]})", "x"), Error);
}

TEST(TileScheduler, InflightChangesTakeEffectAtOnceAndAutoTilesBalance) {
  Recorder out;
  master::TileScheduler s({master::Schedule::dynamic, 2, master::Balance::even}, out);
  s.add_worker(0);
  s.open_frame(1, 10);
  EXPECT_EQ(s.outstanding(0), 2u);
  s.set_inflight(5);  // --inflight auto after a frame: the new depth fills at once
  EXPECT_EQ(s.outstanding(0), 5u);
  // Tiles finished in one burst are refilled together: one assignment, not one per tile.
  s.hold();
  for (int i = 0; i < 3; ++i) s.tile_done(0, 1, out.given[0][size_t(i)].second);
  EXPECT_EQ(s.outstanding(0), 2u);
  const size_t given = out.given[0].size();
  s.release();
  EXPECT_EQ(s.outstanding(0), 5u);
  EXPECT_EQ(out.given[0].size(), given + 3);
  s.set_inflight(0);
  EXPECT_EQ(s.inflight(), 1u);
  // The largest of 256..32 that still gives each worker 8 tiles a frame, from 4 workers on 2 x S.
  EXPECT_EQ(master::auto_tile_size(1024, 1024, true, 2), 256u);
  EXPECT_EQ(master::auto_tile_size(1024, 1024, false, 1), 256u);
  EXPECT_EQ(master::auto_tile_size(1024, 1024, false, 4), 128u);
  EXPECT_EQ(master::auto_tile_size(1024, 1024, false, 8), 64u);   // 256 tiles: 32 a worker
  EXPECT_EQ(master::auto_tile_size(1024, 1024, false, 16), 32u);  // 1024 tiles: 64 a worker (64 px: only 16)
  EXPECT_EQ(master::auto_tile_size(256, 256, false, 2), 64u);
  // Many workers: never more than kMaxAutoTilesPerFrame tiles (the master's per-tile cost)
  EXPECT_EQ(master::auto_tile_size(1024, 1024, true, 128), 64u);  // 32 px would be 2,048 tiles
  EXPECT_EQ(master::auto_tile_size(1280, 720, false, 512), 32u);  // 920 tiles
  EXPECT_EQ(master::auto_tile_size(4096, 4096, true, 4), 256u);   // 512 tiles at the largest size
  EXPECT_EQ(master::auto_tile_size(96, 64, false, 2), 32u);
  // Pathtrace: fewer, larger tiles (pairs reproject only within themselves, are resolved one by one).
  EXPECT_EQ(master::auto_tile_size(640, 480, true, 2), 128u);
  EXPECT_EQ(master::auto_tile_size(640, 480, true, 2, true), 256u);
}

TEST(FrameStats, StagesPerFrameMediansAndColumns) {
  std::vector<master::FrameRecord> records(5);
  for (size_t i = 0; i < records.size(); ++i) {
    records[i].complete = true;
    records[i].frame_ms = 10.0 + double(i);
    records[i].stages.wire = double(i);
    records[i].stages.device = 2.0;
    records[i].workers.resize(1);
  }
  records[4].complete = false;  // not part of the medians
  records[4].stages.wire = 100;
  master::RunSummary base;
  base.worker_names = {"w"};
  const master::RunSummary s = master::summarize(records, base);
  EXPECT_DOUBLE_EQ(s.median_stages.wire, 2.0);
  EXPECT_DOUBLE_EQ(s.median_stages.device, 2.0);
  EXPECT_DOUBLE_EQ(s.median_frame_ms, 12.0);
  EXPECT_DOUBLE_EQ(s.p95_frame_ms, 13.0);
  EXPECT_EQ(master::StageTimes::names().size(), records[0].stages.values().size());
  testing::TempDir dir("frame_stats");
  master::write_stats(dir / "s.csv", s, records);
  const std::string csv = read_file_text(dir / "s.csv");
  const std::string header = csv.substr(0, csv.find('\n'));
  for (const auto& stage : master::StageTimes::names()) EXPECT_NE(header.find("," + stage + "_ms"), std::string::npos) << stage;
  EXPECT_NE(header.find(",w0_batches,w0_queue_ms,w0_device_ms"), std::string::npos) << header;
}

TEST(FrameAssembler, TilesMustMatchTheGridAndCountOnce) {
  const net::TileGrid grid(40, 20, 16);
  master::FrameAssembler frame(grid);
  for (uint32_t id = 0; id < grid.tile_count(); ++id) {
    const auto spec = grid.tile(id);
    std::vector<uint32_t> pixels(size_t(spec.width) * spec.height, 0xff000000u | id);
    wire::TileResult r;
    r.set_tile_id(id);
    r.set_x0(spec.x0);
    r.set_y0(spec.y0);
    r.set_width(spec.width);
    r.set_height(spec.height + (id == 1 ? 1 : 0));  // tile 1 lies about its size first
    net::encode_tile_pixels(pixels, 1, r);
    if (id == 1) {
      EXPECT_THROW(frame.add(r, 0), Error);
      r.set_height(spec.height);
      net::encode_tile_pixels(pixels, 1, r);
    }
    EXPECT_FALSE(frame.complete());
    frame.add(r, int(id % 2));
    EXPECT_TRUE(frame.has(id));
  }
  EXPECT_TRUE(frame.complete());
  EXPECT_EQ(frame.image().at(39, 19).r, grid.tile_count() - 1);
  EXPECT_EQ(frame.owners()[3], 1);
}

TEST(FrameStats, FilesNameTheModeAndSamplesPerPixel) {
  testing::TempDir dir("frame_stats");
  master::RunSummary summary;
  summary.mode = "pathtrace";
  summary.worker_names = {"w0"};
  master::FrameRecord record;
  record.complete = true;
  record.samples_per_pixel = 3.5;
  record.workers.resize(1);
  record.mode = "pathtrace";
  master::FrameRecord before = record;  // a live session switched mode and size on the way
  before.mode = "vct";
  before.width = 320;
  before.live = master::LiveFrameStats{};
  record.live = master::LiveFrameStats{};
  master::write_stats(dir / "s.csv", summary, {before, record});
  master::write_stats(dir / "s.json", summary, {before, record});
  const auto csv = testing::run_command("cat '" + (dir / "s.csv").string() + "'").output;
  const size_t first_end = csv.find('\n');
  const std::string header = csv.substr(0, first_end), row = csv.substr(first_end + 1);
  std::vector<std::string> names, values;
  for (std::stringstream h(header); h.good();) names.emplace_back(), std::getline(h, names.back(), ',');
  for (std::stringstream r(row); r.good();) values.emplace_back(), std::getline(r, values.back(), ',');
  const auto column = std::find(names.begin(), names.end(), "samples_per_pixel");
  ASSERT_NE(column, names.end()) << header;
  EXPECT_EQ(values.at(size_t(column - names.begin())), "3.5") << csv;
  const auto mode = std::find(names.begin(), names.end(), "mode");
  ASSERT_NE(mode, names.end()) << header;
  EXPECT_EQ(values.at(size_t(mode - names.begin())), "vct") << csv;
  // every column named once (the live stages apart from the cluster stages)
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << header;
  const auto json = nlohmann::json::parse(testing::run_command("cat '" + (dir / "s.json").string() + "'").output);
  EXPECT_EQ(json["summary"]["mode"], "pathtrace");
  EXPECT_EQ(json["summary"]["frames_with_other_settings"], 1);
  EXPECT_EQ(json["frames"][0]["settings"]["mode"], "vct");
  EXPECT_DOUBLE_EQ(json["frames"][1]["samples_per_pixel"].get<double>(), 3.5);
}

TEST(WorkerVersion, WarnsOnlyAboutOtherBuilds) {
  const std::string own = "0.1.0 (commit 0123456789ab, Release, OpenCL headers 3.0, API 1.2)";
  EXPECT_EQ(master::worker_version_warning("w1", own, own), "");
  const std::string other = master::worker_version_warning("w1", "0.1.0 (commit ba9876543210, Debug)", own);
  EXPECT_NE(other.find("w1 runs tessera 0.1.0 (commit ba9876543210, Debug)"), std::string::npos) << other;
  EXPECT_NE(other.find(own), std::string::npos) << other;
  EXPECT_NE(master::worker_version_warning("w2", "", own).find("w2 runs an unnamed build"), std::string::npos);
}

}  // namespace
}  // namespace tessera
