// The RoPE and attention-layout fields of Hugging Face configs, into ModelConfig:
// rope_theta with rope_scaling (transformers 4.x) or rope_parameters (5.x, also per layer
// type), and which layers slide (layer_types, sliding_window_pattern, use_sliding_window
// with max_window_layers).
#ifndef EMBER_TOOLS_CONVERT_HF_HF_ROPE_H_
#define EMBER_TOOLS_CONVERT_HF_HF_ROPE_H_

#include <cstdint>
#include <string>

#include "runtime/model/config.h"
#include "runtime/status.h"
#include "tools/util/json_util.h"

namespace ember::tools {

// What a RoPE parameters object is read against: max_position_embeddings, the config's
// top-level original_max_position_embeddings (0: none; Phi-3's LongRoPE), and whether
// Phi3Config's older names of LongRoPE apply.
struct RopeContext {
  int64_t max_positions = 0;
  int64_t original_context = 0;
  bool phi3 = false;
};

// One RoPE parameters object (`rope_scaling`, or an entry of `rope_parameters`) into c's
// rope_scaling fields: rope_type (or "type") default, linear, llama3, yarn or longrope
// (short_factor and long_factor over c->rope_dims() / 2 pairs), with their parameters;
// other types and unknown keys are refused with a message naming them.
// YaRN follows transformers' _compute_yarn_parameters with the explicit `factor` (as
// transformers does since its issue 38224): original_max_position_embeddings defaults to
// `max_positions`; attention_factor, when absent, is 0.1 ln(factor) + 1 (or the ratio of
// mscale and mscale_all_dim's). *theta receives its rope_theta when it has one.
Status ReadRopeScaling(const Json& params, const std::string& where,
                       const RopeContext& context, ModelConfig* c, double* theta);

// Global layers' RoPE (c->rope_theta and scaling) from `rope_theta` (default
// `default_theta`) and `rope_scaling`, or from `rope_parameters` (its full_attention
// entry when it has one per layer type). A sliding_attention entry of plain RoPE sets
// c->rope_local_theta. c->head_dim and c->rope_dim must be set.
Status ReadHfRope(const Json& config, double default_theta, int64_t max_positions,
                  bool phi3, ModelConfig* c);

// How the config says which layers slide, in the order a reader should look.
struct SlidingLayout {
  bool all_layers = false;      // with a sliding_window, every layer (Mistral, Phi-3)
  int64_t default_pattern = 0;  // Gemma: every pattern-th layer is global (0: none)
  int64_t default_window = 0;   // the class default of sliding_window (0: none)
  bool qwen = false;            // use_sliding_window and max_window_layers (Qwen2/3)
};

// c->sliding_window and c->layer_attention from `layer_types` ("full_attention",
// "sliding_attention"), else the family's rule.
Status ReadSlidingLayers(const Json& config, const SlidingLayout& layout, ModelConfig* c);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CONVERT_HF_HF_ROPE_H_
