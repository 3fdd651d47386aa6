// `ember bench`: llama-bench's tests (pp N: prefill of an N-token prompt in one batch;
// tg N: N decode steps) per model and thread count, with what llama-bench does not
// measure: time to first token, load time, memory, heap allocations, and decode's
// bandwidth against the machine's measured read bandwidth (the roofline %).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/embed/embed.h"
#include "runtime/ember.h"
#include "runtime/model/atomic_file.h"
#include "runtime/model/model.h"
#include "runtime/profile.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "runtime/speculative/speculator.h"
#include "testing/alloc_count.h"
#include "tools/bench/bandwidth_probe.h"
#include "tools/bench/bench_history.h"
#include "tools/bench/bench_report.h"
#include "tools/bench/host_info.h"
#include "tools/cli/args.h"
#include "tools/cli/bench_grammar.h"
#include "tools/cli/bench_model.h"
#include "tools/cli/bench_options.h"
#include "tools/cli/bench_progress.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/commands.h"
#include "tools/cli/image_flags.h"
#include "tools/cli/model_summary.h"
#include "tools/cli/speculative_flags.h"
#include "tools/util/files.h"
#include "tools/util/parse.h"

#ifndef EMBER_BUILD_COMMIT
#define EMBER_BUILD_COMMIT "unknown"
#endif

namespace ember::tools {
namespace {

using Clock = std::chrono::steady_clock;

// One loaded model at one thread count: pool, session (prefill in one batch of the
// longest prompt) and a greedy sampler.
struct Bench {
  const BenchOptions* options;
  const Model* model;
  std::unique_ptr<ThreadPool> pool;
  std::optional<Session> session;
  std::unique_ptr<Sampler> sampler;
  std::vector<int32_t> prompt;  // random tokens, as llama-bench prompts
  ForwardProfile profile;
  uint64_t sampling_ns = 0;
  Progress* progress;
  // --embed: the texts' vectors, their ids (slices of the prompt) and lengths (sized
  // before the tests).
  std::vector<float> embedding;
  std::vector<const int32_t*> text_ids;
  std::vector<size_t> text_lengths;
  bool counting = true;  // testing::AllocCounterActive(): heap_allocs is -1 when not
  BenchGrammar grammar;  // --grammar, --json-schema, --json
  // --draft, --lookup: the draft model's session and the speculator, used by the tg
  // tests while `speculate` is set.
  std::unique_ptr<Model> draft_model;
  std::optional<Session> draft_session;
  std::optional<Speculator> speculator;
  bool speculate = false;
  // The last plain tg run's tokens from BOS on, which --draft-oracle drafts.
  std::vector<int32_t> plain_tokens;
  // --image: the encoder with the images' rows, their prompt's tokens, and the pp tests'
  // input (that prompt, then the test's random tokens; sized before the tests).
  FlagImages images;
  std::vector<int32_t> image_prompt, pp_tokens;
};

// --draft-oracle: the plain run's next tokens, each kept when a hash of its position
// falls below the acceptance rate asked for, else replaced by the next id.
size_t OracleDraft(void* user, const int32_t*, size_t n_history, int32_t, size_t max,
                   int32_t* out) {
  const Bench& b = *static_cast<const Bench*>(user);
  const uint32_t vocab = b.model->config().vocab_size;
  size_t n = 0;
  for (size_t p = n_history + 1; n < max && p < b.plain_tokens.size(); ++p, ++n) {
    uint64_t h = (p + 1) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    const double u = static_cast<double>(h >> 11) / 9007199254740992.0;
    const int32_t t = b.plain_tokens[p];
    out[n] = u < b.options->draft_oracle ? t : static_cast<int32_t>((t + 1) % vocab);
  }
  return n;
}

// "lookup 3", "draft", "draft + lookup 3".
std::string SpeculativeLabel(const BenchOptions& o) {
  char oracle[32];
  snprintf(oracle, sizeof(oracle), "oracle %.2f", o.draft_oracle);
  std::string label = o.draft_oracle >= 0 ? oracle : o.draft_path.empty() ? "" : "draft";
  if (o.lookup > 0) {
    label += (label.empty() ? "lookup " : " + lookup ") + std::to_string(o.lookup);
  }
  return label;
}

// The draft model's session (the target's context and KV cache type) and the
// speculator over the bench's session.
Status StartBenchSpeculation(const BenchOptions& o, const SessionOptions& target,
                             Bench* b) {
  auto speculator = Speculator::Create(&*b->session);
  if (!speculator.ok()) return speculator.status();
  b->speculator.emplace(std::move(*speculator));
  EMBER_RETURN_IF_ERROR(b->speculator->SetLookup(o.lookup));
  EMBER_RETURN_IF_ERROR(b->speculator->SetDraftMin(o.draft_min));
  if (o.draft_oracle >= 0) b->speculator->SetDrafter(&OracleDraft, b);
  if (o.draft_path.empty()) return Status::Ok();
  auto model = Model::Open(o.draft_path.c_str());
  if (!model.ok()) return model.status();
  b->draft_model = std::move(*model);
  EMBER_RETURN_IF_ERROR(OpenDraftSession(*b->draft_model, *b->session, target,
                                         b->pool.get(), &b->draft_session));
  return b->speculator->SetDraft(&*b->draft_session);
}

// "MODEL, N threads, tg64 +lookup 3: 812.4 t/s against 601.2 decoding plainly in the
// same run (1.35x); ..." (medians).
std::string SpeculativeSummary(const BenchResult& fast, const BenchResult& plain,
                               const SpeculativeStats& s) {
  const auto median_ts = [](const BenchResult& r) {
    std::vector<double> ts = r.samples_ts();
    std::sort(ts.begin(), ts.end());
    return ts.empty() ? 0.0 : ts[ts.size() / 2];
  };
  const double f = median_ts(fast), p = median_ts(plain);
  char line[512];
  snprintf(
      line, sizeof(line),
      "%s, %d thread%s, %s: %.1f t/s against %.1f decoding plainly in the same run "
      "(%.2fx, medians); %llu of %llu drafted tokens accepted (%.1f %%), %.2f tokens "
      "a pass of the model, %llu draft model passes; heap allocations %lld\n",
      fast.model_filename.c_str(), fast.n_threads, fast.n_threads == 1 ? "" : "s",
      fast.test().c_str(), f, p, p > 0 ? f / p : 0.0,
      static_cast<unsigned long long>(s.accepted),
      static_cast<unsigned long long>(s.drafted),
      s.drafted ? 100.0 * double(s.accepted) / double(s.drafted) : 0.0,
      s.rounds ? double(s.rounds + s.accepted) / double(s.rounds) : 0.0,
      static_cast<unsigned long long>(s.draft_passes),
      static_cast<long long>(fast.heap_allocs));
  return line;
}

// Samples the next token, timing it when profiling.
Status SampleNext(Bench& b, int32_t* next) {
  if (b.grammar.active()) return b.grammar.Sample(*b.sampler, b.session->logits(), next);
  if (!b.options->profile) return b.sampler->Sample(b.session->logits(), next);
  const Clock::time_point start = Clock::now();
  const Status s = b.sampler->Sample(b.session->logits(), next);
  b.sampling_ns += ElapsedNs(start);
  return s;
}

// One repetition of pp n_prompt (timed: the prefill) or tg n_gen (timed: n_gen decode
// steps, each sampling its token), after `depth` prompt tokens prefilled untimed (as
// one batch, then in steps of max_batch). *ttft_ns: until the first token is sampled.
Status RunOnce(Bench& b, int depth, int n_prompt, int n_gen, uint64_t* ns,
               uint64_t* ttft_ns) {
  Session& s = *b.session;
  s.Reset();
  if (depth > 0) {
    ForwardProfile* profile = b.options->profile ? &b.profile : nullptr;
    s.set_profile(nullptr);  // the fill is not part of the test
    EMBER_RETURN_IF_ERROR(s.Prefill(b.prompt.data(), depth));
    s.set_profile(profile);
  }
  const Clock::time_point start = Clock::now();
  if (n_prompt > 0 && b.options->embed_texts > 0) {
    // Texts of n_prompt tokens, each its own slice of the random prompt, packed as
    // `ember embed` packs them.
    for (size_t i = 0; i < b.text_ids.size(); ++i) {
      b.text_ids[i] = b.prompt.data() + i * n_prompt;
      b.text_lengths[i] = static_cast<size_t>(n_prompt);
    }
    size_t done = 0;
    EMBER_RETURN_IF_ERROR(
        EmbedTokensBatch(s, b.text_ids.data(), b.text_lengths.data(), b.text_ids.size(),
                         EmbedOptions{}, b.embedding.data(), b.embedding.size(), &done));
    *ns = *ttft_ns = ElapsedNs(start);  // a batch's vectors come together
    return Status::Ok();
  }
  if (n_prompt > 0 && !b.image_prompt.empty()) {
    // The images' prompt, then the test's tokens: n_prompt counts both.
    const size_t own = b.image_prompt.size();
    std::copy(b.prompt.begin() + depth, b.prompt.begin() + depth + (n_prompt - own),
              b.pp_tokens.begin() + own);
    EMBER_RETURN_IF_ERROR(
        s.PrefillEmbedded(b.pp_tokens.data(), n_prompt, b.images.encoder->embedded()));
    *ns = ElapsedNs(start);
    int32_t next;
    EMBER_RETURN_IF_ERROR(b.sampler->Sample(s.logits(), &next));
    *ttft_ns = ElapsedNs(start);
    return Status::Ok();
  }
  if (n_prompt > 0) {
    EMBER_RETURN_IF_ERROR(s.Prefill(b.prompt.data() + depth, n_prompt));
    *ns = ElapsedNs(start);
    int32_t next;  // outside the profile: prefill has no sampling
    EMBER_RETURN_IF_ERROR(b.sampler->Sample(s.logits(), &next));
    *ttft_ns = ElapsedNs(start);
    return Status::Ok();
  }
  int32_t token = b.model->tokenizer().bos_id() >= 0 ? b.model->tokenizer().bos_id() : 0;
  if (b.speculate) {
    // The same n_gen tokens, several a pass where the drafts are accepted: the pass over
    // `token` and a sample, then speculative rounds (stop ids do not end a test).
    EMBER_RETURN_IF_ERROR(s.Decode(token));
    EMBER_RETURN_IF_ERROR(
        b.sampler->Sample(s.logits(), s.tokens(), s.position(), &token));
    *ttft_ns = ElapsedNs(start);
    int32_t out[kMaxDraftTokens + 1];
    for (int done = 1; done < n_gen;) {
      size_t max_draft = static_cast<size_t>(n_gen - done - 1);
      max_draft = std::min(max_draft, s.max_context() - s.position() - 1);
      size_t n = 0;
      EMBER_RETURN_IF_ERROR(b.speculator->Round(*b.sampler, token, max_draft, out, &n));
      done += static_cast<int>(n);
      token = out[n - 1];
    }
    *ns = ElapsedNs(start);
    return Status::Ok();
  }
  if (b.grammar.active()) EMBER_RETURN_IF_ERROR(b.grammar.Restart(token));
  const bool record = b.options->draft_oracle >= 0;  // what --draft-oracle drafts
  if (record) b.plain_tokens.assign(1, token);
  for (int i = 0; i < n_gen; ++i) {
    EMBER_RETURN_IF_ERROR(s.Decode(token));
    EMBER_RETURN_IF_ERROR(SampleNext(b, &token));
    if (i == 0) *ttft_ns = ElapsedNs(start);
    if (record && b.plain_tokens.size() <= static_cast<size_t>(n_gen))
      b.plain_tokens.push_back(token);
  }
  *ns = ElapsedNs(start);
  return Status::Ok();
}

ProfileShares Shares(const ForwardProfile& p, uint64_t sampling_ns) {
  ForwardProfile profile = p;
  const double total = static_cast<double>(profile[KernelKind::kPass] + sampling_ns);
  ProfileShares shares;
  if (total <= 0) return shares;
  auto pct = [&](uint64_t ns) { return 100.0 * static_cast<double>(ns) / total; };
  shares.matmul = pct(profile[KernelKind::kMatMul]);
  shares.attention = pct(profile[KernelKind::kAttention]);
  shares.norms = pct(profile[KernelKind::kNorm]);
  shares.rope = pct(profile[KernelKind::kRope]);
  shares.activations = pct(profile[KernelKind::kActivation]);
  shares.sampling = pct(sampling_ns);
  shares.other = std::max(0.0, 100.0 - shares.matmul - shares.attention - shares.norms -
                                   shares.rope - shares.activations - shares.sampling);
  shares.parallel = pct(profile.region_ns);
  if (profile.region_thread_ns > 0) {
    shares.threads_busy = 100.0 * static_cast<double>(profile.tile_ns) /
                          static_cast<double>(profile.region_thread_ns);
  }
  return shares;
}

// A test: a warm-up (one prefill, or one decode step), then the timed repetitions.
Status RunTest(Bench& b, int depth, int n_prompt, int n_gen, BenchResult* r) {
  const BenchOptions& o = *b.options;
  r->n_texts = n_prompt > 0 ? o.embed_texts : 0;
  r->n_prompt = r->n_texts > 0 ? r->n_texts * n_prompt : n_prompt;
  r->n_gen = n_gen;
  r->n_depth = depth;
  r->test_time = UtcNow();
  // The read bandwidth right before and right after the test, with its threads (a shared
  // machine's bandwidth drifts over minutes): the roofline is the best of both. Its
  // buffer is freed before the peak RSS is reset.
  b.progress->Show("%s, %d thread%s: bandwidth probe", r->model_filename.c_str(),
                   r->n_threads, r->n_threads == 1 ? "" : "s");
  const auto probe_now = [&](RooflineProbe* p) {
    return ProbeRoofline(o.probe_bytes, b.model->file_data(), b.model->file_bytes(),
                         "file", b.pool.get(), 3, p);
  };
  RooflineProbe probe, after;
  EMBER_RETURN_IF_ERROR(probe_now(&probe));
  ResetPeakRss();
  b.progress->Show("%s, %d thread%s: %s warm-up", r->model_filename.c_str(), r->n_threads,
                   r->n_threads == 1 ? "" : "s", r->test().c_str());
  uint64_t ns, ttft_ns;
  b.grammar.ClearTimes();
  EMBER_RETURN_IF_ERROR(RunOnce(b, depth, n_prompt, n_gen > 0 ? 1 : 0, &ns, &ttft_ns));
  b.profile.Reset();
  b.sampling_ns = 0;
  b.session->set_profile(o.profile ? &b.profile : nullptr);
  double ttft_sum = 0;
  for (int rep = 0; rep < o.repetitions; ++rep) {
    b.progress->Show("%s, %d thread%s: %s repetition %d of %d", r->model_filename.c_str(),
                     r->n_threads, r->n_threads == 1 ? "" : "s", r->test().c_str(),
                     rep + 1, o.repetitions);
    testing::AllocCounterArm();
    const Status status = RunOnce(b, depth, n_prompt, n_gen, &ns, &ttft_ns);
    const uint64_t allocations = testing::AllocCounterDisarm();
    r->heap_allocs = b.counting ? r->heap_allocs + static_cast<int64_t>(allocations) : -1;
    EMBER_RETURN_IF_ERROR(status);
    r->samples_ns.push_back(ns);
    ttft_sum += static_cast<double>(ttft_ns);
  }
  b.session->set_profile(nullptr);
  if (b.grammar.active() && n_gen > 0) r->summary = b.grammar.Summary(*r);
  if (r->n_texts > 0) {
    std::vector<uint64_t> sorted = r->samples_ns;
    std::sort(sorted.begin(), sorted.end());
    const double median_s = static_cast<double>(sorted[sorted.size() / 2]) / 1e9;
    char line[320];
    snprintf(line, sizeof(line),
             "%s, %d thread%s, %s: %.1f texts/s, %.0f tokens/s (median of %zu); heap "
             "allocations %lld\n",
             r->model_filename.c_str(), r->n_threads, r->n_threads == 1 ? "" : "s",
             r->test().c_str(), r->n_texts / median_s, r->n_prompt / median_s,
             sorted.size(), static_cast<long long>(r->heap_allocs));
    r->summary = line;
  }
  r->ttft_ns = ttft_sum / o.repetitions;
  r->peak_rss_bytes = PeakRssBytes();
  EMBER_RETURN_IF_ERROR(probe_now(&after));
  probe.Merge(after);
  r->measured_gbps = probe.buffer_gbps;
  r->weights_read_gbps = probe.memory_gbps;
  r->probe_bytes = probe.buffer_bytes;
  r->roofline_read = probe.best;
  if (o.profile) {
    r->has_profile = true;
    r->profile = Shares(b.profile, b.sampling_ns);
  }
  return Status::Ok();
}

// --image: the images encoded once (planning the encoder's arena for their sizes), then
// -r times timed; their prompt's tokens (no BOS, as the random prompts) into
// b->image_prompt, and a line of the encode times for after the results.
Status BenchImages(const BenchOptions& o, const std::string& path, const std::string& isa,
                   int threads, Bench* b, std::string* summary) {
  const std::string file = FileName(path);
  const char* name = file.c_str();
  b->progress->Show("%s, %d thread%s: image warm-up", name, threads,
                    threads == 1 ? "" : "s");
  EMBER_RETURN_IF_ERROR(EncodeImageFiles(o.images, *b->model, b->pool.get(),
                                         isa.empty() ? nullptr : isa.c_str(),
                                         &b->images));
  std::vector<double> ms;
  int64_t allocations = 0;
  for (int rep = 0; rep < o.repetitions; ++rep) {
    b->progress->Show("%s, %d thread%s: image encode %d of %d", name, threads,
                      threads == 1 ? "" : "s", rep + 1, o.repetitions);
    testing::AllocCounterArm();
    const Status status = ReencodeImages(&b->images);
    allocations += static_cast<int64_t>(testing::AllocCounterDisarm());
    EMBER_RETURN_IF_ERROR(status);
    ms.push_back(b->images.encode_seconds * 1e3);
  }
  std::sort(ms.begin(), ms.end());
  EMBER_RETURN_IF_ERROR(
      EncodeImagePrompt(*b->model, "", b->images, false, &b->image_prompt));
  size_t tiles = 0;
  for (const EncodedImage& e : b->images.encoded)
    tiles += static_cast<size_t>(e.grid.tiles);
  const double median = ms[ms.size() / 2];
  char line[512];
  snprintf(line, sizeof(line),
           "%s, %d thread%s, %zu image%s: %zu tile%s, %zu rows (a prompt of %zu tokens) "
           "encoded in %.1f ms (median of %zu, %.1f to %.1f; %.1f ms a tile); arena "
           "%.1f MiB; heap allocations %lld\n",
           name, threads, threads == 1 ? "" : "s", o.images.size(),
           o.images.size() == 1 ? "" : "s", tiles, tiles == 1 ? "" : "s",
           b->images.encoder->row_count(), b->image_prompt.size(), median, ms.size(),
           ms.front(), ms.back(), tiles ? median / static_cast<double>(tiles) : 0.0,
           static_cast<double>(b->images.plan.arena_bytes()) / (1 << 20),
           static_cast<long long>(b->counting ? allocations : -1));
  *summary = line;
  return Status::Ok();
}

// Every test of one model on one backend, ISA tier and KV type at one thread count,
// appended to *results.
Status BenchModel(const BenchOptions& o, const std::string& path, Backend backend,
                  const std::string& isa, KvType kv_type, int threads, Progress* progress,
                  std::vector<BenchResult>* results) {
  const int max_prompt =
      o.prompts.empty()
          ? 0
          : static_cast<int>(*std::max_element(o.prompts.begin(), o.prompts.end()));
  const int max_gen =
      o.gens.empty() ? 0
                     : static_cast<int>(*std::max_element(o.gens.begin(), o.gens.end()));
  ResetPeakRss();
  const Clock::time_point load_start = Clock::now();
  auto model = Model::Open(path.c_str());
  if (!model.ok()) return model.status();
  const ModelConfig& c = (*model)->config();
  const int max_depth =
      static_cast<int>(*std::max_element(o.depths.begin(), o.depths.end()));
  const int context = std::max(max_prompt, max_gen) + max_depth;
  if (o.embed_texts > 0 && !c.embeds()) {
    return InvalidArgument("--embed: %s is not an embedding model (no pooling)",
                           path.c_str());
  }
  if (static_cast<uint32_t>(context) > c.max_context) {
    return InvalidArgument(
        "%s: a test of %d tokens at depth %d needs a context of %d; the model holds %u",
        path.c_str(), std::max(max_prompt, max_gen), max_depth, context, c.max_context);
  }
  Bench b;
  b.options = &o;
  b.model = model->get();
  b.progress = progress;
  b.counting = testing::AllocCounterActive();
  ThreadPoolOptions pool_options;
  pool_options.adapt_to_contention = !o.fixed_threads;
  auto pool = ThreadPool::Create(threads, pool_options);
  if (!pool.ok()) return pool.status();
  b.pool = std::move(*pool);
  std::string image_summary;
  if (!o.images.empty()) {
    EMBER_RETURN_IF_ERROR(BenchImages(o, path, isa, threads, &b, &image_summary));
  }
  const int image_tokens = static_cast<int>(b.image_prompt.size());
  if (context + image_tokens > static_cast<int>(c.max_context)) {
    return InvalidArgument(
        "%s: the images' prompt of %d tokens and the tests need a "
        "context of %d; the model holds %u",
        path.c_str(), image_tokens, context + image_tokens, c.max_context);
  }
  SessionOptions session_options;
  session_options.backend = backend;
  session_options.kv_type = kv_type;
  session_options.max_context = static_cast<uint32_t>(context + image_tokens);
  // The longest prompt as one batch; a depth fills the cache in batches of up to 256.
  session_options.max_batch = static_cast<uint32_t>(
      std::max({max_prompt + image_tokens, std::min(max_depth, 256), 1}));
  // --embed: texts packed into steps of up to kPackedStepTokens, as `ember embed` packs.
  if (o.embed_texts > 0) {
    const int step = std::max(max_prompt, std::min(max_prompt * o.embed_texts,
                                                   static_cast<int>(kPackedStepTokens)));
    session_options.max_context =
        std::min(c.max_context, static_cast<uint32_t>(std::max(context, step)));
    session_options.max_batch =
        std::max(session_options.max_batch,
                 std::min(session_options.max_context, static_cast<uint32_t>(step)));
  }
  session_options.baked_prompt = false;  // from position 0, whatever the file baked
  session_options.draft_max = o.draft_max;
  if (!isa.empty()) session_options.isa = isa.c_str();
  if (!o.grammar.empty()) {  // built first: the session plans exactly its bytes
    EMBER_RETURN_IF_ERROR(b.grammar.Build(o.grammar, o.grammar_name, (*model)->tokenizer()));
    session_options.grammar_bytes = b.grammar.bytes();
  }
  auto session = Session::Create(**model, session_options, b.pool.get());
  if (!session.ok()) return session.status();
  b.session.emplace(std::move(*session));
  const uint64_t load_ns = ElapsedNs(load_start) - b.grammar.build_ns();  // the model's
  SamplerOptions greedy;
  greedy.temperature = 0;
  b.sampler.reset(new Sampler(greedy, c.vocab_size, b.session->sampler_scratch()));
  b.plain_tokens.reserve(static_cast<size_t>(max_gen) + 1);  // recorded while timed
  if (o.draft_max > 0)
    EMBER_RETURN_IF_ERROR(StartBenchSpeculation(o, session_options, &b));
  if (b.grammar.active()) {
    int64_t steps = 1;
    for (const int64_t n : o.gens) steps = std::max(steps, n);
    EMBER_RETURN_IF_ERROR(b.grammar.Place(
        *b.session, static_cast<size_t>(steps) * (o.repetitions + 1) + 1));
  }
  // Random prompt tokens past the special ones (llama-bench prompts random tokens too).
  uint64_t state = 0x2545F4914F6CDD1Dull;
  const int texts = std::max(o.embed_texts, 1);
  b.embedding.assign(EmbeddingDims(c) * texts, 0.0f);
  b.text_ids.assign(static_cast<size_t>(o.embed_texts), nullptr);
  b.text_lengths.assign(static_cast<size_t>(o.embed_texts), 0);
  for (int i = 0; i < max_depth + max_prompt * texts; ++i) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    const uint32_t first = c.vocab_size > 3 ? 3 : 0;
    b.prompt.push_back(static_cast<int32_t>(first + state % (c.vocab_size - first)));
  }

  BenchResult base;
  base.build_commit = EMBER_BUILD_COMMIT;
  base.cpu_info = CpuInfo();
  base.backends = backend == Backend::kXnnpack ? "XNNPACK" : "CPU";
  base.model_filename = FileName(path);
  base.model_type = ModelType(**model);
  base.model_size = (*model)->file_bytes();
  base.model_n_params = (*model)->parameter_count();
  base.n_batch = static_cast<int>(session_options.max_batch);
  base.n_threads = threads;
  base.type_kv = KvTypeName(kv_type);
  base.dtype_mix = DTypeMix(**model);
  base.weight_type = MainWeightType(**model);
  base.ember_version = ember_version();
  base.hwy_target = b.session->kernel_target();
  base.int8_dot = b.session->kernel_int8_dot();
  base.isa = b.session->kernel_isa();
  base.load_ns = load_ns;
  base.llc_bytes = o.llc_bytes;
  base.arena_bytes = RequiredArenaBytes(**model, session_options);
  const WeightTraffic traffic = Traffic(**model);
  b.pp_tokens = b.image_prompt;
  b.pp_tokens.resize(b.image_prompt.size() + static_cast<size_t>(max_prompt));
  const size_t first_result = results->size();
  for (int64_t depth : o.depths) {
    const int d = static_cast<int>(depth);
    for (int64_t n : o.prompts) {
      BenchResult r = base;
      const int tokens = static_cast<int>(n) + image_tokens;
      r.weight_bytes_per_token = traffic.per_pass / tokens + traffic.per_row;
      EMBER_RETURN_IF_ERROR(RunTest(b, d, tokens, 0, &r));
      results->push_back(r);
    }
    for (int64_t n : o.gens) {
      BenchResult r = base;
      r.weight_bytes_per_token = traffic.per_pass + traffic.per_row;
      r.kv_bytes_per_token = KvBytesPerDecodeStep(c, kv_type, d, static_cast<int>(n));
      EMBER_RETURN_IF_ERROR(RunTest(b, d, 0, static_cast<int>(n), &r));
      results->push_back(r);
      if (!b.speculator) continue;
      // The same test decoding speculatively, right after the plain one.
      BenchResult fast = r;
      fast.samples_ns.clear();
      fast.heap_allocs = 0;
      fast.speculative = SpeculativeLabel(o);
      b.speculate = true;
      b.speculator->ResetStats();
      const Status status = RunTest(b, d, 0, static_cast<int>(n), &fast);
      b.speculate = false;
      EMBER_RETURN_IF_ERROR(status);
      // Bytes read per token: the target's weights once a pass (a pass gives several
      // tokens), the draft model's once each of its passes.
      const SpeculativeStats& st = b.speculator->stats();
      const double tokens = static_cast<double>(st.rounds + st.accepted);
      if (tokens > 0) {
        fast.weight_bytes_per_token =
            (traffic.per_pass + traffic.per_row) * static_cast<double>(st.rounds) /
                tokens +
            (b.draft_model ? static_cast<double>(b.draft_model->file_bytes()) *
                                 static_cast<double>(st.draft_passes) / tokens
                           : 0.0);
      }
      fast.summary = SpeculativeSummary(fast, r, st);
      results->push_back(fast);
    }
  }
  if (results->size() > first_result) {
    (*results)[first_result].summary = image_summary + (*results)[first_result].summary;
  }
  return Status::Ok();
}

Status RunBench(const ArgParser& args) {
  BenchOptions o;
  EMBER_RETURN_IF_ERROR(ParseBenchOptions(args, &o));
  // No output may be a model (results appended to it, a chart drawn over it): checked
  // before anything reads them.
  for (const std::string& output : {o.history_path, o.chart_path}) {
    if (!output.empty())
      EMBER_RETURN_IF_ERROR(CheckNotAnInput(output, o.models, "model"));
  }
  // Every model must open before anything runs: a typo fails now, not after minutes.
  std::vector<std::string> hashes;
  for (const std::string& path : o.models) {
    auto model = Model::Open(path.c_str());
    if (!model.ok()) return model.status();
    hashes.push_back(o.hash ? HashModelFile(**model, path) : "");
  }
  // Outputs that cannot be written fail now, not after the benchmark; the chart must not
  // be drawn over the history (made by now, so a new one is found too).
  if (!o.history_path.empty()) EMBER_RETURN_IF_ERROR(AppendLines(o.history_path, ""));
  if (!o.chart_path.empty()) {
    EMBER_RETURN_IF_ERROR(
        CheckNotAnInput(o.chart_path, {o.history_path}, "--history file"));
    EMBER_RETURN_IF_ERROR(CheckWritable(o.chart_path));
  }
  if (!testing::AllocCounterActive()) {
    fprintf(stderr,
            "ember bench: warning: the allocation counter is not active (another "
            "allocator came first); heap_allocs reads -1\n");
  }
  Progress progress;
  std::vector<BenchResult> results;
  for (size_t m = 0; m < o.models.size(); ++m) {
    for (Backend backend : o.backends) {
      for (const std::string& isa : o.isas) {
        for (KvType kv_type : o.kv_types) {
          for (int64_t threads : o.threads) {
            const size_t first = results.size();
            EMBER_RETURN_IF_ERROR(BenchModel(o, o.models[m], backend, isa, kv_type,
                                             static_cast<int>(threads), &progress,
                                             &results));
            // Into the history as soon as measured: a later failure keeps these.
            std::string lines;
            for (size_t i = first; i < results.size(); ++i) {
              results[i].model_sha256 = hashes[m];
              lines += BenchJsonLine(results[i]);
            }
            if (!o.history_path.empty()) {
              EMBER_RETURN_IF_ERROR(AppendLines(o.history_path, lines));
            }
          }
        }
      }
    }
  }
  progress.Done();
  WriteBenchReport(results, o.format, stdout);
  for (const BenchResult& r : results) {
    if (!r.summary.empty()) fputs(r.summary.c_str(), stdout);
  }
  if (!o.chart_path.empty()) {
    EMBER_RETURN_IF_ERROR(WriteFileAtomic(o.chart_path, [&](FILE* f) {
      WriteBenchReport(results, BenchFormat::kSvg, f);
      return Status::Ok();
    }));
  }
  return Status::Ok();
}

}  // namespace

int BenchCommand(int argc, char** argv) {
  return RunSubcommand(
      "bench",
      "usage: ember bench -m MODEL [-m MODEL2 ...] [-p 128,...] [-n 64,...]\n"
      "                   [-t 1,2,...] [-d 0,1024,...] [--kv-type f32,q8]\n"
      "                   [--backend highway,xnnpack] [--isa avx2,...] [-r 5]\n"
      "                   [-o md|json|jsonl|csv|svg] [--profile] [--probe-mib N]\n"
      "                   [--chart FILE.svg] [--history FILE.jsonl] [--hash]\n"
      "                   [--grammar FILE.gbnf | --json-schema FILE.json | --json]\n"
      "                   [--embed N] [--draft MODEL] [--draft-max N] [--lookup N]\n"
      "                   [--image FILE]\n\n"
      "pp N: prefill of an N-token prompt as one batch; tg N: N decode steps (greedy\n"
      "sampling included); \"@ dD\": after D tokens already in the cache. Each test\n"
      "runs once to warm up, then -r timed repetitions. Progress on stderr, results on\n"
      "stdout; --history appends each as measured.\n",
      BenchParser(), argc, argv, &RunBench);
}

}  // namespace ember::tools
