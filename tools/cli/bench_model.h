// What `ember bench` reads off a model: the weight and KV cache bytes a token reads, the
// type label (llama-bench's model_type), the weight type holding the most bytes, the
// file's name, and the SHA-256 of the file that --history records.
#ifndef EMBER_TOOLS_CLI_BENCH_MODEL_H_
#define EMBER_TOOLS_CLI_BENCH_MODEL_H_

#include <string>

#include "runtime/model/model.h"
#include "runtime/session_plan.h"

namespace ember::tools {

// Weight bytes one forward pass reads: every tensor once (a tied classifier is the
// embedding table, read whole by the logits) except the embedding tables, of which it
// reads one row per token.
struct WeightTraffic {
  double per_pass = 0;  // matrices, norms, classifier
  double per_row = 0;   // embedding rows per token
};
WeightTraffic Traffic(const Model& model);

// KV cache bytes the n decode steps after `depth` cached positions read per step, in
// the mean: step i reads the keys and values of positions 0..depth + i in the type (a
// sliding layer only its window's).
double KvBytesPerDecodeStep(const ModelConfig& c, KvType type, int depth, int n);

// "llama 15M q4": architecture, parameters, main weight type (as llama-bench's
// model_type names the file's type).
std::string ModelType(const Model& model);

// The type holding the most bytes of the layers' matrices (what convert's --dtype chose):
// "f32", "q4"; of all tensors for a model without layers.
std::string MainWeightType(const Model& model);

// The last component of a path.
std::string FileName(const std::string& path);

// The SHA-256 of the whole model file, read through its mapping: this pulls every page
// into the page cache once, where the benchmark's loads and warm-ups then find them, so
// the file is read from storage once. It costs one pass over the file at the hash's
// speed (a few hundred MB/s per core, portable code); the time goes to stderr.
std::string HashModelFile(const Model& model, const std::string& path);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CLI_BENCH_MODEL_H_
