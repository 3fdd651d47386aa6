// Baked prompts: a model file again, with the session state after a fixed prefix in it
// (`ember bake`, `ember convert --bake-prompt`), so that sessions start there with no
// prefill.
#ifndef EMBER_TOOLS_CONVERT_BAKE_H_
#define EMBER_TOOLS_CONVERT_BAKE_H_

#include <string>

#include "runtime/model/model.h"
#include "runtime/model/model_writer.h"
#include "runtime/status.h"

namespace ember::tools {

// The spec that writes a loaded model again: its config, tokenizer (with the chat
// template, source and compiled), tensors as the bytes the file holds, description and
// baked prompt.
Status SpecFromModel(const Model& model, ModelSpec* spec);

// What to bake: `text` tokenized as `ember run -p` does (BOS first when the tokenizer
// adds it), or, with chat_system, the chat template's rendering of a conversation of
// that system text alone (so that chats with it start from the cache).
struct BakeRequest {
  std::string text;
  bool chat_system = false;
  int threads = 1;
};

// Prefills the request's tokens in a session over `model` (with no baked prompt of its
// own) and saves the state.
Status BakePrompt(const Model& model, const BakeRequest& request, BakedPromptSpec* baked);

// Bakes into a model being written: serializes `spec`, loads it from memory and bakes
// the request into spec->baked_prompt.
Status BakeSpec(const BakeRequest& request, ModelSpec* spec);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CONVERT_BAKE_H_
