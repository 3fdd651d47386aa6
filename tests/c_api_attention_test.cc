// The C API's reports on stories260K: ember_model_get_info (the configuration, and the
// parameters by kind and type as the runtime counts them for `ember inspect`) and
// attention capture (ember_session_options.record_attention, ember_attention): its shape,
// rows, softmax rows and causal zeros, the same weights the C++ SessionOptions path
// records, the arena it takes, refused selections (a baked prompt's too), and struct_size
// older and newer.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ember/ember.hpp"
#include "gtest/gtest.h"
#include "runtime/model/model.h"
#include "runtime/model/parameter_counts.h"
#include "runtime/session.h"
#include "testing/testing.h"
#include "tests/stories260k.h"
#include "tools/convert/bake.h"

namespace ember {
namespace {

constexpr uint32_t kContext = 32;

class CApiReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::HaveModel("llama2c/stories260K/stories260K.bin")) GTEST_SKIP();
    path_ = testing::Stories260KPath();
    ASSERT_EQ(model_.Open(path_.c_str()), EMBER_OK) << cpp::LastError();
  }

  // Layers [1, 3), heads [2, 5), 16 of the context's 32 positions.
  static ember_session_options Selection() {
    ember_session_options o;
    ember_session_options_default(&o);
    o.max_context = kContext;
    o.record_attention = 1;
    o.attention_first_layer = 1;
    o.attention_num_layers = 2;
    o.attention_first_head = 2;
    o.attention_num_heads = 3;
    o.attention_max_positions = 16;
    return o;
  }

  static ember_attention_info Info() {
    ember_attention_info info;
    memset(&info, 0xAB, sizeof(info));
    info.struct_size = sizeof(info);
    return info;
  }

  std::string path_;
  cpp::Model model_;
};

TEST_F(CApiReportTest, ModelInfoIsTheConfigAndTheRuntimesCounts) {
  ember_model_info info;
  memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  ASSERT_EQ(ember_model_get_info(model_.get(), &info), EMBER_OK) << cpp::LastError();
  auto model = Model::Open(path_.c_str());
  ASSERT_TRUE(model.ok()) << model.status().message();
  const ModelConfig& c = (*model)->config();
  EXPECT_STREQ(info.architecture, c.architecture);
  EXPECT_EQ(info.n_layers, 5u);
  EXPECT_EQ(info.n_heads, 8u);
  EXPECT_EQ(info.n_kv_heads, 4u);
  EXPECT_EQ(info.head_dim, 8u);
  EXPECT_EQ(info.d_model, 64u);
  EXPECT_EQ(info.vocab_size, 512u);
  EXPECT_EQ(info.max_context, c.max_context);
  EXPECT_STREQ(info.norm, "rmsnorm");
  EXPECT_EQ(info.pre_norm, 1);
  EXPECT_STREQ(info.activation, "silu");
  EXPECT_EQ(info.gated_ffn, 1);
  EXPECT_STREQ(info.positions, "rope");
  EXPECT_EQ(info.causal, 1);
  EXPECT_STREQ(info.tokenizer, "sentencepiece-bpe");
  EXPECT_EQ(info.tied_embeddings, c.tied_classifier ? 1 : 0);

  const ParameterCounts n = CountParameters(**model);
  EXPECT_EQ(info.params_total, (*model)->parameter_count());
  EXPECT_EQ(info.params_embeddings, n.of(ParameterKind::kEmbeddings).parameters);
  // q: d_model x d_model per layer; k and v: d_model x kv_dim (GQA: half as wide).
  EXPECT_EQ(info.params_wq, 5u * 64 * 64);
  EXPECT_EQ(info.params_wk, 5u * 64 * 32);
  EXPECT_EQ(info.params_wv, 5u * 64 * 32);
  EXPECT_EQ(info.params_wo, 5u * 64 * 64);
  EXPECT_EQ(info.params_ffn, 5u * 3 * 64 * c.ffn_dim);
  EXPECT_EQ(info.params_norms, (2u * 5 + 1) * 64);
  EXPECT_EQ(info.params_embeddings, 512u * 64);
  const uint64_t kinds = info.params_embeddings + info.params_wq + info.params_wk +
                         info.params_wv + info.params_wo + info.params_ffn +
                         info.params_norms + info.params_classifier + info.params_other;
  EXPECT_EQ(kinds, info.params_total);
  EXPECT_EQ(info.params_f32, info.params_total);  // converted as f32
  ember_model_info through_cpp;
  ASSERT_EQ(model_.Info(&through_cpp), EMBER_OK);  // ember.hpp's wrapper
  EXPECT_EQ(through_cpp.n_layers, info.n_layers);
  EXPECT_EQ(through_cpp.params_ffn, info.params_ffn);
  EXPECT_EQ(through_cpp.weight_bytes, info.weight_bytes);
  EXPECT_GE(info.weight_bytes, 4 * info.params_total);

  // An older caller's struct gets the fields it knows, nothing past them.
  std::vector<uint8_t> old_struct(sizeof(ember_model_info) + 16, 0xEE);
  ember_model_info* older = reinterpret_cast<ember_model_info*>(old_struct.data());
  const uint32_t older_size = offsetof(ember_model_info, weight_bytes) + 8;
  older->struct_size = older_size;
  ASSERT_EQ(ember_model_get_info(model_.get(), older), EMBER_OK);
  EXPECT_EQ(older->params_total, info.params_total);
  // A newer header's is refused; a size smaller than the first version's too.
  info.struct_size = sizeof(info) + 8;
  EXPECT_EQ(ember_model_get_info(model_.get(), &info), EMBER_UNIMPLEMENTED);
  EXPECT_NE(std::string(ember_last_error()).find("newer ember.h"), std::string::npos);
  info.struct_size = 8;
  EXPECT_EQ(ember_model_get_info(model_.get(), &info), EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(ember_model_get_info(nullptr, &info), EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(ember_model_get_info(model_.get(), nullptr), EMBER_INVALID_ARGUMENT);
}

TEST_F(CApiReportTest, AttentionShapeRowsAndSoftmax) {
  const ember_session_options o = Selection();
  cpp::Session session;
  ASSERT_EQ(session.Create(model_, &o), EMBER_OK) << cpp::LastError();
  ember_attention_info info = Info();
  const float* w = ember_attention(session.get(), &info);
  ASSERT_NE(w, nullptr) << cpp::LastError();
  EXPECT_EQ(info.first_layer, 1u);
  EXPECT_EQ(info.num_layers, 2u);
  EXPECT_EQ(info.first_head, 2u);
  EXPECT_EQ(info.num_heads, 3u);
  EXPECT_EQ(info.positions, 16u);
  EXPECT_EQ(info.rows, 0u);
  ember_attention_info through_cpp;
  EXPECT_EQ(session.Attention(&through_cpp), w);  // ember.hpp's wrapper
  EXPECT_EQ(through_cpp.positions, 16u);

  std::vector<int32_t> ids;
  ASSERT_EQ(session.Tokenize("Once upon a time, there was", true, &ids), EMBER_OK);
  ASSERT_GE(ids.size(), 5u);
  ASSERT_EQ(ember_prefill(session.get(), ids.data(), ids.size()), EMBER_OK);
  ASSERT_EQ(ember_decode(session.get(), 42), EMBER_OK);
  const size_t rows = ids.size() + 1;
  ASSERT_EQ(ember_attention(session.get(), &info), w);  // the same arena buffer
  EXPECT_EQ(info.rows, rows);
  const size_t p = info.positions;
  for (size_t m = 0; m < size_t{info.num_layers} * info.num_heads; ++m) {
    for (size_t q = 0; q < rows; ++q) {
      const float* row = w + (m * p + q) * p;
      double sum = 0;
      for (size_t k = 0; k <= q; ++k) {
        EXPECT_GE(row[k], 0.0f);
        sum += row[k];
      }
      EXPECT_NEAR(sum, 1.0, 1e-5) << "matrix " << m << " row " << q;
      for (size_t k = q + 1; k < p; ++k) ASSERT_EQ(row[k], 0.0f) << q << " " << k;
    }
  }
  // The first query sees only itself.
  EXPECT_EQ(w[0], 1.0f);

  // Past max_positions the rows stop at 16; a reset starts at row 0 again.
  std::vector<int32_t> more(20, 300);
  ASSERT_EQ(ember_prefill(session.get(), more.data(), more.size()), EMBER_OK);
  ASSERT_NE(ember_attention(session.get(), &info), nullptr);
  EXPECT_EQ(info.rows, 16u);
  ember_session_reset(session.get());
  ASSERT_NE(ember_attention(session.get(), &info), nullptr);
  EXPECT_EQ(info.rows, 0u);
}

TEST_F(CApiReportTest, AttentionEqualsTheCppSessionOptionsRecord) {
  const ember_session_options o = Selection();
  cpp::Session session;
  ASSERT_EQ(session.Create(model_, &o), EMBER_OK) << cpp::LastError();
  std::vector<int32_t> ids;
  ASSERT_EQ(session.Tokenize("Lily saw a big dog. She was happy", true, &ids), EMBER_OK);
  ASSERT_EQ(ember_prefill(session.get(), ids.data(), ids.size()), EMBER_OK);
  ember_attention_info info = Info();
  const float* w = ember_attention(session.get(), &info);
  ASSERT_NE(w, nullptr) << cpp::LastError();

  auto model = Model::Open(path_.c_str());
  ASSERT_TRUE(model.ok());
  SessionOptions options;
  options.max_context = kContext;
  options.record_attention.enabled = true;
  options.record_attention.first_layer = 1;
  options.record_attention.num_layers = 2;
  options.record_attention.first_head = 2;
  options.record_attention.num_heads = 3;
  options.record_attention.max_positions = 16;
  // The arena the C API sizes is the C++ plan's, record included.
  EXPECT_EQ(model_.ArenaBytes(&o), RequiredArenaBytes(**model, options));
  auto cpp_session = Session::Create(**model, options);
  ASSERT_TRUE(cpp_session.ok()) << cpp_session.status().message();
  ASSERT_TRUE(cpp_session->Prefill(ids.data(), ids.size()).ok());
  const AttentionRecord record = cpp_session->attention_record();
  ASSERT_EQ(record.rows, info.rows);
  ASSERT_EQ(record.positions, info.positions);
  ASSERT_EQ(record.num_floats(), size_t{2} * 3 * 16 * 16);
  // The written rows, bit for bit (the later ones are arena bytes never written).
  for (size_t m = 0; m < size_t{2} * 3; ++m) {
    const size_t at = m * 16 * 16;
    EXPECT_EQ(memcmp(record.weights + at, w + at, record.rows * 16 * sizeof(float)), 0)
        << "matrix " << m;
  }
  // The arena grows by at least the record's bytes.
  ember_session_options without = o;
  without.record_attention = 0;
  EXPECT_GE(model_.ArenaBytes(&o),
            model_.ArenaBytes(&without) + record.num_floats() * sizeof(float));
}

TEST_F(CApiReportTest, AttentionRefusesBadSelections) {
  struct Case {
    uint32_t first_layer, num_layers, first_head, num_heads, max_positions;
    const char* message;
  };
  const Case cases[] = {
      {5, 0, 0, 0, 0, "layers [5, 5) are outside the model's 5 layers"},
      {3, 3, 0, 0, 0, "layers [3, 6) are outside"},
      {0xFFFFFFFFu, 2, 0, 0, 0, "outside the model's 5 layers"},
      {0, 0, 8, 0, 0, "heads [8, 8) are outside the model's 8 heads"},
      {0, 0, 7, 2, 0, "heads [7, 9) are outside"},
      {0, 0, 0, 0, kContext + 1, "33 positions exceed the session's context of 32"},
  };
  for (const Case& c : cases) {
    ember_session_options o = Selection();
    o.attention_first_layer = c.first_layer;
    o.attention_num_layers = c.num_layers;
    o.attention_first_head = c.first_head;
    o.attention_num_heads = c.num_heads;
    o.attention_max_positions = c.max_positions;
    EXPECT_EQ(model_.ArenaBytes(&o), 0u) << c.message;
    EXPECT_NE(std::string(ember_last_error()).find(c.message), std::string::npos)
        << ember_last_error();
    cpp::Session session;
    EXPECT_EQ(session.Create(model_, &o), EMBER_INVALID_ARGUMENT) << c.message;
    EXPECT_NE(std::string(ember_last_error()).find(c.message), std::string::npos)
        << ember_last_error();
  }
  // The same selection without record_attention is not looked at.
  ember_session_options o = Selection();
  o.attention_first_layer = 99;
  o.record_attention = 0;
  EXPECT_GT(model_.ArenaBytes(&o), 0u) << cpp::LastError();
}

// Rows count from position 0: a session that would start after the model's baked prompt
// is refused, one that ignores it records from 0.
TEST_F(CApiReportTest, AttentionRefusesASessionAfterABakedPrompt) {
  auto model = Model::Open(path_.c_str());
  ASSERT_TRUE(model.ok());
  ModelSpec spec;
  ASSERT_TRUE(tools::SpecFromModel(**model, &spec).ok());
  tools::BakeRequest request;
  request.text = "Once upon a time";
  ASSERT_TRUE(tools::BakeSpec(request, &spec).ok());
  const testing::LoadedModel baked = testing::LoadSpec(spec);
  ASSERT_NE(baked.model, nullptr);
  cpp::Model m;
  ASSERT_EQ(m.FromMemory(baked.bytes.data(), baked.bytes.size()), EMBER_OK)
      << cpp::LastError();
  ember_session_options o = Selection();
  EXPECT_EQ(m.ArenaBytes(&o), 0u);
  EXPECT_NE(std::string(ember_last_error()).find("set ignore_baked_prompt"),
            std::string::npos)
      << ember_last_error();
  cpp::Session refused;
  EXPECT_EQ(refused.Create(m, &o), EMBER_INVALID_ARGUMENT);
  o.ignore_baked_prompt = 1;
  cpp::Session session;
  ASSERT_EQ(session.Create(m, &o), EMBER_OK) << cpp::LastError();
  EXPECT_EQ(ember_session_position(session.get()), 0u);
  const int32_t ids[] = {1, 403, 407};
  ASSERT_EQ(ember_prefill(session.get(), ids, 3), EMBER_OK);
  ember_attention_info info = Info();
  ASSERT_NE(ember_attention(session.get(), &info), nullptr);
  EXPECT_EQ(info.rows, 3u);
}

TEST_F(CApiReportTest, AttentionStructSizes) {
  // A caller built before attention capture: its options end at context_keep, so the
  // session records nothing (whatever lies past its struct).
  std::vector<uint8_t> bytes(sizeof(ember_session_options) + 16, 0);
  ember_session_options* older = reinterpret_cast<ember_session_options*>(bytes.data());
  *older = Selection();
  older->struct_size = offsetof(ember_session_options, context_keep) + sizeof(uint32_t);
  cpp::Session session;
  ASSERT_EQ(session.Create(model_, older), EMBER_OK) << cpp::LastError();
  ember_attention_info info = Info();
  EXPECT_EQ(ember_attention(session.get(), &info), nullptr);
  EXPECT_NE(std::string(ember_last_error()).find("records no attention"),
            std::string::npos);
  EXPECT_EQ(info.rows, 0u);
  EXPECT_EQ(info.num_layers, 0u);

  // An info struct from a newer header, or too small for the first version: refused.
  const ember_session_options o = Selection();
  cpp::Session recording;
  ASSERT_EQ(recording.Create(model_, &o), EMBER_OK) << cpp::LastError();
  info = Info();
  info.struct_size = sizeof(info) + 8;
  EXPECT_EQ(ember_attention(recording.get(), &info), nullptr);
  EXPECT_NE(std::string(ember_last_error()).find("newer ember.h"), std::string::npos);
  info.struct_size = offsetof(ember_attention_info, rows);
  EXPECT_EQ(ember_attention(recording.get(), &info), nullptr);
  EXPECT_NE(std::string(ember_last_error()).find("struct_size"), std::string::npos);
  EXPECT_EQ(ember_attention(recording.get(), nullptr), nullptr);
  info = Info();
  EXPECT_EQ(ember_attention(nullptr, &info), nullptr);

  // The defaults record nothing.
  ember_session_options d;
  ember_session_options_default(&d);
  EXPECT_EQ(d.record_attention, 0);
  EXPECT_EQ(d.attention_max_positions, 0u);
}

}  // namespace
}  // namespace ember
