// `ember chat`: a conversation with a model through its chat template. User turns come
// from standard input (a prompt on a terminal; one turn per line when piped), replies
// stream to standard output, each turn's prefill and generation speed to standard error.
// /reset forgets the turns, /exit (or the end of input) quits.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "runtime/chat/chat.h"
#include "runtime/model/model.h"
#include "runtime/session.h"
#include "tools/cli/args.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/commands.h"
#include "tools/cli/sampling_flags.h"
#include "tools/cli/template_flags.h"

namespace ember::tools {
namespace {

ArgParser MakeParser() {
  std::vector<OptionSpec> specs = {
      {{"-m", "--model"}, true, "model file (.ember) with a chat template"},
      {{"--system"}, true, "the system text the conversation starts with"},
      {{"-n", "--n-predict"},
       true,
       "tokens a reply may have at most (default: until the end of the turn)"},
      {{"-c", "--ctx"}, true, "context length (default: the model's)"},
      {{"-t", "--threads"}, true, "threads (default 1)"},
      {{"--backend"}, true, kBackendHelp},
      {{"--verbose-prompt"},
       false,
       "print each turn's prompt token ids (the rendered conversation's) on stderr"},
      KvTypeOption(),
  };
  for (OptionSpec& spec : ContextShiftOptions()) specs.push_back(std::move(spec));
  for (OptionSpec& spec : SamplingFlagSpecs()) specs.push_back(std::move(spec));
  for (OptionSpec& spec : TemplateFlagSpecs()) specs.push_back(std::move(spec));
  specs.push_back({{"-h", "--help"}, false, "show this help"});
  return ArgParser(std::move(specs));
}

bool PrintPiece(void*, int32_t, std::string_view text) {
  fwrite(text.data(), 1, text.size(), stdout);
  fflush(stdout);
  return true;
}

Status Chat(const ArgParser& args) {
  if (!args.Has("-m")) return InvalidArgument("missing -m MODEL");
  int64_t threads, n_predict, ctx;
  EMBER_RETURN_IF_ERROR(args.GetInt("-t", 1, 1, ThreadPool::kMaxThreads, &threads));
  EMBER_RETURN_IF_ERROR(args.GetInt("-n", -1, -1, int64_t{1} << 30, &n_predict));
  EMBER_RETURN_IF_ERROR(args.GetInt("-c", 0, 0, int64_t{1} << 24, &ctx));
  SamplerOptions sampling;
  StopStrings stop_strings;
  EMBER_RETURN_IF_ERROR(ReadSamplingFlags(args, &sampling, &stop_strings));

  auto model = Model::Open(args.Get("-m").c_str());
  if (!model.ok()) return model.status();
  if ((*model)->chat_template().empty()) {
    return NotFound(
        "%s has no compiled chat template (convert it again, with "
        "--chat-template FILE if its tokenizer has none)",
        args.Get("-m").c_str());
  }
  auto pool = ThreadPool::Create(static_cast<int>(threads));
  if (!pool.ok()) return pool.status();
  SessionOptions options;
  EMBER_RETURN_IF_ERROR(ParseBackend(args.Get("--backend", "highway"), &options.backend));
  options.max_context = static_cast<uint32_t>(ctx);
  EMBER_RETURN_IF_ERROR(ParseKvTypeOption(args, &options.kv_type));
  EMBER_RETURN_IF_ERROR(ParseContextShiftOptions(args, &options));
  auto session = Session::Create(**model, options, pool->get());
  if (!session.ok()) return session.status();
  Sampler sampler(sampling, (*model)->config().vocab_size, session->sampler_scratch());
  ChatOptions chat_options;
  EMBER_RETURN_IF_ERROR(ReadTemplateFlags(args, &chat_options.render));
  std::vector<uint64_t> memory((Chat::RequiredBytes(*session, chat_options) + 7) / 8);
  ember::Chat chat;
  EMBER_RETURN_IF_ERROR(
      chat.Init(&*session, &sampler, chat_options, memory.data(), memory.size() * 8));
  EMBER_RETURN_IF_ERROR(chat.SetSystem(args.Get("--system")));
  const size_t max_new =
      n_predict < 0 ? session->max_context() : static_cast<size_t>(n_predict);
  const bool terminal = isatty(STDIN_FILENO);
  fprintf(stderr, "ember chat: %s, context %zu, %s KV cache%s%s\n",
          args.Get("-m").c_str(), session->max_context(), KvTypeName(options.kv_type),
          options.context_shift ? ", context shift" : "",
          terminal ? "; /reset forgets the turns, /exit quits" : "");
  if (sampling.temperature >= kGreedyBelowTemperature) {
    fprintf(stderr, "ember chat: seed %llu\n",
            static_cast<unsigned long long>(sampling.seed));
  }
  std::string line;
  while (true) {
    if (terminal) {
      printf("> ");
      fflush(stdout);
    }
    if (!std::getline(std::cin, line)) break;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line == "/exit") break;
    if (line == "/reset") {
      chat.Reset();
      fprintf(stderr, "ember chat: conversation reset\n");
      continue;
    }
    if (line.empty()) continue;
    EMBER_RETURN_IF_ERROR(chat.Add("user", line));
    ChatTurnStats stats;
    const Status s = chat.Reply(max_new, &stop_strings, &PrintPiece, nullptr, &stats);
    printf("\n");
    fflush(stdout);
    if (!s.ok()) return s;
    if (stats.dropped_messages > 0) {
      fprintf(stderr, "ember chat: context full: dropped the %zu oldest message%s\n",
              stats.dropped_messages, stats.dropped_messages == 1 ? "" : "s");
    }
    if (stats.context_shifts > 0) {
      fprintf(stderr,
              "ember chat: context full: shifted %zu time%s (keeping the first %u "
              "positions, dropping the oldest half of the rest); the next turn "
              "prefills again from where the cache differs\n",
              stats.context_shifts, stats.context_shifts == 1 ? "" : "s",
              options.context_keep);
    }
    if (args.Has("--verbose-prompt")) {
      // The session holds the prompt's tokens at positions [0, prompt_tokens) (unless
      // a context shift moved them).
      fprintf(stderr, "ember chat: prompt tokens:");
      for (size_t i = 0; i < stats.prompt_tokens && i < session->position(); ++i)
        fprintf(stderr, " %d", session->tokens()[i]);
      fprintf(stderr, "\n");
    }
    const size_t decoded = stats.generated > 0 ? stats.generated - 1 : 0;
    char ending[64] = "";
    if (stats.stop == StopReason::kEndOfText) {
      snprintf(ending, sizeof(ending), " (ended at token %d)", stats.stop_token);
    } else if (stats.stop == StopReason::kContextFull) {
      snprintf(ending, sizeof(ending), " (context full: the reply is cut)");
    }
    fprintf(
        stderr,
        "ember chat: prefill %zu of %zu tokens (%zu cached) in %.2f ms (%.1f tok/s); "
        "generated %zu tokens, %.1f tok/s%s\n",
        stats.prefill_tokens, stats.prompt_tokens, stats.reused_tokens,
        stats.prefill_seconds * 1e3,
        stats.prefill_seconds > 0 ? stats.prefill_tokens / stats.prefill_seconds : 0.0,
        stats.generated,
        stats.generate_seconds > 0 ? decoded / stats.generate_seconds : 0.0, ending);
  }
  return Status::Ok();
}

}  // namespace

int ChatCommand(int argc, char** argv) {
  return RunSubcommand(
      "chat",
      "usage: ember chat -m MODEL [--system TEXT] [-n N] [-c N] [--kv-type T] "
      "[--context-shift [--keep N]] [--verbose-prompt] [sampling options]\n"
      "Reads user turns from standard input, one a line.\n",
      MakeParser(), argc, argv, &Chat);
}

}  // namespace ember::tools
