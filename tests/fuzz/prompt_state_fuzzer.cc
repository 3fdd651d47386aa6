// Fuzzes restoring a prompt state (runtime/chat/prompt_state.h) into sessions of a tiny
// model built in memory (prompt_state_sessions.h): the header's checks and checksum, the
// sizes, the layer table's rings, the tokens, the KV type conversions. A refused state
// must leave the session as it was; a restored one must hold what it says and go on
// (one more token prefilled and sampled). Any crash, sanitizer report or abort is a bug.
//
// Input: byte 0 picks the session (low 2 bits) and how many positions to restore (the
// rest: 0 for all); the rest is the state.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <vector>

#include "runtime/chat/prompt_state.h"
#include "runtime/sampler.h"
#include "tests/fuzz/prompt_state_sessions.h"

namespace {

using ember::Sampler;
using ember::Session;

struct Target {
  std::optional<Session> session;
  std::unique_ptr<Sampler> sampler;
};

struct World {
  ember::testing::LoadedModel loaded;
  Target targets[ember::fuzz::kNumStateSessions];
};

World* MakeWorld() {
  World* w = new World{ember::testing::LoadSpec(ember::fuzz::PromptStateModelSpec()), {}};
  if (!w->loaded.model) abort();
  for (int i = 0; i < ember::fuzz::kNumStateSessions; ++i) {
    auto s = Session::Create(*w->loaded.model, ember::fuzz::PromptStateSessionOptions(i));
    if (!s.ok()) {
      fprintf(stderr, "prompt_state_fuzzer: session %d: %s\n", i, s.status().message());
      abort();
    }
    w->targets[i].session.emplace(std::move(*s));
    ember::SamplerOptions so;
    so.temperature = 1.0f;
    w->targets[i].sampler =
        std::make_unique<Sampler>(so, w->loaded.model->config().vocab_size,
                                  w->targets[i].session->sampler_scratch());
  }
  return w;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World* world = MakeWorld();
  if (size == 0) return 0;
  Target& t = world->targets[data[0] & 3];
  Session& s = *t.session;
  const size_t limit = data[0] >> 2;
  const size_t positions = limit == 0 ? SIZE_MAX : limit;
  // The state at an unaligned address, as a file mapped at an offset may put it; a copy
  // of its own so that ASan sees every read past its end.
  std::vector<uint8_t> state(data + 1, data + size);
  s.Reset();
  const uint64_t rng = 0x1234567;
  t.sampler->set_rng_state(rng);
  const ember::Status status = ember::RestorePromptState(
      &s, t.sampler.get(), state.data(), state.size(), positions);
  if (!status.ok()) {
    // Refused: a message, and the session untouched.
    if (status.message()[0] == '\0' || s.position() != 0 || s.logits_valid() ||
        t.sampler->rng_state() != rng) {
      abort();
    }
    return 0;
  }
  ember::PromptStateInfo info;
  if (!ember::PeekPromptState(state.data(), state.size(), &info).ok()) abort();
  const size_t want = positions < info.position ? positions : info.position;
  if (s.position() != want || s.position() > s.max_context()) abort();
  const uint32_t vocab = s.model().config().vocab_size;
  for (size_t i = 0; i < s.position(); ++i) {
    if (s.tokens()[i] < 0 || static_cast<uint32_t>(s.tokens()[i]) >= vocab) abort();
  }
  // The restored session goes on: one more token, sampled from its logits (a NaN in
  // restored logits is a status, not a crash).
  if (s.position() < s.max_context()) {
    const int32_t next = static_cast<int32_t>(s.position() % vocab);
    if (s.Prefill(&next, 1).ok()) {
      int32_t token = -1;
      if (t.sampler->Sample(s.logits(), &token).ok() &&
          (token < 0 || static_cast<uint32_t>(token) >= vocab)) {
        abort();
      }
    }
  }
  return 0;
}
