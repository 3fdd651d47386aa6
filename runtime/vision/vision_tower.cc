// The vision tower's pass over a tile (see vision_tower.h).
#include "runtime/vision/vision_tower.h"

#include <algorithm>
#include <cstring>

#include "kernels/dcheck.h"
#include "kernels/quant_layout.h"
#include "runtime/attention_record.h"
#include "runtime/checked_math.h"
#include "runtime/forward.h"
#include "runtime/linear.h"
#include "runtime/session_plan.h"
#include "runtime/vision/connector.h"
#include "runtime/vision/patches.h"

namespace ember {
namespace {

// f(const Tensor&) for every matrix the tower multiplies with.
template <class F>
void ForEachTowerMatrix(const VisionWeights& w, const F& f) {
  ForEachMatrix(w.encoder, f);
  f(*w.patch);
  f(*w.projector);
}

}  // namespace

Result<VisionTowerPlan> PlanVisionTower(const Model& model, const char* isa) {
  const VisionConfig* v = model.vision();
  if (v == nullptr) return InvalidArgument("the model has no vision tower");
  const VisionWeights& w = *model.vision_weights();
  const ModelConfig& e = v->encoder;
  VisionTowerPlan plan;
  EMBER_RETURN_IF_ERROR(ResolveSessionIsa(isa, &plan.isa));
  const size_t n = v->patches(), chunk = AttentionChunk(n);
  ArenaPlan& a = plan.arena;
  VisionTowerPlan::Ids& id = plan.ids;
  const auto P = SaturatingProduct;
  id.patches =
      a.Add<float>("patches", P({n, v->patch_values()}), kVisionPatches, kVisionPatches);
  id.x = a.Add<float>("x", P({n, e.d_model}), kVisionPatches, kVisionEncoder);
  id.x_norm = a.Add<float>("x_norm", P({n, e.d_model}), kVisionEncoder, kVisionConnector);
  id.q = a.Add<float>("q", P({n, e.q_dim()}), kVisionEncoder, kVisionEncoder);
  id.attn_out =
      a.Add<float>("attn_out", P({n, e.q_dim()}), kVisionEncoder, kVisionEncoder);
  id.probs = a.Add<float>("attn_probs", P({chunk, e.n_heads, n}), kVisionEncoder,
                          kVisionEncoder);
  id.spans = a.Add<float>("attn_spans",
                          P({chunk, kernels::kMaxAttentionSpans, e.n_heads,
                             kernels::AttentionPartialFloats(e.head_dim)}),
                          kVisionEncoder, kVisionEncoder);
  id.proj = a.Add<float>("proj", P({n, e.d_model}), kVisionEncoder, kVisionEncoder);
  // ffn_a doubles as the blocked attention's scratch (Activations::blocked): attention
  // and the FFN never run at once. It is the larger at ViT shapes only when the FFN is
  // narrower than 2 q_dim + heads * kAttentionBlock.
  const size_t blocked = P({e.n_heads, BlockedAttentionSlot(n, e.head_dim)});
  id.ffn_a = a.Add<float>("ffn_a", std::max(P({n, e.ffn_dim}), blocked), kVisionEncoder,
                          kVisionEncoder);
  // One layer's keys and values: each layer writes its own over the last one's.
  id.kv = a.Add<float>("kv", P({2, n, e.kv_dim()}), kVisionEncoder, kVisionEncoder,
                       BufferKind::kKvCache);
  id.kv_layers = a.Add<KvLayer>("kv_layers", e.n_layers, kVisionPatches, kVisionConnector,
                                BufferKind::kKvCache);
  id.connected =
      a.Add<float>("connected", P({v->tokens_per_image(), v->projector_inputs()}),
                   kVisionConnector, kVisionConnector);
  // The int8 copy of a quantized product's input: at most n rows of the widest.
  size_t widest = 0;
  bool k_quant = false;
  ForEachTowerMatrix(w, [&](const Tensor& t) {
    const bool quantized =
        t.dtype == DType::kQ8 || t.dtype == DType::kQ4 || IsKQuant(t.dtype);
    if (quantized && t.cols() > widest) widest = t.cols();
    k_quant = k_quant || IsKQuant(t.dtype);
  });
  const size_t groups = P({n, static_cast<size_t>(kernels::QuantGroups(widest))});
  id.act_q = a.Add<int8_t>("act_q", P({groups, kernels::kQuantGroup}), kVisionPatches,
                           kVisionConnector, BufferKind::kScratch);
  id.act_scales = a.Add<float>("act_scales", groups, kVisionPatches, kVisionConnector,
                               BufferKind::kScratch);
  id.act_sums = a.Add<int32_t>("act_sums", groups, kVisionPatches, kVisionConnector,
                               BufferKind::kScratch);
  id.act_half_sums = a.Add<int32_t>("act_half_sums", k_quant ? groups : 0, kVisionPatches,
                                    kVisionConnector, BufferKind::kScratch);
  const Status planned = a.Plan();
  if (!planned.ok()) {
    return ResourceExhausted("the vision tower's %zu patches of a tile: %s", n,
                             planned.message());
  }
  return plan;
}

Result<VisionTower> VisionTower::Create(const Model& model, const VisionTowerPlan& plan,
                                        void* arena, size_t arena_bytes,
                                        const ThreadPool* pool) {
  if (model.vision() == nullptr) return InvalidArgument("the model has no vision tower");
  if (arena == nullptr || reinterpret_cast<uintptr_t>(arena) % kArenaAlignment != 0 ||
      arena_bytes < plan.arena_bytes()) {
    return InvalidArgument(
        "a vision tower needs %zu bytes of arena at a %zu-byte aligned address; given "
        "%zu at %p",
        plan.arena_bytes(), static_cast<size_t>(kArenaAlignment), arena_bytes, arena);
  }
  return VisionTower(model, plan, static_cast<uint8_t*>(arena), pool);
}

VisionTower::VisionTower(const Model& model, const VisionTowerPlan& plan, uint8_t* base,
                         const ThreadPool* pool)
    : vision_(model.vision()),
      weights_(model.vision_weights()),
      kernels_(kernels::ChooseKernels(plan.isa)),
      pool_(pool) {
  const ModelConfig& e = vision_->encoder;
  const size_t n = vision_->patches();
  const ArenaPlan& a = plan.arena;
  const VisionTowerPlan::Ids& id = plan.ids;
  act_.max_batch = n;
  act_.x = a.Bind(id.x, base);
  act_.x_norm = a.Bind(id.x_norm, base);
  act_.q = a.Bind(id.q, base);
  act_.attn_out = a.Bind(id.attn_out, base);
  act_.probs = a.Bind(id.probs, base);
  act_.spans = a.Bind(id.spans, base);
  act_.proj = a.Bind(id.proj, base);
  act_.ffn_a = a.Bind(id.ffn_a, base);
  act_.blocked = plan.blocked_attention ? act_.ffn_a : nullptr;
  act_.quant.values = a.Bind(id.act_q, base);
  act_.quant.scales = a.Bind(id.act_scales, base);
  act_.quant.sums = a.Bind(id.act_sums, base);
  act_.quant.half_sums = a.Bind(id.act_half_sums, base);
  kv_.type = KvType::kF32;
  kv_.max_context = n;
  kv_.n_kv_heads = e.n_kv_heads;
  kv_.head_dim = e.head_dim;
  kv_.kv_dim = e.kv_dim();
  kv_.f32 = a.Bind(id.kv, base);
  kv_layers_ = a.Bind(id.kv_layers, base);
  kv_.layers = kv_layers_;
  patches_ = a.Bind(id.patches, base);
  connected_ = a.Bind(id.connected, base);
}

void VisionTower::EncodeTile(const float* pixels, float* out) {
  const ModelConfig& e = vision_->encoder;
  const size_t n = vision_->patches(), side = vision_->image_size;
  const ExecContext exec{&kernels_, pool_, nullptr, nullptr};
  // The layers' KV bookkeeping is written per tile, not once: an ImageEncoder lends the
  // tower's arena to the decoder and the processor before each image.
  for (size_t layer = 0; layer < e.n_layers; ++layer) {
    KvLayer l;
    l.capacity = n;
    l.first_row = 0;  // every layer over the same rows
    kv_layers_[layer] = l;
  }
  // The patch embedding: a Conv2d of stride = kernel = patch, as a matmul of patch rows.
  Im2Patches(pixels, side, side, vision_->patch_size, patches_);
  Linear(exec, act_.quant, *weights_->patch, patches_, n, act_.x);
  kernels_.add_bias(act_.x, weights_->patch_bias->f32(), n, e.d_model);
  const AttentionRecord no_record{};
  Forward forward(e, weights_->encoder, exec, act_, kv_, no_record);
  hidden_ = forward.Encode(n);  // x_norm: the loader requires the final norm
  EMBER_DCHECK(hidden_ == act_.x_norm);
  Connect(out);
}

// The connector and its projection, from hidden_ (patches x d) to out.
void VisionTower::Connect(float* out) {
  const VisionConfig& v = *vision_;
  const size_t side = v.patches_per_side(), d = v.encoder.d_model;
  const size_t rows = v.tokens_per_image();
  const ExecContext exec{&kernels_, pool_, nullptr, nullptr};
  if (v.connector == ImageConnector::kPixelShuffle) {
    PixelShuffle(hidden_, side, d, v.connector_factor, connected_);
  } else {
    // Average pool, then Gemma 3's RMSNorm with its (1 + w), stored so, in place.
    AveragePool(hidden_, side, d, v.connector_factor, connected_);
    for (size_t r = 0; r < rows; ++r) {
      kernels_.rms_norm(connected_ + r * d, weights_->projector_norm->f32(),
                        v.projector_norm_eps, connected_ + r * d, d);
    }
  }
  Linear(exec, act_.quant, *weights_->projector, connected_, rows, out);
}

}  // namespace ember
