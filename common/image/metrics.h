#pragma once
// Image quality metrics between two RGBA8 images of the same size. Alpha is ignored everywhere:
// MSE, PSNR and difference counts are over the R, G, B channels on the 8-bit scale; SSIM is on
// Rec. 709 luma of the 8-bit sRGB values, or per channel. Different sizes or empty images throw
// Error.
#include <array>
#include <cstdint>
#include <span>

#include <nlohmann/json_fwd.hpp>

#include "common/image/image.h"

namespace tessera {

// Mean of squared differences over every R, G and B sample.
double mse_rgb(const ImageRgba8& a, const ImageRgba8& b);
// 10 log10(255^2 / mse) in dB; +infinity when mse == 0.
double psnr_from_mse(double mse);
double psnr_rgb(const ImageRgba8& a, const ImageRgba8& b);

// SSIM (Wang, Bovik, Sheikh, Simoncelli 2004): 11x11 Gaussian window (sigma 1.5, normalised),
// K1 = 0.01, K2 = 0.03, L = 255, mean over the window positions wholly inside the image; no
// downsampling. For a side shorter than 11 pixels the window is cut to that side (centre taps,
// renormalised). 1 for identical inputs.
double ssim_luma(const ImageRgba8& a, const ImageRgba8& b);
std::array<double, 3> ssim_per_channel(const ImageRgba8& a, const ImageRgba8& b);  // R, G, B
// The same on two row-major planes of width * height samples in [0, 255].
double ssim_plane(std::span<const float> x, std::span<const float> y, int width, int height);

struct DiffStats {
  int max_abs_diff = 0;                // largest |a - b| over all R, G, B samples
  uint64_t pixels_over_threshold = 0;  // pixels whose largest channel difference is > threshold
  double fraction_over_threshold = 0;  // ... divided by the pixel count
};
// threshold in [0, 255]; 0 counts every pixel that differs at all.
DiffStats diff_stats(const ImageRgba8& a, const ImageRgba8& b, int threshold = 0);

struct ImageComparison {
  int width = 0;
  int height = 0;
  double mse = 0;
  double psnr = 0;  // +infinity for identical RGB
  double ssim = 0;  // luma
  std::array<double, 3> ssim_per_channel{};
  int threshold = 0;
  DiffStats diff;
};
ImageComparison compare_images(const ImageRgba8& a, const ImageRgba8& b, int threshold = 0);
// Fields: width, height, mse, psnr (the string "inf" when infinite), ssim,
// ssim_per_channel {r, g, b}, threshold, max_abs_diff, pixels_over_threshold,
// fraction_over_threshold.
nlohmann::json to_json(const ImageComparison& comparison);

// Per-channel |a - b| * gain, clamped to 255, opaque: differences show up bright on black.
ImageRgba8 difference_image(const ImageRgba8& a, const ImageRgba8& b, int gain);

}  // namespace tessera
