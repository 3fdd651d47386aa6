// `ember tokenize`: prints the token ids a tokenizer gives a text (and their pieces with
// --pieces): a model's (-m), or a Hugging Face tokenizer directory's (--tokenizer), read
// through the same importer, writer and loader as `ember convert --hf`.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "runtime/model/model.h"
#include "tools/cli/args.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/commands.h"
#include "tools/util/quote.h"

namespace ember::tools {
namespace {

ArgParser MakeParser() {
  return ArgParser({
      {{"-m", "--model"}, true, "model file (.ember)"},
      {{"--tokenizer"},
       true,
       "instead of -m: a Hugging Face tokenizer directory (tokenizer.json or vocab.json "
       "+ merges.txt, with tokenizer_config.json)"},
      {{"-p", "--prompt"}, true, "text to tokenize"},
      {{"--pieces"}, false, "print one token per line: id and its piece"},
      {{"--no-bos"}, false, "do not add BOS even if the tokenizer wants it"},
      {{"--parse-special"},
       false,
       "read control tokens written in the text (<|eot_id|>, <start_of_turn>) as their "
       "ids, as a chat template needs; without it they are plain text"},
      {{"-h", "--help"}, false, "show this help"},
  });
}

Status Tokenize(const ArgParser& args) {
  std::unique_ptr<Model> model;
  LoadedTokenizer loaded;
  const Tokenizer* tokenizer = nullptr;
  EMBER_RETURN_IF_ERROR(OpenTokenizer(args, &model, &loaded, &tokenizer));
  if (!args.Has("-p")) return InvalidArgument("missing -p TEXT");
  EncodeOptions options;
  options.add_bos = tokenizer->add_bos() && !args.Has("--no-bos");
  options.parse_special = args.Has("--parse-special");
  std::vector<int32_t> ids;
  EMBER_RETURN_IF_ERROR(EncodeWith(*tokenizer, args.Get("-p"), options, &ids));
  if (args.Has("--pieces")) {
    for (int32_t id : ids) {
      printf("%d\t%s\n", id, QuotePiece(tokenizer->piece(id)).c_str());
    }
  } else {
    for (size_t i = 0; i < ids.size(); ++i) printf("%s%d", i ? " " : "", ids[i]);
    printf("\n");
  }
  return Status::Ok();
}

}  // namespace

int TokenizeCommand(int argc, char** argv) {
  return RunSubcommand("tokenize",
                       "usage: ember tokenize (-m MODEL | --tokenizer DIR) -p TEXT "
                       "[--pieces] [--no-bos] [--parse-special]\n",
                       MakeParser(), argc, argv, &Tokenize);
}

}  // namespace ember::tools
