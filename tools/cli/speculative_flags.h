// The speculative decoding options `ember run`, `ember chat` and `ember bench` share:
// --draft MODEL (a draft model sharing the vocabulary), --draft-max N, --draft-min N and
// --lookup N (prompt lookup with n-grams of up to N tokens). They plan the target session
// for it (SessionOptions::draft_max), then give it a Speculator (runtime/speculative/).
#ifndef EMBER_TOOLS_CLI_SPECULATIVE_FLAGS_H_
#define EMBER_TOOLS_CLI_SPECULATIVE_FLAGS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "runtime/model/model.h"
#include "runtime/pool/thread_pool.h"
#include "runtime/session.h"
#include "runtime/speculative/speculator.h"
#include "runtime/status.h"
#include "tools/cli/args.h"

namespace ember::tools {

std::vector<OptionSpec> SpeculativeFlagSpecs();

struct FlagSpeculation {
  std::unique_ptr<Model> draft_model;  // --draft
  std::optional<Session> draft_session;
  std::optional<Speculator> speculator;
  uint32_t lookup = 0;     // --lookup
  uint32_t draft_max = 0;  // --draft-max; 0: neither flag given
  uint32_t draft_min = 0;  // --draft-min
  bool enabled() const { return draft_max > 0; }
};

// --lookup (0 when not given), --draft-max (8) and --draft-min (0), range-checked.
Status ReadDraftCounts(const ArgParser& args, uint32_t* lookup, uint32_t* draft_max,
                       uint32_t* draft_min);
// Reads the flags (opening --draft's model) and plans the target's session for them
// (options->draft_max).
Status ReadSpeculativeFlags(const ArgParser& args, FlagSpeculation* flags,
                            SessionOptions* options);
// The draft model's session (its context the target's, the same KV cache type) and the
// target's Speculator; nothing when the flags ask for none.
Status StartSpeculation(Session& target, const SessionOptions& options,
                        const ThreadPool* pool, FlagSpeculation* flags);
// A session over the draft model for `target` (its context, KV cache type and ISA tier;
// no baked prompt), into *session.
Status OpenDraftSession(const Model& draft, const Session& target,
                        const SessionOptions& options, const ThreadPool* pool,
                        std::optional<Session>* session);
// "ember NAME: speculative: ..." on stderr: passes, drafted and accepted tokens.
void PrintSpeculativeStats(const char* name, const FlagSpeculation& flags,
                           size_t generated);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CLI_SPECULATIVE_FLAGS_H_
