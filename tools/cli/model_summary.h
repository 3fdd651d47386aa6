// Model summaries shared by `ember inspect` and `ember bench`: parameters per tensor kind
// (the projections of attention, the feed-forward block, norms, embeddings) and the mix
// of weight types.
#ifndef EMBER_TOOLS_CLI_MODEL_SUMMARY_H_
#define EMBER_TOOLS_CLI_MODEL_SUMMARY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/model/model.h"

namespace ember::tools {

struct KindCount {
  std::string
      kind;  // "W_q", "W_k", "W_v", "W_o", "ffn", "norms", "embeddings", "classifier"
  uint64_t parameters = 0;
  uint64_t tensors = 0;
};

// Parameters (weights and biases) per kind, in a fixed order; kinds with none omitted.
std::vector<KindCount> ParametersByKind(const Model& model);

struct DTypeCount {
  DType dtype;
  uint64_t parameters = 0;
  uint64_t bytes = 0;
  uint64_t tensors = 0;
};

// Parameters and stored bytes per dtype, in dtype order; e.g. "q8:7 f32:3" via DTypeMix.
std::vector<DTypeCount> DTypeCounts(const Model& model);
std::string DTypeMix(const Model& model);

// A tensor with NaN or infinite values (for q8/q4: in its group scales; for K-quants:
// in a super-block's d or dmin).
struct NonFiniteTensor {
  std::string name;
  uint64_t nan = 0;
  uint64_t inf = 0;
  uint64_t first = 0;  // index of the first such value (element, group or super-block)
};
// Scans every tensor (reads the whole file: on request, never at load).
std::vector<NonFiniteTensor> FindNonFiniteWeights(const Model& model);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CLI_MODEL_SUMMARY_H_
