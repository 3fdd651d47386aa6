// `ember chat`: a conversation with a model through its chat template. User turns come
// from standard input (a prompt on a terminal; one turn per line when piped), replies
// stream to standard output, each turn's prefill and generation speed to standard error.
// /reset forgets the turns, /tool TEXT answers a tool call (--tools), /image FILE gives
// the next turn an image (a vision model), /exit (or the end of input) quits.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "runtime/chat/chat.h"
#include "runtime/model/model.h"
#include "runtime/session.h"
#include "runtime/text/utf8.h"
#include "tools/cli/args.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/commands.h"
#include "tools/cli/grammar_flags.h"
#include "tools/cli/image_flags.h"
#include "tools/cli/sampling_flags.h"
#include "tools/cli/speculative_flags.h"
#include "tools/cli/template_flags.h"
#include "tools/util/quote.h"

namespace ember::tools {
namespace {

ArgParser MakeParser() {
  std::vector<OptionSpec> specs = {
      {{"-m", "--model"}, true, "model file (.ember) with a chat template"},
      {{"--system"}, true, "the system text the conversation starts with"},
      {{"-n", "--n-predict"},
       true,
       "tokens a reply may have at most (default: until the end of the turn)"},
      {{"-c", "--ctx"},
       true,
       "context length (default: the model's, if its session fits in 4 GiB)"},
      {{"-t", "--threads"}, true, "threads (default 1)"},
      FixedThreadsOption(),
      {{"--backend"}, true, kBackendHelp},
      {{"--verbose-prompt"},
       false,
       "print each turn's prompt token ids (the rendered conversation's) on stderr"},
      KvTypeOption(),
      GrammarBytesOption(),
      {{"--image"},
       true,
       "FILE: a PNG or JPEG for the first turn (repeatable; a vision model). A turn's "
       "image markers (Gemma 3: <start_of_image>; SmolVLM: <image>) take its images "
       "in order; with none, the images go before its text. Later turns: /image FILE"},
      {{"--max-images"},
       true,
       "images the conversation holds at once (default 4 for a vision model; the image "
       "arena is planned for them at the processor's largest image)"},
  };
  for (OptionSpec& spec : ContextShiftOptions()) specs.push_back(std::move(spec));
  for (OptionSpec& spec : SamplingFlagSpecs()) specs.push_back(std::move(spec));
  for (OptionSpec& spec : GrammarFlagSpecs()) specs.push_back(std::move(spec));
  for (OptionSpec& spec : SpeculativeFlagSpecs()) specs.push_back(std::move(spec));
  specs.push_back({{"--tools"},
                   true,
                   "FILE: tools the model may call (JSON: OpenAI-style function "
                   "definitions); calls print as JSON lines, their arguments held to "
                   "each function's parameter schema; /tool TEXT answers a call"});
  for (OptionSpec& spec : TemplateFlagSpecs()) specs.push_back(std::move(spec));
  specs.push_back({{"-h", "--help"}, false, "show this help"});
  return ArgParser(std::move(specs));
}

bool PrintPiece(void*, int32_t, std::string_view text) {
  fwrite(text.data(), 1, text.size(), stdout);
  fflush(stdout);
  return true;
}

// Whether a failed Reply refused only the turn: longer than the context holds or the
// session's max_prompt_bytes, or refused by the template (raise_exception), all found
// before anything was prefilled (the cache is as it was).
bool RefusedTurn(const Status& s, const ChatTurnStats& stats) {
  const StatusCode code = s.code();
  return stats.prompt_tokens == 0 &&
         (code == StatusCode::kInvalidArgument || code == StatusCode::kOutOfRange ||
          code == StatusCode::kResourceExhausted);
}

// The conversation's turns (the system text aside), copied: a refused Reply may have
// dropped older turns to make room before finding that the last cannot fit at all, and
// it leaves the refused turn last, where a template that wants roles to alternate would
// refuse every turn after it.
// Images are kept as their rows (in the image encoder's arena) and prompt sizes.
struct Turn {
  std::string role, text, extra_json;
  std::vector<std::pair<const float*, PromptImage>> images;
};
using Turns = std::vector<Turn>;
Turns SaveTurns(const ember::Chat& chat) {
  Turns turns;
  size_t image = 0;
  for (size_t i = 0; i < chat.num_messages(); ++i) {
    const ChatMessage& m = chat.message(i);
    Turn turn{std::string(m.role), std::string(m.content), std::string(m.extra_json), {}};
    for (size_t k = 0; k < chat.message_images(i); ++k, ++image) {
      turn.images.emplace_back(chat.image_rows(image), chat.image(image));
    }
    if (m.role != "system") turns.push_back(std::move(turn));
  }
  return turns;
}

// Puts the saved turns back (they fitted before: Add cannot refuse them). Their text
// holds their images' markers already.
Status RestoreTurns(const Turns& turns, ember::Chat* chat) {
  chat->Reset();
  for (const Turn& t : turns) {
    for (const auto& [rows, image] : t.images) {
      EMBER_RETURN_IF_ERROR(chat->AttachImage(rows, image));
    }
    EMBER_RETURN_IF_ERROR(chat->Add(t.role, t.text, t.extra_json));
  }
  return Status::Ok();
}

// Encodes the image file for the next turn and attaches it. The encoder's arena holds
// --max-images images' rows; it starts again when the chat holds none.
Status AttachImageFile(const std::string& path, const Model& model, FlagImages* images,
                       ember::Chat* chat) {
  if (!images->encoder) {
    return InvalidArgument("%s: images need a vision model and --max-images above 0",
                           path.c_str());
  }
  ImageEncoder& encoder = *images->encoder;
  if (chat->num_images() == 0 && chat->pending_images() == 0) encoder.Clear();
  if (encoder.images() >= images->plan.options.max_images) {
    return ResourceExhausted(
        "%s: the image arena holds %d images' rows, which earlier turns still use: "
        "/reset frees it (--max-images sets it)",
        path.c_str(), images->plan.options.max_images);
  }
  Result<EncodedImage> e = AddImageFile(path, images);
  if (!e.ok()) return e.status();
  const float* rows = encoder.rows() + e->first_row * model.config().d_model;
  EMBER_RETURN_IF_ERROR(
      chat->AttachImage(rows, PromptImage{e->rows, e->grid.rows, e->grid.cols}));
  fprintf(stderr, "ember chat: %s: %d tile%s, %zu rows encoded in %.2f ms\n",
          path.c_str(), e->grid.tiles, e->grid.tiles == 1 ? "" : "s", e->rows,
          images->encode_seconds * 1e3);
  return Status::Ok();
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
  auto pool = CreatePool(args, threads);
  if (!pool.ok()) return pool.status();
  SessionOptions options;
  EMBER_RETURN_IF_ERROR(ParseBackend(args.Get("--backend", "highway"), &options.backend));
  options.max_context = static_cast<uint32_t>(ctx);
  EMBER_RETURN_IF_ERROR(ParseKvTypeOption(args, &options.kv_type));
  // --tools: rendered into the template, and a grammar for the calls that starts where
  // the model opens one (the text around calls stays free). --grammar and the others:
  // every reply under the grammar (from its start), ending where it can at the
  // template's end of turn. Either is built (its load, on the heap) before the session,
  // which is planned with room for it.
  const ChatProgramTables& tables = (*model)->chat_template().tables();
  const Tokenizer& tokenizer = (*model)->tokenizer();
  const ToolCallFormat format = DetectToolCallFormat(tables);
  ToolsSetup tools;
  EMBER_RETURN_IF_ERROR(ReadToolsFlag(args, tokenizer, format, tables.end_of_turn_ids,
                                      tables.num_end_of_turn_ids, &tools));
  FlagGrammar grammar;
  EMBER_RETURN_IF_ERROR(ReadGrammarFlags(args, tokenizer, &grammar, tables.end_of_turn_ids,
                                         tables.num_end_of_turn_ids));
  FlagGrammar& planned = tools.grammar.constraint ? tools.grammar : grammar;
  EMBER_RETURN_IF_ERROR(PlanGrammarBytes(args, planned, &options.grammar_bytes));
  EMBER_RETURN_IF_ERROR(ParseContextShiftOptions(args, &options));
  FlagSpeculation speculation;
  EMBER_RETURN_IF_ERROR(ReadSpeculativeFlags(args, &speculation, &options));
  if (speculation.enabled() && planned.constraint) {
    return InvalidArgument(
        "--draft and --lookup draft free text: not with a grammar or --tools");
  }
  // Images: an encoder planned before the session, which is planned for their text and
  // (Gemma 3's blocks, which attend both ways) a step holding a whole image.
  const VisionConfig* vision = (*model)->vision();
  int64_t max_images;
  EMBER_RETURN_IF_ERROR(args.GetInt("--max-images", vision ? 4 : 0, 0, 64, &max_images));
  FlagImages images;
  if (vision == nullptr && (args.Has("--image") || max_images > 0)) {
    return InvalidArgument("--image: the model has no vision tower (a text-only model)");
  }
  if (args.Has("--image") && max_images == 0) {
    return InvalidArgument("--image: not with --max-images 0");
  }
  if (max_images > 0) {
    if (speculation.enabled()) {
      return InvalidArgument(
          "--draft and --lookup: not with images yet (--max-images 0 turns them off)");
    }
    EMBER_RETURN_IF_ERROR(StartImageEncoder(**model, pool->get(), nullptr,
                                            static_cast<int>(max_images), &images));
    const ImageEncoderPlan& plan = images.plan;
    if (vision->image_blocks_bidirectional) {
      options.max_batch = std::max<uint32_t>(options.max_batch,
                                             static_cast<uint32_t>(plan.rows_per_tile));
    }
    const size_t context =
        ctx ? static_cast<size_t>(ctx) : (*model)->config().max_context;
    const size_t text = std::min<size_t>(8 * context, kDefaultMaxPromptBytes);
    const size_t bytes = std::min(
        {tokenizer.max_text_bytes(), size_t{UINT32_MAX},
         text + static_cast<size_t>(max_images) * MaxImagePromptBytes(**model, plan)});
    options.max_prompt_bytes = static_cast<uint32_t>(bytes);
  }
  auto session = Session::Create(**model, options, pool->get());
  if (!session.ok()) return session.status();
  EMBER_RETURN_IF_ERROR(PlaceGrammar(*session, "chat", &planned));
  EMBER_RETURN_IF_ERROR(StartSpeculation(*session, options, pool->get(), &speculation));
  EMBER_RETURN_IF_ERROR(StartTools(tokenizer, &tools));
  Sampler sampler(sampling, (*model)->config().vocab_size, session->sampler_scratch());
  ChatOptions chat_options;
  EMBER_RETURN_IF_ERROR(ReadTemplateFlags(args, &chat_options.render));
  if (tools.json.size() > UINT32_MAX) return InvalidArgument("--tools: the file is too large");
  chat_options.max_tools_bytes = static_cast<uint32_t>(tools.json.size());
  chat_options.max_images = static_cast<uint32_t>(max_images);
  std::vector<uint64_t> memory((Chat::RequiredBytes(*session, chat_options) + 7) / 8);
  ember::Chat chat;
  EMBER_RETURN_IF_ERROR(
      chat.Init(&*session, &sampler, chat_options, memory.data(), memory.size() * 8));
  EMBER_RETURN_IF_ERROR(chat.SetSystem(args.Get("--system")));
  if (speculation.speculator) chat.set_speculator(&*speculation.speculator);
  for (const std::string& path : args.GetAll("--image")) {
    EMBER_RETURN_IF_ERROR(AttachImageFile(path, **model, &images, &chat));
  }
  TokenConstraint token_constraint;
  if (grammar.constraint) {
    token_constraint = grammar.constraint->AsTokenConstraint();
    chat.set_constraint(&token_constraint);
  }
  if (tools.lazy) {
    EMBER_RETURN_IF_ERROR(chat.SetTools(tools.json));
    token_constraint = tools.lazy->AsTokenConstraint();
    chat.set_constraint(&token_constraint);
    fprintf(stderr, "ember chat: %zu tool%s; calls in the %s format\n", tools.tools.size(),
            tools.tools.size() == 1 ? "" : "s", ToolCallFormatName(format));
  }
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
  size_t turns = 0, refused = 0, incomplete = 0;
  // One line the chat cannot take is refused with a message and the session goes on,
  // as an embedder goes on after ember_chat_add or ember_chat_generate refuse a turn.
  const auto refuse = [&](const Status& s) {
    ++refused;
    fprintf(stderr,
            "ember chat: turn refused (the conversation goes on without it): %s\n",
            Printable(s.message()).c_str());
  };
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
    if (line.compare(0, 7, "/image ") == 0) {
      // An image for the next turn; one that cannot be taken is refused like a turn.
      if (const Status attached =
              AttachImageFile(line.substr(7), **model, &images, &chat);
          !attached.ok()) {
        ++turns;
        refuse(attached);
      }
      continue;
    }
    if (line.empty()) continue;
    ++turns;
    size_t bad = 0;
    if (!ValidUtf8(line, &bad)) {
      refuse(InvalidArgument("the line is not valid UTF-8 (byte %zu of %zu)", bad,
                             line.size()));
      continue;
    }
    // "/tool TEXT": the result of the next call the last reply made; the model
    // replies once every call has its result.
    const bool tool_result = line.compare(0, 6, "/tool ") == 0;
    const Turns before = SaveTurns(chat);
    const size_t unanswered = chat.unanswered_tool_calls();
    if (const Status added = chat.Add(tool_result ? "tool" : "user",
                                      tool_result ? line.substr(6) : line);
        !added.ok()) {
      refuse(added);  // Add changes nothing when it refuses
      continue;
    }
    if (tool_result && unanswered > 1) continue;
    ChatTurnStats stats;
    const Status s = chat.Reply(max_new, &stop_strings, &PrintPiece, nullptr, &stats);
    if (!s.ok() && RefusedTurn(s, stats)) {
      refuse(s);
      EMBER_RETURN_IF_ERROR(RestoreTurns(before, &chat));
      continue;
    }
    printf("\n");
    // The calls, one JSON line each.
    for (size_t i = 0; i < chat.num_tool_calls(); ++i) {
      const ToolCall& call = chat.tool_call(i);
      char id[10];
      chat.tool_call_id(i, id);
      printf("{\"id\": \"%s\", \"name\": \"%.*s\", \"arguments\": %.*s}\n", id,
             static_cast<int>(call.name.size()), call.name.data(),
             static_cast<int>(call.arguments.size()), call.arguments.data());
    }
    fflush(stdout);
    if (!s.ok()) return s;
    if (!chat.tool_calls_status().ok()) {
      fprintf(stderr, "ember chat: the reply's tool calls were kept as text: %s\n",
              chat.tool_calls_status().message());
    }
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
    if (!stats.complete) {
      fprintf(stderr,
              "ember chat: the reply stopped in the middle of the grammar's text (%s): it "
              "is not whole\n",
              stats.stop == StopReason::kContextFull ? "the context is full" : "-n reached");
      ++incomplete;
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
    if (stats.images > 0) {
      fprintf(stderr, "ember chat: %zu image%s in the conversation, %zu prefilled now\n",
              stats.images, stats.images == 1 ? "" : "s", stats.prefilled_images);
    }
    PrintSpeculativeStats("chat", speculation, stats.generated);
    if (speculation.speculator) speculation.speculator->ResetStats();
  }
  if (refused > 0) {
    return InvalidArgument("%zu of %zu turn%s refused", refused, turns,
                           turns == 1 ? " was" : "s were");
  }
  if (incomplete > 0) {
    return OutOfRange("%zu of %zu repl%s stopped before the grammar's text was whole",
                      incomplete, turns, turns == 1 ? "y" : "ies");
  }
  return Status::Ok();
}

}  // namespace

int ChatCommand(int argc, char** argv) {
  return RunSubcommand(
      "chat",
      "usage: ember chat -m MODEL [--system TEXT] [-n N] [-c N] [--kv-type T] "
      "[--context-shift [--keep N]] [--verbose-prompt] [--image FILE]... [sampling "
      "options]\n"
      "       [--grammar FILE.gbnf | --json-schema FILE.json | --json | --tools "
      "FILE.json]\n"
      "Reads user turns from standard input, one a line. A line the chat cannot take\n"
      "(not UTF-8, longer than the text it keeps or than the context) is refused with a\n"
      "message and the conversation goes on without it; the exit status is then 1.\n"
      "Under a grammar, each reply is a sentence of it (status 1 if -n or the context\n"
      "cuts one off).\n"
      "With --tools, the model's calls print after its reply as JSON lines ({\"id\", "
      "\"name\",\n"
      "\"arguments\"}); answer each with a line /tool RESULT, and it replies when every\n"
      "call has its result.\n"
      "A vision model's turns take images: --image FILE for the first, a line /image "
      "FILE\n"
      "before any other (each image is encoded then, and prefilled with its turn; the\n"
      "turns after reuse its cached rows).\n\n"
      "A full context: each turn renders the whole conversation again and reuses the\n"
      "cache only as far as its tokens still match. When the conversation no longer "
      "fits\n"
      "with room for the reply (-n, at most a quarter of the context), the oldest turns\n"
      "are dropped (the system text stays); that changes the text right after the\n"
      "system text, so from then on every turn prefills nearly the whole context again\n"
      "(stories260K, context 512: about 455 tokens a turn). --context-shift does not\n"
      "change this: it only lets one reply run past a full context. A longer -c delays\n"
      "it; /reset starts the turns again (the system text stays cached).\n",
      MakeParser(), argc, argv, &Chat);
}

}  // namespace ember::tools
