// BERT-style encoders (see hf_models.h): BertModel's config fields and tensors mapped to
// ember's names, and the pooling a sentence-transformers directory configures.
#include <unistd.h>

#include "runtime/model/tensor_names.h"
#include "tools/convert/hf/hf_mapper.h"
#include "tools/convert/hf/hf_models.h"

namespace ember::tools {
namespace {

std::string Layer(const char* format, uint32_t i) { return names::LayerName(format, i); }

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

}  // namespace

Status ReadSentenceTransformers(const std::string& dir, ModelConfig* c) {
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
    } else if (name == "Normalize" && pooled && i + 1 == modules.size()) {
      c->normalize = true;
    } else {
      return Unimplemented(
          "modules.json: module %zu (%.60s) is not supported: ember runs a Transformer, "
          "its Pooling and a final Normalize",
          i, type.c_str());
    }
  }
  if (!pooled) return Unimplemented("modules.json: no Pooling module");
  return Status::Ok();
}

// BertModel: embeddings.{word,position,token_type}_embeddings, embeddings.LayerNorm,
// encoder.layer.{i}.{attention.self.{query,key,value}, attention.output.{dense,
// LayerNorm}, intermediate.dense, output.{dense,LayerNorm}}, with or without "bert.".
Status ImportBert(const JsonFields& f, HfWeights* w, ModelSpec* spec) {
  ModelConfig& c = spec->config;
  int64_t d, layers, heads, ffn, positions, vocab, types;
  double eps;
  std::string act, position_type;
  EMBER_RETURN_IF_ERROR(f.Int("hidden_size", true, 0, 1, 1 << 20, &d));
  EMBER_RETURN_IF_ERROR(f.Int("num_hidden_layers", true, 0, 1, 4096, &layers));
  EMBER_RETURN_IF_ERROR(f.Int("num_attention_heads", true, 0, 1, 1 << 20, &heads));
  EMBER_RETURN_IF_ERROR(f.Int("intermediate_size", true, 0, 1, 1 << 22, &ffn));
  EMBER_RETURN_IF_ERROR(f.Int("max_position_embeddings", true, 0, 1, 1 << 24, &positions));
  EMBER_RETURN_IF_ERROR(f.Int("vocab_size", true, 0, 1, 1 << 24, &vocab));
  EMBER_RETURN_IF_ERROR(f.Int("type_vocab_size", false, 2, 0, 256, &types));
  EMBER_RETURN_IF_ERROR(f.Float("layer_norm_eps", false, 1e-12, 1e-20, 0.1, &eps));
  EMBER_RETURN_IF_ERROR(f.String("hidden_act", false, "gelu", &act));
  EMBER_RETURN_IF_ERROR(
      f.String("position_embedding_type", false, "absolute", &position_type));
  if (position_type != "absolute") {
    return Unimplemented("config.json: position_embedding_type '%.40s' is not supported",
                         position_type.c_str());
  }
  if (d % heads != 0) {
    return InvalidArgument("config.json: hidden_size %lld is not divisible by %lld heads",
                           static_cast<long long>(d), static_cast<long long>(heads));
  }
  snprintf(c.architecture, sizeof(c.architecture), "bert");
  c.d_model = d;
  c.n_layers = layers;
  c.n_heads = c.n_kv_heads = heads;
  c.head_dim = d / heads;
  c.ffn_dim = ffn;
  c.vocab_size = vocab;
  c.max_context = positions;
  c.norm = NormKind::kLayerNorm;
  c.norm_placement = NormPlacement::kPost;
  c.norm_eps = static_cast<float>(eps);
  c.final_norm = false;
  c.ffn = FfnKind::kPlain;
  EMBER_RETURN_IF_ERROR(ParseHfActivation(act, &c.activation));
  c.positions = PositionKind::kLearned;
  c.mask = AttentionMask::kBidirectional;
  c.qkv_bias = c.out_bias = c.ffn_bias = true;
  c.tied_classifier = true;  // no classifier: logits, where asked, are x . token_embd^T
  c.token_types = static_cast<uint32_t>(types);
  c.embedding_norm = true;
  c.pooling = Pooling::kMean;  // sentence-transformers' default for a plain model

  const std::string p = w->Has("bert.embeddings.word_embeddings.weight") ? "bert." : "";
  const uint64_t D = d, F = ffn;
  Mapper m(w, spec);
  const std::string e = p + "embeddings.";
  EMBER_RETURN_IF_ERROR(
      m.Copy(e + "word_embeddings.weight", names::kTokEmbedding, {uint64_t(vocab), D}));
  EMBER_RETURN_IF_ERROR(m.Copy(e + "position_embeddings.weight", names::kPosEmbedding,
                               {uint64_t(positions), D}));
  if (types > 0) {
    EMBER_RETURN_IF_ERROR(
        m.Copy(e + "token_type_embeddings.weight", names::kTokTypes, {uint64_t(types), D}));
  }
  EMBER_RETURN_IF_ERROR(m.Copy(e + "LayerNorm.weight", names::kEmbeddingNorm, {D}));
  EMBER_RETURN_IF_ERROR(m.Copy(e + "LayerNorm.bias", names::kEmbeddingNormBias, {D}));
  w->Ignore(e + "position_ids");    // buffers some checkpoints save
  w->Ignore(e + "token_type_ids");
  for (uint32_t i = 0; i < layers; ++i) {
    const std::string l = p + "encoder.layer." + std::to_string(i) + ".";
    const struct {
      const char* hf;
      const char* weight;
      const char* bias;
      uint64_t rows, cols;
    } kLinear[] = {
        {"attention.self.query", names::kAttnQ, names::kAttnQBias, D, D},
        {"attention.self.key", names::kAttnK, names::kAttnKBias, D, D},
        {"attention.self.value", names::kAttnV, names::kAttnVBias, D, D},
        {"attention.output.dense", names::kAttnOut, names::kAttnOutBias, D, D},
        {"intermediate.dense", names::kFfnUp, names::kFfnUpBias, F, D},
        {"output.dense", names::kFfnDown, names::kFfnDownBias, D, F},
        // Post-LN: the norms after the attention and feed-forward blocks.
        {"attention.output.LayerNorm", names::kAttnNorm, names::kAttnNormBias, D, 0},
        {"output.LayerNorm", names::kFfnNorm, names::kFfnNormBias, D, 0},
    };
    for (const auto& t : kLinear) {
      const std::string hf = l + t.hf;
      std::vector<uint64_t> shape = {t.rows};
      if (t.cols) shape.push_back(t.cols);
      EMBER_RETURN_IF_ERROR(m.Copy(hf + ".weight", Layer(t.weight, i), shape));
      EMBER_RETURN_IF_ERROR(m.Copy(hf + ".bias", Layer(t.bias, i), {t.rows}));
    }
  }
  if (w->Has("classifier.weight")) {
    // BertForSequenceClassification (a cross-encoder): the pooler (dense and tanh over
    // [CLS]) and the classifier make the head.
    const std::vector<uint64_t>& shape = w->tensors().at("classifier.weight")->shape;
    if (shape.size() != 2 || shape[0] == 0 || shape[0] > 65536) {
      return InvalidArgument("classifier.weight: a (labels, %llu) matrix expected",
                             static_cast<unsigned long long>(D));
    }
    c.labels = static_cast<uint32_t>(shape[0]);
    c.pooling = Pooling::kCls;
    c.label_pooler = w->Has(p + "pooler.dense.weight");
    if (c.label_pooler) {
      EMBER_RETURN_IF_ERROR(m.Copy(p + "pooler.dense.weight", names::kClsPool, {D, D}));
      EMBER_RETURN_IF_ERROR(m.Copy(p + "pooler.dense.bias", names::kClsPoolBias, {D}));
    }
    EMBER_RETURN_IF_ERROR(
        m.Copy("classifier.weight", names::kClsOut, {uint64_t{c.labels}, D}));
    EMBER_RETURN_IF_ERROR(m.Copy("classifier.bias", names::kClsOutBias, {c.labels}));
    return Status::Ok();
  }
  // The pooler (a dense layer and tanh over [CLS], for next-sentence prediction) and the
  // pre-training heads are not part of the embedding.
  w->IgnorePrefix(p + "pooler.");
  w->IgnorePrefix("cls.");
  return Status::Ok();
}

}  // namespace ember::tools
