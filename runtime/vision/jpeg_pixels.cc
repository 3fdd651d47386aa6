// JPEG coefficients to RGB as libjpeg-turbo 2.1: ISLOW IDCT, upsampling, YCbCr->RGB.
#include <algorithm>

#include "runtime/vision/jpeg_internal.h"

namespace ember {
namespace jpeg_internal {
namespace {

// jidctint.c's fixed point: constants scaled by 2^13, pass 1 keeps 2 extra bits.
constexpr int kConstBits = 13;
constexpr int kPass1Bits = 2;
constexpr int64_t kFix0298631336 = 2446;
constexpr int64_t kFix0390180644 = 3196;
constexpr int64_t kFix0541196100 = 4433;
constexpr int64_t kFix0765366865 = 6270;
constexpr int64_t kFix0899976223 = 7373;
constexpr int64_t kFix1175875602 = 9633;
constexpr int64_t kFix1501321110 = 12299;
constexpr int64_t kFix1847759065 = 15137;
constexpr int64_t kFix1961570560 = 16069;
constexpr int64_t kFix2053119869 = 16819;
constexpr int64_t kFix2562915447 = 20995;
constexpr int64_t kFix3072711026 = 25172;

inline int64_t Descale(int64_t x, int n) { return (x + (int64_t{1} << (n - 1))) >> n; }

// libjpeg's post-IDCT range limit: the value is taken mod 1024 as a signed 10-bit
// number (so wild values wrap rather than saturate), then offset by 128 and clamped.
inline uint8_t RangeLimit(int64_t x) {
  const int wrapped = (static_cast<int>(x & 1023) ^ 512) - 512;
  return static_cast<uint8_t>(std::clamp(wrapped + 128, 0, 255));
}

// One 1-D 8-point IDCT (the even/odd butterfly of jidctint.c) on in[0..7]; returns the
// outputs before descaling, as 64-bit sums scaled by 2^13.
struct Butterfly {
  int64_t out[8];
  explicit Butterfly(const int64_t* in) {
    int64_t z2 = in[2], z3 = in[6];
    int64_t z1 = (z2 + z3) * kFix0541196100;
    const int64_t tmp2e = z1 - z3 * kFix1847759065;
    const int64_t tmp3e = z1 + z2 * kFix0765366865;
    z2 = in[0];
    z3 = in[4];
    const int64_t tmp0e = (z2 + z3) * (int64_t{1} << kConstBits);
    const int64_t tmp1e = (z2 - z3) * (int64_t{1} << kConstBits);
    const int64_t tmp10 = tmp0e + tmp3e, tmp13 = tmp0e - tmp3e;
    const int64_t tmp11 = tmp1e + tmp2e, tmp12 = tmp1e - tmp2e;

    int64_t tmp0 = in[7], tmp1 = in[5], tmp2 = in[3], tmp3 = in[1];
    z1 = tmp0 + tmp3;
    z2 = tmp1 + tmp2;
    z3 = tmp0 + tmp2;
    int64_t z4 = tmp1 + tmp3;
    const int64_t z5 = (z3 + z4) * kFix1175875602;
    tmp0 *= kFix0298631336;
    tmp1 *= kFix2053119869;
    tmp2 *= kFix3072711026;
    tmp3 *= kFix1501321110;
    z1 *= -kFix0899976223;
    z2 *= -kFix2562915447;
    z3 = z3 * -kFix1961570560 + z5;
    z4 = z4 * -kFix0390180644 + z5;
    tmp0 += z1 + z3;
    tmp1 += z2 + z4;
    tmp2 += z2 + z3;
    tmp3 += z1 + z4;
    out[0] = tmp10 + tmp3;
    out[7] = tmp10 - tmp3;
    out[1] = tmp11 + tmp2;
    out[6] = tmp11 - tmp2;
    out[2] = tmp12 + tmp1;
    out[5] = tmp12 - tmp1;
    out[3] = tmp13 + tmp0;
    out[4] = tmp13 - tmp0;
  }
};

// libjpeg's progressive block smoothing (jdcoefct.c, libjpeg-turbo 2.1): when a
// component's first 9 AC coefficients are not all known exactly, each still-zero one is
// estimated from the DC values of the 5x5 neighbouring blocks. A kernel is indexed
// [row - r + 2][column - b + 2]; `interpolated` applies when no AC coefficient was ever
// coded (then DC is re-estimated too), `plain` otherwise (only the first 5 have one).
struct SmoothingKernel {
  int natural_index;
  int16_t interpolated[5][5];
  int16_t plain[5][5];
};

constexpr SmoothingKernel kSmoothing[9] = {
    {1,  // zigzag 1: horizontal frequency 1
     {{-1, -1, 0, 1, 1},
      {-3, 13, 0, -13, 3},
      {-3, 38, 0, -38, 3},
      {-3, 13, 0, -13, 3},
      {-1, -1, 0, 1, 1}},
     {{0}, {0}, {-7, 50, 0, -50, 7}, {0}, {0}}},
    {8,  // zigzag 2: vertical frequency 1 (the transpose)
     {{-1, -3, -3, -3, -1},
      {-1, 13, 38, 13, -1},
      {0},
      {1, -13, -38, -13, 1},
      {1, 3, 3, 3, 1}},
     {{0, 0, -7, 0, 0}, {0, 0, 50, 0, 0}, {0}, {0, 0, -50, 0, 0}, {0, 0, 7, 0, 0}}},
    {16,
     {{0, 0, 1, 0, 0},
      {0, 2, 7, 2, 0},
      {0, -5, -14, -5, 0},
      {0, 2, 7, 2, 0},
      {0, 0, 1, 0, 0}},
     {{0, 0, -1, 0, 0},
      {0, 0, 13, 0, 0},
      {0, 0, -24, 0, 0},
      {0, 0, 13, 0, 0},
      {0, 0, -1, 0, 0}}},
    {9,
     {{-1, 0, 0, 0, 1}, {0, 9, 0, -9, 0}, {0}, {0, -9, 0, 9, 0}, {1, 0, 0, 0, -1}},
     {{0, -1, 0, 1, 0}, {-1, 10, 0, -10, 1}, {0}, {1, -10, 0, 10, -1}, {0, 1, 0, -1, 0}}},
    {2,
     {{0}, {0, 2, -5, 2, 0}, {1, 7, -14, 7, 1}, {0, 2, -5, 2, 0}, {0}},
     {{0}, {0}, {-1, 13, -24, 13, -1}, {0}, {0}}},
    {3, {{0}, {0, 1, 0, -1, 0}, {0, 2, 0, -2, 0}, {0, 1, 0, -1, 0}, {0}}, {{0}}},
    {10, {{0}, {0, 1, -3, 1, 0}, {0}, {0, -1, 3, -1, 0}, {0}}, {{0}}},
    {17, {{0}, {0, 1, 0, -1, 0}, {0, -3, 0, 3, 0}, {0, 1, 0, -1, 0}, {0}}, {{0}}},
    {24, {{0}, {0, 1, 2, 1, 0}, {0}, {0, -1, -2, -1, 0}, {0}}, {{0}}},
};

constexpr int16_t kSmoothingDc[5][5] = {{-2, -6, -8, -6, -2},
                                        {-6, 6, 42, 6, -6},
                                        {-8, 42, 152, 42, -8},
                                        {-6, 6, 42, 6, -6},
                                        {-2, -6, -8, -6, -2}};

// libjpeg smooths when every component's DC is at least partly known, the quantizers of
// DC and the first 9 AC coefficients are nonzero, and some AC among them is inexact.
bool SmoothingApplies(const JpegState& s) {
  if (!s.progressive) return false;
  bool useful = false;
  for (int ci = 0; ci < s.num_components; ++ci) {
    const Component& c = s.comps[ci];
    if (!c.quant_latched || c.quant[0] == 0 || c.coef_bits[0] < 0) return false;
    for (const SmoothingKernel& k : kSmoothing) {
      if (c.quant[k.natural_index] == 0) return false;
    }
    for (int i = 1; i < 10; ++i) useful |= c.coef_bits[i] != 0;
  }
  return useful;
}

// round(num / (q * 256)) with the sign handled as libjpeg does, capped below 2^al when
// the coefficient is known to bit al.
// The quotient is narrowed to int (wrapping, as libjpeg's cast does on hostile data)
// and negated in unsigned arithmetic so that wrapping stays defined.
int16_t SmoothingPrediction(int64_t num, int64_t q, int al) {
  const bool negative = num < 0;
  const int64_t quotient = ((q << 7) + (negative ? -num : num)) / (q << 8);
  int32_t pred = static_cast<int32_t>(static_cast<uint32_t>(quotient));
  if (al > 0 && pred >= (1 << al)) pred = (1 << al) - 1;
  const uint32_t bits = static_cast<uint32_t>(pred);
  return static_cast<int16_t>(negative ? 0u - bits : bits);
}

constexpr int kTwoColumnWindow[2][5] = {{0, 0, 0, 1, 0}, {0, 0, 1, 0, 0}};

// Applies block smoothing to `block` (a copy of block row r, column b of c).
void SmoothBlock(const JpegState& s, const Component& c, int r, int b, int16_t* block) {
  // Neighbouring block rows as libjpeg-turbo 2.1 picks them: its tests mix the row
  // within the iMCU row (v block rows) with the iMCU row index, so the row two above is
  // used only past the second iMCU row or block row, and the ones below stop at the
  // last iMCU row (possibly reaching its MCU-padding rows before that).
  const int v = c.v, m = r / v, block_row = r % v, last = s.mcus_y - 1;
  int block_rows = v;
  if (m == last && c.height_in_blocks % v != 0) block_rows = c.height_in_blocks % v;
  int rows[5];
  rows[2] = r;
  rows[1] = (block_row > 0 || m > 0) ? r - 1 : r;
  rows[0] = (block_row > 1 || m > 1) ? r - 2 : rows[1];
  rows[3] = (block_row < block_rows - 1 || m < last) ? r + 1 : r;
  rows[4] = (block_row < block_rows - 2 || m + 1 < last) ? r + 2 : rows[3];
  const int last_row = c.height_in_blocks + c.pad_rows - 1;
  int dc[5][5];
  for (int i = 0; i < 5; ++i) {
    const int row = std::clamp(rows[i], 0, last_row);
    for (int j = 0; j < 5; ++j) {
      // Columns b-2..b+2 clamped to the component, except that libjpeg-turbo 2.1 never
      // loads the column two to the right when there are only two block columns (its
      // sliding window then keeps column 0 there).
      const int col = c.width_in_blocks == 2
                          ? kTwoColumnWindow[b][j]
                          : std::clamp(b - 2 + j, 0, c.width_in_blocks - 1);
      dc[i][j] = row < c.height_in_blocks
                     ? c.coefs[(static_cast<size_t>(row) * c.width_in_blocks + col) * 64]
                     : c.pad_dc[static_cast<size_t>(row - c.height_in_blocks) *
                                    c.width_in_blocks +
                                col];
    }
  }
  bool interpolate_dc = true;
  for (int i = 1; i < 10; ++i) interpolate_dc &= c.coef_bits[i] == -1;
  const int64_t q00 = static_cast<uint16_t>(c.quant[0]);
  for (int k = 0; k < 9; ++k) {
    if (!interpolate_dc && k >= 5) break;
    const SmoothingKernel& kernel = kSmoothing[k];
    const int al = c.coef_bits[k + 1];
    if (al == 0 || block[kernel.natural_index] != 0) continue;
    int64_t sum = 0;
    for (int i = 0; i < 5; ++i) {
      for (int j = 0; j < 5; ++j) {
        sum +=
            (interpolate_dc ? kernel.interpolated[i][j] : kernel.plain[i][j]) * dc[i][j];
      }
    }
    const int64_t q = static_cast<uint16_t>(c.quant[kernel.natural_index]);
    block[kernel.natural_index] = SmoothingPrediction(q00 * sum, q, al);
  }
  if (interpolate_dc) {
    int64_t sum = 0;
    for (int i = 0; i < 5; ++i) {
      for (int j = 0; j < 5; ++j) sum += kSmoothingDc[i][j] * dc[i][j];
    }
    block[0] = SmoothingPrediction(q00 * sum, q00, 0);
  }
}

// Upsampling method per component, chosen as jdsample.c's jinit_upsampler does.
enum class Upsample { kFull, kH2V1Fancy, kH1V2Fancy, kH2V2Fancy, kReplicate };

struct ComponentRows {
  Upsample method = Upsample::kFull;
  int h_expand = 1, v_expand = 1;
};

ComponentRows ChooseUpsample(const JpegState& s, const Component& c) {
  ComponentRows r;
  const bool h2 = c.h * 2 == s.max_h, h1 = c.h == s.max_h;
  const bool v2 = c.v * 2 == s.max_v, v1 = c.v == s.max_v;
  if (h1 && v1) {
    r.method = Upsample::kFull;
  } else if (h2 && v1 && c.downsampled_w > 2) {
    r.method = Upsample::kH2V1Fancy;
  } else if (h1 && v2) {
    r.method = Upsample::kH1V2Fancy;
  } else if (h2 && v2 && c.downsampled_w > 2) {
    r.method = Upsample::kH2V2Fancy;
  } else {
    r.method = Upsample::kReplicate;  // frame parsing refused non-integral ratios
  }
  r.h_expand = s.max_h / c.h;
  r.v_expand = s.max_v / c.v;
  return r;
}

// Row y (in output pixels) of component c upsampled to out[0, width).
const uint8_t* UpsampleRow(const JpegState& s, const Component& c, const ComponentRows& m,
                           int y, uint8_t* out) {
  const size_t stride = static_cast<size_t>(c.width_in_blocks) * 8;
  const int width = s.width;
  const int dw = c.downsampled_w;
  switch (m.method) {
    case Upsample::kFull:
      return c.plane + static_cast<size_t>(y) * stride;
    case Upsample::kH2V1Fancy: {
      // Triangle filter: 3/4 nearer + 1/4 further sample, biases 1 and 2 alternating.
      const uint8_t* in = c.plane + static_cast<size_t>(y) * stride;
      for (int x = 0; x < width; ++x) {
        const int i = x >> 1;
        const int near3 = in[i] * 3;
        out[x] =
            (x & 1) ? static_cast<uint8_t>((near3 + in[std::min(i + 1, dw - 1)] + 2) >> 2)
                    : static_cast<uint8_t>((near3 + in[std::max(i - 1, 0)] + 1) >> 2);
      }
      return out;
    }
    case Upsample::kH1V2Fancy:
    case Upsample::kH2V2Fancy: {
      // The nearer row is y / 2; the further one is above for even y, below for odd y,
      // clamped to the component's real rows (libjpeg's context-row edge replication).
      const int row = y >> 1;
      const int other =
          (y & 1) ? std::min(row + 1, c.downsampled_h - 1) : std::max(row - 1, 0);
      const uint8_t* in0 = c.plane + static_cast<size_t>(row) * stride;
      const uint8_t* in1 = c.plane + static_cast<size_t>(other) * stride;
      if (m.method == Upsample::kH1V2Fancy) {
        const int bias = (y & 1) ? 2 : 1;
        for (int x = 0; x < width; ++x) {
          out[x] = static_cast<uint8_t>((in0[x] * 3 + in1[x] + bias) >> 2);
        }
        return out;
      }
      for (int x = 0; x < width; ++x) {
        const int i = x >> 1;
        const int j = (x & 1) ? std::min(i + 1, dw - 1) : std::max(i - 1, 0);
        const int this_sum = in0[i] * 3 + in1[i];
        const int next_sum = in0[j] * 3 + in1[j];
        out[x] = static_cast<uint8_t>((this_sum * 3 + next_sum + ((x & 1) ? 7 : 8)) >> 4);
      }
      return out;
    }
    case Upsample::kReplicate: {
      const uint8_t* in = c.plane + static_cast<size_t>(y / m.v_expand) * stride;
      for (int x = 0; x < width; ++x) out[x] = in[x / m.h_expand];
      return out;
    }
  }
  return out;
}

// jdcolor.c's ycc_rgb_convert: 16-bit fixed point, FIX(x) = round(x * 2^16).
constexpr int kScaleBits = 16;
constexpr int32_t Fix(double x) {
  return static_cast<int32_t>(x * (1 << kScaleBits) + 0.5);
}
inline uint8_t Clamp255(int v) { return static_cast<uint8_t>(std::clamp(v, 0, 255)); }

}  // namespace

void IdctIslow(const int16_t* coefs, const int16_t* quant, uint8_t* out, size_t stride) {
  int32_t workspace[64];
  int64_t in[8];
  // Pass 1: columns, dequantized; results scaled up by 2^kPass1Bits and stored as int,
  // as libjpeg's workspace does. (Its all-AC-zero shortcut gives the same values.)
  for (int col = 0; col < 8; ++col) {
    for (int k = 0; k < 8; ++k) {
      in[k] = static_cast<int32_t>(coefs[k * 8 + col]) * quant[k * 8 + col];
    }
    const Butterfly b(in);
    for (int k = 0; k < 8; ++k) {
      workspace[k * 8 + col] =
          static_cast<int32_t>(Descale(b.out[k], kConstBits - kPass1Bits));
    }
  }
  // Pass 2: rows; removes the pass-1 scaling and the 8x of the 2-D transform.
  for (int row = 0; row < 8; ++row) {
    for (int k = 0; k < 8; ++k) in[k] = workspace[row * 8 + k];
    const Butterfly b(in);
    uint8_t* dst = out + static_cast<size_t>(row) * stride;
    for (int k = 0; k < 8; ++k) {
      dst[k] = RangeLimit(Descale(b.out[k], kConstBits + kPass1Bits + 3));
    }
  }
}

void WritePixels(const JpegState& s, uint8_t* row_buffers, size_t row_stride,
                 uint8_t* rgb) {
  ComponentRows methods[kMaxComponents];
  const bool smooth = SmoothingApplies(s);
  for (int ci = 0; ci < s.num_components; ++ci) {
    const Component& c = s.comps[ci];
    const size_t stride = static_cast<size_t>(c.width_in_blocks) * 8;
    for (int by = 0; by < c.height_in_blocks; ++by) {
      for (int bx = 0; bx < c.width_in_blocks; ++bx) {
        const size_t block = static_cast<size_t>(by) * c.width_in_blocks + bx;
        const int16_t* coefs = c.coefs + block * 64;
        int16_t smoothed[64];
        if (smooth) {
          for (int k = 0; k < 64; ++k) smoothed[k] = coefs[k];
          SmoothBlock(s, c, by, bx, smoothed);
          coefs = smoothed;
        }
        IdctIslow(coefs, c.quant, c.plane + static_cast<size_t>(by) * 8 * stride + bx * 8,
                  stride);
      }
    }
    methods[ci] = ChooseUpsample(s, c);
  }
  const size_t width = static_cast<size_t>(s.width);
  for (int y = 0; y < s.height; ++y) {
    uint8_t* dst = rgb + static_cast<size_t>(y) * width * 3;
    if (s.num_components == 1) {
      const uint8_t* gray = UpsampleRow(s, s.comps[0], methods[0], y, row_buffers);
      for (size_t x = 0; x < width; ++x)
        dst[3 * x] = dst[3 * x + 1] = dst[3 * x + 2] = gray[x];
      continue;
    }
    const uint8_t* rows[3];
    for (int ci = 0; ci < 3; ++ci) {
      rows[ci] =
          UpsampleRow(s, s.comps[ci], methods[ci], y, row_buffers + ci * row_stride);
    }
    if (s.color == ColorSpace::kRgb) {
      for (size_t x = 0; x < width; ++x) {
        dst[3 * x] = rows[0][x];
        dst[3 * x + 1] = rows[1][x];
        dst[3 * x + 2] = rows[2][x];
      }
      continue;
    }
    // R = Y + 1.402 Cr', G = Y - 0.34414 Cb' - 0.71414 Cr', B = Y + 1.772 Cb', with
    // Cb' = Cb - 128; R and B round each term, G rounds the sum (jdcolor.c's tables).
    constexpr int32_t kHalf = 1 << (kScaleBits - 1);
    for (size_t x = 0; x < width; ++x) {
      const int luma = rows[0][x];
      const int cb = rows[1][x] - 128, cr = rows[2][x] - 128;
      const int red = (Fix(1.40200) * cr + kHalf) >> kScaleBits;
      const int blue = (Fix(1.77200) * cb + kHalf) >> kScaleBits;
      const int green = (-Fix(0.71414) * cr + (-Fix(0.34414) * cb + kHalf)) >> kScaleBits;
      dst[3 * x] = Clamp255(luma + red);
      dst[3 * x + 1] = Clamp255(luma + green);
      dst[3 * x + 2] = Clamp255(luma + blue);
    }
  }
}

}  // namespace jpeg_internal
}  // namespace ember
