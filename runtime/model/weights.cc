// BindWeights: maps tensor names to roles and checks every shape against the config.
#include "runtime/model/weights.h"

#include <algorithm>
#include <cstring>

#include "runtime/linear.h"
#include "runtime/model/tensor_names.h"

namespace ember {
namespace {

enum class Role { kVector, kMatrix, kEmbedding };

// Which tensors a Binder answers for (CheckAllUsed): the text model's, with or without a
// vision tower beside it, or the tower's.
enum class Scope { kAll, kText, kVision };

class Binder {
 public:
  Binder(const std::vector<Tensor>& tensors, Scope scope)
      : tensors_(tensors),
        scope_(scope),
        used_(tensors.size(), false),
        order_(tensors.size()) {
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = i;
    std::sort(order_.begin(), order_.end(), [&](size_t a, size_t b) {
      return strcmp(tensors_[a].name, tensors_[b].name) < 0;
    });
  }

  // Names bound from here on start with `prefix` ("v.": a tower's encoder).
  void set_prefix(const char* prefix) { prefix_ = prefix; }

  // Binds prefix + `name` with shape (rows, cols) (cols == 0: a vector of `rows`) to
  // *out.
  Status Bind(const char* unprefixed, Role role, uint64_t rows, uint64_t cols,
              bool required, const Tensor** out) {
    *out = nullptr;
    char full[80];
    Format(full, sizeof(full), "%s%s", prefix_, unprefixed);
    const char* name = full;
    auto it = std::lower_bound(
        order_.begin(), order_.end(), name,
        [&](size_t i, const char* n) { return strcmp(tensors_[i].name, n) < 0; });
    if (it == order_.end() || strcmp(tensors_[*it].name, name) != 0) {
      if (required) return InvalidModel("missing tensor '%s'", name);
      return Status::Ok();
    }
    if (!required) {
      return InvalidModel("unexpected tensor '%s': the config does not use it", name);
    }
    const Tensor& t = tensors_[*it];
    used_[*it] = true;
    const bool is_vector = cols == 0;
    const bool shape_ok =
        is_vector ? (t.n_dims == 1 && t.shape[0] == rows)
                  : (t.n_dims == 2 && t.shape[0] == rows && t.shape[1] == cols);
    if (!shape_ok) {
      if (is_vector) {
        return InvalidModel("tensor '%s' has %u dims (%llu, ...); expected (%llu)", name,
                            t.n_dims, static_cast<unsigned long long>(t.shape[0]),
                            static_cast<unsigned long long>(rows));
      }
      return InvalidModel(
          "tensor '%s' has shape (%llu, %llu) with %u dims; expected (%llu, %llu)", name,
          static_cast<unsigned long long>(t.shape[0]),
          static_cast<unsigned long long>(t.n_dims > 1 ? t.shape[1] : 0), t.n_dims,
          static_cast<unsigned long long>(rows), static_cast<unsigned long long>(cols));
    }
    const bool dtype_ok = role == Role::kVector ? t.dtype == DType::kF32
                          : role == Role::kEmbedding
                              ? EmbeddingSupports(t.dtype, t.layout)
                              : LinearSupports(t.dtype, t.layout);
    if (!dtype_ok) {
      return InvalidModel("tensor '%s' has dtype %s, which this build cannot use there",
                          name, DTypeName(t.dtype));
    }
    *out = &t;
    return Status::Ok();
  }

  Status CheckAllUsed() const {
    for (size_t i = 0; i < used_.size(); ++i) {
      const bool vision = names::IsVisionTensor(tensors_[i].name);
      const bool mine = scope_ == Scope::kAll || (scope_ == Scope::kVision) == vision;
      if (!used_[i] && mine) {
        return InvalidModel("unexpected tensor '%s'%s", tensors_[i].name,
                            vision && scope_ == Scope::kAll
                                ? " (a vision tower's, in a model without one)"
                                : "");
      }
    }
    return Status::Ok();
  }

 private:
  const std::vector<Tensor>& tensors_;
  const Scope scope_;
  const char* prefix_ = "";
  std::vector<bool> used_;
  std::vector<size_t> order_;
};

// Binds a model's tensors through b; a vision tower's encoder (vocab_size 0) has no token
// table and no classifier.
Status BindModel(const ModelConfig& c, Binder& b, Weights* w) {
  const bool layer_norm = c.norm == NormKind::kLayerNorm;
  const bool gated = c.ffn == FfnKind::kGated;
  const bool vocab = c.vocab_size > 0;
  const uint64_t d = c.d_model, q = c.q_dim(), kv = c.kv_dim(), f = c.ffn_dim,
                 hd = c.head_dim;

  EMBER_RETURN_IF_ERROR(b.Bind(names::kTokEmbedding, Role::kEmbedding, c.vocab_size, d,
                               vocab, &w->tok_embedding));
  EMBER_RETURN_IF_ERROR(b.Bind(names::kPosEmbedding, Role::kEmbedding, c.max_context, d,
                               c.positions == PositionKind::kLearned, &w->pos_embedding));
  EMBER_RETURN_IF_ERROR(b.Bind(names::kTokTypes, Role::kEmbedding, c.token_types, d,
                               c.token_types > 0, &w->tok_types));
  EMBER_RETURN_IF_ERROR(b.Bind(names::kEmbeddingNorm, Role::kVector, d, 0,
                               c.embedding_norm, &w->embedding_norm));
  EMBER_RETURN_IF_ERROR(b.Bind(names::kEmbeddingNormBias, Role::kVector, d, 0,
                               c.embedding_norm && layer_norm, &w->embedding_norm_bias));
  const bool head = c.labels > 0;
  EMBER_RETURN_IF_ERROR(
      b.Bind(names::kClsPool, Role::kEmbedding, d, d, c.label_pooler, &w->cls_pool));
  EMBER_RETURN_IF_ERROR(
      b.Bind(names::kClsPoolBias, Role::kVector, d, 0, c.label_pooler, &w->cls_pool_bias));
  EMBER_RETURN_IF_ERROR(
      b.Bind(names::kClsOut, Role::kEmbedding, c.labels, d, head, &w->cls_out));
  EMBER_RETURN_IF_ERROR(
      b.Bind(names::kClsOutBias, Role::kVector, c.labels, 0, head, &w->cls_out_bias));
  for (const Tensor* t : {w->cls_pool, w->cls_out}) {
    if (t && t->dtype != DType::kF32) {
      return InvalidModel("tensor '%s' is %s: a classification head is f32", t->name,
                          DTypeName(t->dtype));
    }
  }
  const size_t n_dense = c.dense_dims.size();
  w->dense.assign(n_dense, nullptr);
  w->dense_bias.assign(n_dense, nullptr);
  uint64_t in = d;
  for (size_t i = 0; i < n_dense; ++i) {
    char name[64];
    const unsigned u = static_cast<unsigned>(i);
    names::LayerName(names::kDense, u, name);
    EMBER_RETURN_IF_ERROR(
        b.Bind(name, Role::kEmbedding, c.dense_dims[i], in, true, &w->dense[i]));
    names::LayerName(names::kDenseBias, u, name);
    EMBER_RETURN_IF_ERROR(b.Bind(name, Role::kVector, c.dense_dims[i], 0,
                                 (c.dense_flags[i] & ModelConfig::kDenseBias) != 0,
                                 &w->dense_bias[i]));
    if (w->dense[i]->dtype != DType::kF32) {
      return InvalidModel("tensor '%s' is %s: a dense projection is f32",
                          w->dense[i]->name, DTypeName(w->dense[i]->dtype));
    }
    in = c.dense_dims[i];
  }
  EMBER_RETURN_IF_ERROR(
      b.Bind(names::kOutputNorm, Role::kVector, d, 0, c.final_norm, &w->output_norm));
  EMBER_RETURN_IF_ERROR(b.Bind(names::kOutputNormBias, Role::kVector, d, 0,
                               c.final_norm && layer_norm, &w->output_norm_bias));
  EMBER_RETURN_IF_ERROR(b.Bind(names::kOutput, Role::kMatrix, c.vocab_size, d,
                               vocab && !c.tied_classifier, &w->output));
  EMBER_RETURN_IF_ERROR(b.Bind(names::kOutputBias, Role::kVector, c.vocab_size, 0,
                               vocab && c.output_bias, &w->output_bias));
  if (vocab && c.tied_classifier) {
    if (!LinearSupports(w->tok_embedding->dtype, w->tok_embedding->layout)) {
      return InvalidModel("tied classifier: token embedding dtype %s cannot be a matrix",
                          DTypeName(w->tok_embedding->dtype));
    }
    w->output = w->tok_embedding;
  }

  w->layers.assign(c.n_layers, LayerWeights{});
  char name[64];
  for (uint32_t i = 0; i < c.n_layers; ++i) {
    LayerWeights& l = w->layers[i];
    auto bind = [&](const char* format, Role role, uint64_t rows, uint64_t cols,
                    bool required, const Tensor** out) {
      names::LayerName(format, i, name);
      return b.Bind(name, role, rows, cols, required, out);
    };
    EMBER_RETURN_IF_ERROR(
        bind(names::kAttnNorm, Role::kVector, d, 0, true, &l.attn_norm));
    EMBER_RETURN_IF_ERROR(
        bind(names::kAttnNormBias, Role::kVector, d, 0, layer_norm, &l.attn_norm_bias));
    EMBER_RETURN_IF_ERROR(bind(names::kAttnQ, Role::kMatrix, q, d, true, &l.wq));
    EMBER_RETURN_IF_ERROR(bind(names::kAttnK, Role::kMatrix, kv, d, true, &l.wk));
    EMBER_RETURN_IF_ERROR(bind(names::kAttnV, Role::kMatrix, kv, d, true, &l.wv));
    EMBER_RETURN_IF_ERROR(bind(names::kAttnOut, Role::kMatrix, d, q, true, &l.wo));
    EMBER_RETURN_IF_ERROR(
        bind(names::kAttnQBias, Role::kVector, q, 0, c.qkv_bias, &l.bq));
    EMBER_RETURN_IF_ERROR(
        bind(names::kAttnKBias, Role::kVector, kv, 0, c.qkv_bias, &l.bk));
    EMBER_RETURN_IF_ERROR(
        bind(names::kAttnVBias, Role::kVector, kv, 0, c.qkv_bias, &l.bv));
    EMBER_RETURN_IF_ERROR(
        bind(names::kAttnOutBias, Role::kVector, d, 0, c.out_bias, &l.bo));
    EMBER_RETURN_IF_ERROR(bind(names::kFfnNorm, Role::kVector, d, 0, true, &l.ffn_norm));
    EMBER_RETURN_IF_ERROR(
        bind(names::kFfnNormBias, Role::kVector, d, 0, layer_norm, &l.ffn_norm_bias));
    EMBER_RETURN_IF_ERROR(bind(names::kFfnGate, Role::kMatrix, f, d, gated, &l.ffn_gate));
    EMBER_RETURN_IF_ERROR(bind(names::kFfnUp, Role::kMatrix, f, d, true, &l.ffn_up));
    EMBER_RETURN_IF_ERROR(bind(names::kFfnDown, Role::kMatrix, d, f, true, &l.ffn_down));
    EMBER_RETURN_IF_ERROR(bind(names::kFfnGateBias, Role::kVector, f, 0,
                               gated && c.ffn_bias, &l.ffn_gate_bias));
    EMBER_RETURN_IF_ERROR(
        bind(names::kFfnUpBias, Role::kVector, f, 0, c.ffn_bias, &l.ffn_up_bias));
    EMBER_RETURN_IF_ERROR(
        bind(names::kFfnDownBias, Role::kVector, d, 0, c.ffn_bias, &l.ffn_down_bias));
    EMBER_RETURN_IF_ERROR(
        bind(names::kAttnQNorm, Role::kVector, hd, 0, c.qk_norm, &l.attn_q_norm));
    EMBER_RETURN_IF_ERROR(
        bind(names::kAttnKNorm, Role::kVector, hd, 0, c.qk_norm, &l.attn_k_norm));
    EMBER_RETURN_IF_ERROR(
        bind(names::kAttnPostNorm, Role::kVector, d, 0, c.post_norms, &l.attn_post_norm));
    EMBER_RETURN_IF_ERROR(
        bind(names::kFfnPostNorm, Role::kVector, d, 0, c.post_norms, &l.ffn_post_norm));
  }
  return Status::Ok();
}

}  // namespace

Status BindWeights(const ModelConfig& c, const std::vector<Tensor>& tensors, Weights* w,
                   bool vision) {
  Binder b(tensors, vision ? Scope::kText : Scope::kAll);
  EMBER_RETURN_IF_ERROR(BindModel(c, b, w));
  return b.CheckAllUsed();
}

Status BindVisionWeights(const VisionConfig& v, size_t text_dim,
                         const std::vector<Tensor>& tensors, VisionWeights* w) {
  Binder b(tensors, Scope::kVision);
  b.set_prefix("v.");
  EMBER_RETURN_IF_ERROR(BindModel(v.encoder, b, &w->encoder));
  const uint64_t d = v.encoder.d_model;
  EMBER_RETURN_IF_ERROR(b.Bind(names::kPatchEmbedding, Role::kMatrix, d, v.patch_values(),
                               true, &w->patch));
  EMBER_RETURN_IF_ERROR(
      b.Bind(names::kPatchEmbeddingBias, Role::kVector, d, 0, true, &w->patch_bias));
  b.set_prefix("");
  const bool pool = v.connector == ImageConnector::kAveragePool;
  EMBER_RETURN_IF_ERROR(
      b.Bind(names::kProjectorNorm, Role::kVector, d, 0, pool, &w->projector_norm));
  EMBER_RETURN_IF_ERROR(b.Bind(pool ? names::kPoolProjector : names::kShuffleProjector,
                               Role::kMatrix, text_dim, v.projector_inputs(), true,
                               &w->projector));
  return b.CheckAllUsed();
}

}  // namespace ember
