// Pillow's two-pass resize for 8-bit RGB (resample.h).
#include "runtime/vision/resample.h"

#include <cmath>
#include <cstring>

namespace ember {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;  // Pillow's 8-bit coefficients: 22 bits
constexpr double kPi = 3.14159265358979323846;

double Sinc(double x) {
  if (x == 0.0) return 1.0;
  x *= kPi;
  return std::sin(x) / x;
}

// The filters, each with its support (the half-width it reaches at scale 1).
double Filter(ResampleFilter filter, double x) {
  switch (filter) {
    case ResampleFilter::kBox:
      return x > -0.5 && x <= 0.5 ? 1.0 : 0.0;
    case ResampleFilter::kBilinear:
      x = std::fabs(x);
      return x < 1.0 ? 1.0 - x : 0.0;
    case ResampleFilter::kHamming:
      x = std::fabs(x);
      if (x == 0.0) return 1.0;
      if (x >= 1.0) return 0.0;
      x *= kPi;
      return std::sin(x) / x * (0.54 + 0.46 * std::cos(x));
    case ResampleFilter::kBicubic: {
      // Keys' cubic with a = -0.5.
      constexpr double a = -0.5;
      x = std::fabs(x);
      if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
      if (x < 2.0) return (((x - 5.0) * x + 8.0) * x - 4.0) * a;
      return 0.0;
    }
    case ResampleFilter::kLanczos:
      // sinc(x) sinc(x / 3) on [-3, 3).
      return x >= -3.0 && x < 3.0 ? Sinc(x) * Sinc(x / 3.0) : 0.0;
  }
  return 0.0;
}

double Support(ResampleFilter filter) {
  switch (filter) {
    case ResampleFilter::kBox:
      return 0.5;
    case ResampleFilter::kBilinear:
    case ResampleFilter::kHamming:
      return 1.0;
    case ResampleFilter::kBicubic:
      return 2.0;
    case ResampleFilter::kLanczos:
      return 3.0;
  }
  return 1.0;
}

// One axis: for output index i, inputs [first[i], first[i] + count[i]) weighted by
// weights[i * taps, ...) in fixed point.
struct Axis {
  int taps = 0;
  int* first = nullptr;
  int* count = nullptr;
  int32_t* weights = nullptr;
};

int Taps(int in_size, int out_size, ResampleFilter filter) {
  double scale = static_cast<double>(in_size) / out_size;
  if (scale < 1.0) scale = 1.0;
  return static_cast<int>(std::ceil(Support(filter) * scale)) * 2 + 1;
}

// In 64 bits: the bounds below check the totals against SIZE_MAX (32-bit boards).
uint64_t AxisBytes(int out_size, int taps) {
  return uint64_t{static_cast<uint32_t>(out_size)} *
         (2 * sizeof(int) + uint64_t{static_cast<uint32_t>(taps)} * sizeof(int32_t));
}

// Pillow's precompute_coeffs then normalize_coeffs_8bpc, over the whole input
// [0, in_size): centers at (i + 0.5) * scale, windows rounded by +0.5, weights
// normalized to sum 1 in double, then rounded half away from zero to 22 bits.
void PlanAxis(int in_size, int out_size, ResampleFilter filter, uint8_t* memory,
              Axis* axis) {
  axis->taps = Taps(in_size, out_size, filter);
  axis->first = reinterpret_cast<int*>(memory);
  axis->count = axis->first + out_size;
  axis->weights = reinterpret_cast<int32_t*>(axis->count + out_size);
  const double scale = static_cast<double>(in_size) / out_size;
  const double filter_scale = scale < 1.0 ? 1.0 : scale;
  const double support = Support(filter) * filter_scale;
  const double inverse = 1.0 / filter_scale;
  for (int i = 0; i < out_size; ++i) {
    const double center = (i + 0.5) * scale;
    int lo = static_cast<int>(center - support + 0.5);
    if (lo < 0) lo = 0;
    int hi = static_cast<int>(center + support + 0.5);
    if (hi > in_size) hi = in_size;
    const int n = hi - lo;
    double sum = 0.0;
    for (int x = 0; x < n; ++x) sum += Filter(filter, (x + lo - center + 0.5) * inverse);
    int32_t* k = axis->weights + static_cast<size_t>(i) * axis->taps;
    for (int x = 0; x < n; ++x) {
      double w = Filter(filter, (x + lo - center + 0.5) * inverse);
      if (sum != 0.0) w /= sum;
      const double fixed = w * (1 << kPrecisionBits);
      k[x] = static_cast<int32_t>(fixed < 0 ? fixed - 0.5 : fixed + 0.5);
    }
    for (int x = n; x < axis->taps; ++x) k[x] = 0;
    axis->first[i] = lo;
    axis->count[i] = n;
  }
}

inline uint8_t Clip8(int32_t sum) {
  if (sum >= (1 << kPrecisionBits << 8)) return 255;
  if (sum <= 0) return 0;
  return static_cast<uint8_t>(sum >> kPrecisionBits);
}

// rows [0, rows) of `out` (out_width pixels) from rows [row0, row0 + rows) of `in`.
void Horizontal(const uint8_t* in, int in_width, int row0, int rows, const Axis& axis,
                int out_width, uint8_t* out) {
  const size_t in_stride = static_cast<size_t>(in_width) * 3;
  for (int y = 0; y < rows; ++y) {
    const uint8_t* src = in + (row0 + y) * in_stride;
    uint8_t* dst = out + static_cast<size_t>(y) * out_width * 3;
    for (int x = 0; x < out_width; ++x) {
      const int32_t* k = axis.weights + static_cast<size_t>(x) * axis.taps;
      const uint8_t* p = src + static_cast<size_t>(axis.first[x]) * 3;
      int32_t s0 = 1 << (kPrecisionBits - 1), s1 = s0, s2 = s0;
      for (int t = 0; t < axis.count[x]; ++t) {
        s0 += p[3 * t + 0] * k[t];
        s1 += p[3 * t + 1] * k[t];
        s2 += p[3 * t + 2] * k[t];
      }
      dst[3 * x + 0] = Clip8(s0);
      dst[3 * x + 1] = Clip8(s1);
      dst[3 * x + 2] = Clip8(s2);
    }
  }
}

// Every row of `out` from rows first[y] - row0 ... of `in` (width values of 3 bytes).
void Vertical(const uint8_t* in, int width, int row0, const Axis& axis, int out_height,
              uint8_t* out) {
  const size_t stride = static_cast<size_t>(width) * 3;
  for (int y = 0; y < out_height; ++y) {
    const int32_t* k = axis.weights + static_cast<size_t>(y) * axis.taps;
    const uint8_t* src = in + (axis.first[y] - row0) * stride;
    uint8_t* dst = out + y * stride;
    for (size_t v = 0; v < stride; ++v) {
      int32_t s = 1 << (kPrecisionBits - 1);
      for (int t = 0; t < axis.count[y]; ++t) s += src[t * stride + v] * k[t];
      dst[v] = Clip8(s);
    }
  }
}

// The input rows the vertical pass reads: [first, last).
void RowSpan(const Axis& axis, int out_height, int* first, int* last) {
  *first = axis.first[0];
  *last = axis.first[out_height - 1] + axis.count[out_height - 1];
}

// Edges up to 65536 (as the decoder's): every product below fits in 64 bits, and in
// 32 bits for the images a 32-bit board can hold.
bool ValidSize(int edge) { return edge > 0 && edge <= (1 << 16); }

bool ValidFilter(ResampleFilter filter) {
  const int n = static_cast<int>(filter);
  return n >= 1 && n <= 5;
}

}  // namespace

bool ResampleFilterFromPil(int pil_number, ResampleFilter* filter) {
  if (pil_number < 1 || pil_number > 5) return false;
  *filter = static_cast<ResampleFilter>(pil_number);
  return true;
}

const char* ResampleFilterName(ResampleFilter filter) {
  switch (filter) {
    case ResampleFilter::kLanczos:
      return "lanczos";
    case ResampleFilter::kBilinear:
      return "bilinear";
    case ResampleFilter::kBicubic:
      return "bicubic";
    case ResampleFilter::kBox:
      return "box";
    case ResampleFilter::kHamming:
      return "hamming";
  }
  return "?";
}

size_t ResizeScratchBytes(int in_width, int in_height, int out_width, int out_height,
                          ResampleFilter filter) {
  if (!ValidSize(in_width) || !ValidSize(in_height) || !ValidSize(out_width) ||
      !ValidSize(out_height) || !ValidFilter(filter)) {
    return 0;
  }
  auto up = [](uint64_t n) { return (n + 63) / 64 * 64; };
  // The coefficients, then the horizontal pass's rows: at most every input row,
  // out_width pixels wide.
  const uint64_t total = up(AxisBytes(out_width, Taps(in_width, out_width, filter))) +
                         up(AxisBytes(out_height, Taps(in_height, out_height, filter))) +
                         up(uint64_t{3} * static_cast<uint32_t>(out_width) *
                            static_cast<uint32_t>(in_height)) +
                         64;
  return total <= SIZE_MAX ? static_cast<size_t>(total) : 0;
}

size_t ResizeScratchBound(int max_in_width, int max_in_height, int out_width,
                          int out_height, ResampleFilter filter) {
  if (!ValidSize(max_in_width) || !ValidSize(max_in_height) || !ValidSize(out_width) ||
      !ValidSize(out_height) || !ValidFilter(filter)) {
    return 0;
  }
  // taps <= 2 (support * max(in / out, 1) + 1) + 1, so one axis's words are at most
  // out (2 + taps) <= 2 support max(in, out) + 5 out.
  auto axis = [&](int in, int out) {
    const double words = 2.0 * Support(filter) * (in > out ? in : out) + 5.0 * out + 64;
    return static_cast<uint64_t>(words) * sizeof(int32_t) + 64;
  };
  const uint64_t total = axis(max_in_width, out_width) + axis(max_in_height, out_height) +
                         uint64_t{3} * static_cast<uint32_t>(out_width) *
                             static_cast<uint32_t>(max_in_height) +
                         128;
  return total <= SIZE_MAX ? static_cast<size_t>(total) : 0;
}

Status ResizeRgb(const RgbImage& in, int out_width, int out_height, ResampleFilter filter,
                 uint8_t* scratch, size_t scratch_bytes, uint8_t* out) {
  if (in.rgb == nullptr || out == nullptr) return InvalidArgument("resize: no pixels");
  if (!ValidFilter(filter)) return InvalidArgument("resize: unknown filter");
  const size_t needed =
      ResizeScratchBytes(in.width, in.height, out_width, out_height, filter);
  if (needed == 0) {
    return InvalidArgument("resize: %dx%d to %dx%d", in.width, in.height, out_width,
                           out_height);
  }
  if (scratch_bytes < needed) {
    return ResourceExhausted("resize: %zu bytes of scratch, %zu needed", scratch_bytes,
                             needed);
  }
  const size_t align = 64;
  uint8_t* p = scratch + (align - reinterpret_cast<uintptr_t>(scratch) % align) % align;
  auto up = [&](size_t n) { return (n + align - 1) / align * align; };
  Axis horizontal, vertical;
  PlanAxis(in.width, out_width, filter, p, &horizontal);
  p += up(static_cast<size_t>(AxisBytes(out_width, horizontal.taps)));
  PlanAxis(in.height, out_height, filter, p, &vertical);
  p += up(static_cast<size_t>(AxisBytes(out_height, vertical.taps)));
  uint8_t* rows = p;

  // Pillow skips a pass whose size does not change (the box is the whole image).
  const bool need_horizontal = out_width != in.width;
  const bool need_vertical = out_height != in.height;
  if (!need_horizontal && !need_vertical) {
    std::memcpy(out, in.rgb, static_cast<size_t>(in.width) * in.height * 3);
    return Status::Ok();
  }
  if (!need_vertical) {
    Horizontal(in.rgb, in.width, 0, in.height, horizontal, out_width, out);
    return Status::Ok();
  }
  if (!need_horizontal) {
    Vertical(in.rgb, in.width, 0, vertical, out_height, out);
    return Status::Ok();
  }
  int first = 0, last = 0;
  RowSpan(vertical, out_height, &first, &last);
  Horizontal(in.rgb, in.width, first, last - first, horizontal, out_width, rows);
  Vertical(rows, out_width, first, vertical, out_height, out);
  return Status::Ok();
}

}  // namespace ember
