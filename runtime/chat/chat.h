// Chat: a conversation in turns over a Session, with the model's chat template. Each
// turn renders the whole conversation, tokenizes it (the template's control tokens
// parsed as special tokens), keeps the cached prefix that still matches and prefills
// only the rest, then generates the reply until the template's end of turn. A context
// too full for the next turn drops the oldest turns (the system text stays). User turns
// may hold images (AttachImage): their rows, which an ImageEncoder made, take the image
// tokens the turn's markers expand to, and stay cached across turns like the text. Its
// memory is one block sized at creation (RequiredBytes); no turn allocates.
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
#include "runtime/vision/image_prompt.h"

namespace ember {

struct ChatOptions {
  uint32_t max_text_bytes = 0;  // conversation text kept; 0: 8 bytes a context position
  uint32_t max_messages = 256;  // turns kept (the oldest go first)
  uint32_t max_tools_bytes = 0;  // the tools' JSON text SetTools keeps (0: no tools)
  ChatTemplateOptions render;   // add_generation_prompt is always on for replies
  // Images the turns kept hold at once (AttachImage; 0: none). With images, the chat
  // keeps a copy of the conversation with its markers expanded: the session's
  // max_prompt_bytes more.
  uint32_t max_images = 0;
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
  size_t images = 0;      // the conversation's images
  size_t prefilled_images = 0;  // of them, prefilled now (the others were cached)
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
  // the template knows. Refused when the text does not fit what the chat keeps. A
  // "user" turn takes the images attached since the last one: at its image markers
  // (the model's ImagePrompt::marker), as many as the images, or, when it has none, one
  // marker per image before its text (as Hugging Face's templates write a message's
  // images before its text).
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
  // An image for the next "user" turn: `image.rows` rows of the model's d_model floats
  // at `rows` (an ImageEncoder's: they must stay there while the turn is in the
  // conversation) and the grid its tiles came from. Refused when the model has no
  // vision tower or image prompt, or the chat holds ChatOptions::max_images already
  // (Reset, or the dropping of old turns, frees them).
  Status AttachImage(const float* rows, const PromptImage& image);
  // The images the turns hold, and those attached for the next user turn.
  size_t num_images() const { return num_images_; }
  size_t pending_images() const { return pending_images_; }
  // Message i's images (the conversation's images hold them in order) and image j.
  size_t message_images(size_t i) const { return message_images_[i]; }
  const PromptImage& image(size_t j) const { return images_[j]; }
  const float* image_rows(size_t j) const { return image_refs_[j].rows; }

  // Replies from now on under `constraint` (null: none), started over for each; it must
  // outlive them. Its stop ids must include the template's end of turn.
  void set_constraint(const TokenConstraint* constraint) { constraint_ = constraint; }
  // Replies through speculative decoding (null: plain; it must be over the session);
  // not while the conversation holds images (a draft has no image rows).
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
  // Forgets the turns and their images, attached ones too (the system text stays, and
  // the cache keeps what still matches).
  void Reset() {
    num_messages_ = first_turn_;
    num_calls_ = unanswered_ = 0;
    num_images_ = pending_images_ = 0;
    CompactText();
  }

  size_t num_messages() const { return num_messages_; }
  const ChatMessage& message(size_t i) const { return messages_[i]; }

  // Renders the conversation with add_generation_prompt and tokenizes it into the
  // session's token buffer (valid until its next Tokenize), with special-token parsing
  // and no BOS, as Hugging Face tokenizes apply_chat_template's text.
  // With images, the markers are expanded first (image_prompt.h), and each image token
  // stands for one of the images' rows.
  Status Tokenize(const int32_t** tokens, size_t* n) {
    return Tokenize(messages_, num_messages_, 0, num_images_, tokens, n);
  }

 private:
  // An image's rows and its identity: a later turn's image at the same position is
  // another image, though its tokens are the same.
  struct ImageRef {
    const float* rows;
    uint32_t id;
  };
  // Where an image lies in the tokens: its first and last image token.
  struct ImageSpan {
    size_t first, last;
  };
  // An image the session's cache holds: the position of its first token.
  struct CachedImage {
    size_t first;
    uint32_t id;
  };

  // `messages` with images [first_image, first_image + images).
  Status Tokenize(const ChatMessage* messages, size_t count, size_t first_image,
                  size_t images, const int32_t** tokens, size_t* n);
  // The rendered text's markers expanded for images [first_image, +images), tokenized;
  // spans_ says where each image's tokens lie.
  Status TokenizeImages(const char* text, size_t length, size_t first_image,
                        size_t images, const EncodeOptions& encode,
                        const int32_t** tokens, size_t* n);
  // The cached prefix `keep` (of the tokens of the last Tokenize), cut at the first
  // image the cache does not hold at its position, or holds in part.
  size_t KeepCachedImages(size_t keep);
  // Prefills tokens [*at, n) up to the last image token with each image's rows, from
  // *at (the cached prefix) on; records what the cache then holds.
  Status PrefillImages(const int32_t* tokens, size_t* at, ChatTurnStats* stats);
  // Drops the images of message i (its turn leaves the conversation).
  void DropImages(size_t i);
  // Whether the conversation, or else its last turn alone (after the system text),
  // leaves the context room to reply: Reply drops old turns only when that helps.
  Status LastTurnFits(size_t reserve);
  Status Store(std::string_view role, std::string_view text,
               std::string_view extra_json = {});
  // A user turn with the attached images (Add).
  Status StoreWithImages(std::string_view text);
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
  // Images (max_images): the turns' in order, then the attached ones (pending_images_).
  uint32_t* message_images_ = nullptr;  // max_messages: images each message holds
  PromptImage* images_ = nullptr;
  ImageRef* image_refs_ = nullptr;
  ImageSpan* spans_ = nullptr;  // of the last Tokenize's images
  CachedImage* cached_ = nullptr;
  size_t num_images_ = 0, pending_images_ = 0, num_cached_ = 0;
  size_t cached_shifts_ = 0;  // the session's shifts() when cached_ was written
  uint32_t next_image_id_ = 1;
  char* expanded_ = nullptr;  // the conversation with its markers expanded
  size_t expanded_capacity_ = 0;
};

}  // namespace ember

#endif  // EMBER_RUNTIME_CHAT_CHAT_H_
