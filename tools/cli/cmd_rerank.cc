// `ember rerank`: a reranker's relevance scores (a cross-encoder, or Qwen3-Reranker
// through its prompt) of documents (-p, repeatable, or --file with one a line) for a
// query, highest first: "score<TAB>index<TAB>document".
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "runtime/embed/embed.h"
#include "runtime/model/model.h"
#include "runtime/session.h"
#include "tools/cli/args.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/commands.h"

namespace ember::tools {
namespace {

ArgParser MakeParser() {
  return ArgParser({
      {{"-m", "--model"}, true, "model file (.ember) of a cross-encoder (a reranker)"},
      {{"--query"}, true, "the query"},
      {{"-p", "--prompt"}, true, "a document (repeatable)"},
      {{"--file"}, true, "a file of documents, one a line (empty lines are skipped)"},
      {{"--top"}, true, "print only the N best"},
      {{"--instruction"},
       true,
       "the task, for a reranker with a prompt (Qwen3-Reranker; default: the model's)"},
      {{"-t", "--threads"}, true, "threads (default 1)"},
      FixedThreadsOption(),
      {{"-h", "--help"}, false, "show this help"},
  });
}

Status Rerank(const ArgParser& args) {
  if (!args.Has("-m")) return InvalidArgument("missing -m MODEL");
  if (!args.Has("--query")) return InvalidArgument("missing --query TEXT");
  std::vector<std::string> docs;
  EMBER_RETURN_IF_ERROR(ReadTexts(args, &docs));
  if (docs.empty()) return InvalidArgument("no documents: give -p TEXT or --file LINES.txt");
  int64_t threads, top;
  EMBER_RETURN_IF_ERROR(args.GetInt("-t", 1, 1, ThreadPool::kMaxThreads, &threads));
  EMBER_RETURN_IF_ERROR(args.GetInt("--top", 0, 1, int64_t{1} << 30, &top));
  auto model = Model::Open(args.Get("-m").c_str());
  if (!model.ok()) return model.status();
  const ModelConfig& c = (*model)->config();
  if (c.labels != 1) {
    return InvalidArgument(
        "%s is not a reranker: it has %s (a cross-encoder has a head of one output)",
        args.Get("-m").c_str(), c.labels ? "a head of several outputs" : "no head");
  }
  auto pool = CreatePool(args, threads);
  if (!pool.ok()) return pool.status();
  SessionOptions options;
  options.baked_prompt = false;
  const std::string query = args.Get("--query");
  size_t longest = 0;
  for (const std::string& d : docs) longest = std::max(longest, d.size());
  // A reranker with a prompt writes the query and each document into it.
  const std::string instruction = args.Get("--instruction");
  const Tokenizer& tok = (*model)->tokenizer();
  const size_t prompt = tok.pair_format().size() +
                        std::max(instruction.size(), tok.pair_instruction().size());
  options.max_prompt_bytes = static_cast<uint32_t>(
      std::min<size_t>(query.size() + longest + prompt + 16, uint32_t{1} << 30));
  auto session = Session::Create(**model, options, pool->get());
  if (!session.ok()) return session.status();
  std::vector<float> scores(docs.size());
  for (size_t i = 0; i < docs.size(); ++i) {
    const int32_t* ids = nullptr;
    const uint8_t* types = nullptr;
    size_t n = 0;
    Status s = EncodePair(*session, query, docs[i], &ids, &types, &n, instruction);
    if (s.ok()) s = Score(*session, ids, types, n, &scores[i], 1);
    if (!s.ok()) return Status(s.code(), "document %zu: %s", i + 1, s.message());
  }
  std::vector<size_t> order(docs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  const size_t shown = top ? std::min<size_t>(top, order.size()) : order.size();
  for (size_t k = 0; k < shown; ++k) {
    printf("%.6f\t%zu\t%s\n", scores[order[k]], order[k] + 1, docs[order[k]].c_str());
  }
  return Status::Ok();
}

}  // namespace

int RerankCommand(int argc, char** argv) {
  return RunSubcommand("rerank",
                       "usage: ember rerank -m MODEL --query Q (--file DOCS.txt | -p DOC "
                       "...) [--top N]\n",
                       MakeParser(), argc, argv, &Rerank);
}

}  // namespace ember::tools
