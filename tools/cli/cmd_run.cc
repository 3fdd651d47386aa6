// `ember run`: streams generated text to stdout and prompt/generation speed to stderr;
// with --show-top N, one line per step with the N most likely next tokens instead.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/generate.h"
#include "runtime/model/model.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "tools/cli/args.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/commands.h"
#include "tools/cli/grammar_flags.h"
#include "tools/cli/image_flags.h"
#include "tools/cli/prompt_cache.h"
#include "tools/cli/sampling_flags.h"
#include "tools/cli/speculative_flags.h"
#include "tools/util/quote.h"

namespace ember::tools {
namespace {

using Clock = std::chrono::steady_clock;

ArgParser MakeParser() {
  std::vector<OptionSpec> specs = {
      {{"-m", "--model"}, true, "model file (.ember)"},
      {{"-p", "--prompt"}, true, "prompt text (default: empty, start from BOS)"},
      {{"-n", "--n-predict"},
       true,
       "new tokens to generate (default: until end of text "
       "or a full context)"},
      {{"-t", "--threads"}, true, "threads (default 1)"},
      FixedThreadsOption(),
      {{"--backend"}, true, kBackendHelp},
      {{"--isa"}, true, IsaHelp()},
      {{"-c", "--ctx"},
       true,
       "context length (default: the prompt plus -n, at most the model's; without -n, "
       "the model's if its session fits in 4 GiB)"},
      {{"--show-top"},
       true,
       "print the N most likely next tokens and their logits at each step"},
      {{"--prompt-cache"},
       true,
       "FILE: reuse the saved state of a prompt this one starts with, and save this "
       "prompt's state there"},
      {{"--image"},
       true,
       "FILE: a PNG or JPEG for a vision model (repeatable, in prompt order): each "
       "image marker in -p (Gemma 3: <start_of_image>) takes the next image, or, with "
       "none, the images go first. With images the prompt's special tokens are read as "
       "such, as the model's processor reads them"},
      KvTypeOption(),
      GrammarBytesOption(),
  };
  for (OptionSpec& spec : ContextShiftOptions()) specs.push_back(std::move(spec));
  for (OptionSpec& spec : SamplingFlagSpecs()) specs.push_back(std::move(spec));
  for (OptionSpec& spec : GrammarFlagSpecs()) specs.push_back(std::move(spec));
  for (OptionSpec& spec : SpeculativeFlagSpecs()) specs.push_back(std::move(spec));
  specs.push_back({{"-h", "--help"}, false, "show this help"});
  return ArgParser(std::move(specs));
}

struct StreamState {
  Clock::time_point first_token;
  bool seen_first = false;
  const Session* session = nullptr;
  size_t show_top = 0;
  size_t step = 0;
  std::vector<std::pair<float, int32_t>> top;  // (logit, id), best first
};

// The state's show_top best (logit, id) pairs of `logits`, best first (ties: lower id).
void TopLogits(const float* logits, size_t vocab, StreamState* state) {
  auto& top = state->top;
  top.clear();
  const auto better = [](const std::pair<float, int32_t>& a,
                         const std::pair<float, int32_t>& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  for (size_t i = 0; i < vocab; ++i) {
    const std::pair<float, int32_t> entry(logits[i], static_cast<int32_t>(i));
    if (top.size() == state->show_top && !better(entry, top.back())) continue;
    if (top.size() == state->show_top) top.pop_back();
    top.insert(std::upper_bound(top.begin(), top.end(), entry, better), entry);
  }
}

bool PrintToken(void* user, int32_t id, std::string_view text) {
  auto* state = static_cast<StreamState*>(user);
  if (!state->seen_first) {
    state->first_token = Clock::now();
    state->seen_first = true;
  }
  if (state->show_top == 0 || id < 0) {  // id -1: text a stop string held back
    fwrite(text.data(), 1, text.size(), stdout);
    fflush(stdout);
    return true;
  }
  // The session's logits are still those `id` was sampled from (Decode comes after).
  const Session& s = *state->session;
  const Tokenizer& tokenizer = s.model().tokenizer();
  TopLogits(s.logits(), s.model().config().vocab_size, state);
  printf("%4zu  %-14s |", state->step++, QuotePiece(tokenizer.piece(id)).c_str());
  for (const auto& [logit, top_id] : state->top) {
    printf(" %s %.3f", QuotePiece(tokenizer.piece(top_id)).c_str(), logit);
  }
  printf("\n");
  fflush(stdout);
  return true;
}

Status Run(const ArgParser& args) {
  if (!args.Has("-m")) return InvalidArgument("missing -m MODEL");
  int64_t threads, n_predict, ctx, show_top;
  EMBER_RETURN_IF_ERROR(args.GetInt("-t", 1, 1, ThreadPool::kMaxThreads, &threads));
  EMBER_RETURN_IF_ERROR(args.GetInt("-n", -1, -1, int64_t{1} << 30, &n_predict));
  EMBER_RETURN_IF_ERROR(args.GetInt("-c", 0, 0, int64_t{1} << 24, &ctx));
  EMBER_RETURN_IF_ERROR(args.GetInt("--show-top", 0, 0, 1000, &show_top));
  SamplerOptions sampling;
  StopStrings stop_strings;
  EMBER_RETURN_IF_ERROR(ReadSamplingFlags(args, &sampling, &stop_strings));

  if (args.Has("--prompt-cache")) {
    EMBER_RETURN_IF_ERROR(
        CheckPromptCacheFile(args.Get("--prompt-cache"), args.Get("-m")));
  }

  auto model = Model::Open(args.Get("-m").c_str());
  if (!model.ok()) return model.status();
  const ModelConfig& c = (*model)->config();
  const Tokenizer& tokenizer = (*model)->tokenizer();
  if (c.mask == AttentionMask::kBidirectional) {
    return InvalidArgument(
        "generation needs a causal model; this one's attention is bidirectional "
        "(an encoder): use `ember logits` for its outputs");
  }

  // A baked prompt: the session starts after its tokens, and -p continues it (no BOS).
  const BakedPromptView& baked = (*model)->baked_prompt();
  const size_t baked_tokens = baked.num_tokens;
  if (baked_tokens > 0 && args.Has("--prompt-cache")) {
    return InvalidArgument("--prompt-cache and a model with a baked prompt: use one");
  }
  const bool with_images = args.Has("--image");
  if (with_images && (args.Has("--prompt-cache") || baked_tokens > 0)) {
    return InvalidArgument(
        "--image: not with --prompt-cache or a baked prompt (a saved state cannot tell "
        "one image from another)");
  }
  const Clock::time_point created = Clock::now();
  auto pool = CreatePool(args, threads);
  if (!pool.ok()) return pool.status();
  const std::string isa = args.Get("--isa");
  // Images before the prompt: the prompt holds one image token per row they make.
  FlagImages images;
  EMBER_RETURN_IF_ERROR(EncodeFlagImages(
      args, **model, pool->get(), args.Has("--isa") ? isa.c_str() : nullptr, &images));
  // The prompt first: the session is sized for it and the tokens asked for.
  std::vector<int32_t> ids;
  if (with_images) {
    EMBER_RETURN_IF_ERROR(
        EncodeImagePrompt(**model, args.Get("-p"), images, tokenizer.add_bos(), &ids));
  } else {
    EMBER_RETURN_IF_ERROR(EncodeText(**model, args.Get("-p"),
                                     tokenizer.add_bos() && !baked_tokens,
                                     ctx ? ctx : c.max_context, &ids));
  }
  // A model that adds no BOS to prompts (GPT-2) still starts an empty one from it; after
  // a baked prompt, which brings its logits, an empty prompt needs no token at all.
  if (ids.empty() && baked_tokens == 0 && tokenizer.bos_id() >= 0) {
    ids.push_back(tokenizer.bos_id());
  }
  if (ids.empty() && baked_tokens == 0) {
    return InvalidArgument(
        "the prompt encodes to no tokens and the model has no BOS token to start from");
  }
  const size_t n_ids = ids.size(), before = baked_tokens;
  size_t context = static_cast<size_t>(ctx);
  if (context == 0 && n_predict >= 0) {
    context = std::min<uint64_t>(c.max_context,
                                 before + n_ids + static_cast<uint64_t>(n_predict));
  }

  SessionOptions options;
  EMBER_RETURN_IF_ERROR(ParseBackend(args.Get("--backend", "highway"), &options.backend));
  options.max_context = static_cast<uint32_t>(context);
  if (args.Has("--isa")) options.isa = isa.c_str();
  // An image's rows attend to each other both ways (Gemma 3): one step holds them.
  for (const EncodedImage& e : images.encoded) {
    options.max_batch =
        std::max<uint32_t>(options.max_batch, static_cast<uint32_t>(e.rows));
  }
  EMBER_RETURN_IF_ERROR(ParseKvTypeOption(args, &options.kv_type));
  // The grammar's load (on the heap) before the session, planned with room for it.
  FlagGrammar grammar;
  EMBER_RETURN_IF_ERROR(ReadGrammarFlags(args, tokenizer, &grammar));
  EMBER_RETURN_IF_ERROR(PlanGrammarBytes(args, grammar, &options.grammar_bytes));
  EMBER_RETURN_IF_ERROR(ParseContextShiftOptions(args, &options));
  FlagSpeculation speculation;
  EMBER_RETURN_IF_ERROR(ReadSpeculativeFlags(args, &speculation, &options));
  // A context sized by -n must still take one verifying pass.
  if (ctx == 0 && options.draft_max > 0 && options.max_context > 0 &&
      options.max_context <= options.draft_max) {
    options.max_context = std::min<uint32_t>(c.max_context, options.draft_max + 1);
  }
  if (speculation.enabled() && with_images) {
    return InvalidArgument("--image: not with --draft or --lookup yet");
  }
  if (speculation.enabled() && (grammar.constraint || args.Has("--show-top"))) {
    return InvalidArgument(
        "--draft and --lookup draft free text: not with a grammar or --show-top");
  }
  auto session = Session::Create(**model, options, pool->get());
  if (!session.ok()) {
    if (context != 0) return session.status();
    return Status(session.status().code(),
                  "%s (-n N sizes the session for the prompt and N new tokens)",
                  session.status().message());
  }
  Session& s = *session;
  if (n_ids > s.max_context() - before) {
    return InvalidArgument("the prompt is %zu tokens, longer than the context of %zu",
                           n_ids, s.max_context());
  }
  // Without -n: until the end of the text, or of the context (the last sample needs no
  // position) unless a context shift makes room.
  const size_t room =
      options.context_shift ? SIZE_MAX : s.max_context() - before - n_ids + 1;
  const size_t max_new = n_predict < 0 ? room : static_cast<size_t>(n_predict);

  EMBER_RETURN_IF_ERROR(PlaceGrammar(s, "run", &grammar));
  EMBER_RETURN_IF_ERROR(StartSpeculation(s, options, pool->get(), &speculation));
  grammar::GrammarConstraint* constraint = grammar.constraint.get();
  Sampler sampler(sampling, c.vocab_size, s.sampler_scratch());
  if (sampling.temperature >= kGreedyBelowTemperature) {
    fprintf(stderr, "ember run: seed %llu\n",
            static_cast<unsigned long long>(sampling.seed));
  }

  // Echo the prompt as the model will continue it (the baked one first).
  for (size_t i = 0; i < before; ++i) {
    const std::string_view piece =
        tokenizer.Decode(i ? baked.tokens[i - 1] : -1, baked.tokens[i]);
    fwrite(piece.data(), 1, piece.size(), stdout);
  }
  const int32_t image_token = with_images ? (*model)->vision()->image_token_id : -1;
  for (size_t i = 0; i < n_ids; ++i) {
    if (ids[i] == image_token) continue;  // the image's rows: no text
    const int32_t prev = i ? ids[i - 1] : before ? baked.tokens[before - 1] : -1;
    const std::string_view piece = tokenizer.Decode(prev, ids[i]);
    fwrite(piece.data(), 1, piece.size(), stdout);
  }
  StreamState state;
  state.session = &s;
  state.show_top = static_cast<size_t>(show_top);
  if (show_top > 0) {
    printf("\nstep  next token     | top %lld next tokens by logit\n",
           static_cast<long long>(show_top));
  }
  GenerateResult result;
  GenerateOptions generate;
  generate.max_new = max_new;
  generate.stop_strings = &stop_strings;
  if (speculation.speculator) generate.speculator = &*speculation.speculator;
  TokenConstraint token_constraint;
  if (constraint) {
    token_constraint = constraint->AsTokenConstraint();
    generate.constraint = &token_constraint;
  }
  const Clock::time_point start = Clock::now();
  size_t first = 0;  // the prompt's tokens Generate prefills start here
  if (args.Has("--prompt-cache")) {
    size_t reused = 0;
    EMBER_RETURN_IF_ERROR(PrefillWithPromptCache(args.Get("--prompt-cache"), &s,
                                                 ids.data(), n_ids, &reused));
    fprintf(stderr, "ember run: prompt cache: %zu of %zu prompt tokens reused\n", reused,
            n_ids);
    first = n_ids - 1;
  } else if (with_images) {
    // The whole prompt with the images' rows; Generate goes on from its logits.
    EMBER_RETURN_IF_ERROR(
        s.PrefillEmbedded(ids.data(), n_ids, images.encoder->embedded()));
    first = n_ids;
  }
  EMBER_RETURN_IF_ERROR(Generate(s, sampler, ids.data() + first, n_ids - first, generate,
                                 &PrintToken, &state, &result));
  const Clock::time_point end = Clock::now();
  printf("\n");
  fflush(stdout);

  const double prefill_s =
      std::chrono::duration<double>((state.seen_first ? state.first_token : end) - start)
          .count();
  const double decode_s = std::chrono::duration<double>(end - state.first_token).count();
  const size_t decoded = result.generated > 0 ? result.generated - 1 : 0;
  const double first_s = std::chrono::duration<double>(
                             (state.seen_first ? state.first_token : end) - created)
                             .count();
  if (with_images) PrintImageStats("run", images);
  if (baked_tokens > 0) {
    fprintf(stderr, "ember run: baked prompt of %zu tokens restored, not prefilled\n",
            baked_tokens);
  }
  fprintf(
      stderr,
      "ember run: prompt %zu tokens in %.2f ms (%.1f tok/s); first token %.2f ms after "
      "the session's creation; generated %zu tokens, %.1f tok/s (%s, int8 %s, tier %s%s, "
      "%lld thread%s, %s KV cache)\n",
      n_ids, prefill_s * 1e3, n_ids / prefill_s, first_s * 1e3, result.generated,
      decoded > 0 ? decoded / decode_s : 0.0, s.kernel_target(), s.kernel_int8_dot(),
      s.kernel_isa(), s.backend() == Backend::kXnnpack ? ", f32 matrices on XNNPACK" : "",
      static_cast<long long>(threads), threads == 1 ? "" : "s",
      KvTypeName(options.kv_type));
  PrintSpeculativeStats("run", speculation, result.generated);
  if (s.shifts() > 0) {
    fprintf(stderr, "ember run: %zu context shift%s (context %zu, keeping %u)\n",
            s.shifts(), s.shifts() == 1 ? "" : "s", s.max_context(),
            options.context_keep);
  }
  if (!result.complete) {
    return OutOfRange(
        "stopped after %zu tokens in the middle of the grammar's text (%s): it is not "
        "whole; raise -n or -c",
        result.generated,
        result.stop == StopReason::kContextFull || n_predict < 0 ? "the context is full"
                                                                  : "-n reached");
  }
  if (result.stop == StopReason::kContextFull && n_predict >= 0) {
    return OutOfRange(
        "context full after %zu of the %lld tokens asked for (context %zu); "
        "use -c or a shorter prompt",
        result.generated, static_cast<long long>(n_predict), s.max_context());
  }
  return Status::Ok();
}

}  // namespace

int RunCommand(int argc, char** argv) {
  return RunSubcommand(
      "run",
      "usage: ember run -m MODEL [-p PROMPT] [-n N] [options]\n"
      "Streams the text to stdout and its speed to stderr. Stops at the model's\n"
      "stop ids (EOS, every end id a Hugging Face or GGUF model lists, BOS for a\n"
      "llama2.c model; `ember inspect` prints them), after -n tokens, or at a full\n"
      "context: status 1 unless --context-shift makes room. Under --grammar,\n"
      "--json-schema or --json, status 1 too when it stops before the text is whole.\n",
      MakeParser(), argc, argv, &Run);
}

}  // namespace ember::tools
