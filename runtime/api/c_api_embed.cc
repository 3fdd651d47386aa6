// The C API's embeddings (ember_embed.h) over runtime/embed/.
#include <cstddef>
#include <cstring>

#include "runtime/api/c_api_internal.h"
#include "runtime/embed/embed.h"

using ember::c_api::CheckStructSize;
using ember::c_api::NullArgument;
using ember::c_api::Report;

namespace {

ember::Status ReadOptions(const ember_embed_options* options, ember::EmbedOptions* out) {
  if (!options) return ember::Status::Ok();
  EMBER_RETURN_IF_ERROR(CheckStructSize<ember_embed_options>(
      "ember_embed_options", options->struct_size,
      offsetof(ember_embed_options, normalize) + sizeof(int32_t)));
  out->dims = options->dims;
  out->normalize = options->normalize;
  if (EMBER_HAS_FIELD(options, ember_embed_options, prompt_name)) {
    out->prompt_name = options->prompt_name;
  }
  return ember::Status::Ok();
}

}  // namespace

extern "C" {

void ember_embed_options_default(ember_embed_options* options) {
  if (!options) return;
  memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->dims = 0;
  options->normalize = -1;
  options->prompt_name = nullptr;
}

size_t ember_model_embedding_dims(const ember_model* model) {
  return model ? ember::EmbeddingDims(model->model->config()) : 0;
}

ember_status ember_embed(ember_session* session, const char* text, size_t length,
                         const ember_embed_options* options, float* out,
                         size_t out_floats) {
  if (!session) return NullArgument("session");
  if (!text && length) return NullArgument("text");
  ember::EmbedOptions o;
  const ember::Status read = ReadOptions(options, &o);
  if (!read.ok()) return Report(read);
  return Report(ember::EmbedText(session->session, std::string_view(text ? text : "", length),
                                 o, out, out_floats));
}

ember_status ember_embed_batch(ember_session* session, const char* const* texts,
                               const size_t* lengths, size_t n_texts,
                               const ember_embed_options* options, float* out,
                               size_t out_floats) {
  if (!session) return NullArgument("session");
  if (n_texts && (!texts || !lengths)) return NullArgument(!texts ? "texts" : "lengths");
  ember::EmbedOptions o;
  const ember::Status read = ReadOptions(options, &o);
  if (!read.ok()) return Report(read);
  const size_t dims = o.dims ? o.dims : ember_model_embedding_dims(session->model);
  if (dims != 0 && out_floats / dims < n_texts) {
    return Report(ember::ResourceExhausted(
        "%zu embeddings of %zu values do not fit in %zu floats", n_texts, dims,
        out_floats));
  }
  size_t done = 0;
  const ember::Status s = ember::EmbedTextBatch(session->session, texts, lengths, n_texts,
                                                o, out, out_floats, &done);
  if (!s.ok()) return Report(ember::Status(s.code(), "text %zu: %s", done, s.message()));
  return EMBER_OK;
}

ember_status ember_embed_tokens(ember_session* session, const int32_t* ids,
                                const uint8_t* types, size_t n_ids,
                                const ember_embed_options* options, float* out,
                                size_t out_floats) {
  if (!session) return NullArgument("session");
  if (!ids && n_ids) return NullArgument("ids");
  ember::EmbedOptions o;
  const ember::Status read = ReadOptions(options, &o);
  if (!read.ok()) return Report(read);
  return Report(ember::Embed(session->session, ids, types, n_ids, o, out, out_floats));
}

size_t ember_model_labels(const ember_model* model) {
  return model ? model->model->config().labels : 0;
}

ember_status ember_rerank(ember_session* session, const char* query, size_t query_length,
                          const char* const* docs, const size_t* doc_lengths,
                          size_t n_docs, float* scores) {
  return ember_rerank_instructed(session, nullptr, 0, query, query_length, docs,
                                 doc_lengths, n_docs, scores);
}

ember_status ember_rerank_instructed(ember_session* session, const char* instruction,
                                     size_t instruction_length, const char* query,
                                     size_t query_length, const char* const* docs,
                                     const size_t* doc_lengths, size_t n_docs,
                                     float* scores) {
  if (!session) return NullArgument("session");
  if (!instruction && instruction_length) return NullArgument("instruction");
  if (!query && query_length) return NullArgument("query");
  if (n_docs && (!docs || !doc_lengths || !scores)) {
    return NullArgument(!docs ? "docs" : !doc_lengths ? "doc_lengths" : "scores");
  }
  ember::Session& s = session->session;
  const size_t labels = s.model().config().labels;
  if (labels != 1) {
    return Report(ember::InvalidArgument(
        "a reranker has a head of one output (a relevance logit); this model's has %zu "
        "(ember_score_tokens gives them all)", labels));
  }
  for (size_t i = 0; i < n_docs; ++i) {
    if (!docs[i] && doc_lengths[i]) {
      return Report(ember::InvalidArgument("document %zu is NULL", i));
    }
    const int32_t* ids = nullptr;
    const uint8_t* types = nullptr;
    size_t n = 0;
    ember::Status st = ember::EncodePair(
        s, std::string_view(query ? query : "", query_length),
        std::string_view(docs[i] ? docs[i] : "", doc_lengths[i]), &ids, &types, &n,
        std::string_view(instruction ? instruction : "", instruction_length));
    if (st.ok()) st = ember::Score(s, ids, types, n, &scores[i], 1);
    if (!st.ok()) {
      return Report(ember::Status(st.code(), "document %zu: %s", i, st.message()));
    }
  }
  return EMBER_OK;
}

ember_status ember_score_tokens(ember_session* session, const int32_t* ids,
                                const uint8_t* types, size_t n_ids, float* scores,
                                size_t n_scores) {
  if (!session) return NullArgument("session");
  if (!ids && n_ids) return NullArgument("ids");
  return Report(ember::Score(session->session, ids, types, n_ids, scores, n_scores));
}

}  // extern "C"
