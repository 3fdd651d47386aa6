// The C API's reports (ember.h): ember_model_get_info, the model's configuration and its
// parameters counted by runtime/model/parameter_counts; ember_attention, the attention
// record a session keeps in its arena. Neither allocates.
#include <cstddef>
#include <cstring>

#include "runtime/api/c_api_internal.h"
#include "runtime/model/parameter_counts.h"

namespace {

using ember::c_api::CheckStructSize;
using ember::c_api::NullArgument;
using ember::c_api::Report;
using ember::c_api::StructFill;

// Copies the fields of `full` inside the caller's struct_size into *out: a caller built
// against an older header gets the fields it knows.
template <class T>
void CopyKnownFields(const T& full, T* out) {
  const uint32_t size = out->struct_size;
  memcpy(static_cast<void*>(out), &full, size);
  out->struct_size = size;
}

void FillModelInfo(const ember::Model& model, ember_model_info* info) {
  const ember::ModelConfig& c = model.config();
  info->architecture = c.architecture;
  info->description = model.description();
  info->n_layers = c.n_layers;
  info->n_heads = c.n_heads;
  info->n_kv_heads = c.n_kv_heads;
  info->head_dim = c.head_dim;
  info->d_model = c.d_model;
  info->ffn_dim = c.ffn_dim;
  info->vocab_size = c.vocab_size;
  info->max_context = c.max_context;
  info->norm = ember::NormKindName(c.norm);
  info->pre_norm = c.norm_placement == ember::NormPlacement::kPre;
  info->norm_eps = c.norm_eps;
  info->activation = ember::ActivationName(c.activation);
  info->gated_ffn = c.ffn == ember::FfnKind::kGated;
  info->positions = ember::PositionKindName(c.positions);
  info->rope_theta = c.positions == ember::PositionKind::kRope ? c.rope_theta : 0.0f;
  info->rope_scaling = ember::RopeScalingName(c.rope_scaling);
  info->causal = c.mask == ember::AttentionMask::kCausal;
  info->qkv_bias = c.qkv_bias;
  info->out_bias = c.out_bias;
  info->ffn_bias = c.ffn_bias;
  info->tied_embeddings = c.tied_classifier;
  info->qk_norm = c.qk_norm;
  uint32_t sliding = 0;
  for (uint32_t layer = 0; layer < c.n_layers; ++layer) sliding += c.sliding(layer);
  info->sliding_window = sliding ? c.sliding_window : 0;
  info->sliding_layers = sliding;
  const ember::TokenizerKind kind = model.tokenizer().kind();
  info->tokenizer = kind == ember::TokenizerKind::kSentencePieceBpe ? "sentencepiece-bpe"
                    : kind == ember::TokenizerKind::kWordPiece      ? "wordpiece"
                                                                    : "byte-level-bpe";

  using K = ember::ParameterKind;
  using D = ember::DType;
  const ember::ParameterCounts n = ember::CountParameters(model);
  info->params_total = n.total;
  info->params_embeddings = n.of(K::kEmbeddings).parameters;
  info->params_wq = n.of(K::kWq).parameters;
  info->params_wk = n.of(K::kWk).parameters;
  info->params_wv = n.of(K::kWv).parameters;
  info->params_wo = n.of(K::kWo).parameters;
  info->params_ffn = n.of(K::kFfn).parameters;
  info->params_norms = n.of(K::kNorms).parameters;
  info->params_classifier = n.of(K::kClassifier).parameters;
  info->params_other = n.of(K::kOther).parameters;
  info->params_f32 = n.of(D::kF32).parameters;
  info->params_f16 = n.of(D::kF16).parameters;
  info->params_bf16 = n.of(D::kBF16).parameters;
  info->params_q8 = n.of(D::kQ8).parameters;
  info->params_q4 = n.of(D::kQ4).parameters;
  info->params_q4k = n.of(D::kQ4K).parameters;
  info->params_q5k = n.of(D::kQ5K).parameters;
  info->params_q6k = n.of(D::kQ6K).parameters;
  info->weight_bytes = 0;
  for (const ember::ParameterCount& d : n.by_dtype) info->weight_bytes += d.bytes;
}

}  // namespace

extern "C" {

ember_status ember_model_get_info(const ember_model* model, ember_model_info* info) {
  if (!model) return NullArgument("model");
  if (!info) return NullArgument("info");
  const ember_status status = Report(CheckStructSize<ember_model_info>(
      "ember_model_info", info->struct_size,
      offsetof(ember_model_info, weight_bytes) + sizeof(info->weight_bytes),
      StructFill::kSizeOnly));
  if (status != EMBER_OK) return status;
  ember_model_info full;
  memset(&full, 0, sizeof(full));
  FillModelInfo(*model->model, &full);
  CopyKnownFields(full, info);
  return EMBER_OK;
}

const float* ember_attention(const ember_session* session, ember_attention_info* info) {
  if (!info) {
    NullArgument("info");
    return nullptr;
  }
  const ember::Status size = CheckStructSize<ember_attention_info>(
      "ember_attention_info", info->struct_size,
      offsetof(ember_attention_info, rows) + sizeof(info->rows), StructFill::kSizeOnly);
  if (!size.ok()) {
    Report(size);
    return nullptr;
  }
  ember_attention_info full;
  memset(&full, 0, sizeof(full));
  if (!session) {
    CopyKnownFields(full, info);
    NullArgument("session");
    return nullptr;
  }
  const ember::AttentionRecord record = session->session.attention_record();
  if (record.weights == nullptr) {
    CopyKnownFields(full, info);
    Report(
        ember::InvalidArgument("the session records no attention (create it with "
                               "ember_session_options.record_attention)"));
    return nullptr;
  }
  full.first_layer = record.first_layer;
  full.num_layers = record.num_layers;
  full.first_head = record.first_head;
  full.num_heads = record.num_heads;
  full.positions = record.positions;
  full.rows = record.rows;
  CopyKnownFields(full, info);
  return record.weights;
}

}  // extern "C"
