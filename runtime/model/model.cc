// Model loading: borrow the bytes, verify the FlatBuffer, check every field the runtime
// trusts, then bind tokenizer and weights. Nothing here aborts on bad input. Mapping a
// file (Model::Open) is model_file.cc's, or model_file_none.cc's in builds without files.
#include "runtime/model/model.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "model_generated.h"
#include "runtime/model/family_config.h"
#include "runtime/model/model_sections.h"

namespace ember {

static_assert(static_cast<int>(fb::DType::Q4) == static_cast<int>(DType::kQ4), "enums");
static_assert(static_cast<int>(fb::Layout::QuantPanels) ==
                  static_cast<int>(Layout::kQuantPanels),
              "enums");
static_assert(static_cast<int>(fb::Layout::QuantPanelsV1) ==
                  static_cast<int>(Layout::kQuantPanelsV1),
              "enums");
static_assert(static_cast<int>(fb::DType::Q6K) == static_cast<int>(DType::kQ6K), "enums");
static_assert(static_cast<int>(fb::Layout::KQuantPanels) ==
                  static_cast<int>(Layout::kKQuantPanels),
              "enums");
static_assert(static_cast<int>(fb::TokenType::UserDefined) ==
                  static_cast<int>(TokenType::kUserDefined),
              "enums");
static_assert(static_cast<int>(fb::PreTokenizer::Bert) ==
                  static_cast<int>(PreTokenizerKind::kBert),
              "enums");
static_assert(static_cast<int>(fb::Normalizer::Bert) ==
                  static_cast<int>(Normalization::kBert),
              "enums");
static_assert(static_cast<int>(fb::TokenizerKind::WordPiece) ==
                  static_cast<int>(TokenizerKind::kWordPiece),
              "enums");
static_assert(static_cast<int>(fb::DummyPrefix::EveryUnlessSpace) ==
                  static_cast<int>(DummyPrefix::kEveryUnlessSpace),
              "enums");
static_assert(sizeof(fb::Merge) == 4 * sizeof(uint32_t), "Merge is four uint32");
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error \
    "ember reads the little-endian model file in place: big-endian hosts are unsupported"
#endif

namespace {

// Sanity limits: generous for real models, small enough that no size computed from them
// can overflow 64 bits.
constexpr uint32_t kMaxDim = 1u << 20;
constexpr uint32_t kMaxLayers = 4096;
constexpr uint32_t kMaxVocab = 1u << 24;
constexpr uint32_t kMaxContext = 1u << 24;
constexpr uint32_t kMaxTensors = 1u << 20;  // a 4096-layer model has about 50,000

template <typename E>
bool EnumInRange(E value, E max) {
  return static_cast<unsigned>(value) <= static_cast<unsigned>(max);
}

}  // namespace

Status ReadConfig(const fb::Config& fc, ModelConfig* c, bool encoder) {
  const char* arch = fc.architecture() ? fc.architecture()->c_str() : "";
  Format(c->architecture, sizeof(c->architecture), "%s", arch);
  c->d_model = fc.d_model();
  c->n_layers = fc.n_layers();
  c->n_heads = fc.n_heads();
  c->n_kv_heads = fc.n_kv_heads();
  c->head_dim = fc.head_dim();
  c->ffn_dim = fc.ffn_dim();
  c->vocab_size = fc.vocab_size();
  c->max_context = fc.max_context();
  struct Limit {
    const char* name;
    uint32_t value, max;
  };
  for (const Limit& l :
       {Limit{"d_model", c->d_model, kMaxDim}, Limit{"n_layers", c->n_layers, kMaxLayers},
        Limit{"n_heads", c->n_heads, kMaxDim},
        Limit{"n_kv_heads", c->n_kv_heads, kMaxDim},
        Limit{"head_dim", c->head_dim, kMaxDim}, Limit{"ffn_dim", c->ffn_dim, kMaxDim},
        Limit{"vocab_size", encoder ? 1 : c->vocab_size, kMaxVocab},
        Limit{"max_context", c->max_context, kMaxContext}}) {
    if (l.value == 0 || l.value > l.max) {
      return InvalidModel("%sconfig: %s = %u (1 to %u allowed)", encoder ? "vision " : "",
                          l.name, l.value, l.max);
    }
  }
  if (encoder && c->vocab_size != 0) {
    return InvalidModel("vision config: the encoder has a vocabulary of %u",
                        c->vocab_size);
  }
  if (c->n_heads % c->n_kv_heads != 0) {
    return InvalidModel("config: n_kv_heads %u does not divide n_heads %u", c->n_kv_heads,
                        c->n_heads);
  }
  if (c->q_dim() > kMaxDim)
    return InvalidModel("config: n_heads x head_dim is too large");
  if (!EnumInRange(fc.norm(), fb::NormKind::MAX) ||
      !EnumInRange(fc.norm_placement(), fb::NormPlacement::MAX) ||
      !EnumInRange(fc.ffn(), fb::FfnKind::MAX) ||
      !EnumInRange(fc.activation(), fb::Activation::MAX) ||
      !EnumInRange(fc.positions(), fb::PositionKind::MAX) ||
      !EnumInRange(fc.rope_pairing(), fb::RopePairing::MAX) ||
      !EnumInRange(fc.mask(), fb::AttentionMask::MAX)) {
    return InvalidModel(
        "config: an enum (norm, placement, ffn, activation, positions, "
        "rope pairing or mask) has a value this build does not know");
  }
  c->norm = static_cast<NormKind>(fc.norm());
  c->norm_placement = static_cast<NormPlacement>(fc.norm_placement());
  c->norm_eps = fc.norm_eps();
  c->final_norm = fc.final_norm();
  c->ffn = static_cast<FfnKind>(fc.ffn());
  c->activation = static_cast<Activation>(fc.activation());
  c->positions = static_cast<PositionKind>(fc.positions());
  c->rope_theta = fc.rope_theta();
  c->rope_pairing = static_cast<RopePairing>(fc.rope_pairing());
  c->mask = static_cast<AttentionMask>(fc.mask());
  c->qkv_bias = fc.qkv_bias();
  c->out_bias = fc.out_bias();
  c->ffn_bias = fc.ffn_bias();
  c->tied_classifier = fc.tied_classifier();
  c->output_bias = fc.output_bias();
  if (!(c->norm_eps > 0.0f && c->norm_eps < 1.0f)) {
    return InvalidModel("config: norm_eps %g outside (0, 1)", c->norm_eps);
  }
  if (c->positions == PositionKind::kRope) {
    if (c->head_dim % 2 != 0) return InvalidModel("config: RoPE needs an even head_dim");
    if (!(c->rope_theta > 1.0f && c->rope_theta < 1e12f)) {
      return InvalidModel("config: rope_theta %g outside (1, 1e12)", c->rope_theta);
    }
  }
  return ReadFamilyConfig(fc, c);
}

namespace {

// Checks each tensor entry: name, enums, shape and size agree, segment inside the file,
// aligned, after the directory, and not overlapping another.
Status ReadTensors(const fb::Model& fm, const uint8_t* data, uint64_t file_size,
                   uint64_t directory_end, std::vector<Tensor>* out) {
  const auto* list = fm.tensors();
  // The verifier bounds the count by the file's size, but a directory of tiny entries
  // would still make a table many times that size (and running out of memory here,
  // without exceptions, would abort).
  if (list->size() > kMaxTensors) {
    return InvalidModel("%u tensors (at most %u allowed)", list->size(), kMaxTensors);
  }
  out->resize(list->size());
  for (flatbuffers::uoffset_t i = 0; i < list->size(); ++i) {
    const fb::Tensor* ft = list->Get(i);
    Tensor& t = (*out)[i];
    t.name = ft->name()->c_str();
    if (ft->name()->size() == 0 || strlen(t.name) != ft->name()->size()) {
      return InvalidModel("tensor %u: empty name or a NUL inside it", i);
    }
    if (!EnumInRange(ft->dtype(), fb::DType::MAX)) {
      return InvalidModel("tensor '%s': unknown dtype %u", t.name,
                          static_cast<unsigned>(ft->dtype()));
    }
    if (!EnumInRange(ft->layout(), fb::Layout::MAX)) {
      return InvalidModel("tensor '%s': unknown layout %u", t.name,
                          static_cast<unsigned>(ft->layout()));
    }
    t.dtype = static_cast<DType>(ft->dtype());
    t.layout = static_cast<Layout>(ft->layout());
    t.group_size = ft->group_size();
    if (ft->shape()->size() == 0 || ft->shape()->size() > kMaxTensorDims) {
      return InvalidModel("tensor '%s': %u dimensions (1 to %u allowed)", t.name,
                          ft->shape()->size(), kMaxTensorDims);
    }
    // The verifier checks a vector's length word (4-byte alignment), not its 8-byte
    // elements; a writer always aligns them, so a misaligned shape is a corrupt file (and
    // reading it would be an unaligned 64-bit load).
    if (reinterpret_cast<uintptr_t>(ft->shape()->Data()) % alignof(uint64_t) != 0) {
      return InvalidModel("tensor '%s': shape vector is not 8-byte aligned", t.name);
    }
    t.n_dims = ft->shape()->size();
    for (uint32_t d = 0; d < t.n_dims; ++d) t.shape[d] = ft->shape()->Get(d);
    uint64_t expected = 0;
    Status s = TensorBytes(t.dtype, t.layout, t.shape, t.n_dims, t.group_size, &expected);
    if (!s.ok()) return Status(s.code(), "tensor '%s': %s", t.name, s.message());
    if (ft->size() != expected) {
      return InvalidModel(
          "tensor '%s': size %llu bytes disagrees with its %s shape, which "
          "needs %llu",
          t.name, static_cast<unsigned long long>(ft->size()), DTypeName(t.dtype),
          static_cast<unsigned long long>(expected));
    }
    const uint64_t offset = ft->offset();
    if (offset % kTensorAlignment != 0) {
      return InvalidModel("tensor '%s': offset %llu is not a multiple of %llu", t.name,
                          static_cast<unsigned long long>(offset),
                          static_cast<unsigned long long>(kTensorAlignment));
    }
    if (offset < directory_end) {
      return InvalidModel(
          "tensor '%s': offset %llu points into the directory (ends at %llu)", t.name,
          static_cast<unsigned long long>(offset),
          static_cast<unsigned long long>(directory_end));
    }
    if (offset > file_size || expected > file_size - offset) {
      return InvalidModel(
          "tensor '%s': offset %llu + size %llu is past the end of the "
          "file (%llu bytes)",
          t.name, static_cast<unsigned long long>(offset),
          static_cast<unsigned long long>(expected),
          static_cast<unsigned long long>(file_size));
    }
    t.data = data + offset;
    t.size_bytes = expected;
  }
  // No two segments overlap, and no two tensors share a name.
  std::vector<const Tensor*> by_offset(out->size());
  for (size_t i = 0; i < out->size(); ++i) by_offset[i] = &(*out)[i];
  std::sort(by_offset.begin(), by_offset.end(),
            [](const Tensor* a, const Tensor* b) { return a->data < b->data; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const Tensor* prev = by_offset[i - 1];
    if (prev->data + prev->size_bytes > by_offset[i]->data) {
      return InvalidModel("tensors '%s' and '%s' overlap", prev->name,
                          by_offset[i]->name);
    }
  }
  std::sort(by_offset.begin(), by_offset.end(), [](const Tensor* a, const Tensor* b) {
    return strcmp(a->name, b->name) < 0;
  });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    if (strcmp(by_offset[i - 1]->name, by_offset[i]->name) == 0) {
      return InvalidModel("two tensors are named '%s'", by_offset[i]->name);
    }
  }
  return Status::Ok();
}

template <typename T>
const T* VectorData(const flatbuffers::Vector<T>* v) {
  return v ? v->data() : nullptr;
}

Status ReadTokenizer(const fb::Tokenizer& ft, uint32_t vocab_size, Tokenizer* tokenizer) {
  if (!EnumInRange(ft.kind(), fb::TokenizerKind::MAX)) {
    return InvalidModel("tokenizer: unknown kind %u", static_cast<unsigned>(ft.kind()));
  }
  const auto size = [](const auto* v) -> size_t { return v ? v->size() : 0; };
  if (size(ft.piece_offsets()) != size_t{vocab_size} + 1) {
    return InvalidModel("tokenizer: %zu piece offsets for a vocabulary of %u (needs %u)",
                        size(ft.piece_offsets()), vocab_size, vocab_size + 1);
  }
  if (size(ft.types()) != vocab_size) {
    return InvalidModel("tokenizer: %zu token types for a vocabulary of %u",
                        size(ft.types()), vocab_size);
  }
  if (ft.scores() && ft.scores()->size() != vocab_size) {
    return InvalidModel("tokenizer: %u scores for a vocabulary of %u",
                        ft.scores()->size(), vocab_size);
  }
  TokenizerTables t;
  t.kind = static_cast<TokenizerKind>(ft.kind());
  t.vocab_size = vocab_size;
  t.piece_bytes = VectorData(ft.piece_bytes());
  t.piece_bytes_size = size(ft.piece_bytes());
  t.piece_offsets = VectorData(ft.piece_offsets());
  t.scores = VectorData(ft.scores());
  t.types = reinterpret_cast<const uint8_t*>(VectorData(ft.types()));
  t.sorted_ids = VectorData(ft.sorted_ids());
  t.num_sorted = size(ft.sorted_ids());
  t.merges =
      ft.merges() ? reinterpret_cast<const uint32_t*>(ft.merges()->data()) : nullptr;
  t.num_merges = size(ft.merges());
  t.bos_id = ft.bos_id();
  t.eos_id = ft.eos_id();
  t.unk_id = ft.unk_id();
  t.add_bos = ft.add_bos();
  t.add_dummy_prefix = ft.add_dummy_prefix();
  t.max_piece_bytes = ft.max_piece_bytes();
  t.stop_ids = VectorData(ft.stop_ids());
  t.num_stop_ids = size(ft.stop_ids());
  t.has_stop_ids = ft.stop_ids() != nullptr;
  if (ft.chat_template()) {
    t.chat_template = ft.chat_template()->c_str();
    t.chat_template_bytes = ft.chat_template()->size();
  }
  if (!EnumInRange(ft.pre_tokenizer(), fb::PreTokenizer::MAX) ||
      !EnumInRange(ft.normalizer(), fb::Normalizer::MAX) ||
      !EnumInRange(ft.dummy_prefix(), fb::DummyPrefix::MAX)) {
    return InvalidModel(
        "tokenizer: unknown pre-tokenizer %u, normalizer %u or dummy "
        "prefix %u",
        static_cast<unsigned>(ft.pre_tokenizer()), static_cast<unsigned>(ft.normalizer()),
        static_cast<unsigned>(ft.dummy_prefix()));
  }
  t.pre_tokenizer = static_cast<PreTokenizerKind>(ft.pre_tokenizer());
  t.normalizer = static_cast<Normalization>(ft.normalizer());
  t.ignore_merges = ft.ignore_merges();
  t.metaspace_is_space = ft.metaspace_is_space();
  t.dummy_prefix = static_cast<DummyPrefix>(ft.dummy_prefix());
  t.num_added = size(ft.added_ids());
  if (size(ft.added_offsets()) != (t.num_added ? t.num_added + 1 : 0) ||
      size(ft.added_flags()) != t.num_added) {
    return InvalidModel("tokenizer: %zu added tokens with %zu offsets and %zu flags",
                        t.num_added, size(ft.added_offsets()), size(ft.added_flags()));
  }
  t.added_ids = VectorData(ft.added_ids());
  t.added_offsets = VectorData(ft.added_offsets());
  t.added_text = VectorData(ft.added_text());
  t.added_text_size = size(ft.added_text());
  t.added_flags = VectorData(ft.added_flags());
  t.bert.clean_text = ft.bert_clean_text();
  t.bert.handle_chinese_chars = ft.bert_handle_chinese_chars();
  t.bert.strip_accents = ft.bert_strip_accents();
  t.bert.lowercase = ft.bert_lowercase();
  if (ft.wordpiece_prefix()) {
    t.wordpiece_prefix = ft.wordpiece_prefix()->c_str();
    t.wordpiece_prefix_bytes = ft.wordpiece_prefix()->size();
  }
  t.max_input_chars_per_word = ft.max_input_chars_per_word();
  t.append_eos = ft.append_eos();
  t.pad_id = ft.pad_id();
  t.end_id = ft.end_id();
  if (ft.pair_format()) {
    t.pair_format = {ft.pair_format()->c_str(), ft.pair_format()->size()};
  }
  t.prompt_offsets = VectorData(ft.prompt_offsets());
  t.num_prompt_offsets = size(ft.prompt_offsets());
  t.prompt_bytes = VectorData(ft.prompt_bytes());
  t.prompt_bytes_size = size(ft.prompt_bytes());
  t.default_prompt = ft.default_prompt();
  if (ft.pair_instruction()) {
    t.pair_instruction = {ft.pair_instruction()->c_str(), ft.pair_instruction()->size()};
  }
  static const uint8_t kEmpty = 0;
  if (!t.piece_bytes) t.piece_bytes = &kEmpty;
  if (!t.sorted_ids && t.num_sorted == 0) {
    static const uint32_t kNoIds = 0;
    t.sorted_ids = &kNoIds;
  }
  return tokenizer->Init(t);
}

// Checks the directory of the file at data[0, size) (FlatBuffers' Verifier) and returns
// its root; *directory_end is where the tensor data may begin.
Result<const fb::Model*> VerifyDirectory(const uint8_t* data, size_t size,
                                         uint64_t* directory_end) {
  // The size prefix, the root table offset and the file identifier (read below).
  if (size < 12)
    return InvalidModel("file of %zu bytes is too short to be a model", size);
  const uint32_t fb_size = flatbuffers::ReadScalar<uint32_t>(data);
  if (!fb::SizePrefixedModelBufferHasIdentifier(data)) {
    return InvalidModel("not an ember model: file identifier is not \"%s\"",
                        fb::ModelIdentifier());
  }
  if (uint64_t{fb_size} > size - sizeof(uint32_t)) {
    return InvalidModel("truncated: the directory says %u bytes but the file has %zu",
                        fb_size, size - sizeof(uint32_t));
  }
  *directory_end = sizeof(uint32_t) + uint64_t{fb_size};
  flatbuffers::Verifier verifier(data, *directory_end);
  if (!fb::VerifySizePrefixedModelBuffer(verifier)) {
    return InvalidModel(
        "the model directory is corrupt (FlatBuffers verification failed)");
  }
  const fb::Model* fm = fb::GetSizePrefixedModel(data);
  if (fm->format_version() != 1) {
    return InvalidModel("format version %u (this build reads version 1)",
                        fm->format_version());
  }
  return fm;
}

}  // namespace

Result<std::unique_ptr<Model>> Model::FromMemory(const void* data, size_t size) {
  if (data == nullptr) return InvalidArgument("model memory is null");
  if (reinterpret_cast<uintptr_t>(data) % 16 != 0) {
    return InvalidArgument("model memory at %p is not 16-byte aligned", data);
  }
  std::unique_ptr<Model> model(new (std::nothrow) Model());
  if (!model) return ResourceExhausted("out of memory for the model");
  model->data_ = static_cast<const uint8_t*>(data);
  model->size_ = size;
  EMBER_RETURN_IF_ERROR(model->Init(model->data_, size));
  return model;
}

Status ReadTokenizerOnly(const void* data, size_t size, Tokenizer* tokenizer) {
  if (data == nullptr || reinterpret_cast<uintptr_t>(data) % 16 != 0) {
    return InvalidArgument("model memory at %p is null or not 16-byte aligned", data);
  }
  uint64_t directory_end = 0;
  auto fm = VerifyDirectory(static_cast<const uint8_t*>(data), size, &directory_end);
  if (!fm.ok()) return fm.status();
  return ReadTokenizer(*(*fm)->tokenizer(), (*fm)->config()->vocab_size(), tokenizer);
}

Status Model::Init(const uint8_t* data, size_t size) {
  uint64_t directory_end = 0;
  auto root = VerifyDirectory(data, size, &directory_end);
  if (!root.ok()) return root.status();
  const fb::Model& fm = **root;
  EMBER_RETURN_IF_ERROR(ReadConfig(*fm.config(), &config_));
  EMBER_RETURN_IF_ERROR(ReadTensors(fm, data, size, directory_end, &tensors_));
  EMBER_RETURN_IF_ERROR(ReadTokenizer(*fm.tokenizer(), config_.vocab_size, &tokenizer_));
  EMBER_RETURN_IF_ERROR(
      ReadChatProgram(*fm.tokenizer(), config_.vocab_size, &chat_template_));
  EMBER_RETURN_IF_ERROR(
      BindWeights(config_, tensors_, &weights_, fm.vision() != nullptr));
  if (fm.vision() != nullptr) {
    vision_.reset(new (std::nothrow) Vision());
    if (!vision_) return ResourceExhausted("out of memory for the vision tower");
    EMBER_RETURN_IF_ERROR(ReadVisionConfig(*fm.vision(), config_, &vision_->config));
    EMBER_RETURN_IF_ERROR(
        BindVisionWeights(vision_->config, config_.d_model, tensors_, &vision_->weights));
  }
  description_ = fm.description() ? fm.description()->c_str() : "";
  EMBER_RETURN_IF_ERROR(
      ReadBakedPrompt(fm, data, size, directory_end, config_, tensors_, &baked_prompt_));
  return Status::Ok();
}

uint64_t Model::parameter_count() const {
  uint64_t total = 0;
  for (const Tensor& t : tensors_) {
    uint64_t n = 1;
    for (uint32_t d = 0; d < t.n_dims; ++d) n *= t.shape[d];
    total += n;
  }
  return total;
}

}  // namespace ember
