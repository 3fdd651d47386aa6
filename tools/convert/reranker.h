// `ember convert --rerank qwen3`: a Qwen3-Reranker checkpoint (a causal LM that answers
// "yes" or "no" after a fixed prompt) made into a reranker ember scores in one pass.
#ifndef EMBER_TOOLS_CONVERT_RERANKER_H_
#define EMBER_TOOLS_CONVERT_RERANKER_H_

#include <string>

#include "runtime/model/model_writer.h"
#include "runtime/status.h"

namespace ember::tools {

// Qwen3-Reranker's prompt and default instruction (its model card's code), in the
// tokenizer's pair_format form.
extern const char kQwen3RerankFormat[];
extern const char kQwen3RerankInstruction[];

// For kind "qwen3", on an imported f32 spec: a causal LM gets a head of one output,
// the vocabulary head's row of "yes" minus its row of "no" (the score is their logits'
// difference: sigmoid of it is the model card's P(yes)), pooled at the last token, and
// its vocabulary head is dropped; a *ForSequenceClassification import (its seq-cls
// conversion, one label) keeps its head. Either way the tokenizer gets the prompt.
// *note says what was done.
Status MakeReranker(const std::string& kind, ModelSpec* spec, std::string* note);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CONVERT_RERANKER_H_
