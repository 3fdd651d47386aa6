// Images to the rows a prompt's image tokens take: decode (PNG, JPEG) or take RGB, run
// the model's image processor (the one in its file), then the vision tower over each
// tile. Everything lives in one arena planned before the first image, for the largest
// image `limits` allow and up to `max_images` per prompt: an image makes no heap call.
//
//   auto plan = PlanImageEncoder(model, options);
//   auto encoder = ImageEncoder::Create(model, *plan, arena, plan->arena_bytes(), pool);
//   encoder->AddEncoded(png, png_bytes);          // once per image, in prompt order
//   session.PrefillEmbedded(ids, n, encoder->embedded());
#ifndef EMBER_RUNTIME_VISION_IMAGE_ENCODER_H_
#define EMBER_RUNTIME_VISION_IMAGE_ENCODER_H_

#include <cstddef>
#include <cstdint>

#include "runtime/arena.h"
#include "runtime/forward.h"
#include "runtime/model/model.h"
#include "runtime/pool/thread_pool.h"
#include "runtime/status.h"
#include "runtime/vision/image.h"
#include "runtime/vision/image_processor.h"
#include "runtime/vision/vision_tower.h"

namespace ember {

struct ImageEncoderOptions {
  ImageLimits limits;         // the largest image it takes
  int max_images = 1;         // images held at once (one prompt's)
  const char* isa = nullptr;  // the tower's kernels, as SessionOptions::isa
};

struct ImageEncoderPlan {
  ArenaPlan arena;
  VisionTowerPlan tower;
  ImageEncoderOptions options;
  int max_tiles = 0;         // per image
  size_t rows_per_tile = 0;  // the tower's tokens_per_image
  size_t max_rows = 0;       // max_images * max_tiles * rows_per_tile
  struct Ids {
    ArenaBuffer<uint8_t> decode, rgb, process, tower;
    ArenaBuffer<float> pixels, rows;
  } ids;
  size_t arena_bytes() const { return arena.total_bytes(); }
};

// The plan for `model`'s vision tower and processor (the model must have one).
Result<ImageEncoderPlan> PlanImageEncoder(const Model& model,
                                          const ImageEncoderOptions& options);

// What one image became.
struct EncodedImage {
  ImageGrid grid;
  size_t first_row = 0;  // its rows in rows()
  size_t rows = 0;
};

class ImageEncoder {
 public:
  // An encoder over `arena` (64-byte aligned, at least plan.arena_bytes(); the caller's,
  // outliving it) and `plan`, which it keeps a pointer to: the plan must outlive it too.
  // `pool` may be null.
  static Result<ImageEncoder> Create(const Model& model, const ImageEncoderPlan& plan,
                                     void* arena, size_t arena_bytes,
                                     const ThreadPool* pool = nullptr);

  // Decodes a PNG or JPEG and appends its rows. InvalidArgument for bytes that are not
  // an image it decodes or an image past the limits; OutOfRange past max_images.
  Result<EncodedImage> AddEncoded(const uint8_t* bytes, size_t num_bytes);
  // The same for width x height RGB bytes (row-major, 3 a pixel) in caller memory.
  Result<EncodedImage> AddRgb(const RgbImage& image);
  // Forgets the images added so far (the next prompt's start).
  void Clear() {
    images_ = 0;
    rows_used_ = 0;
  }

  int images() const { return images_; }
  const float* rows() const { return rows_; }
  size_t row_count() const { return rows_used_; }
  // The rows as Session::PrefillEmbedded takes them: the model's image token, and
  // whether each image's rows attend to each other both ways (Gemma 3).
  EmbeddedRows embedded() const;
  // The tower's final hidden states of the last tile encoded (VisionTower::hidden).
  const float* hidden() const { return tower_.hidden(); }
  const ImageEncoderPlan& plan() const { return *plan_; }

 private:
  ImageEncoder(const Model& model, const ImageEncoderPlan& plan, uint8_t* base,
               VisionTower tower);

  const Model* model_;
  const ImageEncoderPlan* plan_;
  VisionTower tower_;
  uint8_t* decode_;
  uint8_t* rgb_;
  uint8_t* process_;
  float* pixels_;
  float* rows_;
  int images_ = 0;
  size_t rows_used_ = 0;
};

}  // namespace ember

#endif  // EMBER_RUNTIME_VISION_IMAGE_ENCODER_H_
