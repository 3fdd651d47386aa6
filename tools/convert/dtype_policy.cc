// The converter's per-tensor dtype choice (see dtype_policy.h).
#include "tools/convert/dtype_policy.h"

#include <fnmatch.h>

#include <cstdio>

#include "kernels/kquant_layout.h"
#include "runtime/model/tensor.h"
#include "runtime/model/tensor_names.h"

namespace ember::tools {
namespace {

constexpr DType kAllTypes[] = {DType::kF32, DType::kF16, DType::kBF16, DType::kQ8,
                               DType::kQ4,  DType::kQ4K, DType::kQ5K,  DType::kQ6K};

bool IsQuantizedType(DType d) {
  return d == DType::kQ8 || d == DType::kQ4 || IsKQuant(d);
}

// llama.cpp's use_more_bits: the first and last eighth of the layers and every third
// layer between get more bits.
bool UseMoreBits(unsigned layer, unsigned layers) {
  return layer < layers / 8 || layer >= 7 * layers / 8 || (layer - layers / 8) % 3 == 2;
}

// The layer of "blk.N.<suffix>", or false.
bool LayerOf(const std::string& name, const char* suffix, unsigned* layer) {
  int end = 0;
  if (sscanf(name.c_str(), "blk.%u.%n", layer, &end) != 1 || end <= 0) return false;
  return name.compare(static_cast<size_t>(end), std::string::npos, suffix) == 0;
}

// The K-quant type of a matrix under a mix (see ChooseDTypes).
DType MixType(const WeightTypes& types, const TensorSpec& t, unsigned layers,
              bool is_classifier) {
  if (is_classifier) return DType::kQ6K;
  if (types.mix == QuantMix::kNone) return types.matrix;
  unsigned layer;
  if ((LayerOf(t.name, "attn_v.weight", &layer) ||
       LayerOf(t.name, "ffn_down.weight", &layer)) &&
      UseMoreBits(layer, layers)) {
    return DType::kQ6K;
  }
  return types.mix == QuantMix::kQ4KM ? DType::kQ4K : DType::kQ5K;
}

}  // namespace

Status ParseDTypeName(const std::string& name, DType* dtype) {
  for (DType d : kAllTypes) {
    if (name == DTypeName(d)) {
      *dtype = d;
      return Status::Ok();
    }
  }
  return InvalidArgument(
      "'%s' is not a weight type (f32, f16, bf16, q8, q4, q4_k, q5_k, q6_k)",
      name.c_str());
}

Status ParseWeightTypes(const std::string& name, WeightTypes* out) {
  if (name == "q4_k_m" || name == "q5_k_m") {
    out->mix = name == "q4_k_m" ? QuantMix::kQ4KM : QuantMix::kQ5KM;
    out->matrix = name == "q4_k_m" ? DType::kQ4K : DType::kQ5K;
    return Status::Ok();
  }
  out->mix = QuantMix::kNone;
  if (ParseDTypeName(name, &out->matrix).ok()) return Status::Ok();
  return InvalidArgument(
      "'%s' is not a weight type (f32, f16, bf16, q8, q4, q4_k, q5_k, q6_k) or mix "
      "(q4_k_m, q5_k_m)",
      name.c_str());
}

Status ParseDTypeOverride(const std::string& text, DTypeOverride* out) {
  const size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0) {
    return InvalidArgument("--keep %s: expected PATTERN=DTYPE", text.c_str());
  }
  out->pattern = text.substr(0, eq);
  Status s = ParseDTypeName(text.substr(eq + 1), &out->dtype);
  if (!s.ok()) return InvalidArgument("--keep %s: %s", text.c_str(), s.message());
  return Status::Ok();
}

Status ChooseDTypes(DType matrix_dtype, const std::vector<DTypeOverride>& overrides,
                    ModelSpec* spec, std::vector<std::string>* notes) {
  WeightTypes types;
  types.matrix = matrix_dtype;
  return ChooseDTypes(types, overrides, spec, notes);
}

Status ChooseDTypes(const WeightTypes& types, const std::vector<DTypeOverride>& overrides,
                    ModelSpec* spec, std::vector<std::string>* notes) {
  const bool k_quants = IsKQuant(types.matrix);
  const DType classifier_dtype = types.matrix == DType::kQ4 ? DType::kQ8 : types.matrix;
  bool has_output = false;
  for (const TensorSpec& t : spec->tensors)
    has_output = has_output || t.name == names::kOutput;
  for (TensorSpec& t : spec->tensors) {
    const bool is_classifier =
        t.name == names::kOutput || (!has_output && t.name == names::kTokEmbedding);
    // Position and segment tables, a classification head and an embedding's dense
    // projections stay f32 (small, and computed in f32 only).
    const bool vision = names::IsVisionTensor(t.name.c_str());
    if (t.shape.size() != 2 || t.name == names::kPosEmbedding ||
        t.name == std::string("v.") + names::kPosEmbedding ||
        t.name == names::kTokTypes || t.name.compare(0, 4, "cls.") == 0 ||
        t.name.compare(0, 6, "dense.") == 0) {
      t.dtype = DType::kF32;
    } else if (vision) {
      // A vision tower's matrices: as asked, but q8 for q4 and the K-quants (small next
      // to the text model; 4-bit error would add up over every patch of every layer).
      const DType m = types.matrix;
      t.dtype = m == DType::kQ4 || IsKQuant(m) ? DType::kQ8 : m;
    } else if (k_quants) {
      t.dtype = MixType(types, t, spec->config.n_layers, is_classifier);
      if (t.shape[1] % kernels::kKQuantBlock != 0) {
        if (notes) {
          notes->push_back(
              t.name + ": " + std::to_string(t.shape[1]) + " columns, not a " +
              "multiple of 256: stored as q8 instead of " + DTypeName(t.dtype));
        }
        t.dtype = DType::kQ8;
      }
    } else if (t.name == names::kTokEmbedding || t.name == names::kOutput) {
      t.dtype = classifier_dtype;
    } else {
      t.dtype = types.matrix;
    }
  }
  return ApplyDTypeOverrides(overrides, spec);
}

Status ApplyDTypeOverrides(const std::vector<DTypeOverride>& overrides, ModelSpec* spec) {
  for (const DTypeOverride& o : overrides) {
    bool matched = false;
    for (TensorSpec& t : spec->tensors) {
      if (fnmatch(o.pattern.c_str(), t.name.c_str(), 0) != 0) continue;
      matched = true;
      if (IsQuantizedType(o.dtype) && t.shape.size() != 2) {
        return InvalidArgument("--keep %s=%s: '%s' is not a matrix (%s needs one)",
                               o.pattern.c_str(), DTypeName(o.dtype), t.name.c_str(),
                               DTypeName(o.dtype));
      }
      if (IsKQuant(o.dtype) && t.shape[1] % kernels::kKQuantBlock != 0) {
        return InvalidArgument(
            "--keep %s=%s: '%s' has %llu columns (K-quants need a multiple of 256)",
            o.pattern.c_str(), DTypeName(o.dtype), t.name.c_str(),
            static_cast<unsigned long long>(t.shape[1]));
      }
      t.dtype = o.dtype;
    }
    if (!matched) {
      return InvalidArgument("--keep %s=%s matches no tensor", o.pattern.c_str(),
                             DTypeName(o.dtype));
    }
  }
  return Status::Ok();
}

}  // namespace ember::tools
