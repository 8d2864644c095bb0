#include "master/stats/frame_stats.h"

#include <algorithm>
#include <sstream>

#include "common/base/file_io.h"

namespace tessera::master {

const std::vector<std::string>& StageTimes::names() {
  static const std::vector<std::string> names{"pose_wait", "request_out", "queue",     "device", "readback",
                                              "encode",    "wire",        "decode",    "composite", "output"};
  return names;
}

std::vector<double> StageTimes::values() const {
  return {pose_wait, request_out, queue, device, readback, encode, wire, decode, composite, output};
}

void StageTimes::add(const StageTimes& o, double w) {
  pose_wait += o.pose_wait * w;
  request_out += o.request_out * w;
  queue += o.queue * w;
  device += o.device * w;
  readback += o.readback * w;
  encode += o.encode * w;
  wire += o.wire * w;
  decode += o.decode * w;
  composite += o.composite * w;
  output += o.output * w;
}

namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

nlohmann::json stages_json(const StageTimes& t) {
  nlohmann::json j = nlohmann::json::object();
  const auto values = t.values();
  for (size_t i = 0; i < values.size(); ++i) j[StageTimes::names()[i]] = values[i];
  return j;
}

}  // namespace

RunSummary summarize(const std::vector<FrameRecord>& records, RunSummary s) {
  std::vector<double> times, completions;
  double latency = 0, bytes = 0, after_first = 0;
  size_t after_first_count = 0;
  s.frames_complete = s.frames_failed = s.frames_superseded = 0;
  s.tiles_reissued = 0;
  for (const auto& r : records) {
    s.tiles_reissued += r.reissued;
    if (!r.complete) {
      ++(r.superseded ? s.frames_superseded : s.frames_failed);
      continue;
    }
    if (s.frames_complete > 0) {
      s.min_frame_ms_after_first = after_first_count ? std::min(s.min_frame_ms_after_first, r.frame_ms) : r.frame_ms;
      after_first += r.frame_ms;
      ++after_first_count;
    }
    ++s.frames_complete;
    times.push_back(r.frame_ms);
    completions.push_back(r.completed_s);
    latency += r.latency_ms;
    bytes += double(r.wire_bytes);
  }
  if (!times.empty()) {
    const double n = double(times.size());
    double sum = 0;
    for (double t : times) sum += t;
    s.mean_frame_ms = sum / n;
    s.mean_latency_ms = latency / n;
    s.mean_wire_bytes = bytes / n;
    std::sort(times.begin(), times.end());
    std::sort(completions.begin(), completions.end());
    if (completions.size() > 1)
      s.mean_interval_ms = 1000.0 * (completions.back() - completions.front()) / double(completions.size() - 1);
    else
      s.mean_interval_ms = s.mean_frame_ms;
    s.median_frame_ms = times[times.size() / 2];
    s.p95_frame_ms = times[std::min(times.size() - 1, size_t(double(times.size()) * 0.95))];
    s.mean_frame_ms_after_first = after_first_count ? after_first / double(after_first_count) : s.mean_frame_ms;
    if (!after_first_count) s.min_frame_ms_after_first = s.mean_frame_ms;
  }
  std::vector<std::vector<double>> per_stage(StageTimes::names().size());
  for (const auto& r : records)
    if (r.complete) {
      const auto values = r.stages.values();
      for (size_t i = 0; i < values.size(); ++i) per_stage[i].push_back(values[i]);
    }
  double* medians[] = {&s.median_stages.pose_wait, &s.median_stages.request_out, &s.median_stages.queue,
                       &s.median_stages.device,    &s.median_stages.readback,    &s.median_stages.encode,
                       &s.median_stages.wire,      &s.median_stages.decode,      &s.median_stages.composite,
                       &s.median_stages.output};
  for (size_t i = 0; i < per_stage.size(); ++i) *medians[i] = median_of(per_stage[i]);
  if (s.wall_seconds > 0) s.frames_per_second = double(s.frames_complete) / s.wall_seconds;
  std::vector<double> page;
  std::vector<double> fresh;
  for (const auto& r : records) {
    if (!r.complete || !r.live || !r.live->fresh) continue;
    fresh.push_back(r.completed_s);
    if (r.live->page_latency_ms) page.push_back(*r.live->page_latency_ms);
  }
  if (!page.empty()) {
    std::sort(page.begin(), page.end());
    s.page_latency_count = page.size();
    s.page_latency_median_ms = page[page.size() / 2];
    s.page_latency_p95_ms = page[std::min(page.size() - 1, size_t(double(page.size()) * 0.95))];
  }
  std::vector<std::vector<double>> live(9);
  for (const auto& r : records) {
    if (!r.complete || !r.live || !r.live->fresh || !r.live->page_decode_ms) continue;
    const auto& l = *r.live;
    const double values[] = {l.pose_wait_ms, l.render_ms, l.wire_ms, l.composite_ms, l.encode_ms, std::max(0.0, l.send_ms),
                             *l.page_network_ms, *l.page_decode_ms, *l.page_draw_ms};
    for (size_t i = 0; i < live.size(); ++i) live[i].push_back(values[i]);
  }
  if (!live[0].empty()) {
    LiveStageMedians m;
    double* fields[] = {&m.pose_wait, &m.render, &m.wire, &m.composite, &m.encode, &m.send, &m.network, &m.decode, &m.draw};
    for (size_t i = 0; i < live.size(); ++i) *fields[i] = median_of(live[i]);
    s.live_stages = m;
  }
  if (fresh.size() > 1) s.fresh_frames_per_second = double(fresh.size() - 1) / (fresh.back() - fresh.front());
  return s;
}

namespace {

nlohmann::json live_stages_json(const LiveStageMedians& m) {
  return {{"pose_wait", m.pose_wait}, {"render", m.render}, {"wire", m.wire},       {"composite", m.composite}, {"encode", m.encode},
          {"send", m.send},           {"network", m.network}, {"decode", m.decode}, {"draw", m.draw}};
}

}  // namespace

nlohmann::json to_json(const RunSummary& s) {
  return {{"workers", s.worker_names},
          {"devices", s.worker_devices},
          {"scene_memory", s.worker_scene_memory},
          {"mode", s.mode},
          {"stereo", s.stereo},
          {"schedule", s.schedule},
          {"scene", s.scene},
          {"poses", s.poses},
          {"width", s.width},
          {"height", s.height},
          {"tile", s.tile_size},
          {"frames_complete", s.frames_complete},
          {"frames_failed", s.frames_failed},
          {"frames_superseded", s.frames_superseded},
          {"tiles_reissued", s.tiles_reissued},
          {"wall_seconds", s.wall_seconds},
          {"frames_per_second", s.frames_per_second},
          {"mean_frame_ms", s.mean_frame_ms},
          {"mean_frame_ms_after_first", s.mean_frame_ms_after_first},
          {"min_frame_ms_after_first", s.min_frame_ms_after_first},
          {"mean_interval_ms", s.mean_interval_ms},
          {"median_frame_ms", s.median_frame_ms},
          {"p95_frame_ms", s.p95_frame_ms},
          {"median_stages_ms", stages_json(s.median_stages)},
          {"mean_latency_ms", s.mean_latency_ms},
          {"mean_wire_bytes", s.mean_wire_bytes},
          {"page_latency_count", s.page_latency_count},
          {"page_latency_median_ms", s.page_latency_median_ms},
          {"page_latency_p95_ms", s.page_latency_p95_ms},
          {"fresh_frames_per_second", s.fresh_frames_per_second},
          {"live_stage_medians_ms", s.live_stages ? live_stages_json(*s.live_stages) : nlohmann::json(nullptr)}};
}

namespace {

// "live_": the master's live stages, apart from the cluster stages of the same names before them
const char* kLiveColumns = "pose_id,samples,fresh,live_pose_wait_ms,live_render_ms,live_wire_ms,live_composite_ms,accumulate_ms,"
                           "live_encode_ms,send_ms,page_latency_ms,page_network_ms,page_decode_ms,page_draw_ms,depth_bytes,alpha_bytes,aux_ms,"
                           "codec,video_bytes,key_frame,bitrate_mbit,scale";

nlohmann::json optional_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

nlohmann::json live_json(const LiveFrameStats& l) {
  return {{"pose_id", l.pose_id},         {"samples", l.samples},       {"fresh", l.fresh},
          {"pose_wait_ms", l.pose_wait_ms}, {"render_ms", l.render_ms}, {"wire_ms", l.wire_ms},
          {"composite_ms", l.composite_ms}, {"accumulate_ms", l.accumulate_ms}, {"encode_ms", l.encode_ms},
          {"send_ms", l.send_ms},
          {"page_latency_ms", optional_json(l.page_latency_ms)},
          {"page_network_ms", optional_json(l.page_network_ms)},
          {"page_decode_ms", optional_json(l.page_decode_ms)},
          {"page_draw_ms", optional_json(l.page_draw_ms)},
          {"depth_bytes", l.depth_bytes},
          {"alpha_bytes", l.alpha_bytes},
          {"aux_ms", l.aux_ms},
          {"codec", l.codec},
          {"video_bytes", l.video_bytes},
          {"key_frame", l.key_frame},
          {"bitrate_mbit", l.bitrate_mbit},
          {"scale", l.scale}};
}

void live_csv(std::ostream& csv, const std::optional<LiveFrameStats>& live) {
  if (!live) {
    csv << ",,,,,,,,,,,,,,,,,,,,,,";
    return;
  }
  const auto& l = *live;
  csv << ',' << l.pose_id << ',' << l.samples << ',' << (l.fresh ? 1 : 0) << ',' << l.pose_wait_ms << ',' << l.render_ms << ','
      << l.wire_ms << ',' << l.composite_ms << ',' << l.accumulate_ms << ',' << l.encode_ms << ',' << l.send_ms << ',';
  for (const auto* v : {&l.page_latency_ms, &l.page_network_ms, &l.page_decode_ms, &l.page_draw_ms}) {
    if (v != &l.page_latency_ms) csv << ',';
    if (*v) csv << **v;
  }
  csv << ',' << l.depth_bytes << ',' << l.alpha_bytes << ',' << l.aux_ms << ',' << l.codec << ',' << l.video_bytes << ','
      << (l.key_frame ? 1 : 0) << ',' << l.bitrate_mbit << ',' << l.scale;
}

}  // namespace

nlohmann::json to_json(const FrameRecord& r, const std::vector<std::string>& names) {
  nlohmann::json workers = nlohmann::json::array();
  for (size_t i = 0; i < r.workers.size(); ++i)
    workers.push_back({{"worker", i < names.size() ? names[i] : std::to_string(i)},
                       {"tiles", r.workers[i].tiles},
                       {"busy_ms", r.workers[i].busy_ms},
                       {"cpu_ms", r.workers[i].cpu_ms},
                       {"wire_bytes", r.workers[i].wire_bytes},
                       {"batches", r.workers[i].batches},
                       {"stages_ms", stages_json(r.workers[i].stages)}});
  return {{"index", r.index},         {"frame_id", r.frame_id},     {"pose_time", r.pose_time},
          {"complete", r.complete}, {"superseded", r.superseded},   {"frame_ms", r.frame_ms},     {"latency_ms", r.latency_ms}, {"completed_s", r.completed_s},
          {"tiles", r.tiles},         {"tiles_received", r.tiles_received},
          {"assignments", r.assignments}, {"reassigned", r.reassigned}, {"duplicates", r.duplicates},
          {"reissued", r.reissued},
          {"wire_bytes", r.wire_bytes}, {"pixel_bytes", r.pixel_bytes}, {"samples_per_pixel", r.samples_per_pixel},
          {"stages_ms", stages_json(r.stages)}, {"workers", workers},
          {"note", r.note}, {"live", r.live ? live_json(*r.live) : nlohmann::json(nullptr)},
          {"settings", {{"mode", r.mode}, {"width", r.width}, {"height", r.height}, {"tile", r.tile_size}, {"stereo", r.stereo}}}};
}

void write_stats(const std::filesystem::path& path, const RunSummary& summary, const std::vector<FrameRecord>& records) {
  std::string text;
  if (path.extension() == ".json") {
    nlohmann::json frames = nlohmann::json::array();
    for (const auto& r : records) frames.push_back(to_json(r, summary.worker_names));
    nlohmann::json head = to_json(summary);
    // The summary names the last settings; frames rendered with others say so in their own "settings".
    size_t other = 0;
    for (const auto& r : records)
      other += r.mode != summary.mode || r.width != summary.width || r.height != summary.height || r.stereo != summary.stereo;
    head["frames_with_other_settings"] = other;
    text = nlohmann::json{{"summary", head}, {"frames", frames}}.dump(2) + "\n";
  } else {
    std::ostringstream csv;
    csv << "index,frame_id,pose_time,complete,frame_ms,latency_ms,tiles,tiles_received,assignments,reassigned,duplicates,"
           "reissued,wire_bytes,pixel_bytes,samples_per_pixel";
    for (const auto& stage : StageTimes::names()) csv << ',' << stage << "_ms";
    for (size_t i = 0; i < summary.worker_names.size(); ++i) {
      csv << ",w" << i << "_tiles,w" << i << "_busy_ms,w" << i << "_cpu_ms,w" << i << "_bytes,w" << i << "_batches";
      for (const auto& stage : {"queue", "device", "readback", "encode", "wire"}) csv << ",w" << i << '_' << stage << "_ms";
    }
    const bool live = std::any_of(records.begin(), records.end(), [](const FrameRecord& r) { return r.live.has_value(); });
    if (live) csv << ',' << kLiveColumns;
    csv << ",mode,width,height,tile,stereo,note\n";
    for (const auto& r : records) {
      csv << r.index << ',' << r.frame_id << ',' << r.pose_time << ',' << (r.complete ? 1 : 0) << ',' << r.frame_ms << ','
          << r.latency_ms << ',' << r.tiles << ',' << r.tiles_received << ',' << r.assignments << ',' << r.reassigned << ','
          << r.duplicates << ',' << r.reissued << ',' << r.wire_bytes << ',' << r.pixel_bytes << ',' << r.samples_per_pixel;
      for (double v : r.stages.values()) csv << ',' << v;
      for (size_t i = 0; i < summary.worker_names.size(); ++i) {
        const WorkerFrameStats w = i < r.workers.size() ? r.workers[i] : WorkerFrameStats{};
        csv << ',' << w.tiles << ',' << w.busy_ms << ',' << w.cpu_ms << ',' << w.wire_bytes << ',' << w.batches << ','
            << w.stages.queue << ',' << w.stages.device << ',' << w.stages.readback << ',' << w.stages.encode << ','
            << w.stages.wire;
      }
      if (live) live_csv(csv, r.live);
      csv << ',' << r.mode << ',' << r.width << ',' << r.height << ',' << r.tile_size << ',' << (r.stereo ? 1 : 0);
      std::string note = r.note;
      std::replace(note.begin(), note.end(), ',', ';');
      csv << ',' << note << '\n';
    }
    text = csv.str();
  }
  write_file_atomically(path, text.data(), text.size());
}

}  // namespace tessera::master
