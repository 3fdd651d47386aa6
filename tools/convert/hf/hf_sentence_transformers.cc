// sentence-transformers directories (see hf_models.h): modules.json's Transformer, its
// Pooling, Dense projections and a final Normalize.
#include <unistd.h>

#include "runtime/model/tensor_names.h"
#include "tools/convert/hf/hf_mapper.h"
#include "tools/convert/hf/hf_models.h"

namespace ember::tools {
namespace {

// A module's folder: relative, inside the model's directory.
Status ModulePath(const std::string& path, const char* type) {
  if (path.empty() || path[0] == '/' || path.find("..") != std::string::npos) {
    return InvalidArgument("modules.json: %.60s has the path '%.60s' (a folder of the "
                           "model's directory expected)", type, path.c_str());
  }
  return Status::Ok();
}

// 1_Pooling/config.json: exactly one of the modes ember runs.
Status ReadPooling(const std::string& folder, Pooling* out) {
  Json root;
  EMBER_RETURN_IF_ERROR(ReadJsonFile(folder + "/config.json", &root));
  if (!root.is_object()) return InvalidArgument("%s/config.json: not an object", folder.c_str());
  const JsonFields f(root, "pooling config.json");
  static const struct {
    const char* key;
    Pooling pooling;  // kNone: a mode ember does not run
  } kModes[] = {{"pooling_mode_mean_tokens", Pooling::kMean},
                {"pooling_mode_cls_token", Pooling::kCls},
                {"pooling_mode_lasttoken", Pooling::kLast},
                {"pooling_mode_max_tokens", Pooling::kNone},
                {"pooling_mode_mean_sqrt_len_tokens", Pooling::kNone},
                {"pooling_mode_weightedmean_tokens", Pooling::kNone}};
  int modes = 0;
  for (const auto& mode : kModes) {
    bool on;
    EMBER_RETURN_IF_ERROR(f.Bool(mode.key, false, false, &on));
    if (!on) continue;
    if (mode.pooling == Pooling::kNone) {
      return Unimplemented("%s/config.json: %s is not supported (mean, cls, lasttoken)",
                           folder.c_str(), mode.key);
    }
    *out = mode.pooling;
    ++modes;
  }
  if (modes != 1) {
    return Unimplemented("%s/config.json: %d pooling modes on (ember runs exactly one)",
                         folder.c_str(), modes);
  }
  bool include_prompt;
  EMBER_RETURN_IF_ERROR(f.Bool("include_prompt", false, true, &include_prompt));
  if (!include_prompt) {
    return Unimplemented("%s/config.json: include_prompt false is not supported",
                         folder.c_str());
  }
  return Status::Ok();
}

// 2_Dense/: a sentence-transformers Dense module (config.json: in_features,
// out_features, bias, activation_function; model.safetensors: linear.weight and
// linear.bias), appended as the next projection of the pooled vector.
Status ReadDense(const std::string& folder, ModelSpec* spec) {
  ModelConfig& c = spec->config;
  Json root;
  EMBER_RETURN_IF_ERROR(ReadJsonFile(folder + "/config.json", &root));
  if (!root.is_object())
    return InvalidArgument("%s/config.json: not an object", folder.c_str());
  const JsonFields f(root, "dense config.json");
  int64_t in, out;
  bool bias;
  std::string activation;
  EMBER_RETURN_IF_ERROR(f.Int("in_features", true, 0, 1, 1 << 20, &in));
  EMBER_RETURN_IF_ERROR(f.Int("out_features", true, 0, 1, 1 << 20, &out));
  EMBER_RETURN_IF_ERROR(f.Bool("bias", false, true, &bias));
  EMBER_RETURN_IF_ERROR(f.String("activation_function", false,
                                 "torch.nn.modules.activation.Tanh", &activation));
  const std::string act = activation.substr(activation.rfind('.') + 1);
  if (act != "Identity" && act != "Tanh") {
    return Unimplemented("%s/config.json: activation_function %.60s (Identity or Tanh)",
                         folder.c_str(), activation.c_str());
  }
  const uint64_t expected = c.dense_dims.empty() ? c.d_model : c.dense_dims.back();
  if (static_cast<uint64_t>(in) != expected || c.dense_dims.size() >= 8) {
    return InvalidArgument(
        "%s: in_features %lld after a vector of %llu values (at most "
        "8 projections)",
        folder.c_str(), static_cast<long long>(in),
        static_cast<unsigned long long>(expected));
  }
  HfWeights w;
  EMBER_RETURN_IF_ERROR(w.Open(folder));
  Mapper m(&w, spec);
  const unsigned i = static_cast<unsigned>(c.dense_dims.size());
  const uint64_t rows = static_cast<uint64_t>(out), cols = static_cast<uint64_t>(in);
  EMBER_RETURN_IF_ERROR(
      m.Copy("linear.weight", names::LayerName(names::kDense, i), {rows, cols}));
  if (bias) {
    EMBER_RETURN_IF_ERROR(
        m.Copy("linear.bias", names::LayerName(names::kDenseBias, i), {rows}));
  }
  EMBER_RETURN_IF_ERROR(w.CheckAllUsed());
  c.dense_dims.push_back(static_cast<uint32_t>(out));
  c.dense_flags.push_back(
      static_cast<uint8_t>((bias ? ModelConfig::kDenseBias : 0) |
                           (act == "Tanh" ? ModelConfig::kDenseTanh : 0)));
  return Status::Ok();
}

}  // namespace

Status ReadSentenceTransformers(const std::string& dir, ModelSpec* spec) {
  ModelConfig* c = &spec->config;
  const std::string path = dir + "/modules.json";
  if (access(path.c_str(), R_OK) != 0) return Status::Ok();
  Json modules;
  EMBER_RETURN_IF_ERROR(ReadJsonFile(path, &modules));
  if (!modules.is_array()) return InvalidArgument("modules.json: not a list of modules");
  bool pooled = false;
  for (size_t i = 0; i < modules.size(); ++i) {
    if (!modules[i].is_object()) return InvalidArgument("modules.json: module %zu", i);
    const JsonFields m(modules[i], "modules.json");
    std::string type, folder;
    EMBER_RETURN_IF_ERROR(m.String("type", true, "", &type));
    EMBER_RETURN_IF_ERROR(m.String("path", false, "", &folder));
    const std::string name = type.substr(type.rfind('.') + 1);
    if (i == 0) {
      if (name != "Transformer") {
        return Unimplemented("modules.json: the first module is %.60s, not Transformer",
                             type.c_str());
      }
    } else if (name == "Pooling" && !pooled) {
      EMBER_RETURN_IF_ERROR(ModulePath(folder, type.c_str()));
      EMBER_RETURN_IF_ERROR(ReadPooling(dir + "/" + folder, &c->pooling));
      pooled = true;
    } else if (name == "Dense" && pooled) {
      EMBER_RETURN_IF_ERROR(ModulePath(folder, type.c_str()));
      EMBER_RETURN_IF_ERROR(ReadDense(dir + "/" + folder, spec));
    } else if (name == "Normalize" && pooled && i + 1 == modules.size()) {
      c->normalize = true;
    } else {
      return Unimplemented(
          "modules.json: module %zu (%.60s) is not supported: ember runs a Transformer, "
          "its Pooling, Dense projections and a final Normalize",
          i, type.c_str());
    }
  }
  if (!pooled) return Unimplemented("modules.json: no Pooling module");
  return Status::Ok();
}

Status ReadSentenceTransformersPrompts(const std::string& dir, TokenizerSpec* tok) {
  const std::string path = dir + "/config_sentence_transformers.json";
  if (access(path.c_str(), R_OK) != 0) return Status::Ok();
  Json root;
  EMBER_RETURN_IF_ERROR(ReadJsonFile(path, &root));
  if (!root.is_object()) return InvalidArgument("%s: not an object", path.c_str());
  tok->prompts.clear();
  tok->default_prompt = -1;
  const auto prompts = root.find("prompts");
  if (prompts != root.end() && !prompts->is_null()) {
    if (!prompts->is_object() || prompts->size() > kMaxPrompts) {
      return InvalidArgument("%s: prompts is not an object of at most %zu names",
                             path.c_str(), kMaxPrompts);
    }
    for (auto it = prompts->begin(); it != prompts->end(); ++it) {
      if (!it.value().is_string() || it.key().empty() ||
          it.key().size() > kMaxPairFormatBytes ||
          it.value().get_ref<const std::string&>().size() > kMaxPairFormatBytes) {
        return InvalidArgument(
            "%s: prompt '%.40s' is not a text of at most %zu bytes "
            "under a name",
            path.c_str(), it.key().c_str(), kMaxPairFormatBytes);
      }
      tok->prompts.emplace_back(it.key(), it.value().get<std::string>());
    }
  }
  const auto fallback = root.find("default_prompt_name");
  if (fallback != root.end() && !fallback->is_null()) {
    const std::string name = fallback->is_string() ? fallback->get<std::string>() : "";
    for (size_t i = 0; i < tok->prompts.size(); ++i) {
      if (tok->prompts[i].first == name) tok->default_prompt = static_cast<int32_t>(i);
    }
    if (tok->default_prompt < 0) {
      return InvalidArgument("%s: default_prompt_name '%.40s' is not one of its prompts",
                             path.c_str(), name.c_str());
    }
  }
  return Status::Ok();
}

}  // namespace ember::tools
