// PNG and JPEG bytes to RGB (image_decode.h): the format from the signature, the size
// checked against the limits, then ember's own decoders on caller scratch.
#include "runtime/vision/image_decode.h"

#include <cstring>

#include "runtime/vision/jpeg_decode.h"
#include "runtime/vision/png_decode.h"

namespace ember {
namespace {

bool IsPng(const uint8_t* bytes, size_t n) {
  static const uint8_t kPng[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  return n >= 8 && std::memcmp(bytes, kPng, 8) == 0;
}

bool IsJpeg(const uint8_t* bytes, size_t n) {
  return n >= 3 && bytes[0] == 0xff && bytes[1] == 0xd8 && bytes[2] == 0xff;
}

Status CheckLimits(int width, int height, const ImageLimits& limits) {
  if (width > limits.max_width || height > limits.max_height ||
      uint64_t{static_cast<uint32_t>(width)} * static_cast<uint32_t>(height) >
          limits.max_pixels) {
    return InvalidArgument(
        "image: %dx%d is larger than this session accepts (at most %dx%d, %zu pixels)",
        width, height, limits.max_width, limits.max_height, limits.max_pixels);
  }
  return Status::Ok();
}

}  // namespace

size_t DecodeScratchBytes(const ImageLimits& limits) {
  // The larger decoder's need for the largest image within the limits: a PNG's filtered
  // rows (8 bytes a pixel at most, and 63 filter bytes a row over Adam7's passes), a
  // JPEG's (JpegScratchBytes) for the same pixels.
  const int w = limits.max_width, h = limits.max_height;
  // In 64 bits: a 32-bit board's SIZE_MAX is the cap (0: the limits cannot be planned).
  const uint64_t png =
      uint64_t{limits.max_pixels} * 8 + uint64_t{static_cast<uint32_t>(h)} * 63 + 64;
  if (png > SIZE_MAX) return 0;
  // A JPEG's need grows with its area and its MCU-padded edges: take the worse of the
  // widest and the tallest frame holding max_pixels.
  size_t jpeg = 0;
  for (int width : {w, static_cast<int>(limits.max_pixels / (h > 0 ? h : 1))}) {
    if (width <= 0) continue;
    size_t height = limits.max_pixels / static_cast<size_t>(width);
    if (height > static_cast<size_t>(h)) height = h;
    if (height == 0) continue;
    const size_t need = JpegScratchBytes(width, static_cast<int>(height));
    if (need > jpeg) jpeg = need;
  }
  return png > jpeg ? static_cast<size_t>(png) : jpeg;
}

Result<ImageHeader> ReadImageHeader(const uint8_t* bytes, size_t num_bytes,
                                    const ImageLimits& limits) {
  if (bytes == nullptr || num_bytes == 0) return InvalidArgument("image: no bytes");
  ImageHeader header;
  if (IsPng(bytes, num_bytes)) {
    Result<PngInfo> png = ReadPngInfo(bytes, num_bytes);
    if (!png.ok()) return png.status();
    header.format = ImageFormat::kPng;
    header.width = png->width;
    header.height = png->height;
    // A palette holds RGB; a tRNS chunk (alpha set, no alpha channel) adds alpha.
    header.channels = png->color_type == 3 ? 3 : png->channels();
    if (png->alpha && header.channels % 2 == 1) ++header.channels;
  } else if (IsJpeg(bytes, num_bytes)) {
    Result<JpegInfo> jpeg = ReadJpegInfo(bytes, num_bytes);
    if (!jpeg.ok()) return jpeg.status();
    header.format = ImageFormat::kJpeg;
    header.width = jpeg->width;
    header.height = jpeg->height;
    header.channels = jpeg->components;
  } else {
    return InvalidArgument("image: not a PNG or JPEG file (the first bytes say neither)");
  }
  EMBER_RETURN_IF_ERROR(CheckLimits(header.width, header.height, limits));
  return header;
}

Result<RgbImage> DecodeImage(const uint8_t* bytes, size_t num_bytes,
                             const ImageLimits& limits, AlphaMode alpha, uint8_t* scratch,
                             size_t scratch_bytes, uint8_t* rgb, size_t rgb_bytes) {
  Result<ImageHeader> header = ReadImageHeader(bytes, num_bytes, limits);
  if (!header.ok()) return header.status();
  // Within the limits, so the product fits: max_pixels is a size_t.
  const size_t pixels = static_cast<size_t>(header->width) * header->height;
  if (rgb == nullptr || rgb_bytes / 3 < pixels) {
    return ResourceExhausted("image: %dx%d needs %zu RGB bytes, %zu given", header->width,
                             header->height, pixels, rgb_bytes);
  }
  if (header->format == ImageFormat::kPng) {
    EMBER_RETURN_IF_ERROR(DecodePng(bytes, num_bytes, alpha == AlphaMode::kOverWhite,
                                    scratch, scratch_bytes, rgb, rgb_bytes));
  } else {
    EMBER_RETURN_IF_ERROR(
        DecodeJpeg(bytes, num_bytes, scratch, scratch_bytes, rgb, rgb_bytes));
  }
  RgbImage image;
  image.rgb = rgb;
  image.width = header->width;
  image.height = header->height;
  return image;
}

}  // namespace ember
