// Im2Patches against PyTorch (connector_test_data.h, written by
// tools/scripts/gen_vision_connector_data.py): the rows are F.unfold's exactly, and the
// rows times the conv weight are F.conv2d(stride = patch)'s patch embedding.
#include "runtime/vision/patches.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "runtime/vision/connector_test_data.h"

namespace ember {
namespace {

std::vector<float> Patches(const ConvCase& c) {
  std::vector<float> out(c.height * c.width * 3);
  Im2Patches(c.pixels, c.height, c.width, c.patch, out.data());
  return out;
}

TEST(Patches, ByHand) {
  // A 2 x 4 tile, patch 2: pixel (c, y, x) holds c * 100 + y * 10 + x.
  float pixels[3 * 2 * 4];
  for (int c = 0; c < 3; ++c) {
    for (int y = 0; y < 2; ++y) {
      for (int x = 0; x < 4; ++x) pixels[(c * 2 + y) * 4 + x] = c * 100 + y * 10 + x;
    }
  }
  float out[2 * 12];
  Im2Patches(pixels, 2, 4, 2, out);
  const float expected[2 * 12] = {0, 1, 10, 11, 100, 101, 110, 111, 200, 201, 210, 211,
                                  2, 3, 12, 13, 102, 103, 112, 113, 202, 203, 212, 213};
  for (int i = 0; i < 24; ++i) EXPECT_EQ(out[i], expected[i]) << i;
}

TEST(Patches, MatchesUnfold) {
  for (const ConvCase& c : kConvCases) {
    const std::vector<float> out = Patches(c);
    for (size_t i = 0; i < out.size(); ++i) {
      ASSERT_FLOAT_EQ(out[i], c.patches[i]) << c.height << "x" << c.width << " " << i;
    }
  }
}

TEST(Patches, TimesWeightMatchesConv2d) {
  for (const ConvCase& c : kConvCases) {
    const std::vector<float> out = Patches(c);
    const size_t k = 3 * c.patch * c.patch;
    const size_t rows = out.size() / k;
    for (size_t r = 0; r < rows; ++r) {
      for (size_t o = 0; o < c.channels; ++o) {
        double sum = 0.0;
        for (size_t i = 0; i < k; ++i)
          sum += double{out[r * k + i]} * c.weight[o * k + i];
        const double expected = c.expected[r * c.channels + o];
        EXPECT_NEAR(sum, expected, 1e-6 * std::fmax(1.0, std::fabs(expected)))
            << c.height << "x" << c.width << " patch " << r << " channel " << o;
      }
    }
  }
}

TEST(Patches, DataTellsTranspositionsApart) {
  // The oracle data would catch a patch's (kx, ky) order or a column-major grid: both
  // give other rows on it.
  for (const ConvCase& c : kConvCases) {
    const size_t p = c.patch, cols = c.width / p, rows = c.height / p;
    bool kx_ky_differs = false, grid_differs = false;
    for (size_t r = 0; r < rows * cols; ++r) {
      const size_t py = r / cols, px = r % cols;
      const size_t ty = r % rows, tx = r / rows;  // the grid walked column by column
      for (size_t ch = 0; ch < 3; ++ch) {
        for (size_t a = 0; a < p; ++a) {
          for (size_t b = 0; b < p; ++b) {
            const float* plane = c.pixels + ch * c.height * c.width;
            const float want = c.patches[r * 3 * p * p + (ch * p + a) * p + b];
            kx_ky_differs |= plane[(py * p + b) * c.width + px * p + a] != want;
            grid_differs |= plane[(ty * p + a) * c.width + tx * p + b] != want;
          }
        }
      }
    }
    EXPECT_TRUE(kx_ky_differs) << c.height << "x" << c.width;
    EXPECT_TRUE(grid_differs) << c.height << "x" << c.width;
  }
}

}  // namespace
}  // namespace ember
