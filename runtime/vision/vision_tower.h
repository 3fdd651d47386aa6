// A vision tower's pass over one tile: the patch embedding (Im2Patches, then the
// (d, 3 p^2) matmul and its bias), the ViT as the encoder pass (Forward::Encode: learned
// positions, pre-LN layers with bidirectional attention, post_layernorm), the connector
// (SmolVLM's pixel shuffle; Gemma 3's average pool and RMSNorm), then the projection to
// rows of the text model's d_model that take the image tokens' places in a prompt
// (Session::PrefillEmbedded).
//
// Its memory is planned once for a tile (PlanVisionTower) and given by the caller; a tile
// makes no heap allocation. The tower's "KV cache" is one layer of f32 rows every layer
// overwrites: a layer reads only its own keys and values.
#ifndef EMBER_RUNTIME_VISION_VISION_TOWER_H_
#define EMBER_RUNTIME_VISION_VISION_TOWER_H_

#include <cstddef>
#include <cstdint>

#include "kernels/kernel_table.h"
#include "runtime/activations.h"
#include "runtime/arena.h"
#include "runtime/model/model.h"
#include "runtime/pool/thread_pool.h"
#include "runtime/status.h"

namespace ember {

// The steps of one tile, for the buffers' lifetimes.
enum VisionStep : int { kVisionPatches = 0, kVisionEncoder = 1, kVisionConnector = 2 };

struct VisionTowerPlan {
  ArenaPlan arena;
  kernels::IsaChoice isa;
  struct Ids {
    ArenaBuffer<float> patches, x, x_norm, q, attn_out, probs, spans, proj, ffn_a, kv,
        connected, act_scales;
    ArenaBuffer<KvLayer> kv_layers;
    ArenaBuffer<int8_t> act_q;
    ArenaBuffer<int32_t> act_sums, act_half_sums;
  } ids;
  // Attention by blocks of queries (Forward::AttentionBlocked); false: query by query,
  // as a text model's (kept for tests that compare the two).
  bool blocked_attention = true;
  size_t arena_bytes() const { return arena.total_bytes(); }
};

// The plan for `model`'s tower (it must have one: Model::vision()), with the kernels of
// ISA tier `isa` (null: EMBER_ISA, else this CPU's best, as a session resolves it).
Result<VisionTowerPlan> PlanVisionTower(const Model& model, const char* isa = nullptr);

class VisionTower {
 public:
  // A tower over `arena` (64-byte aligned, at least plan.arena_bytes(); the caller's,
  // outliving the tower). `pool` may be null.
  static Result<VisionTower> Create(const Model& model, const VisionTowerPlan& plan,
                                    void* arena, size_t arena_bytes,
                                    const ThreadPool* pool = nullptr);

  // One tile of pixels (3, image_size, image_size), planar, as ProcessImage writes each
  // tile, into tokens_per_image() rows of the text model's d_model at `out`.
  void EncodeTile(const float* pixels, float* out);
  // The tower's final hidden states of the last tile: patches() rows of its d_model
  // (after post_layernorm), until the connector's next tile.
  const float* hidden() const { return hidden_; }
  size_t rows_per_tile() const { return vision_->tokens_per_image(); }

 private:
  VisionTower(const Model& model, const VisionTowerPlan& plan, uint8_t* base,
              const ThreadPool* pool);
  void Connect(float* out);

  const VisionConfig* vision_;
  const VisionWeights* weights_;
  kernels::KernelTable kernels_;
  const ThreadPool* pool_;
  Activations act_;
  KvCache kv_;
  KvLayer* kv_layers_;
  float* patches_;
  float* connected_;  // the connector's rows before the projection
  const float* hidden_ = nullptr;
};

}  // namespace ember

#endif  // EMBER_RUNTIME_VISION_VISION_TOWER_H_
