// Chat: a conversation in turns over a Session, with the model's chat template. Each
// turn renders the whole conversation, tokenizes it (the template's control tokens
// parsed as special tokens), keeps the cached prefix that still matches and prefills
// only the rest, then generates the reply until the template's end of turn. A context
// too full for the next turn drops the oldest turns (the system text stays). Its memory
// is one block sized at creation (RequiredBytes); no turn allocates.
#ifndef EMBER_RUNTIME_CHAT_CHAT_H_
#define EMBER_RUNTIME_CHAT_CHAT_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/chat/chat_template.h"
#include "runtime/chat/tool_calls.h"
#include "runtime/generate.h"
#include "runtime/sampler.h"
#include "runtime/session.h"

namespace ember {

struct ChatOptions {
  uint32_t max_text_bytes = 0;  // conversation text kept; 0: 8 bytes a context position
  uint32_t max_messages = 256;  // turns kept (the oldest go first)
  uint32_t max_tools_bytes = 0;  // the tools' JSON text SetTools keeps (0: no tools)
  ChatTemplateOptions render;   // add_generation_prompt is always on for replies
};

// What one reply cost.
struct ChatTurnStats {
  size_t prompt_tokens = 0;   // the rendered conversation
  size_t reused_tokens = 0;   // of them, found in the cache
  size_t prefill_tokens = 0;  // prefilled now
  size_t generated = 0;
  size_t dropped_messages = 0;  // the oldest, to make room
  double prefill_seconds = 0;   // to the first sampled token
  double generate_seconds = 0;  // after it
  StopReason stop = StopReason::kMaxTokens;
  int32_t stop_token = -1;    // with kEndOfText: the end of turn or stop id sampled
  size_t context_shifts = 0;  // made while replying (SessionOptions::context_shift)
  bool complete = true;  // under a constraint: whether the reply is a whole sentence
  size_t tool_calls = 0;  // with tools: the calls the reply made (Chat::tool_call)
};

class Chat {
 public:
  // Bytes Init needs for a session and these options; 0 when they exceed the address
  // space (Init says so).
  static size_t RequiredBytes(const Session& session, const ChatOptions& options);

  // `session` and `sampler` (over the session's logits) must outlive the chat; `memory`
  // holds RequiredBytes and is 8-byte aligned. The model needs a compiled chat template.
  Status Init(Session* session, Sampler* sampler, const ChatOptions& options,
              void* memory, size_t bytes);

  // The system text (empty: none); takes effect from the next reply.
  Status SetSystem(std::string_view text);
  // Appends a turn: "user", or "assistant" (a reply given elsewhere), or another role
  // the template knows. Refused when the text does not fit what the chat keeps.
  // `extra_json`: more of the message as OpenAI writes it (ChatMessage::extra_json:
  // tool_calls, tool_call_id, ...); without it a "tool" turn answers the next call of
  // the last reply.
  Status Add(std::string_view role, std::string_view text,
             std::string_view extra_json = {});
  // Generates the assistant's reply to the conversation (streamed to `callback`) and
  // appends it as the assistant's turn. Stops at the template's end of turn, the
  // model's stop ids, a stop string, max_new tokens or a full context.
  Status Reply(size_t max_new, StopStrings* stop_strings, TokenCallback callback,
               void* user, ChatTurnStats* stats);
  // Replies from now on under `constraint` (null: none), started over for each; it must
  // outlive them. Its stop ids must include the template's end of turn.
  void set_constraint(const TokenConstraint* constraint) { constraint_ = constraint; }
  // Replies through speculative decoding (null: plain; it must be over the session).
  void set_speculator(Speculator* speculator) { speculator_ = speculator; }

  // The tools the model may call (a JSON array of OpenAI-style function definitions,
  // the template's `tools`; empty: none), kept in max_tools_bytes, from the next reply.
  // Replies are then parsed for calls in the template's format (DetectToolCallFormat):
  // a reply that calls tools becomes an assistant turn with `tool_calls` (ids call00001,
  // ...) and the text around them as its content, and each "tool" turn added after it
  // answers the next of those calls (its tool_call_id). A reply whose calls do not
  // parse (cut off by -n) stays text, and tool_calls_status() says why.
  Status SetTools(std::string_view tools_json);
  std::string_view tools_json() const { return {tools_, tools_size_}; }
  ToolCallFormat tool_call_format() const { return tool_format_; }
  // The last reply's calls: views of the chat's text, valid until the next change to
  // the conversation (Add, Reply, SetSystem, Reset).
  size_t num_tool_calls() const { return num_calls_; }
  const ToolCall& tool_call(size_t i) const { return calls_[i]; }
  const Status& tool_calls_status() const { return calls_status_; }
  // Call i's id ("call" and 5 digits, NUL-terminated).
  void tool_call_id(size_t i, char id[10]) const;
  // Calls of the last reply that no "tool" turn has answered yet.
  size_t unanswered_tool_calls() const { return unanswered_; }
  // Forgets the turns (the system text stays, and the cache keeps what still matches).
  void Reset() {
    num_messages_ = first_turn_;
    num_calls_ = unanswered_ = 0;
    CompactText();
  }

  size_t num_messages() const { return num_messages_; }
  const ChatMessage& message(size_t i) const { return messages_[i]; }

  // Renders the conversation with add_generation_prompt and tokenizes it into the
  // session's token buffer (valid until its next Tokenize), with special-token parsing
  // and no BOS, as Hugging Face tokenizes apply_chat_template's text.
  Status Tokenize(const int32_t** tokens, size_t* n) {
    return Tokenize(messages_, num_messages_, tokens, n);
  }

 private:
  Status Tokenize(const ChatMessage* messages, size_t count, const int32_t** tokens,
                  size_t* n);
  // Whether the conversation, or else its last turn alone (after the system text),
  // leaves the context room to reply: Reply drops old turns only when that helps.
  Status LastTurnFits(size_t reserve);
  Status Store(std::string_view role, std::string_view text,
               std::string_view extra_json = {});
  // The reply's calls parsed; the reply stored as its assistant turn.
  Status StoreReply(std::string_view reply);
  void DropOldest();
  void CompactText();

  Session* session_ = nullptr;
  Sampler* sampler_ = nullptr;
  Speculator* speculator_ = nullptr;
  const TokenConstraint* constraint_ = nullptr;
  ChatOptions options_;
  ChatMessage* messages_ = nullptr;  // max_messages
  size_t num_messages_ = 0;
  size_t first_turn_ = 0;  // 1 with a system text
  char* text_ = nullptr;   // message contents, in order
  size_t text_capacity_ = 0, text_used_ = 0;
  char* render_ = nullptr;  // the rendered conversation and the render's scratch
  size_t render_capacity_ = 0;
  char* tools_ = nullptr;  // max_tools_bytes: the tools' JSON
  size_t tools_size_ = 0;
  ToolCallFormat tool_format_ = ToolCallFormat::kNone;
  // The format's call markers that are control tokens (decoding to no text), whose
  // pieces a reply keeps so that its calls parse and render back as the model wrote
  // them (Phi-4-mini's <|tool_call|> and <|/tool_call|>); -1: none.
  int32_t marker_ids_[2] = {-1, -1};
  ToolCall calls_[kMaxToolCalls];
  size_t num_calls_ = 0;
  Status calls_status_;  // why the last reply's calls did not parse
  uint32_t next_call_id_ = 1;  // the next call's id number
  uint32_t unanswered_ = 0;    // calls of the last reply that no tool turn answered
  uint32_t first_unanswered_id_ = 0;
  uint32_t calls_first_id_ = 0;  // the id number of calls_[0]
};

}  // namespace ember

#endif  // EMBER_RUNTIME_CHAT_CHAT_H_
