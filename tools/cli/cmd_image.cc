// `ember image`: what a vision model's processor makes of an image file. Decodes a PNG
// or JPEG, runs a processor (a Hugging Face preprocessor_config.json, or a preset),
// prints the grid of tiles and the memory each step takes, and writes the pixel values
// (tiles, 3, height, width) and the decoded RGB as .npy files: the oracle tests compare
// them with Pillow and transformers' processors.
#include <cstdio>
#include <string>
#include <vector>

#include "runtime/model/model.h"
#include "runtime/vision/image_decode.h"
#include "runtime/vision/image_processor.h"
#include "tools/cli/args.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/commands.h"
#include "tools/cli/image_flags.h"
#include "tools/convert/hf/hf_image_processor.h"
#include "tools/util/files.h"
#include "tools/util/npy.h"

namespace ember::tools {
namespace {

ArgParser MakeParser() {
  return ArgParser({
      {{"--image"}, true, "image file: PNG or JPEG"},
      {{"-m", "--model"},
       true,
       "a vision model (.ember): its processor, and its tower encodes the image"},
      {{"-t", "--threads"}, true, "threads for the tower (default 1)"},
      {{"--isa"}, true, IsaHelp()},
      {{"--embeds-out"},
       true,
       "with -m: write the rows the image takes in a prompt (rows, text d_model) as "
       ".npy"},
      {{"--processor-config"},
       true,
       "a Hugging Face preprocessor_config.json (Gemma3ImageProcessor, "
       "SiglipImageProcessor, Idefics3ImageProcessor, SmolVLMImageProcessor)"},
      {{"--preset"}, true, "instead: gemma3 (896x896) or smolvlm (2048 / 512 tiles)"},
      {{"--max-pixels"},
       true,
       "refuse larger images (width x height; default 12582912, a 12.6 MP frame)"},
      {{"--out"}, true, "write the pixel values (tiles, 3, height, width) as .npy"},
      {{"--rgb-out"}, true, "write the decoded RGB (height, width, 3), 0-255, as .npy"},
      {{"-h", "--help"}, false, "show this help"},
  });
}

Status Image(const ArgParser& args) {
  if (!args.Has("--image")) return InvalidArgument("missing --image FILE");
  ImageProcessorConfig config;
  std::unique_ptr<Model> model;
  const int given =
      args.Has("--processor-config") + args.Has("--preset") + args.Has("-m");
  if (given != 1) {
    return InvalidArgument(
        "give one of -m MODEL, --processor-config FILE and --preset NAME");
  }
  if (args.Has("--embeds-out") && !args.Has("-m")) {
    return InvalidArgument("--embeds-out needs -m MODEL (its tower)");
  }
  if (args.Has("-m")) {
    auto opened = Model::Open(args.Get("-m").c_str());
    if (!opened.ok()) return opened.status();
    model = std::move(*opened);
    if (model->vision() == nullptr) {
      return InvalidArgument("%s has no vision tower", args.Get("-m").c_str());
    }
    config = model->vision()->processor;
  } else if (args.Has("--preset")) {
    EMBER_RETURN_IF_ERROR(ImageProcessorPreset(args.Get("--preset"), &config));
  } else {
    EMBER_RETURN_IF_ERROR(
        ReadImageProcessorConfigFile(args.Get("--processor-config"), &config));
  }
  ImageLimits limits;
  int64_t max_pixels = 0;
  EMBER_RETURN_IF_ERROR(args.GetInt("--max-pixels",
                                    static_cast<int64_t>(limits.max_pixels), 1,
                                    int64_t{1} << 32, &max_pixels));
  limits.max_pixels = static_cast<size_t>(max_pixels);

  std::vector<uint8_t> bytes;
  EMBER_RETURN_IF_ERROR(ReadFile(args.Get("--image"), &bytes));
  Result<ImageHeader> header = ReadImageHeader(bytes.data(), bytes.size(), limits);
  if (!header.ok()) return header.status();
  // Memory for this image alone, from the same bounds a session plans with.
  ImageLimits own = limits;
  own.max_width = header->width;
  own.max_height = header->height;
  own.max_pixels = static_cast<size_t>(header->width) * header->height;
  std::vector<uint8_t> decode_scratch(DecodeScratchBytes(own));
  std::vector<uint8_t> rgb(own.max_pixels * 3);
  const AlphaMode alpha =
      config.alpha_over_white ? AlphaMode::kOverWhite : AlphaMode::kDrop;
  Result<RgbImage> image =
      DecodeImage(bytes.data(), bytes.size(), limits, alpha, decode_scratch.data(),
                  decode_scratch.size(), rgb.data(), rgb.size());
  if (!image.ok()) return image.status();

  Result<ImageGrid> grid = PlanImageGrid(config, image->width, image->height);
  if (!grid.ok()) return grid.status();
  std::vector<uint8_t> scratch(ProcessScratchBytes(config, own));
  const size_t tile_values =
      static_cast<size_t>(grid->tile_width) * grid->tile_height * 3;
  std::vector<float> pixels(tile_values * grid->tiles);
  ImageGrid done;
  EMBER_RETURN_IF_ERROR(ProcessImage(config, *image, scratch.data(), scratch.size(),
                                     pixels.data(), pixels.size(), &done));

  printf("image      %s %dx%d, %d channel%s\n",
         header->format == ImageFormat::kPng ? "PNG" : "JPEG", header->width,
         header->height, header->channels, header->channels == 1 ? "" : "s");
  printf("processor  %s, %s, ", config.layout == ImageLayout::kFixed ? "fixed" : "tiles",
         ResampleFilterName(config.resample));
  if (config.layout == ImageLayout::kFixed) {
    printf("resized to %dx%d\n", config.width, config.height);
  } else {
    printf("resized to %dx%d", done.resized_width, done.resized_height);
    if (done.split_width > 0) printf(", then %dx%d", done.split_width, done.split_height);
    printf("\n");
  }
  printf("tiles      %d of %dx%d (%d rows x %d cols%s)\n", done.tiles, done.tile_width,
         done.tile_height, done.rows, done.cols,
         done.rows > 0 ? " + the global view" : "");
  printf("memory     decode %zu bytes, RGB %zu, process %zu, pixels %zu\n",
         decode_scratch.size(), rgb.size(), scratch.size(),
         pixels.size() * sizeof(float));
  if (model) {
    int64_t threads = 1;
    EMBER_RETURN_IF_ERROR(args.GetInt("-t", 1, 1, ThreadPool::kMaxThreads, &threads));
    auto pool = CreatePool(args, threads);
    if (!pool.ok()) return pool.status();
    const std::string isa = args.Get("--isa");
    FlagImages images;
    EMBER_RETURN_IF_ERROR(EncodeFlagImages(
        args, *model, pool->get(), args.Has("--isa") ? isa.c_str() : nullptr, &images));
    const size_t rows = images.encoder->row_count(), d = model->config().d_model;
    printf("tower      %zu rows of %zu (%zu a tile) in %.2f ms; arena %zu bytes\n", rows,
           d, images.plan.rows_per_tile, images.encode_seconds * 1e3,
           images.plan.arena_bytes());
    if (args.Has("--embeds-out")) {
      const float* r = images.encoder->rows();
      EMBER_RETURN_IF_ERROR(WriteNpyF32(args.Get("--embeds-out"),
                                        std::vector<float>(r, r + rows * d), {rows, d}));
    }
  }
  if (args.Has("--out")) {
    EMBER_RETURN_IF_ERROR(WriteNpyF32(
        args.Get("--out"), pixels,
        {static_cast<size_t>(done.tiles), 3, static_cast<size_t>(done.tile_height),
         static_cast<size_t>(done.tile_width)}));
  }
  if (args.Has("--rgb-out")) {
    std::vector<float> values(
        rgb.begin(), rgb.begin() + static_cast<size_t>(image->width) * image->height * 3);
    EMBER_RETURN_IF_ERROR(WriteNpyF32(
        args.Get("--rgb-out"), values,
        {static_cast<size_t>(image->height), static_cast<size_t>(image->width), 3}));
  }
  return Status::Ok();
}

}  // namespace

int ImageCommand(int argc, char** argv) {
  return RunSubcommand("image",
                       "usage: ember image --image FILE (-m MODEL | --processor-config "
                       "FILE | --preset NAME) [--embeds-out ROWS.npy] [--out PIXELS.npy] "
                       "[--rgb-out RGB.npy]\n",
                       MakeParser(), argc, argv, &Image);
}

}  // namespace ember::tools
