// The flags that constrain generation to a grammar (`ember run`; `ember chat` next):
// --grammar FILE.gbnf, --json-schema FILE.json, --json.
#ifndef EMBER_TOOLS_CLI_GRAMMAR_FLAGS_H_
#define EMBER_TOOLS_CLI_GRAMMAR_FLAGS_H_

#include <memory>
#include <string>
#include <vector>

#include "runtime/grammar/grammar_constraint.h"
#include "tools/cli/args.h"

namespace ember::tools {

std::vector<OptionSpec> GrammarFlagSpecs();

// The GBNF text the flags ask for (a JSON Schema converted), and a name for messages.
Status GrammarText(const ArgParser& args, std::string* text, std::string* name);

// The constraint the flags ask for, set up for `tokenizer` (null when none is asked
// for); prints what it built and how long that took to stderr, as `command:`.
// `extra_stops`: ids that end the text besides the tokenizer's (a chat template's end
// of turn).
Status ReadGrammarFlags(const ArgParser& args, const Tokenizer& tokenizer,
                        const char* command,
                        std::unique_ptr<grammar::GrammarConstraint>* constraint,
                        const int32_t* extra_stops = nullptr, size_t num_extra_stops = 0);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CLI_GRAMMAR_FLAGS_H_
