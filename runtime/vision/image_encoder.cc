// Images to prompt rows in one planned arena (image_encoder.h).
#include "runtime/vision/image_encoder.h"

#include "runtime/checked_math.h"
#include "runtime/vision/image_decode.h"

namespace ember {
namespace {

// The steps of one image, for the buffers' lifetimes: the decoder's scratch and the RGB
// are dead once the processor has made the tiles' pixels, and the tower runs after it.
enum ImageStep : int { kDecode = 0, kProcess = 1, kTower = 2 };

}  // namespace

Result<ImageEncoderPlan> PlanImageEncoder(const Model& model,
                                          const ImageEncoderOptions& options) {
  const VisionConfig* v = model.vision();
  if (v == nullptr) {
    return InvalidArgument("the model has no vision tower: it takes no images");
  }
  const ImageLimits& limits = options.limits;
  if (options.max_images < 1 || options.max_images > 1024 || limits.max_width < 1 ||
      limits.max_height < 1 || limits.max_width > (1 << 16) ||
      limits.max_height > (1 << 16) || limits.max_pixels < 1) {
    return InvalidArgument("image limits %dx%d, %zu pixels, %d images", limits.max_width,
                           limits.max_height, limits.max_pixels, options.max_images);
  }
  ImageEncoderPlan plan;
  plan.options = options;
  auto tower = PlanVisionTower(model, options.isa);
  if (!tower.ok()) return tower.status();
  plan.tower = *tower;
  const ImageProcessorConfig& p = v->processor;
  plan.max_tiles = MaxImageTiles(p, limits);
  plan.rows_per_tile = v->tokens_per_image();
  plan.max_rows =
      SaturatingProduct({static_cast<size_t>(options.max_images),
                         static_cast<size_t>(plan.max_tiles), plan.rows_per_tile});
  const size_t tile_values = SaturatingProduct({3, v->image_size, v->image_size});
  const size_t d_model = model.config().d_model;
  ArenaPlan& a = plan.arena;
  ImageEncoderPlan::Ids& id = plan.ids;
  id.decode = a.Add<uint8_t>("image_decode", DecodeScratchBytes(limits), kDecode, kDecode,
                             BufferKind::kScratch);
  id.rgb = a.Add<uint8_t>("image_rgb", SaturatingProduct({limits.max_pixels, 3}), kDecode,
                          kProcess, BufferKind::kScratch);
  id.process = a.Add<uint8_t>("image_process", ProcessScratchBytes(p, limits), kProcess,
                              kProcess, BufferKind::kScratch);
  id.pixels =
      a.Add<float>("image_pixels",
                   SaturatingProduct({static_cast<size_t>(plan.max_tiles), tile_values}),
                   kProcess, kTower);
  id.tower = a.Add<uint8_t>("vision_tower", plan.tower.arena_bytes(), kTower, kTower,
                            BufferKind::kScratch);
  id.rows = a.Add<float>("image_rows", SaturatingProduct({plan.max_rows, d_model}),
                         kDecode, kTower);
  const Status planned = a.Plan();
  if (!planned.ok()) {
    return ResourceExhausted("images up to %dx%d (%zu pixels), %d at once: %s",
                             limits.max_width, limits.max_height, limits.max_pixels,
                             options.max_images, planned.message());
  }
  return plan;
}

Result<ImageEncoder> ImageEncoder::Create(const Model& model,
                                          const ImageEncoderPlan& plan, void* arena,
                                          size_t arena_bytes, const ThreadPool* pool) {
  if (model.vision() == nullptr) return InvalidArgument("the model has no vision tower");
  if (arena == nullptr || reinterpret_cast<uintptr_t>(arena) % kArenaAlignment != 0 ||
      arena_bytes < plan.arena_bytes()) {
    return InvalidArgument(
        "an image encoder needs %zu bytes of arena at a %zu-byte aligned address; given "
        "%zu at %p",
        plan.arena_bytes(), static_cast<size_t>(kArenaAlignment), arena_bytes, arena);
  }
  uint8_t* base = static_cast<uint8_t*>(arena);
  auto tower =
      VisionTower::Create(model, plan.tower, plan.arena.Bind(plan.ids.tower, base),
                          plan.tower.arena_bytes(), pool);
  if (!tower.ok()) return tower.status();
  return ImageEncoder(model, plan, base, std::move(*tower));
}

ImageEncoder::ImageEncoder(const Model& model, const ImageEncoderPlan& plan,
                           uint8_t* base, VisionTower tower)
    : model_(&model), plan_(&plan), tower_(std::move(tower)) {
  const ArenaPlan& a = plan.arena;
  decode_ = a.Bind(plan.ids.decode, base);
  rgb_ = a.Bind(plan.ids.rgb, base);
  process_ = a.Bind(plan.ids.process, base);
  pixels_ = a.Bind(plan.ids.pixels, base);
  rows_ = a.Bind(plan.ids.rows, base);
}

Result<EncodedImage> ImageEncoder::AddEncoded(const uint8_t* bytes, size_t num_bytes) {
  const ImageEncoderPlan& plan = *plan_;
  if (images_ >= plan.options.max_images) {
    return OutOfRange("more than the %d image%s a prompt was planned for",
                      plan.options.max_images, plan.options.max_images == 1 ? "" : "s");
  }
  const ImageLimits& limits = plan.options.limits;
  const AlphaMode alpha = model_->vision()->processor.alpha_over_white
                              ? AlphaMode::kOverWhite
                              : AlphaMode::kDrop;
  Result<RgbImage> image = DecodeImage(bytes, num_bytes, limits, alpha, decode_,
                                       plan.arena.buffer(plan.ids.decode.index).bytes,
                                       rgb_, plan.arena.buffer(plan.ids.rgb.index).bytes);
  if (!image.ok()) return image.status();
  return AddRgb(*image);
}

Result<EncodedImage> ImageEncoder::AddRgb(const RgbImage& image) {
  const ImageEncoderPlan& plan = *plan_;
  if (images_ >= plan.options.max_images) {
    return OutOfRange("more than the %d image%s a prompt was planned for",
                      plan.options.max_images, plan.options.max_images == 1 ? "" : "s");
  }
  const ImageLimits& limits = plan.options.limits;
  if (image.rgb == nullptr || image.width < 1 || image.height < 1 ||
      image.width > limits.max_width || image.height > limits.max_height ||
      static_cast<size_t>(image.width) * static_cast<size_t>(image.height) >
          limits.max_pixels) {
    return InvalidArgument(
        "an image of %dx%d: past the limits planned for (%dx%d, %zu pixels)", image.width,
        image.height, limits.max_width, limits.max_height, limits.max_pixels);
  }
  const VisionConfig& v = *model_->vision();
  EncodedImage out;
  const size_t pixel_values =
      plan.arena.buffer(plan.ids.pixels.index).bytes / sizeof(float);
  EMBER_RETURN_IF_ERROR(ProcessImage(v.processor, image, process_,
                                     plan.arena.buffer(plan.ids.process.index).bytes,
                                     pixels_, pixel_values, &out.grid));
  if (out.grid.tiles > plan.max_tiles) {
    return Internal("the processor made %d tiles, past the %d planned", out.grid.tiles,
                    plan.max_tiles);
  }
  const size_t d_model = model_->config().d_model;
  const size_t tile_values = size_t{3} * v.image_size * v.image_size;
  out.first_row = rows_used_;
  for (int t = 0; t < out.grid.tiles; ++t) {
    tower_.EncodeTile(pixels_ + t * tile_values,
                      rows_ + (rows_used_ + out.rows) * d_model);
    out.rows += plan.rows_per_tile;
  }
  rows_used_ += out.rows;
  ++images_;
  return out;
}

EmbeddedRows ImageEncoder::embedded() const {
  const VisionConfig& v = *model_->vision();
  EmbeddedRows rows;
  rows.marker = v.image_token_id;
  rows.rows = rows_;
  rows.count = rows_used_;
  rows.bidirectional = v.image_blocks_bidirectional;
  return rows;
}

}  // namespace ember
