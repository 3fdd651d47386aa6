// Grammar flags: see grammar_flags.h.
#include "tools/cli/grammar_flags.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
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

OptionSpec GrammarBytesOption() {
  return {{"--grammar-bytes"},
          true,
          "N|none: arena bytes planned for a grammar (default: 256 KiB + 80 per "
          "vocabulary token; `ember inspect --grammar FILE` tells what one needs)"};
}

Status ParseGrammarBytesOption(const ArgParser& args, size_t* bytes) {
  if (!args.Has("--grammar-bytes")) return Status::Ok();
  const std::string v = args.Get("--grammar-bytes");
  if (v == "none") {
    *bytes = kNoGrammar;
    return Status::Ok();
  }
  char* end = nullptr;
  const unsigned long long n = strtoull(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || v[0] == '-' || n == 0 || n >= SIZE_MAX) {
    return InvalidArgument("--grammar-bytes %s: not a positive number of bytes or none",
                           v.c_str());
  }
  *bytes = static_cast<size_t>(n);
  return Status::Ok();
}

GrammarRegion RegionOf(const Session& session) {
  GrammarRegion r;
  r.memory = session.grammar_memory();
  r.bytes = session.grammar_bytes();
  r.session = true;
  return r;
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
                        const int32_t* extra_stops, size_t num_extra_stops,
                        const GrammarRegion& region) {
  constraint->reset();
  const int asked = args.Has("--grammar") + args.Has("--json-schema") + args.Has("--json");
  if (asked == 0) return Status::Ok();
  if (asked > 1) return InvalidArgument("--grammar, --json-schema and --json: use one");
  std::string text, name;
  EMBER_RETURN_IF_ERROR(GrammarText(args, &text, &name));
  return BuildConstraint(text, name, tokenizer, command, constraint, extra_stops,
                         num_extra_stops, region);
}

Status BuildConstraint(const std::string& text, const std::string& name,
                       const Tokenizer& tokenizer, const char* command,
                       std::unique_ptr<grammar::GrammarConstraint>* constraint,
                       const int32_t* extra_stops, size_t num_extra_stops,
                       const GrammarRegion& region) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<uint32_t> words;
  const Status compiled = grammar::CompileGbnf(text, "root", &words);
  if (!compiled.ok()) {
    return Status(compiled.code(), "%s: %s", name.c_str(), compiled.message());
  }
  auto made = std::make_unique<grammar::GrammarConstraint>();
  EMBER_RETURN_IF_ERROR(
      made->Build(std::move(words), tokenizer, extra_stops, num_extra_stops));
  if (region.session) {
    const Status fits = made->Fits(region.memory, region.bytes);
    if (!fits.ok()) {
      return Status(fits.code(), "%s: %s: plan more with --grammar-bytes", name.c_str(),
                    fits.message());
    }
  }
  EMBER_RETURN_IF_ERROR(made->Place(region.memory, region.bytes));
  const double ms = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start).count();
  const grammar::GrammarBytes& b = made->bytes();
  fprintf(stderr,
          "ember %s: grammar %s: %zu bytes of the %s (program %zu, matcher %zu, "
          "vocabulary %zu, mask tables %zu with %zu dependent tokens, mask %zu), set up "
          "in %.0f ms\n",
          command, name.c_str(), b.total, region.session ? "session's arena" : "heap",
          b.program, b.matcher, b.vocabulary, b.tables, made->mask().stats().dependent,
          b.mask, ms);
  *constraint = std::move(made);
  return Status::Ok();
}

Status ReadToolsFlag(const ArgParser& args, const Tokenizer& tokenizer,
                     ToolCallFormat format, const int32_t* extra_stops,
                     size_t num_extra_stops, ToolsSetup* out,
                     const GrammarRegion& region) {
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
                                        &out->grammar, extra_stops, num_extra_stops,
                                        region));
  const ToolCallSyntax syntax = SyntaxOf(format);
  const grammar::LazyTrigger trigger = grammar::ToolCallTrigger(syntax);
  out->lazy = std::make_unique<grammar::LazyConstraint>();
  return out->lazy->Init(out->grammar.get(), trigger, tokenizer);
}

}  // namespace ember::tools
