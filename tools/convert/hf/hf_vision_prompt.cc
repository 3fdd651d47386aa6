// The image processor and image prompt of a Hugging Face vision model's directory (see
// hf_models.h): preprocessor_config.json, processor_config.json and the tokenizer's image
// tokens, as Gemma3Processor and Idefics3Processor (SmolVLMProcessor) use them.
#include <unistd.h>

#include <cstdio>
#include <string>

#include "tools/convert/hf/hf_image_processor.h"
#include "tools/convert/hf/hf_models.h"
#include "tools/util/json_util.h"

namespace ember::tools {
namespace {

// Idefics3Processor (processing_idefics3.py) and SmolVLMProcessor: each "<image>" a
// prompt or chat template writes becomes, per tile, "<fake_token_around_image>
// <row_R_col_C>" and the image token once per row, then the global view (the tiled
// layout of ImagePrompt). The processor adds "<fake_token_around_image>" and "<image>"
// to its tokenizer, so the model's must hold them, "<image>" as the image token id;
// "<global-img>" and the tiles' names are matched as the tokenizer finds them (added
// tokens in SmolVLM's, plain text otherwise).
Status TiledImagePrompt(ModelSpec* spec) {
  VisionConfig& v = *spec->vision;
  const std::string image = "<image>", around = "<fake_token_around_image>";
  const TokenizerSpec& tok = spec->tokenizer;
  const int64_t image_id = AddedTokenId(tok, image),
                around_id = AddedTokenId(tok, around);
  const bool no_image = image_id < 0 || image_id != v.image_token_id;
  if (no_image || around_id < 0) {
    // The file still holds the tower; prompts cannot name its rows by text.
    fprintf(stderr,
            "ember convert: the tokenizer has no added token %s%s%s: the model takes "
            "images only as given rows, not in a prompt\n",
            no_image ? "'<image>' of the image token's id" : "",
            no_image && around_id < 0 ? " and no " : "",
            around_id < 0 ? "'<fake_token_around_image>'" : "");
    return Status::Ok();
  }
  v.prompt = ImagePrompt();
  v.prompt.marker = image;
  v.prompt.token = image;
  v.prompt.layout = ImagePromptLayout::kTiles;
  v.prompt.around = around;
  v.prompt.global_token = "<global-img>";
  return Status::Ok();
}

// processor_config.json's image_seq_len is how many image tokens the processor writes a
// tile: other than the tower's rows a tile, transformers fails at the first image
// (inputs_merger finds more or fewer tokens than rows).
Status CheckImageSeqLen(const std::string& dir, const VisionConfig& v) {
  const std::string processor_path = dir + "/processor_config.json";
  if (access(processor_path.c_str(), R_OK) != 0) return Status::Ok();
  Json root;
  EMBER_RETURN_IF_ERROR(ReadJsonFile(processor_path, &root));
  if (!root.is_object())
    return InvalidArgument("%s: not a JSON object", processor_path.c_str());
  const JsonFields f(root, processor_path);
  int64_t seq;
  EMBER_RETURN_IF_ERROR(f.Int("image_seq_len", false,
                              static_cast<int64_t>(v.tokens_per_image()), 1, 1 << 20,
                              &seq));
  if (seq != static_cast<int64_t>(v.tokens_per_image())) {
    return InvalidArgument(
        "%s: image_seq_len %lld, but the tower gives %zu rows a tile ((%u / %u)^2 "
        "patches / scale_factor %u^2)",
        processor_path.c_str(), static_cast<long long>(seq), v.tokens_per_image(),
        v.image_size, v.patch_size, v.connector_factor);
  }
  return Status::Ok();
}

}  // namespace

int64_t AddedTokenId(const TokenizerSpec& tok, const std::string& text) {
  for (const TokenizerSpec::Added& a : tok.added) {
    if (a.text == text) return a.id;
  }
  return -1;
}

Status ReadVisionProcessor(const std::string& dir, ModelSpec* spec) {
  VisionConfig& v = *spec->vision;
  const std::string processor_path = dir + "/preprocessor_config.json";
  if (access(processor_path.c_str(), R_OK) == 0) {
    EMBER_RETURN_IF_ERROR(ReadImageProcessorConfigFile(processor_path, &v.processor));
  }
  const ImageProcessorConfig& p = v.processor;
  const int tile = p.layout == ImageLayout::kFixed ? p.height : p.tile_size;
  if (tile != static_cast<int>(v.image_size) ||
      (p.layout == ImageLayout::kFixed && p.width != p.height)) {
    return InvalidArgument(
        "%s: the processor's tiles (%dx%d) are not the vision tower's image_size %u",
        processor_path.c_str(), p.layout == ImageLayout::kFixed ? p.width : tile, tile,
        v.image_size);
  }
  // Each family's processor: Gemma 3's one tile, Idefics3's tiles and global view.
  const bool tiled = v.connector == ImageConnector::kPixelShuffle;
  if (tiled != (p.layout == ImageLayout::kSplitTiles)) {
    return InvalidArgument(
        "%s: a %s processor for a model whose prompt takes %s", processor_path.c_str(),
        tiled ? "fixed-size" : "tiling",
        tiled ? "tiles (Idefics3ImageProcessor)" : "one tile (Gemma3ImageProcessor)");
  }
  ImageTokenNames names;
  if (tiled) {
    EMBER_RETURN_IF_ERROR(CheckImageSeqLen(dir, v));
  } else {
    // Gemma3Processor takes its names from tokenizer_config.json.
    const std::string tokenizer_path = dir + "/tokenizer_config.json";
    if (access(tokenizer_path.c_str(), R_OK) == 0) {
      Json root;
      EMBER_RETURN_IF_ERROR(ReadJsonFile(tokenizer_path, &root));
      if (root.is_object()) {
        const JsonFields f(root, "tokenizer_config.json");
        EMBER_RETURN_IF_ERROR(f.String("boi_token", false, names.boi, &names.boi));
        EMBER_RETURN_IF_ERROR(f.String("eoi_token", false, names.eoi, &names.eoi));
        EMBER_RETURN_IF_ERROR(f.String("image_token", false, names.image, &names.image));
      }
    }
  }
  return SetImagePrompt(names, spec);
}

Status SetImagePrompt(const ImageTokenNames& names, ModelSpec* spec) {
  VisionConfig& v = *spec->vision;
  if (v.connector == ImageConnector::kPixelShuffle) return TiledImagePrompt(spec);
  // Gemma3Processor: each boi_token a chat template writes becomes "\n\n" boi, the
  // image token once per row, eoi "\n\n". The image token must be the tokenizer's:
  // the prompt is matched by text.
  const int64_t image_id = AddedTokenId(spec->tokenizer, names.image);
  if (image_id < 0 || image_id != v.image_token_id) {
    // The file still holds the tower; prompts cannot name its rows by text.
    fprintf(stderr,
            "ember convert: the tokenizer has no added token '%.40s' of id %d (the image "
            "token's): the model takes images only as given rows, not in a prompt\n",
            names.image.c_str(), v.image_token_id);
    return Status::Ok();
  }
  if (!v.prompt.marker.Assign(names.boi) || !v.prompt.before.Assign("\n\n" + names.boi) ||
      !v.prompt.after.Assign(names.eoi + "\n\n") || !v.prompt.token.Assign(names.image)) {
    v.prompt = ImagePrompt();
    return InvalidArgument(
        "tokenizer_config.json: an image token name past %zu bytes, or holding a NUL",
        PromptText::kMax - 2);
  }
  return Status::Ok();
}

}  // namespace ember::tools
