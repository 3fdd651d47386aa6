// PNG and JPEG bytes to 8-bit RGB, in caller memory, by ember's own decoders
// (png_decode, jpeg_decode): no library to cross-build for a board, nothing allocated per
// image, every size checked, and the pixels Pillow reads (the same bytes for PNG; JPEG
// through the same integer IDCT, upsampling and color conversion as libjpeg-turbo). A
// pixel with alpha is composited on white (Pillow's alpha_composite, as Idefics3's
// convert_to_rgb does) or its alpha dropped (convert("RGB"), as the other processors do).
#ifndef EMBER_RUNTIME_VISION_IMAGE_DECODE_H_
#define EMBER_RUNTIME_VISION_IMAGE_DECODE_H_

#include <cstddef>
#include <cstdint>

#include "runtime/status.h"
#include "runtime/vision/image.h"

namespace ember {

enum class ImageFormat { kPng, kJpeg };
enum class AlphaMode { kOverWhite, kDrop };

struct ImageHeader {
  ImageFormat format = ImageFormat::kPng;
  int width = 0;
  int height = 0;
  // What the pixels hold: 1 gray, 2 gray + alpha, 3 RGB, 4 RGBA (or CMYK JPEG). A PNG
  // palette holds RGB; its tRNS chunk, or a gray or RGB image's, adds alpha.
  int channels = 0;
};

// The scratch DecodeImage needs for any PNG or JPEG within `limits`.
size_t DecodeScratchBytes(const ImageLimits& limits);

// The format and size from the first bytes, checked against `limits`.
Result<ImageHeader> ReadImageHeader(const uint8_t* bytes, size_t num_bytes,
                                    const ImageLimits& limits);

// Decodes into rgb[0, width * height * 3) (at most `rgb_bytes`), with `scratch` as the
// decoder's memory. InvalidArgument for bytes that are not a PNG or JPEG this decoder
// reads (truncated, corrupt, another format), or past `limits`; ResourceExhausted when
// the scratch or the output is too small.
Result<RgbImage> DecodeImage(const uint8_t* bytes, size_t num_bytes,
                             const ImageLimits& limits, AlphaMode alpha, uint8_t* scratch,
                             size_t scratch_bytes, uint8_t* rgb, size_t rgb_bytes);

}  // namespace ember

#endif  // EMBER_RUNTIME_VISION_IMAGE_DECODE_H_
