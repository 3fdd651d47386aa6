// Scalar reference kernels (see reference.h). Accumulate in double: these are oracles.
#include "kernels/reference.h"

#include <cmath>

#include "kernels/half.h"
#include "kernels/kernel_table.h"
#include "kernels/quantize/kquant_pack.h"

namespace ember::kernels::reference {

void MatVecF32(const float* w, const float* x, float* y, size_t rows, size_t cols) {
  MatMulF32(w, x, 1, y, rows, rows, cols);
}

void MatMulF32(const float* w, const float* x, size_t batch, float* y, size_t y_stride,
               size_t rows, size_t cols) {
  for (size_t b = 0; b < batch; ++b) {
    for (size_t r = 0; r < rows; ++r) {
      double sum = 0;
      for (size_t c = 0; c < cols; ++c) sum += double(w[r * cols + c]) * x[b * cols + c];
      y[b * y_stride + r] = float(sum);
    }
  }
}

void GemmNnF32(const float* a, size_t a_stride, const float* b, size_t b_stride, float* y,
               size_t y_stride, size_t m, size_t n, size_t depth) {
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      double sum = 0;
      for (size_t k = 0; k < depth; ++k) {
        sum += double(a[i * a_stride + k]) * b[k * b_stride + j];
      }
      y[i * y_stride + j] = float(sum);
    }
  }
}

void RmsNorm(const float* x, const float* weight, float eps, float* out, size_t n) {
  double ss = 0;
  for (size_t i = 0; i < n; ++i) ss += double(x[i]) * x[i];
  const double inv = 1.0 / std::sqrt(ss / double(n) + eps);
  for (size_t i = 0; i < n; ++i) out[i] = float(x[i] * inv * weight[i]);
}

void RmsNormRows(float* x, const float* weight, float eps, size_t rows, size_t n) {
  for (size_t r = 0; r < rows; ++r) {
    float* row = x + r * n;
    double ss = 0;
    for (size_t i = 0; i < n; ++i) ss += double(row[i]) * row[i];
    const double inv = 1.0 / std::sqrt(ss / double(n) + eps);
    for (size_t i = 0; i < n; ++i) row[i] = float(row[i] * inv * weight[i]);
  }
}

void Scale(float* x, float s, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] = float(double(x[i]) * s);
}

void SoftCap(float* x, float cap, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] = float(cap * std::tanh(double(x[i]) / cap));
}

void LayerNorm(const float* x, const float* weight, const float* bias, float eps,
               float* out, size_t n) {
  double mean = 0;
  for (size_t i = 0; i < n; ++i) mean += x[i];
  mean /= double(n);
  double var = 0;
  for (size_t i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
  var /= double(n);
  const double inv = 1.0 / std::sqrt(var + eps);
  for (size_t i = 0; i < n; ++i) {
    out[i] = float((x[i] - mean) * inv * weight[i] + (bias ? bias[i] : 0.0));
  }
}

void Softmax(float* x, size_t n) {
  if (n == 0) return;
  float max = x[0];
  for (size_t i = 1; i < n; ++i) max = x[i] > max ? x[i] : max;
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += std::exp(double(x[i]) - max);
  for (size_t i = 0; i < n; ++i) x[i] = float(std::exp(double(x[i]) - max) / sum);
}

size_t ArgMax(const float* x, size_t n) {
  size_t best = n;  // none yet: every value so far was NaN
  for (size_t i = 0; i < n; ++i) {
    if (!std::isnan(x[i]) && (best == n || x[i] > x[best])) best = i;
  }
  return best == n ? 0 : best;
}

void Silu(float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] = float(x[i] / (1.0 + std::exp(-double(x[i]))));
}

void Relu(float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] = x[i] > 0 ? x[i] : 0.0f;
}

// gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
void GeluTanh(float* x, size_t n) {
  const double k = std::sqrt(2.0 / 3.14159265358979323846);  // (M_PI is POSIX, not C++)
  for (size_t i = 0; i < n; ++i) {
    const double v = x[i];
    x[i] = float(0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v))));
  }
}

// gelu(x) = 0.5 x (1 + erf(x / sqrt(2)))
void GeluErf(float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const double v = x[i];
    x[i] = float(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))));
  }
}

void Add(float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; ++i) a[i] += b[i];
}

void Mul(float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; ++i) a[i] *= b[i];
}

void AddBias(float* x, const float* bias, size_t rows, size_t n) {
  for (size_t r = 0; r < rows; ++r) Add(x + r * n, bias, n);
}

namespace {
// (a, b) -> (a cos - b sin, b cos + a sin), with cos and sin read back from the per-lane
// tables at the pair's first lane (cos) and second lane (sin, stored positive there).
void RotatePair(float* a, float* b, double c, double s) {
  const double va = *a, vb = *b;
  *a = float(va * c - vb * s);
  *b = float(vb * c + va * s);
}
}  // namespace

void RopeInterleaved(float* x, const float* cos, const float* sin, size_t n_heads,
                     size_t head_dim) {
  for (size_t h = 0; h < n_heads; ++h) {
    float* v = x + h * head_dim;
    for (size_t i = 0; i < head_dim / 2; ++i) {
      RotatePair(v + 2 * i, v + 2 * i + 1, cos[2 * i], sin[2 * i + 1]);
    }
  }
}

void RopeHalf(float* x, const float* cos, const float* sin, size_t n_heads,
              size_t head_dim) {
  const size_t half = head_dim / 2;
  for (size_t h = 0; h < n_heads; ++h) {
    float* v = x + h * head_dim;
    for (size_t i = 0; i < half; ++i)
      RotatePair(v + i, v + i + half, cos[i], sin[i + half]);
  }
}

namespace {
// s[t] = scale * score(t) (then softcap tanh(s / softcap) when softcap > 0),
// probs = softmax(s), out = sum_t probs[t] value(t, i), in double.
template <class Score, class Value>
void AttendWith(size_t n_pos, size_t head_dim, float scale, float softcap,
                const Score& score, const Value& value, float* probs, float* out) {
  for (size_t t = 0; t < n_pos; ++t) {
    const double s = score(t) * scale;
    probs[t] = float(softcap > 0 ? softcap * std::tanh(s / softcap) : s);
  }
  Softmax(probs, n_pos);
  for (size_t i = 0; i < head_dim; ++i) {
    double sum = 0;
    for (size_t t = 0; t < n_pos; ++t) sum += double(probs[t]) * value(t, i);
    out[i] = float(sum);
  }
}
}  // namespace

void Attend(const float* q, const float* keys, const float* values, size_t kv_stride,
            size_t n_pos, size_t head_dim, float scale, float softcap, float* probs,
            float* out) {
  AttendWith(
      n_pos, head_dim, scale, softcap,
      [&](size_t t) {
        double dot = 0;
        for (size_t i = 0; i < head_dim; ++i)
          dot += double(q[i]) * keys[t * kv_stride + i];
        return dot;
      },
      [&](size_t t, size_t i) { return double(values[t * kv_stride + i]); }, probs, out);
}

void AttendF16(const float* q, const uint16_t* keys, const uint16_t* values,
               size_t kv_stride, size_t n_pos, size_t head_dim, float scale,
               float softcap, float* probs, float* out) {
  AttendWith(
      n_pos, head_dim, scale, softcap,
      [&](size_t t) {
        double dot = 0;
        for (size_t i = 0; i < head_dim; ++i) {
          dot += double(q[i]) * HalfToFloat(keys[t * kv_stride + i]);
        }
        return dot;
      },
      [&](size_t t, size_t i) { return double(HalfToFloat(values[t * kv_stride + i])); },
      probs, out);
}

void AttendQ8(const int8_t* q, const float* q_scales, const int8_t* keys,
              const float* key_scales, const int8_t* values, const float* value_scales,
              size_t kv_stride, size_t scale_stride, size_t n_pos, size_t head_dim,
              float scale, float softcap, float* probs, float* out) {
  AttendWith(
      n_pos, head_dim, scale, softcap,
      [&](size_t t) {
        double dot = 0;
        for (size_t g = 0; g * kKvGroup < head_dim; ++g) {
          int32_t group_dot = 0;
          for (size_t i = g * kKvGroup; i < (g + 1) * kKvGroup && i < head_dim; ++i) {
            group_dot += int32_t{q[i]} * keys[t * kv_stride + i];
          }
          dot += double(group_dot) * q_scales[g] * key_scales[t * scale_stride + g];
        }
        return dot;
      },
      [&](size_t t, size_t i) {
        return double(values[t * kv_stride + i]) *
               value_scales[t * scale_stride + i / kKvGroup];
      },
      probs, out);
}

void QuantizeKv(const float* x, size_t n_heads, size_t head_dim, size_t head_stride,
                int8_t* q, float* scales) {
  const size_t groups = KvGroups(head_dim);
  for (size_t h = 0; h < n_heads; ++h) {
    for (size_t g = 0; g < groups; ++g) {
      const size_t begin = g * kKvGroup;
      const size_t end = begin + kKvGroup < head_dim ? begin + kKvGroup : head_dim;
      float absmax = 0.0f;
      for (size_t i = begin; i < end; ++i) {
        const float a = std::fabs(x[h * head_dim + i]);
        absmax = a > absmax ? a : absmax;
      }
      const float s = absmax / 127.0f;
      scales[h * groups + g] = s;
      const size_t stored = head_stride >= groups * kKvGroup ? begin + kKvGroup : end;
      for (size_t i = begin; i < stored; ++i) {
        int value = 0;
        if (i < end && s > 0.0f) {
          value = static_cast<int>(std::nearbyint(x[h * head_dim + i] / s));
          value = value < -127 ? -127 : (value > 127 ? 127 : value);
        }
        q[h * head_stride + i] = static_cast<int8_t>(value);
      }
    }
  }
}

void QuantizeActs(const float* x, size_t batch, size_t cols, int8_t* q, float* scales,
                  int32_t* sums, int32_t* half_sums) {
  const size_t groups = QuantGroups(cols);
  for (size_t b = 0; b < batch; ++b) {
    for (size_t g = 0; g < groups; ++g) {
      const size_t begin = g * kQuantGroup;
      float absmax = 0.0f;
      for (size_t i = begin; i < begin + kQuantGroup && i < cols; ++i) {
        absmax = std::fabs(x[b * cols + i]) > absmax ? std::fabs(x[b * cols + i]) : absmax;
      }
      const float scale = absmax / 127.0f;
      int32_t sum = 0;
      for (size_t i = begin; i < begin + kQuantGroup; ++i) {
        int value = 0;
        if (i < cols && scale > 0.0f) {  // not for zeros (or a NaN input)
          value = static_cast<int>(std::nearbyint(x[b * cols + i] / scale));
          value = value < -127 ? -127 : (value > 127 ? 127 : value);
        }
        q[b * groups * kQuantGroup + i] = static_cast<int8_t>(value);
        sum += value;
        if (i == begin + kQuantGroup / 2 - 1 && half_sums)
          half_sums[b * groups + g] = sum;
      }
      scales[b * groups + g] = scale;
      sums[b * groups + g] = sum;
    }
  }
}

void MatMulQuant(QuantKind kind, const uint8_t* w, const int8_t* xq, const float* xscales,
                 size_t batch, float* y, size_t y_stride, size_t rows, size_t cols) {
  const size_t groups = QuantGroups(cols);
  for (size_t b = 0; b < batch; ++b) {
    const int8_t* xb = xq + b * groups * kQuantGroup;
    for (size_t r = 0; r < rows; ++r) {
      float acc = 0.0f;
      for (size_t g = 0; g < groups; ++g) {
        int32_t dot = 0;
        for (size_t i = g * kQuantGroup; i < (g + 1) * kQuantGroup && i < cols; ++i) {
          dot += QuantValue(kind, w, cols, r, i) * int32_t{xb[i]};
        }
        const float scale = QuantScale(kind, w, cols, r, g) * xscales[b * groups + g];
        acc = acc + static_cast<float>(dot) * scale;
      }
      y[b * y_stride + r] = acc;
    }
  }
}

void MatMulKQuant(KQuantKind kind, const uint8_t* w, const int8_t* xq,
                  const float* xscales, size_t batch, float* y, size_t y_stride,
                  size_t rows, size_t cols) {
  const size_t groups = cols / kQuantGroup;
  KQuantBlockValues block;
  for (size_t b = 0; b < batch; ++b) {
    const int8_t* xb = xq + b * cols;
    for (size_t r = 0; r < rows; ++r) {
      float acc = 0.0f;
      for (size_t g = 0; g < groups; ++g) {
        const size_t j = g % kKQuantGroups;  // the group within its super-block
        if (j == 0) GetKQuantBlock(kind, w, cols, r, g / kKQuantGroups, &block);
        const int8_t* xg = xb + g * kQuantGroup;
        const uint8_t* q = block.q + j * kQuantGroup;
        const float xs = xscales[b * groups + g], d = HalfToFloat(block.d);
        if (kind == KQuantKind::kQ6K) {
          int32_t idot = 0;
          for (size_t h = 0; h < 2; ++h) {
            int32_t dot = 0;
            for (size_t i = 16 * h; i < 16 * h + 16; ++i)
              dot += (q[i] - 32) * int32_t{xg[i]};
            idot += block.scales[2 * j + h] * dot;
          }
          acc = acc + static_cast<float>(idot) * (d * xs);
          continue;
        }
        int32_t dot = 0, sum = 0;
        for (size_t i = 0; i < kQuantGroup; ++i) {
          dot += q[i] * int32_t{xg[i]};
          sum += xg[i];
        }
        const float ws = d * static_cast<float>(block.scales[j]);
        const float wm = HalfToFloat(block.dmin) * static_cast<float>(block.mins[j]);
        acc = acc + static_cast<float>(dot) * (ws * xs);
        acc = acc - wm * (xs * static_cast<float>(sum));
      }
      y[b * y_stride + r] = acc;
    }
  }
}

void UnpackKQuantToGgml(KQuantKind kind, const uint8_t* packed, size_t rows, size_t cols,
                        uint8_t* ggml_rows) {
  const size_t blocks = KQuantSuperBlocks(cols);
  KQuantBlockValues block;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t s = 0; s < blocks; ++s) {
      GetKQuantBlock(kind, packed, cols, r, s, &block);
      WriteGgmlKQuantBlock(kind, block,
                           ggml_rows + (r * blocks + s) * GgmlKQuantBlockBytes(kind));
    }
  }
}

namespace {
template <float (*kToFloat)(uint16_t)>
void MatMul16(const uint16_t* w, const float* x, size_t batch, float* y, size_t y_stride,
              size_t rows, size_t cols) {
  for (size_t b = 0; b < batch; ++b) {
    for (size_t r = 0; r < rows; ++r) {
      double sum = 0;
      for (size_t c = 0; c < cols; ++c) {
        sum += double(kToFloat(w[r * cols + c])) * x[b * cols + c];
      }
      y[b * y_stride + r] = float(sum);
    }
  }
}
}  // namespace

void MatMulF16(const uint16_t* w, const float* x, size_t batch, float* y, size_t y_stride,
               size_t rows, size_t cols) {
  MatMul16<HalfToFloat>(w, x, batch, y, y_stride, rows, cols);
}

void MatMulBF16(const uint16_t* w, const float* x, size_t batch, float* y,
                size_t y_stride, size_t rows, size_t cols) {
  MatMul16<BFloat16ToFloat>(w, x, batch, y, y_stride, rows, cols);
}

}  // namespace ember::kernels::reference
