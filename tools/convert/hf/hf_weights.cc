// HfWeights (see hf_weights.h).
#include "tools/convert/hf/hf_weights.h"

#include <unistd.h>

#include "tools/util/json_util.h"

namespace ember::tools {
namespace {

std::string ShapeString(const std::vector<uint64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    s += (i ? ", " : "") + std::to_string(shape[i]);
  }
  return s + ")";
}

// A shard name from the index must be a plain file name inside the directory.
bool PlainFileName(const std::string& name) {
  return !name.empty() && name.find('/') == std::string::npos && name != "." &&
         name != "..";
}

}  // namespace

Status HfWeights::AddFile(const std::string& path) {
  auto file = SafetensorsFile::Open(path);
  if (!file.ok()) return file.status();
  for (const SafetensorsTensor& t : (*file)->tensors()) {
    if (!tensors_.emplace(t.name, &t).second) {
      return InvalidArgument("%s: tensor '%.80s' is also in another shard", path.c_str(),
                             t.name.c_str());
    }
  }
  files_.push_back(std::move(*file));
  return Status::Ok();
}

Status HfWeights::Open(const std::string& dir) {
  const std::string single = dir + "/model.safetensors";
  const std::string index = dir + "/model.safetensors.index.json";
  if (access(single.c_str(), R_OK) == 0) return AddFile(single);
  if (access(index.c_str(), R_OK) != 0) {
    const bool pickle = access((dir + "/pytorch_model.bin").c_str(), R_OK) == 0;
    return NotFound("%s: no model.safetensors or model.safetensors.index.json%s",
                    dir.c_str(),
                    pickle ? " (pytorch_model.bin is a pickle, which ember never reads: "
                             "save the model with safetensors)"
                           : "");
  }
  Json root;
  EMBER_RETURN_IF_ERROR(ReadJsonFile(index, &root));
  if (!root.is_object() || !root.contains("weight_map") ||
      !root["weight_map"].is_object()) {
    return InvalidArgument("%s: no \"weight_map\" object", index.c_str());
  }
  const Json& map = root["weight_map"];
  std::set<std::string> shards;
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!it->is_string() || !PlainFileName(it->get<std::string>())) {
      return InvalidArgument(
          "%s: tensor '%.80s' maps to something that is not a file name "
          "in the directory",
          index.c_str(), it.key().c_str());
    }
    shards.insert(it->get<std::string>());
  }
  for (const std::string& shard : shards)
    EMBER_RETURN_IF_ERROR(AddFile(dir + "/" + shard));
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!tensors_.count(it.key())) {
      return InvalidArgument("%s: tensor '%.80s' is not in shard %.80s", index.c_str(),
                             it.key().c_str(), it->get<std::string>().c_str());
    }
  }
  return Status::Ok();
}

Status HfWeights::Read(const std::string& name, const std::vector<uint64_t>& shape,
                       std::vector<float>* values) {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) return NotFound("missing tensor '%.100s'", name.c_str());
  const SafetensorsTensor& t = *it->second;
  if (t.shape != shape) {
    return InvalidArgument("tensor '%.100s' has shape %s; expected %s", name.c_str(),
                           ShapeString(t.shape).c_str(), ShapeString(shape).c_str());
  }
  used_.insert(name);
  return SafetensorsToF32(t, values);
}

Status HfWeights::CheckAllUsed() const {
  for (const auto& [name, tensor] : tensors_) {
    if (!used_.count(name)) {
      return InvalidArgument(
          "unexpected tensor '%.100s': this architecture has no place "
          "for it",
          name.c_str());
    }
  }
  return Status::Ok();
}

}  // namespace ember::tools
