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
#include "runtime/session.h"
#include "tools/cli/args.h"
#include "tools/grammar/tool_grammar.h"

namespace ember::tools {

std::vector<OptionSpec> GrammarFlagSpecs();

// --grammar-bytes N|none (run, chat, inspect): SessionOptions::grammar_bytes, the arena
// bytes a grammar may take (default: DefaultGrammarBytes of the vocabulary).
OptionSpec GrammarBytesOption();
Status ParseGrammarBytesOption(const ArgParser& args, size_t* bytes);

// Where a constraint lives: a session's grammar region (null: a region of the
// constraint's own on the heap, for tools without a session).
struct GrammarRegion {
  void* memory = nullptr;
  size_t bytes = 0;
  bool session = false;  // a session's: no region there means none (refused)
};
GrammarRegion RegionOf(const Session& session);

// The GBNF text the flags ask for (a JSON Schema converted), and a name for messages.
Status GrammarText(const ArgParser& args, std::string* text, std::string* name);

// The constraint the flags ask for, set up for `tokenizer` (null when none is asked
// for); prints what it built and how long that took to stderr, as `command:`.
// `extra_stops`: ids that end the text besides the tokenizer's (a chat template's end
// of turn).
Status ReadGrammarFlags(const ArgParser& args, const Tokenizer& tokenizer,
                        const char* command,
                        std::unique_ptr<grammar::GrammarConstraint>* constraint,
                        const int32_t* extra_stops = nullptr, size_t num_extra_stops = 0,
                        const GrammarRegion& region = GrammarRegion());

// A constraint for GBNF `text` (`name` in messages), set up as ReadGrammarFlags sets one.
Status BuildConstraint(const std::string& text, const std::string& name,
                       const Tokenizer& tokenizer, const char* command,
                       std::unique_ptr<grammar::GrammarConstraint>* constraint,
                       const int32_t* extra_stops = nullptr, size_t num_extra_stops = 0,
                       const GrammarRegion& region = GrammarRegion());

// `ember chat --tools FILE`: the tools' JSON and, for a model that writes calls in
// `format`, the grammar of a call that starts where the model opens one (a lazy
// constraint over it). Empty when the flag is not given.
struct ToolsSetup {
  std::string json;
  std::vector<ToolDefinition> tools;
  std::unique_ptr<grammar::GrammarConstraint> grammar;
  std::unique_ptr<grammar::LazyConstraint> lazy;
};
Status ReadToolsFlag(const ArgParser& args, const Tokenizer& tokenizer,
                     ToolCallFormat format, const int32_t* extra_stops,
                     size_t num_extra_stops, ToolsSetup* out,
                     const GrammarRegion& region = GrammarRegion());

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CLI_GRAMMAR_FLAGS_H_
