// The C API's option structs and their defaults (see c_api_options.h and ember.h).
#include "runtime/c_api_options.h"

#include <cstddef>
#include <cstring>

namespace ember::capi {
namespace {

// Checks an option struct's struct_size: at least the first version's size (v1_size),
// at most what this library knows.
template <class T>
Status CheckStructSize(const char* what, uint32_t struct_size, size_t v1_size) {
  if (struct_size < v1_size) {
    return InvalidArgument(
        "%s: struct_size %u is not a valid size (fill the struct with %s_default first)",
        what, struct_size, what);
  }
  if (struct_size > sizeof(T)) {
    return Unimplemented(
        "%s: struct_size %u is larger than this library's %zu (a newer ember.h)", what,
        struct_size, sizeof(T));
  }
  return Status::Ok();
}

// Whether `field` of an options struct lies inside the caller's struct_size: a caller
// built against an older header leaves later fields at their defaults.
#define EMBER_HAS_FIELD(o, T, field) \
  ((o)->struct_size >= offsetof(T, field) + sizeof((o)->field))

}  // namespace

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
  return Status::Ok();
}

Status ToSamplerOptions(const ember_sampler_options* o, SamplerOptions* options) {
  *options = SamplerOptions();
  EMBER_RETURN_IF_ERROR(CheckStructSize<ember_sampler_options>(
      "ember_sampler_options", o->struct_size,
      offsetof(ember_sampler_options, seed) + sizeof(o->seed)));
  options->temperature = o->temperature;
  options->top_k = o->top_k;
  options->top_p = o->top_p;
  options->seed = o->seed;
  return Sampler::CheckOptions(*options);
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

}  // namespace ember::capi

extern "C" {

void ember_session_options_default(ember_session_options* options) {
  const ember::SessionOptions d;
  memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->max_context = d.max_context;
  options->max_batch = d.max_batch;
  options->max_prompt_bytes = d.max_prompt_bytes;
  options->all_logits = d.all_logits;
  options->backend = static_cast<uint32_t>(d.backend);
  options->kv_type = static_cast<uint32_t>(d.kv_type);
  options->context_shift = d.context_shift;
  options->context_keep = d.context_keep;
}

void ember_sampler_options_default(ember_sampler_options* options) {
  const ember::SamplerOptions d;
  memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->temperature = d.temperature;
  options->top_k = d.top_k;
  options->top_p = d.top_p;
  options->seed = d.seed;
}

void ember_tokenize_options_default(ember_tokenize_options* options) {
  memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->add_bos = -1;
  options->parse_special = 0;
}

}  // extern "C"
