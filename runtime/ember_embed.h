/* ember_embed.h: embeddings through the C API (C99; included by ember.h, which is the
 * one to include). An embedding model (a BERT-style sentence encoder, or any model whose
 * file says how to pool: `ember inspect` shows it) turns a text into one vector: its
 * final hidden states pooled (mean, first token or last token), cut to its leading
 * values (Matryoshka truncation) and scaled to unit length, written to caller memory.
 * Each call runs the text from position 0 on the session (whose context bounds the
 * tokens of one text) and makes no heap allocation. Appended in 0.3. */
#ifndef EMBER_EMBER_EMBED_H_
#define EMBER_EMBER_EMBED_H_

#include <stddef.h>
#include <stdint.h>

#include "ember.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ember_embed_options {
  uint32_t struct_size; /* sizeof(ember_embed_options) */
  uint32_t dims;        /* leading values kept, at most the model's; 0: all of them */
  int32_t normalize;    /* -1: as the model says; 0: as pooled; 1: unit length */
  /* Appended in 0.3: the named prompt put before each text (sentence-transformers'
   * prompt_name, e.g. "query" or "document": `ember inspect` lists a model's); NULL: the
   * model's default prompt, if it has one; "": none. ember_embed_tokens takes none. */
  const char* prompt_name;
} ember_embed_options;
void ember_embed_options_default(ember_embed_options* options);

/* The values in the model's embedding; 0 when the model puts out logits instead. */
size_t ember_model_embedding_dims(const ember_model* model);

/* Embeds UTF-8 text (encoded as the tokenizer says, BERT: [CLS] text [SEP]) into
 * out[0, dims), dims = options->dims or the model's (options NULL: the defaults).
 * EMBER_INVALID_ARGUMENT for a model without pooling, dims past the model's or text
 * that encodes to nothing; EMBER_RESOURCE_EXHAUSTED when out_floats < dims;
 * EMBER_OUT_OF_RANGE when its tokens exceed the session's context. */
ember_status ember_embed(ember_session* session, const char* text, size_t length,
                         const ember_embed_options* options, float* out,
                         size_t out_floats);
/* n_texts texts (texts[i] of lengths[i] bytes): row i of dims floats in out for text i
 * (out_floats >= n_texts x dims). Short texts run packed, several whole texts in one
 * step of up to the session's max_batch tokens (a bidirectional model's: its context),
 * each attending only to itself: what each gives alone, within rounding. On an error,
 * the rows of the texts before the failing one are written and the message names its
 * index. */
ember_status ember_embed_batch(ember_session* session, const char* const* texts,
                               const size_t* lengths, size_t n_texts,
                               const ember_embed_options* options, float* out,
                               size_t out_floats);
/* Token ids as they are, with their segment types (NULL: all 0; a pair's second text is
 * type 1 in BERT), into out[0, dims). */
ember_status ember_embed_tokens(ember_session* session, const int32_t* ids,
                                const uint8_t* types, size_t n_ids,
                                const ember_embed_options* options, float* out,
                                size_t out_floats);

/* Rerankers: a cross-encoder (a BERT-style model with a classification head, e.g. a
 * sentence-transformers CrossEncoder) or Qwen3-Reranker (through its prompt) scores how
 * well a document answers a query. The head's outputs; 0 when the model has no head. */
size_t ember_model_labels(const ember_model* model);
/* The relevance of each of n_docs documents to the query: the pair encoded as the
 * tokenizer's post-processor says ([CLS] query [SEP] doc [SEP], the document's tokens of
 * type 1) through the model and its head of one output; scores[i] (a logit: higher is
 * more relevant) for docs[i]. On an error the message names the document. */
ember_status ember_rerank(ember_session* session, const char* query, size_t query_length,
                          const char* const* docs, const size_t* doc_lengths,
                          size_t n_docs, float* scores);
/* ember_rerank with a task's instruction in a reranker's prompt (Qwen3-Reranker,
 * converted with `ember convert --rerank qwen3`: its pair is its card's prompt, whose
 * default instruction `ember inspect` shows; instruction_length 0: that default).
 * EMBER_INVALID_ARGUMENT for an instruction to a model without such a prompt. The score
 * is logit("yes") - logit("no"): sigmoid(score) is the card's P(yes). Appended in 0.3. */
ember_status ember_rerank_instructed(ember_session* session, const char* instruction,
                                     size_t instruction_length, const char* query,
                                     size_t query_length, const char* const* docs,
                                     const size_t* doc_lengths, size_t n_docs,
                                     float* scores);
/* The head's outputs for token ids with their types (NULL: all 0) into
 * scores[0, ember_model_labels). */
ember_status ember_score_tokens(ember_session* session, const int32_t* ids,
                                const uint8_t* types, size_t n_ids, float* scores,
                                size_t n_scores);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* EMBER_EMBER_EMBED_H_ */
