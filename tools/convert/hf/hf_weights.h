// HfWeights: the safetensors tensors of a Hugging Face model directory (one file or a
// sharded set), read as f32 by name with shape checks, remembering which were used.
#ifndef EMBER_TOOLS_CONVERT_HF_HF_WEIGHTS_H_
#define EMBER_TOOLS_CONVERT_HF_HF_WEIGHTS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "runtime/status.h"
#include "tools/convert/hf/safetensors.h"

namespace ember::tools {

class HfWeights {
 public:
  // Opens DIR/model.safetensors, or the shards DIR/model.safetensors.index.json lists.
  Status Open(const std::string& dir);

  bool Has(const std::string& name) const { return tensors_.count(name) > 0; }
  // The f32 values of `name`, which must have exactly `shape`; marks it used.
  Status Read(const std::string& name, const std::vector<uint64_t>& shape,
              std::vector<float>* values);
  // Marks a tensor as deliberately unused (a buffer such as GPT-2's attn.bias mask).
  void Ignore(const std::string& name) { used_.insert(name); }
  // Marks every tensor whose name starts with `prefix` as deliberately unused (the
  // vision tower of a multimodal checkpoint).
  void IgnorePrefix(const std::string& prefix) {
    for (auto it = tensors_.lower_bound(prefix);
         it != tensors_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
      used_.insert(it->first);
    }
  }
  // Every tensor not read or ignored is an error naming it (a weight ember would drop).
  Status CheckAllUsed() const;

  const std::map<std::string, const SafetensorsTensor*>& tensors() const {
    return tensors_;
  }

 private:
  Status AddFile(const std::string& path);
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, const SafetensorsTensor*> tensors_;
  std::set<std::string> used_;
};

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CONVERT_HF_HF_WEIGHTS_H_
