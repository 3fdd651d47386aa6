// `ember inspect` with a grammar: see inspect_grammar.h.
#include <cstdio>
#include <string>
#include <vector>

#include "runtime/grammar/grammar_constraint.h"
#include "tools/cli/grammar_flags.h"
#include "tools/cli/inspect_grammar.h"

namespace ember::tools {

Status ReadInspectGrammar(const ArgParser& args, const Model& model, FlagGrammar* g) {
  const ChatProgramTables& t = model.chat_template().tables();
  return ReadGrammarFlags(args, model.tokenizer(), g, t.end_of_turn_ids,
                          t.num_end_of_turn_ids);
}

Status PrintGrammarBytes(const FlagGrammar& flag, const Model& model,
                         const SessionPlan& plan) {
  if (!flag.constraint) return Status::Ok();
  const grammar::GrammarConstraint& g = *flag.constraint;
  const std::string& name = flag.name;
  const double ms = flag.build_ms;
  const grammar::GrammarBytes& b = g.bytes();
  const grammar::TokenMask::Stats s = g.mask().stats();
  const grammar::MatcherLimits limits;
  printf(
      "\ngrammar %s (%u rules), in the arena's \"grammar\" buffer (built in %.0f ms)\n",
      name.c_str(), g.num_rules(), ms);
  printf("  %-12s %12zu bytes  the compiled program's words\n", "program", b.program);
  printf(
      "  %-12s %12zu bytes  parse stacks and frames (%u stacks, %u frames, %u saved "
      "words)\n",
      "matcher", b.matcher, limits.max_stacks, limits.max_frames, limits.max_saved);
  printf("  %-12s %12zu bytes  %zu tokens in byte order (of %u)\n", "vocabulary",
         b.vocabulary, g.order_size(), model.tokenizer().vocab_size());
  printf("  %-12s %12zu bytes  %zu entries, %zu allowed sets, %zu dependent tokens\n",
         "mask tables", b.tables, s.entries, s.allowed_sets, s.dependent);
  printf("  %-12s %12zu bytes  the allowed bits and stop ids\n", "mask", b.mask);
  printf("  %-12s %12zu bytes  of %zu planned (--grammar-bytes)\n", "total", b.total,
         plan.grammar_bytes);
  if (b.total <= plan.grammar_bytes) return Status::Ok();
  return ResourceExhausted(
      "%s needs %zu bytes of the session's arena, %zu are planned: "
      "give --grammar-bytes %zu or more",
      name.c_str(), b.total, plan.grammar_bytes, b.total);
}

}  // namespace ember::tools
