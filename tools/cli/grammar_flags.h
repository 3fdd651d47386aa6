// The flags that constrain generation to a grammar (`ember run`; `ember chat` next):
// --grammar FILE.gbnf, --json.
#ifndef EMBER_TOOLS_CLI_GRAMMAR_FLAGS_H_
#define EMBER_TOOLS_CLI_GRAMMAR_FLAGS_H_

#include <memory>
#include <vector>

#include "runtime/grammar/grammar_constraint.h"
#include "tools/cli/args.h"

namespace ember::tools {

std::vector<OptionSpec> GrammarFlagSpecs();

// The constraint the flags ask for, set up for `tokenizer` (null when none is asked
// for); prints what it built and how long that took to stderr, as `command:`.
Status ReadGrammarFlags(const ArgParser& args, const Tokenizer& tokenizer,
                        const char* command,
                        std::unique_ptr<grammar::GrammarConstraint>* constraint);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CLI_GRAMMAR_FLAGS_H_
