// `ember convert`: writes a .ember model from a llama2.c checkpoint and tokenizer, from
// a Hugging Face model directory, from a GGUF file, or a synthetic model of any shape
// with random weights.
#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/model/atomic_file.h"
#include "runtime/model/model_writer.h"
#include "runtime/model/tensor.h"
#include "runtime/model/tensor_names.h"
#include "tools/cli/args.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/commands.h"
#include "tools/convert/bake.h"
#include "tools/convert/dtype_policy.h"
#include "tools/convert/gguf/gguf_import.h"
#include "tools/convert/hf/hf_import.h"
#include "tools/convert/llama2c/llama2c_import.h"
#include "tools/convert/reranker.h"
#include "tools/convert/synthetic.h"
#include "tools/template/chat_program.h"
#include "tools/util/files.h"
#include "tools/util/quote.h"

namespace ember::tools {
namespace {

ArgParser MakeParser() {
  return ArgParser({
      {{"--llama2c"},
       true,
       "llama2.c checkpoint (legacy fp32 \"version 0\" .bin; a negative vocab_size in "
       "its header means a separate classifier, else it shares the embedding)"},
      {{"--tokenizer"}, true, "llama2.c tokenizer .bin (with --llama2c)"},
      {{"--hf"},
       true,
       "Hugging Face model directory: config.json, model.safetensors or its shards "
       "(F32, F16, BF16, F64), tokenizer.json or vocab.json + merges.txt, "
       "tokenizer_config.json (a pickled pytorch_model.bin is never read)"},
      {{"--gguf"}, true, "GGUF model file (llama.cpp's format)"},
      {{"--mmproj"},
       true,
       "gguf: llama.cpp's projector file (mmproj) of the model's vision tower: "
       "clip.projector_type gemma3 or idefics3 (SmolVLM)"},
      {{"--synthetic"},
       true,
       "random-weight Llama model (weights N(0, 1/fan_in), a byte-fallback tokenizer "
       "that takes any text): llama2.c's stories15M or stories110M shape, or custom "
       "(the shape options below override a preset's)"},
      {{"--dim"}, true, "synthetic: d_model (overrides the preset's)"},
      {{"--hidden"}, true, "synthetic: feed-forward hidden size"},
      {{"--layers"}, true, "synthetic: layers"},
      {{"--heads"}, true, "synthetic: attention heads"},
      {{"--kv-heads"}, true, "synthetic: key/value heads (default: --heads)"},
      {{"--vocab"}, true, "synthetic: vocabulary size (at least 259)"},
      {{"--ctx"},
       true,
       "synthetic: max context; gguf: replaces the file's context length (a RoPE "
       "model's)"},
      {{"--seed"}, true, "synthetic: random seed (default 1)"},
      {{"--vision"},
       true,
       "synthetic: add a vision tower of random weights, of a family's shape: gemma3 "
       "(SigLIP So400m at 896), smolvlm (SigLIP B/16 at 512, tiles) or tiny"},
      {{"-o", "--output"}, true, "output .ember file"},
      {{"--dtype"},
       true,
       "weight matrices as f32 (default), f16, bf16, q8, q4, q4_k, q5_k, q6_k, or "
       "llama.cpp's mixes q4_k_m, q5_k_m (norms and biases stay f32; with q4 the "
       "embedding/classifier is q8, with K-quants the classifier q6_k; K-quant matrices "
       "whose columns are not a multiple of 256 are q8)"},
      {{"--keep"},
       true,
       "PATTERN=DTYPE: store tensors matching the glob PATTERN as DTYPE (repeatable, "
       "the last match wins), e.g. --keep 'blk.*.ffn_down.weight=q8'"},
      {{"--chat-template"},
       true,
       "FILE: the model's chat template (Jinja), replacing the one the input has"},
      {{"--no-chat-template"}, false, "store no chat template"},
      {{"--no-vision"},
       false,
       "leave out a vision tower and its projector (Gemma 3's, SmolVLM's): a text-only "
       "file"},
      {{"--rerank"},
       true,
       "with --hf: make a reranker of KIND's prompt (qwen3: Qwen3-Reranker, its head the "
       "yes/no logits' difference)"},
      {{"--bake-prompt"},
       true,
       "TEXT: store the state after this prompt in the model: sessions start there "
       "with no prefill"},
      {{"--bake-chat-system"},
       true,
       "TEXT: bake the chat template's rendering of this system text (chats with it "
       "start from the cache)"},
      {{"-h", "--help"}, false, "show this help"},
  });
}

// Refuses an output that is one of the files the import reads, which writing would
// destroy: the checkpoint or the tokenizer, or any file directly inside the --hf
// directory (every file the Hugging Face importer reads is one: config.json, the
// tokenizer files, the safetensors and the shards their index names, which must be
// plain file names). Identity, not spelling, decides: links and other names count.
Status CheckOutputIsNoInput(const ArgParser& args, const std::string& out) {
  if (args.Has("--llama2c")) {
    EMBER_RETURN_IF_ERROR(CheckNotSameFile(out, args.Get("--llama2c"), "checkpoint"));
  }
  if (args.Has("--tokenizer")) {
    EMBER_RETURN_IF_ERROR(CheckNotSameFile(out, args.Get("--tokenizer"), "tokenizer"));
  }
  if (args.Has("--gguf")) {
    EMBER_RETURN_IF_ERROR(CheckNotSameFile(out, args.Get("--gguf"), "GGUF file"));
  }
  if (args.Has("--mmproj")) {
    EMBER_RETURN_IF_ERROR(CheckNotSameFile(out, args.Get("--mmproj"), "mmproj file"));
  }
  if (!args.Has("--hf")) return Status::Ok();
  std::string dir = args.Get("--hf");
  if (dir.empty() || dir.back() != '/') dir += '/';
  DIR* d = opendir(dir.c_str());
  if (!d) return Status::Ok();  // the importer says why it cannot read it
  Status s;
  while (s.ok()) {
    errno = 0;  // readdir's end and its failure both return null: errno tells them apart
    const dirent* entry = readdir(d);
    if (entry == nullptr) {
      if (errno != 0) {
        s = IoError("cannot list '%s' (to check -o against its files): %s", dir.c_str(),
                    strerror(errno));
      }
      break;
    }
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    s = CheckNotSameFile(out, dir + name, "--hf input");
  }
  closedir(d);
  return s;
}

// --synthetic NAME with the preset's shape, each dimension overridable; "custom" takes
// them all from the options.
Status Synthetic(const ArgParser& args, ModelSpec* spec) {
  const std::string name = args.Get("--synthetic");
  SyntheticShape shape;
  if (name != "custom") EMBER_RETURN_IF_ERROR(SyntheticPreset(name, &shape));
  const struct {
    const char* flag;
    uint32_t* value;
  } dims[] = {{"--dim", &shape.dim},
              {"--hidden", &shape.hidden},
              {"--layers", &shape.layers},
              {"--heads", &shape.heads},
              {"--kv-heads", &shape.kv_heads},
              {"--vocab", &shape.vocab},
              {"--ctx", &shape.ctx}};
  for (const auto& d : dims) {
    if (!args.Has(d.flag)) {
      if (name == "custom" && d.value != &shape.kv_heads) {
        return InvalidArgument("--synthetic custom needs %s", d.flag);
      }
      continue;
    }
    int64_t value;
    EMBER_RETURN_IF_ERROR(args.GetInt(d.flag, 0, 1, int64_t{1} << 24, &value));
    *d.value = static_cast<uint32_t>(value);
  }
  // A preset's kv_heads follows its heads unless given.
  if (args.Has("--heads") && !args.Has("--kv-heads")) shape.kv_heads = 0;
  int64_t seed;
  EMBER_RETURN_IF_ERROR(args.GetInt("--seed", 1, 0, INT64_MAX, &seed));
  EMBER_RETURN_IF_ERROR(
      MakeSyntheticModel(shape, static_cast<uint64_t>(seed), name, spec));
  if (args.Has("--vision")) {
    EMBER_RETURN_IF_ERROR(
        AddSyntheticVision(args.Get("--vision"), static_cast<uint64_t>(seed), spec));
  }
  return Status::Ok();
}

Status Convert(const ArgParser& args) {
  if (!args.Has("-o")) return InvalidArgument("missing -o OUT.ember");
  const std::string out = args.Get("-o");
  EMBER_RETURN_IF_ERROR(CheckOutputIsNoInput(args, out));
  WeightTypes types;
  const std::string dtype = args.Get("--dtype", "f32");
  if (!ParseWeightTypes(dtype, &types).ok()) {
    return InvalidArgument(
        "--dtype %s is not a weight type (f32, f16, bf16, q8, q4, q4_k, q5_k, q6_k) or a "
        "mix (q4_k_m, q5_k_m)",
        dtype.c_str());
  }
  std::vector<DTypeOverride> overrides;
  for (const std::string& keep : args.GetAll("--keep")) {
    overrides.emplace_back();
    EMBER_RETURN_IF_ERROR(ParseDTypeOverride(keep, &overrides.back()));
  }
  ModelSpec spec;
  if (args.Has("--rerank") && !args.Has("--hf")) {
    return InvalidArgument("--rerank needs --hf DIR");
  }
  if (args.Has("--mmproj") && !args.Has("--gguf")) {
    return InvalidArgument("--mmproj needs --gguf MODEL.gguf (the text model)");
  }
  if (!args.Has("--synthetic")) {
    for (const char* flag : {"--dim", "--hidden", "--layers", "--heads", "--kv-heads",
                             "--vocab", "--ctx", "--seed", "--vision"}) {
      const bool ctx = std::string(flag) == "--ctx";
      if (args.Has(flag) && !(ctx && args.Has("--gguf"))) {
        return InvalidArgument("%s needs --synthetic%s", flag, ctx ? " or --gguf" : "");
      }
    }
  }
  std::vector<std::string> sources;  // GGUF: what each tensor was made from
  std::vector<std::string> notes;    // type choices worth a line (K-quant fallbacks)
  if (args.Has("--llama2c")) {
    if (!args.Has("--tokenizer"))
      return InvalidArgument("--llama2c needs --tokenizer TOK.bin");
    EMBER_RETURN_IF_ERROR(
        ImportLlama2c(args.Get("--llama2c"), args.Get("--tokenizer"), &spec));
  } else if (args.Has("--hf")) {
    EMBER_RETURN_IF_ERROR(ImportHf(args.Get("--hf"), &spec));
    if (args.Has("--no-vision") && spec.vision) {
      spec.vision.reset();
      auto& t = spec.tensors;
      t.erase(std::remove_if(t.begin(), t.end(),
                             [](const TensorSpec& x) {
                               return names::IsVisionTensor(x.name.c_str());
                             }),
              t.end());
    }
    if (args.Has("--rerank")) {
      std::string note;
      EMBER_RETURN_IF_ERROR(MakeReranker(args.Get("--rerank"), &spec, &note));
      notes.push_back(note);
    }
  } else if (args.Has("--gguf")) {
    // The GGUF importer chooses the types itself: it keeps each tensor's own where it
    // can.
    GgufImportOptions options;
    options.convert_dtype = args.Has("--dtype");
    options.types = types;
    options.overrides = overrides;
    int64_t ctx;
    EMBER_RETURN_IF_ERROR(args.GetInt("--ctx", 0, 1, int64_t{1} << 24, &ctx));
    options.max_context = static_cast<uint32_t>(ctx);
    if (args.Has("--mmproj")) options.mmproj = args.Get("--mmproj");
    EMBER_RETURN_IF_ERROR(
        ImportGguf(args.Get("--gguf"), options, &spec, &sources, &notes));
  } else if (args.Has("--synthetic")) {
    EMBER_RETURN_IF_ERROR(Synthetic(args, &spec));
  } else {
    return InvalidArgument(
        "say what to convert: --llama2c MODEL.bin --tokenizer TOK.bin, --hf DIR, --gguf "
        "MODEL.gguf, or --synthetic NAME");
  }
  if (!args.Has("--gguf")) {
    EMBER_RETURN_IF_ERROR(ChooseDTypes(types, overrides, &spec, &notes));
  }
  // The chat template, compiled now into what the runtime renders (refused here, with
  // its line, when it uses what the runtime cannot run).
  if (args.Has("--no-chat-template")) spec.tokenizer.chat_template.clear();
  if (args.Has("--chat-template")) {
    std::vector<uint8_t> bytes;
    EMBER_RETURN_IF_ERROR(ReadFile(args.Get("--chat-template"), &bytes));
    spec.tokenizer.chat_template.assign(bytes.begin(), bytes.end());
  }
  if (const Status s = CompileChatTemplate(&spec.tokenizer); !s.ok()) {
    return Status(s.code(),
                  "%s (--chat-template FILE replaces it, --no-chat-template drops it)",
                  s.message());
  }
  if (!spec.tokenizer.chat_program.empty()) {
    fprintf(
        stderr,
        "ember convert: chat template compiled: %zu bytes of code, %zu strings, ends a "
        "turn at %zu token(s)\n",
        spec.tokenizer.chat_program.code.size(),
        spec.tokenizer.chat_program.strings.size(),
        spec.tokenizer.chat_program.end_of_turn_ids.size());
  }
  for (const std::string& note : notes)
    fprintf(stderr, "ember convert: %s\n", Printable(note).c_str());
  uint64_t params = 0;
  for (const TensorSpec& t : spec.tensors) {
    uint64_t elements = 1;
    for (uint64_t d : t.shape) elements *= d;
    params += elements;
  }
  fprintf(stderr,
          "ember convert: %s: %u layers, d_model %u, vocab %u, %zu tensors, %llu "
          "parameters\n",
          Printable(spec.config.architecture).c_str(), spec.config.n_layers,
          spec.config.d_model, spec.config.vocab_size, spec.tensors.size(),
          static_cast<unsigned long long>(params));
  for (size_t i = 0; i < spec.tensors.size(); ++i) {
    const TensorSpec& t = spec.tensors[i];
    std::string shape;
    for (uint64_t d : t.shape) shape += (shape.empty() ? "" : " x ") + std::to_string(d);
    uint64_t bytes = 0;
    EMBER_RETURN_IF_ERROR(TensorBytes(t.dtype, StoredLayout(t.dtype), t.shape.data(),
                                      static_cast<uint32_t>(t.shape.size()),
                                      StoredGroupSize(t.dtype), &bytes));
    fprintf(stderr, "ember convert: [%3zu/%zu] %-28s %-4s %-14s %11llu bytes%s%s\n",
            i + 1, spec.tensors.size(), Printable(t.name).c_str(), DTypeName(t.dtype),
            shape.c_str(), static_cast<unsigned long long>(bytes),
            i < sources.size() ? "  " : "",
            i < sources.size() ? Printable(sources[i]).c_str() : "");
  }
  if (args.Has("--bake-prompt") || args.Has("--bake-chat-system")) {
    BakeRequest bake;
    bake.chat_system = args.Has("--bake-chat-system");
    bake.text = args.Get(bake.chat_system ? "--bake-chat-system" : "--bake-prompt");
    EMBER_RETURN_IF_ERROR(BakeSpec(bake, &spec));
    fprintf(stderr, "ember convert: baked a prompt of %zu tokens (%zu bytes of state)\n",
            spec.baked_prompt.tokens.size(), spec.baked_prompt.state.size());
  }
  uint64_t written = 0;
  EMBER_RETURN_IF_ERROR(WriteModel(spec, out, &written));
  fprintf(stderr, "ember convert: wrote %s (%llu bytes)\n", out.c_str(),
          static_cast<unsigned long long>(written));
  return Status::Ok();
}

}  // namespace

int ConvertCommand(int argc, char** argv) {
  return RunSubcommand(
      "convert",
      "usage: ember convert --llama2c MODEL.bin --tokenizer TOK.bin -o OUT.ember\n"
      "       ember convert --hf DIR -o OUT.ember\n"
      "       ember convert --gguf MODEL.gguf [--mmproj MMPROJ.gguf] [--ctx N] -o "
      "OUT.ember\n"
      "       ember convert --synthetic stories15M|stories110M|custom [--dim N ...] "
      "[--seed S] -o OUT.ember\n"
      "Every form takes [--dtype f32|f16|bf16|q8|q4|q4_k|q5_k|q6_k|q4_k_m|q5_k_m]\n"
      "[--keep PATTERN=DTYPE ...]. The model is checked as the loader will check\n"
      "it; an input is never overwritten, and OUT is replaced only once the new\n"
      "file is complete.\n",
      MakeParser(), argc, argv, &Convert);
}

}  // namespace ember::tools
