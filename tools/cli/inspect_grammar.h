// `ember inspect --grammar FILE | --json-schema FILE | --json`: the arena bytes a grammar
// takes in a session of the model (cmd_inspect_grammar.cc).
#ifndef EMBER_TOOLS_CLI_INSPECT_GRAMMAR_H_
#define EMBER_TOOLS_CLI_INSPECT_GRAMMAR_H_

#include "runtime/model/model.h"
#include "runtime/session_plan.h"
#include "runtime/status.h"
#include "tools/cli/args.h"
#include "tools/cli/grammar_flags.h"

namespace ember::tools {

// The grammar the flags ask for (none without one), built for the model's vocabulary
// and its chat template's end-of-turn ids, as a chat places it.
Status ReadInspectGrammar(const ArgParser& args, const Model& model, FlagGrammar* g);
// Prints `g`'s bytes by part against the plan's grammar buffer; ResourceExhausted (after
// printing) when it does not fit there.
Status PrintGrammarBytes(const FlagGrammar& g, const Model& model, const SessionPlan& plan);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CLI_INSPECT_GRAMMAR_H_
