// `ember grammar`: compiles a GBNF grammar and prints its program's size and the
// matcher's memory, or checks texts against it (as llama.cpp's gbnf-validator does):
// each is a whole sentence (complete), the start of one (prefix), or neither (reject);
// or, with a model's or a tokenizer directory's vocabulary, times the mask of the tokens
// the grammar allows after a text.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "runtime/grammar/gbnf.h"
#include "runtime/grammar/grammar_matcher.h"
#include "runtime/grammar/grammar_program.h"
#include "runtime/grammar/token_mask.h"
#include "runtime/model/model.h"
#include "tools/cli/args.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/commands.h"
#include "tools/cli/grammar_flags.h"
#include "tools/util/files.h"
#include "tools/util/json_util.h"

namespace ember::tools {
namespace {

ArgParser MakeParser() {
  return ArgParser({
      {{"-g", "--grammar"}, true, "grammar file (GBNF, llama.cpp's format)"},
      {{"--json-schema"},
       true,
       "a JSON Schema instead of -g: converted to GBNF (printed when nothing else is "
       "asked)"},
      {{"--json"}, false, "the grammar of any JSON value instead of -g"},
      {{"--tools"},
       true,
       "tools (OpenAI-style function definitions, JSON) instead of -g: the grammar of "
       "one call in --tool-format's syntax, its arguments held to the function's "
       "parameter schema (printed when nothing else is asked; what `ember chat --tools` "
       "starts where the model opens a call)"},
      {{"--tool-format"},
       true,
       "with --tools: hermes (<tool_call> tags: Qwen2.5, Qwen3; default), llama3, "
       "mistral or phi4-mini"},
      {{"--root"}, true, "the rule to start from (default root)"},
      {{"--text"}, true, "check one text: prints complete, prefix or reject"},
      {{"--check"},
       true,
       "check the texts of a file of JSON strings, one per line: prints complete, "
       "prefix or reject for each (or error: MESSAGE past the matcher's limits)"},
      {{"-m", "--model"}, true, "with --mask: the vocabulary of this model (.ember)"},
      {{"--tokenizer"}, true, "with --mask: a Hugging Face tokenizer directory's"},
      {{"--mask"},
       true,
       "after this text, the tokens the grammar allows: prints their number and the "
       "median time of a mask over --repeat runs"},
      {{"--repeat"}, true, "masks to time (default 20)"},
      {{"--list"}, false, "with --mask: also print each allowed token's id, one per line"},
      {{"--max-stacks"}, true, "the matcher's limit of parse stacks at once (default 256)"},
      {{"--max-frames"}, true, "the matcher's limit of frames of all stacks (default 4096)"},
      {{"--max-expansion"},
       true,
       "the matcher's limit of parse positions one step expands (default 4096, at most "
       "65535)"},
      {{"-h", "--help"}, false, "show this help"},
  });
}

const char* Classify(grammar::GrammarMatcher* matcher, const std::string& text,
                     Status* error) {
  *error = matcher->Reset();
  if (error->ok()) *error = matcher->AcceptText(text);
  if (error->code() == StatusCode::kInvalidArgument) {
    *error = Status::Ok();
    return "reject";
  }
  if (!error->ok()) return "error";
  return matcher->CanEnd() ? "complete" : "prefix";
}

// The allowed tokens after --mask's text, timed: what a sampler under a grammar pays per
// token for the mask.
Status Mask(const ArgParser& args, const grammar::Program* program,
            const grammar::MatcherLimits& limits, grammar::GrammarMatcher* matcher) {
  std::unique_ptr<Model> model;
  LoadedTokenizer loaded;
  const Tokenizer* tokenizer = nullptr;
  EMBER_RETURN_IF_ERROR(OpenTokenizer(args, &model, &loaded, &tokenizer));
  int64_t repeat = 0;
  EMBER_RETURN_IF_ERROR(args.GetInt("--repeat", 20, 1, 100000, &repeat));
  const uint32_t vocab = tokenizer->vocab_size();
  const auto started = std::chrono::steady_clock::now();
  grammar::TokenOrder order;
  // The bytes a token adds in the middle of a text (a previous id that is never BOS).
  order.Build(vocab, [&](int32_t id) { return tokenizer->Decode(int32_t(vocab), id); });
  const double sort_ms = std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - started).count();
  const auto built = std::chrono::steady_clock::now();
  grammar::TokenMask mask;
  EMBER_RETURN_IF_ERROR(mask.Build(*program, order, limits));
  const double build_ms = std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - built).count();
  EMBER_RETURN_IF_ERROR(matcher->AcceptText(args.Get("--mask")));
  std::vector<uint32_t> bits(order.mask_words()), walked(order.mask_words());
  // Median microseconds of `repeat` runs of a mask.
  const auto time = [&](auto&& run, int64_t runs, double* median) {
    std::vector<double> us;
    for (int64_t r = 0; r < runs; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      EMBER_RETURN_IF_ERROR(run());
      us.push_back(std::chrono::duration<double, std::micro>(
                       std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(us.begin(), us.end());
    *median = us[us.size() / 2];
    return Status::Ok();
  };
  size_t count = 0, walked_count = 0;
  double us = 0, walk_us = 0;
  EMBER_RETURN_IF_ERROR(time([&] { return mask.Allowed(matcher, bits.data(), &count); },
                             repeat, &us));
  EMBER_RETURN_IF_ERROR(time(
      [&] {
        return grammar::TokenMask::AllowedByWalk(matcher, order, walked.data(),
                                                 &walked_count);
      },
      std::min<int64_t>(repeat, 5), &walk_us));
  if (bits != walked) {
    return Internal("grammar: the mask's tables and its walk disagree (%zu and %zu tokens)",
                    count, walked_count);
  }
  if (args.Has("--list")) {
    for (uint32_t id = 0; id < vocab; ++id) {
      if ((bits[id >> 5] >> (id & 31)) & 1) printf("%u\n", id);
    }
  }
  const grammar::TokenMask::Stats stats = mask.stats();
  printf("%zu of %u tokens allowed%s; mask %.1f us (median of %lld; every token walked: "
         "%.1f us)\n"
         "tables: %zu entries, %zu distinct allowed sets, %zu dependent tokens, "
         "%zu bytes, built in %.1f ms; vocabulary sorted in %.1f ms\n",
         count, vocab, matcher->CanEnd() ? " (and the end of text)" : "", us,
         static_cast<long long>(repeat), walk_us, stats.entries, stats.allowed_sets,
         stats.dependent, stats.bytes, build_ms, sort_ms);
  return Status::Ok();
}

Status Grammar(const ArgParser& args) {
  const int asked =
      args.Has("-g") + args.Has("--json-schema") + args.Has("--json") + args.Has("--tools");
  if (asked == 0) {
    return InvalidArgument("missing -g GRAMMAR (or --json-schema, --json, --tools)");
  }
  if (asked > 1) return InvalidArgument("-g, --json-schema, --json and --tools: use one");
  std::string text, name;
  EMBER_RETURN_IF_ERROR(GrammarText(args, &text, &name));
  const bool actions = args.Has("--mask") || args.Has("--text") || args.Has("--check");
  if (!args.Has("-g") && !actions) {
    fwrite(text.data(), 1, text.size(), stdout);
    return Status::Ok();
  }
  std::vector<uint32_t> words;
  const std::string root = args.Has("--root") ? args.Get("--root") : "root";
  const Status compiled = grammar::CompileGbnf(text, root, &words);
  if (!compiled.ok()) {
    return Status(compiled.code(), "%s: %s", name.c_str(), compiled.message());
  }
  grammar::Program program;
  EMBER_RETURN_IF_ERROR(program.Bind(words.data(), words.size()));
  grammar::MatcherLimits limits;
  int64_t stacks = 0, frames = 0, expansion = 0;
  EMBER_RETURN_IF_ERROR(args.GetInt("--max-stacks", limits.max_stacks, 1, 1 << 20, &stacks));
  EMBER_RETURN_IF_ERROR(args.GetInt("--max-frames", limits.max_frames, 1, 1 << 24, &frames));
  limits.max_stacks = static_cast<uint32_t>(stacks);
  EMBER_RETURN_IF_ERROR(
      args.GetInt("--max-expansion", limits.max_expansion, 1, 0xFFFF, &expansion));
  limits.max_frames = static_cast<uint32_t>(frames);
  limits.max_expansion = static_cast<uint32_t>(expansion);
  const size_t matcher_bytes = grammar::GrammarMatcher::RequiredBytes(limits);
  std::vector<uint64_t> memory((matcher_bytes + 7) / 8);
  grammar::GrammarMatcher matcher;
  EMBER_RETURN_IF_ERROR(matcher.Init(&program, limits, memory.data(), matcher_bytes));

  if (args.Has("--mask")) return Mask(args, &program, limits, &matcher);
  if (args.Has("--text")) {
    Status error;
    const char* verdict = Classify(&matcher, args.Get("--text"), &error);
    EMBER_RETURN_IF_ERROR(error);
    printf("%s\n", verdict);
    return Status::Ok();
  }
  if (args.Has("--check")) {
    std::ifstream in(args.Get("--check"));
    if (!in) return IoError("cannot read %s", args.Get("--check").c_str());
    std::string line;
    for (size_t number = 1; std::getline(in, line); ++number) {
      std::string sentence;
      EMBER_RETURN_IF_ERROR(CatchJsonErrors(
          args.Get("--check") + " line " + std::to_string(number), [&] {
            const Json value = Json::parse(line);
            if (!value.is_string()) {
              return InvalidArgument("a line is not a JSON string");
            }
            sentence = value.get<std::string>();
            return Status::Ok();
          }));
      Status error;
      const char* verdict = Classify(&matcher, sentence, &error);
      if (!error.ok()) {
        printf("error: %s\n", error.message());
      } else {
        printf("%s\n", verdict);
      }
    }
    return Status::Ok();
  }
  printf("%s: %u rules, program %zu bytes; matcher %zu bytes (%u stacks, %u frames)\n",
         name.c_str(), program.num_rules(), words.size() * sizeof(uint32_t),
         matcher_bytes, limits.max_stacks, limits.max_frames);
  return Status::Ok();
}

}  // namespace

int GrammarCommand(int argc, char** argv) {
  return RunSubcommand("grammar",
                       "usage: ember grammar (-g GRAMMAR.gbnf | --json-schema SCHEMA.json "
                       "| --json) [--root NAME] [--text TEXT | --check TEXTS.jsonl | "
                       "(-m MODEL | --tokenizer DIR) --mask TEXT]\n",
                       MakeParser(), argc, argv, &Grammar);
}

}  // namespace ember::tools
