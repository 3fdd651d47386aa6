// The GGUF architectures ember converts: general.architecture and its {arch}.* keys into
// a ModelConfig, and the file's tensors mapped to ember's (GGUF's names are ember's
// names; fused matrices are split by rows). An architecture, key or tensor ember does
// not support gets a message that names it.
//
//   llama  Llama 2/3.x, TinyLlama, SmolLM2, Mistral without a sliding window: RMSNorm,
//          SwiGLU, grouped-query attention; llama.cpp's converter permutes Q and K so
//          that RoPE rotates interleaved pairs (GGML's "normal" mode): RopePairing
//          kInterleaved, no permutation at import.
//   qwen2  Qwen2, Qwen2.5: the same blocks with biases on Q, K and V, and RoPE on halves
//          (RopePairing kHalf: llama.cpp does not permute these rows).
//   qwen3, gemma3, phi3  Llama's blocks with what gguf_family.h adds.
//   gpt2   GPT-2: LayerNorm, learned positions, GELU (tanh), biases; attn_qkv split into
//          Q, K and V.
#ifndef EMBER_TOOLS_CONVERT_GGUF_GGUF_ARCH_H_
#define EMBER_TOOLS_CONVERT_GGUF_GGUF_ARCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/model/config.h"
#include "runtime/status.h"
#include "tools/convert/gguf/gguf_reader.h"

namespace ember::tools {

// One tensor of the ember model and where it comes from: rows [first_row, first_row +
// shape[0]) of `source` (for a vector, elements), i.e. all of it unless a fused tensor
// is split; or, `transposed`, all of a source that holds the matrix's transpose
// (shape[1] rows of shape[0]).
struct GgufTensorSource {
  std::string name;             // ember's (runtime/model/tensor_names.h)
  std::vector<uint64_t> shape;  // PyTorch order: (rows, cols) or (n)
  const GgufTensorInfo* source = nullptr;
  uint64_t first_row = 0;
  bool transposed = false;
};

// Reads the architecture's hyper-parameters into *config (max_context, when nonzero,
// replaces {arch}.context_length) and lists the model's tensors. Shapes are checked
// later, as the loader binds them (CheckSpecTensors).
Status MapGgufModel(const GgufFile& file, uint32_t max_context, ModelConfig* config,
                    std::vector<GgufTensorSource>* tensors);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CONVERT_GGUF_GGUF_ARCH_H_
