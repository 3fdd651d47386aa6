// Model summaries (see model_summary.h).
#include "tools/cli/model_summary.h"

#include <cmath>
#include <cstring>

#include "kernels/half.h"
#include "kernels/kquant_layout.h"
#include "kernels/quant_layout.h"
#include "runtime/model/tensor.h"

namespace ember::tools {
namespace {

uint64_t Elements(const Tensor& t) {
  uint64_t n = 1;
  for (uint32_t d = 0; d < t.n_dims; ++d) n *= t.shape[d];
  return n;
}

// The kind of a tensor from its GGUF-style name (runtime/model/tensor_names.h).
const char* KindOf(const char* name) {
  struct Rule {
    const char* fragment;
    const char* kind;
  };
  static const Rule kRules[] = {
      {"attn_q.", "W_q"},
      {"attn_k.", "W_k"},
      {"attn_v.", "W_v"},
      {"attn_output.", "W_o"},
      {"ffn_gate.", "ffn"},
      {"ffn_up.", "ffn"},
      {"ffn_down.", "ffn"},
      {"norm.", "norms"},
      {"token_embd.", "embeddings"},
      {"position_embd.", "embeddings"},
      {"output.", "classifier"},
  };
  for (const Rule& r : kRules) {
    if (strstr(name, r.fragment)) return r.kind;
  }
  return "other";
}

}  // namespace

std::vector<KindCount> ParametersByKind(const Model& model) {
  std::vector<KindCount> kinds;
  for (const char* k : {"embeddings", "W_q", "W_k", "W_v", "W_o", "ffn", "norms",
                        "classifier", "other"}) {
    kinds.push_back({k, 0, 0});
  }
  for (const Tensor& t : model.tensors()) {
    for (KindCount& k : kinds) {
      if (k.kind == KindOf(t.name)) {
        k.parameters += Elements(t);
        k.tensors += 1;
      }
    }
  }
  std::vector<KindCount> present;
  for (const KindCount& k : kinds) {
    if (k.tensors) present.push_back(k);
  }
  return present;
}

std::vector<DTypeCount> DTypeCounts(const Model& model) {
  std::vector<DTypeCount> counts;
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16, DType::kQ8, DType::kQ4,
                  DType::kQ4K, DType::kQ5K, DType::kQ6K}) {
    DTypeCount c{d, 0, 0, 0};
    for (const Tensor& t : model.tensors()) {
      if (t.dtype != d) continue;
      c.parameters += Elements(t);
      c.bytes += t.size_bytes;
      c.tensors += 1;
    }
    if (c.tensors) counts.push_back(c);
  }
  return counts;
}

std::string DTypeMix(const Model& model) {
  std::string mix;
  for (const DTypeCount& c : DTypeCounts(model)) {
    if (!mix.empty()) mix += " ";
    mix += std::string(DTypeName(c.dtype)) + ":" + std::to_string(c.tensors);
  }
  return mix;
}

std::vector<NonFiniteTensor> FindNonFiniteWeights(const Model& model) {
  std::vector<NonFiniteTensor> found;
  for (const Tensor& t : model.tensors()) {
    NonFiniteTensor r{t.name};
    const auto count = [&r](uint64_t index, bool nan, bool inf) {
      if (!nan && !inf) return;
      if (r.nan + r.inf == 0) r.first = index;
      r.nan += nan;
      r.inf += inf;
    };
    const uint64_t n = Elements(t);
    // 16-bit floats: exponent all ones is Inf (zero mantissa) or NaN.
    const auto half = [&](uint16_t exponent, uint16_t mantissa) {
      uint16_t v;
      for (uint64_t i = 0; i < n; ++i) {
        memcpy(&v, t.data + 2 * i, 2);
        if ((v & exponent) == exponent)
          count(i, (v & mantissa) != 0, (v & mantissa) == 0);
      }
    };
    switch (t.dtype) {
      case DType::kF32:
        for (uint64_t i = 0; i < n; ++i) {
          float v;
          memcpy(&v, t.data + 4 * i, 4);
          count(i, std::isnan(v), std::isinf(v));
        }
        break;
      case DType::kF16:
        half(0x7C00, 0x03FF);
        break;
      case DType::kBF16:
        half(0x7F80, 0x007F);
        break;
      case DType::kQ8:
      case DType::kQ4: {
        const kernels::QuantKind kind =
            t.dtype == DType::kQ8 ? kernels::QuantKind::kQ8 : kernels::QuantKind::kQ4;
        const uint64_t rows = t.rows(), cols = t.cols(),
                       groups = kernels::QuantGroups(cols);
        for (uint64_t row = 0; row < rows; ++row) {
          for (uint64_t g = 0; g < groups; ++g) {
            const float scale = kernels::QuantScale(kind, t.data, cols, row, g);
            count(row * groups + g, std::isnan(scale), std::isinf(scale));
          }
        }
        break;
      }
      case DType::kQ4K:
      case DType::kQ5K:
      case DType::kQ6K: {  // d and dmin of each row's super-blocks
        const uint64_t rows = t.rows(), cols = t.cols(),
                       blocks = kernels::KQuantSuperBlocks(cols);
        kernels::KQuantBlockValues b;
        for (uint64_t row = 0; row < rows; ++row) {
          for (uint64_t s = 0; s < blocks; ++s) {
            kernels::GetKQuantBlock(KQuantKindOf(t.dtype), t.data, cols, row, s, &b);
            const float d = kernels::HalfToFloat(b.d),
                        dmin = kernels::HalfToFloat(b.dmin);
            count(row * blocks + s, std::isnan(d) || std::isnan(dmin),
                  std::isinf(d) || std::isinf(dmin));
          }
        }
        break;
      }
    }
    if (r.nan + r.inf) found.push_back(r);
  }
  return found;
}

}  // namespace ember::tools
