// The converter's per-tensor dtype choice (see dtype_policy.h).
#include "tools/convert/dtype_policy.h"

#include <fnmatch.h>

#include "runtime/tensor_names.h"

namespace ember::tools {

Status ParseDTypeName(const std::string& name, DType* dtype) {
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16, DType::kQ8, DType::kQ4}) {
    if (name == DTypeName(d)) {
      *dtype = d;
      return Status::Ok();
    }
  }
  return InvalidArgument("'%s' is not a weight type (f32, f16, bf16, q8, q4)",
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
                    ModelSpec* spec) {
  const DType classifier_dtype = matrix_dtype == DType::kQ4 ? DType::kQ8 : matrix_dtype;
  for (TensorSpec& t : spec->tensors) {
    if (t.shape.size() != 2 || t.name == names::kPosEmbedding) {
      t.dtype = DType::kF32;
    } else if (t.name == names::kTokEmbedding || t.name == names::kOutput) {
      t.dtype = classifier_dtype;
    } else {
      t.dtype = matrix_dtype;
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
      if ((o.dtype == DType::kQ8 || o.dtype == DType::kQ4) && t.shape.size() != 2) {
        return InvalidArgument("--keep %s=%s: '%s' is not a matrix (%s needs one)",
                               o.pattern.c_str(), DTypeName(o.dtype), t.name.c_str(),
                               DTypeName(o.dtype));
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
