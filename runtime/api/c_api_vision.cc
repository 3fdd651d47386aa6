// The C API's images (ember_vision.h) over runtime/vision's ImageEncoder.
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string_view>

#include "runtime/api/c_api_internal.h"
#include "runtime/ember.h"
#include "runtime/vision/image_encoder.h"
#include "runtime/vision/image_prompt.h"

struct ember_image_encoder {
  const ember_model* model;
  ember_threadpool* pool;  // may be null
  ember::ImageEncoderPlan plan;
  std::unique_ptr<uint8_t[]> owned;  // the arena when the encoder allocated it
  std::optional<ember::ImageEncoder> encoder;
  // Each image's rows and grid, for the prompt's expansion: max_images of them, allocated
  // at creation (the count is the encoder's images()).
  std::unique_ptr<ember::PromptImage[]> rows;
};

namespace {

using ember::c_api::CheckStructSize;
using ember::c_api::NullArgument;
using ember::c_api::Release;
using ember::c_api::Report;

ember::Status ToImageEncoderOptions(const ember_model* model,
                                    const ember_vision_options* options,
                                    ember::ImageEncoderOptions* out) {
  if (model->model->vision() == nullptr) {
    return ember::InvalidArgument("the model has no vision tower: it takes no images");
  }
  *out = ember::ImageEncoderOptions();
  if (options == nullptr) return ember::Status::Ok();
  EMBER_RETURN_IF_ERROR(CheckStructSize<ember_vision_options>(
      "ember_vision_options", options->struct_size, sizeof(ember_vision_options)));
  constexpr uint32_t kMaxEdge = 1u << 16;
  if (options->max_images < 1 || options->max_images > 1024 || options->max_width < 1 ||
      options->max_width > kMaxEdge || options->max_height < 1 ||
      options->max_height > kMaxEdge || options->max_pixels < 1 ||
      options->max_pixels > (uint64_t{1} << 32)) {
    return ember::InvalidArgument(
        "ember_vision_options: %u images of up to %u x %u, %llu pixels (1-1024 images, "
        "edges 1-65536, at most 2^32 pixels)",
        options->max_images, options->max_width, options->max_height,
        static_cast<unsigned long long>(options->max_pixels));
  }
  out->max_images = static_cast<int>(options->max_images);
  out->limits.max_width = static_cast<int>(options->max_width);
  out->limits.max_height = static_cast<int>(options->max_height);
  out->limits.max_pixels = static_cast<size_t>(options->max_pixels);
  out->isa = options->isa;
  return ember::Status::Ok();
}

}  // namespace

extern "C" {

void ember_image_default(ember_image* image) {
  if (!image) return;
  memset(image, 0, sizeof(*image));
  image->struct_size = sizeof(*image);
}

void ember_vision_options_default(ember_vision_options* options) {
  if (!options) return;
  memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  const ember::ImageEncoderOptions defaults;
  options->max_images = static_cast<uint32_t>(defaults.max_images);
  options->max_width = static_cast<uint32_t>(defaults.limits.max_width);
  options->max_height = static_cast<uint32_t>(defaults.limits.max_height);
  options->max_pixels = defaults.limits.max_pixels;
  options->isa = nullptr;
}

int ember_model_has_vision(const ember_model* model) {
  return model && model->model->vision() != nullptr ? 1 : 0;
}

size_t ember_image_encoder_bytes(const ember_model* model,
                                 const ember_vision_options* options) {
  if (!model) {
    NullArgument("model");
    return 0;
  }
  ember::ImageEncoderOptions o;
  ember::Status status = ToImageEncoderOptions(model, options, &o);
  if (!status.ok()) {
    Report(status);
    return 0;
  }
  auto plan = ember::PlanImageEncoder(*model->model, o);
  if (!plan.ok()) {
    Report(plan.status());
    return 0;
  }
  return plan->arena_bytes();
}

ember_status ember_image_encoder_create(const ember_model* model,
                                        const ember_vision_options* options,
                                        ember_threadpool* pool, void* arena,
                                        size_t arena_bytes,
                                        ember_image_encoder** encoder) {
  if (!model) return NullArgument("model");
  if (!encoder) return NullArgument("encoder");
  *encoder = nullptr;
  ember::ImageEncoderOptions o;
  ember::Status status = ToImageEncoderOptions(model, options, &o);
  if (!status.ok()) return Report(status);
  auto plan = ember::PlanImageEncoder(*model->model, o);
  if (!plan.ok()) return Report(plan.status());
  auto* e = new (std::nothrow) ember_image_encoder{model, pool, *plan, {}, {}, {}};
  if (e) {
    e->rows.reset(new (std::nothrow)
                      ember::PromptImage[static_cast<size_t>(o.max_images)]);
  }
  if (!e || !e->rows) {
    delete e;
    return Report(ember::ResourceExhausted("out of memory for the image encoder"));
  }
  // The plan lives in the handle: the encoder points at it.
  if (arena == nullptr) {
    const size_t bytes = e->plan.arena_bytes() + ember::kArenaAlignment;
    e->owned.reset(new (std::nothrow) uint8_t[bytes]);
    if (!e->owned) {
      delete e;
      return Report(ember::ResourceExhausted(
          "out of memory for an image arena of %zu bytes", plan->arena_bytes()));
    }
    const uintptr_t base = reinterpret_cast<uintptr_t>(e->owned.get());
    arena = e->owned.get() + (ember::kArenaAlignment - base % ember::kArenaAlignment) %
                                 ember::kArenaAlignment;
    arena_bytes = e->plan.arena_bytes();
  }
  auto created = ember::ImageEncoder::Create(*model->model, e->plan, arena, arena_bytes,
                                             pool ? pool->pool.get() : nullptr);
  if (!created.ok()) {
    delete e;
    return Report(created.status());
  }
  e->encoder.emplace(std::move(*created));
  model->references.fetch_add(1, std::memory_order_relaxed);
  if (pool) pool->references.fetch_add(1, std::memory_order_relaxed);
  *encoder = e;
  return EMBER_OK;
}

void ember_image_encoder_free(ember_image_encoder* encoder) {
  if (!encoder) return;
  const ember_model* model = encoder->model;
  ember_threadpool* pool = encoder->pool;
  delete encoder;
  Release(model);
  Release(pool);
}

ember_status ember_chat_attach_image(ember_chat* chat, const ember_image_encoder* encoder,
                                     size_t index) {
  if (!chat) return NullArgument("chat");
  if (!encoder) return NullArgument("encoder");
  if (encoder->model->model.get() != &chat->session->session.model()) {
    return Report(ember::InvalidArgument("the encoder is another model's"));
  }
  const size_t images = static_cast<size_t>(encoder->encoder->images());
  if (index >= images) {
    return Report(
        ember::OutOfRange("image %zu of an encoder holding %zu", index, images));
  }
  size_t first_row = 0;  // the rows are the images', in order
  for (size_t i = 0; i < index; ++i) first_row += encoder->rows[i].rows;
  const size_t d = encoder->model->model->config().d_model;
  return Report(chat->chat.AttachImage(encoder->encoder->rows() + first_row * d,
                                       encoder->rows[index]));
}

ember_status ember_image_encoder_add(ember_image_encoder* encoder,
                                     const ember_image* image, size_t* rows) {
  if (!encoder) return NullArgument("encoder");
  if (!image) return NullArgument("image");
  ember::Status status = CheckStructSize<ember_image>("ember_image", image->struct_size,
                                                      sizeof(ember_image));
  if (!status.ok()) return Report(status);
  if (image->bytes == nullptr && image->rgb == nullptr) {
    return NullArgument("image: bytes and rgb");
  }
  if (image->bytes == nullptr &&
      (image->width > (1u << 16) || image->height > (1u << 16))) {
    return Report(
        ember::InvalidArgument("an RGB image of %u x %u", image->width, image->height));
  }
  ember::Result<ember::EncodedImage> added =
      image->bytes != nullptr
          ? encoder->encoder->AddEncoded(image->bytes, image->num_bytes)
          : encoder->encoder->AddRgb({image->rgb, static_cast<int>(image->width),
                                      static_cast<int>(image->height)});
  if (!added.ok()) return Report(added.status());
  // The encoder refused a past-max_images one: its count is at most max_images.
  ember::PromptImage& last =
      encoder->rows[static_cast<size_t>(encoder->encoder->images()) - 1];
  last.rows = added->rows;
  last.grid_rows = added->grid.rows;
  last.grid_cols = added->grid.cols;
  if (rows) *rows = added->rows;
  return EMBER_OK;
}

void ember_image_encoder_clear(ember_image_encoder* encoder) {
  if (!encoder) return;
  encoder->encoder->Clear();
}

size_t ember_image_encoder_images(const ember_image_encoder* encoder) {
  return encoder ? static_cast<size_t>(encoder->encoder->images()) : 0;
}

const float* ember_image_encoder_rows(const ember_image_encoder* encoder,
                                      size_t* n_rows) {
  if (n_rows) *n_rows = encoder ? encoder->encoder->row_count() : 0;
  return encoder ? encoder->encoder->rows() : nullptr;
}

ember_status ember_image_prompt_expand(const ember_image_encoder* encoder,
                                       const char* text, size_t length, char* out,
                                       size_t capacity, size_t* out_length) {
  if (!encoder) return NullArgument("encoder");
  if (!text && length > 0) return NullArgument("text");
  if (!out_length) return NullArgument("out_length");
  const ember::ImagePrompt& prompt = encoder->model->model->vision()->prompt;
  const std::string_view view(text ? text : "", length);
  auto bytes = ember::ExpandedImagePromptBytes(prompt, view, encoder->rows.get(),
                                               ember_image_encoder_images(encoder),
                                               ember::UnmarkedImages::kFirst);
  if (!bytes.ok()) return Report(bytes.status());
  *out_length = *bytes;
  if (*bytes > capacity || (!out && *bytes > 0)) {
    return Report(ember::ResourceExhausted(
        "the expanded prompt takes %zu bytes; the buffer holds %zu", *bytes, capacity));
  }
  return Report(ember::ExpandImagePrompt(
      prompt, view, encoder->rows.get(), ember_image_encoder_images(encoder), out,
      capacity, out_length, ember::UnmarkedImages::kFirst));
}

ember_status ember_prefill_images(ember_session* session,
                                  const ember_image_encoder* encoder, const int32_t* ids,
                                  size_t n_ids) {
  if (!session) return NullArgument("session");
  if (!encoder) return NullArgument("encoder");
  if (!ids && n_ids > 0) return NullArgument("ids");
  if (encoder->model->model.get() != &session->session.model()) {
    return Report(ember::InvalidArgument(
        "the image encoder and the session are over different models"));
  }
  return Report(
      session->session.PrefillEmbedded(ids, n_ids, encoder->encoder->embedded()));
}

}  // extern "C"
