// PNG files (every color type and bit depth, Adam7 interlacing, palettes and tRNS) to
// 8-bit RGB in caller memory, as Pillow reads them: 16-bit samples keep their high byte
// (16-bit gray is clipped to 255, as Pillow's I;16 to RGB conversion does), and alpha is
// composited on white or dropped. The rows inflate into planned scratch; nothing
// allocates.
#ifndef EMBER_RUNTIME_VISION_PNG_DECODE_H_
#define EMBER_RUNTIME_VISION_PNG_DECODE_H_

#include <cstddef>
#include <cstdint>

#include "runtime/status.h"

namespace ember {

struct PngInfo {
  int width = 0;
  int height = 0;
  int bit_depth = 0;
  int color_type = 0;  // 0 gray, 2 RGB, 3 palette, 4 gray + alpha, 6 RGBA
  bool interlaced = false;
  bool alpha = false;  // an alpha channel, or tRNS
  int channels() const;
};

// The signature and IHDR, checked.
Result<PngInfo> ReadPngInfo(const uint8_t* bytes, size_t num_bytes);

// The scratch DecodePng needs for any PNG of this size: its filtered rows, at most 8
// bytes a pixel (16-bit RGBA) plus each row's filter byte for every Adam7 pass. 0 when
// the product overflows.
size_t PngScratchBytes(int width, int height);

// Decodes into rgb[0, width * height * 3); `over_white`: alpha composited on white
// (Pillow's alpha_composite), else dropped (convert("RGB")).
Status DecodePng(const uint8_t* bytes, size_t num_bytes, bool over_white,
                 uint8_t* scratch, size_t scratch_bytes, uint8_t* rgb, size_t rgb_bytes);

}  // namespace ember

#endif  // EMBER_RUNTIME_VISION_PNG_DECODE_H_
