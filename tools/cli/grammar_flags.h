// The flags that constrain generation to a grammar (`ember run`, `ember chat`):
// --grammar FILE.gbnf, --json-schema FILE.json, --json; and `ember chat --tools`.
#ifndef EMBER_TOOLS_CLI_GRAMMAR_FLAGS_H_
#define EMBER_TOOLS_CLI_GRAMMAR_FLAGS_H_

#include <memory>
#include <string>
#include <vector>

#include "runtime/chat/tool_calls.h"
#include "runtime/grammar/grammar_constraint.h"
#include "runtime/grammar/lazy_constraint.h"
#include "runtime/grammar/tool_grammar.h"
#include "runtime/session.h"
#include "tools/cli/args.h"

namespace ember::tools {

std::vector<OptionSpec> GrammarFlagSpecs();

// --grammar-bytes N|none (run, chat, inspect): SessionOptions::grammar_bytes, the arena
// bytes planned for a grammar (default: exactly what the grammar the flags ask for
// takes; none without one).
OptionSpec GrammarBytesOption();

// A grammar the flags ask for: built on the heap (its load), then placed in the session's
// arena once the session is planned with room for it.
struct FlagGrammar {
  std::unique_ptr<grammar::GrammarConstraint> constraint;  // null: none asked for
  std::string name;                                        // for messages
  double build_ms = 0;
};

// SessionOptions::grammar_bytes for the flags: --grammar-bytes N (none: 0), else the
// bytes `g` takes (0 without one).
Status PlanGrammarBytes(const ArgParser& args, const FlagGrammar& g, size_t* bytes);

// Moves `g` into the session's grammar region and prints what it took and how long it
// took to build to stderr, as `command:`. Refused, naming the bytes needed, when the
// region is too small (--grammar-bytes). Nothing to do when none is asked for.
Status PlaceGrammar(const Session& session, const char* command, FlagGrammar* g);

// The GBNF text the flags ask for (a JSON Schema converted), and a name for messages.
Status GrammarText(const ArgParser& args, std::string* text, std::string* name);

// The grammar --grammar, --json-schema or --json asks for, built for `tokenizer`
// (none when none is asked for). `extra_stops`: ids that end the text besides the
// tokenizer's (a chat template's end of turn).
Status ReadGrammarFlags(const ArgParser& args, const Tokenizer& tokenizer, FlagGrammar* g,
                        const int32_t* extra_stops = nullptr, size_t num_extra_stops = 0);

// A grammar for GBNF `text` (`name` in messages), built as ReadGrammarFlags builds one.
Status BuildGrammar(const std::string& text, const std::string& name,
                    const Tokenizer& tokenizer, FlagGrammar* g,
                    const int32_t* extra_stops = nullptr, size_t num_extra_stops = 0);

// `ember chat --tools FILE`: the tools' JSON and, for a model that writes calls in
// `format`, the grammar of a call (placed with PlaceGrammar, then StartTools makes the
// lazy constraint over it that starts where the model opens a call). Empty when the
// flag is not given.
struct ToolsSetup {
  std::string json;
  std::vector<grammar::ToolDefinition> tools;
  ToolCallFormat format = ToolCallFormat::kNone;
  FlagGrammar grammar;
  std::unique_ptr<grammar::LazyConstraint> lazy;
};
Status ReadToolsFlag(const ArgParser& args, const Tokenizer& tokenizer,
                     ToolCallFormat format, const int32_t* extra_stops,
                     size_t num_extra_stops, ToolsSetup* out);
Status StartTools(const Tokenizer& tokenizer, ToolsSetup* tools);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CLI_GRAMMAR_FLAGS_H_
