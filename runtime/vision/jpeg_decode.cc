// JPEG markers (SOI to EOI), frame and scan validation, scratch layout, and the API.
#include "runtime/vision/jpeg_decode.h"

#include <cstring>
#include <new>

#include "runtime/checked_math.h"
#include "runtime/vision/jpeg_internal.h"

namespace ember {

using jpeg_internal::ColorSpace;
using jpeg_internal::Component;
using jpeg_internal::JpegState;

namespace {

constexpr size_t kAlign = 64;
constexpr int kMaxScans = 1000;

// The K.3 tables libjpeg-turbo installs in Huffman slots 0 and 1 when a file defines
// none (Motion-JPEG frames omit them), as one DHT payload.
constexpr uint8_t kStandardDht[] = {
    0x00, 0x00, 0x01, 0x05, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
    0x0b, 0x10, 0x00, 0x02, 0x01, 0x03, 0x03, 0x02, 0x04, 0x03, 0x05, 0x05, 0x04, 0x04,
    0x00, 0x00, 0x01, 0x7d, 0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31,
    0x41, 0x06, 0x13, 0x51, 0x61, 0x07, 0x22, 0x71, 0x14, 0x32, 0x81, 0x91, 0xa1, 0x08,
    0x23, 0x42, 0xb1, 0xc1, 0x15, 0x52, 0xd1, 0xf0, 0x24, 0x33, 0x62, 0x72, 0x82, 0x09,
    0x0a, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x34, 0x35,
    0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x53,
    0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69,
    0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x83, 0x84, 0x85, 0x86, 0x87,
    0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3,
    0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8,
    0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4,
    0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8,
    0xe9, 0xea, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0x01, 0x00,
    0x03, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x11,
    0x00, 0x02, 0x01, 0x02, 0x04, 0x04, 0x03, 0x04, 0x07, 0x05, 0x04, 0x04, 0x00, 0x01,
    0x02, 0x77, 0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31, 0x06, 0x12, 0x41,
    0x51, 0x07, 0x61, 0x71, 0x13, 0x22, 0x32, 0x81, 0x08, 0x14, 0x42, 0x91, 0xa1, 0xb1,
    0xc1, 0x09, 0x23, 0x33, 0x52, 0xf0, 0x15, 0x62, 0x72, 0xd1, 0x0a, 0x16, 0x24, 0x34,
    0xe1, 0x25, 0xf1, 0x17, 0x18, 0x19, 0x1a, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x35, 0x36,
    0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54,
    0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a,
    0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87,
    0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3,
    0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8,
    0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4,
    0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9,
    0xea, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa};

constexpr size_t AlignUp(size_t n) { return (n + kAlign - 1) & ~(kAlign - 1); }

inline int Read16(const uint8_t* p) { return (p[0] << 8) | p[1]; }

int CeilDiv(int64_t a, int64_t b) { return static_cast<int>((a + b - 1) / b); }

// Scratch for this frame: the workspace (aligned, plus slack to align the scratch
// pointer), each component's coefficients (128 bytes a block), samples (64 a block) and
// padding-row DCs, and three upsampled rows.
bool FrameScratchBytes(const JpegState& s, size_t* bytes) {
  size_t total = AlignUp(sizeof(jpeg_internal::JpegWorkspace)) + kAlign - 1;
  for (int ci = 0; ci < s.num_components; ++ci) {
    const Component& c = s.comps[ci];
    size_t blocks = 0, block_bytes = 0;
    size_t pad_bytes = 0;
    if (!CheckedMul(static_cast<size_t>(c.width_in_blocks),
                    static_cast<size_t>(c.height_in_blocks), &blocks) ||
        !CheckedMul(blocks, size_t{192}, &block_bytes) ||
        !CheckedAdd(total, block_bytes, &total) ||
        !CheckedMul(static_cast<size_t>(c.width_in_blocks) * 2,
                    static_cast<size_t>(c.pad_rows), &pad_bytes) ||
        !CheckedAdd(total, AlignUp(pad_bytes), &total)) {
      return false;
    }
  }
  size_t rows = 0;
  if (!CheckedMul(AlignUp(static_cast<size_t>(s.width)), size_t{3}, &rows)) return false;
  return CheckedAdd(total, rows, bytes);
}

Status ParseSof(JpegState* s, int marker, const uint8_t* p, size_t length) {
  if (s->saw_sof) return InvalidArgument("jpeg: more than one SOF marker");
  switch (marker) {
    case 0xC0:
    case 0xC1:
      break;
    case 0xC2:
      s->progressive = true;
      break;
    case 0xC3:
      return Unimplemented("jpeg: lossless JPEG is not supported");
    case 0xC5:
    case 0xC6:
    case 0xC7:
      return Unimplemented("jpeg: hierarchical JPEG is not supported");
    default:  // C9-CB, CD-CF
      return Unimplemented("jpeg: arithmetic-coded JPEG is not supported");
  }
  if (length < 6) return InvalidArgument("jpeg: SOF segment too short");
  const int precision = p[0];
  s->height = Read16(p + 1);
  s->width = Read16(p + 3);
  const int n = p[5];
  if (precision != 8) {
    return Unimplemented("jpeg: %d-bit samples are not supported (only 8)", precision);
  }
  if (s->width == 0 || s->height == 0) {
    return InvalidArgument("jpeg: empty image (%dx%d; DNL is not supported)", s->width,
                           s->height);
  }
  if (s->width > jpeg_internal::kMaxDimension ||
      s->height > jpeg_internal::kMaxDimension) {
    return InvalidArgument("jpeg: %dx%d exceeds 65500", s->width, s->height);
  }
  if (n == 0 || length != 6 + 3 * static_cast<size_t>(n)) {
    return InvalidArgument("jpeg: SOF length does not match %d components", n);
  }
  if (n == 4) return Unimplemented("jpeg: 4-component (CMYK/YCCK) JPEG is not supported");
  if (n != 1 && n != 3)
    return Unimplemented("jpeg: %d-component JPEG is not supported", n);
  s->num_components = n;
  s->max_h = s->max_v = 1;
  for (int i = 0; i < n; ++i) {
    Component& c = s->comps[i];
    c = Component();
    c.id = p[6 + 3 * i];
    c.h = p[7 + 3 * i] >> 4;
    c.v = p[7 + 3 * i] & 15;
    c.quant_index = p[8 + 3 * i];
    if (c.h < 1 || c.h > 4 || c.v < 1 || c.v > 4) {
      return InvalidArgument("jpeg: bad sampling factors %dx%d", c.h, c.v);
    }
    if (c.quant_index > 3) return InvalidArgument("jpeg: bad quantization table index");
    s->max_h = c.h > s->max_h ? c.h : s->max_h;
    s->max_v = c.v > s->max_v ? c.v : s->max_v;
  }
  for (int i = 0; i < n; ++i) {
    Component& c = s->comps[i];
    if (s->max_h % c.h != 0 || s->max_v % c.v != 0) {
      return Unimplemented("jpeg: fractional sampling (%dx%d in %dx%d) is not supported",
                           c.h, c.v, s->max_h, s->max_v);
    }
    c.downsampled_w = CeilDiv(int64_t{s->width} * c.h, s->max_h);
    c.downsampled_h = CeilDiv(int64_t{s->height} * c.v, s->max_v);
    c.width_in_blocks = CeilDiv(c.downsampled_w, 8);
    c.height_in_blocks = CeilDiv(c.downsampled_h, 8);
  }
  s->mcus_x = CeilDiv(s->width, 8 * s->max_h);
  s->mcus_y = CeilDiv(s->height, 8 * s->max_v);
  for (int i = 0; i < n; ++i) {
    Component& c = s->comps[i];
    c.pad_rows = s->mcus_y * c.v - c.height_in_blocks;  // 0..3
  }
  s->saw_sof = true;
  return Status::Ok();
}

Status ParseDqt(JpegState* s, const uint8_t* p, size_t length) {
  size_t pos = 0;
  while (pos < length) {  // each table takes at least 65 bytes
    const int precision = p[pos] >> 4, slot = p[pos] & 15;
    if (slot > 3) return InvalidArgument("jpeg: DQT table index %d", slot);
    if (precision > 1) return InvalidArgument("jpeg: DQT precision %d", precision);
    const size_t table_bytes = precision ? 128 : 64;
    if (length - pos - 1 < table_bytes)
      return InvalidArgument("jpeg: DQT segment too short");
    const uint8_t* values = p + pos + 1;
    for (int k = 0; k < 64; ++k) {
      const int v = precision ? Read16(values + 2 * k) : values[k];
      // libjpeg keeps 16-bit values and multiplies by a short copy.
      s->quant[slot][jpeg_internal::kNaturalOrder[k]] = static_cast<int16_t>(v);
    }
    s->quant_defined[slot] = true;
    pos += 1 + table_bytes;
  }
  return Status::Ok();
}

// libjpeg's default_decompress_parms: JFIF implies YCbCr; else Adobe's transform flag;
// else component ids 'R','G','B' mean RGB; anything else is taken as YCbCr.
void ChooseColorSpace(JpegState* s) {
  if (s->num_components == 1) {
    s->color = ColorSpace::kGray;
  } else if (s->saw_jfif) {
    s->color = ColorSpace::kYCbCr;
  } else if (s->saw_adobe) {
    s->color = s->adobe_transform == 0 ? ColorSpace::kRgb : ColorSpace::kYCbCr;
  } else {
    const bool rgb_ids =
        s->comps[0].id == 'R' && s->comps[1].id == 'G' && s->comps[2].id == 'B';
    s->color = rgb_ids ? ColorSpace::kRgb : ColorSpace::kYCbCr;
  }
}

Status ParseSos(JpegState* s, const uint8_t* p, size_t length) {
  if (!s->saw_sof) return InvalidArgument("jpeg: SOS before SOF");
  if (length < 1) return InvalidArgument("jpeg: SOS segment too short");
  const int n = p[0];
  if (n < 1 || n > 4 || length != 4 + 2 * static_cast<size_t>(n)) {
    return InvalidArgument("jpeg: bad SOS header (%d components)", n);
  }
  if (n > s->num_components) return InvalidArgument("jpeg: SOS has too many components");
  int blocks_in_mcu = 0;
  for (int i = 0; i < n; ++i) {
    const int id = p[1 + 2 * i], tables = p[2 + 2 * i];
    int index = -1;
    for (int ci = 0; ci < s->num_components; ++ci) {
      if (s->comps[ci].id == id) {
        index = ci;
        break;
      }
    }
    if (index < 0) return InvalidArgument("jpeg: SOS names unknown component %d", id);
    for (int j = 0; j < i; ++j) {
      if (s->scan_comp[j] == index)
        return InvalidArgument("jpeg: SOS repeats component %d", id);
    }
    s->scan_comp[i] = index;
    Component& c = s->comps[index];
    c.dc_table = tables >> 4;
    c.ac_table = tables & 15;
    blocks_in_mcu += n > 1 ? c.h * c.v : 1;
  }
  if (blocks_in_mcu > jpeg_internal::kMaxBlocksInMcu) {
    return InvalidArgument("jpeg: %d blocks in an MCU (> 10)", blocks_in_mcu);
  }
  s->num_scan_comps = n;
  const uint8_t* q = p + 1 + 2 * n;
  s->ss = q[0];
  s->se = q[1];
  s->ah = q[2] >> 4;
  s->al = q[2] & 15;
  if (s->progressive) {
    // jdphuff.c's start_pass checks (bad ones are errors there too).
    bool bad = false;
    if (s->ss == 0) {
      bad = s->se != 0;
    } else {
      bad = s->ss > s->se || s->se > 63 || n != 1;
    }
    if (s->ah != 0 && s->al != s->ah - 1) bad = true;
    if (s->al > 13) bad = true;
    if (bad) {
      return InvalidArgument("jpeg: bad progression Ss=%d Se=%d Ah=%d Al=%d", s->ss,
                             s->se, s->ah, s->al);
    }
    for (int i = 0; i < n; ++i) {
      Component& c = s->comps[s->scan_comp[i]];
      for (int k = s->ss; k <= s->se && k < 10; ++k) c.coef_bits[k] = s->al;
    }
  }
  // Tables: latch quantization at a component's first scan (libjpeg does), and check the
  // Huffman tables this scan decodes with.
  for (int i = 0; i < n; ++i) {
    Component& c = s->comps[s->scan_comp[i]];
    if (!c.quant_latched) {
      if (!s->quant_defined[c.quant_index]) {
        return InvalidArgument("jpeg: quantization table %d is missing", c.quant_index);
      }
      memcpy(c.quant, s->quant[c.quant_index], sizeof(c.quant));
      c.quant_latched = true;
    }
    const bool needs_dc = !s->progressive || (s->ss == 0 && s->ah == 0);
    const bool needs_ac = !s->progressive || s->ss != 0;
    if (needs_dc && (c.dc_table > 3 || !s->dc_specs[c.dc_table].defined)) {
      return InvalidArgument("jpeg: DC Huffman table %d is missing", c.dc_table);
    }
    if (needs_ac && (c.ac_table > 3 || !s->ac_specs[c.ac_table].defined)) {
      return InvalidArgument("jpeg: AC Huffman table %d is missing", c.ac_table);
    }
  }
  return Status::Ok();
}

// Builds the scan's Huffman decoders; without decoders in `s` (reading headers only),
// builds each into `check` just to validate it.
Status PrepareScan(JpegState* s, jpeg_internal::HuffmanDecoder* check) {
  for (int i = 0; i < s->num_scan_comps; ++i) {
    const Component& c = s->comps[s->scan_comp[i]];
    if (!s->progressive || (s->ss == 0 && s->ah == 0)) {
      EMBER_RETURN_IF_ERROR(jpeg_internal::BuildHuffmanDecoder(
          s->dc_specs[c.dc_table], true,
          s->dc_decoders != nullptr ? &s->dc_decoders[c.dc_table] : check));
    }
    if (!s->progressive || s->ss != 0) {
      EMBER_RETURN_IF_ERROR(jpeg_internal::BuildHuffmanDecoder(
          s->ac_specs[c.ac_table], false,
          s->ac_decoders != nullptr ? &s->ac_decoders[c.ac_table] : check));
    }
  }
  return Status::Ok();
}

enum class Stop { kAtFirstScan, kAtEnd };

// Walks the markers from SOI. With kAtFirstScan, stops after validating the first SOS;
// with kAtEnd, calls `bind` (which carves the frame's buffers) at the first SOS and
// decodes every scan until EOI.
template <typename BindFn>
Status WalkMarkers(JpegState* s, const uint8_t* bytes, size_t num_bytes, Stop stop,
                   BindFn bind) {
  if (bytes == nullptr || num_bytes < 2 || bytes[0] != 0xFF || bytes[1] != 0xD8) {
    return InvalidArgument("jpeg: missing SOI marker");
  }
  EMBER_RETURN_IF_ERROR(jpeg_internal::ParseDht(kStandardDht, sizeof(kStandardDht),
                                                s->dc_specs, s->ac_specs));
  size_t pos = 2;
  // Every iteration consumes at least two bytes, so the loop ends with the data.
  while (true) {
    // Skip garbage and 0xFF fill before the marker code, as libjpeg's next_marker does.
    while (pos < num_bytes && bytes[pos] != 0xFF) ++pos;
    while (pos + 1 < num_bytes && bytes[pos + 1] == 0xFF) ++pos;
    if (pos + 1 >= num_bytes) {
      // No EOI: Pillow reports "image file is truncated" then, so this does too.
      return InvalidArgument("jpeg: truncated before %s", s->saw_sof ? "a scan" : "SOF");
    }
    const int marker = bytes[pos + 1];
    pos += 2;
    if (marker == 0xD9) {  // EOI
      if (s->num_scans == 0) return InvalidArgument("jpeg: EOI before any scan");
      return Status::Ok();
    }
    if (marker == 0x00 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;
    if (marker == 0xD8) return InvalidArgument("jpeg: unexpected SOI marker");
    if (pos + 2 > num_bytes) return InvalidArgument("jpeg: truncated marker segment");
    const size_t length = static_cast<size_t>(Read16(bytes + pos));
    if (length < 2 || length > num_bytes - pos) {
      return InvalidArgument("jpeg: marker 0x%02x segment truncated or malformed",
                             marker);
    }
    const uint8_t* p = bytes + pos + 2;
    const size_t n = length - 2;
    pos += length;
    if (marker == 0xC4) {
      EMBER_RETURN_IF_ERROR(jpeg_internal::ParseDht(p, n, s->dc_specs, s->ac_specs));
    } else if (marker == 0xDB) {
      EMBER_RETURN_IF_ERROR(ParseDqt(s, p, n));
    } else if (marker == 0xDD) {
      if (n != 2) return InvalidArgument("jpeg: bad DRI length");
      s->restart_interval = Read16(p);
    } else if (marker == 0xE0) {
      if (n >= 14 && memcmp(p, "JFIF\0", 5) == 0) s->saw_jfif = true;
    } else if (marker == 0xEE) {
      if (n >= 12 && memcmp(p, "Adobe", 5) == 0) {
        s->saw_adobe = true;
        s->adobe_transform = p[11];
      }
    } else if ((marker >= 0xE1 && marker <= 0xEF) || marker == 0xFE || marker == 0xDC ||
               marker == 0xCC) {
      // Other APPn, COM, DNL (ignored, as libjpeg does), DAC: skipped.
    } else if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC8) {
      EMBER_RETURN_IF_ERROR(ParseSof(s, marker, p, n));
    } else if (marker == 0xDA) {
      EMBER_RETURN_IF_ERROR(ParseSos(s, p, n));
      if (s->num_scans == 0) ChooseColorSpace(s);
      if (stop == Stop::kAtFirstScan) {
        jpeg_internal::HuffmanDecoder check;
        return PrepareScan(s, &check);
      }
      if (s->num_scans == 0) EMBER_RETURN_IF_ERROR(bind());
      // Each scan walks every block, so many tiny scans would make a small file cost
      // (file size x image size); real files have a few dozen at most.
      if (s->num_scans >= kMaxScans) {
        return InvalidArgument("jpeg: more than %d scans", kMaxScans);
      }
      EMBER_RETURN_IF_ERROR(PrepareScan(s, nullptr));
      EMBER_RETURN_IF_ERROR(jpeg_internal::DecodeScan(s, bytes, num_bytes, &pos));
      ++s->num_scans;
    } else {
      return InvalidArgument("jpeg: unknown marker 0x%02x", marker);
    }
  }
}

}  // namespace

Result<JpegInfo> ReadJpegInfo(const uint8_t* bytes, size_t num_bytes) {
  JpegState state;
  EMBER_RETURN_IF_ERROR(WalkMarkers(&state, bytes, num_bytes, Stop::kAtFirstScan,
                                    [] { return Status::Ok(); }));
  JpegInfo info;
  info.width = state.width;
  info.height = state.height;
  info.components = state.num_components;
  info.progressive = state.progressive;
  if (!FrameScratchBytes(state, &info.scratch_bytes)) {
    return InvalidArgument("jpeg: scratch size overflows");
  }
  return info;
}

size_t JpegScratchBytes(int width, int height) {
  if (width < 1 || height < 1 || width > jpeg_internal::kMaxDimension ||
      height > jpeg_internal::kMaxDimension) {
    return 0;
  }
  // Whatever the sampling, each of at most 3 components has at most
  // ceil(w/8) * ceil(h/8) blocks (its downsampled size is at most the image's).
  JpegState s;
  s.width = width;
  s.num_components = 3;
  for (int ci = 0; ci < 3; ++ci) {
    s.comps[ci].width_in_blocks = CeilDiv(width, 8);
    s.comps[ci].height_in_blocks = CeilDiv(height, 8);
    s.comps[ci].pad_rows = 3;
  }
  size_t bytes = 0;
  return FrameScratchBytes(s, &bytes) ? bytes : 0;
}

Status DecodeJpeg(const uint8_t* bytes, size_t num_bytes, uint8_t* scratch,
                  size_t scratch_bytes, uint8_t* rgb, size_t rgb_bytes) {
  if (scratch == nullptr && scratch_bytes > 0)
    return InvalidArgument("jpeg: null scratch");
  if (scratch_bytes < AlignUp(sizeof(jpeg_internal::JpegWorkspace)) + kAlign - 1) {
    return ResourceExhausted("jpeg: scratch of %zu bytes is too small", scratch_bytes);
  }
  uint8_t* base = reinterpret_cast<uint8_t*>(
      (reinterpret_cast<uintptr_t>(scratch) + kAlign - 1) & ~uintptr_t{kAlign - 1});
  jpeg_internal::JpegWorkspace* workspace = new (base) jpeg_internal::JpegWorkspace();
  JpegState* s = &workspace->state;
  s->dc_decoders = workspace->dc_decoders;
  s->ac_decoders = workspace->ac_decoders;
  uint8_t* row_buffers = nullptr;
  size_t row_stride = 0;
  auto bind = [&]() -> Status {
    size_t need = 0;
    if (!FrameScratchBytes(*s, &need))
      return InvalidArgument("jpeg: scratch size overflows");
    if (need > scratch_bytes) {
      return ResourceExhausted("jpeg: needs %zu bytes of scratch, has %zu", need,
                               scratch_bytes);
    }
    size_t pixels = 0, out_bytes = 0;
    if (!CheckedMul(static_cast<size_t>(s->width), static_cast<size_t>(s->height),
                    &pixels) ||
        !CheckedMul(pixels, size_t{3}, &out_bytes) || out_bytes > rgb_bytes ||
        rgb == nullptr) {
      return ResourceExhausted("jpeg: %dx%d RGB needs %zu bytes, has %zu", s->width,
                               s->height, out_bytes, rgb_bytes);
    }
    uint8_t* next = base + AlignUp(sizeof(jpeg_internal::JpegWorkspace));
    for (int ci = 0; ci < s->num_components; ++ci) {
      Component& c = s->comps[ci];
      const size_t blocks = static_cast<size_t>(c.width_in_blocks) * c.height_in_blocks;
      c.coefs = reinterpret_cast<int16_t*>(next);
      memset(c.coefs, 0, blocks * 128);
      c.plane = next + blocks * 128;
      next += blocks * 192;
      const size_t pad_bytes = static_cast<size_t>(c.width_in_blocks) * 2 * c.pad_rows;
      c.pad_dc = reinterpret_cast<int16_t*>(next);
      memset(c.pad_dc, 0, pad_bytes);
      next += AlignUp(pad_bytes);
    }
    row_buffers = next;
    row_stride = AlignUp(static_cast<size_t>(s->width));
    return Status::Ok();
  };
  EMBER_RETURN_IF_ERROR(WalkMarkers(s, bytes, num_bytes, Stop::kAtEnd, bind));
  for (int ci = 0; ci < s->num_components; ++ci) {
    if (!s->comps[ci].quant_latched) {
      return InvalidArgument("jpeg: component %d is in no scan", s->comps[ci].id);
    }
  }
  jpeg_internal::WritePixels(*s, row_buffers, row_stride, rgb);
  return Status::Ok();
}

}  // namespace ember
