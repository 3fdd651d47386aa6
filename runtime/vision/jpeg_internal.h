// The JPEG decoder's shared state (tables, frame, scan) and its stages' entry points.
#ifndef EMBER_RUNTIME_VISION_JPEG_INTERNAL_H_
#define EMBER_RUNTIME_VISION_JPEG_INTERNAL_H_

#include <cstddef>
#include <cstdint>

#include "runtime/status.h"

namespace ember {
namespace jpeg_internal {

inline constexpr int kMaxComponents = 3;
inline constexpr int kMaxDimension = 65500;  // libjpeg's JPEG_MAX_DIMENSION
inline constexpr int kMaxBlocksInMcu = 10;   // libjpeg's D_MAX_BLOCKS_IN_MCU

// Zigzag position -> natural (row-major) index, with 16 extra entries of 63 so a corrupt
// run past the end lands on the last coefficient, as libjpeg's jpeg_natural_order does.
extern const uint8_t kNaturalOrder[64 + 16];

// A DHT table as stored: counts[l] codes of length l (1..16), then the symbols.
struct HuffmanSpec {
  bool defined = false;
  uint8_t counts[17] = {};
  uint8_t symbols[256] = {};
};

// A canonical Huffman code ready for decoding.
struct HuffmanDecoder {
  static constexpr int kFastBits = 9;
  uint16_t
      fast[1 << kFastBits];  // (length << 8) | symbol for codes <= kFastBits; 0: longer
  int32_t max_code[18];      // largest code of length l, -1 if none
  int32_t value_offset[17];  // symbol index = code + value_offset[l]
  uint8_t symbols[256];
};

struct Component {
  int id = 0;
  int h = 1, v = 1;     // sampling factors
  int quant_index = 0;  // DQT slot from SOF
  bool quant_latched = false;
  int16_t quant[64] = {};  // natural order; libjpeg multiplies by a 16-bit (short) copy
  int dc_table = 0, ac_table = 0;
  int downsampled_w = 0, downsampled_h = 0;  // ceil(image size * factor / max factor)
  int width_in_blocks = 0, height_in_blocks = 0;  // ceil(downsampled size / 8)
  int pad_rows = 0;  // block rows past height_in_blocks up to a multiple of v
  int dc_pred = 0;
  // The successive-approximation bit (Al) each of the first 10 zigzag coefficients is
  // known to, -1 before any scan (libjpeg's coef_bits): decides block smoothing.
  int coef_bits[10] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
  int16_t* coefs = nullptr;  // (height_in_blocks, width_in_blocks, 64), natural order
  // DC of the MCU-padding block rows, (pad_rows, width_in_blocks): libjpeg keeps them and
  // its block smoothing reads them near the bottom edge.
  int16_t* pad_dc = nullptr;
  uint8_t* plane = nullptr;  // (height_in_blocks * 8, width_in_blocks * 8)
};

enum class ColorSpace { kGray, kYCbCr, kRgb };

struct JpegState {
  // Tables as last defined by DHT / DQT / DRI.
  HuffmanSpec dc_specs[4], ac_specs[4];
  int16_t quant[4][64] = {};
  bool quant_defined[4] = {};
  int restart_interval = 0;
  bool saw_jfif = false, saw_adobe = false;
  int adobe_transform = 0;

  // Frame (SOF).
  bool saw_sof = false, progressive = false;
  int width = 0, height = 0, num_components = 0;
  Component comps[kMaxComponents];
  int max_h = 1, max_v = 1;
  int mcus_x = 0, mcus_y = 0;  // interleaved MCU grid
  ColorSpace color = ColorSpace::kYCbCr;

  // Current scan (SOS).
  int num_scan_comps = 0;
  int scan_comp[4] = {};  // indexes into comps
  int ss = 0, se = 63, ah = 0, al = 0;
  int num_scans = 0;

  // Decoders built for the current scan (in scratch; null while only reading headers).
  HuffmanDecoder* dc_decoders = nullptr;  // [4]
  HuffmanDecoder* ac_decoders = nullptr;  // [4]
  int16_t dummy_block[64] = {};           // MCU padding blocks nobody displays
};

// What DecodeJpeg places at the start of its scratch.
struct JpegWorkspace {
  JpegState state;
  HuffmanDecoder dc_decoders[4], ac_decoders[4];
};

// Parses the DHT payload (after the length) into specs; InvalidArgument when malformed.
Status ParseDht(const uint8_t* data, size_t size, HuffmanSpec* dc_specs,
                HuffmanSpec* ac_specs);
// Builds a decoder; InvalidArgument for an oversubscribed code (libjpeg's check) or a DC
// symbol above 15.
Status BuildHuffmanDecoder(const HuffmanSpec& spec, bool is_dc, HuffmanDecoder* out);

// Decodes the entropy-coded data of the scan in `state` starting at bytes[*pos];
// *pos ends at the marker that follows the scan.
Status DecodeScan(JpegState* state, const uint8_t* bytes, size_t num_bytes, size_t* pos);

// Inverse DCT of every block, then upsampling and color conversion into rgb.
void WritePixels(const JpegState& state, uint8_t* row_buffers, size_t row_stride,
                 uint8_t* rgb);

// ISLOW inverse DCT of one block (coefficients in natural order) into 8x8 samples.
void IdctIslow(const int16_t* coefs, const int16_t* quant, uint8_t* out, size_t stride);

}  // namespace jpeg_internal
}  // namespace ember

#endif  // EMBER_RUNTIME_VISION_JPEG_INTERNAL_H_
