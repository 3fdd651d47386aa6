// Synthetic models: a Llama-architecture model of any shape with seeded random weights
// and a byte-fallback SentencePiece tokenizer, so ember can be benchmarked (and run) on
// any shape without downloading weights.
#ifndef EMBER_TOOLS_CONVERT_SYNTHETIC_H_
#define EMBER_TOOLS_CONVERT_SYNTHETIC_H_

#include <cstdint>
#include <string>

#include "runtime/model/config.h"
#include "runtime/model/model_writer.h"
#include "runtime/status.h"

namespace ember::tools {

struct SyntheticShape {
  uint32_t dim = 0;     // d_model
  uint32_t hidden = 0;  // ffn_dim (SwiGLU)
  uint32_t layers = 0;
  uint32_t heads = 0;
  uint32_t kv_heads = 0;  // 0: heads (multi-head attention)
  uint32_t vocab = 0;
  uint32_t ctx = 0;  // max context
};

// The shapes of llama2.c's TinyStories models: "stories15M" and "stories110M". Returns
// NotFound for any other name.
Status SyntheticPreset(const std::string& name, SyntheticShape* shape);

// Checks a shape (every size set, heads dividing dim into an even head_dim, kv_heads
// dividing heads, a vocabulary with room for the 259 special and byte pieces, sizes
// within the converter's limits).
Status CheckSyntheticShape(const SyntheticShape& shape);

// A Llama model (RMSNorm, SwiGLU, interleaved RoPE, classifier tied to the embedding):
// every matrix drawn from N(0, 1/fan_in) (standard deviation 1/sqrt(fan_in), so a
// normalized input gives outputs of unit scale), norm weights 1. `seed` decides every
// weight; each tensor has its own stream, so a tensor does not depend on the others.
// Tensors are f32: the converter's --dtype policy (dtype_policy.h) applies as for any
// other input.
Status MakeSyntheticModel(const SyntheticShape& shape, uint64_t seed,
                          const std::string& name, ModelSpec* spec);

// Adds a vision tower with seeded random weights to a synthetic text model, of the
// shape of a family's (`preset`): "gemma3" (SigLIP So400m/14 at 896 pixels, 27 layers,
// average pool 4: 256 rows an image), "smolvlm" (SigLIP B/16 at 512, 12 layers, pixel
// shuffle 4: 64 rows a tile, Idefics3's tiles of the longest edge 2048) or "tiny" (2
// layers of 32 over 32-pixel tiles: 4 rows). Its processor and image prompt are the
// family's, over the tokenizer's last three pieces: "<start_of_image>", "<end_of_image>"
// and "<image_soft_token>" in Gemma 3's (one block of rows an image), or for smolvlm
// "<fake_token_around_image>", "<global-img>" and "<image>" in Idefics3's tiled prompt
// (its "<row_R_col_C>" names stay plain text), so `ember run --image` and `ember bench`
// run it.
Status AddSyntheticVision(const std::string& preset, uint64_t seed, ModelSpec* spec);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CONVERT_SYNTHETIC_H_
