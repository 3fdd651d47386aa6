// llama2.c importer: checkpoint layout and tokenizer format as run.c reads them.
#include "tools/convert/llama2c/llama2c_import.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "runtime/model/tensor_names.h"
#include "tools/util/files.h"

namespace ember::tools {
namespace {

// Reads little-endian values from a byte buffer, failing cleanly at the end.
class Reader {
 public:
  explicit Reader(const std::vector<uint8_t>& bytes) : bytes_(bytes) {}
  bool Read(void* out, size_t n) {
    if (n > bytes_.size() - pos_) return false;
    memcpy(out, bytes_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  size_t pos() const { return pos_; }
  size_t left() const { return bytes_.size() - pos_; }

 private:
  const std::vector<uint8_t>& bytes_;
  size_t pos_ = 0;
};

}  // namespace

Status ParseLlama2cCheckpoint(const std::vector<uint8_t>& bytes, ModelSpec* spec) {
  Reader r(bytes);
  int32_t h[7];
  if (!r.Read(h, sizeof(h))) {
    return InvalidArgument(
        "llama2.c checkpoint: %zu bytes is shorter than the 28-byte "
        "header",
        bytes.size());
  }
  const int32_t dim = h[0], hidden = h[1], layers = h[2], heads = h[3], kv_heads = h[4];
  const int32_t seq_len = h[6];
  const bool shared_classifier = h[5] > 0;
  const int64_t vocab = h[5] > 0 ? h[5] : -int64_t{h[5]};
  const int32_t limits[][2] = {{dim, 1 << 16}, {hidden, 1 << 18}, {layers, 1024},
                               {heads, 1024},  {kv_heads, 1024},  {seq_len, 1 << 20}};
  const char* names[] = {"dim",     "hidden_dim", "n_layers",
                         "n_heads", "n_kv_heads", "seq_len"};
  for (int i = 0; i < 6; ++i) {
    if (limits[i][0] <= 0 || limits[i][0] > limits[i][1]) {
      return InvalidArgument(
          "llama2.c checkpoint: header %s = %d (1 to %d allowed); is this "
          "a llama2.c legacy (version 0) file?",
          names[i], limits[i][0], limits[i][1]);
    }
  }
  if (vocab == 0 || vocab > (1 << 22)) {
    return InvalidArgument("llama2.c checkpoint: header vocab_size = %d", h[5]);
  }
  if (dim % heads != 0 || heads % kv_heads != 0 || (dim / heads) % 2 != 0) {
    return InvalidArgument(
        "llama2.c checkpoint: dim %d, n_heads %d, n_kv_heads %d do not "
        "fit together",
        dim, heads, kv_heads);
  }
  const uint64_t head_size = dim / heads, kv_dim = head_size * kv_heads;
  const uint64_t L = layers, D = dim, F = hidden, V = vocab, T = seq_len;

  // Expected size, in floats, exactly as run.c's memory_map_weights walks the file.
  const uint64_t floats = V * D + L * D + L * D * D + 2 * L * kv_dim * D + L * D * D +
                          L * D + 2 * L * F * D + L * D * F + D + T * head_size +
                          (shared_classifier ? 0 : V * D);
  if (r.left() != floats * sizeof(float)) {
    return InvalidArgument(
        "llama2.c checkpoint: %zu bytes of weights after the header, but "
        "this header needs %llu (truncated file or wrong format)",
        r.left(), static_cast<unsigned long long>(floats * sizeof(float)));
  }

  ModelConfig& c = spec->config;
  c = ModelConfig();
  snprintf(c.architecture, sizeof(c.architecture), "llama");
  c.d_model = dim;
  c.n_layers = layers;
  c.n_heads = heads;
  c.n_kv_heads = kv_heads;
  c.head_dim = static_cast<uint32_t>(head_size);
  c.ffn_dim = hidden;
  c.vocab_size = static_cast<uint32_t>(vocab);
  c.max_context = seq_len;
  c.norm = NormKind::kRmsNorm;
  c.norm_eps = 1e-5f;
  c.ffn = FfnKind::kGated;
  c.activation = Activation::kSiLU;
  c.positions = PositionKind::kRope;
  c.rope_theta = 10000.0f;
  c.rope_pairing = RopePairing::kInterleaved;
  c.tied_classifier = shared_classifier;

  // Reads `count` consecutive (rows, cols) matrices (one per layer when per_layer).
  auto read = [&](const char* name_format, bool per_layer, uint64_t rows, uint64_t cols) {
    const uint64_t n = per_layer ? L : 1;
    for (uint64_t i = 0; i < n; ++i) {
      TensorSpec t;
      t.name = per_layer ? names::LayerName(name_format, static_cast<unsigned>(i))
                         : std::string(name_format);
      t.shape = cols ? std::vector<uint64_t>{rows, cols} : std::vector<uint64_t>{rows};
      t.values.resize(rows * (cols ? cols : 1));
      r.Read(t.values.data(), t.values.size() * sizeof(float));  // size checked above
      spec->tensors.push_back(std::move(t));
    }
  };
  spec->tensors.clear();
  read(names::kTokEmbedding, false, V, D);
  read(names::kAttnNorm, true, D, 0);
  read(names::kAttnQ, true, D, D);
  read(names::kAttnK, true, kv_dim, D);
  read(names::kAttnV, true, kv_dim, D);
  read(names::kAttnOut, true, D, D);
  read(names::kFfnNorm, true, D, 0);
  read(names::kFfnGate, true, F, D);  // w1
  read(names::kFfnDown, true, D, F);  // w2
  read(names::kFfnUp, true, F, D);    // w3
  read(names::kOutputNorm, false, D, 0);
  std::vector<float> rope_tables(T * head_size);  // freq_cis_real/imag: recomputed at run
  r.Read(rope_tables.data(), rope_tables.size() * sizeof(float));
  if (!shared_classifier) read(names::kOutput, false, V, D);
  return Status::Ok();
}

Status ParseLlama2cTokenizer(const std::vector<uint8_t>& bytes, uint32_t vocab_size,
                             TokenizerSpec* tok) {
  Reader r(bytes);
  int32_t max_token_length = 0;
  if (!r.Read(&max_token_length, 4) || max_token_length <= 0 || max_token_length > 256) {
    return InvalidArgument("llama2.c tokenizer: bad max_token_length header (%d)",
                           max_token_length);
  }
  *tok = TokenizerSpec();
  tok->kind = TokenizerKind::kSentencePieceBpe;
  for (uint32_t i = 0; i < vocab_size; ++i) {
    float score;
    int32_t len;
    if (!r.Read(&score, 4) || !r.Read(&len, 4)) {
      return InvalidArgument(
          "llama2.c tokenizer: truncated at token %u of %u (the model's "
          "vocabulary)",
          i, vocab_size);
    }
    if (len < 0 || len > max_token_length) {
      return InvalidArgument("llama2.c tokenizer: token %u has length %d (max %d)", i,
                             len, max_token_length);
    }
    std::string piece(static_cast<size_t>(len), '\0');
    if (!r.Read(piece.data(), piece.size())) {
      return InvalidArgument("llama2.c tokenizer: truncated inside token %u", i);
    }
    TokenType type = TokenType::kNormal;
    if (i == 0) {
      type = TokenType::kUnknown;  // <unk>
    } else if (i == 1 || i == 2) {
      type = TokenType::kControl;  // BOS, EOS
    } else if (piece.size() == 6 && piece.compare(0, 3, "<0x") == 0 && piece[5] == '>') {
      type = TokenType::kByte;
    }
    tok->pieces.push_back(std::move(piece));
    tok->scores.push_back(score);
    tok->types.push_back(type);
  }
  if (r.left() != 0) {
    return InvalidArgument(
        "llama2.c tokenizer: %zu bytes left after %u tokens: the "
        "tokenizer does not match the model's vocabulary",
        r.left(), vocab_size);
  }
  tok->unk_id = 0;
  tok->bos_id = 1;
  tok->eos_id = 2;
  // BOS starts a new story: llama2.c's run.c stops there.
  tok->stop_ids = {tok->eos_id, tok->bos_id};
  tok->add_bos = true;
  tok->add_dummy_prefix = true;
  // Reject duplicate pieces: the runtime finds pieces by binary search.
  const auto sorted = SortedPieceIds(*tok);
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (tok->pieces[sorted[i]] == tok->pieces[sorted[i - 1]]) {
      return InvalidArgument("llama2.c tokenizer: tokens %u and %u have the same piece",
                             sorted[i - 1], sorted[i]);
    }
  }
  return Status::Ok();
}

Status ImportLlama2c(const std::string& model_path, const std::string& tokenizer_path,
                     ModelSpec* spec) {
  std::vector<uint8_t> bytes;
  EMBER_RETURN_IF_ERROR(ReadFile(model_path, &bytes));
  Status s = ParseLlama2cCheckpoint(bytes, spec);
  if (!s.ok()) return Status(s.code(), "%s: %s", model_path.c_str(), s.message());
  EMBER_RETURN_IF_ERROR(ReadFile(tokenizer_path, &bytes));
  s = ParseLlama2cTokenizer(bytes, spec->config.vocab_size, &spec->tokenizer);
  if (!s.ok()) return Status(s.code(), "%s: %s", tokenizer_path.c_str(), s.message());
  const size_t slash = model_path.find_last_of('/');
  spec->description =
      "llama2.c checkpoint " +
      (slash == std::string::npos ? model_path : model_path.substr(slash + 1));
  return Status::Ok();
}

}  // namespace ember::tools
