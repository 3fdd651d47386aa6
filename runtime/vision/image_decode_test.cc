// DecodeImage against the pixels Pillow reads from the same PNG files, and on bytes that
// are not an image: clear errors, no crash. (tests/oracles/image_oracle.py compares
// every PNG kind and JPEG sampling with Pillow.)
#include "runtime/vision/image_decode.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "runtime/vision/image_decode_test_data.h"

namespace ember {
namespace {

uint32_t Crc32ForTest(const uint8_t* p, size_t n) {
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
  }
  return ~c;
}

struct Decoded {
  Status status;
  std::vector<uint8_t> rgb;
  int width = 0, height = 0;
};

Decoded Decode(const uint8_t* bytes, size_t n, AlphaMode alpha = AlphaMode::kOverWhite,
               size_t scratch_bytes = 1 << 20, ImageLimits limits = ImageLimits()) {
  std::vector<uint8_t> scratch(scratch_bytes);
  Decoded d;
  d.rgb.assign(1 << 12, 0);
  Result<RgbImage> image = DecodeImage(bytes, n, limits, alpha, scratch.data(),
                                       scratch.size(), d.rgb.data(), d.rgb.size());
  d.status = image.status();
  if (image.ok()) {
    d.width = image->width;
    d.height = image->height;
    d.rgb.resize(static_cast<size_t>(d.width) * d.height * 3);
  }
  return d;
}

TEST(ImageDecode, RgbaOverWhiteIsPillowsAlphaComposite) {
  // Image.alpha_composite(white, im).convert("RGB"), as Idefics3's convert_to_rgb.
  Decoded d = Decode(kPngRgba, sizeof(kPngRgba));
  ASSERT_TRUE(d.status.ok()) << d.status.message();
  EXPECT_EQ(d.width, 2);
  EXPECT_EQ(d.height, 2);
  const std::vector<uint8_t> want = {255, 0, 0, 127, 255, 127, 255, 255, 255, 63, 71, 79};
  EXPECT_EQ(d.rgb, want);
}

TEST(ImageDecode, RgbaDroppedIsPillowsConvertRgb) {
  Decoded d = Decode(kPngRgba, sizeof(kPngRgba), AlphaMode::kDrop);
  ASSERT_TRUE(d.status.ok()) << d.status.message();
  const std::vector<uint8_t> want = {255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30};
  EXPECT_EQ(d.rgb, want);
}

TEST(ImageDecode, GrayAndPaletteBecomeRgb) {
  Decoded gray = Decode(kPngGray, sizeof(kPngGray));
  ASSERT_TRUE(gray.status.ok()) << gray.status.message();
  EXPECT_EQ(gray.rgb, (std::vector<uint8_t>{0, 0, 0, 128, 128, 128, 255, 255, 255}));
  Decoded palette = Decode(kPngPalette, sizeof(kPngPalette));
  ASSERT_TRUE(palette.status.ok()) << palette.status.message();
  EXPECT_EQ(palette.rgb, (std::vector<uint8_t>{200, 100, 50, 9, 8, 7}));
}

TEST(ImageDecode, HeaderNamesFormatAndSize) {
  Result<ImageHeader> h = ReadImageHeader(kPngRgba, sizeof(kPngRgba), ImageLimits());
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(h->format, ImageFormat::kPng);
  EXPECT_EQ(h->width, 2);
  EXPECT_EQ(h->height, 2);
  EXPECT_EQ(h->channels, 4);
  Result<ImageHeader> palette =
      ReadImageHeader(kPngPalette, sizeof(kPngPalette), ImageLimits());
  ASSERT_TRUE(palette.ok()) << palette.status().message();
  EXPECT_EQ(palette->channels, 3);  // a palette of RGB colors, not one gray channel
  Result<ImageHeader> gray = ReadImageHeader(kPngGray, sizeof(kPngGray), ImageLimits());
  ASSERT_TRUE(gray.ok()) << gray.status().message();
  EXPECT_EQ(gray->channels, 1);
}

TEST(ImageDecode, RefusesWhatIsNotAnImage) {
  const uint8_t text[] = "GIF89a not a png";
  EXPECT_EQ(Decode(text, sizeof(text)).status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Decode(nullptr, 0).status.code(), StatusCode::kInvalidArgument);
  const uint8_t jpeg_start[] = {0xff, 0xd8, 0xff, 0xe0, 0, 0};
  EXPECT_EQ(Decode(jpeg_start, sizeof(jpeg_start)).status.code(),
            StatusCode::kInvalidArgument);
}

TEST(ImageDecode, EveryTruncationAndEveryFlippedByteIsAnError) {
  // Cut just before the 12-byte IEND chunk, the image data is whole: Pillow reads such
  // a file, and so does this decoder. Any other cut is an error.
  const size_t before_end = sizeof(kPngRgba) - 12;
  for (size_t n = 0; n < sizeof(kPngRgba); ++n) {
    Decoded d = Decode(kPngRgba, n);
    EXPECT_EQ(d.status.ok(), n == before_end) << n;
  }
  std::vector<uint8_t> bytes(kPngRgba, kPngRgba + sizeof(kPngRgba));
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (uint8_t flip : {0x01, 0x80, 0xff}) {
      bytes[i] ^= flip;
      // Every chunk's CRC is checked; CRC-32 catches every changed byte.
      EXPECT_FALSE(Decode(bytes.data(), bytes.size()).status.ok()) << i;
      bytes[i] ^= flip;
    }
  }
}

TEST(ImageDecode, LimitsAndScratchAreEnforced) {
  ImageLimits small;
  small.max_width = 1;
  Decoded wide =
      Decode(kPngRgba, sizeof(kPngRgba), AlphaMode::kOverWhite, 1 << 20, small);
  EXPECT_EQ(wide.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::strstr(wide.status.message(), "larger"), nullptr)
      << wide.status.message();
  // Its filtered rows take 2 x (1 + 8) bytes.
  Decoded starved = Decode(kPngRgba, sizeof(kPngRgba), AlphaMode::kOverWhite, 17);
  EXPECT_EQ(starved.status.code(), StatusCode::kResourceExhausted)
      << starved.status.message();

  // A header claiming 65536 x 256 (its CRC fixed) is past the limits.
  std::vector<uint8_t> huge(kPngRgba, kPngRgba + sizeof(kPngRgba));
  huge[16] = 0x00, huge[17] = 0x01, huge[18] = 0x00, huge[19] = 0x00;  // width
  huge[22] = 0x01;                                                     // height 256 + 2
  const uint32_t crc = Crc32ForTest(huge.data() + 12, 17);
  for (int i = 0; i < 4; ++i) huge[29 + i] = static_cast<uint8_t>(crc >> (24 - 8 * i));
  Decoded past = Decode(huge.data(), huge.size());
  EXPECT_EQ(past.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::strstr(past.status.message(), "larger"), nullptr)
      << past.status.message();
  huge[29] ^= 1;  // and with a bad CRC, that is what is reported
  EXPECT_NE(std::strstr(Decode(huge.data(), huge.size()).status.message(), "CRC"),
            nullptr);
}

TEST(ImageDecode, OutputTooSmallIsResourceExhausted) {
  std::vector<uint8_t> scratch(1 << 20), rgb(11);
  Result<RgbImage> image =
      DecodeImage(kPngRgba, sizeof(kPngRgba), ImageLimits(), AlphaMode::kOverWhite,
                  scratch.data(), scratch.size(), rgb.data(), rgb.size());
  EXPECT_EQ(image.status().code(), StatusCode::kResourceExhausted);
}

TEST(ImageDecode, ScratchBoundGrowsWithTheLimits) {
  ImageLimits a, b;
  b.max_pixels = a.max_pixels * 2;
  EXPECT_GT(DecodeScratchBytes(b), DecodeScratchBytes(a));
  EXPECT_GE(DecodeScratchBytes(a), a.max_pixels * 8);
}

}  // namespace
}  // namespace ember
