// `ember inspect`: the model summary (config, parameters per kind, dtype mix, file size)
// and the session arena map for a context and thread count, with its totals; with
// --budget, the longest context whose arena fits in it.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "runtime/model/model.h"
#include "runtime/session.h"
#include "runtime/vision/image_encoder.h"
#include "runtime/vision/resample.h"
#include "tools/cli/args.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/commands.h"
#include "tools/cli/grammar_flags.h"
#include "tools/cli/inspect_grammar.h"
#include "tools/cli/model_summary.h"
#include "tools/util/parse.h"
#include "tools/util/quote.h"

namespace ember::tools {
namespace {

ArgParser MakeParser() {
  std::vector<OptionSpec> specs = {
      {{"-m", "--model"}, true, "model file (.ember)"},
      {{"-c", "--ctx"}, true, "context length to plan for (default: the model's)"},
      {{"-b", "--batch"}, true, "prefill batch to plan for (default 64)"},
      {{"-t", "--threads"}, true, "threads to plan for (default 1)"},
      {{"--backend"}, true, kBackendHelp},
      KvTypeOption(),
      GrammarBytesOption(),
      {{"--budget"},
       true,
       "print the longest context whose session arena fits in this many bytes (e.g. "
       "64MiB, 1.5GiB) and plan that one"},
      {{"--check-weights"},
       false,
       "scan every weight for NaN and infinite values (reads the whole file); exit 1 if "
       "any"},
      {{"-h", "--help"}, false, "show this help"},
  };
  // The arena bytes a grammar takes (the grammar buffer is planned either way).
  specs.push_back({{"--grammar"},
                   true,
                   "FILE: print the arena bytes this GBNF grammar takes in a session of "
                   "the model (program, matcher, vocabulary, mask tables)"});
  specs.push_back(
      {{"--json-schema"}, true, "FILE: the same for the grammar of this JSON Schema"});
  specs.push_back({{"--json"}, false, "the same for the grammar of any JSON value"});
  return ArgParser(specs);
}

std::string Bytes(uint64_t n) {
  char buf[32];
  if (n >= (uint64_t{1} << 30)) {
    snprintf(buf, sizeof(buf), "%.2f GiB", n / 1073741824.0);
  } else if (n >= (uint64_t{1} << 20)) {
    snprintf(buf, sizeof(buf), "%.2f MiB", n / 1048576.0);
  } else if (n >= 1024) {
    snprintf(buf, sizeof(buf), "%.1f KiB", n / 1024.0);
  } else {
    snprintf(buf, sizeof(buf), "%llu B", static_cast<unsigned long long>(n));
  }
  return buf;
}

// The config fields of current families that differ from their defaults, named as the
// papers and Hugging Face configs name them; empty for a model that uses none.
std::string FeatureSummary(const ModelConfig& c) {
  std::string out;
  char buf[160];
  const auto add = [&](const char* text) {
    if (!out.empty()) out += "; ";
    out += text;
  };
  if (c.rope_scaling != RopeScaling::kNone) {
    const int n = snprintf(buf, sizeof(buf), "rope scaling %s (factor %g",
                           RopeScalingName(c.rope_scaling), c.rope_scaling_factor);
    if (c.rope_scaling == RopeScaling::kLlama3) {
      snprintf(buf + n, sizeof(buf) - n, ", low %g, high %g, original context %u)",
               c.rope_low_freq_factor, c.rope_high_freq_factor, c.rope_original_context);
    } else if (c.rope_scaling == RopeScaling::kLongRope) {
      snprintf(buf + n, sizeof(buf) - n, ", original context %u, attention factor %g)",
               c.rope_original_context, c.rope_attention_factor);
    } else if (c.rope_scaling == RopeScaling::kYarn) {
      snprintf(buf + n, sizeof(buf) - n,
               ", original context %u, beta %g/%g, attention factor %g%s)",
               c.rope_original_context, c.rope_beta_fast, c.rope_beta_slow,
               c.rope_attention_factor, c.rope_yarn_truncate ? "" : ", not truncated");
    } else {
      snprintf(buf + n, sizeof(buf) - n, ")");
    }
    add(buf);
  }
  if (c.rope_dim != 0 && c.rope_dim != c.head_dim) {
    snprintf(buf, sizeof(buf), "rope on %u of %u dimensions", c.rope_dim, c.head_dim);
    add(buf);
  }
  if (!c.rope_freq_factors.empty() && c.rope_scaling != RopeScaling::kLongRope) {
    float lo = c.rope_freq_factors[0], hi = lo;
    for (float f : c.rope_freq_factors) {
      lo = f < lo ? f : lo;
      hi = f > hi ? f : hi;
    }
    snprintf(buf, sizeof(buf), "rope frequency factors (%zu, %g to %g)",
             c.rope_freq_factors.size(), lo, hi);
    add(buf);
  }
  if (c.has_sliding_layers()) {
    size_t sliding = 0;
    std::string pattern;
    for (LayerAttention a : c.layer_attention) {
      sliding += a == LayerAttention::kSliding;
      pattern += a == LayerAttention::kSliding ? 'S' : 'G';
    }
    snprintf(buf, sizeof(buf), "sliding window %u on %zu of %u layers%s%s",
             c.sliding_window, sliding, c.n_layers, c.n_layers <= 64 ? " " : "",
             c.n_layers <= 64 ? pattern.c_str() : "");
    add(buf);
    if (c.rope_local_theta > 0) {
      snprintf(buf, sizeof(buf), "sliding layers' rope theta %g", c.rope_local_theta);
      add(buf);
    }
  }
  if (c.qk_norm) add("qk-norm");
  if (c.post_norms) add("post-norms");
  if (c.embedding_scale != 1.0f) {
    snprintf(buf, sizeof(buf), "embedding scale %g", c.embedding_scale);
    add(buf);
  }
  if (c.attention_scale > 0) {
    snprintf(buf, sizeof(buf), "attention scale %g", c.attention_scale);
    add(buf);
  }
  if (c.attn_softcap > 0) {
    snprintf(buf, sizeof(buf), "attention softcap %g", c.attn_softcap);
    add(buf);
  }
  if (c.final_softcap > 0) {
    snprintf(buf, sizeof(buf), "final logit softcap %g", c.final_softcap);
    add(buf);
  }
  return out;
}

void PrintModel(const std::string& path, const Model& model) {
  const ModelConfig& c = model.config();
  printf("model        %s (%s, %llu bytes)\n", path.c_str(),
         Bytes(model.file_bytes()).c_str(),
         static_cast<unsigned long long>(model.file_bytes()));
  // Names from the file (a GGUF's general.name is in the description) are escaped.
  if (*model.description()) {
    printf("description  %s\n", Printable(model.description()).c_str());
  }
  printf(
      "architecture %s: %u layers, d_model %u, %u heads (%u kv heads, head_dim %u), "
      "ffn %u, vocab %u, context %u\n",
      Printable(c.architecture).c_str(), c.n_layers, c.d_model, c.n_heads, c.n_kv_heads,
      c.head_dim, c.ffn_dim, c.vocab_size, c.max_context);
  printf("block        %s-%s (eps %g), %s %s FFN, positions %s", NormKindName(c.norm),
         c.norm_placement == NormPlacement::kPre ? "pre" : "post", c.norm_eps,
         c.ffn == FfnKind::kGated ? "gated" : "plain", ActivationName(c.activation),
         PositionKindName(c.positions));
  if (c.positions == PositionKind::kRope) {
    printf(" (theta %g, %s pairs)", c.rope_theta,
           c.rope_pairing == RopePairing::kInterleaved ? "interleaved" : "half");
  }
  printf(", %s attention%s%s%s, %s classifier\n",
         c.mask == AttentionMask::kCausal ? "causal" : "bidirectional",
         c.qkv_bias ? ", qkv bias" : "", c.out_bias ? ", out bias" : "",
         c.ffn_bias ? ", ffn bias" : "", c.tied_classifier ? "tied" : "separate");
  const std::string features = FeatureSummary(c);
  if (!features.empty()) printf("features     %s\n", features.c_str());
  if (c.embeds()) {
    printf("embedding    %zu values, pooling %s", c.embedding_values(),
           PoolingName(c.pooling));
    for (size_t i = 0; i < c.dense_dims.size(); ++i) {
      printf("%s%u%s%s", i == 0 ? ", dense " : " -> ", c.dense_dims[i],
             c.dense_flags[i] & ModelConfig::kDenseBias ? "+bias" : "",
             c.dense_flags[i] & ModelConfig::kDenseTanh ? " tanh" : "");
    }
    printf("%s", c.normalize ? ", normalized to unit length" : "");
    if (c.token_types) printf(", %u token types", c.token_types);
    printf("%s\n", c.embedding_norm ? ", embeddings normed" : "");
  }
  if (const VisionConfig* v = model.vision()) {
    const ModelConfig& e = v->encoder;
    printf(
        "vision       %s tower: %u layers, d_model %u, %u heads (head_dim %u), ffn %u, "
        "%s-%s (eps %g), %s\n",
        Printable(e.architecture).c_str(), e.n_layers, e.d_model, e.n_heads, e.head_dim,
        e.ffn_dim, NormKindName(e.norm),
        e.norm_placement == NormPlacement::kPre ? "pre" : "post", e.norm_eps,
        ActivationName(e.activation));
    printf(
        "             tiles of %u x %u pixels, %zu patches of %u; %s %u x %u: %zu "
        "image tokens (id %d) per tile%s\n",
        v->image_size, v->image_size, v->patches(), v->patch_size,
        v->connector == ImageConnector::kPixelShuffle ? "pixel shuffle" : "average pool",
        v->connector_factor, v->connector_factor, v->tokens_per_image(),
        v->image_token_id, v->image_blocks_bidirectional ? ", attending both ways" : "");
    const ImageProcessorConfig& p = v->processor;
    if (p.layout == ImageLayout::kFixed) {
      printf("             processor: resized to %d x %d", p.width, p.height);
    } else {
      printf("             processor: longest edge %d, tiles of %d%s", p.longest_edge,
             p.tile_size, p.split ? " and a global view" : " (not split)");
    }
    printf(" (%s), rescale %g, mean %g %g %g, std %g %g %g%s\n",
           ResampleFilterName(p.resample), p.rescale ? p.rescale_factor : 1.0, p.mean[0],
           p.mean[1], p.mean[2], p.std[0], p.std[1], p.std[2],
           p.normalize ? "" : " (not normalized)");
    if (v->prompt.marker.empty()) {
      printf(
          "             prompt: none (no image token in the tokenizer): rows given "
          "only\n");
    } else if (v->prompt.layout == ImagePromptLayout::kTiles) {
      printf(
          "             prompt: %s becomes, per tile, %s + <row_R_col_C> + %s per row, "
          "then the global view as %s + %s + its rows + %s\n",
          QuotePiece(v->prompt.marker).c_str(), QuotePiece(v->prompt.around).c_str(),
          QuotePiece(v->prompt.token).c_str(), QuotePiece(v->prompt.around).c_str(),
          QuotePiece(v->prompt.global_token).c_str(),
          QuotePiece(v->prompt.around).c_str());
    } else {
      printf("             prompt: %s becomes %s + %s per row + %s\n",
             QuotePiece(v->prompt.marker).c_str(), QuotePiece(v->prompt.before).c_str(),
             QuotePiece(v->prompt.token).c_str(), QuotePiece(v->prompt.after).c_str());
    }
    // What one image of the largest size a session takes by default needs.
    ImageEncoderOptions one;
    Result<ImageEncoderPlan> plan = PlanImageEncoder(model, one);
    if (plan.ok()) {
      printf(
          "             an image up to %d x %d (%.1f MP): up to %d tile%s, %zu rows; "
          "arena %.1f MiB (decode, processor, tower)\n",
          one.limits.max_width, one.limits.max_height, one.limits.max_pixels / 1e6,
          plan->max_tiles, plan->max_tiles == 1 ? "" : "s", plan->max_rows,
          plan->arena_bytes() / 1048576.0);
    }
  }
  const Tokenizer& tok = model.tokenizer();
  printf("tokenizer    %s, %u pieces, bos %d, eos %d, stops at",
         tok.kind() == TokenizerKind::kSentencePieceBpe ? "sentencepiece-bpe"
         : tok.kind() == TokenizerKind::kWordPiece      ? "wordpiece"
                                                        : "byte-level-bpe",
         tok.vocab_size(), tok.bos_id(), tok.eos_id());
  const TokenizerTables& t = tok.tables();
  if (!t.has_stop_ids) printf(" eos and bos (no stop ids in the file)");
  for (size_t i = 0; i < t.num_stop_ids; ++i) printf(" %d", t.stop_ids[i]);
  if (t.has_stop_ids && t.num_stop_ids == 0) printf(" nothing (no stop ids)");
  printf("\n");
  printf("             pre-tokenizer %s%s, merges by %s%s, %zu added tokens\n",
         PreTokenizerName(t.pre_tokenizer),
         t.normalizer == Normalization::kNfc ? ", NFC" : "", t.scores ? "score" : "rank",
         t.ignore_merges ? " (whole pieces first)" : "", t.num_added);
  if (t.end_id >= 0) {
    printf("             an embedded text ends with %d '%.*s' (the post-processor's)\n",
           t.end_id, static_cast<int>(tok.piece(static_cast<uint32_t>(t.end_id)).size()),
           tok.piece(static_cast<uint32_t>(t.end_id)).data());
  }
  if (!t.pair_format.empty()) {
    printf("             a reranker's prompt of %zu bytes, default instruction '%.*s'\n",
           t.pair_format.size(), static_cast<int>(t.pair_instruction.size()),
           t.pair_instruction.data());
  }
  for (size_t i = 0; i < tok.num_prompts(); ++i) {
    const std::string_view name = tok.prompt_name(i), text = tok.prompt_text(i);
    printf("             prompt '%.*s': '%.*s'%s\n", static_cast<int>(name.size()),
           name.data(), static_cast<int>(text.size()), text.data(),
           tok.default_prompt() == static_cast<int32_t>(i) ? " (the default)" : "");
  }
  if (tok.kind() == TokenizerKind::kWordPiece) {
    printf("             wordpiece: unk %d, pad %d, %s, words of up to %u characters, "
           "normalizer%s%s%s%s%s\n",
           t.unk_id, t.pad_id, t.append_eos ? "eos after the text" : "no eos",
           t.max_input_chars_per_word, t.normalizer == Normalization::kBert ? "" : " none",
           t.bert.clean_text ? " clean" : "", t.bert.handle_chinese_chars ? " cjk" : "",
           t.bert.strip_accents ? " strip-accents" : "",
           t.bert.lowercase ? " lowercase" : "");
  }
  if (t.chat_template_bytes > 0) {
    printf("chat         a template of %zu bytes (Jinja source)\n",
           t.chat_template_bytes);
  }

  printf("\nparameters   %llu\n",
         static_cast<unsigned long long>(model.parameter_count()));
  for (const KindCount& k : ParametersByKind(model)) {
    printf("  %-12s %12llu  (%llu tensor%s)\n", k.kind.c_str(),
           static_cast<unsigned long long>(k.parameters),
           static_cast<unsigned long long>(k.tensors), k.tensors == 1 ? "" : "s");
  }
  // A tied classifier is the token embedding: stored and counted once (as PyTorch's
  // parameters() counts a shared tensor once).
  if (c.tied_classifier)
    printf("  %-12s %12s  (the token embedding)\n", "classifier", "tied");
  printf("weights by type\n");
  for (const DTypeCount& d : DTypeCounts(model)) {
    // Bits per weight as stored (scales, minimums and panel padding included).
    printf("  %-12s %12llu parameters, %s in %llu tensors, %.3g bits per weight\n",
           DTypeName(d.dtype), static_cast<unsigned long long>(d.parameters),
           Bytes(d.bytes).c_str(), static_cast<unsigned long long>(d.tensors),
           8.0 * static_cast<double>(d.bytes) / static_cast<double>(d.parameters));
  }
}

Status Inspect(const ArgParser& args) {
  if (!args.Has("-m")) return InvalidArgument("missing -m MODEL");
  int64_t ctx, batch, threads;
  EMBER_RETURN_IF_ERROR(args.GetInt("-c", 0, 0, int64_t{1} << 24, &ctx));
  EMBER_RETURN_IF_ERROR(args.GetInt("-b", 64, 1, int64_t{1} << 24, &batch));
  EMBER_RETURN_IF_ERROR(args.GetInt("-t", 1, 1, ThreadPool::kMaxThreads, &threads));
  SessionOptions options;
  EMBER_RETURN_IF_ERROR(ParseBackend(args.Get("--backend", "highway"), &options.backend));
  EMBER_RETURN_IF_ERROR(ParseKvTypeOption(args, &options.kv_type));
  options.max_batch = static_cast<uint32_t>(batch);
  uint64_t budget = 0;
  if (args.Has("--budget")) {
    if (args.Has("-c")) return InvalidArgument("give -c or --budget, not both");
    EMBER_RETURN_IF_ERROR(ParseBytes(args.Get("--budget"), "--budget", &budget));
  }
  const std::string path = args.Get("-m");
  auto model = Model::Open(path.c_str());
  if (!model.ok()) return model.status();
  PrintModel(path, **model);
  FlagGrammar grammar;  // planned with exactly its bytes unless --grammar-bytes
  EMBER_RETURN_IF_ERROR(ReadInspectGrammar(args, **model, &grammar));
  EMBER_RETURN_IF_ERROR(PlanGrammarBytes(args, grammar, &options.grammar_bytes));

  // The plan of the context asked for, of the longest one the budget holds, or of the
  // model's whole one: explicitly, so that inspect shows it even past the limit of a
  // session that asks for no context.
  uint32_t context = ctx ? static_cast<uint32_t>(ctx) : (*model)->config().max_context;
  if (args.Has("--budget")) {
    auto longest = LongestContextWithin(
        **model, options, budget > SIZE_MAX ? SIZE_MAX : static_cast<size_t>(budget));
    if (!longest.ok()) return longest.status();
    context = static_cast<uint32_t>(*longest);
    options.max_context = context;
    printf(
        "\nbudget       %s (%llu bytes) for the arena, %s KV cache, batch %lld: the "
        "longest context is %u positions%s (arena %zu bytes)\n",
        Bytes(budget).c_str(), static_cast<unsigned long long>(budget),
        KvTypeName(options.kv_type), static_cast<long long>(batch), context,
        context == (*model)->config().max_context ? ", the model's whole context" : "",
        RequiredArenaBytes(**model, options));
    const ModelConfig& mc = (*model)->config();
    if (mc.embeds() && mc.labels > 0) {
      // ember_rerank runs its pairs one after another through the one session: the
      // budget bounds a pair, not how many.
      printf(
          "             reranks pairs as texts of up to %u tokens each, any number of "
          "them a call (one after another in this arena)\n",
          context);
    } else if (mc.embeds()) {
      // ember_embed_batch packs whole texts into steps (a bidirectional model's step is
      // its context): the budget bounds a text and a step, not how many texts.
      const size_t step = mc.mask == AttentionMask::kBidirectional
                              ? context
                              : std::min<size_t>(context, static_cast<size_t>(batch));
      printf(
          "             embeds texts of up to %u tokens each, any number of them a call "
          "(short ones packed whole, up to %zu tokens a step)\n",
          context, step);
    }
  }
  options.max_context = context;
  auto session_plan = PlanSession(**model, options);
  if (!session_plan.ok()) return session_plan.status();
  const ArenaPlan* plan = &session_plan->arena;
  printf(
      "\narena plan   context %u, batch %lld, %lld thread%s, %s backend, %s KV cache\n",
      context, static_cast<long long>(batch), static_cast<long long>(threads),
      threads == 1 ? "" : "s", BackendName(options.backend), KvTypeName(options.kv_type));
  const ModelConfig& c = (*model)->config();
  // Sliding layers whose window is shorter than the context keep a ring (KvLayer).
  size_t rings = 0, ring_positions = 0, sink = 0;
  for (size_t layer = 0; layer < c.n_layers; ++layer) {
    const KvLayer l =
        KvLayerPositions(c, layer, context, session_plan->max_batch,
                         session_plan->context_shift ? session_plan->context_keep : 0);
    rings += l.ring > 0;
    if (l.ring > 0) ring_positions = l.capacity, sink = l.sink;
  }
  printf(
      "  %s KV cache: %zu layers x 2 (keys, values) x %u positions x %zu bytes (%u KV "
      "heads of %u values%s)\n",
      KvTypeName(options.kv_type), c.n_layers - rings, context,
      KvRowBytes(options.kv_type, c.n_kv_heads, c.head_dim), c.n_kv_heads, c.head_dim,
      options.kv_type == KvType::kQ8 ? ", int8 and an f32 scale per 32" : "");
  if (rings > 0) {
    printf(
        "  %zu sliding layers x 2 x %zu positions: a ring of the window %u + batch %zu - "
        "1%s\n",
        rings, ring_positions, c.sliding_window, session_plan->max_batch,
        sink ? (" after " + std::to_string(sink) + " kept positions").c_str() : "");
  }
  printf("  %-12s %12s %12s  %-12s  %s\n", "buffer", "offset", "bytes", "kind",
         "lifetime");
  uint64_t by_kind[5] = {0, 0, 0, 0, 0};
  for (size_t i = 0; i < plan->num_buffers(); ++i) {
    const ArenaPlan::Buffer& b = plan->buffer(i);
    printf("  %-12s %12zu %12zu  %-12s  %s..%s\n", b.name, b.offset, b.bytes,
           BufferKindName(b.kind), ArenaStepName(b.first_step),
           ArenaStepName(b.last_step));
    by_kind[static_cast<int>(b.kind)] += b.bytes;
  }
  const size_t arena = session_plan->arena_bytes();
  printf("\ntotals\n");
  printf("  %-22s %s (mapped read-only, not copied)\n", "weights (file)",
         Bytes((*model)->file_bytes()).c_str());
  for (BufferKind k :
       {BufferKind::kKvCache, BufferKind::kActivations, BufferKind::kScratch,
        BufferKind::kXnnpack, BufferKind::kGrammar}) {
    printf("  %-22s %s (sum of buffers; planned ones share bytes)\n", BufferKindName(k),
           Bytes(by_kind[static_cast<int>(k)]).c_str());
  }
  printf("  %-22s %zu bytes (%s): RequiredArenaBytes, with alignment slack\n", "arena",
         arena, Bytes(arena).c_str());
  printf("  %-22s %s (the arena, and the weights where they are held in RAM)\n",
         "arena + weights", Bytes(arena + (*model)->file_bytes()).c_str());
  if (ctx == 0 && arena > kDefaultArenaLimit) {
    printf(
        "  (over the %s a session that asks for no context may plan: give it one, -c)\n",
        Bytes(kDefaultArenaLimit).c_str());
  }
  if (grammar.constraint) {
    EMBER_RETURN_IF_ERROR(PrintGrammarBytes(grammar, **model, *session_plan));
  }
  if (!args.Has("--check-weights")) return Status::Ok();
  const std::vector<NonFiniteTensor> bad = FindNonFiniteWeights(**model);
  printf("\nweights check: %zu tensors scanned, ", (*model)->tensors().size());
  if (bad.empty()) {
    printf("every value finite\n");
    return Status::Ok();
  }
  printf("%zu with NaN or infinite values\n", bad.size());
  for (const NonFiniteTensor& t : bad) {
    printf("  %-28s %llu NaN, %llu inf (the first at index %llu)\n",
           Printable(t.name).c_str(), static_cast<unsigned long long>(t.nan),
           static_cast<unsigned long long>(t.inf),
           static_cast<unsigned long long>(t.first));
  }
  return InvalidModel("%zu tensors hold NaN or infinite values", bad.size());
}

}  // namespace

int InspectCommand(int argc, char** argv) {
  return RunSubcommand(
      "inspect",
      "usage: ember inspect -m MODEL [-c CTX | --budget BYTES] [-b BATCH] "
      "[-t THREADS]\n"
      "                    [--kv-type f32|f16|q8] [--check-weights]\n"
      "                    [--grammar FILE | --json-schema FILE | --json] "
      "[--grammar-bytes N|none]\n"
      "Prints the model's config, tokenizer and stop ids, parameters and weight\n"
      "types, and the session's arena plan: each buffer's offset, size and lifetime\n"
      "(buffers never live at once share bytes), all before anything is allocated;\n"
      "with a grammar, the bytes it takes in the arena's grammar buffer.\n",
      MakeParser(), argc, argv, &Inspect);
}

}  // namespace ember::tools
