#include "master/live/frame_message.h"

#include <algorithm>

#include "common/base/error.h"
#include "master/live/depth_plane.h"
#include "master/live/zlib_stream.h"

namespace tessera::master::live {
namespace {

int positive_int(const nlohmann::json& header, const char* key, int fallback) {
  const auto it = header.find(key);
  if (it == header.end()) return fallback;
  if (!it->is_number_integer() || it->get<int64_t>() <= 0 || it->get<int64_t>() > 1 << 20)
    throw Error(std::string("frame header: bad '") + key + "'");
  return int(it->get<int64_t>());
}

// The header, then the image's payloads in order, then the aux sections.
std::string pack(nlohmann::json header, const std::vector<const std::string*>& payloads, const AuxSections& aux) {
  size_t bytes = 0;
  for (const std::string* p : payloads) bytes += p->size();
  header["format"] = kFrameFormat;
  if (aux.depth) {
    const uint32_t k = std::max<uint32_t>(1, aux.depth_scale);
    header["depth"] = {{"near", aux.depth_near}, {"bytes", aux.depth->size()}, {"scale", k},
                       {"width", depth_plane_size(uint32_t(positive_int(header, "width", 1)), k)},
                       {"height", depth_plane_size(uint32_t(positive_int(header, "height", 1)), k)}};
    bytes += aux.depth->size();
  }
  if (aux.alpha) {
    header["alpha"] = {{"bytes", aux.alpha->size()}};
    bytes += aux.alpha->size();
  }
  const std::string text = header.dump();
  const auto length = uint32_t(text.size());
  std::string message;
  message.reserve(4 + text.size() + bytes);
  for (int i = 0; i < 4; ++i) message += char((length >> (8 * i)) & 0xff);
  message += text;
  for (const std::string* p : payloads) message += *p;
  if (aux.depth) message += *aux.depth;
  if (aux.alpha) message += *aux.alpha;
  return message;
}

}  // namespace

std::string pack_frame_message(nlohmann::json header, const std::vector<JpegBand>& bands, const AuxSections& aux) {
  nlohmann::json table = nlohmann::json::array();
  std::vector<const std::string*> payloads;
  for (const auto& b : bands) {
    table.push_back({{"y", b.y}, {"height", b.height}, {"bytes", b.jpeg.size()}});
    payloads.push_back(&b.jpeg);
  }
  header["bands"] = std::move(table);
  return pack(std::move(header), payloads, aux);
}

std::string pack_video_frame_message(nlohmann::json header, const std::string& video, const AuxSections& aux) {
  header["bands"] = nlohmann::json::array();
  header["video"]["bytes"] = video.size();
  return pack(std::move(header), {&video}, aux);
}

int FrameMessage::image_width() const { return positive_int(header, "eyes", 1) * positive_int(header, "width", 1); }

int FrameMessage::image_height() const { return positive_int(header, "height", 1); }

std::vector<uint16_t> FrameMessage::depth_values() const {
  if (!depth) throw Error("the frame has no depth section");
  const auto& plane = header.at("depth");  // per eye, eyes side by side; scale 1 before depth planes had a scale
  const size_t count = size_t(positive_int(header, "eyes", 1)) * size_t(positive_int(plane, "width", image_width() / positive_int(header, "eyes", 1))) *
                       size_t(positive_int(plane, "height", image_height()));
  const std::string bytes = zlib_decompress(*depth, count * 2);
  std::vector<uint16_t> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = uint16_t(uint8_t(bytes[2 * i]) | uint8_t(bytes[2 * i + 1]) << 8);
  return values;
}

std::vector<uint8_t> FrameMessage::alpha_values() const {
  if (!alpha) throw Error("the frame has no alpha section");
  const std::string bytes = zlib_decompress(*alpha, size_t(image_width()) * size_t(image_height()));
  return {bytes.begin(), bytes.end()};
}

FrameMessage unpack_frame_message(const std::string& message) {
  if (message.size() < 4) throw Error("frame message shorter than its length field");
  uint32_t length = 0;
  for (int i = 0; i < 4; ++i) length |= uint32_t(uint8_t(message[size_t(i)])) << (8 * i);
  if (length > message.size() - 4) throw Error("frame header runs past the message");
  FrameMessage frame;
  frame.header = nlohmann::json::parse(message.substr(4, length), nullptr, false);
  if (!frame.header.is_object() || frame.header.value("type", "") != "frame") throw Error("frame header is not a frame object");
  const size_t payload = 4 + size_t(length);
  const auto table = frame.header.find("bands");
  if (table == frame.header.end()) {  // format 1: one JPEG of the whole frame
    frame.bands.push_back({0, frame.image_height(), message.substr(payload)});
    return frame;
  }
  size_t at = payload;
  if (const auto video = frame.header.find("video"); video != frame.header.end()) {  // a video stream's frame
    const auto bytes = video->is_object() ? video->find("bytes") : video->end();
    if (!table->is_array() || !table->empty()) throw Error("frame header: a video frame has an empty 'bands'");
    if (bytes == video->end() || !bytes->is_number_unsigned()) throw Error("frame header: 'video' needs a whole number of bytes");
    if (bytes->get<uint64_t>() > message.size() - at) throw Error("frame video runs past the message");
    frame.video = message.substr(at, bytes->get<uint64_t>());
    at += frame.video->size();
  } else if (!table->is_array() || table->empty() || table->size() > kMaxFrameBands) {
    throw Error("frame header: 'bands' must list 1..1024 bands");
  }
  for (const auto& b : *table) {
    if (!b.is_object()) throw Error("frame header: a band must be an object");
    const auto y = b.find("y"), height = b.find("height"), bytes = b.find("bytes");
    if (y == b.end() || height == b.end() || bytes == b.end() || !y->is_number_unsigned() || !height->is_number_unsigned() ||
        !bytes->is_number_unsigned() || y->get<uint64_t>() > 1 << 20 || height->get<uint64_t>() > 1 << 20)
      throw Error("frame header: a band needs whole numbers y, height and bytes");
    const uint64_t n = bytes->get<uint64_t>();
    if (n > message.size() - at) throw Error("frame bands run past the message");
    frame.bands.push_back({int(y->get<uint64_t>()), int(height->get<uint64_t>()), message.substr(at, n)});
    at += n;
  }
  for (const char* key : {"depth", "alpha"}) {  // in this order after the bands
    const auto section = frame.header.find(key);
    if (section == frame.header.end()) continue;
    const auto bytes = section->is_object() ? section->find("bytes") : section->end();
    if (!section->is_object() || bytes == section->end() || !bytes->is_number_unsigned())
      throw Error(std::string("frame header: '") + key + "' needs a whole number of bytes");
    const uint64_t n = bytes->get<uint64_t>();
    if (n > message.size() - at) throw Error(std::string("frame ") + key + " section runs past the message");
    (std::string(key) == "depth" ? frame.depth : frame.alpha) = message.substr(at, n);
    at += n;
  }
  if (at != message.size()) throw Error("frame message has bytes after its last section");
  if (!frame.video) check_band_layout(frame.bands, frame.image_height());
  return frame;
}

}  // namespace tessera::master::live
