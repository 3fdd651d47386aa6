// The C API's option structs and their defaults (see c_api_options.h and ember.h).
#include "runtime/api/c_api_options.h"

#include <cstddef>
#include <cstring>
#include <string_view>

#include "runtime/api/c_api_internal.h"

namespace ember::c_api {

Status ToSessionOptions(const ember_session_options* o, SessionOptions* options) {
  *options = SessionOptions();
  if (o == nullptr) return Status::Ok();
  EMBER_RETURN_IF_ERROR(CheckStructSize<ember_session_options>(
      "ember_session_options", o->struct_size,
      offsetof(ember_session_options, all_logits) + sizeof(o->all_logits)));
  options->max_context = o->max_context;
  if (o->max_batch) options->max_batch = o->max_batch;
  options->max_prompt_bytes = o->max_prompt_bytes;
  options->all_logits = o->all_logits != 0;
  if (EMBER_HAS_FIELD(o, ember_session_options, backend)) {
    if (o->backend > EMBER_BACKEND_XNNPACK) {
      return InvalidArgument("ember_session_options: unknown backend %u", o->backend);
    }
    options->backend = static_cast<Backend>(o->backend);
  }
  if (EMBER_HAS_FIELD(o, ember_session_options, ignore_baked_prompt)) {
    options->baked_prompt = o->ignore_baked_prompt == 0;
  }
  if (EMBER_HAS_FIELD(o, ember_session_options, isa)) options->isa = o->isa;
  if (EMBER_HAS_FIELD(o, ember_session_options, kv_type)) {
    if (o->kv_type > EMBER_KV_Q8) {
      return InvalidArgument("ember_session_options: unknown kv_type %u", o->kv_type);
    }
    options->kv_type = static_cast<KvType>(o->kv_type);
  }
  if (EMBER_HAS_FIELD(o, ember_session_options, context_shift)) {
    options->context_shift = o->context_shift != 0;
  }
  if (EMBER_HAS_FIELD(o, ember_session_options, context_keep)) {
    options->context_keep = o->context_keep;
  }
  // The selection is checked against the model when the session is planned
  // (ResolveAttentionRecord), naming what is out of range.
  if (EMBER_HAS_FIELD(o, ember_session_options, attention_max_positions)) {
    AttentionRecordOptions& r = options->record_attention;
    r.enabled = o->record_attention != 0;
    r.first_layer = o->attention_first_layer;
    r.num_layers = o->attention_num_layers;
    r.first_head = o->attention_first_head;
    r.num_heads = o->attention_num_heads;
    r.max_positions = o->attention_max_positions;
  }
  if (EMBER_HAS_FIELD(o, ember_session_options, grammar_bytes)) {
    // EMBER_NO_GRAMMAR, as 0: none.
    options->grammar_bytes = o->grammar_bytes == EMBER_NO_GRAMMAR ? 0 : o->grammar_bytes;
  }
  if (EMBER_HAS_FIELD(o, ember_session_options, draft_max)) {
    options->draft_max = o->draft_max;
  }
  return Status::Ok();
}

Status CheckAttentionCapture(const Model& model, const SessionOptions& options) {
  if (options.record_attention.enabled && options.baked_prompt &&
      model.baked_prompt().state != nullptr) {
    return InvalidArgument(
        "ember_session_options: record_attention counts positions from 0, and this "
        "model's sessions start after its baked prompt of %zu tokens (set "
        "ignore_baked_prompt)",
        model.baked_prompt().num_tokens);
  }
  return Status::Ok();
}

Status ToSamplerOptions(const ember_sampler_options* o, SamplerOptions* options,
                        StopStrings* stop) {
  *options = SamplerOptions();
  EMBER_RETURN_IF_ERROR(CheckStructSize<ember_sampler_options>(
      "ember_sampler_options", o->struct_size,
      offsetof(ember_sampler_options, seed) + sizeof(o->seed)));
  options->temperature = o->temperature;
  options->top_k = o->top_k;
  options->top_p = o->top_p;
  options->seed = o->seed;
  if (EMBER_HAS_FIELD(o, ember_sampler_options, min_p)) {
    options->repeat_penalty = o->repeat_penalty;
    options->repeat_last_n = o->repeat_last_n;
    options->frequency_penalty = o->frequency_penalty;
    options->presence_penalty = o->presence_penalty;
    options->min_p = o->min_p;
  }
  EMBER_RETURN_IF_ERROR(Sampler::CheckOptions(*options));
  std::string_view strings[StopStrings::kMaxStrings];
  uint32_t n_stop = 0;
  if (EMBER_HAS_FIELD(o, ember_sampler_options, n_stop)) n_stop = o->n_stop;
  if (n_stop > StopStrings::kMaxStrings) {
    return InvalidArgument("%u stop strings: at most %zu are allowed", n_stop,
                           StopStrings::kMaxStrings);
  }
  if (n_stop > 0 && o->stop == nullptr) {
    return InvalidArgument("n_stop is %u but stop is NULL", n_stop);
  }
  for (uint32_t i = 0; i < n_stop; ++i) {
    if (o->stop[i] == nullptr) return InvalidArgument("stop string %u is NULL", i);
    strings[i] = o->stop[i];
  }
  return stop->Set(strings, n_stop);
}

Status ToEncodeOptions(const ember_tokenize_options* o, const Tokenizer& tok,
                       EncodeOptions* options) {
  *options = EncodeOptions();
  options->add_bos = tok.add_bos();
  if (o == nullptr) return Status::Ok();
  EMBER_RETURN_IF_ERROR(CheckStructSize<ember_tokenize_options>(
      "ember_tokenize_options", o->struct_size,
      offsetof(ember_tokenize_options, parse_special) + sizeof(o->parse_special)));
  if (o->add_bos < -1 || o->add_bos > 1) {
    return InvalidArgument("ember_tokenize_options: add_bos %d is not -1, 0 or 1",
                           o->add_bos);
  }
  if (o->add_bos >= 0) options->add_bos = o->add_bos == 1;
  options->parse_special = o->parse_special != 0;
  return Status::Ok();
}

Status ToThreadPoolOptions(const ember_threadpool_options* o, int* num_threads,
                           ThreadPoolOptions* options) {
  *options = ThreadPoolOptions();
  EMBER_RETURN_IF_ERROR(CheckStructSize<ember_threadpool_options>(
      "ember_threadpool_options", o->struct_size,
      offsetof(ember_threadpool_options, adapt_to_contention) +
          sizeof(o->adapt_to_contention)));
  *num_threads = o->num_threads;
  options->adapt_to_contention = o->adapt_to_contention != 0;
  return Status::Ok();
}

}  // namespace ember::c_api

extern "C" {

void ember_threadpool_options_default(ember_threadpool_options* options) {
  const ember::ThreadPoolOptions d;
  memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->num_threads = 1;
  options->adapt_to_contention = d.adapt_to_contention ? 1 : 0;
}

void ember_session_options_default(ember_session_options* options) {
  const ember::SessionOptions d;
  memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->max_context = d.max_context;
  options->max_batch = d.max_batch;
  options->max_prompt_bytes = d.max_prompt_bytes;
  options->all_logits = d.all_logits;
  options->backend = static_cast<uint32_t>(d.backend);
  options->ignore_baked_prompt = d.baked_prompt ? 0 : 1;
  options->isa = d.isa;
  options->kv_type = static_cast<uint32_t>(d.kv_type);
  options->context_shift = d.context_shift;
  options->context_keep = d.context_keep;
  const ember::AttentionRecordOptions& r = d.record_attention;
  options->record_attention = r.enabled;
  options->attention_first_layer = r.first_layer;
  options->attention_num_layers = r.num_layers;
  options->attention_first_head = r.first_head;
  options->attention_num_heads = r.num_heads;
  options->attention_max_positions = r.max_positions;
  options->grammar_bytes = d.grammar_bytes;
}

void ember_sampler_options_default(ember_sampler_options* options) {
  const ember::SamplerOptions d;
  memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->temperature = d.temperature;
  options->top_k = d.top_k;
  options->top_p = d.top_p;
  options->seed = d.seed;
  options->repeat_penalty = d.repeat_penalty;
  options->repeat_last_n = d.repeat_last_n;
  options->frequency_penalty = d.frequency_penalty;
  options->presence_penalty = d.presence_penalty;
  options->min_p = d.min_p;
  options->stop = nullptr;
  options->n_stop = 0;
}

void ember_grammar_options_default(ember_grammar_options* options) {
  if (!options) return;
  memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->root = nullptr;  // "root"
}

void ember_tokenize_options_default(ember_tokenize_options* options) {
  memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->add_bos = -1;
  options->parse_special = 0;
}

}  // extern "C"
