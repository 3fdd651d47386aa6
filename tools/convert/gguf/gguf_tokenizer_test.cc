// Tests of GGUF import for GPT-2 (fused QKV split, learned positions, byte-level BPE)
// and of the tokenizer metadata: token types, special ids, stop ids, options, the chat
// template.
#include "tools/convert/gguf/gguf_tokenizer.h"

#include <random>

#include "gtest/gtest.h"
#include "runtime/model/tensor_names.h"
#include "runtime/session.h"
#include "testing/testing.h"
#include "tools/convert/gguf/gguf_builder.h"
#include "tools/convert/gguf/gguf_import.h"
#include "tools/convert/hf/hf_tokenizer.h"

namespace ember::tools {
namespace {

using testing::GgufBuilder;

// A parsed file with the bytes it points into.
struct Parsed {
  std::string bytes;
  std::unique_ptr<GgufFile> file;
  const GgufFile* operator->() const { return file.get(); }
  const GgufFile& operator*() const { return *file; }
  bool operator==(std::nullptr_t) const { return file == nullptr; }
  bool operator!=(std::nullptr_t) const { return file != nullptr; }
};

Parsed Parse(std::string bytes) {
  Parsed p;
  p.bytes = std::move(bytes);
  auto file =
      GgufFile::Parse(reinterpret_cast<const uint8_t*>(p.bytes.data()), p.bytes.size());
  EXPECT_TRUE(file.ok()) << file.status().message();
  if (file.ok()) p.file = std::move(*file);
  return p;
}

// A byte-level vocabulary: the 256 bytes, "he", " t", " the", then <|endoftext|> (and
// `extra` more control tokens), as GGUF spells it.
void AddByteLevelTokenizer(const std::vector<std::string>& extra, GgufBuilder* b) {
  std::vector<std::string> tokens;
  for (int i = 0; i < 256; ++i)
    tokens.push_back(ByteLevelEncode(std::string(1, char(i))));
  for (const char* merged : {"he", " t", " the"})
    tokens.push_back(ByteLevelEncode(merged));
  tokens.push_back("<|endoftext|>");
  std::vector<int32_t> types(tokens.size(), 1);
  types.back() = 3;
  for (const std::string& e : extra) {
    tokens.push_back(e);
    types.push_back(3);
  }
  b->Str("tokenizer.ggml.model", "gpt2")
      .Str("tokenizer.ggml.pre", "gpt-2")
      .Strings("tokenizer.ggml.tokens", tokens)
      .I32s("tokenizer.ggml.token_type", types)
      .Strings("tokenizer.ggml.merges",
               {"h e", ByteLevelEncode(" ") + " t", ByteLevelEncode(" t") + " he"})
      .U32("tokenizer.ggml.bos_token_id", 259)
      .U32("tokenizer.ggml.eos_token_id", 259);
}

// A GPT-2 model (LayerNorm, learned positions, biases) as a spec and as the GGUF
// llama.cpp writes for it: Q, K and V fused into attn_qkv (weights and biases).
ModelSpec Gpt2Spec(uint32_t vocab) {
  ModelSpec spec;
  ModelConfig& c = spec.config;
  snprintf(c.architecture, sizeof(c.architecture), "gpt2");
  c.d_model = 32, c.n_layers = 2, c.n_heads = c.n_kv_heads = 4, c.head_dim = 8;
  c.ffn_dim = 64, c.vocab_size = vocab, c.max_context = 16;
  c.norm = NormKind::kLayerNorm;
  c.ffn = FfnKind::kPlain;
  c.activation = Activation::kGeluTanh;
  c.positions = PositionKind::kLearned;
  c.qkv_bias = c.out_bias = c.ffn_bias = true;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 0.2f);
  auto add = [&](const std::string& name, std::vector<uint64_t> shape) {
    TensorSpec t;
    t.name = name;
    t.shape = shape;
    t.values.resize(shape[0] * (shape.size() > 1 ? shape[1] : 1));
    const bool norm = name.find("norm.weight") != std::string::npos;
    for (float& v : t.values) v = normal(rng) + (norm ? 1.0f : 0.0f);
    spec.tensors.push_back(std::move(t));
  };
  add(names::kTokEmbedding, {vocab, 32});
  add(names::kPosEmbedding, {16, 32});
  for (unsigned i = 0; i < 2; ++i) {
    for (const char* n : {names::kAttnNorm, names::kAttnNormBias, names::kAttnOutBias,
                          names::kFfnNorm, names::kFfnNormBias, names::kFfnDownBias,
                          names::kAttnQBias, names::kAttnKBias, names::kAttnVBias}) {
      add(names::LayerName(n, i), {32});
    }
    for (const char* n : {names::kAttnQ, names::kAttnK, names::kAttnV, names::kAttnOut}) {
      add(names::LayerName(n, i), {32, 32});
    }
    add(names::LayerName(names::kFfnUp, i), {64, 32});
    add(names::LayerName(names::kFfnUpBias, i), {64});
    add(names::LayerName(names::kFfnDown, i), {32, 64});
  }
  add(names::kOutputNorm, {32});
  add(names::kOutputNormBias, {32});
  return spec;
}

const TensorSpec& Find(const ModelSpec& spec, const std::string& name) {
  for (const TensorSpec& t : spec.tensors) {
    if (t.name == name) return t;
  }
  static const TensorSpec kNone;
  return kNone;
}

std::string Gpt2Gguf(const ModelSpec& spec) {
  GgufBuilder b;
  b.Str("general.architecture", "gpt2")
      .U32("gpt2.context_length", 16)
      .U32("gpt2.embedding_length", 32)
      .U32("gpt2.block_count", 2)
      .U32("gpt2.feed_forward_length", 64)
      .U32("gpt2.attention.head_count", 4)
      .F32("gpt2.attention.layer_norm_epsilon", 1e-5f);
  AddByteLevelTokenizer({}, &b);
  for (const TensorSpec& t : spec.tensors) {
    const bool q = t.name.find("attn_q.") != std::string::npos;
    if (t.name.find("attn_k.") != std::string::npos ||
        t.name.find("attn_v.") != std::string::npos) {
      continue;
    }
    std::vector<uint64_t> ne(t.shape.rbegin(), t.shape.rend());
    std::vector<float> values = t.values;
    std::string name = t.name;
    if (q) {  // rows of Q, then K, then V
      for (const char* part : {"attn_k.", "attn_v."}) {
        std::string other = t.name;
        other.replace(other.find("attn_q."), 7, part);
        const std::vector<float>& v = Find(spec, other).values;
        values.insert(values.end(), v.begin(), v.end());
      }
      name.replace(name.find("attn_q."), 7, "attn_qkv.");
      ne.back() *= 3;
    }
    b.Tensor(name, ne, 0, testing::F32Bytes(values));
  }
  return b.Build();
}

TEST(GgufGpt2Test, FusedQkvIsSplitAndTheModelIsTheSame) {
  const ModelSpec spec = Gpt2Spec(260);
  auto file = Parse(Gpt2Gguf(spec));
  ASSERT_NE(file, nullptr);
  ModelSpec imported;
  const Status s = ImportGgufFile(*file, "gpt2.gguf", GgufImportOptions(), &imported);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(imported.tensors.size(), spec.tensors.size());
  for (const TensorSpec& t : spec.tensors) {
    const TensorSpec& got = Find(imported, t.name);
    ASSERT_EQ(got.shape, t.shape) << t.name;
    std::vector<float> values(got.encoded.size() / 4);
    memcpy(values.data(), got.encoded.data(), got.encoded.size());
    EXPECT_EQ(values, t.values) << t.name;
  }
  const ModelConfig& c = imported.config;
  EXPECT_EQ(c.positions, PositionKind::kLearned);
  EXPECT_EQ(c.activation, Activation::kGeluTanh);
  EXPECT_TRUE(c.tied_classifier);
  // --ctx cannot lengthen a learned position table.
  GgufImportOptions longer;
  longer.max_context = 32;
  ModelSpec refused;
  EXPECT_FALSE(ImportGgufFile(*file, "gpt2.gguf", longer, &refused).ok());
  // The tokenizer: merges by rank, <|endoftext|> a control token that stops generation.
  const TokenizerSpec& tok = imported.tokenizer;
  EXPECT_EQ(tok.kind, TokenizerKind::kByteLevelBpe);
  EXPECT_EQ(tok.pieces[258], " the");
  EXPECT_EQ(tok.pieces[259], "<|endoftext|>");
  EXPECT_EQ(tok.types[259], TokenType::kControl);
  EXPECT_EQ(tok.merges.size(), 3u);
  EXPECT_FALSE(tok.add_bos);
  EXPECT_EQ(tok.stop_ids, std::vector<int32_t>{259});
  testing::LoadedModel loaded = testing::LoadSpec(imported);
  ASSERT_NE(loaded.model, nullptr);
  std::vector<int32_t> ids(loaded.model->tokenizer().EncodeCapacity(16));
  size_t n = 0;
  ASSERT_TRUE(
      loaded.model->tokenizer().Encode("he the", false, ids.data(), ids.size(), &n).ok());
  ids.resize(n);
  EXPECT_EQ(ids, (std::vector<int32_t>{256, 258}));
}

// Special ids, stop ids (EOS, EOT, and end-of-turn control tokens), options and the
// chat template, through a SentencePiece vocabulary.
TEST(GgufTokenizerTest, SpecialIdsOptionsAndTemplate) {
  TokenizerSpec spm = testing::TinyModelSpec().tokenizer;
  spm.pieces[298] = "<|im_end|>";
  spm.types[298] = TokenType::kControl;
  GgufBuilder b;
  testing::AddSentencePieceTokenizer(spm, &b);
  b.U32("tokenizer.ggml.eot_token_id", 297)
      .U32("tokenizer.ggml.padding_token_id", 0xFFFFFFFFu)
      .Bool("tokenizer.ggml.add_space_prefix", false)
      .Str("tokenizer.chat_template", "{{ messages }}");
  auto file = Parse(b.Build());
  ASSERT_NE(file, nullptr);
  TokenizerSpec tok;
  ASSERT_TRUE(ReadGgufTokenizer(*file, 300, &tok).ok());
  EXPECT_EQ(tok.kind, TokenizerKind::kSentencePieceBpe);
  EXPECT_FALSE(tok.add_dummy_prefix);
  EXPECT_TRUE(tok.add_bos);  // SentencePiece's default
  EXPECT_EQ(tok.bos_id, 1);
  EXPECT_EQ(tok.unk_id, 0);
  EXPECT_EQ(tok.stop_ids, (std::vector<int32_t>{2, 297, 298}));
  EXPECT_EQ(tok.types[297], TokenType::kControl);
  EXPECT_EQ(tok.chat_template, "{{ messages }}");
  EXPECT_EQ(tok.pieces[3 + 'a'], "<0x61>");
  EXPECT_EQ(tok.types[3 + 'a'], TokenType::kByte);
  EXPECT_EQ(tok.scores, spm.scores);
  EXPECT_FALSE(ReadGgufTokenizer(*file, 301, &tok).ok());  // not the embedding's rows

  // add_bos_token true without a BOS is refused; add_eos_token true too.
  GgufBuilder no_bos;
  testing::AddSentencePieceTokenizer(spm, &no_bos);
  no_bos.Remove("tokenizer.ggml.bos_token_id").Bool("tokenizer.ggml.add_bos_token", true);
  file = Parse(no_bos.Build());
  Status s = ReadGgufTokenizer(*file, 0, &tok);
  EXPECT_NE(std::string(s.message()).find("no tokenizer.ggml.bos_token_id"),
            std::string::npos)
      << s.message();
  GgufBuilder add_eos;
  testing::AddSentencePieceTokenizer(spm, &add_eos);
  add_eos.Bool("tokenizer.ggml.add_eos_token", true);
  file = Parse(add_eos.Build());
  s = ReadGgufTokenizer(*file, 0, &tok);
  EXPECT_NE(std::string(s.message()).find("add_eos_token is true"), std::string::npos)
      << s.message();
}

// Byte-level BPE needs an ordinary token for every byte: a missing one, or one that is
// also a special id, is refused (the loader would refuse the model).
TEST(GgufTokenizerTest, ByteLevelNeedsEveryByte) {
  GgufBuilder b;
  AddByteLevelTokenizer({}, &b);
  b.Remove("tokenizer.ggml.bos_token_id").U32("tokenizer.ggml.bos_token_id", 'A');
  Parsed file = Parse(b.Build());
  TokenizerSpec tok;
  Status s = ReadGgufTokenizer(*file, 0, &tok);
  EXPECT_NE(std::string(s.message()).find("no ordinary token for byte 0x41"),
            std::string::npos)
      << s.message();
  GgufBuilder missing;
  std::vector<std::string> tokens;
  for (int i = 1; i < 256; ++i)
    tokens.push_back(ByteLevelEncode(std::string(1, char(i))));
  missing.Str("tokenizer.ggml.model", "gpt2")
      .Str("tokenizer.ggml.pre", "llama-bpe")
      .Strings("tokenizer.ggml.tokens", tokens)
      .Strings("tokenizer.ggml.merges", {});
  file = Parse(missing.Build());
  s = ReadGgufTokenizer(*file, 0, &tok);
  EXPECT_NE(std::string(s.message()).find("no ordinary token for byte 0x00"),
            std::string::npos)
      << s.message();
}

// Token types in any integer width (older files); floats are refused.
TEST(GgufTokenizerTest, TokenTypesOfAnyIntegerWidth) {
  const TokenizerSpec spm = testing::TinyModelSpec().tokenizer;
  std::string u8_types;
  for (TokenType t : spm.types) {
    static const char kGgufType[] = {1, 2, 3, 6, 4};
    u8_types += kGgufType[static_cast<int>(t)];
  }
  GgufBuilder b;
  testing::AddSentencePieceTokenizer(spm, &b);
  b.Remove("tokenizer.ggml.token_type")
      .Raw("tokenizer.ggml.token_type", GgufBuilder::kArray,
           GgufBuilder::Array(GgufBuilder::kU8, u8_types.size(), u8_types));
  Parsed file = Parse(b.Build());
  TokenizerSpec tok;
  ASSERT_TRUE(ReadGgufTokenizer(*file, 0, &tok).ok());
  EXPECT_EQ(tok.types, spm.types);
  b.Remove("tokenizer.ggml.token_type").F32s("tokenizer.ggml.token_type", {1.0f});
  file = Parse(b.Build());
  const Status s = ReadGgufTokenizer(*file, 0, &tok);
  EXPECT_NE(
      std::string(s.message()).find("is an array of float32; expected an array of int32"),
      std::string::npos)
      << s.message();
}

// llama.cpp's bert vocabulary: "▁" word starts, bare continuations, [CLS] and [SEP] by
// its cls and seperator keys; encodes as the tokenizer.json it came from would.
TEST(GgufTokenizerTest, BertVocabularyIsWordPiece) {
  const std::vector<std::string> tokens = {"[PAD]", "[UNK]",          "[CLS]",
                                           "[SEP]", "\xE2\x96\x81un", "aff",
                                           "able",  "\xE2\x96\x81!"};
  GgufBuilder b;
  b.Str("tokenizer.ggml.model", "bert")
      .Strings("tokenizer.ggml.tokens", tokens)
      .I32s("tokenizer.ggml.token_type", {3, 3, 3, 3, 1, 1, 1, 1})
      .U32("tokenizer.ggml.unknown_token_id", 1)
      .U32("tokenizer.ggml.padding_token_id", 0)
      .U32("tokenizer.ggml.cls_token_id", 2)
      .U32("tokenizer.ggml.seperator_token_id", 3);
  auto file = Parse(b.Build());
  ASSERT_NE(file, nullptr);
  TokenizerSpec tok;
  const Status s = ReadGgufTokenizer(*file, 0, &tok);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(tok.kind, TokenizerKind::kWordPiece);
  EXPECT_EQ(tok.pieces[4], " un");
  EXPECT_EQ(tok.pieces[5], "aff");
  EXPECT_EQ(tok.bos_id, 2);
  EXPECT_EQ(tok.eos_id, 3);
  EXPECT_EQ(tok.pad_id, 0);
  EXPECT_TRUE(tok.add_bos && tok.append_eos);
  LoadedTokenizer loaded;
  ASSERT_TRUE(LoadTokenizerSpec(tok, "bert", &loaded).ok());
  int32_t ids[64];
  size_t n = 0;
  ASSERT_TRUE(loaded.tokenizer.Encode("Unaffable! x", true, ids, 64, &n).ok());
  EXPECT_EQ(std::vector<int32_t>(ids, ids + n),
            (std::vector<int32_t>{2, 4, 5, 6, 7, 1, 3}));
  b.Remove("tokenizer.ggml.unknown_token_id");
  file = Parse(b.Build());
  EXPECT_FALSE(ReadGgufTokenizer(*file, 0, &tok).ok());
}

}  // namespace
}  // namespace ember::tools
