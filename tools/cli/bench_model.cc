// What `ember bench` reads off a model (see bench_model.h).
#include "tools/cli/bench_model.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <vector>

#include "runtime/kv_cache.h"
#include "tools/cli/model_summary.h"
#include "tools/util/quote.h"
#include "tools/util/sha256.h"

namespace ember::tools {
namespace {

const DTypeCount* MainDType(const std::vector<DTypeCount>& counts) {
  const DTypeCount* main = nullptr;
  for (const DTypeCount& c : counts) {
    if (!main || c.bytes > main->bytes) main = &c;
  }
  return main;
}

}  // namespace

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

double KvBytesPerDecodeStep(const ModelConfig& c, KvType type, int depth, int n) {
  const double row = static_cast<double>(KvRowBytes(type, c.n_kv_heads, c.head_dim));
  double rows = 0;  // summed over the layers and the n steps
  for (size_t layer = 0; layer < c.n_layers; ++layer) {
    const double window = static_cast<double>(c.window(layer));
    for (int i = 0; i < n; ++i) {
      const double positions = static_cast<double>(depth) + i + 1;
      rows += window > 0 && window < positions ? window : positions;
    }
  }
  return n > 0 ? 2 * row * rows / n : 0.0;
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
  // The architecture is the file's text: a label in a terminal's table.
  return Printable(model.config().architecture) + " " + size + " " +
         MainWeightType(model);
}

std::string MainWeightType(const Model& model) {
  // The layers' matrices: what --dtype chose (q4 keeps the embedding and classifier at
  // q8, and in a small model those hold most of the bytes).
  std::map<DType, uint64_t> bytes;
  for (const LayerWeights& l : model.weights().layers) {
    for (const Tensor* t : {l.wq, l.wk, l.wv, l.wo, l.ffn_gate, l.ffn_up, l.ffn_down}) {
      if (t) bytes[t->dtype] += t->size_bytes;
    }
  }
  const auto most =
      std::max_element(bytes.begin(), bytes.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  if (most != bytes.end()) return DTypeName(most->first);
  const std::vector<DTypeCount> counts = DTypeCounts(model);
  const DTypeCount* main = MainDType(counts);
  return main ? DTypeName(main->dtype) : "";
}

std::string FileName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string HashModelFile(const Model& model, const std::string& path) {
  const auto start = std::chrono::steady_clock::now();
  std::string hex = Sha256Hex(model.file_data(), model.file_bytes());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fprintf(stderr, "ember bench: sha256 of %s (%.1f MiB): %.2f s\n", path.c_str(),
          model.file_bytes() / 1048576.0, seconds);
  return hex;
}

}  // namespace ember::tools
