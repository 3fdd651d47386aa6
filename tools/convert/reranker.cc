// Qwen3-Reranker import (see reranker.h).
#include "tools/convert/reranker.h"

#include <algorithm>
#include <utility>

#include "runtime/model/tensor_names.h"

namespace ember::tools {

const char kQwen3RerankFormat[] =
    "<|im_start|>system\nJudge whether the Document meets the requirements based on the "
    "Query and the Instruct provided. Note that the answer can only be \"yes\" or "
    "\"no\".<|im_end|>\n<|im_start|>user\n<Instruct>: {instruction}\n<Query>: {query}\n"
    "<Document>: {document}<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n";
const char kQwen3RerankInstruction[] =
    "Given a web search query, retrieve relevant passages that answer the query";

namespace {

// The id of the normal piece that is exactly `text`.
Status PieceId(const TokenizerSpec& tok, const std::string& text, size_t* id) {
  for (size_t i = 0; i < tok.pieces.size(); ++i) {
    if (tok.pieces[i] == text && tok.types[i] == TokenType::kNormal) {
      *id = i;
      return Status::Ok();
    }
  }
  return InvalidArgument("--rerank: the vocabulary has no token \"%s\"", text.c_str());
}

TensorSpec* Find(ModelSpec* spec, const char* name) {
  for (TensorSpec& t : spec->tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

}  // namespace

Status MakeReranker(const std::string& kind, ModelSpec* spec, std::string* note) {
  if (kind != "qwen3") {
    return Unimplemented(
        "--rerank %.40s: the prompts ember knows are qwen3's "
        "(Qwen3-Reranker)",
        kind.c_str());
  }
  ModelConfig& c = spec->config;
  if (c.labels == 1 && c.pooling == Pooling::kLast) {
    *note = "reranker: the checkpoint's head of one output, with Qwen3-Reranker's prompt";
  } else if (c.labels != 0 || c.embeds() || c.mask != AttentionMask::kCausal) {
    return InvalidArgument(
        "--rerank qwen3 takes a causal LM or a one-label sequence "
        "classifier (this model has %u labels)",
        c.labels);
  } else {
    size_t yes = 0, no = 0;
    EMBER_RETURN_IF_ERROR(PieceId(spec->tokenizer, "yes", &yes));
    EMBER_RETURN_IF_ERROR(PieceId(spec->tokenizer, "no", &no));
    const char* head_name = c.tied_classifier ? names::kTokEmbedding : names::kOutput;
    const TensorSpec* head = Find(spec, head_name);
    const size_t d = c.d_model;
    if (head == nullptr || head->values.size() != static_cast<size_t>(c.vocab_size) * d) {
      return InvalidArgument(
          "--rerank: the vocabulary head %s is not an f32 (vocab, "
          "d_model) matrix here (--rerank reads --hf imports)",
          head_name);
    }
    TensorSpec out;
    out.name = names::kClsOut;
    out.shape = {1, d};
    out.values.resize(d);
    for (size_t j = 0; j < d; ++j) {
      // In double: the difference of two rows loses nothing a float would.
      out.values[j] = static_cast<float>(static_cast<double>(head->values[yes * d + j]) -
                                         head->values[no * d + j]);
    }
    TensorSpec bias;
    bias.name = names::kClsOutBias;
    bias.shape = {1};
    bias.values = {0.0f};
    if (!c.tied_classifier) {
      spec->tensors.erase(
          std::remove_if(spec->tensors.begin(), spec->tensors.end(),
                         [](const TensorSpec& t) { return t.name == names::kOutput; }),
          spec->tensors.end());
      c.tied_classifier = true;  // no vocabulary logits: nothing reads a head
    }
    spec->tensors.push_back(std::move(out));
    spec->tensors.push_back(std::move(bias));
    c.labels = 1;
    c.pooling = Pooling::kLast;
    *note = "reranker: a head of logit(\"yes\" " + std::to_string(yes) +
            ") - logit(\"no\" " + std::to_string(no) +
            ") at the last token, with Qwen3-Reranker's prompt";
  }
  spec->tokenizer.pair_format = kQwen3RerankFormat;
  spec->tokenizer.pair_instruction = kQwen3RerankInstruction;
  return Status::Ok();
}

}  // namespace ember::tools
