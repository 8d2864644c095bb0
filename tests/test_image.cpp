#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <stb/stb_image_write.h>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/image/image.h"
#include "common/image/metrics.h"
#include "common/image/png_io.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

// Fresh folder per test and process: ctest may run tests in parallel.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / ("tessera_test_image_" + name + "_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// Deterministic, library-independent pseudo-random numbers.
uint32_t mix(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

// Smooth gradients plus some structure, so SSIM has something to measure.
ImageRgba8 test_pattern(int w, int h) {
  ImageRgba8 image(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      image.set(x, y,
                {uint8_t(40 + x * 150 / std::max(1, w - 1)), uint8_t(60 + y * 120 / std::max(1, h - 1)),
                 uint8_t(((x / 4 + y / 4) % 2) ? 200 : 50), 255});
  return image;
}

ImageRgba8 random_image(int w, int h, uint32_t seed) {
  ImageRgba8 image(w, h);
  auto px = image.pixels();
  for (size_t i = 0; i < px.size(); ++i) px[i] = uint8_t(mix(uint32_t(i) * 2654435761U + seed));
  return image;
}

// Adds the same noise pattern scaled by `amplitude` to R, G, B (clamped).
ImageRgba8 with_noise(const ImageRgba8& image, double amplitude) {
  ImageRgba8 out = image;
  auto px = out.pixels();
  for (size_t i = 0; i < px.size(); ++i) {
    if (i % 4 == 3) continue;
    const double unit = mix(uint32_t(i) + 12345U) / 4294967295.0 * 2.0 - 1.0;
    px[i] = uint8_t(std::clamp(std::lround(px[i] + amplitude * unit), 0L, 255L));
  }
  return out;
}

// SSIM straight from the definition: every window position, 2D weights, no streaming.
double direct_ssim(const ImageRgba8& a, const ImageRgba8& b, int channel) {
  const int w = a.width(), h = a.height();
  const int kw = std::min(11, w), kh = std::min(11, h);
  std::vector<double> weights(size_t(kw * kh));
  double sum = 0;
  for (int j = 0; j < kh; ++j)
    for (int i = 0; i < kw; ++i) {
      const double dx = i - (kw - 1) / 2.0, dy = j - (kh - 1) / 2.0;
      sum += weights[size_t(j * kw + i)] = std::exp(-(dx * dx + dy * dy) / (2 * 1.5 * 1.5));
    }
  const double c1 = std::pow(0.01 * 255, 2), c2 = std::pow(0.03 * 255, 2);
  double total = 0;
  int count = 0;
  for (int y0 = 0; y0 + kh <= h; ++y0)
    for (int x0 = 0; x0 + kw <= w; ++x0) {
      double mx = 0, my = 0;
      for (int j = 0; j < kh; ++j)
        for (int i = 0; i < kw; ++i) {
          const double wt = weights[size_t(j * kw + i)] / sum;
          mx += wt * a.row(y0 + j)[(x0 + i) * 4 + channel];
          my += wt * b.row(y0 + j)[(x0 + i) * 4 + channel];
        }
      double vx = 0, vy = 0, cxy = 0;
      for (int j = 0; j < kh; ++j)
        for (int i = 0; i < kw; ++i) {
          const double wt = weights[size_t(j * kw + i)] / sum;
          const double dx = a.row(y0 + j)[(x0 + i) * 4 + channel] - mx;
          const double dy = b.row(y0 + j)[(x0 + i) * 4 + channel] - my;
          vx += wt * dx * dx;
          vy += wt * dy * dy;
          cxy += wt * dx * dy;
        }
      total += (2 * mx * my + c1) * (2 * cxy + c2) / ((mx * mx + my * my + c1) * (vx + vy + c2));
      ++count;
    }
  return total / count;
}

TEST(ImageMetrics, IdenticalImagesHaveInfinitePsnrAndUnitSsim) {
  const ImageRgba8 a = test_pattern(40, 30);
  EXPECT_EQ(mse_rgb(a, a), 0.0);
  EXPECT_TRUE(std::isinf(psnr_rgb(a, a)));
  EXPECT_GT(psnr_rgb(a, a), 0);
  EXPECT_DOUBLE_EQ(ssim_luma(a, a), 1.0);
  for (double s : ssim_per_channel(a, a)) EXPECT_DOUBLE_EQ(s, 1.0);
  const ImageComparison c = compare_images(a, a);
  EXPECT_EQ(c.diff.max_abs_diff, 0);
  EXPECT_EQ(c.diff.pixels_over_threshold, 0u);
  EXPECT_TRUE(to_json(c)["psnr"].is_null());
  EXPECT_EQ(to_json(c)["identical"], true);
}

TEST(ImageMetrics, KnownMseAndPsnrForConstantOffset) {
  const ImageRgba8 a(16, 8, {10, 20, 30, 255});
  const ImageRgba8 b(16, 8, {13, 20, 26, 0});  // alpha differs: must not count
  EXPECT_DOUBLE_EQ(mse_rgb(a, b), 25.0 / 3.0);  // (3^2 + 0 + 4^2) / 3 channels
  EXPECT_NEAR(psnr_rgb(a, b), 10 * std::log10(255.0 * 255.0 * 3.0 / 25.0), 1e-12);
  EXPECT_NEAR(psnr_from_mse(255.0 * 255.0 / 100.0), 20.0, 1e-12);
  const DiffStats d = diff_stats(a, b, 3);
  EXPECT_EQ(d.max_abs_diff, 4);
  EXPECT_EQ(d.pixels_over_threshold, 128u);
  EXPECT_DOUBLE_EQ(d.fraction_over_threshold, 1.0);
  EXPECT_EQ(diff_stats(a, b, 4).pixels_over_threshold, 0u);
}

TEST(ImageMetrics, SsimOfFlatImagesMatchesClosedForm) {
  // No variance: only the luminance term (2 mu_x mu_y + C1) / (mu_x^2 + mu_y^2 + C1) remains.
  const ImageRgba8 a(20, 20, {100, 100, 100, 255}), b(20, 20, {150, 150, 150, 255});
  const double c1 = 6.5025;
  const double expected = (2 * 100.0 * 150.0 + c1) / (100.0 * 100.0 + 150.0 * 150.0 + c1);
  EXPECT_NEAR(ssim_per_channel(a, b)[0], expected, 1e-9);
  EXPECT_NEAR(ssim_luma(a, b), expected, 1e-6);  // luma of grey is the grey value
}

TEST(ImageMetrics, SsimMatchesDirectDefinition) {
  for (auto [w, h] : {std::pair{23, 19}, std::pair{11, 11}, std::pair{7, 5}, std::pair{30, 8}}) {
    const ImageRgba8 a = random_image(w, h, 1), b = with_noise(test_pattern(w, h), 40);
    const auto fast = ssim_per_channel(a, b);
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(fast[size_t(c)], direct_ssim(a, b, c), 1e-9) << w << "x" << h << " c" << c;
  }
}

TEST(ImageMetrics, SsimDecreasesMonotonicallyWithNoise) {
  const ImageRgba8 clean = test_pattern(64, 48);
  double previous_luma = 1.0, previous_mse = 0.0;
  std::array<double, 3> previous_channels{1.0, 1.0, 1.0};
  for (double amplitude : {1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0}) {
    const ImageRgba8 noisy = with_noise(clean, amplitude);
    const double luma = ssim_luma(clean, noisy);
    EXPECT_LT(luma, previous_luma) << amplitude;
    EXPECT_GT(luma, 0.0);
    const auto channels = ssim_per_channel(clean, noisy);
    for (size_t c = 0; c < 3; ++c) EXPECT_LT(channels[c], previous_channels[c]) << amplitude;
    const double mse = mse_rgb(clean, noisy);
    EXPECT_GT(mse, previous_mse);
    previous_luma = luma;
    previous_channels = channels;
    previous_mse = mse;
  }
}

TEST(ImageMetrics, DifferentSizesAndBadArgumentsThrow) {
  const ImageRgba8 a(8, 8), b(8, 9), empty;
  EXPECT_THROW(mse_rgb(a, b), Error);
  EXPECT_THROW(ssim_luma(a, b), Error);
  EXPECT_THROW(compare_images(a, b), Error);
  EXPECT_THROW(mse_rgb(empty, empty), Error);
  EXPECT_THROW(diff_stats(a, a, 256), Error);
  EXPECT_THROW(difference_image(a, a, 0), Error);
  try {
    mse_rgb(a, b);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("8x8 vs 8x9"), std::string::npos) << e.what();
  }
}

TEST(ImageMetrics, DifferenceImageAmplifies) {
  const ImageRgba8 a(3, 1, {100, 100, 100, 255});
  ImageRgba8 b = a;
  b.set(1, 0, {103, 90, 100, 7});
  const ImageRgba8 d = difference_image(a, b, 10);
  EXPECT_EQ(d.at(0, 0), (Rgba8{0, 0, 0, 255}));
  EXPECT_EQ(d.at(1, 0), (Rgba8{30, 100, 0, 255}));
  EXPECT_EQ(difference_image(a, b, 100).at(1, 0), (Rgba8{255, 255, 0, 255}));
}

TEST(ImageMetrics, SsimIsFastOnMegapixel) {
  const ImageRgba8 a = random_image(1024, 1024, 7), b = with_noise(a, 10);
  const auto start = std::chrono::steady_clock::now();
  const double s = ssim_luma(a, b);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RecordProperty("ssim_1024_seconds", std::to_string(seconds));
  EXPECT_GT(s, 0.5);
  EXPECT_LT(seconds, 1.0);
}

TEST(PngIo, WriteReadRoundTrip) {
  TempDir dir("roundtrip");
  const ImageRgba8 image = random_image(37, 21, 3);  // random alpha too
  write_png(dir.path / "a.png", image);
  EXPECT_EQ(read_image(dir.path / "a.png"), image);
  EXPECT_EQ(decode_image(encode_png(image), "memory"), image);
}

TEST(PngIo, RgbAndJpegFilesDecodeToOpaqueRgba) {
  TempDir dir("formats");
  const std::vector<uint8_t> rgb = {255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30};
  ASSERT_TRUE(stbi_write_png((dir.path / "rgb.png").c_str(), 2, 2, 3, rgb.data(), 6));
  const ImageRgba8 image = read_image(dir.path / "rgb.png");
  ASSERT_EQ(image.width(), 2);
  EXPECT_EQ(image.at(0, 0), (Rgba8{255, 0, 0, 255}));
  EXPECT_EQ(image.at(1, 1), (Rgba8{10, 20, 30, 255}));

  const ImageRgba8 flat(16, 16, {120, 130, 140, 255});
  std::vector<uint8_t> flat_rgb;
  for (size_t i = 0; i < flat.pixels().size(); ++i)
    if (i % 4 != 3) flat_rgb.push_back(flat.pixels()[i]);
  ASSERT_TRUE(stbi_write_jpg((dir.path / "flat.jpg").c_str(), 16, 16, 3, flat_rgb.data(), 95));
  const ImageRgba8 jpeg = read_image(dir.path / "flat.jpg");
  EXPECT_LE(diff_stats(flat, jpeg).max_abs_diff, 3);
}

TEST(PngIo, UnwritablePathThrowsAndLeavesNothing) {
  TempDir dir("unwritable");
  const ImageRgba8 image(4, 4);
  EXPECT_THROW(write_png(dir.path / "missing_folder" / "a.png", image), Error);
  fs::create_directories(dir.path / "taken");  // a folder where the file should go
  EXPECT_THROW(write_png(dir.path / "taken", image), Error);
  EXPECT_THROW(write_png(dir.path / "empty.png", ImageRgba8()), Error);
  std::vector<fs::path> left;
  for (const auto& entry : fs::recursive_directory_iterator(dir.path)) left.push_back(entry.path());
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0], dir.path / "taken");
  EXPECT_TRUE(fs::is_empty(dir.path / "taken"));
}

TEST(PngIo, NonImageAndMissingFilesThrowWithTheFileName) {
  TempDir dir("nonimage");
  const fs::path text = dir.path / "notes.txt";
  write_file_atomically(text, "not a picture", 13);
  const fs::path truncated = dir.path / "cut.png";
  const auto png = encode_png(ImageRgba8(8, 8));
  write_file_atomically(truncated, png.data(), png.size() / 2);
  const fs::path empty = dir.path / "empty.png";
  write_file_atomically(empty, "", 0);
  for (const fs::path& path : {text, truncated, empty, dir.path / "absent.png", dir.path}) {
    try {
      read_image(path);
      ADD_FAILURE() << "no error for " << path;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  }
}

TEST(ImageOps, CompositeTileWritesExactlyTheTile) {
  const Rgba8 background{1, 2, 3, 4};
  ImageRgba8 frame(10, 8, background);
  ImageRgba8 tile(3, 2);
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x) tile.set(x, y, {uint8_t(100 + x), uint8_t(200 + y), 7, 255});
  composite_tile(frame, 7, 6, tile);  // touches the bottom-right corner exactly
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 10; ++x) {
      const bool inside = x >= 7 && y >= 6;
      EXPECT_EQ(frame.at(x, y), inside ? tile.at(x - 7, y - 6) : background) << x << "," << y;
    }
  EXPECT_EQ(extract_tile(frame, 7, 6, 3, 2), tile);

  const ImageRgba8 before = frame;
  EXPECT_THROW(composite_tile(frame, 8, 6, tile), Error);
  EXPECT_THROW(composite_tile(frame, 7, 7, tile), Error);
  EXPECT_THROW(composite_tile(frame, -1, 0, tile), Error);
  EXPECT_THROW(composite_tile(frame, std::numeric_limits<int>::max(), 0, tile), Error);
  EXPECT_THROW(composite_tile(frame, 0, 0, 3, 2, std::span<const uint8_t>(tile.pixels()).first(23)), Error);
  EXPECT_THROW(extract_tile(frame, 8, 0, 3, 2), Error);
  EXPECT_EQ(frame, before);
}

TEST(ImageOps, SrgbRoundTripsEveryCode) {
  for (int v = 0; v < 256; ++v) {
    EXPECT_EQ(linear_to_srgb8(srgb8_to_linear(uint8_t(v))), v);
    EXPECT_NEAR(linear_to_srgb(srgb_to_linear(v / 255.0)), v / 255.0, 1e-12);
    if (v > 0) {
      EXPECT_GT(srgb8_to_linear(uint8_t(v)), srgb8_to_linear(uint8_t(v - 1)));
    }
  }
  EXPECT_EQ(srgb_to_linear(0.0), 0.0);
  EXPECT_EQ(srgb_to_linear(1.0), 1.0);
  EXPECT_NEAR(srgb_to_linear(0.5), 0.21404114048223255, 1e-12);
  EXPECT_NEAR(srgb_to_linear(0.04045), 0.04045 / 12.92, 1e-15);
  EXPECT_EQ(linear_to_srgb8(-1.0f), 0);
  EXPECT_EQ(linear_to_srgb8(2.0f), 255);
  EXPECT_EQ(linear_to_srgb8(std::numeric_limits<float>::quiet_NaN()), 0);

  const ImageRgba8 image = random_image(9, 7, 5);
  ImageRgba8 opaque = image;
  for (size_t i = 3; i < opaque.pixels().size(); i += 4) opaque.pixels()[i] = 255;
  EXPECT_EQ(to_srgb8(to_linear(image)), opaque);
}

// ---- tessera-compare, run as a program ----

struct RunResult {
  int exit_code = -1;
  std::string out, err;
};

std::string quoted(const std::string& s) { return "'" + s + "'"; }

RunResult run_compare(const std::string& args, const fs::path& dir) {
  const std::string binary = TESSERA_BINARY_DIR "/master/tessera-compare";
  const fs::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  const int status =
      std::system((quoted(binary) + " " + args + " >" + quoted(out) + " 2>" + quoted(err)).c_str());
  RunResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = read_file_text(out);
  result.err = read_file_text(err);
  fs::remove(out);
  fs::remove(err);
  return result;
}

TEST(CompareTool, JsonOutputAndDiffImage) {
  TempDir dir("compare_json");
  const ImageRgba8 a = test_pattern(32, 24), b = with_noise(a, 6);
  write_png(dir.path / "a.png", a);
  write_png(dir.path / "b.png", b);
  const RunResult r = run_compare(quoted((dir.path / "a.png").string()) + " " + quoted((dir.path / "b.png").string()) +
                                      " --json --threshold 2 --diff-gain 10 --diff " + quoted((dir.path / "d.png").string()),
                                  dir.path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const nlohmann::json j = nlohmann::json::parse(r.out);
  for (const char* key : {"mse", "psnr", "ssim", "ssim_per_channel", "max_abs_diff", "pixels_over_threshold",
                          "fraction_over_threshold", "width", "height"})
    EXPECT_TRUE(j.contains(key)) << key;
  const ImageComparison expected = compare_images(a, b, 2);
  EXPECT_EQ(j["width"], 32);
  EXPECT_EQ(j["height"], 24);
  EXPECT_DOUBLE_EQ(j["mse"].get<double>(), expected.mse);
  EXPECT_DOUBLE_EQ(j["psnr"].get<double>(), expected.psnr);
  EXPECT_DOUBLE_EQ(j["ssim"].get<double>(), expected.ssim);
  EXPECT_DOUBLE_EQ(j["ssim_per_channel"]["g"].get<double>(), expected.ssim_per_channel[1]);
  EXPECT_EQ(j["max_abs_diff"], expected.diff.max_abs_diff);
  EXPECT_EQ(j["pixels_over_threshold"], expected.diff.pixels_over_threshold);
  EXPECT_EQ(read_image(dir.path / "d.png"), difference_image(a, b, 10));

  const RunResult same = run_compare(quoted((dir.path / "a.png").string()) + " " +
                                         quoted((dir.path / "a.png").string()) + " --json",
                                     dir.path);
  ASSERT_EQ(same.exit_code, 0) << same.err;
  const nlohmann::json k = nlohmann::json::parse(same.out);
  EXPECT_TRUE(k["psnr"].is_null());
  EXPECT_EQ(k["identical"], true);
  EXPECT_EQ(k["ssim"], 1.0);

  const RunResult human = run_compare(quoted((dir.path / "a.png").string()) + " " +
                                          quoted((dir.path / "b.png").string()),
                                      dir.path);
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_NE(human.out.find("PSNR"), std::string::npos);
  EXPECT_NE(human.out.find("SSIM"), std::string::npos);
}

TEST(CompareTool, CropComparesOnlyTheRectangle) {
  TempDir dir("compare_crop");
  // Equal inside the rectangle (8..23, 4..19), different everywhere around it.
  const ImageRgba8 a = test_pattern(32, 24);
  ImageRgba8 b = with_noise(a, 40);
  composite_tile(b, 8, 4, extract_tile(a, 8, 4, 16, 16));
  write_png(dir.path / "a.png", a);
  write_png(dir.path / "b.png", b);
  const std::string args = quoted((dir.path / "a.png").string()) + " " + quoted((dir.path / "b.png").string()) + " --json";
  const RunResult whole = run_compare(args, dir.path);
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_EQ(nlohmann::json::parse(whole.out)["identical"], false);
  const RunResult inside = run_compare(args + " --crop 8,4,16,16", dir.path);
  ASSERT_EQ(inside.exit_code, 0) << inside.err;
  const nlohmann::json j = nlohmann::json::parse(inside.out);
  EXPECT_EQ(j["identical"], true);
  EXPECT_EQ(j["width"], 16);
  EXPECT_EQ(j["height"], 16);
  const RunResult shifted = run_compare(args + " --crop 7,4,16,16", dir.path);
  ASSERT_EQ(shifted.exit_code, 0) << shifted.err;
  EXPECT_EQ(nlohmann::json::parse(shifted.out)["identical"], false);
}

TEST(CompareTool, BadInputGivesOneErrorLineAndNoOutputFile) {
  TempDir dir("compare_errors");
  write_png(dir.path / "a.png", test_pattern(8, 8));
  write_png(dir.path / "small.png", test_pattern(4, 8));
  const std::string a = quoted((dir.path / "a.png").string());
  const std::string diff = " --diff " + quoted((dir.path / "d.png").string());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {a + " " + quoted((dir.path / "missing.png").string()) + diff, "missing.png"},
      {a + " " + quoted((dir.path / "small.png").string()) + diff, "differ in size"},
      {a + " " + a + " --threshold 999", "threshold"},
      {a + " " + a + " --no-such-flag", "no-such-flag"},
      {a, "B is required"},
      {a + " " + a + " --crop 4,4,5,4", "does not lie inside"},
      {a + " " + a + " --crop 1,2,3", "bad --crop"},
      {a + " " + a + " --crop 0,0,0,4", "bad --crop"},
  };
  for (const auto& [args, needle] : cases) {
    const RunResult r = run_compare(args, dir.path);
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_EQ(r.out, "") << args;
    ASSERT_FALSE(r.err.empty()) << args;
    EXPECT_EQ(r.err.rfind("tessera-compare: error: ", 0), 0u) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "more than one line: " << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir.path / "d.png"));
}

TEST(Image, Srgb8EncodingTableMatchesTheCurveExactly) {
  // linear_to_srgb8 searches a threshold table; it must round exactly like the curve itself.
  for (int k = 0; k <= 200000; ++k) {
    const float x = std::ldexp(float(k % 1000 + 1000) / 2000.0f, -(k / 1000) % 24) * 1.02f;
    const double curve = linear_to_srgb(double(x)) * 255.0;
    ASSERT_EQ(int(linear_to_srgb8(x)), int(std::lround(curve))) << "x = " << x;
  }
  EXPECT_EQ(linear_to_srgb8(std::numeric_limits<float>::infinity()), 255);
  EXPECT_EQ(linear_to_srgb8(std::numeric_limits<float>::denorm_min()), 0);
}

}  // namespace
}  // namespace tessera
