// Live frames as JPEG bands (master/live/jpeg_bands.h): how a frame is cut, that banded encoding
// and parallel decoding reassemble the frame, that 16-row-aligned bands carry exactly the whole
// JPEG's coefficients, and the frame message's band table.
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <cmath>
#include <cstdlib>
#include <random>

#include "common/base/error.h"
#include "common/image/metrics.h"
#include "master/live/frame_message.h"
#include "master/live/jpeg_bands.h"
#include "master/live/jpeg_codec.h"

namespace tessera {
namespace {

using namespace master::live;
using nlohmann::json;

// Smooth gradients, hard edges and noise: every DCT band and chroma detail in play.
ImageRgba8 test_frame(int width, int height, unsigned seed = 7) {
  ImageRgba8 image(width, height);
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> noise(-12, 12);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const bool square = ((x / 24) + (y / 20)) % 2 == 0;
      auto clamp = [](int v) { return uint8_t(std::clamp(v, 0, 255)); };
      image.set(x, y,
                {clamp(x * 255 / width + noise(random)), clamp(square ? 220 : 40 + y * 100 / height), clamp((x ^ y) & 0xff), 255});
    }
  return image;
}

// What one decode per band, placed at its rows, gives: the reference for the parallel decoder.
ImageRgba8 decode_band_by_band(const std::vector<JpegBand>& bands, int width, int height) {
  ImageRgba8 image(width, height);
  for (const auto& b : bands) {
    const ImageRgba8 band = decode_jpeg(b.jpeg);
    EXPECT_EQ(band.width(), width);
    EXPECT_EQ(band.height(), b.height);
    for (int y = 0; y < b.height; ++y) std::copy_n(band.row(y), size_t(width) * 4, image.row(b.y + y));
  }
  return image;
}

// A frame message by hand: the length field, `header_text`, `payload`.
std::string framed(const std::string& header_text, const std::string& payload = "") {
  std::string m;
  for (int i = 0; i < 4; ++i) m += char((header_text.size() >> (8 * i)) & 0xff);
  return m + header_text + payload;
}

struct Planes {
  std::vector<uint8_t> y, cb, cr;
};
// The JPEG's decoded samples before chroma upsampling and colour conversion.
Planes yuv_planes(const std::string& jpeg) {
  tjhandle handle = tjInitDecompress();
  int width = 0, height = 0, subsampling = 0, colourspace = 0;
  auto* data = reinterpret_cast<const unsigned char*>(jpeg.data());
  EXPECT_EQ(tjDecompressHeader3(handle, data, jpeg.size(), &width, &height, &subsampling, &colourspace), 0);
  EXPECT_EQ(subsampling, TJSAMP_420);
  Planes p;
  p.y.resize(size_t(width) * size_t(height));
  const size_t chroma = size_t(tjPlaneWidth(1, width, TJSAMP_420)) * size_t(tjPlaneHeight(1, height, TJSAMP_420));
  p.cb.resize(chroma);
  p.cr.resize(chroma);
  unsigned char* planes[] = {p.y.data(), p.cb.data(), p.cr.data()};
  EXPECT_EQ(tjDecompressToYUVPlanes(handle, data, jpeg.size(), planes, width, nullptr, height, 0), 0) << tjGetErrorStr2(handle);
  tjDestroy(handle);
  return p;
}

ImageRgba8 decode_fast_upsampling(const std::string& jpeg, int width, int height) {
  tjhandle handle = tjInitDecompress();
  ImageRgba8 image(width, height);
  EXPECT_EQ(tjDecompress2(handle, reinterpret_cast<const unsigned char*>(jpeg.data()), jpeg.size(), image.pixels().data(), width, 0, height,
                          TJPF_RGBA, TJFLAG_FASTUPSAMPLE),
            0);
  tjDestroy(handle);
  return image;
}

TEST(JpegBands, PlanCutsAlignedBandsOfAtLeast128Rows) {
  EXPECT_EQ(plan_jpeg_bands(1024, 16), (std::vector<BandRows>{{0, 128}, {128, 128}, {256, 128}, {384, 128}, {512, 128}, {640, 128},
                                                               {768, 128}, {896, 128}}));
  EXPECT_EQ(plan_jpeg_bands(1024, 2), (std::vector<BandRows>{{0, 512}, {512, 512}}));
  EXPECT_EQ(plan_jpeg_bands(1024, 1), (std::vector<BandRows>{{0, 1024}}));
  EXPECT_EQ(plan_jpeg_bands(100, 16), (std::vector<BandRows>{{0, 100}}));
  EXPECT_EQ(plan_jpeg_bands(1, 16), (std::vector<BandRows>{{0, 1}}));
  EXPECT_TRUE(plan_jpeg_bands(0, 16).empty());
  EXPECT_EQ(plan_jpeg_bands(1000, 16), (std::vector<BandRows>{{0, 144}, {144, 144}, {288, 144}, {432, 144}, {576, 144}, {720, 144},
                                                               {864, 136}}));
  for (int height = 1; height <= 2100; height += 7)
    for (unsigned most : {0u, 1u, 2u, 3u, 5u, 16u, 64u}) {
      const auto bands = plan_jpeg_bands(height, most);
      ASSERT_FALSE(bands.empty());
      ASSERT_LE(bands.size(), size_t(std::max(1u, most)));
      int next = 0;
      for (size_t i = 0; i < bands.size(); ++i) {
        EXPECT_EQ(bands[i].y, next);
        EXPECT_GT(bands[i].height, 0);
        if (i + 1 < bands.size()) {
          EXPECT_EQ(bands[i].height % kJpegBandAlign, 0) << height << " rows, band " << i;
        }
        if (bands.size() > 1) {
          EXPECT_GE(bands[i].height, std::min(kJpegBandMinRows, height)) << height << " rows, band " << i;
        }
        next += bands[i].height;
      }
      EXPECT_EQ(next, height);
    }
}

// Odd widths and heights (the last band a partial MCU row), several bands and one.
TEST(JpegBands, BandsReassembleToTheFrameOfTheirOwnDecodes) {
  for (const auto& [width, height, threads] : std::vector<std::tuple<int, int, unsigned>>{{333, 397, 4}, {64, 1001, 8}, {250, 130, 4}, {96, 40, 4}}) {
    SCOPED_TRACE(std::to_string(width) + "x" + std::to_string(height));
    const ImageRgba8 frame = test_frame(width, height);
    BandedJpegEncoder encoder(90, threads);
    const auto bands = encoder.encode(frame);
    EXPECT_EQ(bands.size(), plan_jpeg_bands(height, threads).size());
    const ImageRgba8 decoded = BandedJpegDecoder(3).decode(bands, width, height);
    EXPECT_EQ(decoded, decode_band_by_band(bands, width, height));
    EXPECT_GT(psnr_rgb(decoded, frame), 28.0);
    EXPECT_EQ(BandedJpegDecoder(1).decode(bands, width, height), decoded);  // no pool: the same frame
  }
}

TEST(JpegBands, OneBandIsTheWholeFramesJpeg) {
  const ImageRgba8 frame = test_frame(300, 200);
  JpegEncoder whole(85);
  const std::string jpeg = whole.encode(frame);
  for (unsigned threads : {1u, 16u}) {  // 200 rows: one band however many threads
    const auto bands = BandedJpegEncoder(85, threads).encode(frame);
    ASSERT_EQ(bands.size(), 1u);
    EXPECT_EQ(bands[0].y, 0);
    EXPECT_EQ(bands[0].height, 200);
    EXPECT_EQ(bands[0].jpeg, jpeg);
  }
}

// Bands that start on multiples of 16 rows hold exactly the whole JPEG's blocks: the decoded Y, Cb
// and Cr samples are identical, and so is the image a decoder makes without smoothing chroma
// across rows. A decoder's default "fancy" upsampling interpolates chroma from the neighbouring
// chroma row, which at a band's edge is the band's own (edge replicated) instead of the next
// band's: only the one image row either side of a band edge can differ, and only a little.
TEST(JpegBands, AlignedBandsCarryTheWholeFramesCoefficients) {
  const int width = 512, height = 512;
  const ImageRgba8 frame = test_frame(width, height, 11);
  JpegEncoder whole_encoder(85);
  const std::string whole = whole_encoder.encode(frame);
  const auto bands = BandedJpegEncoder(85, 4).encode(frame);
  ASSERT_EQ(bands.size(), 4u);

  const Planes w = yuv_planes(whole);
  Planes joined;
  for (const auto& b : bands) {
    const Planes p = yuv_planes(b.jpeg);
    joined.y.insert(joined.y.end(), p.y.begin(), p.y.end());
    joined.cb.insert(joined.cb.end(), p.cb.begin(), p.cb.end());
    joined.cr.insert(joined.cr.end(), p.cr.begin(), p.cr.end());
  }
  EXPECT_TRUE(joined.y == w.y);
  EXPECT_TRUE(joined.cb == w.cb);
  EXPECT_TRUE(joined.cr == w.cr);

  ImageRgba8 fast_banded(width, height);
  for (const auto& b : bands) {
    const ImageRgba8 band = decode_fast_upsampling(b.jpeg, width, b.height);
    for (int y = 0; y < b.height; ++y) std::copy_n(band.row(y), size_t(width) * 4, fast_banded.row(b.y + y));
  }
  EXPECT_EQ(fast_banded, decode_fast_upsampling(whole, width, height));

  const ImageRgba8 banded = BandedJpegDecoder().decode(bands, width, height), one = decode_jpeg(whole);
  int worst = 0;
  for (int y = 0; y < height; ++y) {
    bool at_edge = false;
    for (const auto& b : bands)
      if (b.y > 0 && (y == b.y - 1 || y == b.y)) at_edge = true;
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < 3; ++c) {
        const int d = std::abs(int(banded.row(y)[x * 4 + c]) - int(one.row(y)[x * 4 + c]));
        if (!at_edge) {
          ASSERT_EQ(d, 0) << "row " << y << " is no band edge's, x " << x;
        }
        worst = std::max(worst, d);
      }
  }
  // The edge row's chroma weighs the next chroma row by 1/4: at most a quarter of a full-range chroma
  // step, times 1.772 (Cb -> B), plus rounding. This frame's blue channel is pure chroma noise, the
  // worst case (58 here); tessera-jpeg-bench reports it for rendered frames.
  EXPECT_GT(worst, 0) << "no chroma smoothing across the band edges: the test frame lost its chroma detail";
  EXPECT_LE(worst, 114);
}

TEST(JpegBands, LayoutsThatDoNotTileTheFrameAreRefused) {
  const ImageRgba8 frame = test_frame(64, 300);
  auto bands = BandedJpegEncoder(80, 2).encode(frame);
  ASSERT_EQ(bands.size(), 2u);
  BandedJpegDecoder decoder(2);
  EXPECT_THROW(decoder.decode(bands, 64, 301), Error);  // a row short
  EXPECT_THROW(decoder.decode(bands, 80, 300), Error);  // another width
  auto swapped = bands;
  std::swap(swapped[0], swapped[1]);
  EXPECT_THROW(decoder.decode(swapped, 64, 300), Error);
  auto lying = bands;
  lying[0].height -= 16;  // declared rows the JPEG does not have
  lying[1].y -= 16;
  lying[1].height += 16;
  EXPECT_THROW(decoder.decode(lying, 64, 300), Error);
  auto broken = bands;
  broken[1].jpeg = "not a jpeg";
  EXPECT_THROW(decoder.decode(broken, 64, 300), Error);
  EXPECT_THROW(decoder.decode({}, 64, 300), Error);
}

TEST(JpegBands, FrameMessageCarriesTheBandTable) {
  const ImageRgba8 frame = test_frame(64, 300);
  const auto bands = BandedJpegEncoder(80, 2).encode(frame);
  const json header = {{"type", "frame"}, {"frame", 9}, {"eyes", 2}, {"width", 32}, {"height", 300}};
  const std::string message = pack_frame_message(header, bands);
  const FrameMessage unpacked = unpack_frame_message(message);
  EXPECT_EQ(unpacked.header["format"], kFrameFormat);
  ASSERT_EQ(unpacked.header["bands"].size(), 2u);
  EXPECT_EQ(unpacked.header["bands"][1], json({{"y", bands[1].y}, {"height", bands[1].height}, {"bytes", bands[1].jpeg.size()}}));
  EXPECT_EQ(unpacked.bands, bands);
  EXPECT_EQ(unpacked.image_width(), 64);
  EXPECT_EQ(unpacked.image_height(), 300);

  // Format 1 (no table): the bytes after the header are one JPEG of the whole frame.
  const FrameMessage one = unpack_frame_message(framed(header.dump(), bands[0].jpeg));
  ASSERT_EQ(one.bands.size(), 1u);
  EXPECT_EQ(one.bands[0].height, 300);
  EXPECT_EQ(one.bands[0].jpeg, bands[0].jpeg);

  EXPECT_THROW(unpack_frame_message(message.substr(0, message.size() - 1)), Error);  // bands run past the end
  EXPECT_THROW(unpack_frame_message(message + "x"), Error);                          // bytes after the last band
  json bad = unpacked.header;  // the table as packed reads back by hand; then broken ones
  EXPECT_EQ(unpack_frame_message(framed(bad.dump(), bands[0].jpeg + bands[1].jpeg)).bands, bands);
  bad["bands"] = {{{"y", 0}, {"height", 150}, {"bytes", bands[0].jpeg.size()}}, {{"y", 160}, {"height", 140}, {"bytes", bands[1].jpeg.size()}}};
  EXPECT_THROW(unpack_frame_message(framed(bad.dump(), bands[0].jpeg + bands[1].jpeg)), Error);  // a gap between the bands
  bad["bands"] = json::array();
  EXPECT_THROW(unpack_frame_message(framed(bad.dump())), Error);
  bad["bands"] = {{{"y", -1}, {"height", 300}, {"bytes", 0}}};
  EXPECT_THROW(unpack_frame_message(framed(bad.dump())), Error);
}

}  // namespace
}  // namespace tessera
