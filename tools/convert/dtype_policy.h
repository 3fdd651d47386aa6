// Which type each tensor of a converted model is stored in: --dtype for the weight
// matrices (a type, or one of llama.cpp's K-quant mixes), fixed defaults for the rest,
// and --keep PATTERN=DTYPE overrides.
#ifndef EMBER_TOOLS_CONVERT_DTYPE_POLICY_H_
#define EMBER_TOOLS_CONVERT_DTYPE_POLICY_H_

#include <string>
#include <vector>

#include "runtime/model/config.h"
#include "runtime/model/model_writer.h"
#include "runtime/status.h"

namespace ember::tools {

// "f32", "f16", "bf16", "q8", "q4", "q4_k", "q5_k" or "q6_k" (as DTypeName spells them).
Status ParseDTypeName(const std::string& name, DType* dtype);

// What --dtype asks for: one type for the matrices, or a mix of K-quants by tensor.
enum class QuantMix : uint8_t {
  kNone,  // `matrix` for every matrix (with the classifier rules of ChooseDTypes)
  kQ4KM,  // llama.cpp's Q4_K_M: q4_k; q6_k for the classifier, half of attn_v/ffn_down
  kQ5KM,  // llama.cpp's Q5_K_M: the same with q5_k
};
struct WeightTypes {
  DType matrix = DType::kF32;
  QuantMix mix = QuantMix::kNone;
};
// A DTypeName, or "q4_k_m" / "q5_k_m".
Status ParseWeightTypes(const std::string& name, WeightTypes* out);

// --keep PATTERN=DTYPE: tensors whose name matches the shell glob PATTERN (fnmatch, e.g.
// "blk.*.ffn_down.weight") are stored as DTYPE.
struct DTypeOverride {
  std::string pattern;
  DType dtype;
};
Status ParseDTypeOverride(const std::string& text, DTypeOverride* out);

// Sets every tensor's dtype:
// - 1-D tensors (norm weights, biases) and the learned position table stay f32: they are
//   tiny, and they are added to the activations as they are;
// - the token embedding and the classifier (output.weight) take `types.matrix`, except
//   that q4 keeps them at q8: the logits are the most quantization-sensitive product, and
//   in tied models this matrix is both (llama.cpp's Q4_0 likewise keeps its output at a
//   higher precision);
// - K-quants follow llama.cpp's llama_tensor_get_type (at c392e50) for a model without
//   experts: the classifier (output.weight, or the token embedding when tied) is q6_k;
//   a separate token embedding takes the base type; with q4_k_m / q5_k_m, attn_v and
//   ffn_down of the layers where use_more_bits(layer, layers) holds (the first and last
//   eighth, and every third layer between) are q6_k, the other matrices q4_k / q5_k;
// - every other matrix takes `types.matrix`;
// - a K-quant matrix whose columns are not a multiple of 256 (a super-block) is stored
//   as q8 instead (llama.cpp falls back to Q5_0, Q5_1 or Q8_0; ember has no 5-bit block
//   type, and q8 is the more accurate); each such fallback adds a line to *notes;
// - then each override in order (the last match wins). Quantized types apply to
//   matrices only, K-quants to matrices with whole super-blocks; an override that
//   matches no tensor is an error (a typo would otherwise pass silently).
Status ChooseDTypes(const WeightTypes& types, const std::vector<DTypeOverride>& overrides,
                    ModelSpec* spec, std::vector<std::string>* notes = nullptr);
// The same for one type (QuantMix::kNone).
Status ChooseDTypes(DType matrix_dtype, const std::vector<DTypeOverride>& overrides,
                    ModelSpec* spec, std::vector<std::string>* notes = nullptr);

// Only the overrides, on the dtypes the tensors have (the GGUF importer's own choice).
Status ApplyDTypeOverrides(const std::vector<DTypeOverride>& overrides, ModelSpec* spec);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CONVERT_DTYPE_POLICY_H_
