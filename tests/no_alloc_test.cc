// The no-allocation promise: after a model is loaded and a session created, tokenizing,
// prefill, decode, sampling and detokenizing make zero heap allocations (malloc, calloc,
// realloc, the aligned allocators and every operator new are interposed and counted),
// with penalties, min-p and stop strings on, for f32, f16, q8 and q4 weights with 1 and
// 2 threads, q4_k and q6_k with 1, f32, f16 and q8 KV caches and a context shift
// mid-generation; and planning and creating a session in a caller's arena make none
// either (the C API: its session object alone); nor do embeddings, nor speculative
// decoding, nor rows given as embeddings, nor a vision tower's tile. Chat, tokenizer.json
// and grammars: no_alloc_text_test.cc.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "gtest/gtest.h"
#include "runtime/generate.h"
#include "runtime/model/model.h"
#include "runtime/model/tensor.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "runtime/speculative/speculator.h"
#include "runtime/vision/image_decode_test_data.h"
#include "runtime/vision/image_encoder.h"
#include "runtime/vision/vision_tower.h"
#include "runtime/xnn_backend.h"
#include "testing/alloc_count.h"
#include "testing/testing.h"
#include "tools/convert/dtype_policy.h"

namespace ember {
namespace {

using testing::Append;
using testing::FixedText;

// Loads `spec` as `dtype`, creates a session (pool of `threads`, a `kv_type` cache of 64
// positions that shifts when full), then counts the heap calls of tokenizing, generating
// (prefill, decode, sampling, detokenizing, a context shift) and a second conversation
// after a reset; *text receives what was generated.
uint64_t AllocationsWhileRunning(ModelSpec spec, DType dtype, int threads,
                                 Backend backend, KvType kv_type, FixedText* text) {
  EXPECT_TRUE(tools::ChooseDTypes(dtype, {}, &spec).ok());
  std::vector<uint8_t> bytes;
  EXPECT_TRUE(SerializeModel(spec, &bytes).ok());
  testing::AlignedBytes aligned(bytes);

  // Load: everything may allocate here.
  auto model = Model::FromMemory(aligned.data(), aligned.size());
  EXPECT_TRUE(model.ok()) << model.status().message();
  auto pool = ThreadPool::Create(threads);
  EXPECT_TRUE(model.ok() && pool.ok());
  if (!model.ok() || !pool.ok()) return ~uint64_t{0};
  SessionOptions options;
  options.max_batch = 16;
  options.backend = backend;
  options.kv_type = kv_type;
  // The first conversation outgrows the context: generation shifts it and goes on.
  options.max_context = 64;
  options.context_shift = true;
  options.context_keep = 4;
  auto session = Session::Create(**model, options, pool->get());
  EXPECT_TRUE(session.ok()) << session.status().message();
  if (!session.ok()) return ~uint64_t{0};
  SamplerOptions sampling;  // temperature, top-k, top-p, min-p and penalties all on
  sampling.seed = 7;
  sampling.min_p = 0.02f;
  sampling.repeat_penalty = 1.1f;
  sampling.frequency_penalty = 0.1f;
  sampling.presence_penalty = 0.1f;
  StopStrings stop;
  const std::string_view stop_strings[] = {"qqq", "zz z"};
  EXPECT_TRUE(stop.Set(stop_strings, 2).ok());
  GenerateOptions generate;
  generate.stop_strings = &stop;
  Sampler sampler(sampling, (*model)->config().vocab_size, session->sampler_scratch());

  // Run: nothing may.
  testing::AllocCounterArm();
  const char prompt[] = "Once upon a time, in a quiet town by the sea, lived a cat.";
  const int32_t* ids = nullptr;
  size_t n = 0;
  Status s = session->Tokenize(prompt, sizeof(prompt) - 1, true, &ids, &n);
  GenerateResult result;
  generate.max_new = 40;
  if (s.ok()) s = Generate(*session, sampler, ids, n, generate, &Append, text, &result);
  const size_t shifts = session->shifts();
  const StopReason first_stop = result.stop;
  // A second conversation in the same session.
  if (s.ok()) {
    session->Reset();
    generate.max_new = 20;
    s = Generate(*session, sampler, ids, n, generate, &Append, text, &result);
  }
  const uint64_t allocations = testing::AllocCounterDisarm();
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_GT(text->tokens, 0u);
  // The prompt is about 60 tokens: 40 more overflow 64 positions (unless the text ended).
  if (first_stop != StopReason::kEndOfText) {
    EXPECT_GE(shifts, 1u) << n << " prompt tokens";
  }
  return allocations;
}

class NoAllocTest
    : public ::testing::TestWithParam<std::tuple<DType, int, Backend, KvType>> {};

TEST_P(NoAllocTest, RunMakesNoHeapAllocations) {
#ifdef EMBER_ALLOC_COUNT_OFF
  GTEST_SKIP() << "allocation counter off (a sanitizer build keeps its allocator)";
#endif
  ASSERT_TRUE(testing::AllocCounterActive());
  const DType dtype = std::get<0>(GetParam());
  const int threads = std::get<1>(GetParam());
  const Backend backend = std::get<2>(GetParam());
  const KvType kv_type = std::get<3>(GetParam());
  if (backend == Backend::kXnnpack && !XnnpackBuiltIn()) {
    GTEST_SKIP() << "XNNPACK is not in this build";
  }
  // K-quants need rows of whole super-blocks (256 inputs).
  const bool k_quant = IsKQuant(dtype);
  const ModelSpec spec = testing::TinyModelSpec(k_quant ? 256 : 64, k_quant ? 1 : 2, 4, 2,
                                                k_quant ? 256 : 96, 300, 128, 3);
  FixedText text;
  EXPECT_EQ(AllocationsWhileRunning(spec, dtype, threads, backend, kv_type, &text), 0u)
      << DTypeName(dtype) << ", " << threads << " threads, " << KvTypeName(kv_type)
      << " cache";
}

// The current families' features (sliding layers and their own RoPE tables, YaRN,
// qk-norm, post-norms, scales, soft-capping) allocate nothing either, with every cache
// type (its reads honour the window and the cap) and a shift (each layer's own RoPE).
TEST(NoAllocTest, CurrentFamiliesFeaturesMakeNoHeapAllocations) {
#ifdef EMBER_ALLOC_COUNT_OFF
  GTEST_SKIP() << "allocation counter off (a sanitizer build keeps its allocator)";
#endif
  struct Case {
    DType dtype;
    int threads;
    KvType kv_type;
  };
  for (const Case& c :
       {Case{DType::kF32, 1, KvType::kF32}, Case{DType::kF32, 2, KvType::kF32},
        Case{DType::kQ8, 1, KvType::kF32}, Case{DType::kQ8, 2, KvType::kF32},
        Case{DType::kF32, 1, KvType::kF16}, Case{DType::kQ8, 1, KvType::kQ8}}) {
    FixedText text;
    EXPECT_EQ(AllocationsWhileRunning(testing::FamiliesModelSpec(6, 128), c.dtype,
                                      c.threads, Backend::kHighway, c.kv_type, &text),
              0u)
        << DTypeName(c.dtype) << ", " << c.threads << " threads, "
        << KvTypeName(c.kv_type);
  }
}

// Rows given as embeddings (an image's): a prefill with bidirectional blocks cut into
// steps over a sliding layer's ring, then decoding, at 1 and 2 threads, q8 weights.
TEST(NoAllocTest, EmbeddedRowsMakeNoHeapAllocations) {
#ifdef EMBER_ALLOC_COUNT_OFF
  GTEST_SKIP() << "allocation counter off (a sanitizer build keeps its allocator)";
#endif
  ModelSpec spec = testing::FamiliesModelSpec(6, 96);
  ASSERT_TRUE(tools::ChooseDTypes(DType::kQ8, {}, &spec).ok());
  const testing::LoadedModel m = testing::LoadSpec(spec);
  ASSERT_TRUE(m.model);
  std::vector<int32_t> tokens = testing::SpreadTokens(40);
  for (size_t i = 10; i < 20; ++i) tokens[i] = 1000;
  for (size_t i = 24; i < 32; ++i) tokens[i] = 1000;
  const std::vector<float> rows(18 * m.model->config().d_model, 0.25f);
  EmbeddedRows embedded;
  embedded.marker = 1000;
  embedded.rows = rows.data();
  embedded.count = 18;
  embedded.bidirectional = true;
  for (int threads : {1, 2}) {
    auto pool = ThreadPool::Create(threads);
    ASSERT_TRUE(pool.ok());
    auto session = Session::Create(
        *m.model, testing::FamiliesSessionOptions(96, 12, KvType::kF32, false), pool->get());
    ASSERT_TRUE(session.ok());
    testing::AllocCounterArm();
    Status s = session->PrefillEmbedded(tokens.data(), tokens.size(), embedded);
    for (int32_t t = 3; s.ok() && t < 10; ++t) s = session->Decode(t);
    const uint64_t allocations = testing::AllocCounterDisarm();
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(allocations, 0u) << threads << " threads";
  }
}

// A vision tower's tile (runtime/vision/vision_tower.h), f32 and q8, both connectors, at
// 1 and 2 threads, in the caller's arena.
TEST(NoAllocTest, VisionTowerMakesNoHeapAllocations) {
#ifdef EMBER_ALLOC_COUNT_OFF
  GTEST_SKIP() << "allocation counter off (a sanitizer build keeps its allocator)";
#endif
  for (DType dtype : {DType::kF32, DType::kQ8}) {
    for (ImageConnector connector :
         {ImageConnector::kPixelShuffle, ImageConnector::kAveragePool}) {
      ModelSpec spec = testing::TinyModelSpec();
      testing::AddVisionTower(&spec, connector);
      ASSERT_TRUE(tools::ChooseDTypes(dtype, {}, &spec).ok());
      const testing::LoadedModel m = testing::LoadSpec(spec);
      ASSERT_TRUE(m.model);
      auto plan = PlanVisionTower(*m.model);
      ASSERT_TRUE(plan.ok());
      std::vector<uint8_t> storage(plan->arena_bytes() + kArenaAlignment);
      uint8_t* base = storage.data();
      base += (kArenaAlignment - reinterpret_cast<uintptr_t>(base) % kArenaAlignment) %
              kArenaAlignment;
      const std::vector<float> pixels(3 * 32 * 32, 0.5f);
      std::vector<float> out(4 * m.model->config().d_model);
      for (int threads : {1, 2}) {
        auto pool = ThreadPool::Create(threads);
        ASSERT_TRUE(pool.ok());
        auto tower =
            VisionTower::Create(*m.model, *plan, base, plan->arena_bytes(), pool->get());
        ASSERT_TRUE(tower.ok());
        testing::AllocCounterArm();
        tower->EncodeTile(pixels.data(), out.data());
        tower->EncodeTile(pixels.data(), out.data());
        EXPECT_EQ(testing::AllocCounterDisarm(), 0u)
            << DTypeName(dtype) << ", " << threads << " threads";
        // A whole image: PNG decode, the model's processor, the tower (image_encoder.h).
        ImageEncoderOptions options;
        options.limits.max_width = options.limits.max_height = 64;
        options.limits.max_pixels = 64 * 64;
        options.max_images = 2;
        auto image_plan = PlanImageEncoder(*m.model, options);
        ASSERT_TRUE(image_plan.ok());
        std::vector<uint8_t> image_storage(image_plan->arena_bytes() + kArenaAlignment);
        uint8_t* image_base = image_storage.data();
        image_base += (kArenaAlignment -
                       reinterpret_cast<uintptr_t>(image_base) % kArenaAlignment) %
                      kArenaAlignment;
        auto encoder = ImageEncoder::Create(*m.model, *image_plan, image_base,
                                            image_plan->arena_bytes(), pool->get());
        ASSERT_TRUE(encoder.ok());
        testing::AllocCounterArm();
        const bool first = encoder->AddEncoded(kPngRgba, sizeof(kPngRgba)).ok();
        const bool second = encoder->AddEncoded(kPngRgba, sizeof(kPngRgba)).ok();
        EXPECT_EQ(testing::AllocCounterDisarm(), 0u)
            << "an image, " << DTypeName(dtype) << ", " << threads << " threads";
        EXPECT_TRUE(first && second);
      }
    }
  }
}

// Speculative decoding (runtime/speculative/): a q8 target drafted for by its q4 copy
// and by prompt lookup, sampling with penalties and greedy, through a context shift,
// at 1 and 2 threads: the drafting, the verifying passes and their rollbacks allocate
// nothing in either session.
TEST(NoAllocTest, SpeculativeDecodingMakesNoHeapAllocations) {
#ifdef EMBER_ALLOC_COUNT_OFF
  GTEST_SKIP() << "allocation counter off (a sanitizer build keeps its allocator)";
#endif
  const auto load = [](DType dtype) {
    ModelSpec spec = testing::TinyModelSpec(64, 2, 4, 2, 96, 300, 128, 3);
    EXPECT_TRUE(tools::ChooseDTypes(dtype, {}, &spec).ok());
    return testing::LoadSpec(spec);
  };
  const testing::LoadedModel target = load(DType::kQ8), draft = load(DType::kQ4);
  ASSERT_TRUE(target.model && draft.model);
  for (int threads : {1, 2}) {
    auto pool = ThreadPool::Create(threads);
    ASSERT_TRUE(pool.ok());
    SessionOptions options;
    options.max_context = 64;
    options.context_shift = true;
    options.context_keep = 4;
    options.draft_max = 6;
    auto session = Session::Create(*target.model, options, pool->get());
    auto draft_session = Session::Create(*draft.model, options, pool->get());
    ASSERT_TRUE(session.ok() && draft_session.ok());
    auto speculator = Speculator::Create(&*session);
    ASSERT_TRUE(speculator.ok());
    ASSERT_TRUE(speculator->SetLookup(3).ok());
    ASSERT_TRUE(speculator->SetDraft(&*draft_session).ok());
    SamplerOptions sampling;
    sampling.repeat_penalty = 1.1f;
    sampling.min_p = 0.02f;
    Sampler sampler(sampling, 300, session->sampler_scratch());
    SamplerOptions greedy_options;
    greedy_options.temperature = 0.0f;
    Sampler greedy(greedy_options, 300, session->sampler_scratch());
    GenerateOptions generate;
    generate.speculator = &*speculator;
    generate.max_new = 90;  // past the context: a shift
    const std::vector<int32_t> prompt = testing::SpreadTokens(20, 7);
    FixedText text;
    GenerateResult result;
    testing::AllocCounterArm();
    Status s = Generate(*session, sampler, prompt.data(), prompt.size(), generate,
                        &Append, &text, &result);
    if (s.ok()) {
      session->Reset();
      s = Generate(*session, greedy, prompt.data(), prompt.size(), generate, &Append,
                   &text, &result);
    }
    const uint64_t allocations = testing::AllocCounterDisarm();
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(allocations, 0u) << threads << " threads";
    EXPECT_GT(speculator->stats().verified, 0u);
    EXPECT_GE(session->shifts() + (result.stop == StopReason::kEndOfText), 1u);
  }
}

// Embeddings (a bidirectional encoder with segment embeddings, a norm of its embeddings
// and mean pooling, q8 weights): embedding texts one by one and as a batch through the
// C API, and token ids with their types, allocate nothing, at 1 and 2 threads.
TEST(NoAllocTest, EmbeddingsMakeNoHeapAllocations) {
#ifdef EMBER_ALLOC_COUNT_OFF
  GTEST_SKIP() << "allocation counter off (a sanitizer build keeps its allocator)";
#endif
  ModelSpec spec = testing::TinyModelSpec();
  ModelConfig& c = spec.config;
  c.mask = AttentionMask::kBidirectional;
  c.pooling = Pooling::kMean;
  c.normalize = true;
  c.token_types = 2;
  c.embedding_norm = true;
  spec.tensors.push_back({"token_types.weight", {2, c.d_model},
                          std::vector<float>(2 * c.d_model, 0.25f)});
  spec.tensors.push_back({"token_embd_norm.weight", {c.d_model},
                          std::vector<float>(c.d_model, 1.0f)});
  ASSERT_TRUE(tools::ChooseDTypes(DType::kQ8, {}, &spec).ok());
  std::vector<uint8_t> raw;
  ASSERT_TRUE(SerializeModel(spec, &raw).ok());
  const testing::AlignedBytes bytes(raw);
  ember_model* model = nullptr;
  ASSERT_EQ(ember_model_from_memory(bytes.data(), bytes.size(), &model), EMBER_OK)
      << ember_last_error();
  for (uint32_t threads : {1u, 2u}) {
    ember_threadpool_options pool_options;
    ember_threadpool_options_default(&pool_options);
    pool_options.num_threads = threads;
    ember_threadpool* pool = nullptr;
    ASSERT_EQ(ember_threadpool_create_with_options(&pool_options, &pool), EMBER_OK);
    ember_session* session = nullptr;
    ASSERT_EQ(ember_session_create(model, nullptr, pool, nullptr, 0, &session), EMBER_OK)
        << ember_last_error();
    const char* texts[] = {"The first text.", "a second, longer text to embed here",
                           "x"};
    const size_t lengths[] = {strlen(texts[0]), strlen(texts[1]), strlen(texts[2])};
    const int32_t ids[] = {4, 50, 61, 7, 9};
    const uint8_t types[] = {0, 0, 0, 1, 1};
    std::vector<float> out(3 * c.d_model);
    testing::AllocCounterArm();
    ember_status s = ember_embed_batch(session, texts, lengths, 3, nullptr, out.data(),
                                       out.size());
    if (s == EMBER_OK) {
      s = ember_embed(session, texts[1], lengths[1], nullptr, out.data(), c.d_model);
    }
    if (s == EMBER_OK) {
      s = ember_embed_tokens(session, ids, types, 5, nullptr, out.data(), c.d_model);
    }
    const uint64_t allocations = testing::AllocCounterDisarm();
    EXPECT_EQ(s, EMBER_OK) << ember_last_error();
    EXPECT_EQ(allocations, 0u) << threads << " threads";
    ember_session_free(session);
    ember_threadpool_free(pool);
  }
  ember_model_free(model);
}

// Planning and creating a session in the caller's memory: no heap call at all from C++,
// and only the session object from the C API (its promise in ember.h).
TEST(NoAllocTest, SessionCreationWithACallerArena) {
#ifdef EMBER_ALLOC_COUNT_OFF
  GTEST_SKIP() << "allocation counter off (a sanitizer build keeps its allocator)";
#endif
  ModelSpec spec = testing::TinyModelSpec(64, 2, 4, 2, 96, 300, 128, 3);
  ASSERT_TRUE(tools::ChooseDTypes(DType::kQ8, {}, &spec).ok());
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(SerializeModel(spec, &bytes).ok());
  testing::AlignedBytes aligned(bytes);
  auto model = Model::FromMemory(aligned.data(), aligned.size());
  ASSERT_TRUE(model.ok()) << model.status().message();
  SessionOptions options;
  options.max_batch = 16;
  options.record_attention.enabled = true;
  const size_t arena_bytes = RequiredArenaBytes(**model, options);
  ASSERT_GT(arena_bytes, 0u);
  std::vector<uint8_t> arena(arena_bytes);
  ember_model* c_model = nullptr;
  ASSERT_EQ(ember_model_from_memory(aligned.data(), aligned.size(), &c_model), EMBER_OK);
  ember_session_options c_options;
  ember_session_options_default(&c_options);

  testing::AllocCounterArm();
  Result<SessionPlan> plan = PlanSession(**model, options);
  const size_t required = RequiredArenaBytes(**model, options);
  const uint64_t planning = testing::AllocCounterDisarm();
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(required, arena_bytes);
  EXPECT_EQ(planning, 0u) << "planning allocated";

  testing::AllocCounterArm();
  {
    Result<Session> session =
        Session::Create(**model, options, nullptr, arena.data(), arena.size());
    ASSERT_TRUE(session.ok()) << session.status().message();
    const int32_t tokens[] = {1, 5, 7};
    ASSERT_TRUE(session->Prefill(tokens, 3).ok());
  }
  const uint64_t creating = testing::AllocCounterDisarm();
  EXPECT_EQ(creating, 0u) << "Session::Create with a caller arena allocated";

  // The XNNPACK backend: once XNNPACK is initialised (the first plan in the process),
  // its operators and their packed weights are created in the caller's arena too.
  if (XnnpackBuiltIn()) {
    ModelSpec f32_spec = testing::TinyModelSpec(64, 2, 4, 2, 96, 300, 128, 3);
    std::vector<uint8_t> f32_bytes;
    ASSERT_TRUE(SerializeModel(f32_spec, &f32_bytes).ok());
    testing::AlignedBytes f32_aligned(f32_bytes);
    auto f32_model = Model::FromMemory(f32_aligned.data(), f32_aligned.size());
    ASSERT_TRUE(f32_model.ok()) << f32_model.status().message();
    SessionOptions xnn = options;
    xnn.backend = Backend::kXnnpack;
    std::vector<uint8_t> xnn_arena(RequiredArenaBytes(**f32_model, xnn));
    ASSERT_GT(xnn_arena.size(), 0u);
    testing::AllocCounterArm();
    {
      Result<Session> session =
          Session::Create(**f32_model, xnn, nullptr, xnn_arena.data(), xnn_arena.size());
      ASSERT_TRUE(session.ok()) << session.status().message();
      const int32_t tokens[] = {1, 5, 7};
      ASSERT_TRUE(session->Prefill(tokens, 3).ok());
    }
    EXPECT_EQ(testing::AllocCounterDisarm(), 0u) << "XNNPACK session creation allocated";
  }

  std::vector<uint8_t> c_arena(ember_arena_bytes(c_model, &c_options));
  ember_session* c_session = nullptr;
  testing::AllocCounterArm();
  const size_t c_bytes = ember_arena_bytes(c_model, &c_options);
  const ember_status status = ember_session_create(
      c_model, &c_options, nullptr, c_arena.data(), c_arena.size(), &c_session);
  const uint64_t c_creating = testing::AllocCounterDisarm();
  EXPECT_EQ(c_bytes, c_arena.size());
  ASSERT_EQ(status, EMBER_OK) << ember_last_error();
  EXPECT_EQ(c_creating, 1u) << "ember_session_create: the session object only";
  ember_session_free(c_session);
  ember_model_free(c_model);
}

TEST(NoAllocTest, TheCounterCounts) {
#ifdef EMBER_ALLOC_COUNT_OFF
  GTEST_SKIP() << "allocation counter off (a sanitizer build keeps its allocator)";
#endif
  // The zero above means something only if an allocation here is seen.
  testing::AllocCounterArm();
  std::unique_ptr<std::string> s(new std::string(100, 'x'));
  const uint64_t count = testing::AllocCounterDisarm();
  EXPECT_GE(count, 1u);
}

std::string ParamName(
    const ::testing::TestParamInfo<std::tuple<DType, int, Backend, KvType>>& info) {
  return std::string(DTypeName(std::get<0>(info.param))) + "_" +
         std::to_string(std::get<1>(info.param)) + "threads_kv_" +
         KvTypeName(std::get<3>(info.param));
}

INSTANTIATE_TEST_SUITE_P(DTypesAndThreads, NoAllocTest,
                         ::testing::Combine(::testing::Values(DType::kF32, DType::kF16,
                                                              DType::kQ8, DType::kQ4),
                                            ::testing::Values(1, 2),
                                            ::testing::Values(Backend::kHighway),
                                            ::testing::Values(KvType::kF32)),
                         ParamName);

// The f16 and q8 KV caches: rows converted as they are written, q8 queries quantized
// in the arena, and their context shift.
INSTANTIATE_TEST_SUITE_P(KvTypes, NoAllocTest,
                         ::testing::Combine(::testing::Values(DType::kQ8),
                                            ::testing::Values(1, 2),
                                            ::testing::Values(Backend::kHighway),
                                            ::testing::Values(KvType::kF16, KvType::kQ8)),
                         ParamName);

// The K-quants' kernels and their activation half sums: one thread (the pool's promise
// is the same for every type, and these models are larger, for emulated CPUs).
INSTANTIATE_TEST_SUITE_P(KQuants, NoAllocTest,
                         ::testing::Combine(::testing::Values(DType::kQ4K, DType::kQ6K),
                                            ::testing::Values(1),
                                            ::testing::Values(Backend::kHighway),
                                            ::testing::Values(KvType::kF32)),
                         ParamName);

// The XNNPACK backend (every matrix f32, on XNNPACK): its operators are created in the
// arena, and running them allocates nothing.
INSTANTIATE_TEST_SUITE_P(Xnnpack, NoAllocTest,
                         ::testing::Combine(::testing::Values(DType::kF32),
                                            ::testing::Values(1, 2),
                                            ::testing::Values(Backend::kXnnpack),
                                            ::testing::Values(KvType::kF32)),
                         ParamName);

}  // namespace
}  // namespace ember
