// Session: creation over a planned arena, and the prefill/decode entry points.
#include "runtime/session.h"

#include <cstring>
#include <new>

#include "runtime/chat/prompt_state.h"
#include "runtime/forward.h"
#include "runtime/text/tokenizer.h"
#include "runtime/xnn_backend.h"

namespace ember {

Session::Session(const Model& model, const ThreadPool* pool, const SessionPlan& plan,
                 const kernels::KernelTable& kernels)
    : model_(&model), pool_(pool), kernels_(kernels), plan_(plan) {}

Result<Session> Session::Create(const Model& model, const SessionOptions& options,
                                const ThreadPool* pool, void* arena, size_t arena_bytes) {
  Result<SessionPlan> plan = PlanSession(model, options);
  if (!plan.ok()) return plan.status();
  if (options.baked_prompt) EMBER_RETURN_IF_ERROR(BakedPromptFits(model, *plan));
  const size_t needed = plan->arena_bytes();
  Session s(model, pool, *plan, kernels::ChooseKernels(plan->isa));
  if (arena == nullptr) {
    s.owned_arena_.reset(new (std::nothrow) uint8_t[needed]);
    if (!s.owned_arena_) {
      return ResourceExhausted("cannot allocate the session's arena of %zu bytes",
                               needed);
    }
    arena = s.owned_arena_.get();
  } else if (arena_bytes < needed) {
    return ResourceExhausted(
        "arena of %zu bytes is too small: this model and these options need %zu",
        arena_bytes, needed);
  }
  const uintptr_t base = reinterpret_cast<uintptr_t>(arena);
  uint8_t* aligned = static_cast<uint8_t*>(arena) +
                     ((kArenaAlignment - base % kArenaAlignment) % kArenaAlignment);
  // Nothing is cleared: the arena is touched only as far as the session uses it (a
  // long context's cache costs no memory until it fills), and no pass reads what an
  // earlier one did not write (session_test fills the arena with NaN to check it). The
  // logits are the exception, so that reading them before the first pass is defined.
  s.buffers_ = s.plan_.Bind(model.config(), aligned);
  if (s.plan_.logit_rows > 0) {  // none for an embedding model
    memset(s.buffers_.logits, 0,
           s.plan_.logit_rows * model.config().vocab_size * sizeof(float));
  }
  s.logits_last_ = s.buffers_.logits;
  s.record_ = s.plan_.record;
  s.record_.weights = s.buffers_.attention_record;
  if (s.plan_.backend == Backend::kXnnpack) {
    if (pool) EMBER_RETURN_IF_ERROR(pool->PrepareXnnpackHandle());
    EMBER_RETURN_IF_ERROR(
        CreateXnnpackMatrices(model, s.buffers_.xnnpack, s.plan_.xnnpack_bytes, &s.xnn_));
  }
  const BakedPromptView& baked = model.baked_prompt();
  if (options.baked_prompt && baked.state) {
    const Status restored =
        RestorePromptState(&s, nullptr, baked.state, baked.state_bytes);
    if (!restored.ok()) {
      return Status(restored.code(),
                    "the model's baked prompt: %s (a session that ignores the baked "
                    "prompt starts empty)",
                    restored.message());
    }
    s.use_baked_ = true;
  }
  return s;
}

void Session::Reset() {
  position_ = 0;
  shifts_ = 0;
  logits_valid_ = false;
  if (!use_baked_) return;
  const BakedPromptView& baked = model_->baked_prompt();
  // Checked when the session was created: the same bytes restore again.
  if (!RestorePromptState(this, nullptr, baked.state, baked.state_bytes).ok()) {
    position_ = 0;
    logits_valid_ = false;
  }
}

Status Session::RecordAttention(const AttentionRecordOptions& what, float* weights,
                                size_t num_floats) {
  if (position_ != 0) {
    return InvalidArgument(
        "attention recording starts at position 0; this session is at %zu (Reset first)",
        position_);
  }
  AttentionRecord record;
  EMBER_RETURN_IF_ERROR(
      ResolveAttentionRecord(model_->config(), plan_.max_context, what, &record));
  if (what.enabled) {
    if (weights == nullptr) return InvalidArgument("attention record: no memory given");
    if (num_floats < record.num_floats()) {
      return ResourceExhausted(
          "attention record of %zu floats is too small: the selection needs %zu",
          num_floats, record.num_floats());
    }
    record.weights = weights;
  }
  record_ = record;
  return Status::Ok();
}

AttentionRecord Session::attention_record() const {
  AttentionRecord record = record_;
  record.rows = position_ < record.positions ? position_ : record.positions;
  return record;
}

const float* Session::logits_at(size_t i) const {
  return i < num_logits_ ? buffers_.logits + i * model_->config().vocab_size : nullptr;
}

Status Session::CheckInput(const int32_t* tokens, size_t n, int32_t marker) const {
  if (n == 0) return InvalidArgument("no tokens to process");
  // The length before the ids: a caller's count may be wrong, and then so is the array.
  if (n > plan_.max_context - position_) {
    return OutOfRange(
        "context full: %zu tokens at position %zu exceed the context of %zu", n,
        position_, plan_.max_context);
  }
  const ModelConfig& c = model_->config();
  for (size_t i = 0; i < n; ++i) {
    if (tokens[i] == marker && marker >= 0) continue;
    if (tokens[i] < 0 || static_cast<uint32_t>(tokens[i]) >= c.vocab_size) {
      return InvalidArgument("token %d at index %zu is outside the vocabulary [0, %u)",
                             tokens[i], i, c.vocab_size);
    }
  }
  if (c.mask == AttentionMask::kBidirectional && position_ != 0) {
    return InvalidArgument(
        "a bidirectional model takes its whole input in one call; "
        "Reset() first");
  }
  return Status::Ok();
}

Status Session::CheckTypes(const uint8_t* types, size_t n) const {
  const unsigned count = model_->config().token_types ? model_->config().token_types : 1;
  for (size_t i = 0; types && i < n; ++i) {
    if (types[i] >= count) {
      return InvalidArgument("token type %u at index %zu: the model has %u", types[i], i,
                             count);
    }
  }
  return Status::Ok();
}

Status Session::PrefillHidden(const int32_t* tokens, const uint8_t* types, size_t n,
                              HiddenSink sink, void* context) {
  position_ = 0;  // every text from the start (a baked prompt is not restored)
  shifts_ = 0;
  logits_valid_ = false;
  EMBER_RETURN_IF_ERROR(CheckInput(tokens, n));
  EMBER_RETURN_IF_ERROR(CheckTypes(types, n));
  memcpy(buffers_.history, tokens, n * sizeof(int32_t));
  const ExecContext exec{&kernels_, pool_, profile_, xnn_};
  Forward forward(*model_, exec, buffers_.act, buffers_.kv, record_);
  for (size_t done = 0; done < n; done += plan_.max_batch) {
    const size_t count = n - done < plan_.max_batch ? n - done : plan_.max_batch;
    const float* rows =
        forward.Hidden(tokens + done, types ? types + done : nullptr, count, position_);
    sink(context, rows, done, count);
    position_ += count;
  }
  logits_valid_ = false;
  return Status::Ok();
}

Status Session::PrefillPacked(const int32_t* tokens, const uint8_t* types,
                              const size_t* bounds, size_t texts, const float** rows) {
  position_ = 0;
  shifts_ = 0;
  logits_valid_ = false;
  if (texts == 0 || bounds == nullptr || bounds[0] != 0) {
    return InvalidArgument("a packed step needs bounds from 0 of at least one text");
  }
  for (size_t t = 0; t < texts; ++t) {
    if (bounds[t + 1] <= bounds[t]) {
      return InvalidArgument("packed text %zu is empty or its bounds decrease", t);
    }
  }
  const size_t n = bounds[texts];
  if (n > packed_capacity()) {
    return OutOfRange("a packed step of %zu tokens; the session takes %zu", n,
                      packed_capacity());
  }
  EMBER_RETURN_IF_ERROR(CheckInput(tokens, n));
  EMBER_RETURN_IF_ERROR(CheckTypes(types, n));
  memcpy(buffers_.history, tokens, n * sizeof(int32_t));
  const ExecContext exec{&kernels_, pool_, profile_, xnn_};
  Forward forward(*model_, exec, buffers_.act, buffers_.kv, record_);
  *rows = forward.HiddenPacked(tokens, types, bounds, texts);
  position_ = n;
  return Status::Ok();
}

Status Session::Prefill(const int32_t* tokens, size_t n) {
  return Run(tokens, n, plan_.all_logits);
}

Status Session::Verify(const int32_t* tokens, size_t n) {
  if (n > plan_.draft_max + 1 || n > plan_.logit_rows) {
    return InvalidArgument("a verifying pass of %zu tokens: the session takes %zu", n,
                           plan_.draft_max + 1);
  }
  return Run(tokens, n, true);
}

Status Session::PrefillEmbedded(const int32_t* tokens, size_t n,
                                const EmbeddedRows& embedded) {
  if (embedded.marker < 0) {
    return InvalidArgument("embedded rows need a marker id >= 0, not %d", embedded.marker);
  }
  if (embedded.count > 0 && embedded.rows == nullptr) {
    return InvalidArgument("%zu embedded rows given without their values", embedded.count);
  }
  if (n > plan_.max_context - position_) return CheckInput(tokens, n);
  size_t markers = 0, run = 0;
  for (size_t i = 0; i < n; ++i) {
    run = tokens[i] == embedded.marker ? run + 1 : 0;
    markers += run > 0;
    if (embedded.bidirectional && run > plan_.max_batch) {
      return OutOfRange(
          "a bidirectional block of embedded rows at index %zu is longer than the "
          "session's step of %zu tokens (max_batch)",
          i + 1 - run, plan_.max_batch);
    }
  }
  if (markers != embedded.count) {
    return InvalidArgument("%zu embedded rows for %zu marker tokens (id %d)",
                           embedded.count, markers, embedded.marker);
  }
  return Run(tokens, n, plan_.all_logits, &embedded);
}

Status Session::Run(const int32_t* tokens, size_t n, bool all_logits,
                    const EmbeddedRows* embedded) {
  const ModelConfig& c = model_->config();
  if (c.embeds()) {
    return InvalidArgument(
        "the model (%s) is an embedding model or a reranker: it puts out vectors and "
        "scores (ember embed, ember rerank), not the next token's logits",
        c.architecture);
  }
  EMBER_RETURN_IF_ERROR(CheckInput(tokens, n, embedded ? embedded->marker : -1));
  memcpy(buffers_.history + position_, tokens, n * sizeof(int32_t));
  const ExecContext exec{&kernels_, pool_, profile_, xnn_};
  Forward forward(*model_, exec, buffers_.act, buffers_.kv, record_);
  const size_t batch = plan_.max_batch;
  EmbeddedRows step_rows;  // this step's: from the first row its markers take
  if (embedded) step_rows = *embedded;
  for (size_t done = 0; done < n;) {
    size_t count = n - done < batch ? n - done : batch;
    if (embedded && embedded->bidirectional && done + count < n) {
      // A block running on past the step starts the next step instead (the caller
      // refused blocks longer than a step: this one starts after `done`).
      size_t cut = done + count;
      while (cut > done && tokens[cut] == embedded->marker &&
             tokens[cut - 1] == embedded->marker) {
        --cut;
      }
      if (cut > done) count = cut - done;
    }
    num_logits_ = forward.Run(tokens + done, count, position_, all_logits,
                              buffers_.logits, embedded ? &step_rows : nullptr);
    if (embedded) {
      for (size_t i = done; i < done + count; ++i) {
        if (tokens[i] == embedded->marker) step_rows.rows += c.d_model;
      }
    }
    position_ += count;
    done += count;
  }
  logits_last_ = buffers_.logits + (num_logits_ - 1) * c.vocab_size;
  logits_valid_ = true;
  return Status::Ok();
}

Status Session::Truncate(size_t position) {
  if (position > position_) {
    return InvalidArgument("cannot truncate to position %zu: the session is at %zu",
                           position, position_);
  }
  if (model_->config().mask == AttentionMask::kBidirectional && position != 0) {
    return InvalidArgument("a bidirectional model's context cannot be cut short");
  }
  for (size_t layer = 0; layer < model_->config().n_layers; ++layer) {
    if (!buffers_.kv.Holds(layer, model_->config().window(layer), position_, position)) {
      return OutOfRange(
          "cannot truncate to position %zu: layer %zu keeps a ring of its last %zu "
          "positions (a sliding window of %u), which no longer holds those a pass from "
          "there reads; prefill again from an earlier point (Reset)",
          position, layer, buffers_.kv.layers[layer].ring,
          model_->config().sliding_window);
    }
  }
  // The last step's rows hold positions [position_ - num_logits_, position_) when it
  // kept them all (one row: the last position's, either way).
  const size_t back = position_ - position;
  if (back > 0 && back < num_logits_ && logits_valid_) {
    num_logits_ -= back;
    logits_last_ = buffers_.logits + (num_logits_ - 1) * model_->config().vocab_size;
  } else if (back > 0) {
    logits_valid_ = false;
  }
  position_ = position;
  return Status::Ok();
}

Status Session::Tokenize(const char* text, size_t text_bytes,
                         const EncodeOptions& options, const int32_t** ids, size_t* n) {
  if (text_bytes > plan_.max_prompt_bytes) {
    return InvalidArgument("text of %zu bytes exceeds the session's max_prompt_bytes %zu",
                           text_bytes, plan_.max_prompt_bytes);
  }
  *ids = buffers_.tokens;
  return model_->tokenizer().Encode(std::string_view(text, text_bytes), options,
                                    buffers_.tokens, plan_.token_capacity, n);
}

}  // namespace ember
