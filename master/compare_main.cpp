// tessera-compare: image metrics between two images (MSE, PSNR, SSIM), for judging renders
// against references by eye (--diff) or by script (--json).
#include <cmath>
#include <cstdio>
#include <iostream>
#include <new>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/base/cli.h"
#include "common/base/error.h"
#include "common/base/temporary_files.h"
#include "common/image/image.h"
#include "common/image/metrics.h"
#include "common/image/png_io.h"

namespace {

constexpr const char* kProgram = "tessera-compare";

std::string format(const char* fmt, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, fmt, value);
  return buffer;
}

void print_human(const tessera::ImageComparison& c, const std::string& a, const std::string& b) {
  const auto& s = c.ssim_per_channel;
  std::cout << "images   " << a << " vs " << b << " (" << c.width << "x" << c.height << ")\n"
            << "MSE      " << format("%.6f", c.mse) << "  (R, G, B; 8-bit scale)\n"
            << "PSNR     " << (std::isinf(c.psnr) ? std::string("inf (identical RGB)") : format("%.3f dB", c.psnr))
            << '\n'
            << "SSIM     " << format("%.6f", c.ssim) << "  (Rec. 709 luma; R " << format("%.6f", s[0]) << ", G "
            << format("%.6f", s[1]) << ", B " << format("%.6f", s[2]) << ")\n"
            << "max diff " << c.diff.max_abs_diff << "  (8-bit levels); " << c.diff.pixels_over_threshold << " of "
            << uint64_t(c.width) * uint64_t(c.height) << " pixels ("
            << format("%.4f", 100.0 * c.diff.fraction_over_threshold) << " %) differ by more than " << c.threshold
            << '\n';
}

struct Crop {
  int x = 0, y = 0, w = 0, h = 0;
};

Crop parse_crop(const std::string& text) {
  Crop c;
  char extra = 0;
  if (std::sscanf(text.c_str(), "%d,%d,%d,%d%c", &c.x, &c.y, &c.w, &c.h, &extra) != 4 || c.x < 0 || c.y < 0 ||
      c.w <= 0 || c.h <= 0)
    throw tessera::Error("bad --crop '" + text + "' (expected X,Y,W,H with X, Y >= 0 and W, H > 0)");
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Compares two images of the same size (PNG, JPEG or anything stb_image reads).", kProgram};
  app.footer(
      "Metrics ignore alpha. MSE and PSNR (10 log10(255^2 / MSE), dB) are over the R, G and B samples on\n"
      "the 8-bit scale; PSNR of identical images is infinite (null in JSON, with \"identical\": true).\n"
      "SSIM follows Wang et al. 2004 (11x11 Gaussian window, sigma 1.5, K1 0.01, K2 0.03, mean over valid\n"
      "windows) on Rec. 709 luma of the 8-bit sRGB values; per-channel SSIM is printed too and is in the\n"
      "JSON as ssim_per_channel. max_abs_diff is the largest channel difference; pixels_over_threshold\n"
      "counts pixels whose largest channel difference exceeds --threshold.\n"
      "--crop X,Y,W,H compares only that rectangle of both images (e.g. to leave out a background that\n"
      "two renderers draw differently); --diff then writes the rectangle.\n"
      "Exit status: 0 compared, 1 bad input (missing file, not an image, different sizes), 2 bad usage.");
  std::string a_path, b_path, diff_path, crop_text;
  bool json = false;
  int threshold = 0;
  int gain = 32;  // one 8-bit level shows as 32: small render differences stay visible
  app.add_option("A", a_path, "first image")->required();
  app.add_option("B", b_path, "second image")->required();
  app.add_flag("--json", json,
               "print one JSON object: width, height, mse, psnr (null when identical), identical, ssim, ssim_per_channel {r,g,b}, threshold, "
               "max_abs_diff, pixels_over_threshold, fraction_over_threshold");
  app.add_option("--diff", diff_path, "write |A - B| * gain per channel as a PNG, for looking at");
  app.add_option("--diff-gain", gain, "amplification of the --diff image")->check(CLI::Range(1, 255))->capture_default_str();
  app.add_option("--threshold", threshold, "count pixels whose largest channel difference exceeds N (0..255)")
      ->check(CLI::Range(0, 255))
      ->capture_default_str();

  app.add_option("--crop", crop_text, "compare only the rectangle X,Y,W,H (pixels; top-left corner, width, height)");

  if (const auto done = tessera::cli::parse(app, argc, argv)) return *done;
  tessera::remove_temporary_files_on_signal();

  try {
    const bool cropped = !crop_text.empty();
    const Crop crop = cropped ? parse_crop(crop_text) : Crop{};
    tessera::ImageRgba8 a = tessera::read_image(a_path);
    tessera::ImageRgba8 b = tessera::read_image(b_path);
    if (a.width() != b.width() || a.height() != b.height())
      throw tessera::Error("images differ in size: '" + a_path + "' is " + std::to_string(a.width()) + "x" +
                           std::to_string(a.height()) + ", '" + b_path + "' is " + std::to_string(b.width()) + "x" +
                           std::to_string(b.height()));
    if (cropped) {
      if (int64_t(crop.x) + crop.w > a.width() || int64_t(crop.y) + crop.h > a.height())
        throw tessera::Error("--crop " + crop_text + " does not lie inside the " + std::to_string(a.width()) + "x" +
                             std::to_string(a.height()) + " images");
      a = tessera::extract_tile(a, crop.x, crop.y, crop.w, crop.h);
      b = tessera::extract_tile(b, crop.x, crop.y, crop.w, crop.h);
    }
    const tessera::ImageComparison comparison = tessera::compare_images(a, b, threshold);
    // Written before anything is printed, so a failure leaves only the error line.
    if (!diff_path.empty()) tessera::write_png(diff_path, tessera::difference_image(a, b, gain));
    if (json)
      std::cout << tessera::to_json(comparison).dump(2) << '\n';
    else
      print_human(comparison, a_path, b_path);
    std::cout.flush();
    if (!std::cout) throw tessera::Error("cannot write to standard output");
  } catch (const std::bad_alloc&) {
    tessera::cli::print_error(kProgram, "out of memory");
    return 1;
  } catch (const std::exception& e) {
    return tessera::cli::fail(app, e);
  }
  return 0;
}
