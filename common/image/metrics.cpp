#include "common/image/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/base/error.h"

namespace tessera {
namespace {

constexpr int kSsimWindow = 11;
constexpr double kSsimSigma = 1.5;
constexpr double kSsimC1 = (0.01 * 255) * (0.01 * 255);
constexpr double kSsimC2 = (0.03 * 255) * (0.03 * 255);

std::string size_text(int w, int h) { return std::to_string(w) + "x" + std::to_string(h); }

void check_comparable(const ImageRgba8& a, const ImageRgba8& b) {
  if (a.width() != b.width() || a.height() != b.height())
    throw Error("images differ in size: " + size_text(a.width(), a.height()) + " vs " +
                size_text(b.width(), b.height()));
  if (a.empty()) throw Error("cannot compare empty " + size_text(a.width(), a.height()) + " images");
}

// n normalised Gaussian taps centred on the window (half-integer offsets when n is even).
std::vector<double> gaussian_taps(int n) {
  std::vector<double> taps(static_cast<size_t>(n));
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    const double d = i - (n - 1) / 2.0;
    taps[size_t(i)] = std::exp(-d * d / (2 * kSsimSigma * kSsimSigma));
    sum += taps[size_t(i)];
  }
  for (double& t : taps) t /= sum;
  return taps;
}

// Channel `c` of an RGBA8 image, or Rec. 709 luma for c == 3.
std::vector<float> plane(const ImageRgba8& image, int c) {
  const auto px = image.pixels();
  std::vector<float> out(image.pixel_count());
  for (size_t i = 0; i < out.size(); ++i) {
    const uint8_t* p = &px[i * 4];
    out[i] = c < 3 ? float(p[c]) : float(0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2]);
  }
  return out;
}

}  // namespace

double mse_rgb(const ImageRgba8& a, const ImageRgba8& b) {
  check_comparable(a, b);
  const auto pa = a.pixels(), pb = b.pixels();
  uint64_t sum = 0;  // exact: at most 3 * 2^28 * 255^2 < 2^64
  for (size_t i = 0; i < pa.size(); i += 4)
    for (size_t c = 0; c < 3; ++c) {
      const int d = int(pa[i + c]) - int(pb[i + c]);
      sum += uint64_t(d * d);
    }
  return double(sum) / (3.0 * double(a.pixel_count()));
}

double psnr_from_mse(double mse) {
  if (mse <= 0) return std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(255.0 * 255.0 / mse);
}

double psnr_rgb(const ImageRgba8& a, const ImageRgba8& b) { return psnr_from_mse(mse_rgb(a, b)); }

double ssim_plane(std::span<const float> x, std::span<const float> y, int width, int height) {
  if (width <= 0 || height <= 0) throw Error("cannot compute SSIM of an empty " + size_text(width, height) + " plane");
  const size_t n = size_t(width) * size_t(height);
  if (x.size() != n || y.size() != n) throw Error("SSIM planes do not hold " + size_text(width, height) + " samples");

  const int kw = std::min(kSsimWindow, width), kh = std::min(kSsimWindow, height);
  const std::vector<double> wx = gaussian_taps(kw), wy = gaussian_taps(kh);
  const size_t ow = size_t(width - kw + 1), oh = size_t(height - kh + 1);

  // Separable filtering, streamed: the horizontally filtered moments (x, y, x^2, y^2, xy) of the
  // last kh rows live in a ring buffer, so memory stays O(width) for any image height.
  constexpr size_t kMoments = 5;
  std::vector<double> ring(size_t(kh) * kMoments * ow);
  std::vector<double> acc(kMoments * ow);
  double total = 0;
  for (int r = 0; r < height; ++r) {
    double* slot = &ring[size_t(r % kh) * kMoments * ow];
    const float* xr = &x[size_t(r) * size_t(width)];
    const float* yr = &y[size_t(r) * size_t(width)];
    for (size_t i = 0; i < ow; ++i) {
      double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
      for (int k = 0; k < kw; ++k) {
        const double a = xr[i + size_t(k)], b = yr[i + size_t(k)], w = wx[size_t(k)];
        sx += w * a;
        sy += w * b;
        sxx += w * a * a;
        syy += w * b * b;
        sxy += w * a * b;
      }
      slot[i] = sx;
      slot[ow + i] = sy;
      slot[2 * ow + i] = sxx;
      slot[3 * ow + i] = syy;
      slot[4 * ow + i] = sxy;
    }
    if (r < kh - 1) continue;

    // Output row r - kh + 1 covers input rows r - kh + 1 .. r.
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int k = 0; k < kh; ++k) {
      const double* src = &ring[size_t((r - kh + 1 + k) % kh) * kMoments * ow];
      const double w = wy[size_t(k)];
      for (size_t j = 0; j < kMoments * ow; ++j) acc[j] += w * src[j];
    }
    double row_sum = 0;
    for (size_t i = 0; i < ow; ++i) {
      const double mx = acc[i], my = acc[ow + i];
      const double vx = acc[2 * ow + i] - mx * mx, vy = acc[3 * ow + i] - my * my;
      const double cxy = acc[4 * ow + i] - mx * my;
      row_sum += ((2 * mx * my + kSsimC1) * (2 * cxy + kSsimC2)) /
                 ((mx * mx + my * my + kSsimC1) * (vx + vy + kSsimC2));
    }
    total += row_sum;
  }
  return total / (double(ow) * double(oh));
}

double ssim_luma(const ImageRgba8& a, const ImageRgba8& b) {
  check_comparable(a, b);
  return ssim_plane(plane(a, 3), plane(b, 3), a.width(), a.height());
}

std::array<double, 3> ssim_per_channel(const ImageRgba8& a, const ImageRgba8& b) {
  check_comparable(a, b);
  std::array<double, 3> out{};
  for (int c = 0; c < 3; ++c) out[size_t(c)] = ssim_plane(plane(a, c), plane(b, c), a.width(), a.height());
  return out;
}

DiffStats diff_stats(const ImageRgba8& a, const ImageRgba8& b, int threshold) {
  check_comparable(a, b);
  if (threshold < 0 || threshold > 255) throw Error("difference threshold " + std::to_string(threshold) +
                                                    " is outside 0..255");
  DiffStats stats;
  const auto pa = a.pixels(), pb = b.pixels();
  for (size_t i = 0; i < pa.size(); i += 4) {
    int worst = 0;
    for (size_t c = 0; c < 3; ++c) worst = std::max(worst, std::abs(int(pa[i + c]) - int(pb[i + c])));
    stats.max_abs_diff = std::max(stats.max_abs_diff, worst);
    if (worst > threshold) ++stats.pixels_over_threshold;
  }
  stats.fraction_over_threshold = double(stats.pixels_over_threshold) / double(a.pixel_count());
  return stats;
}

ImageComparison compare_images(const ImageRgba8& a, const ImageRgba8& b, int threshold) {
  ImageComparison out;
  out.diff = diff_stats(a, b, threshold);  // validates sizes and threshold first
  out.width = a.width();
  out.height = a.height();
  out.threshold = threshold;
  out.mse = mse_rgb(a, b);
  out.psnr = psnr_from_mse(out.mse);
  out.ssim = ssim_luma(a, b);
  out.ssim_per_channel = ssim_per_channel(a, b);
  return out;
}

nlohmann::json to_json(const ImageComparison& c) {
  nlohmann::json j;
  j["width"] = c.width;
  j["height"] = c.height;
  j["mse"] = c.mse;
  // JSON has no infinity: the PSNR of identical images is null, and "identical" says why.
  j["identical"] = std::isinf(c.psnr);
  if (std::isinf(c.psnr))
    j["psnr"] = nullptr;
  else
    j["psnr"] = c.psnr;
  j["ssim"] = c.ssim;
  j["ssim_per_channel"] = {{"r", c.ssim_per_channel[0]}, {"g", c.ssim_per_channel[1]}, {"b", c.ssim_per_channel[2]}};
  j["threshold"] = c.threshold;
  j["max_abs_diff"] = c.diff.max_abs_diff;
  j["pixels_over_threshold"] = c.diff.pixels_over_threshold;
  j["fraction_over_threshold"] = c.diff.fraction_over_threshold;
  return j;
}

ImageRgba8 difference_image(const ImageRgba8& a, const ImageRgba8& b, int gain) {
  check_comparable(a, b);
  if (gain < 1) throw Error("difference gain must be at least 1, got " + std::to_string(gain));
  ImageRgba8 out(a.width(), a.height());
  const auto pa = a.pixels(), pb = b.pixels();
  auto po = out.pixels();
  for (size_t i = 0; i < pa.size(); i += 4)
    for (size_t c = 0; c < 3; ++c)
      po[i + c] = uint8_t(std::min(255, std::abs(int(pa[i + c]) - int(pb[i + c])) * std::min(gain, 255)));
  return out;
}

}  // namespace tessera
