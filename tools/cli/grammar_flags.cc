// Grammar flags: see grammar_flags.h.
#include "tools/cli/grammar_flags.h"

#include <chrono>
#include <cstdio>
#include <string>

#include "runtime/grammar/gbnf.h"
#include "tools/grammar/json_schema.h"
#include "tools/grammar/tool_grammar.h"
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
  if (args.Has("--tools")) {  // `ember grammar --tools FILE --tool-format F`
    *name = args.Get("--tools");
    const std::string f = args.Get("--tool-format", "hermes");
    ToolCallFormat format = ToolCallFormat::kNone;
    if (f == "hermes") format = ToolCallFormat::kHermes;
    if (f == "llama3") format = ToolCallFormat::kLlama3;
    if (f == "mistral") format = ToolCallFormat::kMistral;
    if (format == ToolCallFormat::kNone) {
      return InvalidArgument("--tool-format %s: hermes, llama3 or mistral", f.c_str());
    }
    std::vector<uint8_t> bytes;
    EMBER_RETURN_IF_ERROR(ReadFile(*name, &bytes));
    std::vector<ToolDefinition> tools;
    EMBER_RETURN_IF_ERROR(ReadTools(std::string(bytes.begin(), bytes.end()), *name, &tools));
    return ToolCallGrammar(tools, format, text);
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
  return BuildConstraint(text, name, tokenizer, command, constraint, extra_stops,
                         num_extra_stops);
}

Status BuildConstraint(const std::string& text, const std::string& name,
                       const Tokenizer& tokenizer, const char* command,
                       std::unique_ptr<grammar::GrammarConstraint>* constraint,
                       const int32_t* extra_stops, size_t num_extra_stops) {
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

Status ReadToolsFlag(const ArgParser& args, const Tokenizer& tokenizer,
                     ToolCallFormat format, const int32_t* extra_stops,
                     size_t num_extra_stops, ToolsSetup* out) {
  *out = ToolsSetup();
  if (!args.Has("--tools")) return Status::Ok();
  if (args.Has("--grammar") || args.Has("--json-schema") || args.Has("--json")) {
    return InvalidArgument(
        "--tools constrains the calls; --grammar, --json-schema and --json the whole "
        "reply: use one");
  }
  const std::string path = args.Get("--tools");
  std::vector<uint8_t> bytes;
  EMBER_RETURN_IF_ERROR(ReadFile(path, &bytes));
  out->json.assign(bytes.begin(), bytes.end());
  EMBER_RETURN_IF_ERROR(ReadTools(out->json, path, &out->tools));
  out->json = ToolsJson(out->tools);  // as templates read them: {"type", "function"}
  std::string gbnf;
  const Status made = ToolCallGrammar(out->tools, format, &gbnf);
  if (!made.ok()) return Status(made.code(), "%s: %s", path.c_str(), made.message());
  EMBER_RETURN_IF_ERROR(BuildConstraint(gbnf, path + " (calls)", tokenizer, "chat",
                                        &out->grammar, extra_stops, num_extra_stops));
  const ToolCallSyntax syntax = SyntaxOf(format);
  const grammar::LazyTrigger trigger = grammar::ToolCallTrigger(syntax);
  out->lazy = std::make_unique<grammar::LazyConstraint>();
  return out->lazy->Init(out->grammar.get(), trigger, tokenizer);
}

}  // namespace ember::tools
