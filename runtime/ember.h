/* ember.h: the C API (C99). Load a model from a file or memory, size and hand over the
 * session's arena, tokenize, prefill, decode, sample, generate.
 *
 * Memory: ember_model_* allocate at load; ember_session_create allocates only the
 * session object, and the arena too when the caller passes none. After that, no call
 * allocates: prefill, decode, sampling, generation and (de)tokenizing use the arena.
 * Errors: every fallible call returns an ember_status; ember_last_error() gives the
 * message of the calling thread's last failure. Nothing aborts on bad input. */
#ifndef EMBER_EMBER_H_
#define EMBER_EMBER_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The one place the version is stated: CMakeLists.txt reads it from here. */
#define EMBER_VERSION_MAJOR 0
#define EMBER_VERSION_MINOR 3
#define EMBER_VERSION_PATCH 0

/* The values equal ember::StatusCode's (c_api.cc checks it at compile time). */
typedef enum ember_status {
  EMBER_OK = 0,
  EMBER_INVALID_ARGUMENT = 1, /* unusable argument: token id, size, option */
  EMBER_INVALID_MODEL = 2,    /* the model file is malformed or inconsistent */
  EMBER_NOT_FOUND = 3,
  EMBER_IO_ERROR = 4,
  EMBER_OUT_OF_RANGE = 5,       /* the context is full */
  EMBER_RESOURCE_EXHAUSTED = 6, /* a caller's buffer is too small, or memory ran out */
  EMBER_UNIMPLEMENTED = 7,
  EMBER_INTERNAL = 8
} ember_status;

typedef struct ember_model ember_model;
typedef struct ember_session ember_session;
typedef struct ember_threadpool ember_threadpool;
typedef struct ember_chat ember_chat;

/* Option structs start with their own size, so they can grow without breaking the ABI:
 * fill one with its _default function (which sets struct_size to the size this header
 * declares), then change fields. A library reads only the fields inside struct_size and
 * refuses a struct_size larger than it knows (EMBER_UNIMPLEMENTED: a newer header). */
typedef struct ember_session_options {
  uint32_t struct_size;      /* sizeof(ember_session_options) */
  uint32_t max_context;      /* positions the KV cache holds; 0: the model's, if that
                                session stays within 4 GiB (1 GiB on 32-bit targets):
                                past it, ask for a context explicitly */
  uint32_t max_batch;        /* tokens per prefill step; 0: 64 */
  uint32_t max_prompt_bytes; /* longest text ember_tokenize accepts; 0: 8 x context,
                                at most 1 MiB (the arena holds 20 bytes for each, 64
                                with a normalizing tokenizer: Qwen's NFC) */
  int all_logits;            /* nonzero: keep logits of every prefilled position */
  /* Appended in 0.2: */
  uint32_t backend; /* EMBER_BACKEND_HIGHWAY (default) or EMBER_BACKEND_XNNPACK */
  /* Appended in 0.3: */
  uint32_t ignore_baked_prompt; /* nonzero: start empty even when the model has a baked
                                   prompt (by default a session starts after it, its KV
                                   cache restored, not prefilled) */
  /* Appended in 0.3 (ISA tiers): */
  const char* isa; /* ISA tier of the kernels: "native" (this CPU's best), or a lesser one
                      to run a slower CPU's kernels ("avx2", "avx-vnni", "avx512",
                      "avx512-vnni", "sse4"; "neon", "dotprod", "i8mm"); NULL: the
                      EMBER_ISA environment variable, else "native". EMBER_UNIMPLEMENTED
                      when the CPU cannot run it (ember_arena_bytes refuses it too);
                      read only during the call */
  /* Appended in 0.3 (long contexts in small memory): */
  uint32_t kv_type;      /* EMBER_KV_F32 (default), EMBER_KV_F16 or EMBER_KV_Q8 */
  int context_shift;     /* nonzero: a full context is shifted, not an error
                            (ember_session_shift_context; RoPE models only) */
  uint32_t context_keep; /* positions a shift keeps at the start */
  /* Appended in 0.3 (attention capture): */
  int record_attention; /* nonzero: keep the attention weights (softmax probabilities)
                           of the selection below in the arena, for ember_attention
                           (ember_info.h); ember_arena_bytes counts them (layers x heads
                           x positions^2 floats). Out-of-range selections are
                           EMBER_INVALID_ARGUMENT, as is a model's baked prompt (set
                           ignore_baked_prompt) */
  uint32_t attention_first_layer;
  uint32_t attention_num_layers;    /* 0: through the last layer */
  uint32_t attention_first_head;    /* query heads (under GQA each has its own weights) */
  uint32_t attention_num_heads;     /* 0: through the last head */
  uint32_t attention_max_positions; /* query and key positions kept, from 0; 0: the
                                       session's context; later ones are not kept */
  /* Appended in 0.3 (grammars in the arena): */
  size_t grammar_bytes; /* arena bytes for a grammar or a tool-call grammar
                           (ember_grammar_bytes tells what one needs; ember_arena_bytes
                           counts them); 0, the default: none, and setting one is
                           refused, naming its bytes */
  /* Appended in 0.3 (speculative decoding, ember_speculative.h): */
  uint32_t draft_max; /* drafted tokens verified per pass at most (1 to 32); 0, the
                         default: none. The arena then keeps draft_max + 1 rows of
                         logits and the drafting's tables (ember_arena_bytes counts
                         them) */
} ember_session_options;

/* ember_session_options.grammar_bytes: no grammar memory, as 0. */
#define EMBER_NO_GRAMMAR ((size_t)-1)

/* What the KV cache stores: f32; f16; or q8, int8 with an f32 scale per group of 32
 * values of each head (36 bytes per 32 values). ember_arena_bytes tells the memory. */
#define EMBER_KV_F32 0u
#define EMBER_KV_F16 1u
#define EMBER_KV_Q8 2u

/* What runs the products with f32 weight matrices: ember's Highway kernels, or XNNPACK's
 * fully-connected operators (with a packed copy of those weights in the session's arena;
 * other types stay on Highway). EMBER_UNIMPLEMENTED where XNNPACK is not built in. */
#define EMBER_BACKEND_HIGHWAY 0u
#define EMBER_BACKEND_XNNPACK 1u

typedef struct ember_sampler_options {
  uint32_t struct_size; /* sizeof(ember_sampler_options) */
  float temperature;    /* finite, >= 0; 0 (or below 1e-4): greedy */
  uint32_t top_k;    /* 0: off */
  float top_p;       /* in (0, 1]; 1: off */
  uint64_t seed;
  /* Appended in 0.3: */
  /* Penalties on the tokens among the context's last repeat_last_n (as llama.cpp's): a
     logit l of a token seen c > 0 times becomes (l > 0 ? l / repeat_penalty :
     l * repeat_penalty) - c * frequency_penalty - presence_penalty. */
  float repeat_penalty;    /* finite, > 0; 1: off (default) */
  int32_t repeat_last_n;   /* 0: no penalties; -1: the whole context (default 64) */
  float frequency_penalty; /* finite (default 0) */
  float presence_penalty;  /* finite (default 0) */
  float min_p; /* in [0, 1]: keep tokens at least min_p times as likely as the most
                  likely one, after temperature, top-k and top-p; 0: off (default) */
  /* Stop strings: generation (ember_generate, ember_chat_generate) ends when its text
     contains one; neither it nor what follows reaches the callback, and text that may
     begin one is held back until it cannot. Copied by ember_session_set_sampler: at most
     16 non-empty strings of at most 128 bytes, 512 in all. */
  const char* const* stop;
  uint32_t n_stop;
} ember_sampler_options;

/* How ember_tokenize_with_options encodes (appended after 0.2.0). */
typedef struct ember_tokenize_options {
  uint32_t struct_size; /* sizeof(ember_tokenize_options) */
  int add_bos; /* -1 (default): as the model's tokenizer says; 0: no; 1: BOS first */
  int parse_special; /* nonzero: control tokens written in the text (<|eot_id|>,
                        <start_of_turn>, <|im_start|>) become their ids, as chat
                        templates need; 0 (default): they are text like any other.
                        Other added tokens are always matched (as Hugging Face does). */
} ember_tokenize_options;

/* Called for each generated token with the bytes it adds to the text (possibly none, or
 * part of a UTF-8 character; with stop strings, the text released at this token, and
 * text held back to the end comes in a last call with token -1). Return nonzero to
 * continue, 0 to stop. It runs inside
 * ember_generate on the calling thread: it may use other sessions and ember_detokenize,
 * but must not call a function on the session that is generating (prefill, decode,
 * sample, reset, free, generate): what that would do is undefined. */
typedef int (*ember_token_callback)(void* user, int32_t token, const char* bytes,
                                    size_t length);

/* "MAJOR.MINOR.PATCH" of the library (EMBER_VERSION_* are the header's). */
const char* ember_version(void);
/* A short name for a status ("invalid model", ...; "unknown status" for other values). */
const char* ember_status_string(ember_status status);
/* The message of the calling thread's last failed call ("" if none). */
const char* ember_last_error(void);

void ember_session_options_default(ember_session_options* options);
void ember_sampler_options_default(ember_sampler_options* options);
void ember_tokenize_options_default(ember_tokenize_options* options);

/* Maps the file read-only; weights are used in place. */
ember_status ember_model_open(const char* path, ember_model** model);
/* Uses `size` bytes at `data` in place (16-byte aligned; must outlive the model). */
ember_status ember_model_from_memory(const void* data, size_t size, ember_model** model);
/* A session keeps its model (and its thread pool) alive: they may be freed before their
 * sessions, and go with the last one. A model from memory still needs its bytes. */
void ember_model_free(ember_model* model);
uint32_t ember_model_vocab_size(const ember_model* model);
uint32_t ember_model_max_context(const ember_model* model);
int32_t ember_model_bos(const ember_model* model); /* -1 if none */
int32_t ember_model_eos(const ember_model* model); /* -1 if none */
/* Tokens of the model's baked prompt (0 if none): where its sessions start. */
size_t ember_model_baked_tokens(const ember_model* model);

/* num_threads >= 1; share one pool among the sessions of a process. */
ember_status ember_threadpool_create(int num_threads, ember_threadpool** pool);

/* A pool with options (struct_size first, as above). */
typedef struct ember_threadpool_options {
  uint32_t struct_size;        /* sizeof(ember_threadpool_options) */
  int32_t num_threads;         /* >= 1 (default 1) */
  int32_t adapt_to_contention; /* nonzero (default): when the pool's threads do not each
                                  have a core (another process on one, more threads than
                                  free cores), calls run on fewer of them for a while,
                                  then on all again; 0: always on all of them, and the
                                  pool never reads /proc */
} ember_threadpool_options;
void ember_threadpool_options_default(ember_threadpool_options* options);
ember_status ember_threadpool_create_with_options(const ember_threadpool_options* options,
                                                  ember_threadpool** pool);
void ember_threadpool_free(ember_threadpool* pool);

/* Exact arena bytes a session with these options needs (0: invalid options, an ISA
 * tier this CPU cannot run among them, with ember_session_create's message in
 * ember_last_error). `options` may be NULL for the defaults. */
size_t ember_arena_bytes(const ember_model* model, const ember_session_options* options);

/* `options` and `pool` may be NULL. With `arena` NULL the session allocates its arena
 * once, here (EMBER_RESOURCE_EXHAUSTED if it cannot); otherwise `arena` must hold
 * ember_arena_bytes() bytes and outlive the session. Either way the arena is not
 * cleared: its pages are touched only as the session uses them. */
ember_status ember_session_create(const ember_model* model,
                                  const ember_session_options* options,
                                  ember_threadpool* pool, void* arena, size_t arena_bytes,
                                  ember_session** session);
void ember_session_free(ember_session* session);
/* Forget the context: the next prefill starts at position 0, or after the model's baked
 * prompt (restored again) when the session uses one. */
void ember_session_reset(ember_session* session);
size_t ember_session_position(const ember_session* session);

/* Encodes UTF-8 text into ids[0, *n_ids) (BOS first when add_bos). If capacity is too
 * small, returns EMBER_RESOURCE_EXHAUSTED with the needed count in *n_ids. Text longer
 * than the session's max_prompt_bytes is refused before any work. */
ember_status ember_tokenize(ember_session* session, const char* text, size_t length,
                            int add_bos, int32_t* ids, size_t capacity, size_t* n_ids);
/* ember_tokenize with options (NULL: the defaults): BOS as the model says, control
 * tokens in the text read as text unless options->parse_special. */
ember_status ember_tokenize_with_options(ember_session* session, const char* text,
                                         size_t length,
                                         const ember_tokenize_options* options,
                                         int32_t* ids, size_t capacity, size_t* n_ids);
/* The bytes `token` adds to the text after `prev_token` (-1 at the start; any other id
 * outside the vocabulary is EMBER_INVALID_ARGUMENT, as `token` is). The pointer stays
 * valid as long as the model. */
ember_status ember_detokenize(const ember_model* model, int32_t prev_token, int32_t token,
                              const char** bytes, size_t* length);

/* Runs the model over ids at the current position and advances it. EMBER_OUT_OF_RANGE
 * when they do not fit in the context. */
ember_status ember_prefill(ember_session* session, const int32_t* ids, size_t n_ids);
ember_status ember_decode(ember_session* session, int32_t token);
/* vocab_size floats: the logits after the last prefill/decode (zeros before the first;
 * NULL for an embedding model or reranker, whose sessions plan no logits and refuse
 * ember_prefill: ember_embed and ember_rerank run them). */
const float* ember_logits(const ember_session* session);
/* With options.all_logits, the logits of each token of the last prefill step: *n_rows
 * rows of vocab_size floats, one after the other, the last one ember_logits' (an
 * ember_prefill of more than max_batch tokens runs in steps of max_batch, and the rows
 * are its last step's). Without all_logits, the last position's row (*n_rows 1). NULL
 * and 0 before the session's first prefill (appended in 0.3). */
const float* ember_logits_rows(const ember_session* session, size_t* n_rows);

/* Sets how ember_sample and ember_generate pick tokens (default: greedy). Invalid
 * options (NaN, infinite or negative temperature, top_p outside (0, 1], ...; see the
 * fields) are refused with EMBER_INVALID_ARGUMENT and the previous sampler stays. The
 * penalties look back over the session's context (ember_sample too). */
ember_status ember_session_set_sampler(ember_session* session,
                                       const ember_sampler_options* options);
/* Samples the next token from the current logits; EMBER_INVALID_MODEL if one of them is
 * NaN or infinite (nothing is sampled from those: see `ember inspect --check-weights`). */
ember_status ember_sample(ember_session* session, int32_t* token);

/* Context shift: drops positions [keep, keep + discard) and moves the later ones down,
 * their keys rotated to the new positions (RoPE), so generation can go on past a full
 * context. With options.context_shift, ember_generate does this itself when the context
 * is full (keeping context_keep positions and dropping half of the rest).
 * EMBER_INVALID_ARGUMENT for a model with learned positions or a range past the
 * position. */
ember_status ember_session_shift_context(ember_session* session, size_t keep,
                                         size_t discard);

/* Prefills the prompt (none: the session's logits go on, as after a restored state or a
 * baked prompt, which bring them), then samples up to max_new tokens, calling
 * `callback` for each.
 * Stops early at the end-of-text token or when the callback returns 0 (EMBER_OK), or when
 * the context is full (EMBER_OUT_OF_RANGE) unless options.context_shift made room.
 * *n_generated tells how many came. An encoder (bidirectional attention) cannot generate:
 * EMBER_INVALID_ARGUMENT. */
ember_status ember_generate(ember_session* session, const int32_t* prompt,
                            size_t n_prompt, size_t max_new,
                            ember_token_callback callback, void* user,
                            size_t* n_generated);

/* ---- Saved state (appended in 0.3) ----
 * A session's state (position, the KV cache rows used, the tokens, the sampler's
 * generator) saved into caller memory and restored into a session over the same model
 * with the same KV cache type (kv_type; the rows are saved as stored; an f32 state also
 * restores into an f16 or q8 cache, its rows converted) and a context that holds it; a
 * sliding layer's ring that has wrapped restores only into the same ring
 * (the same max_batch and context_keep). A header with a magic, a version, the model's
 * fingerprint, the sizes and checksums makes any other state an error
 * (EMBER_INVALID_ARGUMENT, EMBER_OUT_OF_RANGE), never a half-restored session. */

/* Bytes the state takes at the session's current position. */
size_t ember_session_state_size(const ember_session* session);
/* Saves into buffer[0, *size); EMBER_RESOURCE_EXHAUSTED (and the size needed in *size)
 * when capacity is too small. No allocation. */
ember_status ember_session_save_state(const ember_session* session, void* buffer,
                                      size_t capacity, size_t* size);
/* Restores a saved state of `size` bytes, exactly the *size that saving it returned
 * (checked first: on an error, a byte missing or one more too, the session is
 * unchanged). The next ember_prefill/ember_generate continues after it (the logits are
 * stale until then). No allocation. */
ember_status ember_session_restore_state(ember_session* session, const void* data,
                                         size_t size);

/* ---- Chat (appended in 0.3) ----
 * A model converted with a chat template (tokenizer_config.json's, or `ember convert
 * --chat-template FILE`) holds it compiled; these render it and hold a conversation. */

/* One message: role ("system", "user", "assistant", "tool") and content, UTF-8. */
typedef struct ember_chat_message {
  const char* role;
  const char* content;
  size_t content_length;
} ember_chat_message;

typedef struct ember_chat_options {
  uint32_t struct_size;      /* sizeof(ember_chat_options) */
  uint32_t max_text_bytes;   /* conversation text kept; 0: 8 bytes a context position */
  uint32_t max_messages;     /* turns kept, the oldest dropped first (default 256) */
  int32_t enable_thinking;   /* -1: undefined (default); 0 or 1: Qwen3's switch */
  int64_t now_seconds;       /* what strftime_now formats, seconds since 1970 (UTC);
                                -1 (default): no clock */
  int add_generation_prompt; /* ember_chat_template_render only (default 1) */
  uint32_t max_tools_bytes;  /* the tools' JSON ember_chat_set_tools keeps (default 0:
                                none); appended in 0.3 */
  uint32_t max_images;       /* images the turns hold at once (ember_chat_attach_image in
                                ember_vision.h; default 0: none); appended in 0.3 */
} ember_chat_options;

void ember_chat_options_default(ember_chat_options* options);

/* Whether the model has a compiled chat template (1) or not (0). */
int ember_model_has_chat_template(const ember_model* model);

/* Renders messages[0, n) with the model's chat template into buffer[0, *length) (not
 * NUL-terminated). The rest of the buffer is the render's scratch: give a few times the
 * text's size; EMBER_RESOURCE_EXHAUSTED when it is too small (try twice the size),
 * EMBER_INVALID_ARGUMENT when the template refuses the conversation, EMBER_NOT_FOUND
 * without a template. No allocation. `options` may be NULL. */
ember_status ember_chat_template_render(const ember_model* model,
                                        const ember_chat_message* messages, size_t n,
                                        const ember_chat_options* options, char* buffer,
                                        size_t capacity, size_t* length);

/* A conversation over a session (which must outlive it, and should not be used directly
 * meanwhile). Allocates its memory once, here; no later call allocates. The session's
 * sampler (ember_session_set_sampler, stop strings included) picks the replies. */
ember_status ember_chat_create(ember_session* session, const ember_chat_options* options,
                               ember_chat** chat);
void ember_chat_free(ember_chat* chat);
/* The system text (empty: none), from the next reply on. */
ember_status ember_chat_set_system(ember_chat* chat, const char* text, size_t length);
/* Appends a turn: role "user", or "assistant" for a reply given elsewhere. */
ember_status ember_chat_add(ember_chat* chat, const char* role, const char* text,
                            size_t length);
/* Generates the assistant's reply to the conversation, calling `callback` per token,
 * and appends it as the assistant's turn. Prefills only what the cache does not already
 * hold; stops at the template's end of turn, the model's stop ids, a stop string or
 * max_new tokens. The rendered conversation is tokenized as Hugging Face tokenizes
 * apply_chat_template's text (special tokens parsed, no BOS added) in the session's token
 * buffer: a context too full for it, or a rendering longer than the session's
 * max_prompt_bytes, drops the oldest turns first. *n_generated (may be NULL) tells how
 * many tokens came. */
ember_status ember_chat_generate(ember_chat* chat, size_t max_new,
                                 ember_token_callback callback, void* user,
                                 size_t* n_generated);
/* Forgets the turns; the system text stays, and so does the cache's matching prefix. */
void ember_chat_reset(ember_chat* chat);

/* What the last ember_chat_generate cost. */
typedef struct ember_chat_stats {
  uint32_t struct_size;   /* sizeof(ember_chat_stats) */
  uint32_t prompt_tokens; /* the rendered conversation */
  uint32_t cached_tokens; /* of them, reused from the cache */
  uint32_t generated_tokens;
  uint32_t dropped_messages; /* the oldest, to make room */
  double prefill_seconds;    /* to the first sampled token */
  double generate_seconds;   /* after it */
  uint32_t context_shifts;   /* made while replying (options.context_shift) */
} ember_chat_stats;
ember_status ember_chat_last_stats(const ember_chat* chat, ember_chat_stats* stats);

/* Tools (appended in 0.3). The tools the model may call: a JSON array of OpenAI-style
 * function definitions ([{"type": "function", "function": {"name", "description",
 * "parameters"}}]), rendered as the template's `tools` from the next reply on (at most
 * options.max_tools_bytes; length 0: none). EMBER_INVALID_ARGUMENT when the model's
 * template shows no tool-call syntax (Hermes <tool_call> tags as Qwen2.5 and Qwen3 write
 * them, Llama 3's JSON object, Mistral's [TOOL_CALLS], Phi-4-mini's <|tool_call|>, whose
 * template takes the tools in the system message: ember puts them there, adding an
 * empty one when there is none). Each reply is then parsed for
 * calls: a reply that makes some becomes an assistant turn with `tool_calls` (ids
 * "call00001", ...), and each "tool" turn added after it (ember_chat_add) answers the
 * next of them. */
ember_status ember_chat_set_tools(ember_chat* chat, const char* json, size_t length);

/* Holds each call to a grammar (GBNF, rule root) that starts where the model opens a
 * call in the template's syntax and lets go where the call ends; the text around calls
 * stays free. `ember grammar --tools tools.json --tool-format F` prints the grammar of
 * a call whose arguments follow each function's parameter schema. Set the tools first;
 * gbnf NULL: none. Builds the grammar into the session's arena here, as
 * ember_session_set_grammar does; replies under it allocate nothing. EMBER_UNIMPLEMENTED
 * in builds without grammars. */
ember_status ember_chat_set_tool_grammar(ember_chat* chat, const char* gbnf, size_t length);

/* One call of the last reply: views of the chat's text, valid until the conversation
 * next changes (ember_chat_add, ember_chat_generate, ember_chat_set_system,
 * ember_chat_reset). */
typedef struct ember_tool_call {
  uint32_t struct_size; /* sizeof(ember_tool_call) */
  char id[10];          /* "call00001": NUL-terminated */
  const char* name;     /* as the JSON string's contents (escapes as written) */
  size_t name_length;
  const char* arguments; /* the JSON object text */
  size_t arguments_length;
} ember_tool_call;

/* How many calls the last reply made (0 without tools, or when they did not parse: a
 * reply cut off inside a call stays text, and *status_message, if given, says why; it
 * is empty otherwise and valid until the next call on the chat). */
ember_status ember_chat_tool_call_count(const ember_chat* chat, size_t* n,
                                        const char** status_message);
/* Call i (< the count) of the last reply. */
ember_status ember_chat_tool_call(const ember_chat* chat, size_t i, ember_tool_call* call);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* What a model and a session report: ember_model_get_info, ember_attention. */
#include "ember_info.h"
/* Structured output: ember_grammar_bytes, ember_session_set_grammar, ember_chat_set_grammar,
 * ember_json_schema_to_grammar, ember_session_set_json_schema. */
#include "ember_grammar.h"
/* Embedding models' vectors: ember_embed, ember_embed_batch, ember_embed_tokens. */
#include "ember_embed.h"
/* Speculative decoding: ember_session_set_lookup, ember_session_set_draft. */
#include "ember_speculative.h"
/* Images in prompts: ember_image_encoder_create, ember_image_encoder_add,
 * ember_image_prompt_expand, ember_prefill_images. */
#include "ember_vision.h"

#endif /* EMBER_EMBER_H_ */
