#include "master/live/stream_options.h"

#include <algorithm>
#include <cmath>

#include "common/base/file_io.h"
#include "common/base/usage_error.h"

namespace tessera::master::live {

std::string parse_codec_setting(const std::string& text) {
  if (text == "auto" || text == "jpeg" || video::parse_codec(text)) return text;
  throw UsageError("--codec must be auto, jpeg, h264, vp9 or av1, not '" + text + "'");
}

RateOptions parse_stream_bitrate(const std::string& text) {
  RateOptions rate;
  if (text == "auto") return rate;
  size_t used = 0;
  double mbit = 0;
  try {
    mbit = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !std::isfinite(mbit) || mbit < 0.1 || mbit > 1000)
    throw UsageError("--stream-bitrate must be auto or Mbit/s in 0.1..1000, not '" + text + "'");
  rate.automatic = false;
  rate.start_mbit = rate.max_mbit = mbit;
  return rate;
}

ReferenceFrames parse_reference_frames(const std::string& text) {
  ReferenceFrames r;
  std::string dir = text;
  if (const size_t colon = text.rfind(':'); colon != std::string::npos) {
    const std::string every = text.substr(colon + 1);
    if (every.empty() || every.size() > 9 || !std::all_of(every.begin(), every.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        std::stoull(every) == 0)
      throw UsageError("--reference-frames DIR[:EVERY]: EVERY must be a whole number from 1, not '" + every + "'");
    r.every = std::stoull(every);
    dir = text.substr(0, colon);
  }
  if (dir.empty()) throw UsageError("--reference-frames needs a folder");
  r.dir = dir;
  std::error_code error;
  std::filesystem::create_directories(r.dir, error);
  if (!std::filesystem::is_directory(r.dir)) throw UsageError("--reference-frames: cannot make the folder '" + dir + "'");
  return r;
}

std::optional<video::Codec> choose_stream_codec(const std::string& setting, const std::vector<video::Codec>& decoders) {
  auto decodes = [&](video::Codec c) { return std::find(decoders.begin(), decoders.end(), c) != decoders.end(); };
  if (setting == "auto") {
    for (video::Codec c : kAutoPreference)
      if (decodes(c)) return c;
    return std::nullopt;
  }
  if (const auto codec = video::parse_codec(setting); codec && decodes(*codec)) return codec;
  return std::nullopt;
}

void write_reference_frame(const ReferenceFrames& reference, uint64_t frame_id, const ImageRgba8& image) {
  const std::string head = "P6\n" + std::to_string(image.width()) + " " + std::to_string(image.height()) + "\n255\n";
  std::string bytes = head;
  bytes.reserve(head.size() + image.pixel_count() * 3);
  const auto pixels = image.pixels();
  for (size_t i = 0; i < image.pixel_count(); ++i) bytes.append(reinterpret_cast<const char*>(&pixels[i * 4]), 3);
  write_file_atomically(reference.dir / ("frame-" + std::to_string(frame_id) + ".ppm"), bytes.data(), bytes.size());
}

}  // namespace tessera::master::live
