// `ember embed`: the embeddings of texts (-p, repeatable, or --file with one text a line)
// from an embedding model, one after another through one session, written as JSON lines
// (stdout), a JSON list of lists, or a float32 NumPy array [texts, dims].
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "runtime/embed/embed.h"
#include "runtime/model/atomic_file.h"
#include "runtime/model/model.h"
#include "runtime/session.h"
#include "tools/cli/args.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/commands.h"
#include "tools/util/files.h"
#include "tools/util/npy.h"

namespace ember::tools {
namespace {

ArgParser MakeParser() {
  return ArgParser({
      {{"-m", "--model"}, true, "model file (.ember) of an embedding model"},
      {{"-p", "--prompt"}, true, "a text to embed (repeatable)"},
      {{"--file"}, true, "a file of texts, one a line (empty lines are skipped)"},
      {{"--dims"}, true, "keep the leading N values (Matryoshka truncation)"},
      {{"--prompt-name"},
       true,
       "put the model's prompt NAME before each text (e.g. query, document: `ember "
       "inspect` lists them; default: the model's default prompt, if any; \"\": none)"},
      {{"--no-normalize"}, false, "leave the pooled vectors as they are"},
      {{"--normalize"},
       false,
       "scale the vectors to unit length (the model's default "
       "for sentence-transformers models with Normalize)"},
      {{"-o", "--output"},
       true,
       "OUT.npy (float32 [texts, dims]) or OUT.json (a list of lists); default: one "
       "JSON list a line on stdout"},
      {{"-t", "--threads"}, true, "threads (default 1)"},
      FixedThreadsOption(),
      {{"-h", "--help"}, false, "show this help"},
  });
}

std::string JsonRow(const float* v, size_t dims) {
  std::string out = "[";
  char buf[32];
  for (size_t j = 0; j < dims; ++j) {
    snprintf(buf, sizeof(buf), j ? ", %.9g" : "%.9g", v[j]);
    out += buf;
  }
  return out + "]";
}

Status WriteOutput(const std::string& path, const std::vector<float>& values,
                   size_t rows, size_t dims) {
  if (path.empty()) {
    for (size_t i = 0; i < rows; ++i) printf("%s\n", JsonRow(&values[i * dims], dims).c_str());
    return Status::Ok();
  }
  if (path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0) {
    return WriteNpyF32(path, values, {rows, dims});
  }
  if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0) {
    std::string text = "[\n";
    for (size_t i = 0; i < rows; ++i) {
      text += "  " + JsonRow(&values[i * dims], dims) + (i + 1 < rows ? ",\n" : "\n");
    }
    text += "]\n";
    return WriteFileAtomic(path, text.data(), text.size());
  }
  return InvalidArgument("-o %s: the output is a .npy or a .json file", path.c_str());
}

Status Embed(const ArgParser& args) {
  if (!args.Has("-m")) return InvalidArgument("missing -m MODEL");
  if (args.Has("--normalize") && args.Has("--no-normalize")) {
    return InvalidArgument("--normalize and --no-normalize contradict each other");
  }
  if (args.Has("-o")) {
    EMBER_RETURN_IF_ERROR(CheckNotSameFile(args.Get("-o"), args.Get("-m"), "model"));
  }
  std::vector<std::string> texts;
  EMBER_RETURN_IF_ERROR(ReadTexts(args, &texts));
  if (texts.empty()) return InvalidArgument("no texts: give -p TEXT or --file LINES.txt");
  int64_t threads, dims_flag;
  EMBER_RETURN_IF_ERROR(args.GetInt("-t", 1, 1, ThreadPool::kMaxThreads, &threads));
  EMBER_RETURN_IF_ERROR(args.GetInt("--dims", 0, 1, 1 << 20, &dims_flag));
  auto model = Model::Open(args.Get("-m").c_str());
  if (!model.ok()) return model.status();
  const ModelConfig& c = (*model)->config();
  if (!c.embeds()) {
    return InvalidArgument(
        "%s is not an embedding model (its config has no pooling): `ember inspect` "
        "shows it; convert a sentence-transformers directory",
        args.Get("-m").c_str());
  }
  // The named prompt before each text (sentence-transformers' prompt_name).
  const Tokenizer& tok = (*model)->tokenizer();
  const std::string prompt_name = args.Get("--prompt-name");
  std::string_view prompt;
  EMBER_RETURN_IF_ERROR(PromptText(
      tok, args.Has("--prompt-name") ? prompt_name.c_str() : nullptr, &prompt));
  for (std::string& text : texts) text.insert(0, prompt);
  // Every text's tokens first: the session's context is the longest of them.
  EncodeOptions encode;
  encode.add_bos = tok.add_bos();
  encode.append_end = true;  // as EmbedText: the end token the post-processor appends
  std::vector<std::vector<int32_t>> ids(texts.size());
  size_t longest = 0, total_tokens = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    const Status s = EncodeWith(tok, texts[i], encode, &ids[i]);
    if (!s.ok()) return Status(s.code(), "text %zu: %s", i + 1, s.message());
    if (ids[i].empty()) return InvalidArgument("text %zu encodes to no tokens", i + 1);
    if (ids[i].size() > c.max_context) {
      return OutOfRange("text %zu has %zu tokens; the model takes at most %u", i + 1,
                        ids[i].size(), c.max_context);
    }
    longest = std::max(longest, ids[i].size());
    total_tokens += ids[i].size();
  }
  auto pool = CreatePool(args, threads);
  if (!pool.ok()) return pool.status();
  // Short texts run packed, several whole in one step (EmbedTokensBatch): the session
  // holds a step of kPackedStepTokens, or the longest text if it is longer.
  SessionOptions options;
  const size_t step = std::max(longest, std::min(total_tokens, kPackedStepTokens));
  options.max_context = static_cast<uint32_t>(std::min<size_t>(c.max_context, step));
  options.max_batch = static_cast<uint32_t>(std::max<size_t>(
      options.max_batch, std::min<size_t>(options.max_context, kPackedStepTokens)));
  options.baked_prompt = false;
  auto session = Session::Create(**model, options, pool->get());
  if (!session.ok()) return session.status();

  EmbedOptions embed;
  embed.dims = static_cast<size_t>(dims_flag);
  embed.normalize = args.Has("--no-normalize") ? 0 : args.Has("--normalize") ? 1 : -1;
  const size_t dims = embed.dims ? embed.dims : EmbeddingDims(c);
  std::vector<float> values(texts.size() * dims);
  const auto start = std::chrono::steady_clock::now();
  std::vector<const int32_t*> id_rows(texts.size());
  std::vector<size_t> lengths(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    id_rows[i] = ids[i].data();
    lengths[i] = ids[i].size();
  }
  size_t done = 0;
  const Status s =
      EmbedTokensBatch(*session, id_rows.data(), lengths.data(), texts.size(), embed,
                       values.data(), values.size(), &done);
  if (!s.ok()) return Status(s.code(), "text %zu: %s", done + 1, s.message());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EMBER_RETURN_IF_ERROR(WriteOutput(args.Get("-o"), values, texts.size(), dims));
  fprintf(stderr,
          "ember embed: %zu texts, %zu tokens, %zu dims (%s pooling%s), %.1f texts/s\n",
          texts.size(), total_tokens, dims, PoolingName(c.pooling),
          embed.normalize == 1 || (embed.normalize < 0 && c.normalize) ? ", normalized"
                                                                       : "",
          seconds > 0 ? texts.size() / seconds : 0.0);
  return Status::Ok();
}

}  // namespace

int EmbedCommand(int argc, char** argv) {
  return RunSubcommand("embed",
                       "usage: ember embed -m MODEL (-p TEXT ... | --file LINES.txt) "
                       "[--dims N] [--no-normalize] [-o OUT.npy|OUT.json]\n",
                       MakeParser(), argc, argv, &Embed);
}

}  // namespace ember::tools
