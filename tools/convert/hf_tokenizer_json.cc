// tokenizer.json (Hugging Face tokenizers' format): a BPE model, and the normalizer and
// pre-tokenizer steps that say whether it is GPT-2 byte-level or SentencePiece-style.
#include <vector>

#include "tools/convert/hf_tokenizer.h"
#include "tools/convert/hf_tokenizer_internal.h"
#include "tools/util/json_util.h"

namespace ember::tools {
namespace {

// The normalizer and pre-tokenizer of a SentencePiece-style tokenizer.json: spaces must
// become "▁" (Replace, or Metaspace without splitting); Prepend("▁") or Metaspace's
// prefix scheme adds the dummy prefix.
Status SentencePieceOptions(const std::string& where, const Json& root,
                            bool* dummy_prefix) {
  *dummy_prefix = false;
  bool replaces_spaces = false;
  std::vector<const Json*> steps;
  const auto collect = [&](const Json& node, const char* list_key) {
    if (node.is_null()) return;
    if (!node.is_object()) {
      steps.push_back(&node);  // rejected below
      return;
    }
    const auto list = node.find(list_key);
    if (node.value("type", "") == "Sequence" && list != node.end() && list->is_array()) {
      for (const Json& step : *list) steps.push_back(&step);
    } else {
      steps.push_back(&node);
    }
  };
  if (root.contains("normalizer")) collect(root["normalizer"], "normalizers");
  if (root.contains("pre_tokenizer")) collect(root["pre_tokenizer"], "pretokenizers");
  for (const Json* step : steps) {
    const std::string type = step->is_object() ? step->value("type", "") : "";
    if (type == "Prepend" && step->value("prepend", "") == kMetaSpace) {
      *dummy_prefix = true;
    } else if (type == "Replace" && step->value("content", "") == kMetaSpace &&
               step->contains("pattern") && (*step)["pattern"].is_object() &&
               (*step)["pattern"].value("String", "") == " ") {
      replaces_spaces = true;
    } else if (type == "Metaspace" && !step->value("split", false)) {
      replaces_spaces = true;
      const std::string scheme = step->value("prepend_scheme", "");
      *dummy_prefix = scheme.empty() ? step->value("add_prefix_space", true)
                                     : scheme == "first" || scheme == "always";
    } else {
      return InvalidArgument(
          "%s: normalizer/pre-tokenizer step '%.40s' is not supported "
          "(ember reads GPT-2 byte-level and Llama SentencePiece-style "
          "BPE tokenizers)",
          where.c_str(), type.empty() ? "?" : type.c_str());
    }
  }
  if (!replaces_spaces) {
    return InvalidArgument("%s: a SentencePiece-style tokenizer must map spaces to '▁'",
                           where.c_str());
  }
  return Status::Ok();
}

// True when the pre-tokenizer is GPT-2's ByteLevel (alone or as a one-step Sequence).
Status IsGpt2ByteLevel(const std::string& where, const Json& root, bool* byte_level) {
  *byte_level = false;
  if (!root.contains("pre_tokenizer") || root["pre_tokenizer"].is_null()) {
    return Status::Ok();
  }
  const Json* pre = &root["pre_tokenizer"];
  if (pre->is_object() && pre->value("type", "") == "Sequence" &&
      pre->contains("pretokenizers") && (*pre)["pretokenizers"].is_array() &&
      (*pre)["pretokenizers"].size() == 1) {
    pre = &(*pre)["pretokenizers"][0];
  }
  if (!pre->is_object() || pre->value("type", "") != "ByteLevel") return Status::Ok();
  if (!pre->value("use_regex", true)) {
    return InvalidArgument(
        "%s: a ByteLevel pre-tokenizer without GPT-2's pattern "
        "(use_regex false) is not supported",
        where.c_str());
  }
  if (pre->value("add_prefix_space", false)) {
    return InvalidArgument("%s: ByteLevel add_prefix_space is not supported",
                           where.c_str());
  }
  if (root.contains("normalizer") && !root["normalizer"].is_null()) {
    return InvalidArgument(
        "%s: a normalizer before a ByteLevel pre-tokenizer is not "
        "supported",
        where.c_str());
  }
  *byte_level = true;
  return Status::Ok();
}

Status ReadTokenizerJsonUnguarded(const std::string& path, const SpecialTokens& specials,
                                  TokenizerSpec* tok) {
  Json root;
  EMBER_RETURN_IF_ERROR(ReadJsonFile(path, &root));
  if (!root.is_object() || !root.contains("model") || !root["model"].is_object()) {
    return InvalidArgument("%s: no \"model\" object", path.c_str());
  }
  const Json& model = root["model"];
  const std::string type = model.value("type", "BPE");
  if (type != "BPE") {
    return InvalidArgument("%s: tokenizer model '%.40s' is not supported (only BPE)",
                           path.c_str(), type.c_str());
  }
  RawVocab v;
  if (!model.contains("vocab"))
    return InvalidArgument("%s: model has no vocab", path.c_str());
  EMBER_RETURN_IF_ERROR(ReadVocabObject(path, model["vocab"], &v));
  if (model.contains("merges") && model["merges"].is_array()) {
    for (const Json& merge : model["merges"]) {
      EMBER_RETURN_IF_ERROR(AddMerge(path, v.merges.size(), &merge, nullptr, &v));
    }
  }
  if (root.contains("added_tokens")) {
    EMBER_RETURN_IF_ERROR(ReadAddedTokens(path, root["added_tokens"], &v));
  }
  bool byte_level = false;
  EMBER_RETURN_IF_ERROR(IsGpt2ByteLevel(path, root, &byte_level));
  if (byte_level) return BuildByteLevel(path, v, specials, tok);
  bool dummy_prefix = false;
  EMBER_RETURN_IF_ERROR(SentencePieceOptions(path, root, &dummy_prefix));
  const std::string unk = model.contains("unk_token") && model["unk_token"].is_string()
                              ? model["unk_token"].get<std::string>()
                              : "";
  return BuildSentencePiece(path, v, unk, dummy_prefix, specials, tok);
}

}  // namespace

Status ReadTokenizerJson(const std::string& path, const SpecialTokens& specials,
                         TokenizerSpec* tok) {
  return CatchJsonErrors(path,
                         [&] { return ReadTokenizerJsonUnguarded(path, specials, tok); });
}

}  // namespace ember::tools
