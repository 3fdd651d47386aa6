// The optional sections of a model file: the compiled chat template and the baked
// prompt (see model_sections.h).
#include "runtime/model/model_sections.h"

#include <cstring>
#include <string_view>
#include <utility>

#include "runtime/chat/prompt_state.h"

namespace ember {

namespace {

template <typename T>
const T* VectorData(const flatbuffers::Vector<T>* v) {
  return v ? v->data() : nullptr;
}

std::string_view StringOf(const flatbuffers::String* s) {
  return s ? std::string_view(s->c_str(), s->size()) : std::string_view();
}

// The processor (absent: SigLIP's, a square of the tower's tile), whose tiles must be
// the tower's.
Status ReadImageProcessor(const fb::ImageProcessor* fp, uint32_t image_size,
                          ImageProcessorConfig* p) {
  *p = ImageProcessorConfig();
  p->height = p->width = static_cast<int>(image_size);
  if (fp != nullptr) {
    if (fp->layout() > fb::ImageLayout::MAX) {
      return InvalidModel("image processor: layout %u is unknown to this build",
                          static_cast<unsigned>(fp->layout()));
    }
    constexpr uint32_t kMaxEdge = 1u << 14;
    if (fp->height() > kMaxEdge || fp->width() > kMaxEdge ||
        fp->longest_edge() > kMaxEdge || fp->tile_size() > kMaxEdge) {
      return InvalidModel("image processor: a size above %u", kMaxEdge);
    }
    p->layout = static_cast<ImageLayout>(fp->layout());
    p->height = static_cast<int>(fp->height());
    p->width = static_cast<int>(fp->width());
    p->longest_edge = static_cast<int>(fp->longest_edge());
    p->tile_size = static_cast<int>(fp->tile_size());
    p->split = fp->split();
    p->resample = static_cast<ResampleFilter>(fp->resample());
    p->alpha_over_white = fp->alpha_over_white();
    p->rescale = fp->rescale();
    p->rescale_factor = fp->rescale_factor();
    p->normalize = fp->normalize();
    for (const auto* values : {fp->mean(), fp->std()}) {
      if (values != nullptr && values->size() != 3) {
        return InvalidModel("image processor: mean and std take 3 values, not %u",
                            values->size());
      }
    }
    for (int c = 0; c < 3; ++c) {
      if (fp->mean()) p->mean[c] = fp->mean()->Get(c);
      if (fp->std()) p->std[c] = fp->std()->Get(c);
    }
  }
  const Status valid = ValidateImageProcessorConfig(*p);
  if (!valid.ok()) return InvalidModel("vision config: %s", valid.message());
  const int tile = p->layout == ImageLayout::kFixed ? p->height : p->tile_size;
  if (tile != static_cast<int>(image_size) ||
      (p->layout == ImageLayout::kFixed && p->width != p->height)) {
    return InvalidModel(
        "vision config: the processor's tiles (%dx%d) are not the tower's %u pixels",
        p->layout == ImageLayout::kFixed ? p->width : tile, tile, image_size);
  }
  return Status::Ok();
}

Status ReadImagePrompt(const fb::ImagePrompt* fp, ImagePrompt* prompt) {
  *prompt = ImagePrompt();
  if (fp == nullptr) return Status::Ok();
  const std::pair<PromptText*, const flatbuffers::String*> parts[6] = {
      {&prompt->marker, fp->marker()}, {&prompt->before, fp->before()},
      {&prompt->after, fp->after()},   {&prompt->token, fp->token()},
      {&prompt->around, fp->around()}, {&prompt->global_token, fp->global()}};
  for (const auto& [text, stored] : parts) {
    if (!text->Assign(StringOf(stored))) {
      *prompt = ImagePrompt();
      return InvalidModel(
          "vision config: an image prompt string of %zu bytes (at most %zu, no NUL)",
          StringOf(stored).size(), PromptText::kMax);
    }
  }
  if (prompt->marker.empty() || prompt->token.empty()) {
    *prompt = ImagePrompt();
    return InvalidModel("vision config: an image prompt without its marker or token");
  }
  switch (fp->layout()) {
    case fb::ImagePromptLayout::Single:
      prompt->layout = ImagePromptLayout::kSingle;
      break;
    case fb::ImagePromptLayout::Tiles:
      prompt->layout = ImagePromptLayout::kTiles;
      if (prompt->around.empty() || prompt->global_token.empty()) {
        *prompt = ImagePrompt();
        return InvalidModel(
            "vision config: a tiled image prompt without its 'around' or 'global' text");
      }
      break;
    default:
      *prompt = ImagePrompt();
      return InvalidModel("vision config: image prompt layout %d is not single or tiles",
                          static_cast<int>(fp->layout()));
  }
  return Status::Ok();
}

}  // namespace

Status ReadVisionConfig(const fb::VisionConfig& fv, const ModelConfig& text,
                        VisionConfig* v) {
  ModelConfig& e = v->encoder;
  EMBER_RETURN_IF_ERROR(ReadConfig(*fv.encoder(), &e, true));
  // The final norm (post_layernorm) also keeps the tower's output apart from its
  // residual stream, whose bytes the connector's rows reuse (vision_tower.cc).
  if (e.positions != PositionKind::kLearned || e.mask != AttentionMask::kBidirectional ||
      !e.final_norm || e.has_sliding_layers() || e.embeds() || e.labels > 0 ||
      e.token_types > 0 || e.embedding_norm) {
    return InvalidModel(
        "vision config: the encoder must be one bidirectional pass over learned "
        "positions ending in a final norm, without sliding layers, segments, pooling "
        "or heads");
  }
  constexpr uint32_t kMaxImageSize = 1u << 13;
  v->image_size = fv.image_size();
  v->patch_size = fv.patch_size();
  if (v->image_size == 0 || v->image_size > kMaxImageSize || v->patch_size == 0 ||
      v->image_size % v->patch_size != 0) {
    return InvalidModel(
        "vision config: image size %u and patch size %u (a whole number of patches of "
        "at most %u pixels a side)",
        v->image_size, v->patch_size, kMaxImageSize);
  }
  if (e.max_context != v->patches()) {
    return InvalidModel("vision config: %u positions for %zu patches", e.max_context,
                        v->patches());
  }
  if (fv.connector() > fb::ImageConnector::MAX) {
    return InvalidModel("vision config: connector %u is unknown to this build",
                        static_cast<unsigned>(fv.connector()));
  }
  v->connector = static_cast<ImageConnector>(fv.connector());
  v->connector_factor = fv.connector_factor();
  if (v->connector_factor == 0 || v->patches_per_side() % v->connector_factor != 0) {
    return InvalidModel("vision config: a connector factor of %u for %zu patches a side",
                        v->connector_factor, v->patches_per_side());
  }
  v->projector_norm_eps = fv.projector_norm_eps();
  if (v->connector == ImageConnector::kAveragePool &&
      !(v->projector_norm_eps > 0.0f && v->projector_norm_eps < 1.0f)) {
    return InvalidModel("vision config: projector norm_eps %g outside (0, 1)",
                        v->projector_norm_eps);
  }
  v->image_token_id = fv.image_token_id();
  if (v->image_token_id < 0) {
    return InvalidModel("vision config: image token id %d", v->image_token_id);
  }
  v->image_blocks_bidirectional = fv.image_blocks_bidirectional();
  if (v->image_blocks_bidirectional && text.mask != AttentionMask::kCausal) {
    return InvalidModel(
        "vision config: bidirectional image blocks in a non-causal model");
  }
  EMBER_RETURN_IF_ERROR(ReadImageProcessor(fv.processor(), v->image_size, &v->processor));
  return ReadImagePrompt(fv.prompt(), &v->prompt);
}

Status ReadChatProgram(const fb::Tokenizer& ft, uint32_t vocab_size, ChatTemplate* out) {
  const fb::ChatProgram* p = ft.chat_program();
  ChatProgramTables t;
  if (p && p->code() && p->code()->size() > 0) {
    const auto size = [](const auto* v) -> size_t { return v ? v->size() : 0; };
    if (size(p->string_offsets()) == 0) {
      return InvalidModel("chat template: no string offsets");
    }
    t.format_version = p->format_version();
    t.code = p->code()->data();
    t.code_size = p->code()->size();
    t.string_bytes = VectorData(p->string_bytes());
    t.string_bytes_size = size(p->string_bytes());
    t.string_offsets = p->string_offsets()->data();
    t.num_strings = p->string_offsets()->size() - 1;
    t.floats = VectorData(p->floats());
    t.num_floats = size(p->floats());
    t.num_slots = p->num_slots();
    t.max_stack = p->max_stack();
    t.max_loops = p->max_loops();
    t.bos_token = StringOf(p->bos_token());
    t.eos_token = StringOf(p->eos_token());
    t.unk_token = StringOf(p->unk_token());
    t.pad_token = StringOf(p->pad_token());
    t.end_of_turn_ids = VectorData(p->end_of_turn_ids());
    t.num_end_of_turn_ids = size(p->end_of_turn_ids());
    // The verifier checks a vector's length word, not its 8-byte elements' alignment.
    if (t.num_floats > 0 &&
        reinterpret_cast<uintptr_t>(t.floats) % alignof(double) != 0) {
      return InvalidModel("chat template: float constants are not 8-byte aligned");
    }
  }
  return out->Init(t, vocab_size);
}

Status ReadBakedPrompt(const fb::Model& fm, const uint8_t* data, uint64_t file_size,
                       uint64_t directory_end, const ModelConfig& c,
                       const std::vector<Tensor>& tensors, BakedPromptView* out) {
  const fb::BakedPrompt* b = fm.baked_prompt();
  *out = BakedPromptView();
  if (!b) return Status::Ok();
  const uint64_t offset = b->state_offset(), size = b->state_size();
  if (offset % kTensorAlignment != 0 || offset < directory_end || offset > file_size ||
      size > file_size - offset || size == 0) {
    return InvalidModel(
        "baked prompt: state at %llu (%llu bytes) is not inside the file "
        "after the directory, 64-byte aligned",
        static_cast<unsigned long long>(offset), static_cast<unsigned long long>(size));
  }
  for (const Tensor& t : tensors) {
    const uint64_t at = static_cast<uint64_t>(t.data - data);
    if (offset < at + t.size_bytes && at < offset + size) {
      return InvalidModel("baked prompt: its state overlaps tensor '%s'", t.name);
    }
  }
  PromptStateInfo info;
  const Status s = PeekPromptState(data + offset, static_cast<size_t>(size), &info);
  if (!s.ok()) return InvalidModel("baked prompt: %s", s.message());
  const size_t n = b->tokens() ? b->tokens()->size() : 0;
  if (info.position != n || info.n_layers != c.n_layers || info.kv_dim != c.kv_dim() ||
      n > c.max_context ||
      (n && memcmp(info.tokens, b->tokens()->data(), n * sizeof(int32_t)) != 0)) {
    return InvalidModel(
        "baked prompt: its state (%u positions, %u layers of %u) disagrees "
        "with its %zu tokens or the config",
        info.position, info.n_layers, info.kv_dim, n);
  }
  out->text = StringOf(b->text());
  out->tokens = n ? b->tokens()->data() : nullptr;
  out->num_tokens = n;
  out->state = data + offset;
  out->state_bytes = static_cast<size_t>(size);
  return Status::Ok();
}


}  // namespace ember
