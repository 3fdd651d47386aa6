// Baseline/progressive JPEG to RGB8 in caller memory, bit-exact with Pillow's libjpeg.
#ifndef EMBER_RUNTIME_VISION_JPEG_DECODE_H_
#define EMBER_RUNTIME_VISION_JPEG_DECODE_H_

#include <cstddef>
#include <cstdint>

#include "runtime/status.h"

namespace ember {

// What the markers before the first scan say about a JPEG.
struct JpegInfo {
  int width = 0, height = 0, components = 0;  // components: 1 (gray) or 3
  bool progressive = false;
  // The scratch DecodeJpeg needs for exactly this file's sampling layout (at most
  // JpegScratchBytes(width, height)).
  size_t scratch_bytes = 0;
};

// Parses markers up to the first SOS and validates them (frame, tables the first scan
// uses, the scan header). InvalidArgument for corrupt or truncated headers,
// Unimplemented for valid JPEGs this decoder does not read (arithmetic coding, 12-bit,
// lossless, hierarchical, CMYK/YCCK, 2 components, fractional sampling).
Result<JpegInfo> ReadJpegInfo(const uint8_t* bytes, size_t num_bytes);

// Scratch DecodeJpeg needs for ANY JPEG of this size (any sampling factors, progressive
// or not); 0 if the size is invalid (0 or above 65500, libjpeg's limit) or overflows.
// About 9 bytes a pixel: each of 3 components at full resolution keeps its int16
// coefficients (128 bytes a block) and its 8-bit samples (64 bytes a block), plus three
// upsampled rows, the DC of up to 3 MCU-padding block rows, and a fixed ~15 KB.
size_t JpegScratchBytes(int width, int height);

// Decodes into rgb[0, w*h*3) (interleaved RGB8, rows packed). Gray images are
// replicated to RGB. ResourceExhausted when scratch or rgb is too small; other errors as
// ReadJpegInfo, plus InvalidArgument for corrupt or truncated data (a missing EOI
// included, as Pillow says "image file is truncated") and for more than 1000 scans.
// Progressive files whose scans leave some of the first 9 AC coefficients unrefined (a
// cut-short progression) get libjpeg-turbo 2.1's block smoothing, quirks included.
Status DecodeJpeg(const uint8_t* bytes, size_t num_bytes, uint8_t* scratch,
                  size_t scratch_bytes, uint8_t* rgb, size_t rgb_bytes);

}  // namespace ember

#endif  // EMBER_RUNTIME_VISION_JPEG_DECODE_H_
