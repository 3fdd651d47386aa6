// tokenizer.json import: each family's normalizer and pre-tokenizer (with the Sequence
// around it) is recognised and recorded, anything else is refused with a message that
// names it (an unknown Split pattern quoted); added-token flags, the template's BOS, and
// GGUF's pre-tokenizer names.
#include "tools/convert/hf/hf_tokenizer.h"

#include <string>

#include "gtest/gtest.h"
#include "testing/testing.h"
#include "tools/convert/pretokenizer_names.h"
#include "tools/util/json_util.h"

namespace ember::tools {
namespace {

using testing::Utf8;

// A byte-level tokenizer.json: the 256 bytes in GPT-2's alphabet, "ab", one merge.
Json ByteLevelJson() {
  Json vocab = Json::object();
  for (uint32_t b = 0; b < 256; ++b) vocab[Utf8(ByteToUnicode(b))] = b;
  vocab["ab"] = 256;
  return {
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", Json::array({"a b"})}}},
      {"added_tokens",
       Json::array({{{"id", 257}, {"content", "<|end|>"}, {"special", true}}})},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"use_regex", true}}}};
}

Json Split(const std::string& regex) {
  return {{"type", "Split"},
          {"pattern", {{"Regex", regex}}},
          {"behavior", "Isolated"},
          {"invert", false}};
}

Json Sequence(Json first, Json second) {
  return {{"type", "Sequence"}, {"pretokenizers", Json::array({first, second})}};
}

Json ByteLevel(bool use_regex) {
  return {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", use_regex}};
}

class HfTokenizerTest : public ::testing::Test {
 protected:
  Status Read(const Json& tokenizer_json, TokenizerSpec* spec) {
    const std::string text = tokenizer_json.dump();
    FILE* f = fopen((dir_.path() + "/tokenizer.json").c_str(), "wb");
    fwrite(text.data(), 1, text.size(), f);
    fclose(f);
    return ReadHfTokenizer(dir_.path(), 0, SpecialTokens(), spec);
  }
  void ExpectError(const Json& tokenizer_json, const std::string& fragment) {
    TokenizerSpec spec;
    const Status s = Read(tokenizer_json, &spec);
    ASSERT_FALSE(s.ok()) << tokenizer_json.dump();
    EXPECT_NE(std::string(s.message()).find(fragment), std::string::npos) << s.message();
  }
  testing::ScratchDir dir_{"hf_tokenizer"};
};

TEST_F(HfTokenizerTest, RecognisesEachFamilysPreTokenizer) {
  TokenizerSpec spec;
  Json j = ByteLevelJson();
  ASSERT_TRUE(Read(j, &spec).ok());
  EXPECT_EQ(spec.pre_tokenizer, PreTokenizerKind::kGpt2);
  EXPECT_EQ(spec.normalizer, Normalization::kNone);
  ASSERT_EQ(spec.added.size(), 1u);
  EXPECT_EQ(spec.added[0].text, "<|end|>");

  j["pre_tokenizer"] = Sequence(Split(kLlama3Pattern), ByteLevel(false));
  j["model"]["ignore_merges"] = true;
  ASSERT_TRUE(Read(j, &spec).ok());
  EXPECT_EQ(spec.pre_tokenizer, PreTokenizerKind::kLlama3);
  EXPECT_TRUE(spec.ignore_merges);

  j["pre_tokenizer"] = Sequence(Split(kQwen2Pattern), ByteLevel(false));
  j["normalizer"] = {{"type", "NFC"}};
  j["model"].erase("ignore_merges");
  ASSERT_TRUE(Read(j, &spec).ok());
  EXPECT_EQ(spec.pre_tokenizer, PreTokenizerKind::kQwen2);
  EXPECT_EQ(spec.normalizer, Normalization::kNfc);
  EXPECT_FALSE(spec.ignore_merges);

  j["normalizer"] = nullptr;
  j["pre_tokenizer"] =
      Sequence({{"type", "Digits"}, {"individual_digits", true}}, ByteLevel(true));
  ASSERT_TRUE(Read(j, &spec).ok());
  EXPECT_EQ(spec.pre_tokenizer, PreTokenizerKind::kSmolLm);
}

TEST_F(HfTokenizerTest, RefusesWhatItDoesNotRun) {
  Json j = ByteLevelJson();
  const std::string other = "\\p{L}+|\\p{N}{1,4}|\\s+";
  j["pre_tokenizer"] = Sequence(Split(other), ByteLevel(false));
  ExpectError(j, "the pre-tokenizer pattern '" + other + "' is not one ember runs");
  j["pre_tokenizer"] = Sequence(Split(kLlama3Pattern), ByteLevel(true));
  ExpectError(j, "use_regex true here is not supported");
  Json removed = Split(kLlama3Pattern);
  removed["behavior"] = "Removed";
  j["pre_tokenizer"] = Sequence(removed, ByteLevel(false));
  ExpectError(j, "other than Isolated");
  j["pre_tokenizer"] = {{"type", "Whitespace"}};
  ExpectError(j, "the pre-tokenizer [Whitespace] is not supported");
  j["pre_tokenizer"] = ByteLevel(true);
  j["pre_tokenizer"]["add_prefix_space"] = true;
  ExpectError(j, "add_prefix_space");
  j = ByteLevelJson();
  j["normalizer"] = {{"type", "NFKC"}};
  ExpectError(j, "normalizer step 'NFKC' is not supported");
  j = ByteLevelJson();
  j["added_tokens"][0]["single_word"] = true;
  ExpectError(j, "single_word");
  j = ByteLevelJson();
  j["normalizer"] = {{"type", "NFC"}};
  j["added_tokens"][0]["normalized"] = true;
  ExpectError(j, "matched after a normalizer");
  j = ByteLevelJson();
  j["model"]["dropout"] = 0.1;
  ExpectError(j, "dropout");
}

// Sequences nested past 16 levels are refused with a message, in each of the three places
// they may appear (100,000 levels once overflowed the converter's stack); a few levels
// read as the flat list.
TEST_F(HfTokenizerTest, DeeplyNestedSequencesAreRefused) {
  const struct {
    const char* field;
    const char* list;
    const char* leaf;
  } places[] = {
      {"normalizer", "normalizers", R"({"type":"NFC"})"},
      {"pre_tokenizer", "pretokenizers",
       R"({"type":"ByteLevel","add_prefix_space":false})"},
      {"post_processor", "processors", R"({"type":"ByteLevel"})"},
  };
  for (const auto& place : places) {
    for (int levels : {3, 100000}) {
      std::string deep;
      for (int i = 0; i < levels; ++i) {
        deep += std::string(R"({"type":"Sequence",")") + place.list + "\":[";
      }
      deep += place.leaf;
      for (int i = 0; i < levels; ++i) deep += "]}";
      Json j = ByteLevelJson();
      j.erase(place.field);
      std::string text = j.dump();
      text = "{\"" + std::string(place.field) + "\":" + deep + "," + text.substr(1);
      FILE* f = fopen((dir_.path() + "/tokenizer.json").c_str(), "wb");
      ASSERT_NE(f, nullptr);
      fwrite(text.data(), 1, text.size(), f);
      fclose(f);
      TokenizerSpec spec;
      const Status s = ReadHfTokenizer(dir_.path(), 0, SpecialTokens(), &spec);
      if (levels == 3) {
        EXPECT_TRUE(s.ok()) << place.field << ": " << s.message();
      } else {
        ASSERT_FALSE(s.ok()) << place.field;
        EXPECT_NE(std::string(s.message()).find("nest deeper than 16 levels"),
                  std::string::npos)
            << s.message();
      }
    }
  }
}

// A SentencePiece-style tokenizer.json: "▁" for spaces, byte pieces, merges.
Json SentencePieceJson() {
  Json vocab = {{"<unk>", 0},
                {"<s>", 1},
                {"<0x41>", 2},
                {"\xE2\x96\x81", 3},
                {"a", 4},
                {"\xE2\x96\x81"
                 "a",
                 5}};
  return {
      {"model",
       {{"type", "BPE"},
        {"vocab", vocab},
        {"merges", Json::array({Json::array({"\xE2\x96\x81", "a"})})},
        {"unk_token", "<unk>"},
        {"byte_fallback", true}}},
      {"added_tokens", Json::array({{{"id", 0}, {"content", "<unk>"}, {"special", true}},
                                    {{"id", 1}, {"content", "<s>"}, {"special", true}},
                                    {{"id", 6},
                                     {"content", "<|u|>"},
                                     {"special", true},
                                     {"rstrip", true},
                                     {"normalized", false}}})},
      {"normalizer",
       {{"type", "Sequence"},
        {"normalizers", Json::array({{{"type", "Prepend"}, {"prepend", "\xE2\x96\x81"}},
                                     {{"type", "Replace"},
                                      {"pattern", {{"String", " "}}},
                                      {"content", "\xE2\x96\x81"}}})}}},
      {"pre_tokenizer", nullptr},
      {"post_processor",
       {{"type", "TemplateProcessing"},
        {"single", Json::array({{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
                                {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}})},
        {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {1}}}}}}}}};
}

TEST_F(HfTokenizerTest, SentencePieceStyle) {
  TokenizerSpec spec;
  Json j = SentencePieceJson();
  Status s = Read(j, &spec);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(spec.kind, TokenizerKind::kSentencePieceBpe);
  EXPECT_TRUE(spec.add_dummy_prefix);
  EXPECT_EQ(spec.dummy_prefix, DummyPrefix::kEverySection);
  EXPECT_TRUE(spec.metaspace_is_space);
  EXPECT_TRUE(spec.scores.empty());  // merged by rank
  ASSERT_EQ(spec.merges.size(), 1u);
  EXPECT_EQ(spec.pieces[5], " a");
  EXPECT_EQ(spec.types[2], TokenType::kByte);
  EXPECT_TRUE(spec.add_bos);  // the template starts with <s>
  EXPECT_EQ(spec.bos_id, 1);
  ASSERT_EQ(spec.added.size(), 3u);
  EXPECT_EQ(spec.added[2].flags, kAddedRstrip);
  EXPECT_EQ(spec.end_id, -1);  // nothing after the text

  // A special token after the text (Qwen3-Embedding's <|endoftext|>) is the end token an
  // embedded text ends with; one that is not one id is refused by name.
  Json ended = j;
  ended["post_processor"]["single"].push_back({{"SpecialToken", {{"id", "<s>"}}}});
  ASSERT_TRUE(Read(ended, &spec).ok());
  EXPECT_EQ(spec.end_id, 1);
  ended["post_processor"]["single"].back()["SpecialToken"]["id"] = "</x>";
  s = Read(ended, &spec);
  EXPECT_NE(std::string(s.message()).find("last token '</x>' is not one id"),
            std::string::npos)
      << s.message();

  // Gemma 3: spaces replaced, then a Split on " " that finds none; no dummy prefix.
  j["normalizer"] = {
      {"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\xE2\x96\x81"}};
  j["pre_tokenizer"] = {{"type", "Split"},
                        {"pattern", {{"String", " "}}},
                        {"behavior", "MergedWithPrevious"},
                        {"invert", false}};
  ASSERT_TRUE(Read(j, &spec).ok());
  EXPECT_FALSE(spec.add_dummy_prefix);
  // Metaspace without splitting, prepend_scheme "first".
  j["normalizer"] = nullptr;
  j["pre_tokenizer"] = {{"type", "Metaspace"},
                        {"replacement", "\xE2\x96\x81"},
                        {"prepend_scheme", "first"},
                        {"split", false}};
  ASSERT_TRUE(Read(j, &spec).ok());
  EXPECT_TRUE(spec.add_dummy_prefix);
  EXPECT_EQ(spec.dummy_prefix, DummyPrefix::kFirstUnlessSpace);
  j["pre_tokenizer"].erase("split");  // Hugging Face's default: split into words
  ExpectError(j, "Metaspace pre-tokenizer that splits words");
  j["normalizer"] = nullptr;
  j["pre_tokenizer"] = nullptr;
  ExpectError(j, "must map spaces to '\xE2\x96\x81'");
  j = SentencePieceJson();
  j["added_tokens"][2]["content"] = "<|\xE2\x96\x81|>";
  j["added_tokens"][2]["normalized"] = true;
  ExpectError(j, "matched after a normalizer");
}

// A field of the wrong type is an error naming the file and the key, never ignored (a
// merges string once gave a tokenizer without merges) nor an uncaught exception.
TEST_F(HfTokenizerTest, WrongTypesAreErrorsNamingTheKey) {
  const struct {
    const char* pointer;  // JSON pointer into ByteLevelJson()
    Json value;
    const char* message;
  } cases[] = {
      {"/model/merges", "a b", "tokenizer.json: model.merges is string, not a list"},
      {"/model/merges", Json::object({{"a", "b"}}), "model.merges is object, not a list"},
      {"/model/merges/0", 7, "tokenizer.json model.merges: merge 0 is not"},
      {"/model/merges/0", Json::array({"a"}), "model.merges: merge 0 is not"},
      {"/model/vocab", Json::array(),
       "tokenizer.json model.vocab: the vocabulary is not"},
      {"/model/type", 5, "tokenizer.json model: 'type' must be a string"},
      {"/model/ignore_merges", "yes", "model: 'ignore_merges' must be true or false"},
      {"/model/unk_token", 0, "model: 'unk_token' must be a string"},
      {"/added_tokens", Json::object(), "added_tokens is not a list"},
      {"/added_tokens/0", 5, "added_tokens: an added token is number, not an object"},
      {"/pre_tokenizer/use_regex", "yes",
       "pre_tokenizer ByteLevel: 'use_regex' must be true or false"},
      {"/pre_tokenizer/add_prefix_space", 1, "'add_prefix_space' must be true or false"},
      {"/pre_tokenizer", 5, "pre_tokenizer is number, not an object"},
      {"/pre_tokenizer/type", 5, "tokenizer.json: pre_tokenizer has no string 'type'"},
      {"/pre_tokenizer",
       {{"type", "Sequence"}, {"pretokenizers", "x"}},
       "a Sequence of pre_tokenizer has no 'pretokenizers' list"},
      {"/pre_tokenizer", Sequence(5, ByteLevel(true)),
       "a step of pre_tokenizer is number"},
      {"/normalizer", Json::array(), "normalizer is array, not an object"},
      {"/normalizer",
       {{"type", "Prepend"}, {"prepend", 5}},
       "normalizer Prepend: 'prepend' must be a string"},
      {"/post_processor", "x", "post_processor is string, not an object"},
      {"/post_processor",
       {{"type", "TemplateProcessing"}, {"single", "$A"}},
       "TemplateProcessing 'single' is not a list"},
      {"/post_processor",
       {{"type", "TemplateProcessing"}, {"single", Json::array({5})}},
       "TemplateProcessing 'single' holds number, not an object"},
      {"/post_processor",
       {{"type", "TemplateProcessing"}, {"single", {{{"SpecialToken", {{"id", 5}}}}}}},
       "post_processor SpecialToken: 'id' must be a string"},
  };
  for (const auto& c : cases) {
    Json j = ByteLevelJson();
    j[Json::json_pointer(c.pointer)] = c.value;
    ExpectError(j, c.message);
  }
  ExpectError(Json::array(), "tokenizer.json: not a JSON object");

  // SentencePiece-style: the model's and Metaspace's fields; a special token id past any
  // vocabulary (it once wrapped to a negative id: no BOS).
  const struct {
    const char* pointer;  // into SentencePieceJson()
    Json value;
    const char* message;
  } sentencepiece[] = {
      {"/model/byte_fallback", "true", "model: 'byte_fallback' must be true or false"},
      {"/post_processor/special_tokens/<s>/ids", Json::array({uint64_t{1} << 63}),
       "the post-processor's first token '<s>' is not one id"},
  };
  for (const auto& c : sentencepiece) {
    Json j = SentencePieceJson();
    j[Json::json_pointer(c.pointer)] = c.value;
    ExpectError(j, c.message);
  }
  Json j = SentencePieceJson();
  j["normalizer"] = nullptr;
  j["pre_tokenizer"] = {{"type", "Metaspace"},
                        {"replacement", "\xE2\x96\x81"},
                        {"prepend_scheme", "first"},
                        {"split", "no"}};
  ExpectError(j, "pre_tokenizer Metaspace: 'split' must be true or false");
  j["pre_tokenizer"]["split"] = false;
  j["pre_tokenizer"]["prepend_scheme"] = 1;
  ExpectError(j, "pre_tokenizer Metaspace: 'prepend_scheme' must be a string");
  // JSON null is an absent key, as Hugging Face writes it ("unk_token": null).
  j = SentencePieceJson();
  j["model"]["unk_token"] = nullptr;
  TokenizerSpec spec;
  const Status s = Read(j, &spec);
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST(PreTokenizerNamesTest, GgufNames) {
  PreTokenizerKind kind;
  bool ignore_merges = false;
  ASSERT_TRUE(PreTokenizerForGgufName("llama-bpe", &kind, &ignore_merges).ok());
  EXPECT_EQ(kind, PreTokenizerKind::kLlama3);
  EXPECT_TRUE(ignore_merges);
  ASSERT_TRUE(PreTokenizerForGgufName("qwen2", &kind, &ignore_merges).ok());
  EXPECT_EQ(kind, PreTokenizerKind::kQwen2);
  EXPECT_FALSE(ignore_merges);
  ASSERT_TRUE(PreTokenizerForGgufName("gpt-2", &kind, &ignore_merges).ok());
  EXPECT_EQ(kind, PreTokenizerKind::kGpt2);
  ASSERT_TRUE(PreTokenizerForGgufName("smollm", &kind, &ignore_merges).ok());
  EXPECT_EQ(kind, PreTokenizerKind::kSmolLm);
  const Status s = PreTokenizerForGgufName("tekken", &kind, &ignore_merges);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("'tekken'"), std::string::npos);
}

}  // namespace
}  // namespace ember::tools
