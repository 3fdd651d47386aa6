// Prompt state: save and restore (see prompt_state.h).
#include "runtime/chat/prompt_state.h"

#include <cstring>

namespace ember {
namespace {

constexpr char kMagic[8] = {'E', 'M', 'B', 'R', 'S', 'T', 'A', 'T'};

// Header fields by byte offset.
enum : size_t {
  kAtMagic = 0,
  kAtVersion = 8,
  kAtHeaderBytes = 12,
  kAtFingerprint = 16,
  kAtLayers = 24,
  kAtKvDim = 28,
  kAtKvType = 32,
  kAtRowBytes = 36,
  kAtPosition = 40,
  kAtContext = 44,
  kAtRng = 48,
  kAtPayloadBytes = 56,
  kAtPayloadHash = 64,
  kAtHeaderHash = 72,  // of the whole header with this field zero
  kAtFlags = 80,       // kHasLogits
  kAtVocab = 84,
  kAtReserved = 88,  // zero
};
constexpr uint32_t kHasLogits = 1;
constexpr uint64_t kLayerEntryBytes = 8;  // sink, ring (uint32 each)

template <class T>
void Put(uint8_t* at, T v) {
  memcpy(at, &v, sizeof(v));
}
template <class T>
T Get(const uint8_t* at) {
  T v;
  memcpy(&v, at, sizeof(v));
  return v;
}

uint64_t Mix(uint64_t h) {  // MurmurHash3's finalizer
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

// A 64-bit hash of bytes: four independent lanes of 8-byte words (a few GB/s), then the
// tail and the length, mixed. Not cryptographic: it finds damage, not forgery.
uint64_t Hash(const void* data, size_t n, uint64_t seed) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint64_t lane[4] = {seed, seed ^ 0x9E3779B97F4A7C15ull, seed + 1, seed - 1};
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int k = 0; k < 4; ++k) {
      lane[k] = (lane[k] ^ Get<uint64_t>(p + i + 8 * k)) * 0x100000001B3ull;
      lane[k] = (lane[k] << 29) | (lane[k] >> 35);
    }
  }
  uint64_t h = Mix(lane[0]) ^ Mix(lane[1] + 1) ^ Mix(lane[2] + 2) ^ Mix(lane[3] + 3);
  for (; i < n; ++i) h = (h ^ p[i]) * 0x100000001B3ull;
  return Mix(h ^ n);
}

// The header's checksum covers every byte of it but its own 8: a flipped flag, vocabulary
// size or reserved byte is damage like any other.
uint64_t HeaderHash(const uint8_t* header) {
  uint8_t copy[kPromptStateHeaderBytes];
  memcpy(copy, header, sizeof(copy));
  memset(copy + kAtHeaderHash, 0, sizeof(uint64_t));
  return Hash(copy, sizeof(copy), 11);
}

uint64_t RowBytes(const Session& s) {
  const ModelConfig& c = s.model().config();
  return KvRowBytes(s.plan().kv_type, c.n_kv_heads, c.head_dim);
}

// Slots of a layer's keys (and of its values) a state at `position` holds: every
// position's, or a ring's slots in use (the ring's geometry as stored, so the bytes are
// the cache's as it was).
uint64_t LayerSlots(uint32_t sink, uint32_t ring, uint64_t position) {
  return ring == 0 || position < uint64_t{sink} + ring ? position : uint64_t{sink} + ring;
}

// The payload: the tokens, the layer table ({sink, ring} of each layer), each layer's
// key and value slots, the logits. Its size from the table (nullptr: rings of none).
uint64_t PayloadBytes(uint64_t layers, const uint8_t* table, uint64_t row_bytes,
                      uint64_t position, uint64_t logits) {
  uint64_t slots = 0;
  for (uint64_t l = 0; l < layers; ++l) {
    slots += table ? LayerSlots(Get<uint32_t>(table + 8 * l),
                                Get<uint32_t>(table + 8 * l + 4), position)
                   : position;
  }
  return position * sizeof(int32_t) + layers * kLayerEntryBytes + 2 * slots * row_bytes +
         logits * sizeof(float);
}

}  // namespace

uint64_t ModelFingerprint(const Model& model) {
  const ModelConfig& c = model.config();
  const uint64_t shape[] = {c.d_model,
                            c.n_layers,
                            c.n_heads,
                            c.n_kv_heads,
                            c.head_dim,
                            c.ffn_dim,
                            c.vocab_size,
                            c.max_context,
                            static_cast<uint64_t>(c.positions),
                            static_cast<uint64_t>(c.norm),
                            model.tokenizer().vocab_size()};
  uint64_t h = Hash(shape, sizeof(shape), 1);
  for (const Tensor& t : model.tensors()) {
    h ^= Hash(t.name, strlen(t.name), h);
    const uint64_t meta[] = {static_cast<uint64_t>(t.dtype), t.n_dims, t.shape[0],
                             t.n_dims > 1 ? t.shape[1] : 0, t.size_bytes};
    h = Hash(meta, sizeof(meta), h);
    // Samples of the bytes: the start, the middle and the end.
    const size_t sample = t.size_bytes < 256 ? t.size_bytes : 256;
    for (uint64_t at :
         {uint64_t{0}, (t.size_bytes - sample) / 2, t.size_bytes - sample}) {
      h = Hash(t.data + at, sample, h);
    }
  }
  return h;
}

size_t PromptStateBytes(const Session& s) {
  const ModelConfig& c = s.model().config();
  uint64_t slots = 0;
  for (uint32_t layer = 0; layer < c.n_layers; ++layer) {
    const KvLayer& l = s.kv_cache().layers[layer];
    slots += LayerSlots(static_cast<uint32_t>(l.sink), static_cast<uint32_t>(l.ring),
                        s.position());
  }
  return kPromptStateHeaderBytes + s.position() * sizeof(int32_t) +
         c.n_layers * kLayerEntryBytes + 2 * slots * RowBytes(s) +
         (s.logits_valid() ? c.vocab_size * sizeof(float) : 0);
}

Status SavePromptState(const Session& s, const Sampler* sampler, void* out,
                       size_t capacity, size_t* bytes) {
  const ModelConfig& c = s.model().config();
  const size_t needed = PromptStateBytes(s);
  *bytes = needed;
  if (capacity < needed) {
    return ResourceExhausted(
        "a prompt state at position %zu takes %zu bytes; the buffer "
        "has %zu",
        s.position(), needed, capacity);
  }
  uint8_t* h = static_cast<uint8_t*>(out);
  uint8_t* payload = h + kPromptStateHeaderBytes;
  const size_t position = s.position(), row = RowBytes(s);
  memcpy(payload, s.tokens(), position * sizeof(int32_t));
  uint8_t* at = payload + position * sizeof(int32_t);
  const KvCache& kv = s.kv_cache();
  for (uint32_t layer = 0; layer < c.n_layers; ++layer, at += kLayerEntryBytes) {
    Put<uint32_t>(at, static_cast<uint32_t>(kv.layers[layer].sink));
    Put<uint32_t>(at + 4, static_cast<uint32_t>(kv.layers[layer].ring));
  }
  // The slots as stored (the cache's type, a ring's rotation): restored byte for byte.
  for (uint32_t layer = 0; layer < c.n_layers; ++layer) {
    const size_t n = LayerSlots(static_cast<uint32_t>(kv.layers[layer].sink),
                                static_cast<uint32_t>(kv.layers[layer].ring), position);
    for (KvSide side : {kKeys, kValues}) {
      kv.CopySlotsOut(layer, side, n, at);
      at += n * row;
    }
  }
  // The last position's logits, so that a restored session samples with no prefill.
  if (s.logits_valid()) memcpy(at, s.logits(), c.vocab_size * sizeof(float));
  memset(h, 0, kPromptStateHeaderBytes);
  memcpy(h + kAtMagic, kMagic, sizeof(kMagic));
  Put<uint32_t>(h + kAtVersion, kPromptStateVersion);
  Put<uint32_t>(h + kAtHeaderBytes, kPromptStateHeaderBytes);
  Put<uint64_t>(h + kAtFingerprint, ModelFingerprint(s.model()));
  Put<uint32_t>(h + kAtLayers, c.n_layers);
  Put<uint32_t>(h + kAtKvDim, static_cast<uint32_t>(c.kv_dim()));
  Put<uint32_t>(h + kAtKvType, static_cast<uint32_t>(s.plan().kv_type));
  Put<uint32_t>(h + kAtRowBytes, static_cast<uint32_t>(row));
  Put<uint32_t>(h + kAtPosition, static_cast<uint32_t>(position));
  Put<uint32_t>(h + kAtContext, static_cast<uint32_t>(s.max_context()));
  Put<uint64_t>(h + kAtRng, sampler ? sampler->rng_state() : 0);
  Put<uint64_t>(h + kAtPayloadBytes, needed - kPromptStateHeaderBytes);
  Put<uint32_t>(h + kAtFlags, s.logits_valid() ? kHasLogits : 0);
  Put<uint32_t>(h + kAtVocab, c.vocab_size);
  Put<uint64_t>(h + kAtPayloadHash, Hash(payload, needed - kPromptStateHeaderBytes, 7));
  Put<uint64_t>(h + kAtHeaderHash, HeaderHash(h));
  return Status::Ok();
}

Status PeekPromptState(const void* data, size_t bytes, PromptStateInfo* info) {
  *info = PromptStateInfo();
  const uint8_t* h = static_cast<const uint8_t*>(data);
  if (data == nullptr || bytes < kPromptStateHeaderBytes || memcmp(h, kMagic, 8) != 0) {
    return InvalidArgument("not an ember prompt state (no header)");
  }
  if (Get<uint32_t>(h + kAtVersion) != kPromptStateVersion ||
      Get<uint32_t>(h + kAtHeaderBytes) != kPromptStateHeaderBytes) {
    return InvalidArgument(
        "prompt state version %u (this build reads version %u: save or bake it again)",
        Get<uint32_t>(h + kAtVersion), kPromptStateVersion);
  }
  if (Get<uint64_t>(h + kAtHeaderHash) != HeaderHash(h)) {
    return InvalidArgument("prompt state header is damaged (checksum mismatch)");
  }
  info->model_fingerprint = Get<uint64_t>(h + kAtFingerprint);
  info->n_layers = Get<uint32_t>(h + kAtLayers);
  info->kv_dim = Get<uint32_t>(h + kAtKvDim);
  info->kv_type = Get<uint32_t>(h + kAtKvType);
  info->row_bytes = Get<uint32_t>(h + kAtRowBytes);
  info->position = Get<uint32_t>(h + kAtPosition);
  info->rng_state = Get<uint64_t>(h + kAtRng);
  info->payload_bytes = Get<uint64_t>(h + kAtPayloadBytes);
  const uint32_t flags = Get<uint32_t>(h + kAtFlags);
  info->vocab_size = Get<uint32_t>(h + kAtVocab);
  info->has_logits = (flags & kHasLogits) != 0;
  if ((flags & ~kHasLogits) != 0 || info->vocab_size > (1u << 24)) {
    return InvalidArgument("prompt state: unknown flags %u", flags);
  }
  // The sizes agree with each other (64-bit: no field can wrap them) and with `bytes`.
  if (info->n_layers > 4096 || info->row_bytes > (1u << 24) ||
      info->position > (1u << 24)) {
    return InvalidArgument(
        "prompt state sizes out of range (%u layers, rows of %u bytes, "
        "position %u)",
        info->n_layers, info->row_bytes, info->position);
  }
  const uint64_t table_end =
      uint64_t{info->position} * sizeof(int32_t) + info->n_layers * kLayerEntryBytes;
  if (table_end > bytes - kPromptStateHeaderBytes) {
    return InvalidArgument("prompt state truncated: %zu bytes", bytes);
  }
  info->layer_table = h + kPromptStateHeaderBytes + info->position * sizeof(int32_t);
  for (uint32_t l = 0; l < info->n_layers; ++l) {
    if (Get<uint32_t>(info->layer_table + 8 * l) > (1u << 24) ||
        Get<uint32_t>(info->layer_table + 8 * l + 4) > (1u << 24)) {
      return InvalidArgument("prompt state: layer %u's ring is out of range", l);
    }
  }
  if (info->payload_bytes != PayloadBytes(info->n_layers, info->layer_table,
                                          info->row_bytes, info->position,
                                          info->has_logits ? info->vocab_size : 0)) {
    return InvalidArgument(
        "prompt state sizes disagree (%u layers, rows of %u bytes, "
        "position %u, payload %llu)",
        info->n_layers, info->row_bytes, info->position,
        static_cast<unsigned long long>(info->payload_bytes));
  }
  const uint64_t state_bytes = kPromptStateHeaderBytes + info->payload_bytes;
  if (state_bytes > bytes) {
    return InvalidArgument("prompt state truncated: %zu bytes of %llu", bytes,
                           static_cast<unsigned long long>(state_bytes));
  }
  // A state is exactly what SavePromptState wrote: bytes after its end are another
  // file's, or damage the checksums do not cover.
  if (state_bytes < bytes) {
    return InvalidArgument(
        "prompt state has %llu bytes after its end (%zu bytes where the header says "
        "%llu)",
        static_cast<unsigned long long>(bytes - state_bytes), bytes,
        static_cast<unsigned long long>(state_bytes));
  }
  info->tokens = reinterpret_cast<const int32_t*>(h + kPromptStateHeaderBytes);
  return Status::Ok();
}

Status PromptStateFits(const Model& model, const SessionPlan& plan,
                       const PromptStateInfo& info, size_t keep, bool* convert) {
  const ModelConfig& c = model.config();
  if (info.model_fingerprint != ModelFingerprint(model)) {
    return InvalidArgument("the prompt state was saved from another model");
  }
  const KvType type = plan.kv_type;
  if (info.n_layers != c.n_layers || info.kv_dim != c.kv_dim() ||
      info.vocab_size != c.vocab_size) {
    return InvalidArgument(
        "the prompt state's KV cache (%u layers of %u) does not match this session's "
        "(%u of %zu)",
        info.n_layers, info.kv_dim, c.n_layers, c.kv_dim());
  }
  // An f32 state restores into an f16 or q8 cache too: its rows are stored as the cache
  // stores the f32 keys and values a forward pass computes (KvCache::StoreRow), so a
  // baked prompt (always f32) serves sessions of every KV type. A row to convert goes
  // through the new-keys buffer, which a plan of an f16 or q8 cache has (free between
  // forward passes).
  *convert = info.kv_type == static_cast<uint32_t>(KvType::kF32) && type != KvType::kF32 &&
             info.row_bytes == KvRowBytes(KvType::kF32, c.n_kv_heads, c.head_dim);
  const char* saved = info.kv_type <= static_cast<uint32_t>(KvType::kQ8)
                          ? KvTypeName(static_cast<KvType>(info.kv_type))
                          : "unknown";
  if (!*convert && (info.kv_type != static_cast<uint32_t>(type) ||
                    info.row_bytes != KvRowBytes(type, c.n_kv_heads, c.head_dim))) {
    return InvalidArgument(
        "the saved state needs kv type %s; this session's KV cache is %s", saved,
        KvTypeName(type));
  }
  if (keep > plan.max_context) {
    return OutOfRange(
        "the prompt state holds %zu positions; this session's context is %zu", keep,
        plan.max_context);
  }
  // Each layer: a state whose slots are its positions (no ring, or one that has not
  // wrapped) restores into any layout; a wrapped ring only into the same ring, and only
  // back to where it still holds what a pass reads.
  const size_t position = info.position;
  for (uint32_t layer = 0; layer < c.n_layers; ++layer) {
    const uint32_t sink = Get<uint32_t>(info.layer_table + 8 * layer);
    const uint32_t ring = Get<uint32_t>(info.layer_table + 8 * layer + 4);
    if (LayerSlots(sink, ring, position) == position) continue;
    if (*convert) {
      return InvalidArgument(
          "the saved state needs kv type %s (its layer %u is a wrapped ring, which "
          "restores only into a cache of its own type); this session's KV cache is %s",
          saved, layer, KvTypeName(type));
    }
    const KvLayer l = plan.Layer(c, layer);
    if (l.sink != sink || l.ring != ring) {
      return InvalidArgument(
          "the prompt state's layer %u keeps a ring of %u positions after %u, wrapped "
          "at position %zu; this session's keeps %zu after %zu (its max_batch and "
          "context_keep decide it)",
          layer, ring, sink, position, l.ring, l.sink);
    }
    if (!KvLayerHolds(l, c.window(layer), position, keep)) {
      return OutOfRange(
          "the prompt state's layer %u keeps a ring of its last %u positions, which no "
          "longer holds those a pass from position %zu reads",
          layer, ring, keep);
    }
  }
  return Status::Ok();
}

Status BakedPromptFits(const Model& model, const SessionPlan& plan) {
  const BakedPromptView& baked = model.baked_prompt();
  if (baked.state == nullptr) return Status::Ok();
  PromptStateInfo info;
  Status s = PeekPromptState(baked.state, baked.state_bytes, &info);
  bool convert = false;
  if (s.ok()) s = PromptStateFits(model, plan, info, info.position, &convert);
  if (s.ok()) return s;
  return Status(s.code(),
                "the model's baked prompt: %s (a session that ignores the baked prompt "
                "starts empty)",
                s.message());
}

Status RestorePromptState(Session* s, Sampler* sampler, const void* data, size_t bytes,
                          size_t positions) {
  PromptStateInfo info;
  EMBER_RETURN_IF_ERROR(PeekPromptState(data, bytes, &info));
  const ModelConfig& c = s->model().config();
  const size_t keep = positions < info.position ? positions : info.position;
  bool convert = false;
  EMBER_RETURN_IF_ERROR(PromptStateFits(s->model(), s->plan(), info, keep, &convert));
  float* const scratch = s->buffers().act.kv_new;
  const KvCache& kv = s->kv_cache();
  const size_t position = info.position, row = info.row_bytes;
  const uint8_t* payload = static_cast<const uint8_t*>(data) + kPromptStateHeaderBytes;
  const uint8_t* h = static_cast<const uint8_t*>(data);
  if (Get<uint64_t>(h + kAtPayloadHash) != Hash(payload, info.payload_bytes, 7)) {
    return InvalidArgument("the prompt state is damaged (payload checksum mismatch)");
  }
  // Memory of the tokens: copied through memcpy (the state may be unaligned).
  for (uint32_t i = 0; i < info.position; ++i) {
    const int32_t t = Get<int32_t>(payload + 4 * i);
    if (t < 0 || static_cast<uint32_t>(t) >= c.vocab_size) {
      return InvalidArgument("the prompt state holds token %d, outside the vocabulary",
                             t);
    }
  }
  // Every check passed: write the first `keep` positions.
  memcpy(s->buffers().history, payload, keep * sizeof(int32_t));
  const uint8_t* at =
      payload + position * sizeof(int32_t) + c.n_layers * kLayerEntryBytes;
  for (uint32_t layer = 0; layer < c.n_layers; ++layer) {
    const uint32_t sink = Get<uint32_t>(info.layer_table + 8 * layer);
    const uint32_t ring = Get<uint32_t>(info.layer_table + 8 * layer + 4);
    const size_t n = LayerSlots(sink, ring, position);
    const KvLayer& l = kv.layers[layer];
    for (KvSide side : {kKeys, kValues}) {
      if (convert) {  // f32 rows (n == position) stored as this cache stores rows
        for (size_t p = 0; p < keep; ++p) {
          if (l.ring == 0 || p < l.sink || p + l.ring >= keep) {
            memcpy(scratch, at + p * row, row);
            kv.StoreRow(s->kernels(), layer, side, p, scratch);
          }
        }
      } else if (n != position) {  // a wrapped ring, into the same ring: every slot
        kv.CopySlotsIn(layer, side, 0, at, n, 0, n);
      } else if (l.ring == 0) {  // positions into positions
        kv.CopySlotsIn(layer, side, 0, at, n, 0, keep);
      } else {  // positions into this session's ring: those it holds
        for (size_t p = 0; p < keep; ++p) {
          if (p < l.sink || p + l.ring >= keep) {
            kv.CopySlotsIn(layer, side, kv.Slot(layer, p), at, n, p, 1);
          }
        }
      }
      at += n * row;
    }
  }
  // The logits belong to the last position: restored only with all of them.
  // (An embedding model's session has no logits: a state that says it has some was not
  // saved from one of its sessions, and they are left out.)
  const bool logits =
      info.has_logits && keep == position && keep > 0 && s->plan().logit_rows > 0;
  if (logits) memcpy(s->buffers().logits, at, c.vocab_size * sizeof(float));
  s->RestorePosition(keep, logits);
  if (sampler) sampler->set_rng_state(info.rng_state);
  return Status::Ok();
}

}  // namespace ember
