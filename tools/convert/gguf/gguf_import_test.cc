// Tests of the GGUF importer on files the tests write: the broken models of the corpus,
// exact repacking of Q8_0 (-128 too), Q4_0, Q5_0 and IQ4_NL, every block decoder against
// the format's definition, --dtype and --keep, llama.cpp's Q/K permutation for
// interleaved RoPE, GPT-2's fused QKV, and the tokenizers' metadata.
#include "tools/convert/gguf/gguf_import.h"

#include <cmath>
#include <cstring>

#include "gtest/gtest.h"
#include "kernels/half.h"
#include "kernels/kquant_layout.h"
#include "kernels/quant_layout.h"
#include "kernels/quantize/quant_pack.h"
#include "runtime/model/tensor.h"
#include "runtime/model/tensor_names.h"
#include "runtime/session.h"
#include "testing/testing.h"
#include "tools/convert/gguf/gguf_blocks.h"
#include "tools/convert/gguf/gguf_builder.h"
#include "tools/convert/gguf/gguf_test_util.h"

namespace ember::tools {
namespace {

using testing::GgufBuilder;

using gguf_test::Find;
using gguf_test::Import;
using gguf_test::Logits;

kernels::QuantKind KindOf(const TensorSpec& t) {
  return t.dtype == DType::kQ8 ? kernels::QuantKind::kQ8 : kernels::QuantKind::kQ4;
}

// A q8/q4 tensor's panels as the file will hold them (its own, or its f32 values packed
// as the writer packs them).
std::vector<uint8_t> Packed(const TensorSpec& t) {
  if (!t.encoded.empty()) return t.encoded;
  std::vector<uint8_t> packed(
      kernels::QuantPackedBytes(KindOf(t), t.shape[0], t.shape[1]));
  kernels::PackQuant(KindOf(t), t.values.data(), t.shape[0], t.shape[1], packed.data());
  return packed;
}

// The values a tensor of the spec stands for: f32 values, or decoded q8/q4 panels.
std::vector<float> Values(const TensorSpec& t) {
  if (IsKQuant(t.dtype)) {  // the importer packs K-quants itself (encoded)
    std::vector<float> v(t.shape[0] * t.shape[1]);
    for (size_t r = 0; r < t.shape[0]; ++r) {
      kernels::DequantizeKQuantRow(KQuantKindOf(t.dtype), t.encoded.data(), t.shape[1], r,
                                   v.data() + r * t.shape[1]);
    }
    return v;
  }
  if (t.dtype != DType::kQ8 && t.dtype != DType::kQ4) {
    if (!t.values.empty()) return t.values;
    std::vector<float> v(t.encoded.size() / 4);
    memcpy(v.data(), t.encoded.data(), t.encoded.size());
    return v;
  }
  const std::vector<uint8_t> packed = Packed(t);
  std::vector<float> v(t.shape[0] * t.shape[1]);
  for (size_t r = 0; r < t.shape[0]; ++r) {
    kernels::DequantizeRow(KindOf(t), packed.data(), t.shape[1], r,
                           v.data() + r * t.shape[1]);
  }
  return v;
}

TEST(GgufImportTest, BrokenModelsAreRefusedWithTheirOwnMessage) {
  size_t cases = 0;
  for (const testing::BrokenGguf& c : testing::BrokenGgufCorpus()) {
    if (!c.importer) continue;
    ++cases;
    ModelSpec spec;
    const Status s = Import(c.bytes, GgufImportOptions(), &spec);
    ASSERT_FALSE(s.ok()) << c.name;
    EXPECT_NE(std::string(s.message()).find(c.message), std::string::npos)
        << c.name << ": got \"" << s.message() << "\", expected \"" << c.message << "\"";
  }
  EXPECT_GE(cases, 20u);
}

// Every decoder equals the element-by-element definition, bit for bit.
TEST(GgufImportTest, BlockDecodersMatchTheFormatDefinition) {
  for (uint32_t type : {8u, 2u, 20u, 3u, 6u, 7u, 12u, 13u, 14u}) {
    const size_t n = 1024;
    const std::string blocks =
        testing::RandomGgmlBlocks(type, n / FindGgmlType(type)->block_elements, type);
    ASSERT_FALSE(blocks.empty()) << type;
    std::vector<float> decoded(n);
    DecodeGgmlRow(type, reinterpret_cast<const uint8_t*>(blocks.data()), n,
                  decoded.data());
    for (size_t i = 0; i < n; ++i) {
      const float want = testing::GgmlReferenceValue(
          type, reinterpret_cast<const uint8_t*>(blocks.data()), i);
      ASSERT_EQ(decoded[i], want) << GgmlTypeName(type) << " element " << i;
    }
  }
}

// A Q8_0, Q4_0, Q5_0 or IQ4_NL matrix becomes q8 (Q4_0: q4) holding the same scales
// and integers: every value is the block's, exactly; Q8_0's -128 included.
TEST(GgufImportTest, ScaledIntegerTypesRepackExactly) {
  ModelSpec spec = testing::TinyModelSpec(32, 1, 4, 2, 64, 300, 64);
  for (uint32_t type : {8u, 2u, 6u, 20u}) {
    GgufBuilder b = testing::LlamaGgufBuilder(spec, 0);
    const std::string name = "blk.0.ffn_up.weight";
    std::string blocks = testing::RandomGgmlBlocks(type, 64 * 32 / 32, type);
    if (type == 8) blocks[2 + 5] = static_cast<char>(-128);  // block 0, element 5
    b.Remove(name).Tensor(name, {32, 64}, type, blocks);
    ModelSpec imported;
    std::vector<std::string> sources;
    ASSERT_TRUE(Import(b.Build(), GgufImportOptions(), &imported, &sources).ok());
    const TensorSpec& t = Find(imported, name);
    EXPECT_EQ(t.dtype, type == 2 ? DType::kQ4 : DType::kQ8) << type;
    const std::vector<float> values = Values(t);
    for (size_t i = 0; i < values.size(); ++i) {
      ASSERT_EQ(values[i], testing::GgmlReferenceValue(
                               type, reinterpret_cast<const uint8_t*>(blocks.data()), i))
          << GgmlTypeName(type) << " element " << i;
    }
    if (type == 8) {
      EXPECT_EQ(kernels::QuantValue(kernels::QuantKind::kQ8, t.encoded.data(), 32, 0, 5),
                -128);
      EXPECT_EQ(sources.back(), "from q8_0, exact");  // the tensor added last
    }
  }
}

// The K-quants become ember's q4_k, q5_k and q6_k holding every field: each value is the
// block's, exactly.
TEST(GgufImportTest, KQuantsRepackExactly) {
  ModelSpec spec = testing::TinyModelSpec(256, 1, 4, 2, 256, 300, 64);
  for (uint32_t type : {12u, 13u, 14u}) {
    GgufBuilder b = testing::LlamaGgufBuilder(spec, 0);
    const std::string name = "blk.0.ffn_down.weight";
    const std::string blocks = testing::RandomGgmlBlocks(type, 256 * 256 / 256, type);
    b.Remove(name).Tensor(name, {256, 256}, type, blocks);
    ModelSpec imported;
    std::vector<std::string> sources;
    ASSERT_TRUE(Import(b.Build(), GgufImportOptions(), &imported, &sources).ok());
    const TensorSpec& t = Find(imported, name);
    EXPECT_EQ(t.dtype, type == 12 ? DType::kQ4K : type == 13 ? DType::kQ5K : DType::kQ6K);
    EXPECT_EQ(sources.back(), "from " + GgmlTypeName(type) + ", exact");
    const std::vector<float> values = Values(t);
    for (size_t i = 0; i < values.size(); ++i) {
      ASSERT_EQ(values[i], testing::GgmlReferenceValue(
                               type, reinterpret_cast<const uint8_t*>(blocks.data()), i))
          << GgmlTypeName(type) << " element " << i;
    }
    // A d that is NaN (here in the second block) is refused, as a q8 scale is.
    std::string nan_blocks = blocks;
    const size_t d_at = FindGgmlType(type)->block_bytes + (type == 14 ? 208 : 0);
    nan_blocks[d_at] = 0x00;
    nan_blocks[d_at + 1] = 0x7E;
    b.Remove(name).Tensor(name, {256, 256}, type, nan_blocks);
    const Status s = Import(b.Build(), GgufImportOptions(), &imported);
    EXPECT_NE(std::string(s.message()).find("block 1 has a scale that is not finite"),
              std::string::npos)
        << s.message();
  }
}

// Q4_1 and Q5_1 (an offset per block) become q8 within half a q8 step of their values.
TEST(GgufImportTest, OffsetTypesAreRequantizedToQ8) {
  ModelSpec spec = testing::TinyModelSpec(256, 1, 4, 2, 256, 300, 64);
  for (uint32_t type : {3u, 7u}) {
    GgufBuilder b = testing::LlamaGgufBuilder(spec, 0);
    const std::string name = "blk.0.attn_q.weight";
    const std::string blocks = testing::RandomGgmlBlocks(
        type, 256 * 256 / FindGgmlType(type)->block_elements, type);
    b.Remove(name).Tensor(name, {256, 256}, type, blocks);
    ModelSpec imported;
    std::vector<std::string> sources;
    ASSERT_TRUE(Import(b.Build(), GgufImportOptions(), &imported, &sources).ok());
    const TensorSpec& t = Find(imported, name);
    ASSERT_EQ(t.dtype, DType::kQ8);
    const std::vector<float> values = Values(t);
    const std::vector<uint8_t> packed = Packed(t);
    for (size_t r = 0; r < 256; ++r) {
      for (size_t c = 0; c < 256; ++c) {
        const float want = testing::GgmlReferenceValue(
            type,
            reinterpret_cast<const uint8_t*>(blocks.data()) + r * blocks.size() / 256, c);
        const float step =
            kernels::QuantScale(kernels::QuantKind::kQ8, packed.data(), 256, r, c / 32);
        ASSERT_LE(std::fabs(values[r * 256 + c] - want),
                  0.5f * step + 1e-3f * std::fabs(want))
            << GgmlTypeName(type) << " (" << r << ", " << c << ")";
      }
    }
  }
}

TEST(GgufImportTest, TypeMapping) {
  ImportedType t;
  ASSERT_TRUE(ImportedTypeOf(8, true, &t));
  EXPECT_TRUE(t.dtype == DType::kQ8 && t.exact);
  ASSERT_TRUE(ImportedTypeOf(2, true, &t));
  EXPECT_TRUE(t.dtype == DType::kQ4 && t.exact);
  ASSERT_TRUE(ImportedTypeOf(20, true, &t));
  EXPECT_TRUE(t.dtype == DType::kQ8 && t.exact);
  ASSERT_TRUE(ImportedTypeOf(1, true, &t));
  EXPECT_TRUE(t.dtype == DType::kF16 && t.exact);
  ASSERT_TRUE(ImportedTypeOf(1, false, &t));
  EXPECT_TRUE(t.dtype == DType::kF32 && t.exact);  // vectors widen
  ASSERT_TRUE(ImportedTypeOf(12, true, &t));
  EXPECT_TRUE(t.dtype == DType::kQ4K && t.exact);
  ASSERT_TRUE(ImportedTypeOf(14, true, &t));
  EXPECT_TRUE(t.dtype == DType::kQ6K && t.exact);
  ASSERT_TRUE(ImportedTypeOf(3, true, &t));
  EXPECT_TRUE(t.dtype == DType::kQ8 && !t.exact);
  EXPECT_FALSE(ImportedTypeOf(16, true, &t));  // iq2_xxs
}

// A Llama GGUF in f32 is the model it was written from, bit for bit; Q8_0 and Q4_0 ones
// decode to the blocks' values. --dtype converts as the other importers, --keep
// overrides, and a type that holds the blocks exactly still packs them.
TEST(GgufImportTest, DTypeAndKeep) {
  const ModelSpec spec = testing::TinyModelSpec(32, 2, 4, 2, 64, 300, 64);
  ModelSpec f32;
  ASSERT_TRUE(Import(testing::LlamaGguf(spec, 0), GgufImportOptions(), &f32).ok());
  EXPECT_EQ(f32.tensors.size(), spec.tensors.size());
  for (const TensorSpec& t : spec.tensors) {
    EXPECT_EQ(Values(Find(f32, t.name)), t.values) << t.name;
  }
  const std::vector<int32_t> tokens = {1, 70, 80, 90, 100};
  EXPECT_EQ(Logits(f32, tokens), Logits(spec, tokens));

  const std::string q4 = testing::LlamaGguf(spec, 2);
  GgufImportOptions options;
  options.convert_dtype = true;
  options.types.matrix = DType::kQ8;
  options.overrides = {{"blk.1.*", DType::kF32}};
  ModelSpec as_q8, native;
  std::vector<std::string> sources;
  ASSERT_TRUE(Import(q4, options, &as_q8, &sources).ok());
  ASSERT_TRUE(Import(q4, GgufImportOptions(), &native).ok());
  for (size_t i = 0; i < as_q8.tensors.size(); ++i) {
    const TensorSpec& t = as_q8.tensors[i];
    if (t.shape.size() != 2) continue;
    const bool kept = t.name.rfind("blk.1.", 0) == 0;
    EXPECT_EQ(t.dtype, kept ? DType::kF32 : DType::kQ8) << t.name;
    EXPECT_EQ(sources[i], kept ? "from q4_0, decoded" : "from q4_0, exact") << t.name;
    EXPECT_EQ(Find(native, t.name).dtype, DType::kQ4);
    EXPECT_EQ(Values(t), Values(Find(native, t.name))) << t.name;  // the same values
  }
  options.overrides = {{"nothing.*", DType::kF32}};
  EXPECT_FALSE(Import(q4, options, &as_q8).ok());
  options.overrides.clear();
  options.types.matrix = DType::kF16;
  ASSERT_TRUE(Import(q4, options, &as_q8, &sources).ok());
  EXPECT_EQ(Find(as_q8, names::LayerName(names::kAttnQ, 0)).dtype, DType::kF16);
  EXPECT_EQ(sources[2], "from q4_0, rounded");
}

// llama.cpp's converter permutes Q and K rows so that GGML's interleaved RoPE does what
// Hugging Face's rotate_half does: the imported model must equal the unpermuted one
// run with half pairing.
TEST(GgufImportTest, PermutedQueryKeyRowsWithInterleavedRopeEqualRotateHalf) {
  ModelSpec hf = testing::TinyModelSpec(32, 2, 4, 2, 64, 300, 64, 7);
  hf.config.rope_pairing = RopePairing::kHalf;
  ModelSpec permuted = hf;
  const size_t head_dim = hf.config.head_dim;
  for (TensorSpec& t : permuted.tensors) {
    const bool q = t.name.find("attn_q.") != std::string::npos;
    if (!q && t.name.find("attn_k.") == std::string::npos) continue;
    const std::vector<float> rows = t.values;
    const size_t cols = t.shape[1], heads = t.shape[0] / head_dim;
    // (heads, 2, head_dim / 2, cols) -> (heads, head_dim / 2, 2, cols)
    for (size_t h = 0; h < heads; ++h) {
      for (size_t i = 0; i < head_dim / 2; ++i) {
        for (size_t j = 0; j < 2; ++j) {
          memcpy(&t.values[(h * head_dim + 2 * i + j) * cols],
                 &rows[(h * head_dim + j * head_dim / 2 + i) * cols],
                 cols * sizeof(float));
        }
      }
    }
  }
  ModelSpec imported;
  ASSERT_TRUE(
      Import(testing::LlamaGguf(permuted, 0), GgufImportOptions(), &imported).ok());
  EXPECT_EQ(imported.config.rope_pairing, RopePairing::kInterleaved);
  const std::vector<int32_t> tokens = {1, 100, 7, 250, 3, 42, 42, 99};
  const std::vector<float> want = Logits(hf, tokens), got = Logits(imported, tokens);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-5f * (1.0f + std::fabs(want[i]))) << i;
  }
}

// Qwen2: Llama's blocks with biases on Q, K and V and RoPE on halves, its rows as
// Hugging Face has them: the import is the model, bit for bit.
TEST(GgufImportTest, Qwen2IsLlamaWithQkvBiasesAndHalfPairs) {
  ModelSpec qwen = testing::TinyModelSpec(32, 2, 4, 2, 64, 300, 64, 11);
  qwen.config.rope_pairing = RopePairing::kHalf;
  qwen.config.rope_theta = 1000000.0f;
  qwen.config.qkv_bias = true;
  snprintf(qwen.config.architecture, sizeof(qwen.config.architecture), "qwen2");
  for (unsigned i = 0; i < 2; ++i) {
    for (const auto& [format, rows] :
         {std::pair<const char*, uint64_t>{names::kAttnQBias, 32},
          {names::kAttnKBias, 16},
          {names::kAttnVBias, 16}}) {
      TensorSpec bias;
      bias.name = names::LayerName(format, i);
      bias.shape = {rows};
      for (uint64_t r = 0; r < rows; ++r) bias.values.push_back(0.01f * (r % 7) - 0.03f);
      qwen.tensors.push_back(std::move(bias));
    }
  }
  ModelSpec imported;
  ASSERT_TRUE(
      Import(testing::LlamaGgufBuilder(qwen, 0, "qwen2").Build(), {}, &imported).ok());
  EXPECT_STREQ(imported.config.architecture, "qwen2");
  EXPECT_EQ(imported.config.rope_pairing, RopePairing::kHalf);
  EXPECT_EQ(imported.config.rope_theta, 1000000.0f);
  EXPECT_TRUE(imported.config.qkv_bias);
  EXPECT_FALSE(imported.config.out_bias);
  const std::vector<int32_t> tokens = {1, 100, 7, 250, 3};
  EXPECT_EQ(Logits(imported, tokens), Logits(qwen, tokens));
}

// A decoder with llama.cpp's pooling_type (Qwen3-Embedding's GGUF) imports as an
// embedding model with that pooling, normalized as llama-embedding normalizes; 0 or no
// key is a language model; rank (4) on a decoder is refused with what to do instead.
TEST(GgufImportTest, DecoderPoolingTypeMakesAnEmbeddingModel) {
  ModelSpec qwen = testing::TinyModelSpec(32, 2, 4, 2, 64, 300, 64, 11);
  qwen.config.rope_pairing = RopePairing::kHalf;
  snprintf(qwen.config.architecture, sizeof(qwen.config.architecture), "qwen2");
  const struct {
    int32_t type;
    Pooling pooling;
  } kCases[] = {
      {0, Pooling::kNone}, {1, Pooling::kMean}, {2, Pooling::kCls}, {3, Pooling::kLast}};
  for (const auto& c : kCases) {
    ModelSpec imported;
    GgufBuilder b = testing::LlamaGgufBuilder(qwen, 0, "qwen2");
    b.U32("qwen2.pooling_type", static_cast<uint32_t>(c.type));
    const Status s = Import(b.Build(), {}, &imported);
    ASSERT_TRUE(s.ok()) << c.type << ": " << s.message();
    EXPECT_EQ(imported.config.pooling, c.pooling) << c.type;
    EXPECT_EQ(imported.config.normalize, c.type != 0) << c.type;
    EXPECT_EQ(imported.config.mask, AttentionMask::kCausal) << c.type;
  }
  ModelSpec plain;
  ASSERT_TRUE(
      Import(testing::LlamaGgufBuilder(qwen, 0, "qwen2").Build(), {}, &plain).ok());
  EXPECT_EQ(plain.config.pooling, Pooling::kNone);
  for (const uint32_t bad : {4u, 5u}) {
    GgufBuilder b = testing::LlamaGgufBuilder(qwen, 0, "qwen2");
    b.U32("qwen2.pooling_type", bad);
    ModelSpec imported;
    const Status s = Import(b.Build(), {}, &imported);
    EXPECT_EQ(s.code(), bad == 4 ? StatusCode::kUnimplemented : StatusCode::kInvalidModel)
        << bad << ": " << s.message();
  }
}

}  // namespace
}  // namespace ember::tools
