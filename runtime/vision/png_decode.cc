// PNG decoding into caller memory (png_decode.h): chunks checked (lengths, CRCs, order),
// IDAT inflated across chunks into the filtered rows, each Adam7 pass unfiltered in
// place, then every pixel converted to RGB at its place in the image.
#include "runtime/vision/png_decode.h"

#include <cstring>

#include "runtime/vision/inflate.h"

namespace ember {
namespace {

constexpr int kMaxEdge = 1 << 16;

uint32_t Be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

struct CrcTable {
  uint32_t entries[256];
  constexpr CrcTable() : entries() {
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
      entries[n] = c;
    }
  }
};
constexpr CrcTable kCrc;

uint32_t Crc32(const uint8_t* p, size_t n) {
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) c = kCrc.entries[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

struct Chunk {
  uint32_t length = 0;
  const uint8_t* type = nullptr;  // 4 bytes
  const uint8_t* data = nullptr;
  size_t next = 0;  // offset of the chunk after it
  bool Is(const char* name) const { return std::memcmp(type, name, 4) == 0; }
};

// The chunk at `offset`, its bounds checked; its CRC too when `check_crc`.
Status ReadChunk(const uint8_t* bytes, size_t n, size_t offset, bool check_crc,
                 Chunk* c) {
  if (offset > n || n - offset < 12) {
    return InvalidArgument("image: PNG truncated (a chunk at byte %zu)", offset);
  }
  c->length = Be32(bytes + offset);
  if (c->length > 0x7fffffffu || c->length > n - offset - 12) {
    return InvalidArgument("image: PNG truncated or corrupt (a chunk of %u bytes at %zu)",
                           c->length, offset);
  }
  c->type = bytes + offset + 4;
  c->data = bytes + offset + 8;
  c->next = offset + 12 + c->length;
  if (check_crc && Crc32(c->type, c->length + 4) != Be32(c->data + c->length)) {
    return InvalidArgument("image: PNG chunk %.4s at byte %zu has a bad CRC",
                           reinterpret_cast<const char*>(c->type), offset);
  }
  return Status::Ok();
}

// Adam7: pass p starts at (x0, y0) and steps (dx, dy); pass 0 alone when not interlaced.
struct Pass {
  int x0, y0, dx, dy;
};
constexpr Pass kAdam7[7] = {{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4},
                            {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}};
constexpr Pass kWhole = {0, 0, 1, 1};

int PassSize(int size, int start, int step) {
  return size > start ? (size - start + step - 1) / step : 0;
}

size_t RowBytes(int width, int bits_per_pixel) {
  return (static_cast<size_t>(width) * bits_per_pixel + 7) / 8;
}

// Pillow's alpha_composite over opaque white in its 7-bit fixed point: with the
// background's alpha 255, c = div255(v * 128 a + 255 * 128 (255 - a) + 128 * 128) >> 7.
inline uint8_t OverWhite(uint32_t value, uint32_t alpha) {
  if (alpha == 0) return 255;
  const uint32_t sum = value * (alpha << 7) + 255 * ((255 - alpha) << 7) + (0x80 << 7);
  return static_cast<uint8_t>((((sum >> 8) + sum) >> 8) >> 7);
}

inline int Paeth(int a, int b, int c) {
  const int p = a + b - c;
  const int pa = p > a ? p - a : a - p;
  const int pb = p > b ? p - b : b - p;
  const int pc = p > c ? p - c : c - p;
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

// Undoes the filters of `rows` rows of `row_bytes` (each after its filter byte), in
// place.
Status Unfilter(uint8_t* data, int rows, size_t row_bytes, int bpp) {
  const uint8_t* prior = nullptr;
  for (int y = 0; y < rows; ++y) {
    uint8_t* line = data + static_cast<size_t>(y) * (row_bytes + 1);
    const uint8_t filter = line[0];
    uint8_t* row = line + 1;
    switch (filter) {
      case 0:
        break;
      case 1:
        for (size_t i = bpp; i < row_bytes; ++i) row[i] += row[i - bpp];
        break;
      case 2:
        if (prior)
          for (size_t i = 0; i < row_bytes; ++i) row[i] += prior[i];
        break;
      case 3:
        for (size_t i = 0; i < row_bytes; ++i) {
          const int left = i >= static_cast<size_t>(bpp) ? row[i - bpp] : 0;
          const int up = prior ? prior[i] : 0;
          row[i] += static_cast<uint8_t>((left + up) >> 1);
        }
        break;
      case 4:
        for (size_t i = 0; i < row_bytes; ++i) {
          const int left = i >= static_cast<size_t>(bpp) ? row[i - bpp] : 0;
          const int up = prior ? prior[i] : 0;
          const int corner = prior && i >= static_cast<size_t>(bpp) ? prior[i - bpp] : 0;
          row[i] += static_cast<uint8_t>(Paeth(left, up, corner));
        }
        break;
      default:
        return InvalidArgument("image: PNG row filter %d", filter);
    }
    prior = row;
  }
  return Status::Ok();
}

// What converting a pixel needs: the palette and the transparency.
struct Colors {
  const PngInfo* info;
  const uint8_t* palette = nullptr;  // (entries, 3)
  int palette_entries = 0;
  const uint8_t* palette_alpha = nullptr;  // tRNS for a palette
  int palette_alphas = 0;
  bool has_key = false;  // tRNS for gray or RGB
  uint16_t key[3] = {0, 0, 0};
  bool over_white = true;
};

// Sample `index` of a row at `depth` bits (MSB first below 8 bits; big-endian at 16).
inline uint32_t Sample(const uint8_t* row, size_t index, int depth) {
  switch (depth) {
    case 8:
      return row[index];
    case 16:
      return (uint32_t{row[2 * index]} << 8) | row[2 * index + 1];
    default: {
      const size_t bit = index * depth;
      return (row[bit / 8] >> (8 - depth - bit % 8)) & ((1u << depth) - 1);
    }
  }
}

// A gray sample as Pillow holds it in 8 bits: 1, 2, 4 bits scaled up (L;1, L;2, L;4:
// 255 / (2^depth - 1) per step), 16 bits clipped (I;16 to L).
inline uint32_t Gray8(uint32_t v, int depth) {
  switch (depth) {
    case 1:
      return v * 255;
    case 2:
      return v * 85;
    case 4:
      return v * 17;
    case 16:
      return v > 255 ? 255 : v;
    default:
      return v;
  }
}

void Put(const Colors& k, uint32_t r, uint32_t g, uint32_t b, uint32_t a, uint8_t* out) {
  if (k.over_white && a != 255) {
    out[0] = OverWhite(r, a);
    out[1] = OverWhite(g, a);
    out[2] = OverWhite(b, a);
  } else {
    out[0] = static_cast<uint8_t>(r);
    out[1] = static_cast<uint8_t>(g);
    out[2] = static_cast<uint8_t>(b);
  }
}

// Converts pixel x of a row to RGB at out.
void Convert(const Colors& k, const uint8_t* row, size_t x, uint8_t* out) {
  const int depth = k.info->bit_depth;
  // 16-bit samples keep the high byte (Pillow's ;16B raw modes).
  auto high = [depth](uint32_t v) { return depth == 16 ? v >> 8 : v; };
  switch (k.info->color_type) {
    case 0: {
      const uint32_t raw = Sample(row, x, depth);
      const uint32_t v = Gray8(raw, depth);
      // Pillow compares the transparent gray with the value it holds (its quirk below 8
      // bits: the key is not scaled).
      const uint32_t a = k.has_key && v == k.key[0] ? 0 : 255;
      Put(k, v, v, v, a, out);
      break;
    }
    case 2: {
      const uint32_t r = high(Sample(row, 3 * x, depth));
      const uint32_t g = high(Sample(row, 3 * x + 1, depth));
      const uint32_t b = high(Sample(row, 3 * x + 2, depth));
      const uint32_t a =
          k.has_key && r == k.key[0] && g == k.key[1] && b == k.key[2] ? 0 : 255;
      Put(k, r, g, b, a, out);
      break;
    }
    case 3: {
      const uint32_t i = Sample(row, x, depth);
      if (static_cast<int>(i) >= k.palette_entries) {
        Put(k, 0, 0, 0, 255, out);
        break;
      }
      const uint8_t* c = k.palette + 3 * i;
      const uint32_t a =
          static_cast<int>(i) < k.palette_alphas ? k.palette_alpha[i] : 255;
      Put(k, c[0], c[1], c[2], a, out);
      break;
    }
    case 4: {
      const uint32_t v = high(Sample(row, 2 * x, depth));
      const uint32_t a = high(Sample(row, 2 * x + 1, depth));
      Put(k, v, v, v, a, out);
      break;
    }
    default: {
      const uint32_t r = high(Sample(row, 4 * x, depth));
      const uint32_t g = high(Sample(row, 4 * x + 1, depth));
      const uint32_t b = high(Sample(row, 4 * x + 2, depth));
      const uint32_t a = high(Sample(row, 4 * x + 3, depth));
      Put(k, r, g, b, a, out);
      break;
    }
  }
}

// IDAT chunks as one stream, for InflateZlib.
struct IdatStream {
  const uint8_t* bytes;
  size_t n;
  size_t offset;  // the next chunk to read
  bool done = false;
};

bool NextIdat(void* context, const uint8_t** data, size_t* size) {
  auto* s = static_cast<IdatStream*>(context);
  if (s->done) return false;
  Chunk c;
  if (!ReadChunk(s->bytes, s->n, s->offset, false, &c).ok() || !c.Is("IDAT")) {
    s->done = true;
    return false;
  }
  *data = c.data;
  *size = c.length;
  s->offset = c.next;
  return true;
}

}  // namespace

int PngInfo::channels() const {
  switch (color_type) {
    case 2:
      return 3;
    case 4:
      return 2;
    case 6:
      return 4;
    default:
      return 1;
  }
}

Result<PngInfo> ReadPngInfo(const uint8_t* bytes, size_t n) {
  static const uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (bytes == nullptr || n < 8 || std::memcmp(bytes, kSignature, 8) != 0) {
    return InvalidArgument("image: not a PNG file");
  }
  Chunk c;
  EMBER_RETURN_IF_ERROR(ReadChunk(bytes, n, 8, true, &c));
  if (!c.Is("IHDR") || c.length != 13) return InvalidArgument("image: PNG without IHDR");
  PngInfo info;
  const uint32_t width = Be32(c.data), height = Be32(c.data + 4);
  if (width == 0 || height == 0 || width > kMaxEdge || height > kMaxEdge) {
    return InvalidArgument("image: PNG of %ux%u pixels", width, height);
  }
  info.width = static_cast<int>(width);
  info.height = static_cast<int>(height);
  info.bit_depth = c.data[8];
  info.color_type = c.data[9];
  const int d = info.bit_depth;
  bool valid = false;
  switch (info.color_type) {
    case 0:
      valid = d == 1 || d == 2 || d == 4 || d == 8 || d == 16;
      break;
    case 3:
      valid = d == 1 || d == 2 || d == 4 || d == 8;
      break;
    case 2:
    case 4:
    case 6:
      valid = d == 8 || d == 16;
      break;
  }
  if (!valid) {
    return InvalidArgument("image: PNG color type %d with %d-bit samples",
                           info.color_type, d);
  }
  if (c.data[10] != 0 || c.data[11] != 0 || c.data[12] > 1) {
    return InvalidArgument("image: PNG compression %d, filter %d, interlace %d",
                           c.data[10], c.data[11], c.data[12]);
  }
  info.interlaced = c.data[12] == 1;
  info.alpha = info.color_type == 4 || info.color_type == 6;
  // tRNS comes before the first IDAT: look for it.
  for (size_t offset = c.next; offset < n;) {
    Chunk k;
    if (!ReadChunk(bytes, n, offset, false, &k).ok() || k.Is("IDAT")) break;
    if (k.Is("tRNS")) info.alpha = true;
    offset = k.next;
  }
  return info;
}

size_t PngScratchBytes(int width, int height) {
  if (width <= 0 || height <= 0 || width > kMaxEdge || height > kMaxEdge) return 0;
  // Filtered rows: 8 bytes a pixel at most, and a filter byte per row of each of the
  // seven passes (the passes' widths sum to the width, their rows to at most 7 x height).
  // In 64 bits: on a 32-bit board the product can pass SIZE_MAX.
  const uint64_t bytes = uint64_t{8} * width * height + uint64_t{63} * height + 64;
  return bytes <= SIZE_MAX ? static_cast<size_t>(bytes) : 0;
}

Status DecodePng(const uint8_t* bytes, size_t n, bool over_white, uint8_t* scratch,
                 size_t scratch_bytes, uint8_t* rgb, size_t rgb_bytes) {
  Result<PngInfo> read = ReadPngInfo(bytes, n);
  if (!read.ok()) return read.status();
  const PngInfo& info = *read;
  const uint64_t pixels = uint64_t{static_cast<uint32_t>(info.width)} * info.height;
  if (rgb == nullptr || rgb_bytes / 3 < pixels) {
    return ResourceExhausted("image: %dx%d needs %llu bytes of RGB, %zu given",
                             info.width, info.height,
                             static_cast<unsigned long long>(pixels * 3), rgb_bytes);
  }
  Colors colors;
  colors.info = &info;
  colors.over_white = over_white;

  // The chunks before the image data: PLTE and tRNS; then where the IDATs start.
  size_t offset = 8;
  size_t first_idat = 0;
  bool seen_end = false;
  while (!seen_end) {
    Chunk c;
    EMBER_RETURN_IF_ERROR(ReadChunk(bytes, n, offset, true, &c));
    if (c.Is("IHDR")) {
      if (offset != 8) return InvalidArgument("image: PNG with two IHDR chunks");
    } else if (c.Is("PLTE")) {
      if (first_idat != 0)
        return InvalidArgument("image: PNG palette after the image data");
      if (c.length == 0 || c.length % 3 != 0 || c.length > 768) {
        return InvalidArgument("image: PNG palette of %u bytes", c.length);
      }
      colors.palette = c.data;
      colors.palette_entries = static_cast<int>(c.length / 3);
    } else if (c.Is("tRNS") && first_idat == 0) {
      if (info.color_type == 3) {
        colors.palette_alpha = c.data;
        colors.palette_alphas = static_cast<int>(c.length < 256 ? c.length : 256);
      } else if (info.color_type == 0 && c.length >= 2) {
        colors.has_key = true;
        colors.key[0] = static_cast<uint16_t>((c.data[0] << 8) | c.data[1]);
      } else if (info.color_type == 2 && c.length >= 6) {
        colors.has_key = true;
        for (int i = 0; i < 3; ++i) {
          colors.key[i] = static_cast<uint16_t>((c.data[2 * i] << 8) | c.data[2 * i + 1]);
        }
      }
    } else if (c.Is("IDAT")) {
      if (first_idat == 0) first_idat = offset;
    } else if (c.Is("IEND")) {
      seen_end = true;
    }
    offset = c.next;
    // Everything needed is known at the first IDAT; stop at its run's end.
    if (first_idat != 0 && !c.Is("IDAT")) break;
    if (offset >= n) break;
  }
  if (first_idat == 0) return InvalidArgument("image: PNG without image data");
  if (info.color_type == 3 && colors.palette == nullptr) {
    return InvalidArgument("image: PNG palette image without a palette");
  }

  // The passes' filtered rows, in scratch.
  const int bits_per_pixel = info.channels() * info.bit_depth;
  const int bpp = bits_per_pixel >= 8 ? bits_per_pixel / 8 : 1;
  const Pass* passes = info.interlaced ? kAdam7 : &kWhole;
  const int num_passes = info.interlaced ? 7 : 1;
  uint64_t total = 0;  // 64 bits: past SIZE_MAX on a 32-bit board it is refused
  for (int p = 0; p < num_passes; ++p) {
    const int w = PassSize(info.width, passes[p].x0, passes[p].dx);
    const int h = PassSize(info.height, passes[p].y0, passes[p].dy);
    if (w > 0 && h > 0) {
      const uint64_t row_bytes =
          (uint64_t{static_cast<uint32_t>(w)} * bits_per_pixel + 7) / 8;
      total += uint64_t{static_cast<uint32_t>(h)} * (row_bytes + 1);
    }
  }
  if (scratch == nullptr || total > scratch_bytes) {
    return ResourceExhausted("image: PNG rows need %llu bytes of scratch, %zu given",
                             static_cast<unsigned long long>(total), scratch_bytes);
  }
  IdatStream stream{bytes, n, first_idat};
  EMBER_RETURN_IF_ERROR(
      InflateZlib(&NextIdat, &stream, scratch, static_cast<size_t>(total)));

  uint8_t* data = scratch;
  for (int p = 0; p < num_passes; ++p) {
    const Pass& pass = passes[p];
    const int w = PassSize(info.width, pass.x0, pass.dx);
    const int h = PassSize(info.height, pass.y0, pass.dy);
    if (w == 0 || h == 0) continue;
    const size_t row_bytes = RowBytes(w, bits_per_pixel);
    EMBER_RETURN_IF_ERROR(Unfilter(data, h, row_bytes, bpp));
    for (int y = 0; y < h; ++y) {
      const uint8_t* row = data + static_cast<size_t>(y) * (row_bytes + 1) + 1;
      const size_t out_y =
          static_cast<size_t>(pass.y0) + static_cast<size_t>(y) * pass.dy;
      uint8_t* out_row = rgb + out_y * info.width * 3;
      for (int x = 0; x < w; ++x) {
        const size_t out_x =
            static_cast<size_t>(pass.x0) + static_cast<size_t>(x) * pass.dx;
        Convert(colors, row, x, out_row + out_x * 3);
      }
    }
    data += static_cast<size_t>(h) * (row_bytes + 1);
  }
  return Status::Ok();
}

}  // namespace ember
