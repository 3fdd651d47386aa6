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

}  // namespace

std::string TypeOf(const Json& step) {
  const auto type = step.find("type");
  return type != step.end() && type->is_string() ? type->get<std::string>() : "?";
}

// The steps of a normalizer, pre-tokenizer or post-processor (`field`): a Sequence's,
// flattened, or the step itself; each an object with a string "type".
Status Steps(const std::string& where, const Json& node, const char* field,
             const char* list_key, std::vector<const Json*>* steps, int depth) {
  if (depth == 0) steps->clear();
  if (node.is_null() && depth == 0) return Status::Ok();
  const char* step_of = depth ? "a step of " : "";
  if (!node.is_object()) {
    return InvalidArgument("%s: %s%s is %s, not an object", where.c_str(), step_of, field,
                           node.type_name());
  }
  if (TypeOf(node) == "?") {
    return InvalidArgument("%s: %s%s has no string 'type'", where.c_str(), step_of,
                           field);
  }
  if (TypeOf(node) != "Sequence") {
    steps->push_back(&node);
    return Status::Ok();
  }
  const auto list = node.find(list_key);
  if (list == node.end() || !list->is_array()) {
    return InvalidArgument("%s: a Sequence of %s has no '%s' list", where.c_str(), field,
                           list_key);
  }
  if (depth == kMaxSequenceNesting) {
    return InvalidArgument("%s: Sequences of %s nest deeper than %d levels",
                           where.c_str(), list_key, kMaxSequenceNesting);
  }
  for (const Json& step : *list) {
    EMBER_RETURN_IF_ERROR(Steps(where, step, field, list_key, steps, depth + 1));
  }
  return Status::Ok();
}

namespace {

// A step's fields, read typed: a wrong type is an error naming the file, the step and
// the key ("tokenizer.json pre_tokenizer ByteLevel: 'use_regex' must be true or false").
JsonFields StepFields(const std::string& where, const char* field, const Json& step) {
  return JsonFields(step, where + " " + field + " " + TypeOf(step));
}

// A pattern object: {"String": s} or {"Regex": r}.
std::string PatternOf(const Json& step, const char* kind) {
  const auto p = step.find("pattern");
  if (p == step.end() || !p->is_object()) return "";
  const auto text = p->find(kind);
  return text != p->end() && text->is_string() ? text->get<std::string>() : "";
}

Status ReadNormalizer(const std::string& where, const Json& root, Pipeline* p) {
  const auto node = root.find("normalizer");
  if (node == root.end()) return Status::Ok();
  std::vector<const Json*> steps;
  EMBER_RETURN_IF_ERROR(Steps(where, *node, "normalizer", "normalizers", &steps));
  for (const Json* step : steps) {
    const std::string type = TypeOf(*step);
    const JsonFields f = StepFields(where, "normalizer", *step);
    std::string text;
    if (type == "NFC") {
      p->normalizer = Normalization::kNfc;
      continue;
    }
    if (type == "Prepend") {
      EMBER_RETURN_IF_ERROR(f.String("prepend", false, "", &text));
      if (text == kMetaSpace) {
        p->prepend = true;
        continue;
      }
    } else if (type == "Replace") {
      EMBER_RETURN_IF_ERROR(f.String("content", false, "", &text));
      if (PatternOf(*step, "String") == " " && text == kMetaSpace) {
        p->replaces_spaces = true;
        continue;
      }
    }
    return InvalidArgument(
        "%s: the normalizer step '%.40s' is not supported (ember reads NFC, "
        "Prepend(\"▁\") and Replace(\" \", \"▁\"))",
        where.c_str(), type.c_str());
  }
  return Status::Ok();
}

Status CheckByteLevel(const std::string& where, const Json& step, bool use_regex) {
  const JsonFields f = StepFields(where, "pre_tokenizer", step);
  bool add_prefix_space, step_regex;
  EMBER_RETURN_IF_ERROR(f.Bool("add_prefix_space", false, false, &add_prefix_space));
  EMBER_RETURN_IF_ERROR(f.Bool("use_regex", false, true, &step_regex));
  if (add_prefix_space) {
    return InvalidArgument("%s: ByteLevel add_prefix_space is not supported",
                           where.c_str());
  }
  if (step_regex != use_regex) {
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
  const auto node = root.find("pre_tokenizer");
  if (node == root.end()) return Status::Ok();
  std::vector<const Json*> steps;
  EMBER_RETURN_IF_ERROR(Steps(where, *node, "pre_tokenizer", "pretokenizers", &steps));
  std::string types;
  for (const Json* step : steps) types += (types.empty() ? "" : ", ") + TypeOf(*step);
  const auto type_at = [&](size_t i) {
    return i < steps.size() ? TypeOf(*steps[i]) : "";
  };
  const auto fields = [&](size_t i) {
    return StepFields(where, "pre_tokenizer", *steps[i]);
  };
  if (steps.size() == 1 && type_at(0) == "ByteLevel") {
    p->byte_level = true;
    bool use_regex;
    EMBER_RETURN_IF_ERROR(fields(0).Bool("use_regex", false, true, &use_regex));
    p->pre_tokenizer = use_regex ? PreTokenizerKind::kGpt2 : PreTokenizerKind::kNone;
    return CheckByteLevel(where, *steps[0], use_regex);
  }
  if (steps.size() == 2 && type_at(0) == "Split" && type_at(1) == "ByteLevel") {
    const std::string regex = PatternOf(*steps[0], "Regex");
    std::string behavior;
    bool invert;
    EMBER_RETURN_IF_ERROR(fields(0).String("behavior", false, "", &behavior));
    EMBER_RETURN_IF_ERROR(fields(0).Bool("invert", false, false, &invert));
    if (regex.empty() || behavior != "Isolated" || invert) {
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
    bool individual;
    EMBER_RETURN_IF_ERROR(fields(0).Bool("individual_digits", false, false, &individual));
    if (!individual) {
      return InvalidArgument("%s: Digits without individual_digits is not supported",
                             where.c_str());
    }
    p->byte_level = true;
    p->pre_tokenizer = PreTokenizerKind::kSmolLm;
    return CheckByteLevel(where, *steps[1], true);
  }
  if (steps.size() == 1 && type_at(0) == "Metaspace") {
    const JsonFields f = fields(0);
    bool split, add_prefix_space;
    std::string replacement;
    EMBER_RETURN_IF_ERROR(f.Bool("split", false, true, &split));
    EMBER_RETURN_IF_ERROR(f.String("replacement", false, "", &replacement));
    EMBER_RETURN_IF_ERROR(f.String("prepend_scheme", false, "", &p->prepend_scheme));
    EMBER_RETURN_IF_ERROR(f.Bool("add_prefix_space", false, true, &add_prefix_space));
    // Hugging Face's default is to split on "▁" (each word merged apart): not run here.
    if (split || replacement != kMetaSpace) {
      return InvalidArgument(
          "%s: a Metaspace pre-tokenizer that splits words (or uses "
          "another replacement than \"▁\") is not supported",
          where.c_str());
    }
    p->replaces_spaces = p->metaspace = true;
    if (p->prepend_scheme.empty()) {
      p->prepend_scheme = add_prefix_space ? "always" : "never";
    }
    if (p->prepend_scheme != "always" && p->prepend_scheme != "first" &&
        p->prepend_scheme != "never") {
      return InvalidArgument("%s: Metaspace prepend_scheme '%.20s' is unknown",
                             where.c_str(), p->prepend_scheme.c_str());
    }
    return Status::Ok();
  }
  if (steps.size() == 1 && type_at(0) == "Split" &&
      PatternOf(*steps[0], "String") == " " && p->replaces_spaces) {
    bool invert;
    EMBER_RETURN_IF_ERROR(fields(0).Bool("invert", false, false, &invert));
    if (!invert) return Status::Ok();  // the normalizer replaced every space: no split
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

// The id of a TemplateProcessing's special token `name`: special_tokens[name] is
// {"ids": [id], ...}.
bool OneSpecialTokenId(const Json& step, const std::string& name, uint64_t* id) {
  const auto tokens = step.find("special_tokens");
  if (tokens == step.end() || !tokens->is_object()) return false;
  const auto token = tokens->find(name);
  if (token == tokens->end() || !token->is_object()) return false;
  const auto ids = token->find("ids");
  if (ids == token->end() || !ids->is_array() || ids->size() != 1 ||
      !ids->front().is_number_unsigned() || ids->front().get<uint64_t>() >= kMaxVocab) {
    return false;
  }
  *id = ids->front().get<uint64_t>();
  return true;
}

// The id of a TemplateProcessing template's element when it is a special token (one
// id, else refused naming the `which` element), or -1 in *id when it is not one.
Status TemplateSpecialToken(const std::string& where, const Json& step,
                            const Json& element, const char* which, int64_t* id) {
  *id = -1;
  const auto special = element.is_object() ? element.find("SpecialToken") : element.end();
  if (!element.is_object() || special == element.end()) return Status::Ok();
  std::string name;
  EMBER_RETURN_IF_ERROR(JsonFields(*special, where + " post_processor SpecialToken")
                            .String("id", true, "", &name));
  uint64_t one;
  if (!OneSpecialTokenId(step, name, &one)) {
    return InvalidArgument("%s: the post-processor's %s token '%.40s' is not one id",
                           where.c_str(), which, name.c_str());
  }
  *id = static_cast<int64_t>(one);
  return Status::Ok();
}

// A TemplateProcessing post-processor says whether encoding adds BOS: its "single"
// template starts with a special token (its id) or with the text. tokenizer_config.json's
// add_bos_token, read before, wins. A special token after the text is the end token an
// embedded text ends with (SpecialTokens::end_id).
Status ReadPostProcessor(const std::string& where, const Json& root,
                         SpecialTokens* specials) {
  const auto node = root.find("post_processor");
  if (node == root.end()) return Status::Ok();
  std::vector<const Json*> steps;
  EMBER_RETURN_IF_ERROR(Steps(where, *node, "post_processor", "processors", &steps));
  for (const Json* step : steps) {
    if (TypeOf(*step) != "TemplateProcessing") continue;
    const auto single = step->find("single");
    if (single == step->end() || single->is_null()) continue;
    if (!single->is_array()) {
      return InvalidArgument(
          "%s: post_processor TemplateProcessing 'single' is not a list", where.c_str());
    }
    if (single->empty()) continue;
    const Json& first = single->front();
    if (!first.is_object()) {
      return InvalidArgument(
          "%s: post_processor TemplateProcessing 'single' holds %s, not an object",
          where.c_str(), first.type_name());
    }
    int64_t id = -1;
    if (single->size() > 1) {
      EMBER_RETURN_IF_ERROR(
          TemplateSpecialToken(where, *step, single->back(), "last", &id));
      if (id >= 0) specials->end_id = id;
    }
    EMBER_RETURN_IF_ERROR(TemplateSpecialToken(where, *step, first, "first", &id));
    if (id < 0) {
      if (specials->add_bos < 0) specials->add_bos = 0;
      continue;
    }
    if (specials->add_bos < 0) specials->add_bos = 1;
    if (specials->bos_id < 0) specials->bos_id = id;
  }
  return Status::Ok();
}

Status ReadTokenizerJsonUnguarded(const std::string& path, SpecialTokens specials,
                                  TokenizerSpec* tok) {
  Json root;
  EMBER_RETURN_IF_ERROR(ReadJsonFile(path, &root));
  if (!root.is_object()) return InvalidArgument("%s: not a JSON object", path.c_str());
  const auto model_it = root.find("model");
  if (model_it == root.end() || !model_it->is_object()) {
    return InvalidArgument("%s: no \"model\" object", path.c_str());
  }
  const Json& model = *model_it;
  const JsonFields f(model, path + " model");
  std::string type;
  EMBER_RETURN_IF_ERROR(f.String("type", false, "BPE", &type));
  if (type == "WordPiece") return ReadWordPieceJson(path, root, specials, tok);
  if (type != "BPE") {
    return InvalidArgument(
        "%s: tokenizer model '%.40s' is not supported (only BPE and WordPiece)",
        path.c_str(), type.c_str());
  }
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
  bool ignore_merges;
  SentencePieceOptions options;
  EMBER_RETURN_IF_ERROR(f.Bool("ignore_merges", false, false, &ignore_merges));
  EMBER_RETURN_IF_ERROR(f.String("unk_token", false, "", &options.unk_token));
  EMBER_RETURN_IF_ERROR(f.Bool("byte_fallback", false, false, &options.byte_fallback));
  RawVocab v;
  const auto vocab = model.find("vocab");
  if (vocab == model.end())
    return InvalidArgument("%s: model has no vocab", path.c_str());
  EMBER_RETURN_IF_ERROR(ReadVocabObject(path + " model.vocab", *vocab, &v));
  // A merges list of another type is an error, not a tokenizer without merges.
  const auto merges = model.find("merges");
  if (merges != model.end() && !merges->is_null()) {
    if (!merges->is_array()) {
      return InvalidArgument("%s: model.merges is %s, not a list", path.c_str(),
                             merges->type_name());
    }
    for (const Json& merge : *merges) {
      EMBER_RETURN_IF_ERROR(
          AddMerge(path + " model.merges", v.merges.size(), &merge, nullptr, &v));
    }
  }
  const auto added = root.find("added_tokens");
  if (added != root.end()) EMBER_RETURN_IF_ERROR(ReadAddedTokens(path, *added, &v));
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
    tok->ignore_merges = ignore_merges;
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
