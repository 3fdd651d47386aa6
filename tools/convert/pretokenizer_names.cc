// Pre-tokenizer names (see pretokenizer_names.h).
#include "tools/convert/pretokenizer_names.h"

namespace ember::tools {

Status PreTokenizerForPattern(const std::string& where, const std::string& pattern,
                              PreTokenizerKind* kind) {
  if (pattern == kGpt2Pattern) {
    *kind = PreTokenizerKind::kGpt2;
  } else if (pattern == kLlama3Pattern) {
    *kind = PreTokenizerKind::kLlama3;
  } else if (pattern == kQwen2Pattern) {
    *kind = PreTokenizerKind::kQwen2;
  } else {
    return InvalidArgument(
        "%s: the pre-tokenizer pattern '%.300s' is not one ember runs (it knows GPT-2's, "
        "Llama 3's and Qwen2's exactly as their tokenizer.json spells them)",
        where.c_str(), pattern.c_str());
  }
  return Status::Ok();
}

Status PreTokenizerForGgufName(const std::string& name, PreTokenizerKind* kind,
                               bool* ignore_merges) {
  struct Entry {
    const char* name;
    PreTokenizerKind kind;
    bool ignore_merges;
  };
  static const Entry kNames[] = {
      {"gpt-2", PreTokenizerKind::kGpt2, false},
      {"phi-2", PreTokenizerKind::kGpt2, false},
      {"roberta-bpe", PreTokenizerKind::kGpt2, false},
      {"mpt", PreTokenizerKind::kGpt2, false},
      {"olmo", PreTokenizerKind::kGpt2, false},
      {"jais", PreTokenizerKind::kGpt2, false},
      {"gigachat", PreTokenizerKind::kGpt2, false},
      {"jina-es", PreTokenizerKind::kGpt2, false},
      {"jina-de", PreTokenizerKind::kGpt2, false},
      {"jina-v1-en", PreTokenizerKind::kGpt2, false},
      {"jina-v2-es", PreTokenizerKind::kGpt2, false},
      {"jina-v2-de", PreTokenizerKind::kGpt2, false},
      {"jina-v2-code", PreTokenizerKind::kGpt2, false},
      {"llama-bpe", PreTokenizerKind::kLlama3, true},
      {"llama3", PreTokenizerKind::kLlama3, true},
      {"llama-v3", PreTokenizerKind::kLlama3, true},
      {"falcon3", PreTokenizerKind::kLlama3, true},
      {"dbrx", PreTokenizerKind::kLlama3, false},
      {"smaug-bpe", PreTokenizerKind::kLlama3, false},
      {"qwen2", PreTokenizerKind::kQwen2, false},
      {"deepseek-r1-qwen", PreTokenizerKind::kQwen2, false},
      {"megrez", PreTokenizerKind::kQwen2, false},
      {"stablelm2", PreTokenizerKind::kQwen2, false},
      {"smollm", PreTokenizerKind::kSmolLm, false},
      {"starcoder", PreTokenizerKind::kSmolLm, false},
      {"refact", PreTokenizerKind::kSmolLm, false},
      {"command-r", PreTokenizerKind::kSmolLm, false},
      {"codeshell", PreTokenizerKind::kSmolLm, false},
      {"exaone", PreTokenizerKind::kSmolLm, false},
      {"minerva-7b", PreTokenizerKind::kSmolLm, false},
  };
  for (const Entry& e : kNames) {
    if (name == e.name) {
      *kind = e.kind;
      *ignore_merges = e.ignore_merges;
      return Status::Ok();
    }
  }
  return InvalidArgument(
      "tokenizer.ggml.pre '%.80s' is not a pre-tokenizer ember runs (it runs those "
      "llama.cpp calls gpt-2, llama-bpe, qwen2 and smollm, and their aliases)",
      name.c_str());
}

}  // namespace ember::tools
