// Importer for GGUF files (llama.cpp's model format): the architecture and its
// hyper-parameters (gguf_arch.h), the tokenizer (gguf_tokenizer.h) and every weight.
//
// Without --dtype each tensor keeps what its GGUF type holds, bit for bit where ember has
// the type (ImportedType): f32, f16 and bf16 as they are; Q8_0 as q8 and Q4_0 as q4 (the
// same f16 scales and integers, repacked into ember's panels; a Q8_0 -128 stays -128);
// the K-quants Q4_K, Q5_K, Q6_K as q4_k, q5_k, q6_k (every d, dmin, scale, minimum and
// value, kernels/kquant_layout.h); Q5_0 and IQ4_NL as q8 (their integers, -16..15 and
// IQ4_NL's levels, are q8 values with the same scale: exact); Q4_1 and Q5_1 (which add
// an offset per block) dequantized as GGML does and re-quantized to q8 (absmax / 127 per
// group of 32). Vectors (norms, biases) are f32. With --dtype, tensors take
// types as for the other importers (dtype_policy.h); a tensor whose type is the one it
// would keep anyway, or whose values that type holds exactly, is still packed from its
// own blocks. --keep overrides either way.
#ifndef EMBER_TOOLS_CONVERT_GGUF_GGUF_IMPORT_H_
#define EMBER_TOOLS_CONVERT_GGUF_GGUF_IMPORT_H_

#include <string>
#include <vector>

#include "runtime/model/model_writer.h"
#include "runtime/status.h"
#include "tools/convert/dtype_policy.h"
#include "tools/convert/gguf/gguf_reader.h"

namespace ember::tools {

struct GgufImportOptions {
  bool convert_dtype = false;  // --dtype given: `types` as for the other importers
  WeightTypes types;
  std::vector<DTypeOverride> overrides;  // --keep
  uint32_t max_context = 0;              // --ctx: replaces {arch}.context_length
  // --mmproj: llama.cpp's projector file holding the vision tower (gguf_mmproj.h).
  std::string mmproj;
};

// What the file's type becomes without --dtype, and whether that is exact.
struct ImportedType {
  DType dtype;
  bool exact;
};
// For a GGML type ember imports (else false). `matrix`: a 2-D tensor (vectors are f32).
bool ImportedTypeOf(uint32_t ggml_type, bool matrix, ImportedType* out);

// Reads the file (and the vision tower of `mmproj`, when given) into spec.
// (*sources)[i], if asked for, says what spec->tensors[i] was made from, e.g. "from
// q4_1, re-quantized" (for the converter's per-tensor lines); *notes gets ChooseDTypes'
// notes (with --dtype).
Status ImportGgufFile(const GgufFile& file, const std::string& name,
                      const GgufImportOptions& options, ModelSpec* spec,
                      std::vector<std::string>* sources = nullptr,
                      std::vector<std::string>* notes = nullptr,
                      const GgufFile* mmproj = nullptr);
// Opens and reads `path` (and options.mmproj); messages start with the path.
Status ImportGguf(const std::string& path, const GgufImportOptions& options,
                  ModelSpec* spec, std::vector<std::string>* sources = nullptr,
                  std::vector<std::string>* notes = nullptr);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CONVERT_GGUF_GGUF_IMPORT_H_
