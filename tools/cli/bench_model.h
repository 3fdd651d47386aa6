// What `ember bench` reports about a model besides its timings: the bytes a forward
// pass reads (weights, KV cache) and llama-bench's model names.
#ifndef EMBER_TOOLS_CLI_BENCH_MODEL_H_
#define EMBER_TOOLS_CLI_BENCH_MODEL_H_

#include <string>

#include "runtime/model.h"
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
// the mean: step i reads the keys and values of positions 0..depth + i in the type.
double KvBytesPerDecodeStep(const ModelConfig& c, KvType type, int depth, int n);

// The file name of a path.
std::string FileName(const std::string& path);

// "llama 15M f32": architecture, parameters, main weight type (as llama-bench's
// model_type).
std::string ModelType(const Model& model);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CLI_BENCH_MODEL_H_
