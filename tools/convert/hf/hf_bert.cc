// BERT-style encoders (see hf_models.h): BertModel's config fields and tensors mapped to
// ember's names.
#include "runtime/model/tensor_names.h"
#include "tools/convert/hf/hf_mapper.h"
#include "tools/convert/hf/hf_models.h"

namespace ember::tools {
namespace {

std::string Layer(const char* format, uint32_t i) { return names::LayerName(format, i); }

}  // namespace

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
