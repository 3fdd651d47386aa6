// Fuzzes the GBNF compiler and the matcher: the input's text up to its first NUL byte is
// a grammar, what follows is a text to match. A grammar is hostile input (a user's file,
// an app's string): it compiles to a program Program::Bind accepts, or fails with a
// message naming its line and column; a text is matched within the matcher's limits,
// its answer the same after Reset, never a crash, unbounded memory or time.
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "runtime/grammar/gbnf.h"
#include "runtime/grammar/grammar_matcher.h"
#include "runtime/grammar/grammar_program.h"

namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "gbnf_fuzzer: %s\n", what);
    abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t split = input.find('\0');
  const std::string_view gbnf = input.substr(0, split);
  const std::string_view text =
      split == std::string_view::npos ? std::string_view() : input.substr(split + 1);
  std::vector<uint32_t> words;
  const ember::Status compiled = ember::grammar::CompileGbnf(gbnf, "root", &words);
  if (!compiled.ok()) {
    Check(compiled.message()[0] != '\0', "a refusal without a message");
    return 0;
  }
  ember::grammar::Program program;
  Check(program.Bind(words.data(), words.size()).ok(), "Bind refuses a compiled program");
  ember::grammar::MatcherLimits limits;
  limits.max_stacks = 64;
  limits.max_frames = 512;
  limits.max_expansion = 1024;
  static std::vector<uint64_t> memory(
      ember::grammar::GrammarMatcher::RequiredBytes(limits) / 8 + 1);
  ember::grammar::GrammarMatcher matcher;
  const ember::Status init = matcher.Init(&program, limits, memory.data(), memory.size() * 8);
  if (!init.ok()) {  // the start alone past a limit
    Check(init.code() == ember::StatusCode::kResourceExhausted, "Init failed otherwise");
    return 0;
  }
  size_t accepted = 0;
  const ember::Status first = matcher.AcceptText(text, &accepted);
  const bool can_end = matcher.CanEnd();
  Check(accepted <= text.size(), "accepted past the text");
  Check(matcher.Viable(), "a state no text completes");
  // The same text again from the start: the same answer (reclaimed frames, reused memory).
  Check(matcher.Reset().ok(), "Reset failed after Init did");
  size_t again = 0;
  const ember::Status second = matcher.AcceptText(text, &again);
  Check(first.code() == second.code() && accepted == again && can_end == matcher.CanEnd(),
        "a second match of the same text differs");
  return 0;
}
