// The C API's speculative decoding (ember_speculative.h): a session's Speculator, made
// over its arena region at the first setting, used by ember_generate and
// ember_chat_generate.
#include "runtime/api/c_api_internal.h"

using ember::c_api::NullArgument;
using ember::c_api::Report;

namespace {

// The session's speculator, made now if it has none.
ember::Status SpeculatorOf(ember_session* session, ember::Speculator** out) {
  if (!session->speculator) {
    ember::Result<ember::Speculator> made = ember::Speculator::Create(&session->session);
    if (!made.ok()) return made.status();
    session->speculator.emplace(std::move(*made));
  }
  *out = &*session->speculator;
  return ember::Status::Ok();
}

}  // namespace

ember_status ember_session_set_lookup(ember_session* session, uint32_t ngram) {
  if (!session) return NullArgument("session");
  ember::Speculator* s = nullptr;
  ember::Status status = SpeculatorOf(session, &s);
  if (status.ok()) status = s->SetLookup(ngram);
  return Report(status);
}

ember_status ember_session_set_draft(ember_session* session, ember_session* draft) {
  if (!session) return NullArgument("session");
  if (draft == session) {
    return Report(ember::InvalidArgument(
        "a session cannot draft for itself: give the draft model a session of its own"));
  }
  ember::Speculator* s = nullptr;
  ember::Status status = SpeculatorOf(session, &s);
  if (status.ok()) status = s->SetDraft(draft ? &draft->session : nullptr);
  return Report(status);
}

ember_status ember_session_set_draft_max(ember_session* session, uint32_t draft_max) {
  if (!session) return NullArgument("session");
  ember::Speculator* s = nullptr;
  ember::Status status = SpeculatorOf(session, &s);
  if (status.ok()) status = s->SetDraftMax(draft_max);
  return Report(status);
}

ember_status ember_session_speculative_stats(ember_session* session,
                                             ember_speculative_stats* stats, int reset) {
  if (!session) return NullArgument("session");
  if (!stats) return NullArgument("stats");
  *stats = ember_speculative_stats{};
  if (!session->speculator) return EMBER_OK;
  const ember::SpeculativeStats& s = session->speculator->stats();
  stats->rounds = s.rounds;
  stats->verified = s.verified;
  stats->drafted = s.drafted;
  stats->accepted = s.accepted;
  stats->draft_passes = s.draft_passes;
  if (reset) session->speculator->ResetStats();
  return EMBER_OK;
}
