// `ember logits`: runs a prompt (text or token ids) through the model and writes the
// logits as a float32 NumPy file: [1, vocab] for the last position, or [positions,
// vocab] with --all; --attn also writes every layer's attention weights.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "runtime/model/atomic_file.h"
#include "runtime/model/model.h"
#include "runtime/session.h"
#include "tools/cli/args.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/commands.h"
#include "tools/cli/image_flags.h"
#include "tools/util/npy.h"

namespace ember::tools {
namespace {

ArgParser MakeParser() {
  return ArgParserWithModelAndPrompt({
      {{"--all"}, false, "logits of every position, not only the last"},
      {{"-o", "--output"},
       true,
       "output .npy file: float32 [1, vocab], or [positions, vocab] with --all"},
      {{"--attn"},
       true,
       "also write attention weights as .npy: [layers, heads, positions, positions] "
       "(query, key; zero where masked)"},
      {{"--image"},
       true,
       "FILE: a PNG or JPEG for a vision model's prompt (repeatable; as `ember run "
       "--image`: -p's markers take the images, with special tokens read)"},
      {{"--tokens-out"}, true, "also write the prompt's token ids (text, one line)"},
      {{"-t", "--threads"}, true, "threads (default 1)"},
      FixedThreadsOption(),
      {{"--backend"}, true, kBackendHelp},
      KvTypeOption(),
      {{"-h", "--help"}, false, "show this help"},
  });
}

Status Logits(const ArgParser& args) {
  if (!args.Has("-m")) return InvalidArgument("missing -m MODEL");
  if (!args.Has("-o")) return InvalidArgument("missing -o OUT.npy");
  EMBER_RETURN_IF_ERROR(CheckPromptOptions(args));
  // Neither output may be the model, nor both one file (the second would replace the
  // first).
  EMBER_RETURN_IF_ERROR(CheckNotSameFile(args.Get("-o"), args.Get("-m"), "model"));
  if (args.Has("--attn")) {
    EMBER_RETURN_IF_ERROR(CheckNotSameFile(args.Get("--attn"), args.Get("-m"), "model"));
    if (args.Get("--attn") == args.Get("-o")) {
      return InvalidArgument("-o and --attn are both '%s': give two files",
                             args.Get("-o").c_str());
    }
    EMBER_RETURN_IF_ERROR(
        CheckNotSameFile(args.Get("--attn"), args.Get("-o"), "-o output"));
  }
  int64_t threads;
  EMBER_RETURN_IF_ERROR(args.GetInt("-t", 1, 1, ThreadPool::kMaxThreads, &threads));
  auto model = Model::Open(args.Get("-m").c_str());
  if (!model.ok()) return model.status();
  const ModelConfig& c = (*model)->config();

  auto pool = CreatePool(args, threads);
  if (!pool.ok()) return pool.status();
  std::vector<int32_t> tokens;
  FlagImages images;
  if (args.Has("--image")) {
    if (!args.Has("-p")) return InvalidArgument("--image takes its prompt as -p TEXT");
    EMBER_RETURN_IF_ERROR(EncodeFlagImages(args, **model, pool->get(), nullptr, &images));
    EMBER_RETURN_IF_ERROR(EncodeImagePrompt(
        **model, args.Get("-p"), images,
        (*model)->tokenizer().add_bos() && !args.Has("--no-bos"), &tokens));
    if (tokens.size() > c.max_context) {
      return InvalidArgument("%zu tokens exceed the model's context of %u", tokens.size(),
                             c.max_context);
    }
  } else {
    EMBER_RETURN_IF_ERROR(ReadPromptTokens(args, **model, &tokens));
  }
  if (args.Has("--tokens-out")) {
    std::string line;
    for (size_t i = 0; i < tokens.size(); ++i) {
      line += (i ? " " : "") + std::to_string(tokens[i]);
    }
    line += "\n";
    AtomicFile out;
    EMBER_RETURN_IF_ERROR(out.Open(args.Get("--tokens-out")));
    fwrite(line.data(), 1, line.size(), out.file());
    EMBER_RETURN_IF_ERROR(out.Commit());
  }
  SessionOptions options;
  EMBER_RETURN_IF_ERROR(ParseBackend(args.Get("--backend", "highway"), &options.backend));
  options.max_context = static_cast<uint32_t>(tokens.size());
  EMBER_RETURN_IF_ERROR(ParseKvTypeOption(args, &options.kv_type));
  options.all_logits = args.Has("--all");
  // With images, the whole prompt in one step (all_logits keeps one step's rows, and
  // an image's rows stay in one step).
  options.max_batch = images.empty() ? 64 : static_cast<uint32_t>(tokens.size());
  options.baked_prompt = false;  // from position 0, whatever the file baked
  auto session = Session::Create(**model, options, pool->get());
  if (!session.ok()) return session.status();
  Session& s = *session;

  // Every layer and head, recorded by the forward pass into this vector.
  std::vector<float> attention;
  if (args.Has("--attn")) {
    AttentionRecordOptions all;
    all.enabled = true;
    attention.assign(size_t{c.n_layers} * c.n_heads * tokens.size() * tokens.size(),
                     0.0f);
    EMBER_RETURN_IF_ERROR(s.RecordAttention(all, attention.data(), attention.size()));
  }

  // A causal model runs in steps of max_batch tokens (all_logits keeps one step's rows);
  // a bidirectional one sees its whole input in one step.
  const size_t vocab = c.vocab_size;
  const size_t step =
      c.mask == AttentionMask::kBidirectional ? tokens.size() : options.max_batch;
  std::vector<float> logits;
  for (size_t done = 0; done < tokens.size(); done += step) {
    const size_t count = std::min(step, tokens.size() - done);
    if (images.empty()) {
      EMBER_RETURN_IF_ERROR(s.Prefill(tokens.data() + done, count));
    } else {
      EMBER_RETURN_IF_ERROR(
          s.PrefillEmbedded(tokens.data(), tokens.size(), images.encoder->embedded()));
    }
    if (options.all_logits) {
      for (size_t i = 0; i < s.num_logits(); ++i) {
        logits.insert(logits.end(), s.logits_at(i), s.logits_at(i) + vocab);
      }
    }
  }
  if (!options.all_logits) logits.assign(s.logits(), s.logits() + vocab);
  const size_t rows = logits.size() / vocab;
  EMBER_RETURN_IF_ERROR(WriteNpyF32(args.Get("-o"), logits, {rows, vocab}));
  if (args.Has("--attn")) {
    EMBER_RETURN_IF_ERROR(
        WriteNpyF32(args.Get("--attn"), attention,
                    {c.n_layers, c.n_heads, tokens.size(), tokens.size()}));
  }
  fprintf(stderr, "ember logits: %zu tokens, wrote [%zu, %zu] to %s (%s)\n",
          tokens.size(), rows, vocab, args.Get("-o").c_str(), s.kernel_target());
  return Status::Ok();
}

}  // namespace

int LogitsCommand(int argc, char** argv) {
  return RunSubcommand(
      "logits",
      "usage: ember logits -m MODEL (-p PROMPT | --tokens 1,2,3) [--image FILE] [--all] "
      "-o OUT.npy\n",
      MakeParser(), argc, argv, &Logits);
}

}  // namespace ember::tools
