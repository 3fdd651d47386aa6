// preprocessor_config.json to ImageProcessorConfig (hf_image_processor.h).
#include "tools/convert/hf/hf_image_processor.h"

namespace ember::tools {
namespace {

// {"longest_edge": n} or {"height": h, "width": w} (or a bare number, old configs'
// "size").
Status ReadSize(const Json& json, const char* key, const std::string& where,
                int* longest_edge, int* height, int* width) {
  if (!json.contains(key) || json[key].is_null()) return Status::Ok();
  const Json& size = json[key];
  if (size.is_number_integer()) {
    *height = *width = size.get<int>();
    return Status::Ok();
  }
  if (!size.is_object())
    return InvalidArgument("%s: \"%s\" is not an object", where.c_str(), key);
  JsonFields f(size, where + ": " + key);
  int64_t value = 0;
  if (f.Has("longest_edge")) {
    EMBER_RETURN_IF_ERROR(f.Int("longest_edge", true, 0, 1, 1 << 14, &value));
    if (longest_edge == nullptr) {
      return InvalidArgument("%s: \"%s\" takes height and width", where.c_str(), key);
    }
    *longest_edge = static_cast<int>(value);
  }
  if (f.Has("height") || f.Has("width")) {
    EMBER_RETURN_IF_ERROR(f.Int("height", true, 0, 1, 1 << 14, &value));
    *height = static_cast<int>(value);
    EMBER_RETURN_IF_ERROR(f.Int("width", true, 0, 1, 1 << 14, &value));
    *width = static_cast<int>(value);
  }
  return Status::Ok();
}

Status ReadTriple(const JsonFields& f, const char* key, const std::string& where,
                  float out[3]) {
  if (!f.Has(key)) return Status::Ok();
  std::vector<float> values;
  EMBER_RETURN_IF_ERROR(f.NumberList(key, &values));
  if (values.size() == 1) values.assign(3, values[0]);
  if (values.size() != 3) {
    return InvalidArgument("%s: \"%s\" has %zu values, not 3", where.c_str(), key,
                           values.size());
  }
  for (int c = 0; c < 3; ++c) out[c] = values[c];
  return Status::Ok();
}

}  // namespace

Status ReadImageProcessorConfig(const Json& json, const std::string& where,
                                ImageProcessorConfig* config) {
  return CatchJsonErrors(where, [&]() -> Status {
    if (!json.is_object()) return InvalidArgument("%s: not a JSON object", where.c_str());
    JsonFields f(json, where);
    std::string type;
    EMBER_RETURN_IF_ERROR(f.String("image_processor_type", true, "", &type));
    ImageProcessorConfig c;
    if (type == "Idefics3ImageProcessor" || type == "SmolVLMImageProcessor") {
      // Their __init__ defaults: longest edge 4 * 364, tiles of 364, Lanczos; the
      // alpha composited on white by their own convert_to_rgb.
      c.layout = ImageLayout::kSplitTiles;
      c.longest_edge = 4 * 364;
      c.tile_size = 364;
      c.resample = ResampleFilter::kLanczos;
      c.alpha_over_white = true;
      int unused_h = 0, unused_w = 0;
      EMBER_RETURN_IF_ERROR(
          ReadSize(json, "size", where, &c.longest_edge, &unused_h, &unused_w));
      int tile = c.tile_size;
      EMBER_RETURN_IF_ERROR(
          ReadSize(json, "max_image_size", where, &tile, &unused_h, &unused_w));
      c.tile_size = tile;
      bool resize = true;
      EMBER_RETURN_IF_ERROR(f.Bool("do_resize", false, true, &resize));
      if (!resize) c.longest_edge = 0;
      EMBER_RETURN_IF_ERROR(f.Bool("do_image_splitting", false, true, &c.split));
    } else if (type == "Gemma3ImageProcessor" || type == "SiglipImageProcessor") {
      // Gemma3ImageProcessor's and SiglipImageProcessor's defaults: 224 x 224 bilinear
      // (Gemma 3's checkpoints say 896); convert("RGB") drops alpha.
      c.layout = ImageLayout::kFixed;
      c.height = c.width = 224;
      c.resample = ResampleFilter::kBilinear;
      c.alpha_over_white = false;
      EMBER_RETURN_IF_ERROR(ReadSize(json, "size", where, nullptr, &c.height, &c.width));
      bool resize = true;
      EMBER_RETURN_IF_ERROR(f.Bool("do_resize", false, true, &resize));
      if (!resize)
        return Unimplemented("%s: do_resize false (images of any size)", where.c_str());
      bool pan_and_scan = false;
      EMBER_RETURN_IF_ERROR(f.Bool("do_pan_and_scan", false, false, &pan_and_scan));
      if (pan_and_scan) {
        return Unimplemented("%s: Gemma 3's pan and scan is not supported",
                             where.c_str());
      }
    } else {
      return Unimplemented("%s: image processor \"%s\" is not supported", where.c_str(),
                           type.c_str());
    }
    int64_t resample = static_cast<int64_t>(c.resample);
    EMBER_RETURN_IF_ERROR(f.Int("resample", false, resample, 0, 5, &resample));
    if (!ResampleFilterFromPil(static_cast<int>(resample), &c.resample)) {
      return Unimplemented("%s: resample %lld (NEAREST) is not supported", where.c_str(),
                           static_cast<long long>(resample));
    }
    EMBER_RETURN_IF_ERROR(f.Bool("do_rescale", false, true, &c.rescale));
    EMBER_RETURN_IF_ERROR(
        f.Float("rescale_factor", false, 1.0 / 255.0, 1e-12, 1e12, &c.rescale_factor));
    EMBER_RETURN_IF_ERROR(f.Bool("do_normalize", false, true, &c.normalize));
    EMBER_RETURN_IF_ERROR(ReadTriple(f, "image_mean", where, c.mean));
    EMBER_RETURN_IF_ERROR(ReadTriple(f, "image_std", where, c.std));
    EMBER_RETURN_IF_ERROR(ValidateImageProcessorConfig(c));
    *config = c;
    return Status::Ok();
  });
}

Status ReadImageProcessorConfigFile(const std::string& path,
                                    ImageProcessorConfig* config) {
  Json json;
  EMBER_RETURN_IF_ERROR(ReadJsonFile(path, &json));
  return ReadImageProcessorConfig(json, path, config);
}

Status ImageProcessorPreset(const std::string& name, ImageProcessorConfig* config) {
  Json json;
  if (name == "gemma3") {
    json = {{"image_processor_type", "Gemma3ImageProcessor"},
            {"size", {{"height", 896}, {"width", 896}}},
            {"resample", 2}};
  } else if (name == "smolvlm") {
    json = {{"image_processor_type", "Idefics3ImageProcessor"},
            {"size", {{"longest_edge", 2048}}},
            {"max_image_size", {{"longest_edge", 512}}},
            {"resample", 1}};
  } else {
    return InvalidArgument("image processor preset \"%s\": gemma3 or smolvlm",
                           name.c_str());
  }
  return ReadImageProcessorConfig(json, "preset " + name, config);
}

}  // namespace ember::tools
