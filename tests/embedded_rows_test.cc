// Rows given as embeddings (Session::PrefillEmbedded, Forward's EmbeddedRows: how an
// image's rows enter a prompt), on the Gemma 3-style model of testing::FamiliesModelSpec
// (sliding, global, sliding; an embedding scale):
// - marker rows that carry their own tokens' scaled embeddings give bitwise the logits of
//   the tokens, whatever the steps and threads;
// - a bidirectional block (Gemma 3's image block) over a whole prompt is bitwise the
//   model with a bidirectional mask, and in sliding layers it reaches past the window;
// - a block amid text: steps are cut before it, and rows before it are untouched;
// - inputs that do not add up are refused before anything runs.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/linear.h"
#include "runtime/model/model.h"
#include "runtime/pool/thread_pool.h"
#include "runtime/session.h"
#include "testing/testing.h"

namespace ember {
namespace {

constexpr uint32_t kContext = 96;
constexpr int32_t kMarker = 1000;  // past the vocabulary of 300, as Gemma's may be

// The rows transformers' masked_scatter would put at `tokens`: each token's embedding
// row times the embedding scale.
std::vector<float> ScaledEmbeddings(const Model& model, const std::vector<int32_t>& ids) {
  const ModelConfig& c = model.config();
  std::vector<float> rows(ids.size() * c.d_model);
  for (size_t i = 0; i < ids.size(); ++i) {
    float* row = rows.data() + i * c.d_model;
    EmbeddingRow(*model.weights().tok_embedding, static_cast<uint64_t>(ids[i]), row);
    for (size_t j = 0; j < c.d_model; ++j) row[j] *= c.embedding_scale;
  }
  return rows;
}

// tokens with [begin, end) replaced by the marker, and those tokens' scaled rows.
struct Marked {
  std::vector<int32_t> tokens;
  std::vector<float> rows;
};
Marked MarkRange(const Model& model, const std::vector<int32_t>& tokens, size_t begin,
                 size_t end, Marked marked = {}) {
  if (marked.tokens.empty()) marked.tokens = tokens;
  std::vector<int32_t> ids(tokens.begin() + begin, tokens.begin() + end);
  const std::vector<float> rows = ScaledEmbeddings(model, ids);
  // Rows go in marker order: insert these after the rows of earlier ranges.
  size_t before = 0;
  for (size_t i = 0; i < begin; ++i) before += marked.tokens[i] == kMarker;
  marked.rows.insert(marked.rows.begin() + before * model.config().d_model, rows.begin(),
                     rows.end());
  for (size_t i = begin; i < end; ++i) marked.tokens[i] = kMarker;
  return marked;
}

Session Make(const Model& model, uint32_t max_batch, const ThreadPool* pool = nullptr,
             bool all_logits = false) {
  SessionOptions options =
      testing::FamiliesSessionOptions(kContext, max_batch, KvType::kF32, false);
  options.all_logits = all_logits;
  auto s = Session::Create(model, options, pool);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return std::move(*s);
}

EmbeddedRows Rows(const Marked& m, bool bidirectional) {
  EmbeddedRows e;
  e.marker = kMarker;
  e.rows = m.rows.data();
  e.count = m.rows.size() / 48;  // FamiliesModelSpec's d_model
  e.bidirectional = bidirectional;
  return e;
}

bool SameLogits(const Session& a, const Session& b) {
  return memcmp(a.logits(), b.logits(),
                a.model().config().vocab_size * sizeof(float)) == 0;
}

TEST(EmbeddedRowsTest, MarkerRowsWithTheirTokensRowsGiveTheTokensLogits) {
  const testing::LoadedModel m = testing::LoadSpec(testing::FamiliesModelSpec());
  ASSERT_NE(m.model, nullptr);
  ASSERT_EQ(m.model->config().d_model, 48u);
  ASSERT_NE(m.model->config().embedding_scale, 1.0f);
  const std::vector<int32_t> tokens = testing::SpreadTokens(30);
  // Three runs, one across a step boundary of 4 and of 8.
  Marked marked = MarkRange(*m.model, tokens, 3, 10);
  marked = MarkRange(*m.model, tokens, 14, 15, marked);
  marked = MarkRange(*m.model, tokens, 20, 27, marked);
  auto pool = ThreadPool::Create(2);
  ASSERT_TRUE(pool.ok());
  for (const uint32_t max_batch : {4u, 8u, 64u}) {
    for (const ThreadPool* threads : {static_cast<const ThreadPool*>(nullptr),
                                      static_cast<const ThreadPool*>(pool->get())}) {
      Session plain = Make(*m.model, 64);
      ASSERT_TRUE(plain.Prefill(tokens.data(), tokens.size()).ok());
      Session s = Make(*m.model, max_batch, threads);
      const Status st =
          s.PrefillEmbedded(marked.tokens.data(), marked.tokens.size(), Rows(marked, false));
      ASSERT_TRUE(st.ok()) << st.message();
      EXPECT_TRUE(SameLogits(s, plain)) << "steps of " << max_batch;
      EXPECT_EQ(s.position(), tokens.size());
      EXPECT_EQ(s.tokens()[5], kMarker);  // the history keeps the marker
      // Decoding goes on over the embedded rows' keys.
      ASSERT_TRUE(s.Decode(tokens[0]).ok());
      ASSERT_TRUE(plain.Decode(tokens[0]).ok());
      EXPECT_TRUE(SameLogits(s, plain));
    }
  }
}

// No sliding layers: a causal model whose whole prompt is one bidirectional block is the
// same model with a bidirectional mask.
TEST(EmbeddedRowsTest, ABlockOverTheWholePromptIsTheBidirectionalMask) {
  ModelSpec spec = testing::FamiliesModelSpec();
  spec.config.layer_attention.clear();
  spec.config.sliding_window = 0;
  const testing::LoadedModel causal = testing::LoadSpec(spec);
  spec.config.mask = AttentionMask::kBidirectional;
  const testing::LoadedModel bidirectional = testing::LoadSpec(spec);
  ASSERT_NE(causal.model, nullptr);
  ASSERT_NE(bidirectional.model, nullptr);
  const std::vector<int32_t> tokens = testing::SpreadTokens(12);
  const Marked marked = MarkRange(*causal.model, tokens, 0, tokens.size());
  Session block = Make(*causal.model, 16, nullptr, true);
  ASSERT_TRUE(
      block.PrefillEmbedded(marked.tokens.data(), tokens.size(), Rows(marked, true)).ok());
  Session reference = Make(*bidirectional.model, 16, nullptr, true);
  ASSERT_TRUE(reference.Prefill(tokens.data(), tokens.size()).ok());
  const size_t vocab = spec.config.vocab_size;
  for (size_t i = 0; i < tokens.size(); ++i) {
    EXPECT_EQ(0, memcmp(block.logits_at(i), reference.logits_at(i), vocab * sizeof(float)))
        << "row " << i;
  }
  // And it is not the causal pass: the first row sees the rows after it.
  Session causal_pass = Make(*causal.model, 16, nullptr, true);
  ASSERT_TRUE(causal_pass.Prefill(tokens.data(), tokens.size()).ok());
  EXPECT_NE(0, memcmp(block.logits_at(0), causal_pass.logits_at(0), vocab * sizeof(float)));
}

// Sliding layers (window 6): a block of 10 rows over the whole prompt sees all of itself,
// as with a window wider than the prompt; without the block the windows differ.
TEST(EmbeddedRowsTest, ABlockReachesPastTheSlidingWindow) {
  const testing::LoadedModel narrow = testing::LoadSpec(testing::FamiliesModelSpec(6));
  const testing::LoadedModel wide = testing::LoadSpec(testing::FamiliesModelSpec(64));
  ASSERT_NE(narrow.model, nullptr);
  ASSERT_NE(wide.model, nullptr);
  const std::vector<int32_t> tokens = testing::SpreadTokens(10);
  const Marked marked = MarkRange(*narrow.model, tokens, 0, tokens.size());
  Session a = Make(*narrow.model, 16, nullptr, true);
  Session b = Make(*wide.model, 16, nullptr, true);
  ASSERT_GT(a.kv_cache().layers[0].ring, 0u);  // the narrow window keeps a ring
  ASSERT_TRUE(a.PrefillEmbedded(marked.tokens.data(), 10, Rows(marked, true)).ok());
  ASSERT_TRUE(b.PrefillEmbedded(marked.tokens.data(), 10, Rows(marked, true)).ok());
  const size_t vocab = narrow.model->config().vocab_size;
  for (size_t i = 0; i < tokens.size(); ++i) {
    EXPECT_EQ(0, memcmp(a.logits_at(i), b.logits_at(i), vocab * sizeof(float)))
        << "row " << i;
  }
  Session c = Make(*narrow.model, 16, nullptr, true);
  Session d = Make(*wide.model, 16, nullptr, true);
  ASSERT_TRUE(c.PrefillEmbedded(marked.tokens.data(), 10, Rows(marked, false)).ok());
  ASSERT_TRUE(d.PrefillEmbedded(marked.tokens.data(), 10, Rows(marked, false)).ok());
  EXPECT_NE(0, memcmp(c.logits_at(9), d.logits_at(9), vocab * sizeof(float)));
}

// A block of 10 amid 30 tokens: in steps of 12 (a ring in the sliding layers) the step
// is cut before the block, and the logits equal one whole step's, bitwise; rows before
// the block are those of a plain prefill, rows from it on are not.
TEST(EmbeddedRowsTest, StepsAreCutBeforeABlock) {
  const testing::LoadedModel m = testing::LoadSpec(testing::FamiliesModelSpec(6));
  ASSERT_NE(m.model, nullptr);
  const std::vector<int32_t> tokens = testing::SpreadTokens(30);
  const Marked marked = MarkRange(*m.model, tokens, 8, 18);
  const EmbeddedRows rows = Rows(marked, true);
  auto pool = ThreadPool::Create(2);
  ASSERT_TRUE(pool.ok());
  Session whole = Make(*m.model, kContext, nullptr, true);
  ASSERT_TRUE(whole.PrefillEmbedded(marked.tokens.data(), 30, rows).ok());
  Session plain = Make(*m.model, kContext, nullptr, true);
  ASSERT_TRUE(plain.Prefill(tokens.data(), 30).ok());
  const size_t vocab = m.model->config().vocab_size;
  for (size_t i = 0; i < 30; ++i) {
    const bool same =
        memcmp(whole.logits_at(i), plain.logits_at(i), vocab * sizeof(float)) == 0;
    EXPECT_EQ(same, i < 8) << "row " << i;
  }
  for (const ThreadPool* threads : {static_cast<const ThreadPool*>(nullptr),
                                    static_cast<const ThreadPool*>(pool->get())}) {
    Session steps = Make(*m.model, 12, threads);
    ASSERT_GT(steps.kv_cache().layers[0].ring, 0u);
    ASSERT_TRUE(steps.PrefillEmbedded(marked.tokens.data(), 30, rows).ok());
    // Steps [0, 8), [8, 20), [20, 30): the last row's logits.
    EXPECT_EQ(0, memcmp(steps.logits(), whole.logits_at(29), vocab * sizeof(float)));
    for (int32_t t : {5, 7, 11}) {
      ASSERT_TRUE(steps.Decode(t).ok());
    }
    Session again = Make(*m.model, kContext);
    ASSERT_TRUE(again.PrefillEmbedded(marked.tokens.data(), 30, rows).ok());
    for (int32_t t : {5, 7, 11}) {
      ASSERT_TRUE(again.Decode(t).ok());
    }
    EXPECT_TRUE(SameLogits(steps, again));
  }
}

TEST(EmbeddedRowsTest, InputsThatDoNotAddUpAreRefused) {
  const testing::LoadedModel m = testing::LoadSpec(testing::FamiliesModelSpec(6));
  ASSERT_NE(m.model, nullptr);
  const std::vector<int32_t> tokens = testing::SpreadTokens(30);
  const Marked marked = MarkRange(*m.model, tokens, 4, 20);  // a block of 16
  Session s = Make(*m.model, 12);
  EmbeddedRows rows = Rows(marked, true);
  Status st = s.PrefillEmbedded(marked.tokens.data(), 30, rows);
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
  EXPECT_NE(std::string(st.message()).find("longer than the session's step of 12"),
            std::string::npos)
      << st.message();
  rows.bidirectional = false;  // the same rows may be split across steps
  EXPECT_TRUE(s.PrefillEmbedded(marked.tokens.data(), 30, rows).ok());
  s.Reset();
  rows.count = 15;
  st = s.PrefillEmbedded(marked.tokens.data(), 30, rows);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(st.message()).find("15 embedded rows for 16 marker tokens"),
            std::string::npos)
      << st.message();
  rows.count = 16;
  rows.rows = nullptr;
  EXPECT_EQ(s.PrefillEmbedded(marked.tokens.data(), 30, rows).code(),
            StatusCode::kInvalidArgument);
  rows = Rows(marked, false);
  rows.marker = -1;
  EXPECT_EQ(s.PrefillEmbedded(marked.tokens.data(), 30, rows).code(),
            StatusCode::kInvalidArgument);
  // Without the marker, its id is a token outside the vocabulary.
  EXPECT_EQ(s.Prefill(marked.tokens.data(), 30).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.position(), 0u);
}

}  // namespace
}  // namespace ember
