// `ember tokenize`: prints the token ids a model's tokenizer gives a text (and their
// pieces with --pieces).
#include <cstdio>
#include <string>
#include <vector>

#include "runtime/model.h"
#include "tools/cli/args.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/commands.h"
#include "tools/util/quote.h"

namespace ember::tools {
namespace {

ArgParser MakeParser() {
  return ArgParser({
      {{"-m", "--model"}, true, "model file (.ember)"},
      {{"-p", "--prompt"}, true, "text to tokenize"},
      {{"--pieces"}, false, "print one token per line: id and its piece"},
      {{"--no-bos"}, false, "do not add BOS even if the tokenizer wants it"},
      {{"-h", "--help"}, false, "show this help"},
  });
}

Status Tokenize(const ArgParser& args) {
  if (!args.Has("-m")) return InvalidArgument("missing -m MODEL");
  if (!args.Has("-p")) return InvalidArgument("missing -p TEXT");
  auto model = Model::Open(args.Get("-m").c_str());
  if (!model.ok()) return model.status();
  const Tokenizer& tokenizer = (*model)->tokenizer();
  const std::string text = args.Get("-p");
  std::vector<int32_t> ids(Tokenizer::EncodeCapacity(text.size()));
  size_t n = 0;
  const bool add_bos = tokenizer.add_bos() && !args.Has("--no-bos");
  EMBER_RETURN_IF_ERROR(tokenizer.Encode(text, add_bos, ids.data(), ids.size(), &n));
  if (args.Has("--pieces")) {
    for (size_t i = 0; i < n; ++i) {
      printf("%d\t%s\n", ids[i], QuotePiece(tokenizer.piece(ids[i])).c_str());
    }
  } else {
    for (size_t i = 0; i < n; ++i) printf("%s%d", i ? " " : "", ids[i]);
    printf("\n");
  }
  return Status::Ok();
}

}  // namespace

int TokenizeCommand(int argc, char** argv) {
  return RunSubcommand("tokenize",
                       "usage: ember tokenize -m MODEL -p TEXT [--pieces] [--no-bos]\n",
                       MakeParser(), argc, argv, &Tokenize);
}

}  // namespace ember::tools
