// Image resizing exactly as Pillow's Image.resize does it for 8-bit RGB (libImaging's
// Resample.c, which every Hugging Face image processor calls): separable convolution,
// horizontal pass first, coefficients rounded to 22-bit fixed point, each pass rounded
// and clipped to a byte. Same input, same bytes out. Nothing here allocates.
#ifndef EMBER_RUNTIME_VISION_RESAMPLE_H_
#define EMBER_RUNTIME_VISION_RESAMPLE_H_

#include <cstddef>
#include <cstdint>

#include "runtime/model/image_processor_config.h"
#include "runtime/status.h"
#include "runtime/vision/image.h"

namespace ember {

// True and the filter for a Pillow resample number this code implements.
bool ResampleFilterFromPil(int pil_number, ResampleFilter* filter);
const char* ResampleFilterName(ResampleFilter filter);

// The scratch ResizeRgb needs for this resize (coefficients and the horizontal pass's
// rows); 0 when a size is not in [1, 65536] or a product overflows.
size_t ResizeScratchBytes(int in_width, int in_height, int out_width, int out_height,
                          ResampleFilter filter);

// An upper bound of ResizeScratchBytes over every input up to max_in_width x
// max_in_height resized to out_width x out_height: what an arena plans for.
size_t ResizeScratchBound(int max_in_width, int max_in_height, int out_width,
                          int out_height, ResampleFilter filter);

// Resizes `in` to out_width x out_height into out[0, out_width * out_height * 3).
// `out` must not overlap `in` or the scratch.
Status ResizeRgb(const RgbImage& in, int out_width, int out_height, ResampleFilter filter,
                 uint8_t* scratch, size_t scratch_bytes, uint8_t* out);

}  // namespace ember

#endif  // EMBER_RUNTIME_VISION_RESAMPLE_H_
