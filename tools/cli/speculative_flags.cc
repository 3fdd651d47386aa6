// The speculative decoding flags (see speculative_flags.h).
#include "tools/cli/speculative_flags.h"

#include <cstdio>
#include <string>

namespace ember::tools {

std::vector<OptionSpec> SpeculativeFlagSpecs() {
  return {
      {{"--draft"},
       true,
       "speculative decoding with this draft model (.ember; the same vocabulary: a "
       "smaller model of the family, or a q4 copy of a q8 or f16 target): the same "
       "text greedily, the same distribution when sampling"},
      {{"--draft-max"},
       true,
       "drafted tokens verified per pass at most, 1 to 32 (default 8); the length in "
       "use follows the acceptance rate"},
      {{"--draft-min"},
       true,
       "drafted tokens per pass at least (default 0: as the acceptance rate says); "
       "--draft-min N --draft-max N fixes the length"},
      {{"--lookup"},
       true,
       "speculative decoding by prompt lookup: draft what followed the last N tokens "
       "(1 to 8, then shorter) where they occurred before in the context (with --draft: "
       "the draft model fills in where the lookup finds nothing)"},
  };
}

Status ReadDraftCounts(const ArgParser& args, uint32_t* lookup, uint32_t* draft_max,
                       uint32_t* draft_min) {
  int64_t n = 0, most = 0, least = 0;
  EMBER_RETURN_IF_ERROR(args.GetInt("--lookup", 0, 1, kMaxLookupNgram, &n));
  EMBER_RETURN_IF_ERROR(args.GetInt("--draft-max", 8, 1, kMaxDraftTokens, &most));
  EMBER_RETURN_IF_ERROR(args.GetInt("--draft-min", 0, 0, most, &least));
  *lookup = static_cast<uint32_t>(n);
  *draft_max = static_cast<uint32_t>(most);
  *draft_min = static_cast<uint32_t>(least);
  return Status::Ok();
}

Status ReadSpeculativeFlags(const ArgParser& args, FlagSpeculation* flags,
                            SessionOptions* options) {
  uint32_t lookup = 0, draft_max = 0, draft_min = 0;
  EMBER_RETURN_IF_ERROR(ReadDraftCounts(args, &lookup, &draft_max, &draft_min));
  if (!args.Has("--draft") && !args.Has("--lookup")) {
    if (args.Has("--draft-max") || args.Has("--draft-min")) {
      return InvalidArgument(
          "--draft-max and --draft-min need --draft MODEL or --lookup N");
    }
    return Status::Ok();
  }
  if (args.Has("--draft")) {
    auto model = Model::Open(args.Get("--draft").c_str());
    if (!model.ok()) {
      return Status(model.status().code(), "--draft %s: %s", args.Get("--draft").c_str(),
                    model.status().message());
    }
    flags->draft_model = std::move(*model);
  }
  flags->lookup = lookup;
  flags->draft_max = draft_max;
  flags->draft_min = draft_min;
  options->draft_max = flags->draft_max;
  return Status::Ok();
}

Status StartSpeculation(Session& target, const SessionOptions& options,
                        const ThreadPool* pool, FlagSpeculation* flags) {
  if (!flags->enabled()) return Status::Ok();
  auto speculator = Speculator::Create(&target);
  if (!speculator.ok()) return speculator.status();
  flags->speculator.emplace(std::move(*speculator));
  EMBER_RETURN_IF_ERROR(flags->speculator->SetLookup(flags->lookup));
  EMBER_RETURN_IF_ERROR(flags->speculator->SetDraftMin(flags->draft_min));
  if (!flags->draft_model) return Status::Ok();
  EMBER_RETURN_IF_ERROR(OpenDraftSession(*flags->draft_model, target, options, pool,
                                         &flags->draft_session));
  const Status set = flags->speculator->SetDraft(&*flags->draft_session);
  if (!set.ok()) return Status(set.code(), "--draft: %s", set.message());
  return Status::Ok();
}

Status OpenDraftSession(const Model& draft, const Session& target,
                        const SessionOptions& options, const ThreadPool* pool,
                        std::optional<Session>* session) {
  SessionOptions draft_options;
  draft_options.max_context = static_cast<uint32_t>(target.max_context());
  draft_options.kv_type = options.kv_type;
  draft_options.isa = options.isa;
  draft_options.baked_prompt = false;
  auto created = Session::Create(draft, draft_options, pool);
  if (!created.ok()) {
    return Status(created.status().code(), "the draft model's session: %s",
                  created.status().message());
  }
  session->emplace(std::move(*created));
  return Status::Ok();
}

void PrintSpeculativeStats(const char* name, const FlagSpeculation& flags,
                           size_t generated) {
  if (!flags.speculator) return;
  const SpeculativeStats& s = flags.speculator->stats();
  // The first token comes from the prompt's pass; each round's pass gives the rest.
  const size_t after_first = generated > 0 ? generated - 1 : 0;
  fprintf(stderr,
          "ember %s: speculative: %zu tokens after the first in %llu passes of the model "
          "(%.2f a pass); %llu of %llu drafted tokens accepted (%.1f %%)%s",
          name, after_first, static_cast<unsigned long long>(s.rounds),
          s.rounds ? double(after_first) / double(s.rounds) : 0.0,
          static_cast<unsigned long long>(s.accepted),
          static_cast<unsigned long long>(s.drafted),
          s.drafted ? 100.0 * double(s.accepted) / double(s.drafted) : 0.0,
          flags.draft_session ? "" : "\n");
  if (flags.draft_session) {
    fprintf(stderr, "; %llu draft model passes\n",
            static_cast<unsigned long long>(s.draft_passes));
  }
}

}  // namespace ember::tools
