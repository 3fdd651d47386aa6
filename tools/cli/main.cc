// ember: command-line entry point; dispatches to the subcommands in tools/cli/cmd_*.cc.
#include <cstdio>
#include <cstring>

#include "tools/cli/commands.h"

namespace {

struct Subcommand {
  const char* name;
  int (*run)(int, char**);
  const char* summary;
};

constexpr Subcommand kSubcommands[] = {
    {"run", ember::tools::RunCommand, "generate text from a prompt"},
    {"chat", ember::tools::ChatCommand,
     "talk with a model in turns, through its chat template"},
    {"convert", ember::tools::ConvertCommand, "write a .ember model from another format"},
    {"inspect", ember::tools::InspectCommand,
     "model summary and the session's memory plan"},
    {"tokenize", ember::tools::TokenizeCommand, "print the token ids of a text"},
    {"logits", ember::tools::LogitsCommand, "write a prompt's logits as a .npy file"},
    {"embed", ember::tools::EmbedCommand,
     "embeddings of texts from an embedding model (JSON or .npy)"},
    {"rerank", ember::tools::RerankCommand,
     "score documents against a query with a cross-encoder, best first"},
    {"attn", ember::tools::AttnCommand,
     "attention heatmaps (SVG) or weights (CSV, .npy)"},
    {"bench", ember::tools::BenchCommand,
     "benchmark prefill and decode (llama-bench's tests, plus the roofline)"},
    {"bench-compare", ember::tools::BenchCompareCommand,
     "pair two bench files' results: speed ratios, marked beyond their noise"},
    {"bench-chart", ember::tools::BenchChartCommand, "draw bench files as an SVG chart"},
    {"bake", ember::tools::BakeCommand,
     "store a prompt's state in a model: sessions start after it with no prefill"},
    {"template", ember::tools::TemplateCommand,
     "print a conversation rendered with the model's chat template"},
    {"grammar", ember::tools::GrammarCommand,
     "compile a GBNF grammar, or check texts against it"},
    {"image", ember::tools::ImageCommand,
     "what a vision processor makes of an image: its tiles, as .npy"},
};

void PrintUsage(FILE* out) {
  fprintf(out,
          "usage: ember <command> [options]   (ember <command> --help for options)\n\n");
  for (const Subcommand& s : kSubcommands)
    fprintf(out, "  %-13s %s\n", s.name, s.summary);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    PrintUsage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  for (const Subcommand& s : kSubcommands) {
    if (!strcmp(argv[1], s.name)) return s.run(argc - 1, argv + 1);
  }
  fprintf(stderr, "ember: unknown command '%s'\n\n", argv[1]);
  PrintUsage(stderr);
  return 2;
}
