// tessera-jpeg-bench: how long the live session's JPEG takes for one frame, as one JPEG and as
// bands encoded and decoded in parallel (master/live/jpeg_bands.h), thread count by thread count.
// Prints the median encode and decode times and the bytes per frame; no network, no device.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "common/base/cli.h"
#include "common/base/error.h"
#include "common/base/median.h"
#include "common/image/metrics.h"
#include "common/image/png_io.h"
#include "master/live/jpeg_bands.h"
#include "master/live/jpeg_codec.h"

namespace {

using namespace tessera;
using namespace tessera::master::live;
using Clock = std::chrono::steady_clock;

// A frame with a rendered frame's mix of smooth shading, edges and noise (entropy decides the
// encoder's time); --image gives a real one.
ImageRgba8 synthetic_frame(int width, int height) {
  ImageRgba8 image(width, height);
  std::mt19937 random(1);
  std::normal_distribution<float> noise(0.0f, 6.0f);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const float u = float(x) / float(width), v = float(y) / float(height);
      const bool wall = ((x / 97) + (y / 61)) % 3 == 0;
      auto channel = [&](float base) { return uint8_t(std::clamp(base + noise(random), 0.0f, 255.0f)); };
      image.set(x, y, {channel(wall ? 200 * v : 60 + 150 * u), channel(wall ? 40 : 120 + 80 * v), channel(255 * u * v), 255});
    }
  return image;
}

// Decoded bands against one decoded JPEG of the frame, on the rows either side of a band edge (the
// only rows where a decoder's chroma upsampling can tell them apart): {largest, mean} difference in
// levels of R, G and B, and the largest anywhere else (0 unless bands lost their alignment).
struct EdgeDifference {
  int largest = 0, elsewhere = 0;
  double mean = 0;
};
EdgeDifference edge_difference(const ImageRgba8& banded, const ImageRgba8& whole, const std::vector<JpegBand>& bands) {
  EdgeDifference e;
  double sum = 0;
  size_t count = 0;
  for (int y = 0; y < banded.height(); ++y) {
    const bool edge = std::any_of(bands.begin() + 1, bands.end(), [&](const JpegBand& b) { return y == b.y - 1 || y == b.y; });
    for (int x = 0; x < banded.width() * 4; ++x) {
      if (x % 4 == 3) continue;
      const int d = std::abs(int(banded.row(y)[x]) - int(whole.row(y)[x]));
      if (!edge) {
        e.elsewhere = std::max(e.elsewhere, d);
        continue;
      }
      e.largest = std::max(e.largest, d);
      sum += d;
      ++count;
    }
  }
  e.mean = count ? sum / double(count) : 0;
  return e;
}

std::vector<unsigned> parse_threads(const std::string& text) {
  std::vector<unsigned> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    size_t used = 0;
    unsigned long n = 0;
    try {
      n = std::stoul(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty() || n < 1 || n > 256) throw UsageError("--threads: a list of thread counts in 1..256, got '" + text + "'");
    out.push_back(unsigned(n));
  }
  if (out.empty()) throw UsageError("--threads: a list of thread counts in 1..256");
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tessera-jpeg-bench: time the live session's JPEG of one frame, whole and as parallel bands", "tessera-jpeg-bench"};
  std::string size = "2048x1024", image_path, threads_text;
  int quality = 85, repeat = 30;
  bool json_out = false;
  app.add_option("--size", size, "Frame WIDTHxHEIGHT of the synthetic frame (a stereo 1024x1024 pair is 2048x1024)")->capture_default_str();
  app.add_option("--image", image_path, "Time this image (PNG, e.g. a tessera-render frame) instead of a synthetic frame");
  app.add_option("--threads", threads_text, "Comma-separated thread counts to time (default: 1 and every power of two up to the hardware threads)");
  app.add_option("--quality", quality, "JPEG quality (1..100)")->capture_default_str()->check(CLI::Range(1, 100));
  app.add_option("--repeat", repeat, "Frames timed per thread count")->capture_default_str()->check(CLI::Range(1, 100000));
  app.add_flag("--json", json_out, "Print the results as JSON");
  if (const auto done = cli::parse(app, argc, argv)) return *done;

  try {
    unsigned width = 0, height = 0;
    if (std::sscanf(size.c_str(), "%ux%u", &width, &height) != 2 || width < 1 || height < 1 || width > 16384 || height > 16384)
      throw UsageError("--size: WIDTHxHEIGHT in 1..16384, got '" + size + "'");
    std::vector<unsigned> threads;
    if (!threads_text.empty()) {
      threads = parse_threads(threads_text);
    } else {
      const unsigned most = std::max(1u, std::thread::hardware_concurrency());
      for (unsigned t = 1; t < most; t *= 2) threads.push_back(t);
      threads.push_back(most);
    }
    const ImageRgba8 frame = image_path.empty() ? synthetic_frame(int(width), int(height)) : read_image(image_path);

    nlohmann::json results = nlohmann::json::array();
    for (const unsigned t : threads) {
      BandedJpegEncoder encoder(quality, t);
      BandedJpegDecoder decoder(t);
      std::vector<double> encode_ms, decode_ms;
      size_t bytes = 0, bands = 0;
      double psnr = 0;
      EdgeDifference edges;
      for (int i = 0; i <= repeat; ++i) {  // the first round warms caches and threads up, untimed
        const auto start = Clock::now();
        const auto encoded = encoder.encode(frame);
        const auto encoded_at = Clock::now();
        const ImageRgba8 decoded = decoder.decode(encoded, frame.width(), frame.height());
        const auto decoded_at = Clock::now();
        if (i == 0) {
          bands = encoded.size();
          for (const auto& b : encoded) bytes += b.jpeg.size();
          psnr = psnr_rgb(decoded, frame);
          JpegEncoder whole(quality);
          edges = edge_difference(decoded, decode_jpeg(whole.encode(frame)), encoded);
          continue;
        }
        encode_ms.push_back(std::chrono::duration<double, std::milli>(encoded_at - start).count());
        decode_ms.push_back(std::chrono::duration<double, std::milli>(decoded_at - encoded_at).count());
      }
      results.push_back({{"threads", t},
                         {"bands", bands},
                         {"encode_ms_median", median(encode_ms)},
                         {"decode_ms_median", median(decode_ms)},
                         {"bytes", bytes},
                         {"psnr_db", psnr},
                         {"band_edge_difference", {{"max", edges.largest}, {"mean", edges.mean}, {"elsewhere_max", edges.elsewhere}}}});
    }
    if (json_out) {
      std::cout << nlohmann::json{{"width", frame.width()}, {"height", frame.height()}, {"quality", quality}, {"repeat", repeat},
                                  {"hardware_threads", std::thread::hardware_concurrency()}, {"results", results}}
                       .dump(2)
                << std::endl;
    } else {
      std::printf("%dx%d, quality %d, medians of %d frames (%u hardware threads)\n", frame.width(), frame.height(), quality, repeat,
                  std::thread::hardware_concurrency());
      std::printf("threads  bands  encode ms  decode ms     bytes  PSNR dB  vs one JPEG: edge rows max/mean, elsewhere max\n");
      for (const auto& r : results) {
        const auto& e = r["band_edge_difference"];
        std::printf("%7u  %5zu  %9.2f  %9.2f  %8zu  %7.2f  %3d / %.2f, %d\n", r["threads"].get<unsigned>(), r["bands"].get<size_t>(),
                    r["encode_ms_median"].get<double>(), r["decode_ms_median"].get<double>(), r["bytes"].get<size_t>(),
                    r["psnr_db"].get<double>(), e["max"].get<int>(), e["mean"].get<double>(), e["elsewhere_max"].get<int>());
      }
    }
    return 0;
  } catch (const std::exception& e) {
    return cli::fail(app, e);
  }
}
