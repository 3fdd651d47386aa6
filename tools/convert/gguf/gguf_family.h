// What the GGUF architectures built on Llama's blocks add to them, from llama.cpp's
// reading of each (its converter's keys and tensors, its model loader's fixed values):
// Qwen3's q/k norms, Gemma 3's norms, scales, GeGLU and sliding layers, Phi-3's fused
// gate/up and partial RoPE, and RoPE frequency factors stored as tensors (Llama 3's
// rope_freqs, Phi-3's LongRoPE rope_factors_short and _long).
#ifndef EMBER_TOOLS_CONVERT_GGUF_GGUF_FAMILY_H_
#define EMBER_TOOLS_CONVERT_GGUF_GGUF_FAMILY_H_

#include <initializer_list>
#include <string_view>

#include "runtime/model/config.h"
#include "runtime/status.h"
#include "tools/convert/gguf/gguf_reader.h"

namespace ember::tools {

struct GgufFamily {
  const char* arch;  // general.architecture
  RopePairing pairing;
  bool qk_norm;  // blk.N.attn_q_norm, attn_k_norm (qwen3, gemma3)
  bool gemma;    // gemma3: see ApplyGgufFamily
  bool phi3;     // fused attn_qkv and ffn_up, partial RoPE, sliding window, LongRoPE
  // {arch}.* keys this family reads beyond the common ones (gguf_arch.cc).
  std::initializer_list<const char*> extra_keys;
};

// The family of `arch` among llama, qwen2, qwen3, gemma3 and phi3 (null if none).
const GgufFamily* FindGgufFamily(std::string_view arch);

// The family's departures from Llama's blocks, after the common keys are read into c
// (`window`: {arch}.attention.sliding_window, 0 when absent; `rope_dims`:
// {arch}.rope.dimension_count).
//   gemma3  the norms as the file has them (llama.cpp's converter stores Gemma's 1 + w),
//           post-attention and post-FFN norms, q/k norms, GeGLU with tanh GELU,
//           embeddings times sqrt(d_model) in f32 (as llama.cpp; transformers rounds it
//           to the checkpoint's dtype, 0.2 % apart for bf16 at d 640), every 6th layer
//           global and the others sliding with RoPE base 10000 (llama.cpp's fixed
//           values: GGUF has no key for them), and query_pre_attn_scalar head_dim,
//           except d_model / heads for the 62-layer 27B (llama.cpp's rule).
//   phi3    RoPE on rope_dims of each head; every layer slides when window is set.
//   others  a sliding window shorter than the context is refused.
Status ApplyGgufFamily(const GgufFamily& family, uint32_t window, uint32_t rope_dims,
                       ModelConfig* c);

// RoPE frequency factors stored as tensors, which the model then does not hold as
// weights: rope_freqs.weight (llama.cpp's Llama 3.1 scaling, per-pair divisors) into
// c->rope_freq_factors; phi3's rope_factors_short.weight and rope_factors_long.weight
// into LongRoPE over {arch}.rope.scaling.original_context_length with attention factor
// {arch}.rope.scaling.attn_factor (else sqrt(1 + ln(s) / ln(original)), s the context
// over the original). c->max_context must still be the file's context length.
Status ReadGgufRopeFactors(const GgufFile& f, const GgufFamily& family, ModelConfig* c);

// True for the tensors ReadGgufRopeFactors consumes.
bool IsGgufRopeFactorTensor(std::string_view name);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CONVERT_GGUF_GGUF_FAMILY_H_
