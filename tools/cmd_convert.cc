// `ember convert`: writes a .ember model from a llama2.c checkpoint and tokenizer, or
// from a Hugging Face model directory.
#include <cstdio>
#include <string>

#include "tools/args.h"
#include "tools/commands.h"
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
      {{"--dtype"}, true, "weight type: f32 (default)"},
      {{"-h", "--help"}, false, "show this help"},
  });
}

Status Convert(const ArgParser& args) {
  if (!args.Has("-o")) return InvalidArgument("missing -o OUT.ember");
  const std::string out = args.Get("-o");
  const std::string dtype = args.Get("--dtype", "f32");
  if (dtype != "f32")
    return InvalidArgument("--dtype %s is not supported", dtype.c_str());
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
  uint64_t params = 0;
  for (const TensorSpec& t : spec.tensors) params += t.values.size();
  fprintf(stderr,
          "ember convert: %s: %u layers, d_model %u, vocab %u, %zu tensors, %llu "
          "parameters\n",
          spec.config.architecture, spec.config.n_layers, spec.config.d_model,
          spec.config.vocab_size, spec.tensors.size(),
          static_cast<unsigned long long>(params));
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
        "usage: ember convert --llama2c MODEL.bin --tokenizer TOK.bin -o OUT.ember\n"
        "       ember convert --hf DIR -o OUT.ember\n\n%s",
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
