// WriteModel: what it writes is what SerializeModel makes and loads back; a model the
// loader would refuse is never written (the loader's own message says why, and an
// older file at the path stays as it was).
#include "runtime/model/model_writer.h"

#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/kquant_layout.h"
#include "kernels/quant_layout.h"
#include "kernels/quantize/kquant_pack.h"
#include "kernels/quantize/kquant_quantize.h"
#include "kernels/quantize/quant_pack.h"
#include "runtime/linear.h"
#include "runtime/model/model.h"
#include "runtime/model/tensor.h"
#include "testing/testing.h"

namespace ember {
namespace {

class ModelWriterTest : public ::testing::Test {
 protected:
  std::vector<std::string> Entries() const { return scratch_.Entries(); }
  std::vector<uint8_t> Read(const std::string& path) {
    std::vector<uint8_t> bytes;
    EXPECT_TRUE(testing::ReadFileBytes(path, &bytes));
    return bytes;
  }

  // WriteModel must refuse `spec` with the loader's own message (which must hold
  // `fragment`), over a new path and over an existing file, and write nothing.
  void ExpectRefused(const ModelSpec& spec, const std::string& fragment) {
    std::vector<uint8_t> bytes;
    ASSERT_TRUE(SerializeModel(spec, &bytes).ok());  // serializable, but not loadable
    const testing::AlignedBytes aligned(bytes);
    const auto loaded = Model::FromMemory(aligned.data(), aligned.size());
    ASSERT_FALSE(loaded.ok());
    const std::string reason = loaded.status().message();
    EXPECT_NE(reason.find(fragment), std::string::npos) << reason;
    const std::string prefix =
        "refusing to write '" + out_ + "': the loader would reject it: ";
    Status s = WriteModel(spec, out_);
    EXPECT_EQ(s.code(), StatusCode::kInvalidModel);
    EXPECT_EQ(std::string(s.message()), prefix + reason);
    EXPECT_EQ(Entries(), std::vector<std::string>{});

    const std::vector<uint8_t> old = {'o', 'l', 'd'};
    FILE* f = fopen(out_.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    fwrite(old.data(), 1, old.size(), f);
    fclose(f);
    s = WriteModel(spec, out_);
    EXPECT_EQ(std::string(s.message()), prefix + reason);
    EXPECT_EQ(Read(out_), old);
    EXPECT_EQ(Entries(), std::vector<std::string>{"model.ember"});
    unlink(out_.c_str());
  }

  testing::ScratchDir scratch_{"ember_writer_"};
  const std::string out_ = scratch_.path() + "/model.ember";
};

TEST_F(ModelWriterTest, WritesWhatSerializeModelMakesAndItLoads) {
  const ModelSpec spec = testing::TinyModelSpec();
  std::vector<uint8_t> serialized;
  ASSERT_TRUE(SerializeModel(spec, &serialized).ok());
  uint64_t written = 0;
  const Status s = WriteModel(spec, out_, &written);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(written, serialized.size());
  EXPECT_EQ(Read(out_), serialized);
  auto model = Model::Open(out_.c_str());
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ((*model)->config().d_model, 32u);
  EXPECT_EQ(Entries(), std::vector<std::string>{"model.ember"});
}

TEST_F(ModelWriterTest, EveryDTypeWritesAndLoads) {
  for (DType dtype : {DType::kF16, DType::kBF16, DType::kQ8, DType::kQ4}) {
    ModelSpec spec = testing::TinyModelSpec();
    for (TensorSpec& t : spec.tensors) {
      if (t.shape.size() == 2) t.dtype = dtype;
    }
    const Status s = WriteModel(spec, out_);
    ASSERT_TRUE(s.ok()) << DTypeName(dtype) << ": " << s.message();
    auto model = Model::Open(out_.c_str());
    EXPECT_TRUE(model.ok()) << DTypeName(dtype) << ": " << model.status().message();
  }
}

// Bytes already in the file's layout (an importer's lossless path) are written as they
// are, and the chat template's source round-trips.
TEST_F(ModelWriterTest, EncodedTensorsAndTheChatTemplateAreStoredAsGiven) {
  ModelSpec spec = testing::TinyModelSpec();
  const std::string kTemplate = "{% for m in messages %}{{ m['content'] }}{% endfor %}";
  spec.tokenizer.chat_template = kTemplate;
  std::vector<std::vector<uint8_t>> expected;
  for (TensorSpec& t : spec.tensors) {
    if (t.shape.size() != 2) continue;
    t.dtype = DType::kQ8;
    std::vector<uint8_t> packed(
        kernels::QuantPackedBytes(kernels::QuantKind::kQ8, t.shape[0], t.shape[1]));
    kernels::PackQuant(kernels::QuantKind::kQ8, t.values.data(), t.shape[0], t.shape[1],
                       packed.data());
    for (uint8_t& b : packed) b ^= 1;  // not what PackQuant would write from `values`
    t.encoded = packed;
    t.values.clear();
    expected.push_back(packed);
  }
  ASSERT_FALSE(expected.empty());
  const Status s = WriteModel(spec, out_);
  ASSERT_TRUE(s.ok()) << s.message();
  auto model = Model::Open(out_.c_str());
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ((*model)->tokenizer().chat_template(), kTemplate);
  size_t matrices = 0;
  for (const TensorSpec& t : spec.tensors) {
    if (t.shape.size() != 2) continue;
    for (const Tensor& stored : (*model)->tensors()) {
      if (t.name != stored.name) continue;
      EXPECT_EQ(stored.dtype, DType::kQ8);
      ASSERT_EQ(stored.size_bytes, t.encoded.size());
      EXPECT_EQ(memcmp(stored.data, t.encoded.data(), t.encoded.size()), 0) << t.name;
      ++matrices;
    }
  }
  EXPECT_EQ(matrices, expected.size());
}

// A GGUF import's K-quant path: GGML blocks packed with PackKQuantFromGgml and written
// as encoded bytes keep every value (embedding rows decode to GGML's own values bit for
// bit), and equal what the writer makes of the f32 values with the same dtype.
TEST_F(ModelWriterTest, KQuantTensorsFromGgmlBlocksKeepEveryValue) {
  ModelSpec from_ggml = testing::TinyModelSpec(256, 1, 4, 2, 512, 300, 16);
  ModelSpec from_f32 = from_ggml;
  const DType kinds[] = {DType::kQ4K, DType::kQ5K, DType::kQ6K};
  std::vector<std::vector<uint8_t>> ggml(from_ggml.tensors.size());
  size_t next = 0;
  for (size_t i = 0; i < from_ggml.tensors.size(); ++i) {
    TensorSpec& t = from_ggml.tensors[i];
    if (t.shape.size() != 2) continue;
    const DType dtype = kinds[next++ % 3];
    const kernels::KQuantKind kind = KQuantKindOf(dtype);
    const size_t rows = t.shape[0], cols = t.shape[1];
    const size_t row_bytes = kernels::GgmlKQuantRowBytes(kind, cols);
    ggml[i].resize(rows * row_bytes);
    for (size_t r = 0; r < rows; ++r) {
      kernels::QuantizeKQuantRowGgml(kind, t.values.data() + r * cols, cols,
                                     ggml[i].data() + r * row_bytes);
    }
    t.dtype = from_f32.tensors[i].dtype = dtype;
    t.encoded.resize(kernels::KQuantPackedBytes(kind, rows, cols));
    ASSERT_TRUE(
        kernels::PackKQuantFromGgml(kind, ggml[i].data(), rows, cols, t.encoded.data()));
    t.values.clear();
  }
  std::vector<uint8_t> a, b;
  ASSERT_TRUE(SerializeModel(from_ggml, &a).ok());
  ASSERT_TRUE(SerializeModel(from_f32, &b).ok());
  EXPECT_EQ(a, b);
  ASSERT_TRUE(WriteModel(from_ggml, out_).ok());
  auto model = Model::Open(out_.c_str());
  ASSERT_TRUE(model.ok()) << model.status().message();
  const Tensor& embedding = *(*model)->weights().tok_embedding;
  ASSERT_EQ(embedding.dtype, DType::kQ4K);
  const kernels::KQuantKind kind = KQuantKindOf(embedding.dtype);
  std::vector<float> got(256), want(256);
  for (uint64_t row : {0, 17, 299}) {
    EmbeddingRow(embedding, row, got.data());
    kernels::DequantizeGgmlKQuantRow(
        kind, ggml[0].data() + row * kernels::GgmlKQuantRowBytes(kind, 256), 256,
        want.data());
    EXPECT_EQ(memcmp(got.data(), want.data(), sizeof(float) * 256), 0) << row;
  }
}

TEST_F(ModelWriterTest, EncodedBytesOfTheWrongSizeOrBesideValuesAreRefused) {
  ModelSpec spec = testing::TinyModelSpec();
  TensorSpec* matrix = nullptr;
  for (TensorSpec& t : spec.tensors) {
    if (t.shape.size() == 2) matrix = &t;
  }
  ASSERT_NE(matrix, nullptr);
  matrix->dtype = DType::kF16;
  matrix->encoded.assign(matrix->values.size() * 2, 0);
  Status s = WriteModel(spec, out_);
  EXPECT_NE(std::string(s.message()).find("both f32 values and encoded bytes"),
            std::string::npos)
      << s.message();
  matrix->values.clear();
  matrix->encoded.pop_back();
  s = WriteModel(spec, out_);
  EXPECT_NE(std::string(s.message()).find("encoded bytes, but a f16 tensor"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(Entries().empty());
}

TEST_F(ModelWriterTest, RopeThetaOfOneIsRefused) {
  ModelSpec spec = testing::TinyModelSpec();
  spec.config.rope_theta = 1.0f;
  ExpectRefused(spec, "config: rope_theta 1 outside (1, 1e12)");
}

TEST_F(ModelWriterTest, APieceOf100000BytesIsRefused) {
  ModelSpec spec = testing::TinyModelSpec();
  spec.tokenizer.pieces.back() = std::string(100000, 'q');
  ExpectRefused(spec, "tokenizer: max_piece_bytes 100000 exceeds 256");
}

TEST_F(ModelWriterTest, ACorruptedBytePieceIsRefused) {
  ModelSpec spec = testing::TinyModelSpec();
  ASSERT_EQ(spec.tokenizer.pieces[3 + 0x41], "<0x41>");
  spec.tokenizer.pieces[3 + 0x41] = "<0xZZ>";  // still typed as a byte piece
  ExpectRefused(spec, "tokenizer: byte token 68 is not <0xNN>");
}

// A Hugging Face config whose bos_token_id names a byte's piece: the importer marks it
// a control token, so byte-level BPE has no piece left to map that byte to.
TEST_F(ModelWriterTest, ByteLevelBpeWithBosOnABytePieceIsRefused) {
  ModelSpec spec = testing::TinyModelSpec();  // a vocabulary of 300
  TokenizerSpec& tok = spec.tokenizer;
  tok = TokenizerSpec();
  tok.kind = TokenizerKind::kByteLevelBpe;
  for (int b = 0; b < 256; ++b)
    tok.pieces.push_back(std::string(1, static_cast<char>(b)));
  for (int i = 256; i < 300; ++i) tok.pieces.push_back("w" + std::to_string(i));
  tok.types.assign(300, TokenType::kNormal);
  tok.add_bos = false;
  tok.add_dummy_prefix = false;
  tok.bos_id = tok.eos_id = 'a';
  tok.types['a'] = TokenType::kControl;
  ExpectRefused(spec, "tokenizer: byte-level BPE has no piece for byte 0x61");
  tok.bos_id = tok.eos_id = 299;  // the same tokenizer with a proper special token
  tok.types['a'] = TokenType::kNormal;
  tok.types[299] = TokenType::kControl;
  const Status s = WriteModel(spec, out_);
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST_F(ModelWriterTest, ASpecThatCannotBeSerializedWritesNothing) {
  ModelSpec spec = testing::TinyModelSpec();
  spec.tensors[0].values.pop_back();
  const Status s = WriteModel(spec, out_);
  EXPECT_NE(std::string(s.message()).find("values for"), std::string::npos)
      << s.message();
  EXPECT_EQ(Entries(), std::vector<std::string>{});
}

// A q8/q4 scale cannot hold NaN or an infinity: quantizing one is refused by name and
// position, where f32 keeps the value (and `ember inspect --check-weights` finds it).
TEST_F(ModelWriterTest, QuantizingANonFiniteValueIsRefused) {
  for (DType dtype : {DType::kQ8, DType::kQ4}) {
    for (float bad : {std::nanf(""), INFINITY, -INFINITY}) {
      ModelSpec spec = testing::TinyModelSpec();
      TensorSpec* w = nullptr;
      for (TensorSpec& t : spec.tensors) {
        if (t.name == "blk.1.ffn_up.weight") w = &t;
      }
      ASSERT_TRUE(w);
      w->dtype = dtype;
      w->values[77] = bad;
      std::vector<uint8_t> bytes;
      const Status s = SerializeModel(spec, &bytes);
      EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << DTypeName(dtype) << " " << bad;
      EXPECT_NE(std::string(s.message()).find("'blk.1.ffn_up.weight': element 77 is"),
                std::string::npos)
          << s.message();
      w->dtype = DType::kF32;
      EXPECT_TRUE(SerializeModel(spec, &bytes).ok());
    }
  }
}

}  // namespace
}  // namespace ember
