// ResizeRgb on cases worked by hand from Pillow's algorithm, its scratch bounds, and its
// refusals. tests/oracles/image_oracle.py compares it with Pillow itself.
#include "runtime/vision/resample.h"

#include <gtest/gtest.h>

#include <vector>

namespace ember {
namespace {

constexpr ResampleFilter kFilters[] = {ResampleFilter::kBilinear,
                                       ResampleFilter::kBicubic, ResampleFilter::kLanczos,
                                       ResampleFilter::kBox, ResampleFilter::kHamming};

std::vector<uint8_t> Resize(const std::vector<uint8_t>& rgb, int w, int h, int out_w,
                            int out_h, ResampleFilter filter) {
  std::vector<uint8_t> scratch(ResizeScratchBytes(w, h, out_w, out_h, filter));
  std::vector<uint8_t> out(static_cast<size_t>(out_w) * out_h * 3);
  Status s = ResizeRgb(RgbImage{rgb.data(), w, h}, out_w, out_h, filter, scratch.data(),
                       scratch.size(), out.data());
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

TEST(Resample, BilinearHalvingByHand) {
  // 4 -> 2 bilinear: scale 2, support 2; output 0 centers at 1.0 and takes inputs 0..2
  // with tent weights 0.75, 0.75, 0.25 (normalized 3/7, 3/7, 1/7): 0, 70, 140 -> 50;
  // output 1 takes 70, 140, 210 with 1/7, 3/7, 3/7 -> 160.
  const std::vector<uint8_t> rgb = {0, 0, 0, 70, 70, 0, 140, 140, 0, 210, 210, 0};
  EXPECT_EQ(Resize(rgb, 4, 1, 2, 1, ResampleFilter::kBilinear),
            (std::vector<uint8_t>{50, 50, 0, 160, 160, 0}));
}

TEST(Resample, SameSizeCopiesAndConstantsStayConstant) {
  std::vector<uint8_t> rgb(5 * 3 * 3);
  for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<uint8_t>(i * 37);
  EXPECT_EQ(Resize(rgb, 5, 3, 5, 3, ResampleFilter::kLanczos), rgb);
  std::vector<uint8_t> flat(7 * 9 * 3, 200);
  for (ResampleFilter f : kFilters) {
    for (auto [w, h] : {std::pair{3, 4}, {13, 2}, {1, 1}, {20, 20}}) {
      std::vector<uint8_t> out = Resize(flat, 7, 9, w, h, f);
      for (uint8_t v : out) ASSERT_EQ(v, 200) << ResampleFilterName(f) << " " << w;
    }
  }
}

TEST(Resample, ScratchBoundCoversEverySize) {
  for (ResampleFilter f : kFilters) {
    for (int in = 1; in <= 70; in += 3) {
      for (int out = 1; out <= 70; out += 4) {
        const size_t exact = ResizeScratchBytes(in, in + 1, out, out + 2, f);
        ASSERT_GT(exact, 0u);
        ASSERT_LE(exact, ResizeScratchBound(70, 71, out, out + 2, f))
            << in << " -> " << out << " " << ResampleFilterName(f);
      }
    }
  }
  EXPECT_LE(ResizeScratchBytes(4000, 3000, 512, 512, ResampleFilter::kLanczos),
            ResizeScratchBound(8192, 8192, 512, 512, ResampleFilter::kLanczos));
}

TEST(Resample, Refusals) {
  std::vector<uint8_t> rgb(12), out(12), scratch(1 << 16);
  RgbImage image{rgb.data(), 2, 2};
  EXPECT_FALSE(ResizeRgb(image, 0, 2, ResampleFilter::kBilinear, scratch.data(),
                         scratch.size(), out.data())
                   .ok());
  EXPECT_FALSE(ResizeRgb(image, 2, 2, static_cast<ResampleFilter>(0), scratch.data(),
                         scratch.size(), out.data())
                   .ok());
  EXPECT_EQ(
      ResizeRgb(image, 1, 1, ResampleFilter::kBilinear, scratch.data(), 8, out.data())
          .code(),
      StatusCode::kResourceExhausted);
  ResampleFilter f;
  EXPECT_FALSE(ResampleFilterFromPil(0, &f));  // NEAREST: another algorithm
  EXPECT_TRUE(ResampleFilterFromPil(1, &f));
  EXPECT_EQ(f, ResampleFilter::kLanczos);
  EXPECT_EQ(ResizeScratchBytes(1 << 30, 1 << 30, 1 << 30, 1 << 30, f), 0u);
}

}  // namespace
}  // namespace ember
