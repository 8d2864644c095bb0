// tessera-video-bench: what each live stream codec costs for frames in motion, no network: rendered
// frames of a moving camera (tessera-render PNGs, --image once per frame), or one frame (or a
// synthetic one) panned a few pixels a frame, encoded as the live session encodes a page's stream
// (common/video), then decoded. A pan is a pure translation, which AV1's global motion codes in
// almost no bytes: rendered frames (parallax, new surfaces) are the fair measure.
// Prints per codec: the key frame's and the delta frames' bytes, their PSNR against the raw frames
// (RGB, after the stream's 4:2:0 conversion and coding), and the median encode and decode times;
// JPEG (the banded encoder, --jpeg-quality) beside them for comparison.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/base/cli.h"
#include "common/base/error.h"
#include "common/base/median.h"
#include "common/base/usage_error.h"
#include "common/image/metrics.h"
#include "common/image/png_io.h"
#include "common/video/video_decoder.h"
#include "common/video/video_encoder.h"
#include "common/video/video_strips.h"
#include "master/live/jpeg_bands.h"

namespace {

using namespace tessera;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

double ms_since(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

// `image` moved `dx` pixels to the left, its right edge repeated: a pan.
ImageRgba8 panned(const ImageRgba8& image, int dx) {
  ImageRgba8 out(image.width(), image.height());
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x) out.set(x, y, image.at(std::min(image.width() - 1, x + dx), y));
  return out;
}

ImageRgba8 synthetic_frame(int width, int height) {
  ImageRgba8 image(width, height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const bool wall = ((x / 97) + (y / 61)) % 3 == 0;
      image.set(x, y, {uint8_t(wall ? 200 * y / height : 60 + 150 * x / width), uint8_t(wall ? 40 : 120 + 80 * y / height),
                       uint8_t(255 * x / width * y / height), 255});
    }
  return image;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tessera-video-bench: bytes, PSNR and times of the live stream's codecs on one frame panned a few pixels a frame",
               "tessera-video-bench"};
  std::vector<std::string> image_paths;
  std::string codecs_text = "h264,vp9,av1";
  double bitrate = 30, fps = 60;
  int frames = 30, pan = 6, jpeg_quality = 85;
  unsigned threads = 0;
  int strips = 1;
  std::string h264_preset = "superfast";
  bool json_out = false;
  app.add_option("--image", image_paths,
                 "A frame (PNG, e.g. tessera-render --size 2048x1024); several: the frames in order, cycled for --frames; "
                 "one: panned (--pan); none: a synthetic 2048x1024 one, panned");
  app.add_option("--codecs", codecs_text, "Comma-separated codecs: h264, vp9, av1")->capture_default_str();
  app.add_option("--bitrate", bitrate, "Mbit/s the encoder aims at")->capture_default_str()->check(CLI::Range(0.1, 1000.0));
  app.add_option("--fps", fps, "Frames a second the bitrate is spread over")->capture_default_str()->check(CLI::Range(1.0, 240.0));
  app.add_option("--frames", frames, "Delta frames after the key frame")->capture_default_str()->check(CLI::Range(1, 10000));
  app.add_option("--pan", pan, "Pixels the view moves a frame")->capture_default_str()->check(CLI::Range(0, 256));
  app.add_option("--threads", threads, "Encoder and decoder threads (0: one per hardware thread, at most 16)")->capture_default_str();
  app.add_option("--strips", strips,
                 "Horizontal strips, each its own one-threaded stream, coded in parallel on --threads threads (1: the whole frame, "
                 "one encoder of --threads threads)")
      ->capture_default_str()
      ->check(CLI::Range(1, 16));
  app.add_option("--h264-preset", h264_preset, "x264's preset (ultrafast, superfast, veryfast, ...)")->capture_default_str();
  app.add_option("--jpeg-quality", jpeg_quality, "JPEG quality of the comparison row")->capture_default_str()->check(CLI::Range(1, 100));
  app.add_flag("--json", json_out, "Print the results as JSON");
  if (const auto done = cli::parse(app, argc, argv)) return *done;

  try {
    std::vector<video::Codec> codecs;
    std::stringstream list(codecs_text);
    for (std::string name; std::getline(list, name, ',');) {
      const auto codec = video::parse_codec(name);
      if (!codec) throw UsageError("--codecs: h264, vp9 or av1, not '" + name + "'");
      codecs.push_back(*codec);
    }
    std::vector<ImageRgba8> sequence;
    for (const auto& path : image_paths) sequence.push_back(read_image(path));
    if (sequence.empty()) sequence.push_back(synthetic_frame(2048, 1024));
    for (const auto& image : sequence)
      if (image.width() != sequence[0].width() || image.height() != sequence[0].height()) throw UsageError("--image: the frames differ in size");
    const ImageRgba8& source = sequence[0];
    const int width = source.width() & ~1, height = source.height() & ~1;
    std::vector<ImageRgba8> raw;  // the frames as rendered: the sequence there and back again, or a pan
    for (int i = 0; i <= frames; ++i) {
      if (sequence.size() == 1) {
        raw.push_back(panned(source, i * pan));
        continue;
      }
      const int period = 2 * int(sequence.size()) - 2, k = i % period;
      raw.push_back(sequence[size_t(k < int(sequence.size()) ? k : period - k)]);
    }
    json rows = json::array();
    TaskPool pool(video::encoder_threads(threads));
    const unsigned codec_threads = strips == 1 ? threads : 1;  // strips: one thread each, the pool runs them side by side
    for (video::Codec codec : codecs) {
      video::EncoderSettings settings{width, height, bitrate, fps, codec_threads, h264_preset};
      video::StripEncoder encoder(codec, settings, strips, pool);
      video::StripDecoder decoder(codec, codec_threads, pool);
      std::vector<double> delta_bytes, delta_psnr, encode_ms, decode_ms, strip_encode_ms, strip_decode_ms;
      double key_bytes = 0, key_psnr = 0, key_encode_ms = 0;
      for (int i = 0; i <= frames; ++i) {
        const video::I420Image picture_in = video::rgba_to_i420(raw[size_t(i)], width, height);
        const auto start = Clock::now();
        const video::StripFrame frame = encoder.encode(picture_in, i == 0);
        const double encoded_ms = ms_since(start);
        const auto decode_start = Clock::now();
        const video::I420Image picture = decoder.decode(frame.bytes, frame.strips, width, height);
        decode_ms.push_back(ms_since(decode_start));
        for (double ms : decoder.strip_decode_ms) strip_decode_ms.push_back(ms);
        ImageRgba8 shown = video::i420_to_rgba_stretched(picture, source.width(), source.height());
        const double psnr = psnr_rgb(raw[size_t(i)], shown);
        if (i == 0) {
          key_bytes = double(frame.bytes.size());
          key_psnr = psnr;
          key_encode_ms = encoded_ms;
        } else {
          delta_bytes.push_back(double(frame.bytes.size()));
          delta_psnr.push_back(psnr);
          encode_ms.push_back(encoded_ms);
          for (double ms : frame.strip_encode_ms) strip_encode_ms.push_back(ms);
        }
      }
      rows.push_back({{"codec", video::codec_name(codec)}, {"key_bytes", key_bytes}, {"key_psnr_db", key_psnr},
                      {"key_encode_ms", key_encode_ms}, {"delta_bytes", median(delta_bytes)}, {"delta_psnr_db", median(delta_psnr)},
                      {"encode_ms", median(encode_ms)}, {"decode_ms", median(decode_ms)}, {"strip_encode_ms", median(strip_encode_ms)},
                      {"strip_decode_ms", median(strip_decode_ms)}});
    }
    {  // JPEG, every frame whole
      master::live::BandedJpegEncoder jpeg(jpeg_quality, threads);
      master::live::BandedJpegDecoder jpeg_decoder(threads);
      std::vector<double> bytes, psnr, encode_ms, decode_ms;
      for (int i = 0; i <= frames; ++i) {
        const auto start = Clock::now();
        const auto bands = jpeg.encode(raw[size_t(i)]);
        encode_ms.push_back(ms_since(start));
        const auto decode_start = Clock::now();
        const ImageRgba8 shown = jpeg_decoder.decode(bands, source.width(), source.height());
        decode_ms.push_back(ms_since(decode_start));
        double b = 0;
        for (const auto& band : bands) b += double(band.jpeg.size());
        bytes.push_back(b);
        psnr.push_back(psnr_rgb(raw[size_t(i)], shown));
      }
      rows.push_back({{"codec", "jpeg"}, {"key_bytes", median(bytes)}, {"key_psnr_db", median(psnr)}, {"key_encode_ms", median(encode_ms)},
                      {"delta_bytes", median(bytes)}, {"delta_psnr_db", median(psnr)}, {"encode_ms", median(encode_ms)},
                      {"decode_ms", median(decode_ms)}, {"strip_encode_ms", median(encode_ms)},
                      {"strip_decode_ms", median(decode_ms)}});
    }
    if (json_out) {
      std::cout << json{{"width", source.width()}, {"height", source.height()}, {"bitrate_mbit", bitrate}, {"fps", fps},
                        {"images", sequence.size()}, {"pan", pan}, {"strips", strips}, {"frames", frames}, {"codecs", rows}}.dump(2)
                << std::endl;
      return 0;
    }
    std::printf("%dx%d, %.1f Mbit/s at %.0f fps (%.0f KB a frame), %s, %d delta frames\n", source.width(), source.height(), bitrate,
                fps, bitrate * 1e6 / 8 / fps / 1000,
                sequence.size() > 1 ? (std::to_string(sequence.size()) + " rendered frames there and back").c_str()
                                    : ("panned " + std::to_string(pan) + " px a frame").c_str(),
                frames);
    std::printf("%d strip%s (a strip's encode and decode ms: one thread, the median strip)\n", strips, strips == 1 ? "" : "s");
    std::printf("%-5s %10s %8s %9s %10s %8s %10s %10s %9s %9s\n", "codec", "key KB", "key dB", "key ms", "delta KB", "delta dB",
                "encode ms", "decode ms", "strip enc", "strip dec");
    for (const auto& r : rows)
      std::printf("%-5s %10.1f %8.2f %9.1f %10.1f %8.2f %10.1f %10.1f %9.1f %9.1f\n", r["codec"].get<std::string>().c_str(),
                  r["key_bytes"].get<double>() / 1000, r["key_psnr_db"].get<double>(), r["key_encode_ms"].get<double>(),
                  r["delta_bytes"].get<double>() / 1000, r["delta_psnr_db"].get<double>(), r["encode_ms"].get<double>(),
                  r["decode_ms"].get<double>(), r["strip_encode_ms"].get<double>(), r["strip_decode_ms"].get<double>());
    return 0;
  } catch (const std::exception& e) {
    return cli::fail(app, e);
  }
}
