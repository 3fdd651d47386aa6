// The C API (ember.h) over the C++ runtime: opaque handles, statuses, and a per-thread
// last-error message. No call here allocates after ember_session_create.
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <type_traits>

#include "runtime/api/c_api_internal.h"
#include "runtime/api/c_api_options.h"
#include "runtime/chat/prompt_state.h"
#include "runtime/generate.h"

#define EMBER_SAME_CODE(c_name, cpp_name) \
  static_assert(static_cast<int>(c_name) == static_cast<int>(ember::StatusCode::cpp_name))
EMBER_SAME_CODE(EMBER_OK, kOk);
EMBER_SAME_CODE(EMBER_INVALID_ARGUMENT, kInvalidArgument);
EMBER_SAME_CODE(EMBER_INVALID_MODEL, kInvalidModel);
EMBER_SAME_CODE(EMBER_NOT_FOUND, kNotFound);
EMBER_SAME_CODE(EMBER_IO_ERROR, kIoError);
EMBER_SAME_CODE(EMBER_OUT_OF_RANGE, kOutOfRange);
EMBER_SAME_CODE(EMBER_RESOURCE_EXHAUSTED, kResourceExhausted);
EMBER_SAME_CODE(EMBER_UNIMPLEMENTED, kUnimplemented);
EMBER_SAME_CODE(EMBER_INTERNAL, kInternal);
#undef EMBER_SAME_CODE
static_assert(EMBER_BACKEND_HIGHWAY == static_cast<unsigned>(ember::Backend::kHighway));
static_assert(EMBER_BACKEND_XNNPACK == static_cast<unsigned>(ember::Backend::kXnnpack));
static_assert(EMBER_KV_F32 == static_cast<unsigned>(ember::KvType::kF32));
static_assert(EMBER_KV_F16 == static_cast<unsigned>(ember::KvType::kF16));
static_assert(EMBER_KV_Q8 == static_cast<unsigned>(ember::KvType::kQ8));

namespace ember::c_api {

thread_local char last_error[ember::Status::kMaxMessageBytes] = "";

ember_status Report(const ember::Status& status) {
  if (status.ok()) return EMBER_OK;
  ember::Format(last_error, sizeof(last_error), "%s", status.message());
  return static_cast<ember_status>(status.code());
}

ember_status NullArgument(const char* what) {
  return Report(ember::InvalidArgument("%s is NULL", what));
}

}  // namespace ember::c_api

namespace {

using ember::c_api::CheckStructSize;
using ember::c_api::NullArgument;
using ember::c_api::Report;

using ember::c_api::Release;

using ember::c_api::ToEncodeOptions;
using ember::c_api::ToSamplerOptions;
using ember::c_api::ToSessionOptions;

ember_status ModelResult(ember::Result<std::unique_ptr<ember::Model>> result,
                         ember_model** model) {
  if (!result.ok()) return Report(result.status());
  *model = new (std::nothrow) ember_model;
  if (*model) (*model)->model = std::move(*result);
  return *model ? EMBER_OK : Report(ember::ResourceExhausted("out of memory"));
}

struct GenerateTrampoline {
  ember_token_callback callback;
  void* user;
};

bool CallBack(void* user, int32_t id, std::string_view text) {
  auto* t = static_cast<GenerateTrampoline*>(user);
  return t->callback(t->user, id, text.data(), text.size()) != 0;
}

ember_status Tokenize(ember_session* session, const char* text, size_t length,
                      const ember_tokenize_options* options, int add_bos, int32_t* ids,
                      size_t capacity, size_t* n_ids) {
  if (!session) return NullArgument("session");
  if (!n_ids) return NullArgument("n_ids");
  if (!text && length) return NullArgument("text");
  *n_ids = 0;
  ember::EncodeOptions encode;
  if (options || add_bos < 0) {
    ember_status status =
        Report(ToEncodeOptions(options, session->session.model().tokenizer(), &encode));
    if (status != EMBER_OK) return status;
  } else {
    encode.add_bos = add_bos != 0;
  }
  const int32_t* tokens = nullptr;
  size_t n = 0;
  ember_status status =
      Report(session->session.Tokenize(text ? text : "", length, encode, &tokens, &n));
  if (status != EMBER_OK) return status;
  *n_ids = n;
  if (n > capacity) {
    return Report(ember::ResourceExhausted("%zu token ids do not fit in a buffer of %zu",
                                           n, capacity));
  }
  if (n == 0) return EMBER_OK;  // ids may be NULL: memcpy must not see it
  if (!ids) return NullArgument("ids");
  memcpy(ids, tokens, n * sizeof(int32_t));
  return EMBER_OK;
}

}  // namespace

extern "C" {

#define EMBER_STRINGIFY_(x) #x
#define EMBER_STRINGIFY(x) EMBER_STRINGIFY_(x)
const char* ember_version(void) {
  return EMBER_STRINGIFY(EMBER_VERSION_MAJOR) "." EMBER_STRINGIFY(
      EMBER_VERSION_MINOR) "." EMBER_STRINGIFY(EMBER_VERSION_PATCH);
}

const char* ember_status_string(ember_status status) {
  // A C caller may pass any value: read its representation (loading an out-of-range
  // enum value is undefined in C++), and name only the codes there are. That is an int,
  // or a byte where enums are short (arm-none-eabi's AAPCS default).
  std::underlying_type_t<ember_status> raw;
  static_assert(sizeof(raw) == sizeof(status), "an enum is its underlying type");
  memcpy(&raw, &status, sizeof(raw));
  const int code = static_cast<int>(raw);
  if (code < EMBER_OK || code > EMBER_INTERNAL) return "unknown status";
  return ember::StatusCodeName(static_cast<ember::StatusCode>(code));
}

const char* ember_last_error(void) { return ember::c_api::last_error; }

ember_status ember_model_open(const char* path, ember_model** model) {
  if (!path) return NullArgument("path");
  if (!model) return NullArgument("model");
  *model = nullptr;
  return ModelResult(ember::Model::Open(path), model);
}

ember_status ember_model_from_memory(const void* data, size_t size, ember_model** model) {
  if (!model) return NullArgument("model");
  *model = nullptr;
  return ModelResult(ember::Model::FromMemory(data, size), model);
}

void ember_model_free(ember_model* model) { Release(model); }

uint32_t ember_model_vocab_size(const ember_model* m) {
  return m ? m->model->config().vocab_size : 0;
}
uint32_t ember_model_max_context(const ember_model* m) {
  return m ? m->model->config().max_context : 0;
}
int32_t ember_model_bos(const ember_model* m) {
  return m ? m->model->tokenizer().bos_id() : -1;
}
int32_t ember_model_eos(const ember_model* m) {
  return m ? m->model->tokenizer().eos_id() : -1;
}
size_t ember_model_baked_tokens(const ember_model* m) {
  return m ? m->model->baked_prompt().num_tokens : 0;
}

ember_status ember_threadpool_create(int num_threads, ember_threadpool** pool) {
  ember_threadpool_options options;
  ember_threadpool_options_default(&options);
  options.num_threads = num_threads;
  return ember_threadpool_create_with_options(&options, pool);
}

ember_status ember_threadpool_create_with_options(const ember_threadpool_options* options,
                                                  ember_threadpool** pool) {
  if (!pool) return NullArgument("pool");
  *pool = nullptr;
  if (!options) return NullArgument("options");
  int num_threads = 0;
  ember::ThreadPoolOptions pool_options;
  const ember::Status status =
      ember::c_api::ToThreadPoolOptions(options, &num_threads, &pool_options);
  if (!status.ok()) return Report(status);
  auto result = ember::ThreadPool::Create(num_threads, pool_options);
  if (!result.ok()) return Report(result.status());
  *pool = new (std::nothrow) ember_threadpool;
  if (*pool) (*pool)->pool = std::move(*result);
  return *pool ? EMBER_OK : Report(ember::ResourceExhausted("out of memory"));
}

void ember_threadpool_free(ember_threadpool* pool) { Release(pool); }

size_t ember_arena_bytes(const ember_model* model, const ember_session_options* options) {
  if (!model) {
    NullArgument("model");
    return 0;
  }
  ember::SessionOptions session_options;
  ember::Status status = ToSessionOptions(options, &session_options);
  if (status.ok()) {
    status = ember::c_api::CheckAttentionCapture(*model->model, session_options);
  }
  if (!status.ok()) {
    Report(status);
    return 0;
  }
  auto plan = ember::PlanSession(*model->model, session_options);
  if (!plan.ok()) {
    Report(plan.status());
    return 0;
  }
  // A session that restores the model's baked prompt must hold it: create refuses the
  // rest, so no size is given for them.
  if (session_options.baked_prompt) {
    const ember::Status baked = ember::BakedPromptFits(*model->model, *plan);
    if (!baked.ok()) {
      Report(baked);
      return 0;
    }
  }
  return plan->arena_bytes();
}

ember_status ember_session_create(const ember_model* model,
                                  const ember_session_options* options,
                                  ember_threadpool* pool, void* arena, size_t arena_bytes,
                                  ember_session** session) {
  if (!model) return NullArgument("model");
  if (!session) return NullArgument("session");
  *session = nullptr;
  ember::SessionOptions session_options;
  ember::Status status = ToSessionOptions(options, &session_options);
  if (status.ok()) {
    status = ember::c_api::CheckAttentionCapture(*model->model, session_options);
  }
  if (!status.ok()) return Report(status);
  auto result =
      ember::Session::Create(*model->model, session_options,
                             pool ? pool->pool.get() : nullptr, arena, arena_bytes);
  if (!result.ok()) return Report(result.status());
  auto* s = new (std::nothrow) ember_session{
      model, pool,    std::move(*result), std::nullopt, {}, {nullptr, nullptr}, {},
      true,  nullptr, std::nullopt};
  if (!s) return Report(ember::ResourceExhausted("out of memory for the session object"));
  model->references.fetch_add(1, std::memory_order_relaxed);
  if (pool) pool->references.fetch_add(1, std::memory_order_relaxed);
  ember_sampler_options greedy;
  ember_sampler_options_default(&greedy);
  greedy.temperature = 0.0f;
  ember_session_set_sampler(s, &greedy);
  *session = s;
  return EMBER_OK;
}

void ember_session_free(ember_session* session) {
  if (!session) return;
  const ember_model* model = session->model;
  ember_threadpool* pool = session->pool;
  delete session;
  Release(model);
  Release(pool);
}

void ember_session_reset(ember_session* session) {
  if (session) session->session.Reset();
}

size_t ember_session_position(const ember_session* session) {
  return session ? session->session.position() : 0;
}

ember_status ember_tokenize(ember_session* session, const char* text, size_t length,
                            int add_bos, int32_t* ids, size_t capacity, size_t* n_ids) {
  return Tokenize(session, text, length, nullptr, add_bos != 0, ids, capacity, n_ids);
}

ember_status ember_tokenize_with_options(ember_session* session, const char* text,
                                         size_t length,
                                         const ember_tokenize_options* options,
                                         int32_t* ids, size_t capacity, size_t* n_ids) {
  if (!options) {
    return Tokenize(session, text, length, nullptr, -1, ids, capacity, n_ids);
  }
  return Tokenize(session, text, length, options, 0, ids, capacity, n_ids);
}

ember_status ember_detokenize(const ember_model* model, int32_t prev_token, int32_t token,
                              const char** bytes, size_t* length) {
  if (!model) return NullArgument("model");
  if (!bytes || !length) return NullArgument("bytes or length");
  const ember::Tokenizer& tok = model->model->tokenizer();
  if (token < 0 || static_cast<uint32_t>(token) >= tok.vocab_size()) {
    return Report(ember::InvalidArgument("token %d is outside the vocabulary [0, %u)",
                                         token, tok.vocab_size()));
  }
  // -1 is the start of the text; any other id outside the vocabulary is a caller's
  // mistake, which would otherwise pass silently as the start.
  if (prev_token < -1 || prev_token >= static_cast<int64_t>(tok.vocab_size())) {
    return Report(ember::InvalidArgument(
        "prev_token %d is outside the vocabulary [0, %u) (-1: the start of the text)",
        prev_token, tok.vocab_size()));
  }
  const std::string_view text = tok.Decode(prev_token, token);
  *bytes = text.data();
  *length = text.size();
  return EMBER_OK;
}

ember_status ember_prefill(ember_session* session, const int32_t* ids, size_t n_ids) {
  if (!session) return NullArgument("session");
  if (!ids && n_ids) return NullArgument("ids");
  return Report(session->session.Prefill(ids, n_ids));
}

ember_status ember_decode(ember_session* session, int32_t token) {
  if (!session) return NullArgument("session");
  return Report(session->session.Decode(token));
}

const float* ember_logits(const ember_session* session) {
  return session ? session->session.logits() : nullptr;
}

const float* ember_logits_rows(const ember_session* session, size_t* n_rows) {
  const size_t rows = session ? session->session.num_logits() : 0;
  if (n_rows) *n_rows = rows;
  return rows > 0 ? session->session.logits_at(0) : nullptr;
}

ember_status ember_session_set_sampler(ember_session* session,
                                       const ember_sampler_options* options) {
  if (!session) return NullArgument("session");
  if (!options) return NullArgument("options");
  ember::SamplerOptions sampler_options;
  ember::StopStrings stop;  // checked and copied before anything changes
  const ember::Status status = ToSamplerOptions(options, &sampler_options, &stop);
  if (!status.ok()) return Report(status);
  session->stop = stop;
  session->sampler.emplace(sampler_options, session->model->model->config().vocab_size,
                           session->session.sampler_scratch());
  return EMBER_OK;
}

ember_status ember_sample(ember_session* session, int32_t* token) {
  if (!session) return NullArgument("session");
  if (!token) return NullArgument("token");
  if (!session->session.logits_valid()) {
    return Report(ember::InvalidArgument("no logits yet: prefill first"));
  }
  const ember::Session& s = session->session;
  return Report(session->sampler->Sample(s.logits(), s.tokens(), s.position(), token));
}

ember_status ember_session_shift_context(ember_session* session, size_t keep,
                                         size_t discard) {
  if (!session) return NullArgument("session");
  return Report(session->session.ShiftContext(keep, discard));
}

ember_status ember_generate(ember_session* session, const int32_t* prompt,
                            size_t n_prompt, size_t max_new,
                            ember_token_callback callback, void* user,
                            size_t* n_generated) {
  if (!session) return NullArgument("session");
  if (!callback) return NullArgument("callback");
  if (!prompt && n_prompt) return NullArgument("prompt");
  GenerateTrampoline trampoline{callback, user};
  ember::GenerateResult result;
  ember::GenerateOptions options;
  options.max_new = max_new;
  options.stop_strings = &session->stop;
  if (session->speculator) options.speculator = &*session->speculator;
  if (session->grammar) {
    options.constraint = &session->constraint;
    const ember::Status reset = session->constraint.reset(session->constraint.self);
    if (!reset.ok()) return Report(reset);
  }
  const ember::Status status =
      ember::Generate(session->session, *session->sampler, prompt, n_prompt, options,
                      &CallBack, &trampoline, &result);
  if (n_generated) *n_generated = result.generated;
  session->grammar_complete = result.complete;
  if (status.ok() && !result.complete && result.stop != ember::StopReason::kCallback) {
    return Report(ember::OutOfRange(
        "stopped after %zu tokens in the middle of the grammar's text (%s)",
        result.generated,
        result.stop == ember::StopReason::kContextFull ? "the context is full"
                                                        : "max_new reached"));
  }
  if (status.ok() && result.stop == ember::StopReason::kContextFull) {
    return Report(ember::OutOfRange("context full after %zu of %zu tokens (context %zu)",
                                    result.generated, max_new,
                                    session->session.max_context()));
  }
  return Report(status);
}

size_t ember_session_state_size(const ember_session* session) {
  return session ? ember::PromptStateBytes(session->session) : 0;
}

ember_status ember_session_save_state(const ember_session* session, void* buffer,
                                      size_t capacity, size_t* size) {
  if (!session) return NullArgument("session");
  if (!size) return NullArgument("size");
  if (!buffer && capacity) return NullArgument("buffer");
  return Report(ember::SavePromptState(session->session, &*session->sampler, buffer,
                                       capacity, size));
}

ember_status ember_session_restore_state(ember_session* session, const void* data,
                                         size_t size) {
  if (!session) return NullArgument("session");
  if (!data) return NullArgument("data");
  return Report(
      ember::RestorePromptState(&session->session, &*session->sampler, data, size));
}

}  // extern "C"
