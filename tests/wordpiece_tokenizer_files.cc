// The generated WordPiece tokenizers and texts (see wordpiece_tokenizer_files.h).
// Deterministic: std::mt19937 is fully specified, and only its raw output is used.
#include "tests/wordpiece_tokenizer_files.h"

#include <fstream>
#include <map>
#include <random>

#include "testing/testing.h"
#include "tools/util/json_util.h"

namespace ember::testing {
namespace {

using tools::Json;

const char* const kWords[] = {"the",
                              "a",
                              "an",
                              "of",
                              "and",
                              "to",
                              "in",
                              "is",
                              "was",
                              "it",
                              "for",
                              "on",
                              "with",
                              "as",
                              "at",
                              "by",
                              "this",
                              "that",
                              "from",
                              "be",
                              "are",
                              "not",
                              "or",
                              "have",
                              "but",
                              "they",
                              "you",
                              "he",
                              "she",
                              "we",
                              "one",
                              "all",
                              "there",
                              "if",
                              "more",
                              "when",
                              "will",
                              "who",
                              "so",
                              "what",
                              "up",
                              "out",
                              "can",
                              "time",
                              "people",
                              "year",
                              "new",
                              "some",
                              "other",
                              "than",
                              "then",
                              "now",
                              "only",
                              "like",
                              "over",
                              "also",
                              "back",
                              "after",
                              "two",
                              "how",
                              "work",
                              "first",
                              "well",
                              "way",
                              "day",
                              "cat",
                              "dog",
                              "house",
                              "run",
                              "play",
                              "un",
                              "affable",
                              "token",
                              "embed",
                              "search",
                              "model",
                              "bert",
                              "hello",
                              "world",
                              "quick",
                              "brown",
                              "fox",
                              "jumps",
                              "lazy",
                              "caf\xC3\xA9",
                              "cafe",
                              "na\xC3\xAFve",
                              "naive",
                              "\xC3\xBC"
                              "ber",
                              "uber",
                              "r\xC3\xA9sum\xC3\xA9",
                              "resume",
                              "fa\xC3\xA7"
                              "ade",
                              "se\xC3\xB1or",
                              "\xC3\x85ngstr\xC3\xB6m",
                              "angstrom",
                              "\xC3\xA9l\xC3\xA8ve",
                              "eleve",
                              "stra\xC3\x9F"
                              "e",
                              "m\xC3\xBCnchen",
                              "z\xC3\xBCrich",
                              "\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x82",
                              "\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x83",
                              "\xCE\xBB\xCF\x8C\xCE\xB3\xCE\xBF\xCF\x82",
                              "\xCE\xBB\xCE\xBF\xCE\xB3\xCE\xBF\xCF\x82",
                              "\xD0\xBF\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82",
                              "\xD0\xBC\xD0\xB8\xD1\x80",
                              "i\xCC\x87stanbul",
                              "istanbul",
                              "supercalifragilisticexpialidocious",
                              "antidisestablishmentarianism",
                              "2024",
                              "100",
                              "10",
                              "12",
                              "\xED\x95\x9C",
                              "\xEA\xB5\xAD",
                              "\xEC\x96\xB4"};
const char* const kSuffixes[] = {
    "s",       "ed",   "ing", "er",   "est",  "ly",       "tion",     "ness",
    "al",      "able", "aff", "izer", "ding", "ous",      "ism",      "e",
    "es",      "y",    "ity", "00",   "24",   "\xC3\xA9", "\xCF\x82", "\xD0\xB5\xD1\x82",
    "\xCC\x81"};
// Single characters that are pieces at a word's start and as continuations.
const char* const kChars[] = {
    "\xC3\xA9",         "\xC3\xA8",         "\xC3\xAA",        "\xC3\xA0",
    "\xC3\xA4",         "\xC3\xAF",         "\xC3\xB6",        "\xC3\xBC",
    "\xC3\xA7",         "\xC3\xB1",         "\xC3\x9F",        "\xC3\xA5",
    "\xC3\xB8",         "\xC3\xA6",         "\xC3\x89",        "\xC3\x9C",
    "\xC3\x96",         "\xC3\x87",         "\xCF\x83",        "\xCF\x82",
    "\xCE\xB1",         "\xCE\xBF",         "\xCE\xB4",        "\xD0\xB8",
    "\xD0\xB5",         "\xD1\x82",         "\xE3\x81\xAE",    "\xE3\x81\xAF",
    "\xE3\x82\xAB",     "\xE3\x82\xBF",     "\xE3\x83\x8A",    "\xD9\xA3",
    "\xEF\xBC\x91",     "\xEF\xBC\x92",     "\xE2\x82\xAC",    "\xC2\xA3",
    "\xC2\xA9",         "\xC2\xB0",         "\xC3\x97",        "\xE2\x89\xA0",
    "\xE2\x86\x92",     "\xF0\x9F\x98\x80", "\xCC\x81",        "\xCC\x87",
    "\xF0\xA0\x80\x80", "\xF0\xAB\xA0\xA0", "\xF0\xAB\xA4\xA0"};
// Unicode punctuation (each a word of its own).
const char* const kPunctuation[] = {
    "\xE3\x80\x82", "\xE3\x80\x81", "\xC2\xBF",     "\xC2\xA1",     "\xE2\x80\x94",
    "\xE2\x80\x93", "\xC2\xAB",     "\xC2\xBB",     "\xE2\x80\x9C", "\xE2\x80\x9D",
    "\xE2\x80\xA6", "\xC2\xB7",     "\xEF\xBC\x81", "\xEF\xBC\x9F", "\xEF\xBC\x8C"};

std::string Capitalized(const std::string& word) {
  std::string s = word;
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 32);
  return s;
}

// The vocabulary in id order: the five special tokens first.
std::vector<std::string> Vocabulary() {
  std::vector<std::string> vocab;
  std::map<std::string, int> seen;
  const auto add = [&](const std::string& piece) {
    if (seen.emplace(piece, 0).second) vocab.push_back(piece);
  };
  for (const char* special : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) add(special);
  for (char c = 33; c < 127; ++c) {
    add(std::string(1, c));
    if (isalnum(static_cast<unsigned char>(c))) add("##" + std::string(1, c));
  }
  for (const char* word : kWords) {
    add(word);
    add(Capitalized(word));
  }
  for (const char* suffix : kSuffixes) add(std::string("##") + suffix);
  for (const char* c : kChars) {
    add(c);
    add(std::string("##") + c);
  }
  for (const char* p : kPunctuation) add(p);
  for (uint32_t cp = 0x4E00; cp < 0x4E40; ++cp) {  // CJK ideographs
    add(Utf8(cp));
    add("##" + Utf8(cp));
  }
  for (uint32_t cp = 0x1100; cp <= 0x1112; ++cp) add(Utf8(cp));  // Hangul jamo
  for (uint32_t cp = 0x1161; cp <= 0x1175; ++cp) add("##" + Utf8(cp));
  for (uint32_t cp = 0x11A8; cp <= 0x11C2; ++cp) add("##" + Utf8(cp));
  std::mt19937 rng(20261129);
  for (int i = 0; i < 400; ++i) {  // random subwords of two to four letters
    std::string piece = i % 2 ? "##" : "";
    for (size_t n = 2 + rng() % 3; n > 0; --n) piece += "etaoinsrhdlucm"[rng() % 14];
    add(piece);
  }
  return vocab;
}

Status WriteJson(const std::string& path, const Json& json) {
  std::ofstream out(path, std::ios::binary);
  out << json.dump();
  return out ? Status::Ok() : IoError("cannot write %s", path.c_str());
}

}  // namespace

Status WriteWordPieceTokenizer(const WordPieceVariant& v, const std::string& dir) {
  const std::vector<std::string> vocab = Vocabulary();
  Json vocab_json = Json::object();
  for (size_t id = 0; id < vocab.size(); ++id) vocab_json[vocab[id]] = id;
  Json added = Json::array();
  for (int id = 0; id < 5; ++id) {
    added.push_back({{"id", id},
                     {"content", vocab[id]},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", true}});
  }
  const auto special = [](const char* name) {
    return Json{{"SpecialToken", {{"id", name}, {"type_id", 0}}}};
  };
  const auto sequence = [](const char* name, int type_id) {
    return Json{{"Sequence", {{"id", name}, {"type_id", type_id}}}};
  };
  Json sep_b = special("[SEP]");
  sep_b["SpecialToken"]["type_id"] = 1;
  Json post = {
      {"type", "TemplateProcessing"},
      {"single", Json::array({special("[CLS]"), sequence("A", 0), special("[SEP]")})},
      {"pair", Json::array({special("[CLS]"), sequence("A", 0), special("[SEP]"),
                            sequence("B", 1), sep_b})},
      {"special_tokens",
       {{"[CLS]", {{"id", "[CLS]"}, {"ids", {2}}, {"tokens", {"[CLS]"}}}},
        {"[SEP]", {{"id", "[SEP]"}, {"ids", {3}}, {"tokens", {"[SEP]"}}}}}}};
  if (v.bert_processing) {
    post = {{"type", "BertProcessing"},
            {"sep", Json::array({"[SEP]", 3})},
            {"cls", Json::array({"[CLS]", 2})}};
  }
  const Json strip = v.strip_accents < 0 ? Json(nullptr) : Json(v.strip_accents == 1);
  const Json tokenizer = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", added},
      {"normalizer",
       {{"type", "BertNormalizer"},
        {"clean_text", v.clean_text},
        {"handle_chinese_chars", v.handle_chinese_chars},
        {"strip_accents", strip},
        {"lowercase", v.lowercase}}},
      {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
      {"post_processor", post},
      {"decoder", {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}}},
      {"model",
       {{"type", "WordPiece"},
        {"unk_token", "[UNK]"},
        {"continuing_subword_prefix", "##"},
        {"max_input_chars_per_word", v.max_input_chars_per_word},
        {"vocab", vocab_json}}}};
  EMBER_RETURN_IF_ERROR(WriteJson(dir + "/tokenizer.json", tokenizer));
  return WriteJson(dir + "/tokenizer_config.json", {{"tokenizer_class", "BertTokenizer"},
                                                    {"do_lower_case", v.lowercase},
                                                    {"pad_token", "[PAD]"},
                                                    {"cls_token", "[CLS]"},
                                                    {"sep_token", "[SEP]"},
                                                    {"unk_token", "[UNK]"},
                                                    {"mask_token", "[MASK]"}});
}

std::vector<std::string> WordPieceCorpus() {
  std::vector<std::string> texts = {
      "unaffable",
      "UNAFFABLE",
      "Unaffable!",
      "un aff able",
      "unaffableness",
      "The quick brown fox jumps over the lazy dog.",
      "THE QUICK BROWN FOX",
      "Hello, World! Hello,World!hello.world",
      "\xCE\x9F\xCE\x94\xCE\x9F\xCE\xA3 \xCE\xBF\xCE\xB4\xCE\xBF\xCF\x82",
      "\xE1\xBD\x88\xCE\x94\xCE\x8C\xCE\xA3",  // with breathing and tonos
      "\xC4\xB0stanbul \xC4\xB0",
      "Stra\xC3\x9F"
      "e STRASSE \xE1\xBA\x9E",
      "\xC7\x85"
      "a \xC7\x84"
      "A",  // titlecase and uppercase DZ with caron
      "Caf\xC3\xA9 CAF\xC3\x89 cafe\xCC\x81 Cafe\xCC\x81\xCC\x81",
      "R\xC3\xA9sum\xC3\xA9, na\xC3\xAFve fa\xC3\xA7"
      "ade, se\xC3\xB1or, \xC3\x85ngstr\xC3\xB6m",
      "\xD0\x9F\xD0\xA0\xD0\x98\xD0\x92\xD0\x95\xD0\xA2 \xD0\xBC\xD0\xB8\xD1\x80",
      "[CLS] hello [SEP]",
      "[MASK]",
      "[cls] [Sep] [UNK]",
      "a[SEP]b",
      " [PAD] ",
      "[CLS][SEP][MASK][PAD][UNK]",
      std::string("a\0b", 3),
      "a\x01"
      "b\x7f"
      "c",
      "tab\tnew\nline\rret\x0b\x0c",
      "zero\xE2\x80\x8Bwidth \xEE\x80\x80private \xEF\xBF\xBD replacement",
      "\xE4\xB8\x80\xE4\xB8\x81\xE4\xB8\x82",
      "\xE4\xB8\x80"
      "a\xE4\xB8\x81"
      "b",
      "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x81\xAE\xE3\x83\x86\xE3\x82\xAD",
      "\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4 \xED\x95\x9C",
      "\xF0\xA0\x80\x80\xF0\xA0\x80\x81 \xF0\xAB\xA0\xA0\xF0\xAB\xA4\xA0",
      "2024\xE5\xB9\xB4 \xEF\xBC\x91\xEF\xBC\x92\xEF\xBC\x93 \xD9\xA3\xD9\xA4",
      "3.14 $100 a+b=c (x) [y] {z} <w> a^b `c` d|e ~f @g #h %i &j *k _l",
      "\xC2\xAB"
      "quoted\xC2\xBB \xC2\xBFqu\xC3\xA9? \xE2\x80\x94 dash\xE2\x80\xA6",
      "\xE2\x82\xAC"
      "5 \xC2\xA3"
      "3 \xC2\xA9 2\xC2\xB0 \xE2\x89\xA0 \xF0\x9F\x98\x80",
  };
  for (size_t n : {99, 100, 101, 150}) {  // around max_input_chars_per_word
    texts.push_back(std::string(n, 'a'));
    texts.push_back("x " + std::string(n, 'e') + " y");
    std::string accented;
    for (size_t i = 0; i < n; ++i) accented += "\xC3\xA9";
    texts.push_back(accented);
  }
  std::string marks;  // 120 code points, 60 after stripping accents
  for (int i = 0; i < 60; ++i) marks += "e\xCC\x81";
  texts.push_back(marks);
  texts.push_back("supercalifragilisticexpialidocious antidisestablishmentarianism");
  texts.push_back("antidisestablishmentarianismantidisestablishmentarianism");
  // Random sentences of the vocabulary's words and pieces, in any case, glued or spaced.
  std::vector<std::string> pieces = Vocabulary();
  std::mt19937 rng(7);
  const char* const kGlue[] = {" ",  " ",  " ", "",   "",
                               ", ", ". ", "-", "\t", "\xE3\x80\x82"};
  for (int t = 0; t < 400; ++t) {
    std::string text;
    for (size_t n = 1 + rng() % 12; n > 0; --n) {
      std::string word = pieces[5 + rng() % (pieces.size() - 5)];
      if (word.rfind("##", 0) == 0) word = word.substr(2);
      if (rng() % 4 == 0) word = Capitalized(word);
      if (rng() % 9 == 0) {
        for (char& c : word)
          c = static_cast<char>(toupper(static_cast<unsigned char>(c)));
      }
      text += word + kGlue[rng() % (sizeof(kGlue) / sizeof(kGlue[0]))];
    }
    texts.push_back(text);
  }
  return texts;
}

bool HasRecategorizedCodePoint(const std::string& text) {
  return text.find("\xF0\x91\x9C\x9E") != std::string::npos;  // U+1171E
}

}  // namespace ember::testing
