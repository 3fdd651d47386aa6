// What the C API's files share (c_api.cc, c_api_chat.cc, c_api_grammar.cc): the handles' structs, the
// last-error report and the option struct checks.
#ifndef EMBER_RUNTIME_C_API_INTERNAL_H_
#define EMBER_RUNTIME_C_API_INTERNAL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "runtime/chat/chat.h"
#include "runtime/chat/stop_strings.h"
#include "runtime/ember.h"
#include "runtime/generate.h"
#include "runtime/model/model.h"
#include "runtime/pool/thread_pool.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "runtime/speculative/speculator.h"

// Freed when its handle and every session over it are: one reference each.
struct ember_model {
  std::unique_ptr<ember::Model> model;
  mutable std::atomic<uint32_t> references{1};
};

struct ember_threadpool {
  std::unique_ptr<ember::ThreadPool> pool;
  std::atomic<uint32_t> references{1};
};

// One heap object per session (the promise of ember.h): the Session lives inside it.
struct ember_session {
  const ember_model* model;
  ember_threadpool* pool;  // may be null
  ember::Session session;
  std::optional<ember::Sampler> sampler;
  ember::StopStrings stop;
  // ember_session_set_grammar's (c_api_grammar.cc), and whether the last generation
  // under it ended whole.
  // The constraint's owner (null: none), freed by its deleter (the type is the grammar
  // room's, which builds without grammars leave out).
  std::unique_ptr<void, void (*)(void*)> grammar{nullptr, nullptr};
  ember::TokenConstraint constraint;  // over it
  bool grammar_complete = true;
  // The chat whose grammar the session's arena region holds (null: none, or the
  // session's own): the region holds one grammar at a time.
  ember_chat* grammar_chat = nullptr;
  // Speculative decoding (c_api_speculative.cc): made at the first set_lookup or
  // set_draft over the session's region for it.
  std::optional<ember::Speculator> speculator;
};

struct ember_chat {
  ember_session* session;
  ember::Chat chat;
  std::unique_ptr<uint64_t[]> memory;
  ember::ChatTurnStats last;
  // The replies' grammar (c_api_grammar.cc): ember_chat_set_tool_grammar's lazy grammar
  // of a call, or ember_chat_set_grammar's of the whole reply (whole_reply), its owner
  // freed by its deleter as a session's grammar is.
  std::unique_ptr<void, void (*)(void*)> grammar{nullptr, nullptr};
  ember::TokenConstraint constraint;  // over it
  bool whole_reply = false;
};

namespace ember::c_api {

// Keeps the status's message as the calling thread's last error; returns its code.
ember_status Report(const ember::Status& status);
ember_status NullArgument(const char* what);

// Drops one reference to a model or a pool; the last one frees it.
template <class T>
void Release(T* handle) {
  if (handle && handle->references.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    delete handle;
  }
}

// How a caller fills a struct before a call: with its `what`_default function, or (a
// struct that only receives values: ember_chat_stats) by setting struct_size itself.
enum class StructFill { kDefaultFunction, kSizeOnly };

// Checks an option struct's struct_size: at least the first version's size (v1_size),
// at most what this library knows.
template <class T>
ember::Status CheckStructSize(const char* what, uint32_t struct_size, size_t v1_size,
                              StructFill fill = StructFill::kDefaultFunction) {
  if (struct_size < v1_size && fill == StructFill::kSizeOnly) {
    return ember::InvalidArgument(
        "%s: struct_size %u is not a valid size (set struct_size = sizeof(%s) first)",
        what, struct_size, what);
  }
  if (struct_size < v1_size) {
    return ember::InvalidArgument(
        "%s: struct_size %u is not a valid size (fill the struct with %s_default first)",
        what, struct_size, what);
  }
  if (struct_size > sizeof(T)) {
    return ember::Unimplemented(
        "%s: struct_size %u is larger than this library's %zu (a newer ember.h)", what,
        struct_size, sizeof(T));
  }
  return ember::Status::Ok();
}

}  // namespace ember::c_api

// Whether `field` of an options struct lies inside the caller's struct_size: a caller
// built against an older header leaves later fields at their defaults.
#define EMBER_HAS_FIELD(o, T, field) \
  ((o)->struct_size >= offsetof(T, field) + sizeof((o)->field))

#endif  // EMBER_RUNTIME_C_API_INTERNAL_H_
