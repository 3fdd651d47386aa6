// The processors' size arithmetic against what transformers' Idefics3 and Gemma 3
// processors compute (worked by hand from their Python), and ProcessImage within the
// scratch it plans. tests/oracles/image_oracle.py checks the pixels against Pillow.
#include "runtime/vision/image_processor.h"

#include <gtest/gtest.h>

#include <vector>

namespace ember {
namespace {

ImageProcessorConfig SmolVlm() {
  ImageProcessorConfig c;
  c.layout = ImageLayout::kSplitTiles;
  c.longest_edge = 2048;
  c.tile_size = 512;
  c.resample = ResampleFilter::kLanczos;
  return c;
}

TEST(ImageProcessor, FixedIsOneTile) {
  ImageProcessorConfig c;
  c.height = c.width = 896;
  Result<ImageGrid> g = PlanImageGrid(c, 640, 480);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->tiles, 1);
  EXPECT_EQ(g->tile_width, 896);
  EXPECT_EQ(MaxImageTiles(c, ImageLimits()), 1);
}

TEST(ImageProcessor, SplitGridsAsIdefics3Computes) {
  struct Case {
    int w, h;
    int resized_w, resized_h, split_w, split_h, rows, cols;
  };
  const Case cases[] = {
      // 640x480: the longest edge to 2048, 1536 high; whole tiles already: 3 x 4.
      {640, 480, 2048, 1536, 2048, 1536, 3, 4},
      // 100x50 upscaled to 2048x1024: 2 x 4.
      {100, 50, 2048, 1024, 2048, 1024, 2, 4},
      // 30x1000: 2048 high, int(2048 * 0.03) = 61 made even: 62; then 62 to 512: 4 x 1.
      {30, 1000, 62, 2048, 512, 2048, 4, 1},
      // 1000x999: height int(2048 / (1000/999)) = 2045, made even: 2046, then 2048.
      {1000, 999, 2048, 2046, 2048, 2048, 4, 4},
  };
  for (const Case& k : cases) {
    Result<ImageGrid> g = PlanImageGrid(SmolVlm(), k.w, k.h);
    ASSERT_TRUE(g.ok()) << g.status().message();
    EXPECT_EQ(g->resized_width, k.resized_w) << k.w << "x" << k.h;
    EXPECT_EQ(g->resized_height, k.resized_h) << k.w << "x" << k.h;
    EXPECT_EQ(g->split_width, k.split_w) << k.w << "x" << k.h;
    EXPECT_EQ(g->split_height, k.split_h) << k.w << "x" << k.h;
    EXPECT_EQ(g->rows, k.rows) << k.w << "x" << k.h;
    EXPECT_EQ(g->cols, k.cols) << k.w << "x" << k.h;
    EXPECT_EQ(g->tiles, k.rows * k.cols + 1);
  }
  // Small enough for one tile: no split, no global view.
  ImageProcessorConfig one = SmolVlm();
  one.longest_edge = 512;
  Result<ImageGrid> g = PlanImageGrid(one, 300, 200);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->rows, 0);
  EXPECT_EQ(g->tiles, 1);
  EXPECT_EQ(g->split_height, 512);
}

TEST(ImageProcessor, MaxTilesBoundsEveryImage) {
  ImageLimits limits;
  ImageProcessorConfig odd = SmolVlm();  // an odd longest edge: a square grows by one
  odd.longest_edge = 1457;
  odd.tile_size = 364;
  for (const ImageProcessorConfig& c : {SmolVlm(), odd}) {
    const int most = MaxImageTiles(c, limits);
    for (int w = 1; w <= 8192; w = w * 3 + 1) {
      for (int h = 1; h <= 8192; h = h * 5 + 2) {
        for (int dh : {0, w - h}) {  // and the square
          Result<ImageGrid> g = PlanImageGrid(c, w, h + dh);
          ASSERT_TRUE(g.ok());
          ASSERT_LE(g->tiles, most) << w << "x" << h + dh;
          ASSERT_LE(g->resized_width, c.longest_edge + 1);
          ASSERT_LE(g->resized_height, c.longest_edge + 1);
        }
      }
    }
  }
}

TEST(ImageProcessor, ProcessesWithinThePlannedScratch) {
  ImageProcessorConfig c = SmolVlm();
  c.longest_edge = 96;
  c.tile_size = 32;
  c.resample = ResampleFilter::kBicubic;
  ImageLimits limits;
  limits.max_width = limits.max_height = 200;
  limits.max_pixels = 200 * 200;
  std::vector<uint8_t> scratch(ProcessScratchBytes(c, limits));
  const int tiles = MaxImageTiles(c, limits);
  std::vector<float> pixels(static_cast<size_t>(tiles) * 32 * 32 * 3);
  for (auto [w, h] : {std::pair{200, 200}, {1, 200}, {200, 1}, {1, 1}, {77, 150}}) {
    std::vector<uint8_t> rgb(static_cast<size_t>(w) * h * 3, 51);  // 0.2 after rescale
    ImageGrid grid;
    Status s = ProcessImage(c, RgbImage{rgb.data(), w, h}, scratch.data(), scratch.size(),
                            pixels.data(), pixels.size(), &grid);
    ASSERT_TRUE(s.ok()) << w << "x" << h << ": " << s.message();
    // A constant image stays constant through every resize: (0.2 - 0.5) / 0.5.
    const float want = (static_cast<float>(51.0 / 255.0) - 0.5f) / 0.5f;
    for (size_t i = 0; i < static_cast<size_t>(grid.tiles) * 32 * 32 * 3; ++i) {
      ASSERT_EQ(pixels[i], want) << i;
    }
  }
  ImageGrid grid;
  std::vector<uint8_t> rgb(200 * 200 * 3);
  EXPECT_EQ(ProcessImage(c, RgbImage{rgb.data(), 200, 200}, scratch.data(), 1000,
                         pixels.data(), pixels.size(), &grid)
                .code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(ProcessImage(c, RgbImage{rgb.data(), 200, 200}, scratch.data(),
                         scratch.size(), pixels.data(), 10, &grid)
                .code(),
            StatusCode::kResourceExhausted);
}

TEST(ImageProcessor, RefusesBadConfigs) {
  ImageProcessorConfig c;
  EXPECT_FALSE(ValidateImageProcessorConfig(c).ok());  // no size
  c.height = c.width = 16;
  c.std[1] = 0.0f;
  EXPECT_FALSE(ValidateImageProcessorConfig(c).ok());
  c.std[1] = 0.5f;
  EXPECT_TRUE(ValidateImageProcessorConfig(c).ok());
  EXPECT_FALSE(PlanImageGrid(c, 0, 5).ok());
}

}  // namespace
}  // namespace ember
