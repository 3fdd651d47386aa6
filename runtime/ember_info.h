/* ember_info.h: what a model and a session report through the C API (C99; included by
 * ember.h, which is the one to include): a model's configuration and its parameters
 * counted by kind and by weight type (ember_model_get_info, as `ember inspect` prints
 * them), and the attention weights a session records in its arena (ember_attention).
 * Neither call allocates. */
#ifndef EMBER_EMBER_INFO_H_
#define EMBER_EMBER_INFO_H_

#include <stddef.h>
#include <stdint.h>

#include "ember.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a model is (appended in 0.3): its configuration and its parameters counted by
 * kind and by weight type, as `ember inspect` prints them. Set struct_size to
 * sizeof(ember_model_info) and call ember_model_get_info: a library writes only the
 * fields inside struct_size, and refuses a larger one than it knows
 * (EMBER_UNIMPLEMENTED). The strings are static or inside the model, valid as long as
 * the model. */
typedef struct ember_model_info {
  uint32_t struct_size;     /* sizeof(ember_model_info), set by the caller */
  const char* architecture; /* the family: "llama", "gpt2", "qwen3", ... */
  const char* description;  /* the file's description ("" if none) */
  uint32_t n_layers;
  uint32_t n_heads;
  uint32_t n_kv_heads; /* n_heads: MHA; fewer: GQA; 1: MQA */
  uint32_t head_dim;
  uint32_t d_model;
  uint32_t ffn_dim;
  uint32_t vocab_size;
  uint32_t max_context;
  const char* norm; /* "rmsnorm" or "layernorm" */
  int pre_norm;     /* 1: the norm before each block (pre-LN); 0: after (post-LN) */
  float norm_eps;
  const char* activation;   /* "silu", "relu", "gelu_tanh", "gelu_erf" */
  int gated_ffn;            /* 1: SwiGLU/GeGLU (gate, up, down); 0: up, down */
  const char* positions;    /* "none", "learned" or "rope" */
  float rope_theta;         /* RoPE only */
  const char* rope_scaling; /* "none", "linear", "llama3", "yarn", "longrope" */
  int causal;               /* 1: causal attention (a decoder); 0: bidirectional */
  int qkv_bias, out_bias, ffn_bias;
  int tied_embeddings; /* 1: the classifier is the token embedding */
  int qk_norm;
  uint32_t sliding_window; /* 0: none */
  uint32_t sliding_layers; /* layers that attend within sliding_window */
  const char* tokenizer;   /* "sentencepiece-bpe", "byte-level-bpe" or "wordpiece" */
  /* Parameters (weights and biases, elements) by kind: a tied classifier is the token
     embedding, counted once (as PyTorch's parameters() counts a shared tensor). */
  uint64_t params_total;
  uint64_t params_embeddings; /* token (and learned position) embeddings */
  uint64_t params_wq, params_wk, params_wv, params_wo;
  uint64_t params_ffn;
  uint64_t params_norms;
  uint64_t params_classifier; /* 0 when tied */
  uint64_t params_other;
  /* Parameters by the type the file stores them in. */
  uint64_t params_f32, params_f16, params_bf16, params_q8, params_q4;
  uint64_t params_q4k, params_q5k, params_q6k;
  uint64_t weight_bytes; /* the tensors' bytes as stored */
} ember_model_info;

ember_status ember_model_get_info(const ember_model* model, ember_model_info* info);

/* Attention capture (appended in 0.3): with options.record_attention, the weights the
 * session's prefills and decodes put on each key, as softmax probabilities, laid out
 *   weights[((l * num_heads + h) * positions + q) * positions + k]
 * for layer first_layer + l, head first_head + h, query position q, key position k;
 * 0 where the mask hides k from q (k > q when causal, keys out of a sliding window).
 * Rows q < rows are written: rows = min(session position, positions), every written row
 * whole. The pointer is into the arena: valid as long as the session, overwritten by
 * later passes only in the rows they write; ember_session_reset starts again at row 0.
 * A context shift refuses while recording. */
typedef struct ember_attention_info {
  uint32_t struct_size; /* sizeof(ember_attention_info), set by the caller */
  uint32_t first_layer;
  uint32_t num_layers;
  uint32_t first_head;
  uint32_t num_heads;
  size_t positions; /* rows and columns of each head's matrix */
  size_t rows;      /* query rows written so far */
} ember_attention_info;

/* The recorded weights and their shape in *info. NULL with the reason in
 * ember_last_error: when the session records none or is NULL (info's fields zeroed), or
 * for a NULL info or a struct_size refused as above (info left as it was). */
const float* ember_attention(const ember_session* session, ember_attention_info* info);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* EMBER_EMBER_INFO_H_ */
