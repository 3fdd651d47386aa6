// tokenizer.json with a WordPiece model (BERT and its sentence encoders): the vocabulary
// stored as it decodes (" word", continuations without their "##"), BertNormalizer's
// options, BertPreTokenizer, and [CLS]/[SEP] from TemplateProcessing or BertProcessing.
// Any other step is refused by name.
#include <string>
#include <vector>

#include "tools/convert/hf/hf_tokenizer.h"
#include "tools/convert/hf/hf_tokenizer_internal.h"
#include "tools/util/json_util.h"

namespace ember::tools {
namespace {

// The one step of `field` (a Sequence of one is that step), or null when there is none.
Status OneStep(const std::string& where, const Json& root, const char* field,
               const char* list_key, const Json** step) {
  *step = nullptr;
  const auto node = root.find(field);
  if (node == root.end()) return Status::Ok();
  std::vector<const Json*> steps;
  EMBER_RETURN_IF_ERROR(Steps(where, *node, field, list_key, &steps));
  if (steps.size() > 1) {
    return InvalidArgument("%s: a WordPiece %s of %zu steps is not supported",
                           where.c_str(), field, steps.size());
  }
  if (!steps.empty()) *step = steps[0];
  return Status::Ok();
}

Status ReadBertNormalizer(const std::string& where, const Json& root,
                          TokenizerSpec* tok) {
  const Json* step = nullptr;
  EMBER_RETURN_IF_ERROR(OneStep(where, root, "normalizer", "normalizers", &step));
  if (!step) return Status::Ok();
  if (TypeOf(*step) != "BertNormalizer") {
    return InvalidArgument(
        "%s: the normalizer '%.40s' is not supported with WordPiece (ember reads "
        "BertNormalizer)",
        where.c_str(), TypeOf(*step).c_str());
  }
  const JsonFields f(*step, where + " normalizer BertNormalizer");
  BertNormalizerOptions& o = tok->bert;
  EMBER_RETURN_IF_ERROR(f.Bool("clean_text", false, true, &o.clean_text));
  EMBER_RETURN_IF_ERROR(
      f.Bool("handle_chinese_chars", false, true, &o.handle_chinese_chars));
  EMBER_RETURN_IF_ERROR(f.Bool("lowercase", false, true, &o.lowercase));
  // null (or absent): strip accents when lowercasing, as Hugging Face does.
  EMBER_RETURN_IF_ERROR(f.Bool("strip_accents", false, o.lowercase, &o.strip_accents));
  tok->normalizer = Normalization::kBert;
  return Status::Ok();
}

Status ReadBertPreTokenizer(const std::string& where, const Json& root) {
  const Json* step = nullptr;
  EMBER_RETURN_IF_ERROR(OneStep(where, root, "pre_tokenizer", "pretokenizers", &step));
  if (step && TypeOf(*step) == "BertPreTokenizer") return Status::Ok();
  return InvalidArgument(
      "%s: the pre-tokenizer '%.40s' is not supported with WordPiece (ember reads "
      "BertPreTokenizer)",
      where.c_str(), step ? TypeOf(*step).c_str() : "none");
}

// A post-processor's special token: TemplateProcessing's {"SpecialToken": {"id": name}}
// resolved through its special_tokens map, or BertProcessing's [text, id].
struct Template {
  std::vector<int64_t> ids;  // -1: the sequence ($A or $B); else a token id
  std::vector<int64_t> type_ids;
};

Status ReadTemplate(const std::string& where, const Json& step, const char* key,
                    Template* out) {
  const auto items = step.find(key);
  if (items == step.end() || !items->is_array()) {
    return InvalidArgument("%s: TemplateProcessing has no '%s' list", where.c_str(), key);
  }
  for (const Json& item : *items) {
    const auto special = item.is_object() ? item.find("SpecialToken") : item.end();
    const auto sequence = item.is_object() ? item.find("Sequence") : item.end();
    const Json* body = special != item.end()    ? &*special
                       : sequence != item.end() ? &*sequence
                                                : nullptr;
    if (!body || !body->is_object()) {
      return InvalidArgument(
          "%s: TemplateProcessing '%s' holds an item that is not a "
          "SpecialToken or a Sequence",
          where.c_str(), key);
    }
    const JsonFields f(*body, where + " post_processor TemplateProcessing");
    std::string name;
    int64_t type_id;
    EMBER_RETURN_IF_ERROR(f.String("id", true, "", &name));
    EMBER_RETURN_IF_ERROR(f.Int("type_id", false, 0, 0, 1, &type_id));
    out->type_ids.push_back(type_id);
    if (special == item.end()) {
      out->ids.push_back(-1);
      continue;
    }
    const auto tokens = step.find("special_tokens");
    const Json* token = nullptr;
    if (tokens != step.end() && tokens->is_object() && tokens->contains(name)) {
      token = &(*tokens)[name];
    }
    const Json* ids = token && token->is_object() && token->contains("ids")
                          ? &(*token)["ids"]
                          : nullptr;
    if (!ids || !ids->is_array() || ids->size() != 1 ||
        !ids->front().is_number_unsigned() || ids->front().get<uint64_t>() >= kMaxVocab) {
      return InvalidArgument("%s: the post-processor's token '%.40s' is not one id",
                             where.c_str(), name.c_str());
    }
    out->ids.push_back(static_cast<int64_t>(ids->front().get<uint64_t>()));
  }
  return Status::Ok();
}

// [CLS] $A [SEP] (either special may be missing) and, if given, [CLS] $A [SEP] $B [SEP]
// with types 0 0 0 1 1: the shapes Encode (add_bos, append_eos) and a caller building
// pairs reproduce.
Status ReadBertPostProcessor(const std::string& where, const Json& root,
                             SpecialTokens* specials, bool* append_eos) {
  const Json* step = nullptr;
  EMBER_RETURN_IF_ERROR(OneStep(where, root, "post_processor", "processors", &step));
  specials->add_bos = 0;
  if (!step) return Status::Ok();
  Template single, pair;
  const std::string type = TypeOf(*step);
  if (type == "BertProcessing") {
    int64_t ids[2];
    const char* keys[2] = {"cls", "sep"};
    for (int i = 0; i < 2; ++i) {
      const auto v = step->find(keys[i]);
      if (v == step->end() || !v->is_array() || v->size() != 2 ||
          !(*v)[1].is_number_unsigned() || (*v)[1].get<uint64_t>() >= kMaxVocab) {
        return InvalidArgument("%s: BertProcessing '%s' is not [text, id]", where.c_str(),
                               keys[i]);
      }
      ids[i] = static_cast<int64_t>((*v)[1].get<uint64_t>());
    }
    single.ids = {ids[0], -1, ids[1]};
    single.type_ids = {0, 0, 0};
  } else if (type == "TemplateProcessing") {
    EMBER_RETURN_IF_ERROR(ReadTemplate(where, *step, "single", &single));
    if (step->contains("pair") && !(*step)["pair"].is_null()) {
      EMBER_RETURN_IF_ERROR(ReadTemplate(where, *step, "pair", &pair));
    }
  } else {
    return InvalidArgument(
        "%s: the post-processor '%.40s' is not supported with WordPiece (ember reads "
        "TemplateProcessing and BertProcessing)",
        where.c_str(), type.c_str());
  }
  const std::vector<int64_t>& s = single.ids;
  size_t a = 0;
  while (a < s.size() && s[a] >= 0) ++a;
  const bool shape_ok = a < s.size() && a <= 1 && s.size() - a <= 2 &&
                        single.type_ids == std::vector<int64_t>(s.size(), 0);
  const int64_t cls = a == 1 ? s[0] : -1, sep = s.size() - a == 2 ? s.back() : -1;
  const bool pair_ok =
      pair.ids.empty() ||
      (cls >= 0 && sep >= 0 && pair.ids == std::vector<int64_t>{cls, -1, sep, -1, sep} &&
       pair.type_ids == std::vector<int64_t>{0, 0, 0, 1, 1});
  if (!shape_ok || !pair_ok) {
    return InvalidArgument(
        "%s: the post-processor's template is not [CLS] $A [SEP] (and [CLS] $A [SEP] $B "
        "[SEP] with types 0 0 0 1 1 for pairs)",
        where.c_str());
  }
  if (cls >= 0) {
    specials->bos_id = cls;
    specials->add_bos = 1;
  }
  if (sep >= 0) specials->eos_id = sep;
  *append_eos = sep >= 0;
  if (*append_eos && cls < 0) {
    return InvalidArgument("%s: a template with [SEP] but no [CLS] is not supported",
                           where.c_str());
  }
  return Status::Ok();
}

}  // namespace

Status ReadWordPieceJson(const std::string& path, const Json& root,
                         const SpecialTokens& file_specials, TokenizerSpec* tok) {
  const Json& model = root["model"];
  const JsonFields f(model, path + " model");
  std::string unk, prefix;
  int64_t max_chars;
  EMBER_RETURN_IF_ERROR(f.String("unk_token", false, "[UNK]", &unk));
  EMBER_RETURN_IF_ERROR(f.String("continuing_subword_prefix", false, "##", &prefix));
  EMBER_RETURN_IF_ERROR(
      f.Int("max_input_chars_per_word", false, 100, 1, int64_t{1} << 28, &max_chars));
  if (prefix.empty() || prefix.size() > 16) {
    return InvalidArgument(
        "%s: continuing_subword_prefix '%.40s' is empty or longer than "
        "16 bytes",
        path.c_str(), prefix.c_str());
  }
  RawVocab v;
  const auto vocab = model.find("vocab");
  if (vocab == model.end())
    return InvalidArgument("%s: model has no vocab", path.c_str());
  EMBER_RETURN_IF_ERROR(ReadVocabObject(path + " model.vocab", *vocab, &v));
  const auto added = root.find("added_tokens");
  if (added != root.end()) EMBER_RETURN_IF_ERROR(ReadAddedTokens(path, *added, &v));
  TokenizerSpec spec;
  EMBER_RETURN_IF_ERROR(ReadBertNormalizer(path, root, &spec));
  EMBER_RETURN_IF_ERROR(ReadBertPreTokenizer(path, root));
  SpecialTokens specials = file_specials;
  bool append_eos = false;
  EMBER_RETURN_IF_ERROR(ReadBertPostProcessor(path, root, &specials, &append_eos));
  EMBER_RETURN_IF_ERROR(CheckAddedTokens(path, v, false, spec.normalizer));

  spec.kind = TokenizerKind::kWordPiece;
  spec.pre_tokenizer = PreTokenizerKind::kBert;
  spec.add_bos = specials.add_bos == 1;
  spec.add_dummy_prefix = false;
  spec.append_eos = append_eos;
  spec.wordpiece_prefix = prefix;
  spec.max_input_chars_per_word = static_cast<uint32_t>(max_chars);
  spec.pieces.resize(v.pieces.size());
  spec.types.assign(v.pieces.size(), TokenType::kNormal);
  for (size_t id = 0; id < v.pieces.size(); ++id) {
    if (!v.present[id] || v.added.count(id)) continue;  // added tokens: their text
    const std::string& p = v.pieces[id];
    if (p.find_first_of(" \t\n\r") != std::string::npos) {
      // BertPreTokenizer never leaves white space in a word: the piece is unreachable,
      // and its stored form could collide with another's.
      spec.types[id] = TokenType::kControl;
      spec.pieces[id] = p;
      continue;
    }
    spec.pieces[id] =
        p.compare(0, prefix.size(), prefix) == 0 ? p.substr(prefix.size()) : " " + p;
  }
  const auto unk_it = v.ids.find(unk);
  if (unk_it == v.ids.end()) {
    return InvalidArgument("%s: the unknown token '%.40s' is not in the vocabulary",
                           path.c_str(), unk.c_str());
  }
  spec.unk_id = static_cast<int32_t>(unk_it->second);
  if (!v.added.count(unk_it->second)) spec.types[unk_it->second] = TokenType::kUnknown;
  EMBER_RETURN_IF_ERROR(FinishTokenizer(path, v, specials, &spec));
  // The padding token: tokenizer.json's padding settings, when they are on.
  const auto padding = root.find("padding");
  if (padding != root.end() && padding->is_object()) {
    int64_t pad_id;
    EMBER_RETURN_IF_ERROR(JsonFields(*padding, path + " padding")
                              .Int("pad_id", false, -1, -1, kMaxVocab - 1, &pad_id));
    spec.pad_id = static_cast<int32_t>(pad_id);
  }
  *tok = std::move(spec);
  return Status::Ok();
}

}  // namespace ember::tools
