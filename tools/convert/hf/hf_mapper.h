// Mapper: builds a ModelSpec's tensor list from Hugging Face tensors, read by name with
// their shapes checked: copied, split along rows (fused projections), or transposed from
// GPT-2's Conv1D layout.
#ifndef EMBER_TOOLS_CONVERT_HF_HF_MAPPER_H_
#define EMBER_TOOLS_CONVERT_HF_HF_MAPPER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/model/model_writer.h"
#include "runtime/status.h"
#include "tools/convert/hf/hf_weights.h"

namespace ember::tools {

class Mapper {
 public:
  // (name, rows) of one part of a fused tensor.
  using Parts = std::vector<std::pair<std::string, uint64_t>>;

  Mapper(HfWeights* weights, ModelSpec* spec) : w_(*weights), spec_(*spec) {}

  // Copies `hf_name` of `shape` to `name`, adding `offset` to every value (Gemma's
  // norms store w of x / rms * (1 + w): the file holds 1 + w).
  Status Copy(const std::string& hf_name, const std::string& name,
              std::vector<uint64_t> shape, float offset = 0.0f) {
    TensorSpec t;
    t.name = name;
    t.shape = shape;
    EMBER_RETURN_IF_ERROR(w_.Read(hf_name, shape, &t.values));
    if (offset != 0.0f) {
      for (float& v : t.values) v += offset;
    }
    spec_.tensors.push_back(std::move(t));
    return Status::Ok();
  }

  // A (sum of rows, cols) matrix or (sum of rows) vector (cols == 0) split along its
  // rows into the parts, in order (Phi-3's qkv_proj and gate_up_proj, GPT-2's c_attn
  // bias).
  Status SplitRows(const std::string& hf_name, uint64_t cols, const Parts& parts) {
    uint64_t total = 0;
    for (const auto& part : parts) total += part.second;
    std::vector<float> values;
    EMBER_RETURN_IF_ERROR(w_.Read(
        hf_name, cols ? std::vector<uint64_t>{total, cols} : std::vector<uint64_t>{total},
        &values));
    const uint64_t width = cols ? cols : 1;
    uint64_t first = 0;
    for (const auto& [name, rows] : parts) {
      TensorSpec t;
      t.name = name;
      t.shape = cols ? std::vector<uint64_t>{rows, cols} : std::vector<uint64_t>{rows};
      t.values.assign(values.begin() + first * width,
                      values.begin() + (first + rows) * width);
      first += rows;
      spec_.tensors.push_back(std::move(t));
    }
    return Status::Ok();
  }

  // A Conv1D weight stored (in, out), split along `out` into the parts, each transposed
  // to ember's (out, in).
  Status Conv1D(const std::string& hf_name, uint64_t in, const Parts& parts) {
    uint64_t out = 0;
    for (const auto& part : parts) out += part.second;
    std::vector<float> values;
    EMBER_RETURN_IF_ERROR(w_.Read(hf_name, {in, out}, &values));
    uint64_t first = 0;
    for (const auto& [name, rows] : parts) {
      TensorSpec t;
      t.name = name;
      t.shape = {rows, in};
      t.values.resize(rows * in);
      for (uint64_t r = 0; r < rows; ++r) {
        for (uint64_t c = 0; c < in; ++c)
          t.values[r * in + c] = values[c * out + first + r];
      }
      first += rows;
      spec_.tensors.push_back(std::move(t));
    }
    return Status::Ok();
  }

 private:
  HfWeights& w_;
  ModelSpec& spec_;
};

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CONVERT_HF_HF_MAPPER_H_
