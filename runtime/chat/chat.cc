// Chat: see chat.h (messages: chat_messages.cc; images: chat_images.cc).
#include "runtime/chat/chat.h"

#include <chrono>
#include <cstdint>
#include <cstring>

#include "runtime/checked_math.h"

namespace ember {
namespace {

using Clock = std::chrono::steady_clock;

struct ChatLayout {
  size_t messages = 0, text = 0, render = 0, tools = 0, message_images = 0, images = 0,
         expanded = 0, total = 0;
};

// Bytes of `count` items of `size`, rounded up to 8; false on overflow.
bool Items(size_t size, size_t count, size_t* bytes) {
  return CheckedMul(size, count, bytes) && CheckedAdd<size_t>(*bytes, 7, bytes) &&
         ((*bytes &= ~size_t{7}), true);
}

// The rendered conversation is tokenized into the session's token buffer (sized for its
// max_prompt_bytes by the tokenizer's EncodeCapacity): the chat needs no other. False
// when the sizes the options ask for do not fit in a size_t (a 32-bit target).
bool Plan(const Session& session, const ChatOptions& o, ChatLayout* l) {
  size_t text = o.max_text_bytes;
  if (text == 0 && !CheckedMul<size_t>(8, session.max_context(), &text)) return false;
  const size_t messages = o.max_messages ? o.max_messages : 1;
  if (!CheckedMul(sizeof(ChatMessage), messages, &l->messages) ||
      !CheckedAdd<size_t>(l->messages, 7, &l->messages) ||
      !CheckedAdd<size_t>(text, 7, &l->text)) {
    return false;
  }
  l->messages &= ~size_t{7};
  l->text &= ~size_t{7};
  l->tools = (size_t{o.max_tools_bytes} + 7) & ~size_t{7};
  size_t input = 0;  // what a render reads: the messages' text and the tools'
  if (!CheckedAdd<size_t>(text, o.max_tools_bytes, &input)) return false;
  l->render = (ChatRenderBytes(input) + 7) & ~size_t{7};  // saturates rather than wraps
  // Per image: its prompt size, its rows and id, its span in the tokens, and the cache's
  // record of it.
  constexpr size_t kPerImage =
      sizeof(PromptImage) + 2 * sizeof(void*) + 2 * sizeof(size_t) + 2 * sizeof(size_t);
  if (!Items(sizeof(uint32_t), messages, &l->message_images) ||
      !Items(kPerImage, o.max_images, &l->images)) {
    return false;
  }
  l->expanded = o.max_images ? (session.plan().max_prompt_bytes + 7) & ~size_t{7} : 0;
  return CheckedAdd(l->messages, l->text, &l->total) &&
         CheckedAdd(l->total, l->render, &l->total) &&
         CheckedAdd(l->total, l->tools, &l->total) &&
         CheckedAdd(l->total, l->message_images, &l->total) &&
         CheckedAdd(l->total, l->images, &l->total) &&
         CheckedAdd(l->total, l->expanded, &l->total) && l->total <= SIZE_MAX - 7;
}

// Reply's callback: times the first token and keeps the reply's text.
struct ReplyState {
  TokenCallback callback;
  void* user;
  Clock::time_point first;
  bool seen = false;
  char* text;
  size_t capacity, used = 0;
  bool truncated = false;
  // Control tokens whose pieces the reply keeps (tool-call markers), -1: none.
  const int32_t* kept_ids;
  const Tokenizer* tokenizer;
};

bool OnToken(void* p, int32_t id, std::string_view text) {
  auto* s = static_cast<ReplyState*>(p);
  if (!s->seen) {
    s->seen = true;
    s->first = Clock::now();
  }
  std::string_view kept = text;
  if (text.empty() && id >= 0 && (id == s->kept_ids[0] || id == s->kept_ids[1])) {
    kept = s->tokenizer->piece(static_cast<uint32_t>(id));
  }
  const size_t n =
      kept.size() < s->capacity - s->used ? kept.size() : s->capacity - s->used;
  memcpy(s->text + s->used, kept.data(), n);
  s->used += n;
  s->truncated |= n < kept.size();
  return s->callback(s->user, id, text);
}

// How many of the session's cached positions still hold tokens[0, n); at least one token
// is left to prefill, for its logits.
size_t CachedPrefix(const Session& s, const int32_t* tokens, size_t n) {
  size_t keep = 0;
  const size_t cached = s.position();
  while (keep < cached && keep < n && s.tokens()[keep] == tokens[keep]) ++keep;
  return keep == n && keep > 0 ? keep - 1 : keep;
}

}  // namespace

size_t Chat::RequiredBytes(const Session& session, const ChatOptions& options) {
  ChatLayout l;
  return Plan(session, options, &l) ? l.total : 0;
}

Status Chat::Init(Session* session, Sampler* sampler, const ChatOptions& options,
                  void* memory, size_t bytes) {
  if (session->model().chat_template().empty()) {
    return NotFound(
        "the model has no compiled chat template (convert it again, or with "
        "--chat-template FILE)");
  }
  ChatLayout l;
  if (!Plan(*session, options, &l)) {
    return ResourceExhausted(
        "a chat of %u messages and %u bytes of text does not fit this target's "
        "address space",
        options.max_messages, options.max_text_bytes);
  }
  if (bytes < l.total) {
    return ResourceExhausted("chat memory of %zu bytes is too small: %zu needed", bytes,
                             l.total);
  }
  if (reinterpret_cast<uintptr_t>(memory) % 8 != 0) {
    return InvalidArgument("chat memory must be 8-byte aligned");
  }
  if (options.max_images > 0 && (session->model().vision() == nullptr ||
                                 session->model().vision()->prompt.marker.empty())) {
    return InvalidArgument(
        "max_images %u: the model has no vision tower with an image prompt",
        options.max_images);
  }
  session_ = session;
  sampler_ = sampler;
  options_ = options;
  if (options_.max_messages == 0) options_.max_messages = 1;
  uint8_t* at = static_cast<uint8_t*>(memory);
  messages_ = reinterpret_cast<ChatMessage*>(at);
  text_ = reinterpret_cast<char*>(at + l.messages);
  text_capacity_ = l.text;
  render_ = text_ + l.text;
  render_capacity_ = l.render;
  tools_ = render_ + l.render;
  static_assert(sizeof(ImageRef) <= 2 * sizeof(void*) &&
                    sizeof(ImageSpan) <= 2 * sizeof(size_t) &&
                    sizeof(CachedImage) <= 2 * sizeof(size_t),
                "Plan's bytes per image");
  uint8_t* images = reinterpret_cast<uint8_t*>(tools_ + l.tools);
  message_images_ = reinterpret_cast<uint32_t*>(images);
  images += l.message_images;
  const size_t max_images = options.max_images;
  images_ = reinterpret_cast<PromptImage*>(images);
  image_refs_ = reinterpret_cast<ImageRef*>(images_ + max_images);
  spans_ = reinterpret_cast<ImageSpan*>(image_refs_ + max_images);
  cached_ = reinterpret_cast<CachedImage*>(spans_ + max_images);
  expanded_ = reinterpret_cast<char*>(images + l.images);
  expanded_capacity_ = l.expanded;
  num_images_ = pending_images_ = num_cached_ = 0;
  tools_size_ = 0;
  tool_format_ = ToolCallFormat::kNone;
  marker_ids_[0] = marker_ids_[1] = -1;
  num_messages_ = first_turn_ = 0;
  text_used_ = 0;
  num_calls_ = unanswered_ = 0;
  calls_status_ = Status::Ok();
  return Status::Ok();
}

Status Chat::Tokenize(const ChatMessage* messages, size_t count, size_t first_image,
                      size_t images, const int32_t** tokens, size_t* n) {
  Session& s = *session_;
  const ChatTemplate& t = s.model().chat_template();
  ChatTemplateOptions render = options_.render;
  render.add_generation_prompt = true;
  render.tools_json = std::string_view(tools_, tools_size_);
  size_t length = 0;
  EMBER_RETURN_IF_ERROR(
      t.Render(messages, count, render, render_, render_capacity_, &length));
  if (length > s.plan().max_prompt_bytes) {
    return ResourceExhausted(
        "the rendered conversation of %zu bytes exceeds the session's max_prompt_bytes "
        "%zu",
        length, s.plan().max_prompt_bytes);
  }
  // As Hugging Face tokenizes apply_chat_template's text: the control tokens the
  // template wrote become their ids, and no BOS is added (templates write their own).
  EncodeOptions encode;
  encode.add_bos = false;
  encode.parse_special = true;
  if (images == 0) return s.Tokenize(render_, length, encode, tokens, n);
  return TokenizeImages(render_, length, first_image, images, encode, tokens, n);
}

namespace {

// Whether n tokens leave the context room for a reply of `reserve`.
bool LeavesRoom(size_t n, size_t reserve, size_t context) {
  return n + reserve <= context && n < context;
}

Status TurnTooLong(size_t n, size_t context) {
  return OutOfRange(
      "the conversation's last turn (%zu tokens with the template's) does not fit the "
      "context of %zu with room to reply",
      n, context);
}

}  // namespace

Status Chat::LastTurnFits(size_t reserve) {
  const size_t context = session_->max_context();
  if (num_messages_ - first_turn_ <= 1) return Status::Ok();  // Reply's loop says
  ChatMessage last[2];
  size_t count = 0;
  if (first_turn_ == 1) last[count++] = messages_[0];
  last[count++] = messages_[num_messages_ - 1];
  const size_t images = message_images_[num_messages_ - 1];
  const int32_t* tokens;
  size_t n = 0;
  const Status tokenized =
      Tokenize(last, count, num_images_ - images, images, &tokens, &n);
  // Too long alone: refused before any turn is dropped. Another error (a template that
  // wants the turns before) is left to the loop over the whole conversation.
  if (tokenized.code() == StatusCode::kResourceExhausted) return tokenized;
  if (tokenized.ok() && !LeavesRoom(n, reserve, context)) return TurnTooLong(n, context);
  return Status::Ok();
}

Status Chat::Reply(size_t max_new, StopStrings* stop_strings, TokenCallback callback,
                   void* user, ChatTurnStats* stats) {
  *stats = ChatTurnStats();
  num_calls_ = 0;  // the last reply's, whatever happens to this one
  calls_status_ = Status::Ok();
  Session& s = *session_;
  const size_t context = s.max_context();
  // Room for the reply: the turn must leave some context to answer in.
  const size_t reserve = max_new < context / 4 ? max_new : context / 4;
  const int32_t* tokens;
  size_t n;
  while (true) {
    // A conversation too long to render or tokenize is longer than the context too.
    const Status tokenized = Tokenize(&tokens, &n);
    if (!tokenized.ok() && tokenized.code() != StatusCode::kResourceExhausted) {
      return tokenized;
    }
    if (tokenized.ok() && LeavesRoom(n, reserve, context)) break;
    if (num_messages_ - first_turn_ <= 1) {
      return tokenized.ok() ? TurnTooLong(n, context) : tokenized;
    }
    // Old turns are dropped only when the last one alone fits.
    if (stats->dropped_messages == 0) EMBER_RETURN_IF_ERROR(LastTurnFits(reserve));
    DropOldest();
    ++stats->dropped_messages;
  }
  size_t keep = KeepCachedImages(CachedPrefix(s, tokens, n));
  Status truncated = s.Truncate(keep);
  if (truncated.code() == StatusCode::kOutOfRange) {
    // A sliding layer's ring has wrapped past what a pass from `keep` reads: prefill
    // again from the start (after the baked prompt, when the conversation begins with
    // it), or from nothing.
    s.Reset();
    num_cached_ = 0;
    keep = KeepCachedImages(CachedPrefix(s, tokens, n));
    truncated = s.Truncate(keep);
    if (truncated.code() == StatusCode::kOutOfRange) {
      keep = 0;
      truncated = s.Truncate(0);
    }
  }
  EMBER_RETURN_IF_ERROR(truncated);
  stats->prompt_tokens = n;
  stats->reused_tokens = keep;
  stats->prefill_tokens = n - keep;
  const Clock::time_point start = Clock::now();
  // The images' rows first, each with the text before it; Generate prefills the rest.
  size_t at = keep;
  stats->images = num_images_;
  if (num_images_ > 0) EMBER_RETURN_IF_ERROR(PrefillImages(tokens, &at, stats));

  // The reply's text goes after the conversation's, then becomes its last turn.
  if (num_messages_ == options_.max_messages) DropOldest();
  ReplyState state{callback,
                   user,
                   {},
                   false,
                   text_ + text_used_,
                   text_capacity_ - text_used_,
                   0,
                   false,
                   marker_ids_,
                   &s.model().tokenizer()};
  const ChatProgramTables& p = s.model().chat_template().tables();
  GenerateOptions generate;
  generate.max_new = max_new;
  generate.stop_ids = p.end_of_turn_ids;
  generate.num_stop_ids = p.num_end_of_turn_ids;
  generate.stop_strings = stop_strings;
  generate.constraint = constraint_;
  // A draft has no image rows: a conversation with images is decoded plainly.
  generate.speculator = num_images_ > 0 ? nullptr : speculator_;
  if (constraint_) EMBER_RETURN_IF_ERROR(constraint_->reset(constraint_->self));
  GenerateResult result;
  const size_t shifts = s.shifts();
  const Status status =
      Generate(s, *sampler_, tokens + at, n - at, generate, &OnToken, &state, &result);
  const Clock::time_point end = Clock::now();
  stats->generated = result.generated;
  stats->context_shifts = s.shifts() - shifts;
  stats->stop = result.stop;
  stats->stop_token = result.stop_token;
  stats->complete = result.complete;
  stats->prefill_seconds =
      std::chrono::duration<double>((state.seen ? state.first : end) - start).count();
  stats->generate_seconds =
      state.seen ? std::chrono::duration<double>(end - state.first).count() : 0.0;
  EMBER_RETURN_IF_ERROR(status);
  EMBER_RETURN_IF_ERROR(StoreReply(std::string_view(text_ + text_used_, state.used)));
  stats->tool_calls = num_calls_;
  return Status::Ok();
}

}  // namespace ember
