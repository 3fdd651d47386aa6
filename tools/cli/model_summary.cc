// Model summaries (see model_summary.h).
#include "tools/cli/model_summary.h"

#include <cmath>
#include <cstring>

#include "kernels/half.h"
#include "kernels/kquant_layout.h"
#include "kernels/quant_layout.h"
#include "runtime/model/parameter_counts.h"
#include "runtime/model/tensor.h"

namespace ember::tools {

// Both from the runtime's one count (runtime/model/parameter_counts.h), which the C API's
// ember_model_info reports too.
std::vector<KindCount> ParametersByKind(const Model& model) {
  const ParameterCounts counts = CountParameters(model);
  std::vector<KindCount> present;
  for (size_t k = 0; k < kNumParameterKinds; ++k) {
    const ParameterCount& c = counts.by_kind[k];
    if (c.tensors) {
      present.push_back(
          {ParameterKindName(static_cast<ParameterKind>(k)), c.parameters, c.tensors});
    }
  }
  return present;
}

std::vector<DTypeCount> DTypeCounts(const Model& model) {
  const ParameterCounts counts = CountParameters(model);
  std::vector<DTypeCount> present;
  for (size_t d = 0; d < kNumDTypes; ++d) {
    const ParameterCount& c = counts.by_dtype[d];
    if (c.tensors) {
      present.push_back({static_cast<DType>(d), c.parameters, c.bytes, c.tensors});
    }
  }
  return present;
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
