// ModelWriter: FlatBuffer directory first (size-prefixed), then 64-byte aligned tensor
// segments (see schema/model.fbs).
#include "runtime/model_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <utility>

#include "kernels/half.h"
#include "kernels/quant_layout.h"
#include "model_generated.h"
#include "runtime/tensor.h"
#include "runtime/tensor_names.h"

namespace ember {
namespace {

uint64_t AlignUp(uint64_t n) {
  return (n + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
}

// Encodes f32 values as `dtype` in the file's layout for that dtype.
Status EncodeTensor(const TensorSpec& t, Layout* layout, uint32_t* group_size,
                    std::vector<uint8_t>* bytes) {
  uint64_t elements = 1;
  for (uint64_t d : t.shape) elements *= d;
  if (elements != t.values.size()) {
    return InvalidArgument("tensor '%s': %zu values for %llu elements", t.name.c_str(),
                           t.values.size(), static_cast<unsigned long long>(elements));
  }
  switch (t.dtype) {
    case DType::kF32:
      *layout = Layout::kRowMajor;
      *group_size = 0;
      bytes->resize(t.values.size() * sizeof(float));
      memcpy(bytes->data(), t.values.data(), bytes->size());
      return Status::Ok();
    case DType::kF16:
    case DType::kBF16: {
      *layout = Layout::kRowMajor;
      *group_size = 0;
      bytes->resize(t.values.size() * sizeof(uint16_t));
      uint8_t* out = bytes->data();
      for (size_t i = 0; i < t.values.size(); ++i) {
        const uint16_t bits = t.dtype == DType::kF16
                                  ? kernels::FloatToHalf(t.values[i])
                                  : kernels::FloatToBFloat16(t.values[i]);
        memcpy(out + 2 * i, &bits, 2);
      }
      return Status::Ok();
    }
    case DType::kQ8:
    case DType::kQ4: {
      if (t.shape.size() != 2) {
        return InvalidArgument("tensor '%s': %s needs a matrix, not %zu-D",
                               t.name.c_str(), DTypeName(t.dtype), t.shape.size());
      }
      const kernels::QuantKind kind =
          t.dtype == DType::kQ8 ? kernels::QuantKind::kQ8 : kernels::QuantKind::kQ4;
      *layout = Layout::kQuantPanels;
      *group_size = kernels::kQuantGroup;
      bytes->resize(kernels::QuantPackedBytes(kind, t.shape[0], t.shape[1]));
      kernels::PackQuant(kind, t.values.data(), t.shape[0], t.shape[1], bytes->data());
      return Status::Ok();
    }
  }
  return InvalidArgument("tensor '%s': unknown dtype %u", t.name.c_str(),
                         static_cast<unsigned>(t.dtype));
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

struct Encoded {
  Layout layout;
  uint32_t group_size;
  std::vector<uint8_t> bytes;
};

// Where a tensor goes among the segments: in the order one forward pass reads them, so
// decode streams the file front to back and each matrix's stream runs on into the next
// (the matvec kernels prefetch past a matrix's end): the embeddings looked up per token,
// then each layer's tensors in the order of its steps, then the final norm and the
// classifier, which is the token embedding itself when tied. Other names come last.
// Returns (group, position within the group); ties keep the importer's order.
std::pair<uint64_t, uint64_t> ForwardRank(const std::string& name, bool tied) {
  static const char* const kLayerOrder[] = {
      "attn_norm.weight",   "attn_norm.bias",   "attn_q.weight",   "attn_q.bias",
      "attn_k.weight",      "attn_k.bias",      "attn_v.weight",   "attn_v.bias",
      "attn_output.weight", "attn_output.bias", "ffn_norm.weight", "ffn_norm.bias",
      "ffn_gate.weight",    "ffn_gate.bias",    "ffn_up.weight",   "ffn_up.bias",
      "ffn_down.weight",    "ffn_down.bias"};
  static const char* const kOutputOrder[] = {names::kOutputNorm, names::kOutputNormBias,
                                             names::kOutput, names::kOutputBias,
                                             names::kTokEmbedding};
  constexpr uint64_t kLayers = 1, kOutputs = uint64_t{1} << 32, kOthers = kOutputs + 1;
  if (name == names::kPosEmbedding) return {0, 0};
  if (name == names::kTokEmbedding && !tied) return {0, 1};
  unsigned layer = 0;
  int prefix = 0;
  if (sscanf(name.c_str(), "blk.%u.%n", &layer, &prefix) == 1 && prefix > 0) {
    const std::string rest = name.substr(static_cast<size_t>(prefix));
    for (uint64_t i = 0; i < std::size(kLayerOrder); ++i) {
      if (rest == kLayerOrder[i]) return {kLayers + layer, i};
    }
    return {kLayers + layer, std::size(kLayerOrder)};
  }
  for (uint64_t i = 0; i < std::size(kOutputOrder); ++i) {
    if (name == kOutputOrder[i]) return {kOutputs, i};
  }
  return {kOthers, 0};
}

// Indices of spec.tensors in the order their segments are written (ForwardRank).
std::vector<size_t> SegmentOrder(const ModelSpec& spec) {
  std::vector<size_t> order(spec.tensors.size());
  std::vector<std::pair<uint64_t, uint64_t>> rank(spec.tensors.size());
  for (size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
    rank[i] = ForwardRank(spec.tensors[i].name, spec.config.tied_classifier);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return rank[a] < rank[b]; });
  return order;
}

// The directory (padded to the first tensor's offset) and each tensor's encoded bytes,
// in segment order (SegmentOrder), which the directory lists them in too; the file is
// their concatenation, each tensor padded to kTensorAlignment.
Status EncodeModel(const ModelSpec& spec, std::vector<uint8_t>* directory,
                   std::vector<Encoded>* encoded_tensors) {
  const ModelConfig& c = spec.config;
  const TokenizerSpec& tok = spec.tokenizer;
  if (tok.pieces.size() != c.vocab_size || tok.types.size() != c.vocab_size) {
    return InvalidArgument(
        "tokenizer has %zu pieces and %zu types for a vocabulary of %u",
        tok.pieces.size(), tok.types.size(), c.vocab_size);
  }
  const std::vector<size_t> order = SegmentOrder(spec);
  // Encode every tensor first: sizes decide the offsets.
  std::vector<Encoded>& encoded = *encoded_tensors;
  encoded.assign(spec.tensors.size(), Encoded());
  for (size_t i = 0; i < order.size(); ++i) {
    EMBER_RETURN_IF_ERROR(EncodeTensor(spec.tensors[order[i]], &encoded[i].layout,
                                       &encoded[i].group_size, &encoded[i].bytes));
  }

  // With every field written (ForceDefaults), the directory's size does not depend on the
  // offset values, so build it twice: once to learn its size, once with real offsets.
  auto build = [&](uint64_t data_start, flatbuffers::FlatBufferBuilder* fbb) {
    flatbuffers::FlatBufferBuilder& b = *fbb;
    b.ForceDefaults(true);
    auto config = fb::CreateConfig(
        b, b.CreateString(c.architecture), c.d_model, c.n_layers, c.n_heads, c.n_kv_heads,
        c.head_dim, c.ffn_dim, c.vocab_size, c.max_context,
        static_cast<fb::NormKind>(c.norm),
        static_cast<fb::NormPlacement>(c.norm_placement), c.norm_eps, c.final_norm,
        static_cast<fb::FfnKind>(c.ffn), static_cast<fb::Activation>(c.activation),
        static_cast<fb::PositionKind>(c.positions), c.rope_theta,
        static_cast<fb::RopePairing>(c.rope_pairing),
        static_cast<fb::AttentionMask>(c.mask), c.qkv_bias, c.out_bias, c.ffn_bias,
        c.tied_classifier, c.output_bias);

    std::vector<uint8_t> piece_bytes;
    std::vector<uint32_t> offsets{0};
    uint32_t max_piece = 0;
    for (const std::string& p : tok.pieces) {
      piece_bytes.insert(piece_bytes.end(), p.begin(), p.end());
      offsets.push_back(static_cast<uint32_t>(piece_bytes.size()));
      max_piece = std::max<uint32_t>(max_piece, p.size());
    }
    std::vector<fb::TokenType> types;
    for (TokenType t : tok.types) types.push_back(static_cast<fb::TokenType>(t));
    std::vector<fb::Merge> merges;
    for (const auto& m : tok.merges)
      merges.emplace_back(m.left, m.right, m.result, m.rank);
    std::sort(merges.begin(), merges.end(), [](const fb::Merge& a, const fb::Merge& b) {
      return a.left() != b.left() ? a.left() < b.left() : a.right() < b.right();
    });
    const auto sorted = SortedPieceIds(tok);
    std::vector<int32_t> stop_ids = tok.stop_ids;
    if (stop_ids.empty() && tok.eos_id >= 0) stop_ids.push_back(tok.eos_id);
    auto tokenizer = fb::CreateTokenizer(
        b, static_cast<fb::TokenizerKind>(tok.kind), b.CreateVector(piece_bytes),
        b.CreateVector(offsets), tok.scores.empty() ? 0 : b.CreateVector(tok.scores),
        b.CreateVector(types), b.CreateVector(sorted),
        merges.empty() ? 0 : b.CreateVectorOfStructs(merges), tok.bos_id, tok.eos_id,
        tok.unk_id, tok.add_bos, tok.add_dummy_prefix, max_piece,
        b.CreateVector(stop_ids));

    std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
    uint64_t offset = data_start;
    for (size_t i = 0; i < order.size(); ++i) {
      const TensorSpec& t = spec.tensors[order[i]];
      tensors.push_back(fb::CreateTensor(
          b, b.CreateString(t.name), static_cast<fb::DType>(t.dtype),
          static_cast<fb::Layout>(encoded[i].layout), b.CreateVector(t.shape),
          encoded[i].group_size, offset, encoded[i].bytes.size()));
      offset = AlignUp(offset + encoded[i].bytes.size());
    }
    auto model = fb::CreateModel(b, 1, config, tokenizer, b.CreateVector(tensors),
                                 b.CreateString(spec.description));
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

}  // namespace

Status SerializeModel(const ModelSpec& spec, std::vector<uint8_t>* out) {
  std::vector<Encoded> encoded;
  EMBER_RETURN_IF_ERROR(EncodeModel(spec, out, &encoded));
  for (const Encoded& e : encoded) {
    out->insert(out->end(), e.bytes.begin(), e.bytes.end());
    out->resize(AlignUp(out->size()), 0);
  }
  return Status::Ok();
}

Status WriteModel(const ModelSpec& spec, const std::string& path,
                  uint64_t* bytes_written) {
  // Streams the directory and each tensor to the file: no whole-file copy in memory
  // (a 110M-parameter f32 model is 440 MB).
  std::vector<uint8_t> directory;
  std::vector<Encoded> encoded;
  EMBER_RETURN_IF_ERROR(EncodeModel(spec, &directory, &encoded));
  FILE* f = fopen(path.c_str(), "wb");
  if (!f) return IoError("cannot create '%s': %s", path.c_str(), strerror(errno));
  static const uint8_t kZeros[kTensorAlignment] = {};
  uint64_t expected = directory.size(),
           written = fwrite(directory.data(), 1, directory.size(), f);
  for (const Encoded& e : encoded) {
    const uint64_t padding = AlignUp(e.bytes.size()) - e.bytes.size();
    expected += e.bytes.size() + padding;
    written += fwrite(e.bytes.data(), 1, e.bytes.size(), f);
    written += fwrite(kZeros, 1, padding, f);
  }
  const bool closed = fclose(f) == 0;
  if (written != expected || !closed) {
    return IoError("cannot write '%s' (%llu of %llu bytes): %s", path.c_str(),
                   static_cast<unsigned long long>(written),
                   static_cast<unsigned long long>(expected), strerror(errno));
  }
  if (bytes_written) *bytes_written = written;
  return Status::Ok();
}

}  // namespace ember
