// Grammar flags: see grammar_flags.h.
#include "tools/cli/grammar_flags.h"

#include <chrono>
#include <cstdio>
#include <string>

#include "runtime/grammar/gbnf.h"
#include "tools/grammar/json_schema.h"
#include "tools/util/files.h"

namespace ember::tools {

std::vector<OptionSpec> GrammarFlagSpecs() {
  return {
      {{"--grammar"},
       true,
       "FILE: generate only text of this GBNF grammar (llama.cpp's format; rule root)"},
      {{"--json-schema"},
       true,
       "FILE: generate only JSON that this JSON Schema accepts (the subset "
       "docs/structured-output.md lists; others are refused by name)"},
      {{"--json"}, false, "generate only a JSON value (RFC 8259)"},
  };
}

Status GrammarText(const ArgParser& args, std::string* text, std::string* name) {
  if (args.Has("--json")) {
    *text = grammar::kJsonGrammar;
    *name = "--json";
    return Status::Ok();
  }
  const bool schema = args.Has("--json-schema");
  // `ember grammar` spells --grammar -g (its first name, the parser's key).
  *name = args.Get(schema ? "--json-schema" : args.Has("-g") ? "-g" : "--grammar");
  std::vector<uint8_t> bytes;
  EMBER_RETURN_IF_ERROR(ReadFile(*name, &bytes));
  const std::string file(bytes.begin(), bytes.end());
  if (!schema) {
    *text = file;
    return Status::Ok();
  }
  return JsonSchemaTextToGbnf(file, *name, text);
}

Status ReadGrammarFlags(const ArgParser& args, const Tokenizer& tokenizer,
                        const char* command,
                        std::unique_ptr<grammar::GrammarConstraint>* constraint,
                        const int32_t* extra_stops, size_t num_extra_stops) {
  constraint->reset();
  const int asked = args.Has("--grammar") + args.Has("--json-schema") + args.Has("--json");
  if (asked == 0) return Status::Ok();
  if (asked > 1) return InvalidArgument("--grammar, --json-schema and --json: use one");
  std::string text, name;
  EMBER_RETURN_IF_ERROR(GrammarText(args, &text, &name));
  const auto start = std::chrono::steady_clock::now();
  std::vector<uint32_t> words;
  const Status compiled = grammar::CompileGbnf(text, "root", &words);
  if (!compiled.ok()) {
    return Status(compiled.code(), "%s: %s", name.c_str(), compiled.message());
  }
  auto made = std::make_unique<grammar::GrammarConstraint>();
  const size_t program_bytes = words.size() * 4;
  EMBER_RETURN_IF_ERROR(made->Init(std::move(words), tokenizer, extra_stops, num_extra_stops));
  const double ms = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start).count();
  const grammar::TokenMask::Stats stats = made->mask().stats();
  fprintf(stderr,
          "ember %s: grammar %s: program %zu bytes, matcher %zu bytes, mask tables %zu "
          "bytes (%zu dependent tokens), set up in %.0f ms\n",
          command, name.c_str(), program_bytes, made->matcher_bytes(), stats.bytes,
          stats.dependent, ms);
  *constraint = std::move(made);
  return Status::Ok();
}

}  // namespace ember::tools
