// Grammar flags: see grammar_flags.h.
#include "tools/cli/grammar_flags.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "runtime/grammar/gbnf.h"
#include "runtime/grammar/json_schema.h"
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
          "N|none: arena bytes planned for a grammar (default: what the grammar given "
          "takes, none without one; `ember inspect --grammar FILE` tells it)"};
}

Status PlanGrammarBytes(const ArgParser& args, const FlagGrammar& g, size_t* bytes) {
  if (!args.Has("--grammar-bytes")) {
    *bytes = g.constraint ? g.constraint->bytes().total : 0;
    return Status::Ok();
  }
  const std::string v = args.Get("--grammar-bytes");
  if (v == "none") {
    *bytes = 0;
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

Status PlaceGrammar(const Session& session, const char* command, FlagGrammar* g) {
  if (!g->constraint) return Status::Ok();
  grammar::GrammarConstraint& c = *g->constraint;
  const Status fits = c.Fits(session.grammar_memory(), session.grammar_bytes());
  if (!fits.ok()) {
    return Status(fits.code(), "%s: %s: plan it with --grammar-bytes", g->name.c_str(),
                  fits.message());
  }
  EMBER_RETURN_IF_ERROR(c.Place(session.grammar_memory(), session.grammar_bytes()));
  const grammar::GrammarBytes& b = c.bytes();
  fprintf(stderr,
          "ember %s: grammar %s: %zu bytes of the session's arena (program %zu, matcher "
          "%zu, vocabulary %zu, mask tables %zu with %zu dependent tokens, mask %zu), "
          "built in %.0f ms\n",
          command, g->name.c_str(), b.total, b.program, b.matcher, b.vocabulary, b.tables,
          c.mask().stats().dependent, b.mask, g->build_ms);
  return Status::Ok();
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
    if (f == "phi4-mini") format = ToolCallFormat::kPhi4Mini;
    if (format == ToolCallFormat::kNone) {
      return InvalidArgument("--tool-format %s: hermes, llama3, mistral or phi4-mini",
                             f.c_str());
    }
    std::vector<uint8_t> bytes;
    EMBER_RETURN_IF_ERROR(ReadFile(*name, &bytes));
    std::vector<grammar::ToolDefinition> tools;
    EMBER_RETURN_IF_ERROR(grammar::ReadTools(
        std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
        name->c_str(), &tools));
    return grammar::ToolCallGrammar(tools, format, text);
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
  return grammar::JsonSchemaTextToGbnf(file, name->c_str(), text);
}

Status ReadGrammarFlags(const ArgParser& args, const Tokenizer& tokenizer, FlagGrammar* g,
                        const int32_t* extra_stops, size_t num_extra_stops) {
  *g = FlagGrammar();
  const int asked = args.Has("--grammar") + args.Has("--json-schema") + args.Has("--json");
  if (asked == 0) return Status::Ok();
  if (asked > 1) return InvalidArgument("--grammar, --json-schema and --json: use one");
  std::string text, name;
  EMBER_RETURN_IF_ERROR(GrammarText(args, &text, &name));
  return BuildGrammar(text, name, tokenizer, g, extra_stops, num_extra_stops);
}

Status BuildGrammar(const std::string& text, const std::string& name,
                    const Tokenizer& tokenizer, FlagGrammar* g, const int32_t* extra_stops,
                    size_t num_extra_stops) {
  *g = FlagGrammar();
  const auto start = std::chrono::steady_clock::now();
  std::vector<uint32_t> words;
  const Status compiled = grammar::CompileGbnf(text, "root", &words);
  if (!compiled.ok()) {
    return Status(compiled.code(), "%s: %s", name.c_str(), compiled.message());
  }
  auto made = std::make_unique<grammar::GrammarConstraint>();
  const Status built =
      made->Build(std::move(words), tokenizer, extra_stops, num_extra_stops);
  if (!built.ok()) return Status(built.code(), "%s: %s", name.c_str(), built.message());
  g->build_ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start).count();
  g->constraint = std::move(made);
  g->name = name;
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
  EMBER_RETURN_IF_ERROR(grammar::ReadTools(out->json, path.c_str(), &out->tools));
  // As templates read them: each {"type": "function", "function": {...}}.
  out->json = grammar::ToolsJson(out->tools);
  std::string gbnf;
  const Status made = grammar::ToolCallGrammar(out->tools, format, &gbnf);
  if (!made.ok()) return Status(made.code(), "%s: %s", path.c_str(), made.message());
  out->format = format;
  return BuildGrammar(gbnf, path + " (calls)", tokenizer, &out->grammar, extra_stops,
                      num_extra_stops);
}

Status StartTools(const Tokenizer& tokenizer, ToolsSetup* tools) {
  if (!tools->grammar.constraint) return Status::Ok();
  const grammar::LazyTrigger trigger = grammar::ToolCallTrigger(SyntaxOf(tools->format));
  tools->lazy = std::make_unique<grammar::LazyConstraint>();
  return tools->lazy->Init(tools->grammar.constraint.get(), trigger, tokenizer);
}

}  // namespace ember::tools
