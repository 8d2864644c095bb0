#include "master/live/jpeg_bands.h"

#include <algorithm>
#include <exception>
#include <functional>
#include <latch>

#include "common/base/error.h"

namespace tessera::master::live {
namespace {

unsigned hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

// work(i) for i in [0, count): 0 on this thread, the rest on `pool`; returns when all are done and
// rethrows the first failure.
void run_parallel(TaskPool* pool, size_t count, const std::function<void(size_t)>& work) {
  std::vector<std::exception_ptr> failures(count);
  auto guarded = [&](size_t i) {
    try {
      work(i);
    } catch (...) {
      failures[i] = std::current_exception();
    }
  };
  if (!pool || count <= 1) {
    for (size_t i = 0; i < count; ++i) guarded(i);
  } else {
    std::latch done(std::ptrdiff_t(count - 1));
    for (size_t i = 1; i < count; ++i)
      pool->post([&, i] {
        guarded(i);
        done.count_down();
      });
    guarded(0);
    done.wait();
  }
  for (const auto& f : failures)
    if (f) std::rethrow_exception(f);
}

std::unique_ptr<TaskPool> pool_of(unsigned threads) {
  return threads > 1 ? std::make_unique<TaskPool>(threads - 1) : nullptr;  // the caller is the first thread
}

}  // namespace

std::vector<BandRows> plan_jpeg_bands(int height, unsigned max_bands) {
  if (height <= 0) return {};
  const int count = int(std::clamp(unsigned(height / kJpegBandMinRows), 1u, std::max(1u, max_bands)));
  // Even bands rounded up to whole MCU rows, unless that leaves the last one short: then rounded
  // down, the last band taking the rest (at most 15 rows a band more than the others).
  int rows = ((height + count - 1) / count + kJpegBandAlign - 1) / kJpegBandAlign * kJpegBandAlign;
  const int last = height - (height - 1) / rows * rows;
  const bool last_short = rows < height && last < kJpegBandMinRows;
  if (last_short) rows = height / count / kJpegBandAlign * kJpegBandAlign;
  std::vector<BandRows> bands;
  for (int y = 0; y < height; y += rows) {
    const bool final = last_short ? int(bands.size()) + 1 == count : y + rows >= height;
    bands.push_back({y, final ? height - y : rows});
    if (final) break;
  }
  return bands;
}

void check_band_layout(const std::vector<JpegBand>& bands, int height) {
  if (bands.empty()) throw Error("a frame without JPEG bands");
  int next = 0;
  for (const auto& b : bands) {
    if (b.y != next || b.height <= 0) throw Error("JPEG bands must cover the frame's rows in order, without gaps or overlaps");
    next += b.height;
  }
  if (next != height) throw Error("JPEG bands cover " + std::to_string(next) + " rows of a frame of " + std::to_string(height));
}

BandedJpegEncoder::BandedJpegEncoder(int quality, unsigned max_bands) {
  if (max_bands == 0) max_bands = hardware_threads();
  for (unsigned i = 0; i < max_bands; ++i) encoders_.push_back(std::make_unique<JpegEncoder>(quality));
  pool_ = pool_of(max_bands);
}

std::vector<JpegBand> BandedJpegEncoder::encode(const ImageRgba8& image) {
  const auto rows = plan_jpeg_bands(image.height(), max_bands());
  std::vector<JpegBand> bands(rows.size());
  run_parallel(pool_.get(), rows.size(), [&](size_t i) {
    bands[i] = {rows[i].y, rows[i].height, encoders_[i]->encode_rows(image, rows[i].y, rows[i].height)};
  });
  return bands;
}

BandedJpegDecoder::BandedJpegDecoder(unsigned threads) : threads_(threads ? threads : hardware_threads()), pool_(pool_of(threads_)) {}

ImageRgba8 BandedJpegDecoder::decode(const std::vector<JpegBand>& bands, int width, int height) {
  check_band_layout(bands, height);
  ImageRgba8 image(width, height);
  // More bands than threads: each thread takes every threads_-th band.
  const size_t lanes = std::min(bands.size(), size_t(threads_));
  run_parallel(pool_.get(), lanes, [&](size_t lane) {
    for (size_t i = lane; i < bands.size(); i += lanes) decode_jpeg_into(bands[i].jpeg, image, bands[i].y, bands[i].height);
  });
  return image;
}

}  // namespace tessera::master::live
