// A Hugging Face image processor's preprocessor_config.json read into the runtime's
// ImageProcessorConfig: Gemma3ImageProcessor and SiglipImageProcessor (one fixed-size
// tile), Idefics3ImageProcessor and SmolVLMImageProcessor (tiles and a global view).
#ifndef EMBER_TOOLS_CONVERT_HF_HF_IMAGE_PROCESSOR_H_
#define EMBER_TOOLS_CONVERT_HF_HF_IMAGE_PROCESSOR_H_

#include <string>

#include "runtime/status.h"
#include "runtime/vision/image_processor.h"
#include "tools/util/json_util.h"

namespace ember::tools {

// From the parsed file; `where` names it in errors. Values the file leaves out take the
// processor class's defaults; options ember does not implement (Gemma 3's pan and scan,
// a NEAREST filter) are refused.
Status ReadImageProcessorConfig(const Json& json, const std::string& where,
                                ImageProcessorConfig* config);
Status ReadImageProcessorConfigFile(const std::string& path,
                                    ImageProcessorConfig* config);

// The processors of the families ember knows, with their released checkpoints' values:
// "gemma3" (896 x 896, bilinear), "smolvlm" (longest edge 2048, 512 tiles, Lanczos).
Status ImageProcessorPreset(const std::string& name, ImageProcessorConfig* config);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CONVERT_HF_HF_IMAGE_PROCESSOR_H_
