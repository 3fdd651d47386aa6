// PixelShuffle and AveragePool against PyTorch (connector_test_data.h, written by
// tools/scripts/gen_vision_connector_data.py): Idefics3Connector.pixel_shuffle's
// view/permute/reshape chain and F.avg_pool2d on the (dim, side, side) grid.
#include "runtime/vision/connector.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "runtime/vision/connector_test_data.h"

namespace ember {
namespace {

TEST(PixelShuffle, MatchesTheChain) {
  for (const ShuffleCase& c : kShuffleCases) {
    std::vector<float> out(c.side * c.side * c.dim);
    PixelShuffle(c.input, c.side, c.dim, c.scale, out.data());
    for (size_t i = 0; i < out.size(); ++i) {
      ASSERT_FLOAT_EQ(out[i], c.expected[i]) << "scale " << c.scale << " " << i;
    }
  }
}

TEST(PixelShuffle, DataTellsTranspositionsApart) {
  // Swapping k and j in the closed form (the block read column by column) gives another
  // answer on the oracle data, so MatchesTheChain would catch it.
  for (const ShuffleCase& c : kShuffleCases) {
    const size_t s = c.scale, blocks = c.side / s;
    bool differs = false;
    for (size_t hb = 0; hb < blocks; ++hb) {
      for (size_t wb = 0; wb < blocks; ++wb) {
        for (size_t k = 0; k < s; ++k) {
          for (size_t j = 0; j < s; ++j) {
            for (size_t e = 0; e < c.dim; ++e) {
              const float swapped =
                  c.input[((hb * s + j) * c.side + wb * s + k) * c.dim + e];
              const size_t o =
                  (hb * blocks + wb) * s * s * c.dim + (k * s + j) * c.dim + e;
              differs |= swapped != c.expected[o];
            }
          }
        }
      }
    }
    EXPECT_TRUE(differs) << "scale " << c.scale;
  }
}

TEST(PixelShuffle, ScaleOneCopies) {
  float h[4 * 3], out[4 * 3];
  for (int i = 0; i < 12; ++i) h[i] = i * 0.5f - 2.0f;
  PixelShuffle(h, 2, 3, 1, out);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(out[i], h[i]);
}

TEST(AveragePool, MatchesAvgPool2d) {
  for (const PoolCase& c : kPoolCases) {
    const size_t blocks = c.side / c.pool;
    std::vector<float> out(blocks * blocks * c.dim);
    AveragePool(c.input, c.side, c.dim, c.pool, out.data());
    for (size_t i = 0; i < out.size(); ++i) {
      EXPECT_NEAR(out[i], c.expected[i], 1e-6 * std::fmax(1.0, std::fabs(c.expected[i])))
          << "pool " << c.pool << " " << i;
    }
  }
}

TEST(AveragePool, DataTellsTranspositionsApart) {
  // Pooling the transposed grid (out[wb * blocks + hb]) gives another answer.
  for (const PoolCase& c : kPoolCases) {
    const size_t blocks = c.side / c.pool;
    std::vector<float> out(blocks * blocks * c.dim);
    AveragePool(c.input, c.side, c.dim, c.pool, out.data());
    bool differs = false;
    for (size_t hb = 0; hb < blocks; ++hb) {
      for (size_t wb = 0; wb < blocks; ++wb) {
        for (size_t e = 0; e < c.dim; ++e) {
          differs |= std::fabs(out[(wb * blocks + hb) * c.dim + e] -
                               c.expected[(hb * blocks + wb) * c.dim + e]) > 1e-3f;
        }
      }
    }
    EXPECT_TRUE(differs) << "pool " << c.pool;
  }
}

TEST(AveragePool, ByHand) {
  // side 4, dim 1, pool 2: the top-right block holds 2, 3, 6, 7.
  float h[16], out[4];
  for (int i = 0; i < 16; ++i) h[i] = static_cast<float>(i);
  AveragePool(h, 4, 1, 2, out);
  EXPECT_EQ(out[0], 2.5f);
  EXPECT_EQ(out[1], 4.5f);
  EXPECT_EQ(out[2], 10.5f);
  EXPECT_EQ(out[3], 12.5f);
}

}  // namespace
}  // namespace ember
