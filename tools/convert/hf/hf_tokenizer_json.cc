// tokenizer.json (Hugging Face tokenizers' format): a BPE model, and the normalizer,
// pre-tokenizer and post-processor steps that say whether it is byte-level (which
// split, which normalization) or SentencePiece-style, each recognised exactly or refused.
#include <vector>

#include "tools/convert/hf/hf_tokenizer.h"
#include "tools/convert/hf/hf_tokenizer_internal.h"
#include "tools/convert/pretokenizer_names.h"
#include "tools/util/json_util.h"

namespace ember::tools {
namespace {

// What the normalizer and pre-tokenizer steps ask for.
struct Pipeline {
  bool byte_level = false;  // a ByteLevel pre-tokenizer
  PreTokenizerKind pre_tokenizer = PreTokenizerKind::kNone;
  Normalization normalizer = Normalization::kNone;
  bool replaces_spaces = false;  // Replace(" " -> "▁") or Metaspace
  bool prepend = false;          // Prepend("▁"): every section
  bool metaspace = false;        // Metaspace: prefix unless the section starts with "▁"
  std::string prepend_scheme;    // Metaspace's: "always", "first" or "never"
};

// Sequences in the files people have nest one or two levels; deeper is refused (100,000
// levels once overflowed the converter's stack).
constexpr int kMaxSequenceNesting = 16;

// The steps of a normalizer, pre-tokenizer or post-processor: a Sequence's, flattened, or
// the step itself.
Status Steps(const std::string& where, const Json& node, const char* list_key,
             std::vector<const Json*>* steps, int depth = 0) {
  if (depth == 0) steps->clear();
  if (node.is_null()) return Status::Ok();
  if (node.is_object() && node.value("type", "") == "Sequence" &&
      node.contains(list_key) && node[list_key].is_array()) {
    if (depth == kMaxSequenceNesting) {
      return InvalidArgument("%s: Sequences of %s nest deeper than %d levels",
                             where.c_str(), list_key, kMaxSequenceNesting);
    }
    for (const Json& step : node[list_key]) {
      EMBER_RETURN_IF_ERROR(Steps(where, step, list_key, steps, depth + 1));
    }
  } else {
    steps->push_back(&node);
  }
  return Status::Ok();
}

std::string TypeOf(const Json& step) {
  return step.is_object() && step.contains("type") && step["type"].is_string()
             ? step["type"].get<std::string>()
             : "?";
}

// A pattern object: {"String": s} or {"Regex": r}.
std::string PatternOf(const Json& step, const char* kind) {
  if (!step.contains("pattern") || !step["pattern"].is_object()) return "";
  const Json& p = step["pattern"];
  return p.contains(kind) && p[kind].is_string() ? p[kind].get<std::string>() : "";
}

Status ReadNormalizer(const std::string& where, const Json& root, Pipeline* p) {
  if (!root.contains("normalizer")) return Status::Ok();
  std::vector<const Json*> steps;
  EMBER_RETURN_IF_ERROR(Steps(where, root["normalizer"], "normalizers", &steps));
  for (const Json* step : steps) {
    const std::string type = TypeOf(*step);
    if (type == "NFC") {
      p->normalizer = Normalization::kNfc;
    } else if (type == "Prepend" && step->value("prepend", "") == kMetaSpace) {
      p->prepend = true;
    } else if (type == "Replace" && PatternOf(*step, "String") == " " &&
               step->value("content", "") == kMetaSpace) {
      p->replaces_spaces = true;
    } else {
      return InvalidArgument(
          "%s: the normalizer step '%.40s' is not supported (ember reads NFC, "
          "Prepend(\"▁\") and Replace(\" \", \"▁\"))",
          where.c_str(), type.c_str());
    }
  }
  return Status::Ok();
}

Status CheckByteLevel(const std::string& where, const Json& step, bool use_regex) {
  if (step.value("add_prefix_space", false)) {
    return InvalidArgument("%s: ByteLevel add_prefix_space is not supported",
                           where.c_str());
  }
  if (step.value("use_regex", true) != use_regex) {
    return InvalidArgument(
        "%s: a ByteLevel pre-tokenizer with use_regex %s here is not "
        "supported",
        where.c_str(), use_regex ? "false" : "true");
  }
  return Status::Ok();
}

// The pre-tokenizers of the families ember reads, each recognised with the Sequence
// around it: GPT-2's ByteLevel; Split(Llama 3's or Qwen2's pattern) then ByteLevel;
// Digits(individual) then ByteLevel (SmolLM); Metaspace without splitting; and a Split
// on " " after a normalizer that left no spaces (Gemma 3), which does nothing.
Status ReadPreTokenizer(const std::string& where, const Json& root, Pipeline* p) {
  if (!root.contains("pre_tokenizer")) return Status::Ok();
  std::vector<const Json*> steps;
  EMBER_RETURN_IF_ERROR(Steps(where, root["pre_tokenizer"], "pretokenizers", &steps));
  std::string types;
  for (const Json* step : steps) types += (types.empty() ? "" : ", ") + TypeOf(*step);
  const auto type_at = [&](size_t i) {
    return i < steps.size() ? TypeOf(*steps[i]) : "";
  };
  if (steps.size() == 1 && type_at(0) == "ByteLevel") {
    p->byte_level = true;
    const bool use_regex = steps[0]->value("use_regex", true);
    p->pre_tokenizer = use_regex ? PreTokenizerKind::kGpt2 : PreTokenizerKind::kNone;
    return CheckByteLevel(where, *steps[0], use_regex);
  }
  if (steps.size() == 2 && type_at(0) == "Split" && type_at(1) == "ByteLevel") {
    const Json& split = *steps[0];
    const std::string regex = PatternOf(split, "Regex");
    if (regex.empty() || split.value("behavior", "") != "Isolated" ||
        split.value("invert", false)) {
      return InvalidArgument(
          "%s: a Split pre-tokenizer other than Isolated on a regex is "
          "not supported",
          where.c_str());
    }
    p->byte_level = true;
    EMBER_RETURN_IF_ERROR(PreTokenizerForPattern(where, regex, &p->pre_tokenizer));
    return CheckByteLevel(where, *steps[1], false);
  }
  if (steps.size() == 2 && type_at(0) == "Digits" && type_at(1) == "ByteLevel") {
    if (!steps[0]->value("individual_digits", false)) {
      return InvalidArgument("%s: Digits without individual_digits is not supported",
                             where.c_str());
    }
    p->byte_level = true;
    p->pre_tokenizer = PreTokenizerKind::kSmolLm;
    return CheckByteLevel(where, *steps[1], true);
  }
  if (steps.size() == 1 && type_at(0) == "Metaspace") {
    const Json& m = *steps[0];
    // Hugging Face's default is to split on "▁" (each word merged apart): not run here.
    if (m.value("split", true) || m.value("replacement", "") != kMetaSpace) {
      return InvalidArgument(
          "%s: a Metaspace pre-tokenizer that splits words (or uses "
          "another replacement than \"▁\") is not supported",
          where.c_str());
    }
    p->replaces_spaces = p->metaspace = true;
    p->prepend_scheme = m.value("prepend_scheme", "");
    if (p->prepend_scheme.empty()) {
      p->prepend_scheme = m.value("add_prefix_space", true) ? "always" : "never";
    }
    if (p->prepend_scheme != "always" && p->prepend_scheme != "first" &&
        p->prepend_scheme != "never") {
      return InvalidArgument("%s: Metaspace prepend_scheme '%.20s' is unknown",
                             where.c_str(), p->prepend_scheme.c_str());
    }
    return Status::Ok();
  }
  if (steps.size() == 1 && type_at(0) == "Split" &&
      PatternOf(*steps[0], "String") == " " && p->replaces_spaces &&
      !steps[0]->value("invert", false)) {
    return Status::Ok();  // the normalizer replaced every space: nothing to split on
  }
  if (steps.empty()) return Status::Ok();
  for (const Json* step : steps) {  // quote a Split's pattern: the likeliest to differ
    if (TypeOf(*step) == "Split" && !PatternOf(*step, "Regex").empty()) {
      PreTokenizerKind unused;
      EMBER_RETURN_IF_ERROR(
          PreTokenizerForPattern(where, PatternOf(*step, "Regex"), &unused));
    }
  }
  return InvalidArgument(
      "%s: the pre-tokenizer [%.200s] is not supported (ember reads GPT-2's, Llama 3's, "
      "Qwen2's, SmolLM's, Gemma 3's and Llama 2's)",
      where.c_str(), types.c_str());
}

// A TemplateProcessing post-processor says whether encoding adds BOS: its "single"
// template starts with a special token (its id) or with the text. tokenizer_config.json's
// add_bos_token, read before, wins.
Status ReadPostProcessor(const std::string& where, const Json& root,
                         SpecialTokens* specials) {
  if (!root.contains("post_processor")) return Status::Ok();
  std::vector<const Json*> steps;
  EMBER_RETURN_IF_ERROR(Steps(where, root["post_processor"], "processors", &steps));
  for (const Json* step : steps) {
    if (TypeOf(*step) != "TemplateProcessing" || !step->contains("single") ||
        !(*step)["single"].is_array() || (*step)["single"].empty()) {
      continue;
    }
    const Json& first = (*step)["single"][0];
    if (!first.is_object() || !first.contains("SpecialToken")) {
      if (specials->add_bos < 0) specials->add_bos = 0;
      continue;
    }
    const std::string name = first["SpecialToken"].value("id", "");
    const Json* token =
        step->contains("special_tokens") && (*step)["special_tokens"].contains(name)
            ? &(*step)["special_tokens"][name]
            : nullptr;
    if (!token || !token->contains("ids") || !(*token)["ids"].is_array() ||
        (*token)["ids"].size() != 1 || !(*token)["ids"][0].is_number_unsigned()) {
      return InvalidArgument("%s: the post-processor's first token '%.40s' is not one id",
                             where.c_str(), name.c_str());
    }
    if (specials->add_bos < 0) specials->add_bos = 1;
    if (specials->bos_id < 0) specials->bos_id = (*token)["ids"][0].get<int64_t>();
  }
  return Status::Ok();
}

Status ReadTokenizerJsonUnguarded(const std::string& path, SpecialTokens specials,
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
  const JsonFields f(model, path + " model");
  double dropout = 0;
  std::string prefix, suffix;
  EMBER_RETURN_IF_ERROR(f.Float("dropout", false, 0, 0, 1, &dropout));
  EMBER_RETURN_IF_ERROR(f.String("continuing_subword_prefix", false, "", &prefix));
  EMBER_RETURN_IF_ERROR(f.String("end_of_word_suffix", false, "", &suffix));
  if (dropout != 0 || !prefix.empty() || !suffix.empty()) {
    return InvalidArgument(
        "%s: BPE dropout, continuing_subword_prefix and "
        "end_of_word_suffix are not supported",
        path.c_str());
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
  Pipeline p;
  EMBER_RETURN_IF_ERROR(ReadNormalizer(path, root, &p));
  EMBER_RETURN_IF_ERROR(ReadPreTokenizer(path, root, &p));
  EMBER_RETURN_IF_ERROR(ReadPostProcessor(path, root, &specials));
  if (p.byte_level) {
    if (p.replaces_spaces || p.prepend) {
      return InvalidArgument(
          "%s: a byte-level tokenizer with a \"▁\" normalizer is not "
          "supported",
          path.c_str());
    }
    EMBER_RETURN_IF_ERROR(CheckAddedTokens(path, v, false, p.normalizer));
    EMBER_RETURN_IF_ERROR(BuildByteLevel(path, v, specials, tok));
    tok->pre_tokenizer = p.pre_tokenizer;
    tok->normalizer = p.normalizer;
    tok->ignore_merges = model.value("ignore_merges", false);
    return Status::Ok();
  }
  if (!p.replaces_spaces) {
    return InvalidArgument(
        "%s: a SentencePiece-style tokenizer must map spaces to '▁' "
        "(or have a ByteLevel pre-tokenizer)",
        path.c_str());
  }
  if (p.prepend && p.metaspace) {
    return InvalidArgument("%s: both Prepend and Metaspace add \"▁\"", path.c_str());
  }
  EMBER_RETURN_IF_ERROR(CheckAddedTokens(path, v, true, p.normalizer));
  SentencePieceOptions options;
  options.unk_token = model.value("unk_token", "");
  options.byte_fallback = model.value("byte_fallback", false);
  EMBER_RETURN_IF_ERROR(BuildSentencePiece(path, v, options, specials, tok));
  tok->add_dummy_prefix = p.prepend || (p.metaspace && p.prepend_scheme != "never");
  if (p.metaspace) {
    tok->dummy_prefix = p.prepend_scheme == "first" ? DummyPrefix::kFirstUnlessSpace
                                                    : DummyPrefix::kEveryUnlessSpace;
  }
  tok->normalizer = p.normalizer;
  return Status::Ok();
}

}  // namespace

Status ReadTokenizerJson(const std::string& path, const SpecialTokens& specials,
                         TokenizerSpec* tok) {
  return CatchJsonErrors(path,
                         [&] { return ReadTokenizerJsonUnguarded(path, specials, tok); });
}

}  // namespace ember::tools
