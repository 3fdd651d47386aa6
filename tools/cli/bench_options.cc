#include "tools/cli/bench_options.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "kernels/isa.h"
#include "runtime/pool/thread_pool.h"
#include "tools/bench/bandwidth_probe.h"
#include "tools/bench/host_info.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/grammar_flags.h"
#include "tools/cli/speculative_flags.h"
#include "tools/util/parse.h"

namespace ember::tools {
namespace {

// The --isa option's help, with the tiers this build knows.
std::string BenchIsaHelp() {
  return std::string(
             "ISA tiers of the kernels, comma-separated (default: EMBER_ISA, else "
             "native): native or a lesser CPU's: ") +
         kernels::IsaTierNames();
}

}  // namespace

ArgParser BenchParser() {
  std::vector<OptionSpec> specs = {
      {{"-m", "--model"}, true, "model file (.ember); repeat for more models"},
      {{"-p", "--n-prompt"},
       true,
       "ppN: prefill N random tokens as one batch; lengths comma-separated (default "
       "128; 0: no pp test)"},
      {{"-n", "--n-gen"},
       true,
       "tgN: N greedy decode steps; counts comma-separated (default 64; 0: no tg test)"},
      {{"-t", "--threads"}, true, "thread counts, comma-separated (default 1)"},
      FixedThreadsOption(),
      {{"-d", "--depth"},
       true,
       "run each test after N tokens already in the cache (filled untimed), "
       "comma-separated (default 0)"},
      {{"--kv-type"}, true, "KV cache types, comma-separated: f32 (default), f16, q8"},
      {{"--backend"},
       true,
       "what runs the f32 matrices, comma-separated: highway (default), xnnpack"},
      {{"--isa"}, true, BenchIsaHelp()},
      {{"-r", "--repetitions"},
       true,
       "timed repetitions of each test, after one warm-up run (default 5)"},
      {{"-o", "--output"},
       true,
       "output format: md (default), json, jsonl, csv or svg (the chart)"},
      {{"--profile"},
       false,
       "time per kernel kind as a share of a decode step and of prefill, and how busy "
       "the threads were in parallel regions"},
      {{"--probe-mib"},
       true,
       "bandwidth probe buffer, MiB (default 256, or 4x the LLC; at most RAM / 4)"},
      {{"--chart"}, true, "also draw the results as an SVG chart into this file"},
      {{"--history"},
       true,
       "append each result, as a JSON line with the model's SHA-256, to this file"},
      {{"--hash"}, false, "record the model files' SHA-256 (--history implies it)"},
      {{"--embed"},
       true,
       "an embedding model: each -p N test embeds this many texts of N tokens, one after "
       "another (tokens/s as t/s; texts/s reported after the results); no tg tests"},
      {{"--image"},
       true,
       "a vision model: encode this PNG or JPEG (repeat for more in one prompt) -r times "
       "after a warm-up, the time reported after the results; each -p N test then "
       "prefills the images' prompt (their rows and marker tokens, counted in N) before "
       "N random tokens; tg tests decode as without"},
  };
  for (OptionSpec& spec : SpeculativeFlagSpecs()) {
    spec.help +=
        " (each tg test runs plain, then speculatively: tokens/s side by side, "
        "the acceptance rate and the tokens each pass gave after the results)";
    specs.push_back(std::move(spec));
  }
  specs.push_back(
      {{"--draft-oracle"},
       true,
       "A in [0, 1]: draft the tokens the plain tg run produced, each kept with "
       "probability A and otherwise replaced (deterministically by position): the "
       "speed-up at a known acceptance rate, for docs/speculative.md's model"});
  for (OptionSpec& spec : GrammarFlagSpecs()) {
    spec.help += " (tg tests: each step masks, samples and advances it; the masks' cost "
                 "is reported after the results)";
    specs.push_back(std::move(spec));
  }
  specs.push_back({{"-h", "--help"}, false, "show this help"});
  return ArgParser(std::move(specs));
}


Status ParseBenchOptions(const ArgParser& args, BenchOptions* o) {
  o->models = args.GetAll("-m");
  if (o->models.empty()) return InvalidArgument("missing -m MODEL");
  const int grammars = args.Has("--grammar") + args.Has("--json-schema") + args.Has("--json");
  if (grammars > 1) return InvalidArgument("--grammar, --json-schema and --json: use one");
  if (grammars == 1) EMBER_RETURN_IF_ERROR(GrammarText(args, &o->grammar, &o->grammar_name));
  for (const std::string& name : SplitList(args.Get("--backend", "highway"))) {
    Backend backend;
    EMBER_RETURN_IF_ERROR(ParseBackend(name, &backend));
    o->backends.push_back(backend);
  }
  // Each tier must run here before anything does (an error now, not after minutes).
  o->isas = SplitList(args.Get("--isa"));
  for (const std::string& isa : o->isas) {
    if (!args.Has("--isa")) break;  // the default: EMBER_ISA, checked by the session
    if (isa.empty()) return InvalidArgument("--isa: an empty tier name");
    kernels::IsaChoice choice;
    const char* missing;
    switch (kernels::ResolveIsa(isa.c_str(), &choice, &missing)) {
      case kernels::IsaError::kOk:
        break;
      case kernels::IsaError::kUnknownTier:
        return InvalidArgument("--isa %s: unknown tier (this build knows: %s, native)",
                               isa.c_str(), kernels::IsaTierNames());
      case kernels::IsaError::kUnsupported:
        return Unimplemented("--isa %s: this CPU lacks %s", isa.c_str(), missing);
    }
  }
  for (const std::string& name : SplitList(args.Get("--kv-type", "f32"))) {
    KvType type;
    EMBER_RETURN_IF_ERROR(ParseKvType(name, &type));
    o->kv_types.push_back(type);
  }
  EMBER_RETURN_IF_ERROR(args.GetIntList("-d", {0}, 0, 1 << 20, &o->depths));
  EMBER_RETURN_IF_ERROR(ParseBenchFormat(args.Get("-o", "md"), &o->format));
  EMBER_RETURN_IF_ERROR(args.GetIntList("-p", {128}, 0, 1 << 20, &o->prompts));
  EMBER_RETURN_IF_ERROR(args.GetIntList("-n", {64}, 0, 1 << 20, &o->gens));
  EMBER_RETURN_IF_ERROR(
      args.GetIntList("-t", {1}, 1, ThreadPool::kMaxThreads, &o->threads));
  int64_t value;
  EMBER_RETURN_IF_ERROR(args.GetInt("-r", 5, 1, 1000, &value));
  o->repetitions = static_cast<int>(value);
  EMBER_RETURN_IF_ERROR(args.GetInt("--probe-mib", 0, 1, int64_t{1} << 20, &value));
  o->llc_bytes = LastLevelCacheBytes();
  o->probe_bytes =
      value ? static_cast<uint64_t>(value) << 20 : DefaultProbeBytes(o->llc_bytes);
  const std::string note = ProbeSizeNote(o->probe_bytes, o->llc_bytes);
  if (!note.empty()) fprintf(stderr, "ember bench: note: %s\n", note.c_str());
  o->profile = args.Has("--profile");
  o->fixed_threads = args.Has("--fixed-threads");
  o->chart_path = args.Get("--chart");
  o->history_path = args.Get("--history");
  o->hash = args.Has("--hash") || !o->history_path.empty();
  if (args.Has("--chart") && o->chart_path.empty()) {
    return InvalidArgument("--chart: no file");
  }
  if (args.Has("--history") && o->history_path.empty()) {
    return InvalidArgument("--history: no file");
  }
  EMBER_RETURN_IF_ERROR(args.GetInt("--embed", 0, 1, 1 << 16, &value));
  o->embed_texts = static_cast<int>(value);
  if (o->embed_texts > 0) {
    if (args.Has("-n") || args.Has("-d") || !o->grammar.empty()) {
      return InvalidArgument("--embed runs pp tests only: no -n, -d or grammar");
    }
    o->gens.clear();
  }
  o->images = args.GetAll("--image");
  if (!o->images.empty() && o->embed_texts > 0) {
    return InvalidArgument("--image: not with --embed");
  }
  if (args.Has("--draft") || args.Has("--lookup") || args.Has("--draft-max") ||
      args.Has("--draft-min") || args.Has("--draft-oracle")) {
    EMBER_RETURN_IF_ERROR(
        ReadDraftCounts(args, &o->lookup, &o->draft_max, &o->draft_min));
    EMBER_RETURN_IF_ERROR(
        args.GetFloat("--draft-oracle", -1.0, 0.0, 1.0, &o->draft_oracle));
    const int drafters =
        args.Has("--draft") + args.Has("--lookup") + args.Has("--draft-oracle");
    if (drafters == 0) {
      return InvalidArgument(
          "--draft-max and --draft-min need --draft MODEL, --lookup N "
          "or --draft-oracle A");
    }
    if (args.Has("--draft-oracle") && drafters > 1) {
      return InvalidArgument("--draft-oracle drafts alone: not with --draft or --lookup");
    }
    if (o->embed_texts > 0 || !o->grammar.empty()) {
      return InvalidArgument("--draft and --lookup: not with --embed or a grammar");
    }
    o->draft_path = args.Get("--draft");
  }
  // 0 in -p or -n means no such test (as llama-bench).
  o->prompts.erase(std::remove(o->prompts.begin(), o->prompts.end(), 0),
                   o->prompts.end());
  o->gens.erase(std::remove(o->gens.begin(), o->gens.end(), 0), o->gens.end());
  if (o->prompts.empty() && o->gens.empty()) {
    return InvalidArgument("nothing to run: -p and -n are both 0");
  }
  return Status::Ok();
}

}  // namespace ember::tools
