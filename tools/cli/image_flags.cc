// The commands' images (image_flags.h).
#include "tools/cli/image_flags.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "runtime/vision/image_decode.h"
#include "runtime/vision/image_prompt.h"
#include "tools/cli/cli_common.h"
#include "tools/util/files.h"

namespace ember::tools {
namespace {

// The encoder `options` plan, in an arena of its own (images->storage).
Status CreateEncoder(const Model& model, const ThreadPool* pool,
                     const ImageEncoderOptions& options, FlagImages* images) {
  Result<ImageEncoderPlan> plan = PlanImageEncoder(model, options);
  if (!plan.ok()) return plan.status();
  images->plan = *plan;
  images->storage.resize(images->plan.arena_bytes() + kArenaAlignment);
  uint8_t* base = images->storage.data();
  base += (kArenaAlignment - reinterpret_cast<uintptr_t>(base) % kArenaAlignment) %
          kArenaAlignment;
  auto encoder =
      ImageEncoder::Create(model, images->plan, base, images->plan.arena_bytes(), pool);
  if (!encoder.ok()) return encoder.status();
  images->encoder.emplace(std::move(*encoder));
  return Status::Ok();
}

}  // namespace

Status EncodeFlagImages(const ArgParser& args, const Model& model, const ThreadPool* pool,
                        const char* isa, FlagImages* images) {
  return EncodeImageFiles(args.GetAll("--image"), model, pool, isa, images);
}

Status EncodeImageFiles(const std::vector<std::string>& paths, const Model& model,
                        const ThreadPool* pool, const char* isa, FlagImages* images) {
  images->paths = paths;
  if (images->paths.empty()) return Status::Ok();
  if (model.vision() == nullptr) {
    return InvalidArgument("--image: the model has no vision tower (a text-only model)");
  }
  std::vector<std::vector<uint8_t>>& files = images->files;
  files.assign(images->paths.size(), {});
  ImageEncoderOptions options;
  options.isa = isa;
  options.max_images = static_cast<int>(images->paths.size());
  ImageLimits& own = options.limits;
  own.max_width = own.max_height = 1;
  own.max_pixels = 1;
  const ImageLimits limits;  // what the command accepts at most
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string& path = images->paths[i];
    EMBER_RETURN_IF_ERROR(ReadFile(path, &files[i]));
    Result<ImageHeader> header =
        ReadImageHeader(files[i].data(), files[i].size(), limits);
    if (!header.ok()) {
      return Status(header.status().code(), "%s: %s", path.c_str(),
                    header.status().message());
    }
    own.max_width = std::max(own.max_width, header->width);
    own.max_height = std::max(own.max_height, header->height);
    own.max_pixels =
        std::max(own.max_pixels, static_cast<size_t>(header->width) * header->height);
  }
  EMBER_RETURN_IF_ERROR(CreateEncoder(model, pool, options, images));
  images->encoded.reserve(files.size());
  return ReencodeImages(images);
}

Status StartImageEncoder(const Model& model, const ThreadPool* pool, const char* isa,
                         int max_images, FlagImages* images) {
  if (model.vision() == nullptr) {
    return InvalidArgument("the model has no vision tower (a text-only model)");
  }
  ImageEncoderOptions options;
  options.isa = isa;
  options.max_images = max_images;
  return CreateEncoder(model, pool, options, images);
}

Result<EncodedImage> AddImageFile(const std::string& path, FlagImages* images) {
  std::vector<uint8_t> file;
  EMBER_RETURN_IF_ERROR(ReadFile(path, &file));
  const auto start = std::chrono::steady_clock::now();
  Result<EncodedImage> encoded = images->encoder->AddEncoded(file.data(), file.size());
  images->encode_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!encoded.ok()) {
    return Status(encoded.status().code(), "%s: %s", path.c_str(),
                  encoded.status().message());
  }
  return *encoded;
}

size_t MaxImagePromptBytes(const Model& model, const ImageEncoderPlan& plan) {
  const ImagePrompt& p = model.vision()->prompt;
  const size_t tiles = static_cast<size_t>(plan.max_tiles);
  // Each token, and per tile its name ("<row_R_col_C>"), the text around it and the
  // line breaks; the global view's token and the text before and after the image.
  return tiles * plan.rows_per_tile * p.token.size() +
         tiles * (2 * p.around.size() + 32) + p.global_token.size() + p.before.size() +
         p.after.size() + 2 * p.around.size() + 8;
}

Status ReencodeImages(FlagImages* images) {
  images->encoder->Clear();
  images->encoded.clear();  // reserved: no heap call
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < images->files.size(); ++i) {
    const std::vector<uint8_t>& file = images->files[i];
    Result<EncodedImage> encoded = images->encoder->AddEncoded(file.data(), file.size());
    if (!encoded.ok()) {
      return Status(encoded.status().code(), "%s: %s", images->paths[i].c_str(),
                    encoded.status().message());
    }
    images->encoded.push_back(*encoded);
  }
  images->encode_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return Status::Ok();
}

Status EncodeImagePrompt(const Model& model, const std::string& text,
                         const FlagImages& images, bool add_bos,
                         std::vector<int32_t>* ids) {
  const VisionConfig& v = *model.vision();
  std::vector<PromptImage> rows;
  for (const EncodedImage& e : images.encoded) {
    rows.push_back(PromptImage{e.rows, e.grid.rows, e.grid.cols});
  }
  Result<size_t> bytes = ExpandedImagePromptBytes(v.prompt, text, rows.data(),
                                                  rows.size(), UnmarkedImages::kFirst);
  if (!bytes.ok()) return bytes.status();
  std::string expanded(*bytes, '\0');
  size_t length = 0;
  EMBER_RETURN_IF_ERROR(ExpandImagePrompt(v.prompt, text, rows.data(), rows.size(),
                                          expanded.data(), expanded.size(), &length,
                                          UnmarkedImages::kFirst));
  expanded.resize(length);
  EncodeOptions options;
  options.add_bos = add_bos;
  options.parse_special = true;
  EMBER_RETURN_IF_ERROR(EncodeWith(model.tokenizer(), expanded, options, ids));
  const size_t tokens = static_cast<size_t>(
      std::count(ids->begin(), ids->end(), static_cast<int32_t>(v.image_token_id)));
  if (tokens != images.encoder->row_count()) {
    return InvalidArgument(
        "the prompt holds %zu image tokens (id %d) for %zu image rows: the tokenizer "
        "does not read '%s' as the image token, or the text names it itself",
        tokens, v.image_token_id, images.encoder->row_count(), v.prompt.token.c_str());
  }
  return Status::Ok();
}

void PrintImageStats(const char* command, const FlagImages& images) {
  size_t tiles = 0;
  for (const EncodedImage& e : images.encoded) tiles += static_cast<size_t>(e.grid.tiles);
  fprintf(stderr,
          "ember %s: %zu image%s, %zu tile%s, %zu rows encoded in %.2f ms (%.1f ms a "
          "tile; arena %.1f KiB)\n",
          command, images.encoded.size(), images.encoded.size() == 1 ? "" : "s", tiles,
          tiles == 1 ? "" : "s", images.encoder ? images.encoder->row_count() : 0,
          images.encode_seconds * 1e3, tiles ? images.encode_seconds * 1e3 / tiles : 0.0,
          images.plan.arena_bytes() / 1024.0);
}

}  // namespace ember::tools
