// Embeddings: an embedding model's pass over a text, pooled into one vector (the
// config's pooling of the final hidden states), cut to its first `dims` values
// (Matryoshka truncation) and scaled to unit length (the config's normalize, or the
// caller's choice), written to caller memory. Nothing here allocates.
#ifndef EMBER_RUNTIME_EMBED_EMBED_H_
#define EMBER_RUNTIME_EMBED_EMBED_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/model/config.h"
#include "runtime/session.h"
#include "runtime/status.h"

namespace ember {

struct EmbedOptions {
  size_t dims = 0;     // the leading values kept (<= d_model); 0: all
  int normalize = -1;  // -1: as the model says (config.normalize); 0: no; 1: yes
  // The named prompt put before a text (EmbedText; sentence-transformers' prompt_name,
  // e.g. "query"): null: the model's default prompt, if it has one; "": none.
  const char* prompt_name = nullptr;
};

// The values of a model's embedding: d_model or its last dense projection's, 0 when it
// is not an embedding model.
inline size_t EmbeddingDims(const ModelConfig& c) {
  return c.embeds() ? c.embedding_values() : 0;
}

// Pools rows [first, first + count) of a pass over a text of `total` tokens into
// acc[0, dims): their sum (mean: divided later by FinishEmbedding), row 0's values
// (cls), or the last row's (last). acc starts zeroed for mean. Rows have `d` values.
void PoolRows(Pooling pooling, const float* rows, size_t d, size_t first, size_t count,
              size_t total, float* acc, size_t dims);
// The pooled sum divided by `total` (mean), then scaled to unit length when `normalize`
// (a zero vector stays zero).
void FinishEmbedding(Pooling pooling, size_t total, bool normalize, float* v,
                     size_t dims);

// The embedding of `tokens` (segment `types`, null: all 0) into out[0, dims) where dims
// is options.dims or the model's; out_size must hold dims floats.
Status Embed(Session& session, const int32_t* tokens, const uint8_t* types, size_t n,
             const EmbedOptions& options, float* out, size_t out_size);

// The text of the tokenizer's named prompt `name` (null: its default prompt's, if it has
// one, else ""; "": ""); an unknown name is an error.
Status PromptText(const Tokenizer& tok, const char* name, std::string_view* text);

// Whole texts in one forward step (Session::PrefillPacked): text t is tokens[bounds[t],
// bounds[t + 1]), its embedding row t of out (dims floats each; out_size >= texts x
// dims); bounds[texts] <= session.packed_capacity(). tokens may be the session's token
// buffer (the pass reads it before it writes anything).
Status EmbedPacked(Session& session, const int32_t* tokens, const size_t* bounds,
                   size_t texts, const EmbedOptions& options, float* out,
                   size_t out_size);

// The most texts one packed step takes.
inline constexpr size_t kMaxPackedTexts = 64;
// The packed step the tools plan for short texts (`ember embed`, `ember bench --embed`):
// enough rows for the matrix kernels' full speed, few enough that the step's activations
// stay in cache.
inline constexpr size_t kPackedStepTokens = 256;

// The embeddings of n_texts texts of tokens (ids[i], lengths[i] of them; not in the
// session's arena), row i of out (dims floats each; out_size >= n_texts x dims): in
// order, whole texts packed into steps of up to packed_capacity() tokens (a longer text
// runs alone, in steps of max_batch) through the session's token buffer. *done: the
// rows written, all of them unless an error stopped it (then the failing text is text
// *done or a later one of the step that failed).
Status EmbedTokensBatch(Session& session, const int32_t* const* ids,
                        const size_t* lengths, size_t n_texts,
                        const EmbedOptions& options, float* out, size_t out_size,
                        size_t* done);

// The embedding of UTF-8 text, after the named prompt options.prompt_name chooses,
// encoded as the tokenizer's post-processor says (BERT: [CLS] text [SEP]) in the
// session's token buffer.
Status EmbedText(Session& session, std::string_view text, const EmbedOptions& options,
                 float* out, size_t out_size);
// EmbedText over n_texts texts (texts[i] of lengths[i] bytes; null only when empty),
// row i of out (out_size >= n_texts x dims), each encoded straight into the session's
// token buffer and packed as EmbedTokensBatch packs them. On an error, *done rows (the
// texts before the failing one, text *done) are written.
Status EmbedTextBatch(Session& session, const char* const* texts, const size_t* lengths,
                      size_t n_texts, const EmbedOptions& options, float* out,
                      size_t out_size, size_t* done);

// A cross-encoder's scores (config.labels > 0): the pooled vector of `tokens` (segment
// `types`, null: all 0) through the classification head, raw (logits), into
// scores[0, labels).
Status Score(Session& session, const int32_t* tokens, const uint8_t* types, size_t n,
             float* scores, size_t scores_size);

// Encodes a pair of texts as BERT's post-processor does, into the session's token and
// type buffers (valid until the next encoding): `a` as one text (BERT: [CLS] a [SEP]),
// then `b` without BOS, and EOS after it; the types are 0 over a's part, 1 over b's
// (*types null for a model without segment embeddings). A reranker with a prompt
// (Tokenizer::pair_format, Qwen3-Reranker's) is encoded as that prompt instead, with
// `instruction` in it (empty: the model's), in one encoding and without types; an
// instruction for any other model is an error.
Status EncodePair(Session& session, std::string_view a, std::string_view b,
                  const int32_t** ids, const uint8_t** types, size_t* n,
                  std::string_view instruction = {});

}  // namespace ember

#endif  // EMBER_RUNTIME_EMBED_EMBED_H_
