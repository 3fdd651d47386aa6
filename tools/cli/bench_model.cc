// Model facts for `ember bench` (see bench_model.h).
#include "tools/cli/bench_model.h"

#include <cstdio>
#include <vector>

#include "runtime/kv_cache.h"
#include "tools/cli/model_summary.h"

namespace ember::tools {

WeightTraffic Traffic(const Model& model) {
  const Weights& w = model.weights();
  WeightTraffic traffic;
  for (const Tensor& t : model.tensors()) {
    if (&t == w.tok_embedding || &t == w.pos_embedding) {
      traffic.per_row += static_cast<double>(t.size_bytes) / t.rows();
    } else {
      traffic.per_pass += static_cast<double>(t.size_bytes);
    }
  }
  if (w.output == w.tok_embedding) traffic.per_pass += w.tok_embedding->size_bytes;
  return traffic;
}

std::string FileName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string ModelType(const Model& model) {
  const double n = static_cast<double>(model.parameter_count());
  char size[32];
  if (n >= 1e9) {
    snprintf(size, sizeof(size), "%.1fB", n / 1e9);
  } else if (n >= 1e6) {
    snprintf(size, sizeof(size), "%.0fM", n / 1e6);
  } else {
    snprintf(size, sizeof(size), "%.0fK", n / 1e3);
  }
  const std::vector<DTypeCount> counts = DTypeCounts(model);
  const DTypeCount* main = nullptr;
  for (const DTypeCount& c : counts) {
    if (!main || c.bytes > main->bytes) main = &c;
  }
  return std::string(model.config().architecture) + " " + size + " " +
         (main ? DTypeName(main->dtype) : "");
}

double KvBytesPerDecodeStep(const ModelConfig& c, KvType type, int depth, int n) {
  return static_cast<double>(c.n_layers) * 2 *
         KvRowBytes(type, c.n_kv_heads, c.head_dim) *
         (depth + static_cast<double>(n + 1) / 2);
}

}  // namespace ember::tools
