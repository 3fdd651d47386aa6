// RunSubcommand and ReadPromptTokens (see cli_common.h).
#include "tools/cli/cli_common.h"

#include <cstdio>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernels/isa.h"
#include "runtime/model/atomic_file.h"
#include "tools/convert/hf/hf_tokenizer.h"
#include "tools/util/files.h"
#include "tools/util/quote.h"

namespace ember::tools {

int RunSubcommand(const char* name, const char* usage, ArgParser parser, int argc,
                  char** argv, CommandBody body) {
  Status s = parser.Parse(argc, argv, 1);
  if (s.ok() && parser.Has("-h")) {
    printf("%s\n%s", usage, parser.Usage().c_str());
    return 0;
  }
  // The tools allocate with the standard containers: running out of memory (or a size
  // past what a container holds) is an error message and status 1, never an abort.
  if (s.ok()) {
    try {
      s = body(parser);
    } catch (const std::bad_alloc&) {
      s = ResourceExhausted("out of memory");
    } catch (const std::length_error&) {
      s = ResourceExhausted("out of memory (a size too large for a container)");
    }
  }
  if (!s.ok()) {
    // Messages quote what files hold (tensor names, a template's raise_exception text).
    fprintf(stderr, "ember %s: %s\n", name, Printable(s.message()).c_str());
    return 1;
  }
  return 0;
}

Status CheckNotAnInput(const std::string& output, const std::vector<std::string>& inputs,
                       const char* what) {
  if (output == "-") return Status::Ok();
  for (const std::string& input : inputs) {
    EMBER_RETURN_IF_ERROR(CheckNotSameFile(output, input, what));
  }
  return Status::Ok();
}

Status ParseBackend(const std::string& name, Backend* backend) {
  if (name == "highway") {
    *backend = Backend::kHighway;
  } else if (name == "xnnpack") {
    *backend = Backend::kXnnpack;
  } else {
    return InvalidArgument("--backend %s: not highway or xnnpack", name.c_str());
  }
  return Status::Ok();
}

const char* IsaHelp() {
  static const std::string help =
      std::string(
          "ISA tier of the kernels: native (default: EMBER_ISA, else this CPU's "
          "best) or a lesser one, to run a slower CPU's kernels: ") +
      kernels::IsaTierNames();
  return help.c_str();
}

OptionSpec KvTypeOption() {
  return {{"--kv-type"},
          true,
          "what the KV cache stores: f32 (default), f16 (half its bytes), or q8 (int8 "
          "with an f32 scale per 32 values of each head: 0.28x of f32's bytes)"};
}

std::vector<OptionSpec> ContextShiftOptions() {
  return {
      {{"--context-shift"},
       false,
       "when the context is full, keep the first --keep tokens, drop the oldest half of "
       "the rest and go on (RoPE models)"},
      {{"--keep"}, true, "tokens a context shift keeps at the start (default 0)"},
  };
}

Status ParseKvType(const std::string& name, KvType* type) {
  if (!ember::ParseKvType(name.c_str(), type)) {
    return InvalidArgument("--kv-type %s: not f32, f16 or q8", name.c_str());
  }
  return Status::Ok();
}

Status ParseKvTypeOption(const ArgParser& args, KvType* type) {
  return ParseKvType(args.Get("--kv-type", "f32"), type);
}

Status ParseContextShiftOptions(const ArgParser& args, SessionOptions* options) {
  int64_t keep;
  EMBER_RETURN_IF_ERROR(args.GetInt("--keep", 0, 0, int64_t{1} << 24, &keep));
  if (args.Has("--keep") && !args.Has("--context-shift")) {
    return InvalidArgument("--keep is for --context-shift");
  }
  options->context_shift = args.Has("--context-shift");
  options->context_keep = static_cast<uint32_t>(keep);
  return Status::Ok();
}

OptionSpec FixedThreadsOption() {
  return {{"--fixed-threads"},
          false,
          "run on all -t threads always; by default, when the threads do not each have "
          "a core (another program busy on one, more threads than free cores), the pool "
          "runs on fewer for a while, then tries all again"};
}

Result<std::unique_ptr<ThreadPool>> CreatePool(const ArgParser& args, int64_t threads) {
  ThreadPoolOptions options;
  options.adapt_to_contention = !args.Has("--fixed-threads");
  return ThreadPool::Create(static_cast<int>(threads), options);
}

Status EncodeText(const Model& model, const std::string& text, bool add_bos,
                  size_t context, std::vector<int32_t>* ids) {
  if (context > 0 && text.size() > 8 * uint64_t{context}) {
    return InvalidArgument(
        "the prompt of %zu bytes cannot fit a context of %zu positions (more than 8 "
        "bytes a position): use a shorter prompt or a longer context",
        text.size(), context);
  }
  EncodeOptions options;
  options.add_bos = add_bos;
  return EncodeWith(model.tokenizer(), text, options, ids);
}

Status EncodeWith(const Tokenizer& tokenizer, const std::string& text,
                  const EncodeOptions& options, std::vector<int32_t>* ids) {
  if (text.size() > tokenizer.max_text_bytes()) {
    return InvalidArgument(
        "the text of %zu bytes is longer than the %zu the tokenizer "
        "takes",
        text.size(), tokenizer.max_text_bytes());
  }
  ids->resize(tokenizer.EncodeCapacity(text.size()));
  size_t n = 0;
  EMBER_RETURN_IF_ERROR(tokenizer.Encode(text, options, ids->data(), ids->size(), &n));
  ids->resize(n);
  return Status::Ok();
}

ArgParser ArgParserWithModelAndPrompt(std::vector<OptionSpec> more) {
  std::vector<OptionSpec> options = {
      {{"-m", "--model"}, true, "model file (.ember)"},
      {{"-p", "--prompt"}, true, "prompt text (tokenized as `ember tokenize` does)"},
      {{"--tokens"}, true, "comma-separated token ids instead of a prompt"},
      {{"--no-bos"}, false, "with -p: do not add BOS even if the tokenizer wants it"},
  };
  options.insert(options.end(), more.begin(), more.end());
  return ArgParser(std::move(options));
}

Status CheckPromptOptions(const ArgParser& args) {
  if (args.Has("-p") == args.Has("--tokens")) {
    return InvalidArgument("give either -p PROMPT or --tokens 1,2,3");
  }
  return Status::Ok();
}

Status ReadPromptTokens(const ArgParser& args, const Model& model,
                        std::vector<int32_t>* tokens) {
  EMBER_RETURN_IF_ERROR(CheckPromptOptions(args));
  const ModelConfig& c = model.config();
  tokens->clear();
  if (args.Has("--tokens")) {
    std::vector<int64_t> list;
    EMBER_RETURN_IF_ERROR(args.GetIntList("--tokens", {}, 0, c.vocab_size - 1, &list));
    tokens->assign(list.begin(), list.end());
  } else {
    const bool add_bos = model.tokenizer().add_bos() && !args.Has("--no-bos");
    EMBER_RETURN_IF_ERROR(
        EncodeText(model, args.Get("-p"), add_bos, c.max_context, tokens));
  }
  if (tokens->empty()) return InvalidArgument("no tokens to run");
  if (tokens->size() > c.max_context) {
    return InvalidArgument("%zu tokens exceed the model's context of %u", tokens->size(),
                           c.max_context);
  }
  return Status::Ok();
}

Status OpenTokenizer(const ArgParser& args, std::unique_ptr<Model>* model,
                     LoadedTokenizer* loaded, const Tokenizer** tokenizer) {
  if (args.Has("-m") == args.Has("--tokenizer")) {
    return InvalidArgument("give either -m MODEL or --tokenizer DIR");
  }
  if (args.Has("-m")) {
    auto opened = Model::Open(args.Get("-m").c_str());
    if (!opened.ok()) return opened.status();
    *model = std::move(*opened);
    *tokenizer = &(*model)->tokenizer();
    return Status::Ok();
  }
  EMBER_RETURN_IF_ERROR(LoadHfTokenizer(args.Get("--tokenizer"), loaded));
  *tokenizer = &loaded->tokenizer;
  return Status::Ok();
}

Status ReadTexts(const ArgParser& args, std::vector<std::string>* texts) {
  *texts = args.GetAll("-p");
  if (!args.Has("--file")) return Status::Ok();
  std::vector<uint8_t> bytes;
  EMBER_RETURN_IF_ERROR(ReadFile(args.Get("--file"), &bytes));
  std::string line;
  for (size_t i = 0; i <= bytes.size(); ++i) {
    if (i == bytes.size() || bytes[i] == '\n') {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (!line.empty()) texts->push_back(line);
      line.clear();
    } else {
      line.push_back(static_cast<char>(bytes[i]));
    }
  }
  return Status::Ok();
}

}  // namespace ember::tools
