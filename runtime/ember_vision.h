/* ember_vision.h: images in prompts through the C API (C99; included by ember.h, which is
 * the one to include). A vision model (Gemma 3 converted with its tower: `ember inspect`
 * shows a "vision" line) turns each image into rows that take the place of its image
 * tokens in a prompt. Everything lives in caller memory or in memory allocated once at
 * creation; an image makes no heap call:
 *
 *   ember_image_encoder_create(model, &options, pool, NULL, 0, &encoder);
 *   ember_image_encoder_add(encoder, &image, &rows);      one call per image, in order
 *   ember_image_prompt_expand(encoder, text, n, buf, cap, &len);   markers -> tokens
 *   ember_tokenize_with_options(session, buf, len, &parse_special, ids, cap, &n_ids);
 *   ember_prefill_images(session, encoder, ids, n_ids);
 *   ember_generate(session, NULL, 0, max_new, callback, user, &n);
 *   ember_image_encoder_clear(encoder);                   the next prompt's images
 *
 * Appended in 0.3 (images). */
#ifndef EMBER_EMBER_VISION_H_
#define EMBER_EMBER_VISION_H_

#include <stddef.h>
#include <stdint.h>

#include "ember.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ember_image_encoder ember_image_encoder;

/* An image: encoded bytes (PNG or JPEG), or RGB pixels (3 bytes each, row-major,
 * width x height) when `bytes` is NULL. Both stay the caller's. */
typedef struct ember_image {
  uint32_t struct_size; /* sizeof(ember_image) */
  const uint8_t* bytes;
  size_t num_bytes;
  const uint8_t* rgb;
  uint32_t width;
  uint32_t height;
} ember_image;
void ember_image_default(ember_image* image);

typedef struct ember_vision_options {
  uint32_t struct_size; /* sizeof(ember_vision_options) */
  uint32_t max_images;  /* held at once (one prompt's); default 1 */
  uint32_t max_width;   /* the largest image taken, before any resize; default 8192 */
  uint32_t max_height;  /* default 8192 */
  uint64_t max_pixels;  /* width x height at most; default 12582912 (12.6 MP) */
  const char* isa;      /* the tower's kernels, as ember_session_options.isa; NULL */
} ember_vision_options;
void ember_vision_options_default(ember_vision_options* options);

/* 1 when the model has a vision tower, 0 otherwise. */
int ember_model_has_vision(const ember_model* model);

/* Exact arena bytes an encoder with these options needs (0: no tower, or invalid
 * options, with the reason in ember_last_error). `options` may be NULL. */
size_t ember_image_encoder_bytes(const ember_model* model,
                                 const ember_vision_options* options);
/* With `arena` NULL the encoder allocates its arena once, here; otherwise `arena`
 * (64-byte aligned) must hold ember_image_encoder_bytes() bytes and outlive the encoder.
 * `pool` may be NULL. The encoder holds a reference to the model and the pool. */
ember_status ember_image_encoder_create(const ember_model* model,
                                        const ember_vision_options* options,
                                        ember_threadpool* pool, void* arena,
                                        size_t arena_bytes,
                                        ember_image_encoder** encoder);
void ember_image_encoder_free(ember_image_encoder* encoder);

/* Decodes (or takes) an image, runs the model's image processor and the tower, and
 * appends its rows; *rows (may be NULL) says how many. EMBER_INVALID_ARGUMENT for bytes
 * that are no PNG or JPEG this build decodes or an image past the limits;
 * EMBER_OUT_OF_RANGE past max_images. */
ember_status ember_image_encoder_add(ember_image_encoder* encoder,
                                     const ember_image* image, size_t* rows);
/* Forgets the images added (the next prompt starts with none). */
void ember_image_encoder_clear(ember_image_encoder* encoder);
size_t ember_image_encoder_images(const ember_image_encoder* encoder);
/* The rows so far, each of the text model's d_model floats (valid until the next add or
 * clear), and their count. */
const float* ember_image_encoder_rows(const ember_image_encoder* encoder, size_t* n_rows);

/* The prompt text with each image marker (Gemma 3: "<start_of_image>", which its chat
 * template writes for an image; SmolVLM: "<image>", which becomes each tile's name and
 * rows, then the global view's) expanded as the model's processor expands it, for the
 * images added, in order: one marker per image, or, in a text with no marker, the
 * images first. Into out[0, *length); when capacity is too small,
 * EMBER_RESOURCE_EXHAUSTED with the bytes needed in *length. Tokenize the result with
 * parse_special. EMBER_INVALID_ARGUMENT when the markers and images differ in number or
 * the model's file has no image prompt. */
ember_status ember_image_prompt_expand(const ember_image_encoder* encoder,
                                       const char* text, size_t length, char* out,
                                       size_t capacity, size_t* out_length);

/* Images in a chat (ember.h's ember_chat, created with options.max_images > 0): gives
 * the next "user" turn (ember_chat_add) the encoder's image `index` (0 for the first
 * added). Its rows stay in the encoder, which must keep them (no clear, no free) while
 * the turn is in the conversation; the chat reuses them from its cache in later turns.
 * The turn's text takes its images at its image markers, or, with none, has them before
 * its text. The session needs a max_prompt_bytes that holds the conversation with each
 * image's tokens written out, and (Gemma 3) a max_batch that holds an image's rows.
 * EMBER_RESOURCE_EXHAUSTED when the chat holds max_images; EMBER_OUT_OF_RANGE for an
 * index past the encoder's images; EMBER_INVALID_ARGUMENT for another model's encoder. */
ember_status ember_chat_attach_image(ember_chat* chat, const ember_image_encoder* encoder,
                                     size_t index);

/* ember_prefill with the encoder's rows in the places of the image tokens (one token per
 * row, in order; the rows of one image attend to each other both ways where the model
 * says so: Gemma 3). The session's max_batch must hold one image's rows. */
ember_status ember_prefill_images(ember_session* session,
                                  const ember_image_encoder* encoder, const int32_t* ids,
                                  size_t n_ids);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* EMBER_EMBER_VISION_H_ */
