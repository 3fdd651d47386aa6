// llama.cpp's multimodal projector files (`mmproj`, read by its mtmd library): the vision
// tower and connector of a model whose text part is another GGUF file, as
// convert_hf_to_gguf.py --mmproj writes them.
//
// - clip.projector_type gemma3: SigLIP, then an average pool (clip.vision.projector.
//   scale_factor, 4 when absent: 896 / 14 = 64 patches a side to 16, 256 rows), Gemma's
//   RMSNorm (the file holds 1 + w, as ember does) and mm.input_projection.weight (stored
//   as Hugging Face's (tower d, text d): transposed here); image blocks attend both ways.
// - clip.projector_type idefics3 (SmolVLM, Idefics3): SigLIP, then the pixel shuffle by
//   clip.vision.projector.scale_factor and mm.model.fc.weight.
//
// The tower: clip.vision.{embedding_length, feed_forward_length, block_count,
// attention.head_count, attention.layer_norm_epsilon, image_size, patch_size} and the
// tensors v.patch_embd.{weight,bias} (a Conv2d's (d, 3, p, p)), v.position_embd.weight,
// v.blk.{i}.{ln1, attn_q, attn_k, attn_v, attn_out, ln2, ffn_up, ffn_down}.{weight,bias}
// and v.post_ln.{weight,bias}. Files written before llama.cpp fixed the FFN's names hold
// fc1 as ffn_down; the shapes tell them apart, as llama.cpp's loader does.
//
// The processor is the family's (the file keeps only the mean, the std and the size):
// Gemma 3's one tile at image_size, bilinear; Idefics3's tiles of image_size with the
// longest edge at clip.vision.preproc_image_size (4 tiles when absent, as Idefics3
// ImageProcessor's defaults and SmolVLM's checkpoints are), Lanczos. The prompt's image
// tokens come from the text file's tokenizer, as from a Hugging Face directory's; a text
// model without the image token ("<image_soft_token>", "<image>") is refused.
#ifndef EMBER_TOOLS_CONVERT_GGUF_GGUF_MMPROJ_H_
#define EMBER_TOOLS_CONVERT_GGUF_GGUF_MMPROJ_H_

#include <vector>

#include "runtime/model/model_writer.h"
#include "runtime/status.h"
#include "tools/convert/gguf/gguf_arch.h"
#include "tools/convert/gguf/gguf_reader.h"

namespace ember::tools {

// Reads the projector file's tower into spec->vision (spec's text config and tokenizer
// set already) and appends its tensors to *tensors.
Status MapGgufProjector(const GgufFile& mmproj, ModelSpec* spec,
                        std::vector<GgufTensorSource>* tensors);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CONVERT_GGUF_GGUF_MMPROJ_H_
