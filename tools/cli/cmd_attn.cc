// `ember attn`: runs a prompt with attention recording on and writes the weights of the
// chosen layers and heads as a grid of heatmaps (SVG), as CSV rows, or as a .npy array.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "runtime/model/atomic_file.h"
#include "runtime/model/model.h"
#include "runtime/session.h"
#include "tools/cli/args.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/commands.h"
#include "tools/util/npy.h"
#include "tools/viz/attn_export.h"
#include "tools/viz/heatmap_svg.h"
#include "tools/viz/token_labels.h"

namespace ember::tools {
namespace {

ArgParser MakeParser() {
  return ArgParserWithModelAndPrompt({
      {{"--layer"}, true, "layer index, or all (default)"},
      {{"--head"}, true, "head index, or all (default)"},
      {{"-o", "--output"}, true, "output file; - for stdout (default)"},
      {{"--format"},
       true,
       "svg, csv or npy (default: from the -o extension, else svg). npy: float32 "
       "[layers, heads, tokens, tokens] (query, key; 0 where masked); csv: one row "
       "per "
       "query/key pair a head can attend"},
      {{"--columns"},
       true,
       "panels per row (default: the heads of a layer per row when several layers "
       "are "
       "shown, else at most 4)"},
      {{"--values"},
       true,
       "cell values in the SVG: auto (default: when cells are large "
       "enough), on, off"},
      {{"-t", "--threads"}, true, "threads (default 1)"},
      FixedThreadsOption(),
      {{"-h", "--help"}, false, "show this help"},
  });
}

// "--layer 3" -> first 3, count 1; "all" -> first 0, count 0 (through the last).
Status ParseSelection(const ArgParser& args, const char* flag, uint32_t limit,
                      const char* what, uint32_t* first, uint32_t* count) {
  const std::string value = args.Get(flag, "all");
  *first = 0;
  *count = 0;
  if (value == "all") return Status::Ok();
  int64_t index;
  Status s = ParseInt(value, flag, 0, int64_t{limit} - 1, &index);
  if (!s.ok()) {
    return InvalidArgument("%s: '%s' is not 'all' or a %s in [0, %u)", flag,
                           value.c_str(), what, limit);
  }
  *first = static_cast<uint32_t>(index);
  *count = 1;
  return Status::Ok();
}

std::string Range(const char* what, uint32_t first, uint32_t count, uint32_t total) {
  std::string s = what;
  if (count == 1) return s + " " + std::to_string(first);
  return s + "s " + std::to_string(first) + "\u2013" + std::to_string(first + count - 1) +
         " of " + std::to_string(total);
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The prompt for the SVG's notes: newlines as spaces, cut to about 100 columns.
std::string PromptNote(const std::string& text) {
  std::string flat;
  for (char c : text) flat += c == '\n' || c == '\r' || c == '\t' ? ' ' : c;
  if (DisplayColumns(flat) <= 100) return "prompt: \u201C" + flat + "\u201D";
  // Cut on a character boundary (not inside a UTF-8 sequence).
  size_t cut = 0, columns = 0;
  while (cut < flat.size() && columns < 97) {
    ++cut;
    while (cut < flat.size() && (static_cast<unsigned char>(flat[cut]) & 0xC0) == 0x80) {
      ++cut;
    }
    columns = DisplayColumns(std::string_view(flat).substr(0, cut));
  }
  return "prompt: \u201C" + flat.substr(0, cut) + "\u2026\u201D";
}

Status Attn(const ArgParser& args) {
  if (!args.Has("-m")) return InvalidArgument("missing -m MODEL");
  EMBER_RETURN_IF_ERROR(CheckPromptOptions(args));
  const std::string out = args.Get("-o", "-");
  if (out != "-") EMBER_RETURN_IF_ERROR(CheckNotSameFile(out, args.Get("-m"), "model"));
  std::string format = args.Get("--format");
  if (format.empty()) {
    const size_t dot = out.find_last_of('.');
    const std::string ext = dot == std::string::npos ? "" : out.substr(dot + 1);
    format = ext == "csv" || ext == "npy" ? ext : "svg";
  }
  if (format != "svg" && format != "csv" && format != "npy") {
    return InvalidArgument("--format: '%s' is not svg, csv or npy", format.c_str());
  }
  if (format == "npy" && out == "-" && isatty(STDOUT_FILENO)) {
    return InvalidArgument("npy is binary: give -o OUT.npy (or redirect stdout)");
  }
  const std::string values = args.Get("--values", "auto");
  if (values != "auto" && values != "on" && values != "off") {
    return InvalidArgument("--values: '%s' is not auto, on or off", values.c_str());
  }
  int64_t threads, columns;
  EMBER_RETURN_IF_ERROR(args.GetInt("-t", 1, 1, ThreadPool::kMaxThreads, &threads));
  EMBER_RETURN_IF_ERROR(args.GetInt("--columns", 0, 1, 1024, &columns));

  const std::string model_path = args.Get("-m");
  auto model = Model::Open(model_path.c_str());
  if (!model.ok()) return model.status();
  const ModelConfig& c = (*model)->config();
  const Tokenizer& tokenizer = (*model)->tokenizer();

  AttentionRecordOptions what;
  what.enabled = true;
  EMBER_RETURN_IF_ERROR(ParseSelection(args, "--layer", c.n_layers, "layer",
                                       &what.first_layer, &what.num_layers));
  EMBER_RETURN_IF_ERROR(ParseSelection(args, "--head", c.n_heads, "head",
                                       &what.first_head, &what.num_heads));

  std::vector<int32_t> tokens;
  EMBER_RETURN_IF_ERROR(ReadPromptTokens(args, **model, &tokens));

  // The planner sizes the record in the arena: layers x heads x tokens x tokens floats.
  // Refuse what would not fit in memory or in a viewable picture.
  const uint64_t n_tokens = tokens.size();
  const uint64_t panels = uint64_t{what.num_layers ? what.num_layers : c.n_layers} *
                          (what.num_heads ? what.num_heads : c.n_heads);
  const uint64_t cells = panels * n_tokens * n_tokens;
  if (cells * sizeof(float) > (uint64_t{1} << 30)) {
    return InvalidArgument(
        "%llu panels of %zu x %zu weights need more than 1 GiB: choose --layer and "
        "--head, "
        "or a shorter prompt",
        static_cast<unsigned long long>(panels), tokens.size(), tokens.size());
  }
  if (format == "svg" && cells > (uint64_t{1} << 22)) {
    return InvalidArgument(
        "%llu panels of %zu x %zu cells are too many for one picture: choose --layer and "
        "--head, a shorter prompt, or --format npy/csv",
        static_cast<unsigned long long>(panels), tokens.size(), tokens.size());
  }
  auto pool = CreatePool(args, threads);
  if (!pool.ok()) return pool.status();
  SessionOptions options;
  options.max_context = static_cast<uint32_t>(tokens.size());
  options.record_attention = what;
  options.baked_prompt = false;  // from position 0, whatever the file baked
  auto session = Session::Create(**model, options, pool->get());
  if (!session.ok()) return session.status();
  Session& s = *session;
  EMBER_RETURN_IF_ERROR(s.Prefill(tokens.data(), tokens.size()));
  const AttentionRecord record = s.attention_record();
  const size_t n = tokens.size();
  const bool causal = c.mask == AttentionMask::kCausal;

  std::string bytes;
  if (format == "npy") {
    const std::vector<float> weights(record.weights,
                                     record.weights + record.num_floats());
    const std::vector<uint8_t> npy =
        NpyF32Bytes(weights, {record.num_layers, record.num_heads, n, n});
    bytes.assign(npy.begin(), npy.end());
  } else if (format == "csv") {
    bytes = AttentionCsv(record, tokens, TokenLabels(tokenizer, tokens, 24), causal);
  } else {
    HeatmapSpec spec;
    spec.title = "Attention weights \u00B7 " + BaseName(model_path) + " \u00B7 " +
                 Range("layer", record.first_layer, record.num_layers, c.n_layers) +
                 " \u00B7 " +
                 Range("head", record.first_head, record.num_heads, c.n_heads);
    spec.notes.push_back(
        std::string(c.architecture) + ", " + std::to_string(c.n_layers) +
        " layers \u00D7 " + std::to_string(c.n_heads) + " heads \u00B7 " +
        std::to_string(n) + " tokens \u00B7 " + (causal ? "causal" : "bidirectional") +
        " \u00B7 rows: query token (attends), columns: key token (attended to)");
    if (args.Has("-p")) spec.notes.push_back(PromptNote(args.Get("-p")));
    spec.labels = TokenLabels(tokenizer, tokens);
    spec.causal = causal;
    spec.columns = columns                 ? static_cast<size_t>(columns)
                   : record.num_layers > 1 ? record.num_heads
                                           : std::min<size_t>(record.num_heads, 4);
    spec.values = values == "on"    ? HeatmapSpec::Values::kOn
                  : values == "off" ? HeatmapSpec::Values::kOff
                                    : HeatmapSpec::Values::kAuto;
    for (uint32_t l = 0; l < record.num_layers; ++l) {
      for (uint32_t h = 0; h < record.num_heads; ++h) {
        HeatmapPanel panel;
        panel.title = "layer " + std::to_string(record.first_layer + l) +
                      " \u00B7 head " + std::to_string(record.first_head + h);
        panel.weights = record.row(l, h, 0);
        spec.panels.push_back(panel);
      }
    }
    bytes = RenderHeatmapSvg(spec);
  }
  EMBER_RETURN_IF_ERROR(WriteOutput(out, bytes));
  fprintf(stderr,
          "ember attn: %zu tokens, %u layer%s x %u head%s, wrote %s (%zu bytes)\n", n,
          record.num_layers, record.num_layers == 1 ? "" : "s", record.num_heads,
          record.num_heads == 1 ? "" : "s", out == "-" ? "stdout" : out.c_str(),
          bytes.size());
  return Status::Ok();
}

}  // namespace

int AttnCommand(int argc, char** argv) {
  return RunSubcommand(
      "attn",
      "usage: ember attn -m MODEL (-p PROMPT | --tokens 1,2,3) [--layer L|all] "
      "[--head H|all]\n                  [-o OUT.svg] [--format svg|csv|npy]\n",
      MakeParser(), argc, argv, &Attn);
}

}  // namespace ember::tools
