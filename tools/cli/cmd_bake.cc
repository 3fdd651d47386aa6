// `ember bake`: writes a model again with a prompt baked in (the session state after it),
// so that sessions over it start after the prompt with no prefill.
#include <cstdio>
#include <string>

#include "runtime/model/atomic_file.h"
#include "runtime/model/model.h"
#include "runtime/model/model_writer.h"
#include "tools/cli/args.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/commands.h"
#include "tools/convert/bake.h"
#include "tools/util/files.h"

namespace ember::tools {
namespace {

ArgParser MakeParser() {
  return ArgParser({
      {{"-m", "--model"}, true, "model file (.ember) to bake into"},
      {{"-p", "--prompt"}, true, "the prompt text to bake (tokenized as `ember run -p`)"},
      {{"--chat-system"},
       true,
       "or: a system text, baked as the chat template renders it"},
      {{"-o", "--output"}, true, "the baked model file"},
      {{"-t", "--threads"}, true, "threads for the prefill (default 1)"},
      {{"-h", "--help"}, false, "show this help"},
  });
}

Status Bake(const ArgParser& args) {
  if (!args.Has("-m")) return InvalidArgument("missing -m MODEL");
  if (!args.Has("-o")) return InvalidArgument("missing -o OUT.ember");
  if (args.Has("-p") == args.Has("--chat-system")) {
    return InvalidArgument("give either -p TEXT or --chat-system TEXT");
  }
  const std::string out = args.Get("-o");
  EMBER_RETURN_IF_ERROR(CheckNotSameFile(out, args.Get("-m"), "model"));
  int64_t threads;
  EMBER_RETURN_IF_ERROR(args.GetInt("-t", 1, 1, ThreadPool::kMaxThreads, &threads));
  auto model = Model::Open(args.Get("-m").c_str());
  if (!model.ok()) return model.status();
  ModelSpec spec;
  EMBER_RETURN_IF_ERROR(SpecFromModel(**model, &spec));
  BakeRequest request;
  request.chat_system = args.Has("--chat-system");
  request.text = args.Get(request.chat_system ? "--chat-system" : "-p");
  request.threads = static_cast<int>(threads);
  EMBER_RETURN_IF_ERROR(BakePrompt(**model, request, &spec.baked_prompt));
  uint64_t written = 0;
  EMBER_RETURN_IF_ERROR(WriteModel(spec, out, &written));
  fprintf(stderr,
          "ember bake: baked a prompt of %zu tokens (%zu bytes of state); wrote %s (%llu "
          "bytes)\n",
          spec.baked_prompt.tokens.size(), spec.baked_prompt.state.size(), out.c_str(),
          static_cast<unsigned long long>(written));
  return Status::Ok();
}

}  // namespace

int BakeCommand(int argc, char** argv) {
  return RunSubcommand(
      "bake", "usage: ember bake -m MODEL (-p TEXT | --chat-system TEXT) -o OUT\n",
      MakeParser(), argc, argv, &Bake);
}

}  // namespace ember::tools
