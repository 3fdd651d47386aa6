// Which type each tensor of a converted model is stored in: --dtype for the weight
// matrices, fixed defaults for the rest, and --keep PATTERN=DTYPE overrides.
#ifndef EMBER_TOOLS_CONVERT_DTYPE_POLICY_H_
#define EMBER_TOOLS_CONVERT_DTYPE_POLICY_H_

#include <string>
#include <vector>

#include "runtime/config.h"
#include "runtime/model_writer.h"
#include "runtime/status.h"

namespace ember::tools {

// "f32", "f16", "bf16", "q8" or "q4" (as DTypeName spells them).
Status ParseDTypeName(const std::string& name, DType* dtype);

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
// - the token embedding and the classifier (output.weight) take `matrix_dtype`, except
//   that q4 keeps them at q8: the logits are the most quantization-sensitive product, and
//   in tied models this matrix is both (llama.cpp's Q4_0 likewise keeps its output at a
//   higher precision);
// - every other matrix takes `matrix_dtype`;
// - then each override in order (the last match wins). q8/q4 apply to matrices only; an
//   override that matches no tensor is an error (a typo would otherwise pass silently).
Status ChooseDTypes(DType matrix_dtype, const std::vector<DTypeOverride>& overrides,
                    ModelSpec* spec);

// Only the overrides, on the dtypes the tensors have (the GGUF importer's own choice).
Status ApplyDTypeOverrides(const std::vector<DTypeOverride>& overrides, ModelSpec* spec);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CONVERT_DTYPE_POLICY_H_
