// ModelWriter: FlatBuffer directory first (size-prefixed), then 64-byte aligned tensor
// segments (see schema/model.fbs).
#include "runtime/model/model_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iterator>
#include <utility>

#include "kernels/half.h"
#include "kernels/quant_layout.h"
#include "kernels/quantize/kquant_quantize.h"
#include "kernels/quantize/quant_pack.h"
#include "model_generated.h"
#include "runtime/chat/chat_template_format.h"
#include "runtime/model/atomic_file.h"
#include "runtime/model/model.h"
#include "runtime/model/segment_order.h"
#include "runtime/model/tensor.h"
#include "runtime/model/tensor_names.h"

namespace ember {
namespace {

uint64_t AlignUp(uint64_t n) {
  return (n + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
}

kernels::QuantKind QuantKindOf(DType dtype) {
  return dtype == DType::kQ8 ? kernels::QuantKind::kQ8 : kernels::QuantKind::kQ4;
}

// The layout, group size and byte size `t` takes in the file as its dtype (what
// EncodeTensor writes), or why it cannot be stored.
Status PlanTensor(const TensorSpec& t, Layout* layout, uint32_t* group_size,
                  uint64_t* bytes) {
  uint64_t elements = 1;
  for (uint64_t d : t.shape) elements *= d;
  if (!t.encoded.empty()) {
    if (!t.values.empty()) {
      return InvalidArgument("tensor '%s': both f32 values and encoded bytes",
                             t.name.c_str());
    }
    *layout = StoredLayout(t.dtype);
    *group_size = StoredGroupSize(t.dtype);
    EMBER_RETURN_IF_ERROR(TensorBytes(t.dtype, *layout, t.shape.data(),
                                      static_cast<uint32_t>(t.shape.size()), *group_size,
                                      bytes));
    if (*bytes != t.encoded.size()) {
      return InvalidArgument(
          "tensor '%s': %zu encoded bytes, but a %s tensor of this "
          "shape takes %llu",
          t.name.c_str(), t.encoded.size(), DTypeName(t.dtype),
          static_cast<unsigned long long>(*bytes));
    }
    return Status::Ok();
  }
  if (elements != t.values.size()) {
    return InvalidArgument("tensor '%s': %zu values for %llu elements", t.name.c_str(),
                           t.values.size(), static_cast<unsigned long long>(elements));
  }
  switch (t.dtype) {
    case DType::kF32:
    case DType::kF16:
    case DType::kBF16:
      *layout = Layout::kRowMajor;
      *group_size = 0;
      *bytes = elements * DenseElementBytes(t.dtype);
      return Status::Ok();
    case DType::kQ8:
    case DType::kQ4:
    case DType::kQ4K:
    case DType::kQ5K:
    case DType::kQ6K:
      if (t.shape.size() != 2) {
        return InvalidArgument("tensor '%s': %s needs a matrix, not %zu-D",
                               t.name.c_str(), DTypeName(t.dtype), t.shape.size());
      }
      // A scale cannot carry a NaN or an infinity: quantizing one would write a
      // finite, wrong group without a word (f32/f16/bf16 keep such values as they are,
      // and `ember inspect --check-weights` finds them).
      for (size_t i = 0; i < t.values.size(); ++i) {
        if (!std::isfinite(t.values[i])) {
          return InvalidArgument("tensor '%s': element %zu is %g, which %s cannot hold",
                                 t.name.c_str(), i, t.values[i], DTypeName(t.dtype));
        }
      }
      *layout = StoredLayout(t.dtype);
      *group_size = StoredGroupSize(t.dtype);
      {  // refuses, e.g., K-quant shapes without whole super-blocks
        const Status s =
            TensorBytes(t.dtype, *layout, t.shape.data(), 2, *group_size, bytes);
        if (!s.ok())
          return InvalidArgument("tensor '%s': %s", t.name.c_str(), s.message());
      }
      return Status::Ok();
  }
  return InvalidArgument("tensor '%s': unknown dtype %u", t.name.c_str(),
                         static_cast<unsigned>(t.dtype));
}

// Encodes f32 values as `dtype` in the file's layout for that dtype, into the
// PlanTensor bytes at `out`.
void EncodeTensor(const TensorSpec& t, uint8_t* out) {
  if (!t.encoded.empty()) {
    memcpy(out, t.encoded.data(), t.encoded.size());
    return;
  }
  switch (t.dtype) {
    case DType::kF32:
      // memcpy from a null pointer (an empty vector's) is undefined, even of 0 bytes.
      if (!t.values.empty()) {
        memcpy(out, t.values.data(), t.values.size() * sizeof(float));
      }
      return;
    case DType::kF16:
    case DType::kBF16:
      for (size_t i = 0; i < t.values.size(); ++i) {
        const uint16_t bits = t.dtype == DType::kF16
                                  ? kernels::FloatToHalf(t.values[i])
                                  : kernels::FloatToBFloat16(t.values[i]);
        memcpy(out + 2 * i, &bits, 2);
      }
      return;
    case DType::kQ8:
    case DType::kQ4:
      kernels::PackQuant(QuantKindOf(t.dtype), t.values.data(), t.shape[0], t.shape[1],
                         out);
      return;
    case DType::kQ4K:
    case DType::kQ5K:
    case DType::kQ6K:  // PlanTensor checked the shape
      kernels::PackKQuant(KQuantKindOf(t.dtype), t.values.data(), t.shape[0], t.shape[1],
                          out);
      return;
  }
}

}  // namespace

std::vector<uint32_t> SortedPieceIds(const TokenizerSpec& tok) {
  std::vector<uint32_t> ids;
  for (uint32_t i = 0; i < tok.pieces.size(); ++i) {
    if (tok.types[i] == TokenType::kNormal || tok.types[i] == TokenType::kUserDefined) {
      ids.push_back(i);
    }
  }
  std::stable_sort(ids.begin(), ids.end(),
                   [&](uint32_t a, uint32_t b) { return tok.pieces[a] < tok.pieces[b]; });
  return ids;
}

namespace {

// Where one tensor's segment goes and what it holds.
struct Planned {
  Layout layout;
  uint32_t group_size;
  uint64_t bytes;
};

// The tokenizer's tables as the file lays them out, computed once (the directory is built
// twice, and a vocabulary of 262,144 pieces takes a while).
struct TokenizerLayout {
  std::vector<uint8_t> piece_bytes;
  std::vector<uint32_t> offsets{0};
  uint32_t max_piece = 0;
  std::vector<fb::TokenType> types;
  std::vector<fb::Merge> merges;
  std::vector<uint32_t> sorted;
  std::vector<int32_t> stop_ids;
  PreTokenizerKind pre_tokenizer;
  std::vector<uint32_t> added_ids, added_offsets;
  std::vector<uint8_t> added_text, added_flags;
};

TokenizerLayout LayOutTokenizer(const TokenizerSpec& tok) {
  TokenizerLayout t;
  for (const std::string& p : tok.pieces) {
    t.piece_bytes.insert(t.piece_bytes.end(), p.begin(), p.end());
    t.offsets.push_back(static_cast<uint32_t>(t.piece_bytes.size()));
    t.max_piece = std::max<uint32_t>(t.max_piece, p.size());
  }
  for (TokenType type : tok.types) t.types.push_back(static_cast<fb::TokenType>(type));
  for (const auto& m : tok.merges)
    t.merges.emplace_back(m.left, m.right, m.result, m.rank);
  std::sort(t.merges.begin(), t.merges.end(), [](const fb::Merge& a, const fb::Merge& b) {
    return a.left() != b.left() ? a.left() < b.left() : a.right() < b.right();
  });
  t.sorted = SortedPieceIds(tok);
  t.stop_ids = tok.stop_ids;
  if (t.stop_ids.empty() && tok.eos_id >= 0) t.stop_ids.push_back(tok.eos_id);
  t.pre_tokenizer = tok.pre_tokenizer;
  if (t.pre_tokenizer == PreTokenizerKind::kDefault) {
    t.pre_tokenizer = tok.kind == TokenizerKind::kByteLevelBpe ? PreTokenizerKind::kGpt2
                      : tok.kind == TokenizerKind::kWordPiece  ? PreTokenizerKind::kBert
                                                               : PreTokenizerKind::kNone;
  }
  std::vector<const TokenizerSpec::Added*> added;
  for (const TokenizerSpec::Added& a : tok.added) added.push_back(&a);
  std::sort(added.begin(), added.end(),
            [](const auto* x, const auto* y) { return x->text < y->text; });
  for (const TokenizerSpec::Added* a : added) {
    if (t.added_offsets.empty()) t.added_offsets.push_back(0);
    t.added_ids.push_back(a->id);
    t.added_text.insert(t.added_text.end(), a->text.begin(), a->text.end());
    t.added_offsets.push_back(static_cast<uint32_t>(t.added_text.size()));
    t.added_flags.push_back(a->flags);
  }
  return t;
}

// The compiled chat template's table, or none.
flatbuffers::Offset<fb::ChatProgram> WriteChatProgram(flatbuffers::FlatBufferBuilder* fbb,
                                                      const ChatProgramSpec& p) {
  if (p.empty()) return 0;
  flatbuffers::FlatBufferBuilder& b = *fbb;
  std::vector<uint8_t> string_bytes;
  std::vector<uint32_t> string_offsets{0};
  for (const std::string& str : p.strings) {
    string_bytes.insert(string_bytes.end(), str.begin(), str.end());
    string_offsets.push_back(static_cast<uint32_t>(string_bytes.size()));
  }
  return fb::CreateChatProgram(
      b, tmpl::kFormatVersion, b.CreateVector(p.code), b.CreateVector(string_bytes),
      b.CreateVector(string_offsets), b.CreateVector(p.floats), p.num_slots, p.max_stack,
      p.max_loops, b.CreateString(p.bos_token), b.CreateString(p.eos_token),
      b.CreateString(p.unk_token), b.CreateString(p.pad_token),
      b.CreateVector(p.end_of_turn_ids));
}

// The config table of `c` (a text model's, or a vision tower's encoder).
flatbuffers::Offset<fb::Config> WriteConfig(const ModelConfig& c,
                                            flatbuffers::FlatBufferBuilder* fbb) {
  flatbuffers::FlatBufferBuilder& b = *fbb;
  std::vector<fb::LayerAttention> layer_attention;
  for (LayerAttention a : c.layer_attention) {
    layer_attention.push_back(static_cast<fb::LayerAttention>(a));
  }
  const auto layer_attention_offset =
      layer_attention.empty() ? 0 : b.CreateVector(layer_attention);
  return fb::CreateConfig(
      b, b.CreateString(c.architecture), c.d_model, c.n_layers, c.n_heads, c.n_kv_heads,
      c.head_dim, c.ffn_dim, c.vocab_size, c.max_context,
      static_cast<fb::NormKind>(c.norm), static_cast<fb::NormPlacement>(c.norm_placement),
      c.norm_eps, c.final_norm, static_cast<fb::FfnKind>(c.ffn),
      static_cast<fb::Activation>(c.activation),
      static_cast<fb::PositionKind>(c.positions), c.rope_theta,
      static_cast<fb::RopePairing>(c.rope_pairing),
      static_cast<fb::AttentionMask>(c.mask), c.qkv_bias, c.out_bias, c.ffn_bias,
      c.tied_classifier, c.output_bias, static_cast<fb::RopeScaling>(c.rope_scaling),
      c.rope_scaling_factor, c.rope_low_freq_factor, c.rope_high_freq_factor,
      c.rope_original_context, c.rope_beta_fast, c.rope_beta_slow,
      c.rope_attention_factor, c.rope_yarn_truncate, c.rope_local_theta, c.qk_norm,
      c.post_norms, c.embedding_scale, c.attention_scale, c.attn_softcap, c.final_softcap,
      c.sliding_window, layer_attention_offset,
      c.rope_freq_factors.empty() ? 0 : b.CreateVector(c.rope_freq_factors),
      c.rope_long_freq_factors.empty() ? 0 : b.CreateVector(c.rope_long_freq_factors),
      c.rope_dim, c.token_types, c.embedding_norm, static_cast<fb::Pooling>(c.pooling),
      c.normalize, c.labels, c.label_pooler,
      c.dense_dims.empty() ? 0 : b.CreateVector(c.dense_dims),
      c.dense_flags.empty() ? 0 : b.CreateVector(c.dense_flags));
}

// The directory (padded to the first tensor's offset) and each tensor's plan, in
// segment order (*segment_order, SegmentOrder), which the directory lists them in too;
// the file is the directory, then each tensor's encoded bytes padded to kTensorAlignment.
Status PlanModel(const ModelSpec& spec, std::vector<uint8_t>* directory,
                 std::vector<size_t>* segment_order, std::vector<Planned>* planned) {
  const ModelConfig& c = spec.config;
  const TokenizerSpec& tok = spec.tokenizer;
  if (tok.pieces.size() != c.vocab_size || tok.types.size() != c.vocab_size) {
    return InvalidArgument(
        "tokenizer has %zu pieces and %zu types for a vocabulary of %u",
        tok.pieces.size(), tok.types.size(), c.vocab_size);
  }
  const std::vector<size_t>& order = *segment_order = SegmentOrder(spec);
  // Plan every tensor first: sizes decide the offsets.
  std::vector<Planned>& plan = *planned;
  plan.assign(spec.tensors.size(), Planned());
  for (size_t i = 0; i < order.size(); ++i) {
    EMBER_RETURN_IF_ERROR(PlanTensor(spec.tensors[order[i]], &plan[i].layout,
                                     &plan[i].group_size, &plan[i].bytes));
  }

  const TokenizerLayout tables = LayOutTokenizer(tok);
  // With every field written (ForceDefaults), the directory's size does not depend on the
  // offset values, so build it twice: once to learn its size, once with real offsets.
  auto build = [&](uint64_t data_start, flatbuffers::FlatBufferBuilder* fbb) {
    flatbuffers::FlatBufferBuilder& b = *fbb;
    b.ForceDefaults(true);
    auto config = WriteConfig(c, &b);
    flatbuffers::Offset<fb::VisionConfig> vision = 0;
    if (spec.vision) {
      const VisionConfig& v = *spec.vision;
      const ImageProcessorConfig& p = v.processor;
      const auto processor = fb::CreateImageProcessor(
          b, static_cast<fb::ImageLayout>(p.layout), static_cast<uint32_t>(p.height),
          static_cast<uint32_t>(p.width), static_cast<uint32_t>(p.longest_edge),
          static_cast<uint32_t>(p.tile_size), p.split, static_cast<uint8_t>(p.resample),
          p.alpha_over_white, p.rescale, p.rescale_factor, p.normalize,
          b.CreateVector(p.mean, 3), b.CreateVector(p.std, 3));
      flatbuffers::Offset<fb::ImagePrompt> prompt = 0;
      if (!v.prompt.marker.empty()) {
        prompt = fb::CreateImagePrompt(
            b, b.CreateString(v.prompt.marker.c_str(), v.prompt.marker.size()),
            b.CreateString(v.prompt.before.c_str(), v.prompt.before.size()),
            b.CreateString(v.prompt.after.c_str(), v.prompt.after.size()),
            b.CreateString(v.prompt.token.c_str(), v.prompt.token.size()),
            static_cast<fb::ImagePromptLayout>(v.prompt.layout),
            b.CreateString(v.prompt.around.c_str(), v.prompt.around.size()),
            b.CreateString(v.prompt.global_token.c_str(), v.prompt.global_token.size()));
      }
      vision = fb::CreateVisionConfig(
          b, WriteConfig(v.encoder, &b), v.image_size, v.patch_size,
          static_cast<fb::ImageConnector>(v.connector), v.connector_factor,
          v.projector_norm_eps, v.image_token_id, v.image_blocks_bidirectional, processor,
          prompt);
    }

    const auto vector_or_none = [&b](const auto& v) -> decltype(b.CreateVector(v)) {
      if (v.empty()) return {};  // absent
      return b.CreateVector(v);
    };
    std::vector<uint32_t> prompt_offsets;
    std::vector<uint8_t> prompt_bytes;
    for (const auto& [name, text] : tok.prompts) {
      for (const std::string* part : {&name, &text}) {
        prompt_offsets.push_back(static_cast<uint32_t>(prompt_bytes.size()));
        prompt_bytes.insert(prompt_bytes.end(), part->begin(), part->end());
      }
    }
    if (!tok.prompts.empty()) {
      prompt_offsets.push_back(static_cast<uint32_t>(prompt_bytes.size()));
    }
    auto tokenizer = fb::CreateTokenizer(
        b, static_cast<fb::TokenizerKind>(tok.kind), b.CreateVector(tables.piece_bytes),
        b.CreateVector(tables.offsets), vector_or_none(tok.scores),
        b.CreateVector(tables.types), b.CreateVector(tables.sorted),
        tables.merges.empty() ? 0 : b.CreateVectorOfStructs(tables.merges), tok.bos_id,
        tok.eos_id, tok.unk_id, tok.add_bos, tok.add_dummy_prefix, tables.max_piece,
        b.CreateVector(tables.stop_ids),
        tok.chat_template.empty() ? 0 : b.CreateString(tok.chat_template),
        static_cast<fb::PreTokenizer>(tables.pre_tokenizer),
        static_cast<fb::Normalizer>(tok.normalizer), tok.ignore_merges,
        tok.metaspace_is_space, static_cast<fb::DummyPrefix>(tok.dummy_prefix),
        vector_or_none(tables.added_ids), vector_or_none(tables.added_offsets),
        vector_or_none(tables.added_text), vector_or_none(tables.added_flags),
        WriteChatProgram(&b, tok.chat_program), tok.bert.clean_text,
        tok.bert.handle_chinese_chars, tok.bert.strip_accents, tok.bert.lowercase,
        b.CreateString(tok.wordpiece_prefix), tok.max_input_chars_per_word,
        tok.append_eos, tok.pad_id, tok.end_id,
        tok.pair_format.empty() ? 0 : b.CreateString(tok.pair_format),
        tok.pair_instruction.empty() ? 0 : b.CreateString(tok.pair_instruction),
        vector_or_none(prompt_offsets), vector_or_none(prompt_bytes), tok.default_prompt);

    std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
    uint64_t offset = data_start;
    for (size_t i = 0; i < order.size(); ++i) {
      const TensorSpec& t = spec.tensors[order[i]];
      tensors.push_back(fb::CreateTensor(
          b, b.CreateString(t.name), static_cast<fb::DType>(t.dtype),
          static_cast<fb::Layout>(plan[i].layout), b.CreateVector(t.shape),
          plan[i].group_size, offset, plan[i].bytes));
      offset = AlignUp(offset + plan[i].bytes);
    }
    flatbuffers::Offset<fb::BakedPrompt> baked = 0;
    if (!spec.baked_prompt.empty()) {
      // Its segment follows the last tensor's.
      baked = fb::CreateBakedPrompt(b, b.CreateString(spec.baked_prompt.text),
                                    b.CreateVector(spec.baked_prompt.tokens), offset,
                                    spec.baked_prompt.state.size());
    }
    auto model = fb::CreateModel(b, 1, config, tokenizer, b.CreateVector(tensors),
                                 b.CreateString(spec.description), baked, vision);
    fb::FinishSizePrefixedModelBuffer(b, model);
  };

  flatbuffers::FlatBufferBuilder probe;
  build(0, &probe);
  const uint64_t data_start = AlignUp(probe.GetSize());
  flatbuffers::FlatBufferBuilder fbb;
  build(data_start, &fbb);
  if (fbb.GetSize() != probe.GetSize()) return Internal("directory size changed");

  directory->assign(data_start, 0);
  memcpy(directory->data(), fbb.GetBufferPointer(), fbb.GetSize());
  return Status::Ok();
}

// Serializes the model into the memory `allocate(file_bytes)` returns (zeroed, as the
// padding must be), so each tensor is encoded once, in place: no second copy of the file.
Status Serialize(const ModelSpec& spec, const std::function<uint8_t*(size_t)>& allocate) {
  std::vector<uint8_t> directory;
  std::vector<size_t> order;
  std::vector<Planned> planned;
  EMBER_RETURN_IF_ERROR(PlanModel(spec, &directory, &order, &planned));
  uint64_t file_bytes = directory.size();
  for (const Planned& p : planned) file_bytes = AlignUp(file_bytes + p.bytes);
  const uint64_t baked_at = file_bytes;
  file_bytes = AlignUp(file_bytes + spec.baked_prompt.state.size());
  if (file_bytes > SIZE_MAX) {
    return ResourceExhausted("a model of %llu bytes does not fit in memory here",
                             static_cast<unsigned long long>(file_bytes));
  }
  uint8_t* out = allocate(static_cast<size_t>(file_bytes));
  memcpy(out, directory.data(), directory.size());
  uint64_t offset = directory.size();
  for (size_t i = 0; i < order.size(); ++i) {
    EncodeTensor(spec.tensors[order[i]], out + offset);
    offset = AlignUp(offset + planned[i].bytes);
  }
  if (!spec.baked_prompt.empty()) {
    memcpy(out + baked_at, spec.baked_prompt.state.data(),
           spec.baked_prompt.state.size());
  }
  return Status::Ok();
}

}  // namespace

Status SerializeModel(const ModelSpec& spec, std::vector<uint8_t>* out) {
  return Serialize(spec, [&](size_t size) {
    out->assign(size, 0);
    return out->data();
  });
}

Status WriteModel(const ModelSpec& spec, const std::string& path,
                  uint64_t* bytes_written) {
  // The whole file in memory, at an address the loader accepts (16-byte aligned; a
  // vector is only malloc-aligned, 8 bytes on 32-bit Arm), so the loader's own checks
  // run on exactly the bytes about to be written: convert never writes a file that
  // ember would refuse to load.
  constexpr size_t kAlign = 16;
  std::vector<uint8_t> storage;
  uint8_t* data = nullptr;
  size_t size = 0;
  EMBER_RETURN_IF_ERROR(Serialize(spec, [&](size_t file_bytes) {
    storage.assign(file_bytes + kAlign - 1, 0);
    const uintptr_t base = reinterpret_cast<uintptr_t>(storage.data());
    data = storage.data() + (kAlign - base % kAlign) % kAlign;
    size = file_bytes;
    return data;
  }));
  {
    auto model = Model::FromMemory(data, size);
    if (!model.ok()) {
      return Status(model.status().code(),
                    "refusing to write '%s': the loader would reject it: %s",
                    path.c_str(), model.status().message());
    }
  }
  EMBER_RETURN_IF_ERROR(WriteFileAtomic(path, data, size));
  if (bytes_written) *bytes_written = size;
  return Status::Ok();
}

}  // namespace ember
