// GGUF import (see gguf_import.h): map the architecture, read the tokenizer, choose each
// tensor's type, check the tensors against the config, then read the weights: packed
// from their own blocks where that is exact, else decoded as GGML decodes them.
#include "tools/convert/gguf/gguf_import.h"

#include <cstdint>
#include <cstring>

#include "kernels/kquant_layout.h"
#include "kernels/quant_layout.h"
#include "kernels/quantize/kquant_pack.h"
#include "kernels/quantize/quant_pack.h"
#include "runtime/model/tensor.h"
#include "tools/convert/gguf/gguf_arch.h"
#include "tools/convert/gguf/gguf_blocks.h"
#include "tools/convert/gguf/gguf_mmproj.h"
#include "tools/convert/gguf/gguf_tokenizer.h"
#include "tools/convert/hf/hf_import.h"

namespace ember::tools {
namespace {

constexpr const char* kImportedTypes =
    "f32, f16, bf16, f64, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl, q4_K, q5_K and q6_K";

// Whether `target` holds the values of a `type` block exactly as its scale and integers.
bool PacksExactly(uint32_t type, DType target) {
  int lo, hi;
  if (!IsScaledInt32(type, &lo, &hi)) return false;
  return target == DType::kQ8 || (target == DType::kQ4 && lo >= -8 && hi <= 7);
}

// The ember K-quant type of a GGML K-quant type (false for the others).
bool KQuantOf(uint32_t type, DType* dtype) {
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::kQ4_K:
      *dtype = DType::kQ4K;
      return true;
    case GgmlType::kQ5_K:
      *dtype = DType::kQ5K;
      return true;
    case GgmlType::kQ6_K:
      *dtype = DType::kQ6K;
      return true;
    default:
      return false;
  }
}

// Rows of GGML K-quant blocks as ember's q4_k/q5_k/q6_k panels, every field kept. A d or
// dmin that is not finite is refused (as a q8 scale is).
Status PackKQuantBlocks(const GgufTensorInfo& src, kernels::KQuantKind kind,
                        const uint8_t* data, uint64_t rows, uint64_t cols,
                        TensorSpec* t) {
  const uint64_t block_bytes = kernels::GgmlKQuantBlockBytes(kind);
  const uint64_t blocks = rows * (cols / kernels::kKQuantBlock);
  for (uint64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = data + b * block_bytes;
    for (uint64_t at :
         {kind == kernels::KQuantKind::kQ6K ? uint64_t{208} : uint64_t{0},
          kind == kernels::KQuantKind::kQ6K ? uint64_t{208} : uint64_t{2}}) {
      if ((block[at + 1] & 0x7C) == 0x7C) {  // f16 exponent all ones: inf or NaN
        return InvalidModel("GGUF: tensor %s: block %llu has a scale that is not finite",
                            GgufQuote(src.name).c_str(),
                            static_cast<unsigned long long>(b));
      }
    }
  }
  t->encoded.resize(kernels::KQuantPackedBytes(kind, rows, cols));
  if (!kernels::PackKQuantFromGgml(kind, data, static_cast<size_t>(rows),
                                   static_cast<size_t>(cols), t->encoded.data())) {
    return InvalidModel("GGUF: tensor %s cannot be packed as %s",
                        GgufQuote(src.name).c_str(), DTypeName(t->dtype));
  }
  return Status::Ok();
}

bool SameDenseType(uint32_t type, DType target) {
  return (type == static_cast<uint32_t>(GgmlType::kF32) && target == DType::kF32) ||
         (type == static_cast<uint32_t>(GgmlType::kF16) && target == DType::kF16) ||
         (type == static_cast<uint32_t>(GgmlType::kBF16) && target == DType::kBF16);
}

// Rows [first_row, first_row + rows) of the source as q8/q4 panels, from the blocks'
// own scales and integers. A scale that is not finite is refused, as the writer refuses
// a weight that is not.
Status PackBlocks(const GgufTensorInfo& src, const uint8_t* data, uint64_t rows,
                  uint64_t cols, uint64_t row_bytes, TensorSpec* t) {
  const size_t groups = static_cast<size_t>(cols / kernels::kQuantGroup);
  std::vector<int8_t> q(static_cast<size_t>(rows * cols));
  std::vector<uint16_t> scales(static_cast<size_t>(rows) * groups);
  for (uint64_t r = 0; r < rows; ++r) {
    ReadScaledInt32(src.type, data + r * row_bytes, static_cast<size_t>(cols),
                    q.data() + r * cols, scales.data() + r * groups);
  }
  for (size_t i = 0; i < scales.size(); ++i) {
    if ((scales[i] & 0x7C00) == 0x7C00) {
      return InvalidModel("GGUF: tensor %s: the scale of block %zu is %s",
                          GgufQuote(src.name).c_str(), i,
                          (scales[i] & 0x3FF) ? "NaN" : "infinite");
    }
  }
  const kernels::QuantKind kind =
      t->dtype == DType::kQ8 ? kernels::QuantKind::kQ8 : kernels::QuantKind::kQ4;
  t->encoded.resize(kernels::QuantPackedBytes(kind, rows, cols));
  kernels::PackQuantValues(kind, q.data(), scales.data(), static_cast<size_t>(rows),
                           static_cast<size_t>(cols), t->encoded.data());
  return Status::Ok();
}

// Fills t (name, shape and dtype set) from its source: the file's bytes, its blocks
// repacked, or its decoded values. *how says which, for the progress line.
Status ReadTensor(const GgufTensorSource& s, TensorSpec* t, std::string* how) {
  const GgufTensorInfo& src = *s.source;
  const GgmlTypeInfo& info = *FindGgmlType(src.type);
  const bool matrix = s.shape.size() == 2;
  const uint64_t rows = matrix ? s.shape[0] : 1, cols = s.shape.back();
  const uint64_t row_bytes = cols / info.block_elements * info.block_bytes;
  // Decoded as f32, or repacked (at most 1.0625 bytes per value plus padding): the host
  // must address that much (on 32-bit Arm a file's tensor can hold more values than fit).
  if (rows * cols > (SIZE_MAX - (uint64_t{1} << 20)) / sizeof(float)) {
    return ResourceExhausted("GGUF: tensor %s: %llu values do not fit in memory here",
                             GgufQuote(src.name).c_str(),
                             static_cast<unsigned long long>(rows * cols));
  }
  // A split vector starts at element first_row: a whole block, for the types that split.
  if (!matrix && s.first_row % info.block_elements != 0) {
    return InvalidModel("GGUF: tensor %s cannot be split inside a %s block",
                        GgufQuote(src.name).c_str(), info.name);
  }
  const uint8_t* data =
      src.data + (matrix ? s.first_row * row_bytes
                         : s.first_row / info.block_elements * info.block_bytes);
  const std::string from = std::string("from ") + info.name;
  if (s.transposed) {
    // The source's rows are this matrix's columns: decoded, then read across.
    const uint64_t src_row_bytes = rows / info.block_elements * info.block_bytes;
    std::vector<float> row(static_cast<size_t>(rows));
    t->values.resize(static_cast<size_t>(rows * cols));
    for (uint64_t c = 0; c < cols; ++c) {
      DecodeGgmlRow(src.type, src.data + c * src_row_bytes, static_cast<size_t>(rows),
                    row.data());
      for (uint64_t r = 0; r < rows; ++r) t->values[r * cols + c] = row[r];
    }
    *how = from + ", transposed";
    return Status::Ok();
  }
  if (SameDenseType(src.type, t->dtype)) {
    t->encoded.assign(data, data + rows * row_bytes);
    *how = from + ", as stored";
    return Status::Ok();
  }
  if (matrix && PacksExactly(src.type, t->dtype)) {
    *how = from + ", exact";
    return PackBlocks(src, data, rows, cols, row_bytes, t);
  }
  DType k_dtype;
  if (matrix && KQuantOf(src.type, &k_dtype) && k_dtype == t->dtype) {
    *how = from + ", exact";
    return PackKQuantBlocks(src, KQuantKindOf(k_dtype), data, rows, cols, t);
  }
  t->values.resize(static_cast<size_t>(rows * cols));
  for (uint64_t r = 0; r < rows; ++r) {
    DecodeGgmlRow(src.type, data + r * row_bytes, static_cast<size_t>(cols),
                  t->values.data() + r * cols);
  }
  const bool widening =
      t->dtype == DType::kF32 && src.type != static_cast<uint32_t>(GgmlType::kF64);
  *how = from + (widening                           ? ", decoded"
                 : DenseElementBytes(t->dtype) == 0 ? ", re-quantized"
                                                    : ", rounded");
  return Status::Ok();
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

bool ImportedTypeOf(uint32_t type, bool matrix, ImportedType* out) {
  if (!CanDecodeGgml(type)) return false;
  int lo, hi;
  DType k_dtype;
  const GgmlType t = static_cast<GgmlType>(type);
  if (!matrix) {
    *out = {DType::kF32, t != GgmlType::kF64};
  } else if (t == GgmlType::kF32 || t == GgmlType::kF16 || t == GgmlType::kBF16) {
    *out = {t == GgmlType::kF32   ? DType::kF32
            : t == GgmlType::kF16 ? DType::kF16
                                  : DType::kBF16,
            true};
  } else if (t == GgmlType::kF64) {
    *out = {DType::kF32, false};
  } else if (IsScaledInt32(type, &lo, &hi)) {
    *out = {lo >= -8 && hi <= 7 ? DType::kQ4 : DType::kQ8, true};
  } else if (KQuantOf(type, &k_dtype)) {
    *out = {k_dtype, true};
  } else {
    *out = {DType::kQ8, false};  // Q4_1, Q5_1
  }
  return true;
}

Status ImportGgufFile(const GgufFile& file, const std::string& name,
                      const GgufImportOptions& options, ModelSpec* spec,
                      std::vector<std::string>* sources, std::vector<std::string>* notes,
                      const GgufFile* mmproj) {
  *spec = ModelSpec();
  std::vector<GgufTensorSource> plan;
  EMBER_RETURN_IF_ERROR(MapGgufModel(file, options.max_context, &spec->config, &plan));
  EMBER_RETURN_IF_ERROR(
      ReadGgufTokenizer(file, spec->config.vocab_size, &spec->tokenizer));
  if (mmproj) EMBER_RETURN_IF_ERROR(MapGgufProjector(*mmproj, spec, &plan));
  for (const GgufTensorSource& s : plan) {
    TensorSpec t;
    t.name = s.name;
    t.shape = s.shape;
    ImportedType imported;
    if (!ImportedTypeOf(s.source->type, s.shape.size() == 2, &imported)) {
      return Unimplemented("GGUF: tensor %s is %s, which ember does not import (%s)",
                           GgufQuote(s.source->name).c_str(),
                           GgmlTypeName(s.source->type).c_str(), kImportedTypes);
    }
    t.dtype = imported.dtype;
    spec->tensors.push_back(std::move(t));
  }
  if (options.convert_dtype) {
    EMBER_RETURN_IF_ERROR(ChooseDTypes(options.types, options.overrides, spec, notes));
  } else {
    EMBER_RETURN_IF_ERROR(ApplyDTypeOverrides(options.overrides, spec));
  }
  // Names and shapes as the loader will bind them, before any weight is read.
  EMBER_RETURN_IF_ERROR(CheckSpecTensors(*spec));
  if (sources) sources->assign(plan.size(), std::string());
  for (size_t i = 0; i < plan.size(); ++i) {
    std::string how;
    EMBER_RETURN_IF_ERROR(ReadTensor(plan[i], &spec->tensors[i], &how));
    if (sources) (*sources)[i] = std::move(how);
  }
  std::string_view model_name;
  EMBER_RETURN_IF_ERROR(file.GetString("general.name", false, &model_name));
  spec->description = "GGUF " + name;
  if (!model_name.empty()) spec->description += " (" + std::string(model_name) + ")";
  return Status::Ok();
}

Status ImportGguf(const std::string& path, const GgufImportOptions& options,
                  ModelSpec* spec, std::vector<std::string>* sources,
                  std::vector<std::string>* notes) {
  auto file = GgufFile::Open(path);
  if (!file.ok()) return file.status();
  std::unique_ptr<GgufFile> mmproj;
  if (!options.mmproj.empty()) {
    auto opened = GgufFile::Open(options.mmproj);
    if (!opened.ok()) return opened.status();
    mmproj = std::move(*opened);
  }
  const Status s =
      ImportGgufFile(**file, BaseName(path), options, spec, sources, notes, mmproj.get());
  if (!s.ok()) {
    // A message about the projector's keys or tensors names the projector file.
    const bool projector = mmproj && strncmp(s.message(), "GGUF mmproj", 11) == 0;
    return Status(s.code(), "%s: %s", (projector ? options.mmproj : path).c_str(),
                  s.message());
  }
  return Status::Ok();
}

}  // namespace ember::tools
