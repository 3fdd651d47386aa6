/* ember_grammar.h: structured output through the C API (C99; included by ember.h, which
 * is the one to include). Appended in 0.3. */
#ifndef EMBER_EMBER_GRAMMAR_H_
#define EMBER_EMBER_GRAMMAR_H_

#include <stddef.h>
#include <stdint.h>

#include "ember.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A grammar in llama.cpp's GBNF format that every ember_generate from then on follows
 * from its start: only the tokens it allows are sampled, and the end of text only where
 * it can end. A malformed grammar is EMBER_INVALID_ARGUMENT, its line and column in the
 * message (the session's grammar stays as it was); a build without grammars
 * (EMBER_WITH_GRAMMAR=OFF) is EMBER_UNIMPLEMENTED. gbnf NULL removes the grammar. When max_new tokens or a full
 * context stop ember_generate before its text is a whole sentence of the grammar, it
 * returns EMBER_OUT_OF_RANGE saying so (a callback that stops it is not an error). */
typedef struct ember_grammar_options {
  uint32_t struct_size; /* sizeof(ember_grammar_options) */
  const char* root;     /* the rule to start from; NULL: "root" */
} ember_grammar_options;
void ember_grammar_options_default(ember_grammar_options* options);

/* The grammar's memory is the session's arena (ember_session_options.grammar_bytes, 0
 * by default: ask for what ember_grammar_bytes tells before creating the session): it
 * is compiled and its tables built on the heap here (the grammar's load, freed before
 * the call returns), then moved into the arena; generating under it allocates nothing.
 * The arena holds one grammar: setting one on the session or on any of its chats
 * replaces the one set before. One that does not fit is EMBER_RESOURCE_EXHAUSTED,
 * naming the bytes it needs, and the grammar set before stays. */

/* Arena bytes the grammar takes in a session of this model (its vocabulary; room for
 * the chat template's end-of-turn ids too), as ember_session_set_grammar would place
 * it: what grammar_bytes must be at least. Builds the tables (as setting it does). */
ember_status ember_grammar_bytes(const ember_model* model, const char* gbnf,
                                 size_t length, const ember_grammar_options* options,
                                 size_t* bytes);

/* `options` may be NULL (the defaults). */
ember_status ember_session_set_grammar(ember_session* session, const char* gbnf,
                                       size_t length, const ember_grammar_options* options);
/* 1 when the text the last ember_generate made is a whole sentence of the session's
 * grammar (or the session has none), else 0. */
int ember_session_grammar_complete(const ember_session* session);
/* Every reply of the chat from now on is a sentence of the grammar, from its start,
 * ending at the template's end of turn (EMBER_OUT_OF_RANGE from ember_chat_generate when
 * max_new or the context cuts one short). Replaces a tool grammar, as that replaces it;
 * gbnf NULL: none. Builds into the session's arena as ember_session_set_grammar does. */
ember_status ember_chat_set_grammar(ember_chat* chat, const char* gbnf, size_t length,
                                    const ember_grammar_options* options);

/* JSON Schema (appended in 0.3). A schema's JSON text (UTF-8) converted to the GBNF of
 * the JSON texts it accepts: the subset docs/structured-output.md lists (type,
 * properties, required, additionalProperties, enum, const, items, prefixItems, min/
 * maxItems, min/maxLength, integer bounds, anyOf, oneOf, allOf of one, local $ref,
 * formats date, time, date-time, uuid; annotations ignored). Malformed JSON is
 * EMBER_INVALID_ARGUMENT naming the byte offset; a keyword outside the subset is
 * EMBER_UNIMPLEMENTED naming it and where it stands ("JSON Schema at '/properties/a':
 * keyword 'pattern' is not supported"), as is a schema whose grammar would pass 8 MiB
 * of text. Builds without grammars: EMBER_UNIMPLEMENTED. */

/* Writes the GBNF (rule root), NUL-terminated, into gbnf[0, *gbnf_length): on entry
 * *gbnf_length is the buffer's capacity (0 with gbnf NULL: only ask). EMBER_OK: the
 * text's length (without the NUL) in *gbnf_length, as ember_session_set_grammar takes
 * it. EMBER_RESOURCE_EXHAUSTED: nothing written, and *gbnf_length is the capacity it
 * needs (the length + 1): call again with that much. */
ember_status ember_json_schema_to_grammar(const char* schema, size_t length, char* gbnf,
                                          size_t* gbnf_length);

/* Arena bytes the schema's grammar takes in a session of this model (ember_grammar_bytes
 * of its GBNF): what ember_session_options.grammar_bytes must be at least. */
ember_status ember_json_schema_bytes(const ember_model* model, const char* schema,
                                     size_t length, size_t* bytes);

/* The schema's grammar set as ember_session_set_grammar and ember_chat_set_grammar set
 * GBNF (the same arena, replacement and errors); schema NULL removes the grammar. */
ember_status ember_session_set_json_schema(ember_session* session, const char* schema,
                                           size_t length);
ember_status ember_chat_set_json_schema(ember_chat* chat, const char* schema,
                                        size_t length);

/* Tool calls (appended in 0.3). The grammar of one call to any of these tools (the
 * JSON array ember_chat_set_tools takes) in the syntax of the model's chat template
 * (Hermes tags, Llama 3 JSON, Mistral's or Phi-4-mini's list): the function's name one
 * of theirs, its arguments what that function's "parameters" schema accepts (the
 * subset above). The text ember_chat_set_tool_grammar takes, written as
 * ember_json_schema_to_grammar writes (*gbnf_length in: the capacity; out: the length,
 * or on EMBER_RESOURCE_EXHAUSTED the capacity it needs). EMBER_INVALID_ARGUMENT for
 * malformed tools or a template without tool-call syntax, EMBER_UNIMPLEMENTED for a
 * schema keyword outside the subset, naming it. */
ember_status ember_tool_grammar(const ember_model* model, const char* tools_json,
                                size_t length, char* gbnf, size_t* gbnf_length);

/* Holds each call the chat's replies make to the grammar ember_tool_grammar gives for
 * the chat's tools (set them first), as ember_chat_set_tool_grammar would: the text
 * around calls stays free. Its arena room: ember_grammar_bytes of that grammar. */
ember_status ember_chat_constrain_tools(ember_chat* chat);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* EMBER_EMBER_GRAMMAR_H_ */
