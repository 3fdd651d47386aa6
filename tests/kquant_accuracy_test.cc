// Accuracy of the K-quants against f32, held to llama.cpp's own: on a random Llama of
// kshape's shape (every row a multiple of 256; written here as a llama2.c checkpoint) and
// on stories260K (no row a multiple of 256: every K-quant matrix falls back to q8),
// ember's q4_k_m and q5_k_m must land no farther from f32 (mean KL divergence of the
// next-token distributions, RMS of the logit differences) than llama.cpp's Q4_K_M and
// Q5_K_M of the same weights land from llama.cpp's f32, measured with llama.cpp itself
// (the figures below; how: docs/accuracy.md).
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/model/model.h"
#include "runtime/session.h"
#include "testing/accuracy_util.h"
#include "testing/testing.h"
#include "tools/convert/dtype_policy.h"
#include "tools/convert/llama2c/llama2c_import.h"

namespace ember {
namespace {

// The first kPositions tokens of testing::kStoryText (BOS first) are fed.
constexpr size_t kPositions = 128;  // the context llama.cpp's llama2.c converter sets

// kshape's shape: d_model 256, ffn 768, 4 layers, 8 heads, vocabulary 512 (tok512).
constexpr int32_t kDim = 256, kHidden = 768, kLayers = 4, kHeads = 8, kVocab = 512;

// A llama2.c "version 0" checkpoint with a shared classifier: weights of each matrix
// uniform-sum (four uniforms, about Gaussian) with variance 1 / fan_in from xorshift32,
// norm weights 1, zero RoPE tables. Deterministic bytes on every machine.
bool WriteCheckpoint(const std::string& path) {
  FILE* f = fopen(path.c_str(), "wb");
  if (!f) return false;
  const int32_t header[7] = {
      kDim, kHidden, kLayers, kHeads, kHeads, kVocab, static_cast<int32_t>(kPositions)};
  fwrite(header, sizeof(header), 1, f);
  uint32_t state = 12345;
  const auto uniform = [&state] {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return static_cast<float>(state >> 8) * (2.0f / 16777216.0f) - 1.0f;
  };
  const auto matrices = [&](size_t count, size_t fan_in) {
    const float scale = std::sqrt(0.75f / static_cast<float>(fan_in));
    std::vector<float> v(count);
    for (float& x : v) {
      float sum = uniform();
      for (int i = 0; i < 3; ++i) sum += uniform();
      x = sum * scale;
    }
    fwrite(v.data(), sizeof(float), v.size(), f);
  };
  const auto ones = [&](size_t count) {
    const std::vector<float> v(count, 1.0f);
    fwrite(v.data(), sizeof(float), v.size(), f);
  };
  const size_t D = kDim, H = kHidden, L = kLayers;
  matrices(kVocab * D, D);  // token embedding, also the classifier
  ones(L * D);              // rms_att
  for (int m = 0; m < 4; ++m) matrices(L * D * D, D);                 // wq, wk, wv, wo
  ones(L * D);                                                        // rms_ffn
  matrices(L * H * D, D);                                             // w1
  matrices(L * D * H, H);                                             // w2
  matrices(L * H * D, D);                                             // w3
  ones(D);                                                            // rms_final
  const std::vector<float> rope(kPositions * (kDim / kHeads), 0.0f);  // real, imaginary
  fwrite(rope.data(), sizeof(float), rope.size(), f);
  return fclose(f) == 0;
}

using Loaded = testing::LoadedModel;

Loaded Load(const std::string& checkpoint, const std::string& tokenizer,
            const char* dtype) {
  ModelSpec spec;
  Status s = tools::ImportLlama2c(checkpoint, tokenizer, &spec);
  EXPECT_TRUE(s.ok()) << s.message();
  tools::WeightTypes types;
  EXPECT_TRUE(tools::ParseWeightTypes(dtype, &types).ok()) << dtype;
  s = tools::ChooseDTypes(types, {}, &spec);
  EXPECT_TRUE(s.ok()) << s.message();
  return testing::LoadSpec(spec);
}

// llama.cpp's distances from its own f32 model on the same weights and tokens
// (tools/scripts/llama_logits.c over these 128 positions; llama.cpp c392e50).
struct LlamaFigure {
  const char* dtype;  // ember's --dtype
  double llama_kl, llama_rms;
};

void ExpectNoFartherThanLlamaCpp(const std::string& checkpoint,
                                 const std::string& tokenizer, const char* what,
                                 const LlamaFigure* figures, size_t n) {
  Loaded f32 = Load(checkpoint, tokenizer, "f32");
  ASSERT_TRUE(f32.model);
  const std::vector<int32_t> tokens = testing::StoryTokens(*f32.model, kPositions);
  ASSERT_EQ(tokens.size(), kPositions);
  if (const char* ids = getenv("EMBER_KQUANT_IDS")) {  // for llama.cpp's side
    FILE* f = fopen(ids, "w");
    ASSERT_NE(f, nullptr);
    for (int32_t id : tokens) fprintf(f, "%d\n", id);
    fclose(f);
  }
  const size_t vocab = f32.model->config().vocab_size;
  const std::vector<float> ref = testing::AllLogits(*f32.model, tokens);
  for (size_t i = 0; i < n; ++i) {
    Loaded q = Load(checkpoint, tokenizer, figures[i].dtype);
    ASSERT_TRUE(q.model);
    const testing::LogitDistance d =
        testing::CompareLogits(ref, testing::AllLogits(*q.model, tokens), vocab);
    printf(
        "[ember] %s %-6s vs f32: mean KL %.4g nats, logit RMS %.4g (llama.cpp: %.4g, "
        "%.4g)\n",
        what, figures[i].dtype, d.mean_kl, d.logit_rms, figures[i].llama_kl,
        figures[i].llama_rms);
    EXPECT_LE(d.mean_kl, figures[i].llama_kl) << what << " " << figures[i].dtype;
    EXPECT_LE(d.logit_rms, figures[i].llama_rms) << what << " " << figures[i].dtype;
  }
}

std::string Tok512() { return testing::ModelsDir() + "/llama2c/stories260K/tok512.bin"; }

TEST(KQuantAccuracyTest, KShapeModelNoFartherFromF32ThanLlamaCpp) {
  if (!testing::HaveModel("llama2c/stories260K/tok512.bin")) return;
  testing::ScratchDir dir("kquant_accuracy");
  const std::string checkpoint = dir.path() + "/kshape.bin";
  ASSERT_TRUE(WriteCheckpoint(checkpoint));
  if (const char* keep = getenv("EMBER_KQUANT_CHECKPOINT")) {  // for llama.cpp's side
    const std::string copy = std::string("cp ") + checkpoint + " " + keep;
    EXPECT_EQ(system(copy.c_str()), 0);
  }
  // llama.cpp's Q4_K_M, Q5_K_M and Q6_K of the GGUF its llama2.c converter made of this
  // checkpoint (its f32 logits equal ember's f32 ones to an RMS of 7e-7).
  constexpr LlamaFigure kFigures[] = {
      {"q4_k_m", 0.047880, 0.30830},
      {"q5_k_m", 0.012758, 0.16077},
      {"q6_k", 0.0039084, 0.088506},
  };
  ExpectNoFartherThanLlamaCpp(checkpoint, Tok512(), "kshape-like", kFigures,
                              std::size(kFigures));
}

TEST(KQuantAccuracyTest, Stories260KNoFartherFromF32ThanLlamaCpp) {
  if (!testing::HaveModel("llama2c/stories260K/stories260K.bin")) return;
  // llama.cpp's Q4_K_M and Q5_K_M of models/gguf/stories260K.gguf: its Q4_K/Q6_K fall
  // back to Q5_0/Q8_0 and, for the 172 columns of ffn_down, F16 (ember's to q8).
  constexpr LlamaFigure kFigures[] = {
      {"q4_k_m", 0.0094902, 0.41659},
      {"q5_k_m", 0.0071868, 0.41060},
  };
  ExpectNoFartherThanLlamaCpp(
      testing::ModelsDir() + "/llama2c/stories260K/stories260K.bin", Tok512(),
      "stories260K", kFigures, std::size(kFigures));
}

}  // namespace
}  // namespace ember
