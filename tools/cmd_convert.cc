// `ember convert`: writes a .ember model from a llama2.c checkpoint and tokenizer, or
// from a Hugging Face model directory.
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/quant_layout.h"
#include "runtime/tensor.h"
#include "tools/args.h"
#include "tools/commands.h"
#include "tools/dtype_policy.h"
#include "tools/hf_import.h"
#include "tools/llama2c_import.h"
#include "tools/model_writer.h"

namespace ember::tools {
namespace {

ArgParser MakeParser() {
  return ArgParser({
      {{"--llama2c"}, true, "llama2.c checkpoint (legacy fp32 .bin)"},
      {{"--tokenizer"}, true, "llama2.c tokenizer .bin (with --llama2c)"},
      {{"--hf"},
       true,
       "Hugging Face model directory (config.json, safetensors, tokenizer)"},
      {{"-o", "--output"}, true, "output .ember file"},
      {{"--dtype"},
       true,
       "weight matrices as f32 (default), f16, bf16, q8 or q4 (norms and biases stay "
       "f32; with q4 the embedding/classifier is q8)"},
      {{"--keep"},
       true,
       "PATTERN=DTYPE: store tensors matching the glob PATTERN as DTYPE (repeatable, "
       "the last match wins), e.g. --keep 'blk.*.ffn_down.weight=q8'"},
      {{"-h", "--help"}, false, "show this help"},
  });
}

Status Convert(const ArgParser& args) {
  if (!args.Has("-o")) return InvalidArgument("missing -o OUT.ember");
  const std::string out = args.Get("-o");
  DType matrix_dtype;
  Status dtype_status = ParseDTypeName(args.Get("--dtype", "f32"), &matrix_dtype);
  if (!dtype_status.ok()) return InvalidArgument("--dtype: %s", dtype_status.message());
  std::vector<DTypeOverride> overrides;
  for (const std::string& keep : args.GetAll("--keep")) {
    overrides.emplace_back();
    EMBER_RETURN_IF_ERROR(ParseDTypeOverride(keep, &overrides.back()));
  }
  ModelSpec spec;
  if (args.Has("--llama2c")) {
    if (!args.Has("--tokenizer"))
      return InvalidArgument("--llama2c needs --tokenizer TOK.bin");
    EMBER_RETURN_IF_ERROR(
        ImportLlama2c(args.Get("--llama2c"), args.Get("--tokenizer"), &spec));
  } else if (args.Has("--hf")) {
    EMBER_RETURN_IF_ERROR(ImportHf(args.Get("--hf"), &spec));
  } else {
    return InvalidArgument(
        "say what to convert: --llama2c MODEL.bin --tokenizer TOK.bin, or --hf DIR");
  }
  EMBER_RETURN_IF_ERROR(ChooseDTypes(matrix_dtype, overrides, &spec));
  uint64_t params = 0;
  for (const TensorSpec& t : spec.tensors) params += t.values.size();
  fprintf(stderr,
          "ember convert: %s: %u layers, d_model %u, vocab %u, %zu tensors, %llu "
          "parameters\n",
          spec.config.architecture, spec.config.n_layers, spec.config.d_model,
          spec.config.vocab_size, spec.tensors.size(),
          static_cast<unsigned long long>(params));
  for (size_t i = 0; i < spec.tensors.size(); ++i) {
    const TensorSpec& t = spec.tensors[i];
    std::string shape;
    for (uint64_t d : t.shape) shape += (shape.empty() ? "" : " x ") + std::to_string(d);
    const bool quant = t.dtype == DType::kQ8 || t.dtype == DType::kQ4;
    uint64_t bytes = 0;
    EMBER_RETURN_IF_ERROR(TensorBytes(
        t.dtype, quant ? Layout::kQuantPanels : Layout::kRowMajor, t.shape.data(),
        static_cast<uint32_t>(t.shape.size()), quant ? kernels::kQuantGroup : 0, &bytes));
    fprintf(stderr, "ember convert: [%3zu/%zu] %-28s %-4s %-14s %11llu bytes\n", i + 1,
            spec.tensors.size(), t.name.c_str(), DTypeName(t.dtype), shape.c_str(),
            static_cast<unsigned long long>(bytes));
  }
  uint64_t written = 0;
  EMBER_RETURN_IF_ERROR(WriteModel(spec, out, &written));
  fprintf(stderr, "ember convert: wrote %s (%llu bytes)\n", out.c_str(),
          static_cast<unsigned long long>(written));
  return Status::Ok();
}

}  // namespace

int ConvertCommand(int argc, char** argv) {
  ArgParser args = MakeParser();
  Status s = args.Parse(argc, argv, 1);
  if (s.ok() && args.Has("-h")) {
    printf(
        "usage: ember convert --llama2c MODEL.bin --tokenizer TOK.bin -o OUT.ember "
        "[--dtype T] [--keep PATTERN=T ...]\n"
        "       ember convert --hf DIR -o OUT.ember [--dtype T] [--keep PATTERN=T ...]\n\n%s",
        args.Usage().c_str());
    return 0;
  }
  if (s.ok()) s = Convert(args);
  if (!s.ok()) {
    fprintf(stderr, "ember convert: %s\n", s.message());
    return 1;
  }
  return 0;
}

}  // namespace ember::tools
