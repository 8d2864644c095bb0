// tessera-worker --device null: every tile answered at once with the same fixed image, so a master
// can be load-tested with many workers on one host (deploy/scale-bench).
#include <gtest/gtest.h>

#include "cluster_test_support.h"
#include "common/image/png_io.h"
#include "test_helpers.h"
#include "worker/render/null_tile_renderer.h"

namespace tessera {
namespace {

using testing::TempDir;

TEST(NullDevice, AWorkerAnswersEveryTileWithTheFixedImage) {
  TempDir dir("null_device");
  const auto secret = dir / "secret", scenes = dir / "scenes";
  testing::write_secret(secret, testing::kClusterSecret);
  std::filesystem::create_directories(scenes);
  std::filesystem::copy_file(testing::cornell_tpk(), scenes / "cornell.tpk");
  testing::WorkerProcess a(dir.path(), "a", scenes, secret, {"--device", "null"});
  testing::WorkerProcess b(dir.path(), "b", scenes, secret, {"--device", "null"});
  ASSERT_FALSE(a.address().empty()) << a.log();
  ASSERT_FALSE(b.address().empty()) << b.log();
  const auto r = testing::run_command("timeout 60 " + testing::master_binary().string() + " --workers " + a.address() + "," +
                                      b.address() + " --scene " + testing::cornell_tpk().string() + " --secret-file " +
                                      secret.string() + " --no-status --size 96x64 --tile 16 --frames 3 --poses orbit --out " +
                                      (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.output << a.log();
  for (const char* name : {"frame_000000.png", "frame_000002.png"}) {
    const ImageRgba8 frame = read_image(dir / "out" / name);
    ASSERT_EQ(frame.width(), 96);
    ASSERT_EQ(frame.height(), 64);
    size_t wrong = 0;
    for (uint32_t y = 0; y < 64; ++y)
      for (uint32_t x = 0; x < 96; ++x) {
        const uint32_t expected = null_device_pixel(x, y, 96, 64);
        const uint8_t* p = frame.pixels().data() + 4 * (size_t(y) * 96 + x);
        wrong += p[0] != (expected & 0xFF) || p[1] != ((expected >> 8) & 0xFF) || p[2] != ((expected >> 16) & 0xFF);
      }
    EXPECT_EQ(wrong, 0u) << name;  // the same picture whatever the pose
  }
  EXPECT_NE(a.log().find("null"), std::string::npos) << a.log();
}

TEST(NullDevice, TheFixedImageIsAGradientAndTheDepthACoveredMiddle) {
  NullTileRenderer renderer;
  CameraParams camera{};
  camera.width = 64;
  camera.height = 32;
  std::vector<uint32_t> tile(8 * 4);
  renderer.render_raytrace(camera, RenderSettings{}, {56, 28, 8, 4}, tile);
  EXPECT_EQ(tile.back(), null_device_pixel(63, 31, 64, 32));
  EXPECT_EQ(tile.back() & 0xFFFFFFu, 0x80FFFFu);  // the far corner: full red and green
  std::vector<uint32_t> aux(8 * 4, 0);
  const BatchTile batch{{0, 0, 8, 4}, 0, 0};
  renderer.render_aux_batch({camera, camera}, RenderSettings{}, AuxSettings{}, {&batch, 1}, aux, {});
  EXPECT_EQ(aux[0], 0x00FF8000u);  // inverse depth 0x8000, alpha 255
}

}  // namespace
}  // namespace tessera
