// tokenizer.json import of WordPiece: the vocabulary stored as it decodes,
// BertNormalizer's options (strip_accents null following lowercase), [CLS]/[SEP] from
// TemplateProcessing and BertProcessing, the padding id; other steps and templates
// refused by name.
#include <string>

#include "gtest/gtest.h"
#include "testing/testing.h"
#include "tools/convert/hf/hf_tokenizer.h"
#include "tools/util/json_util.h"

namespace ember::tools {
namespace {

Json Special(const char* name, int type_id = 0) {
  return {{"SpecialToken", {{"id", name}, {"type_id", type_id}}}};
}
Json Seq(const char* name, int type_id = 0) {
  return {{"Sequence", {{"id", name}, {"type_id", type_id}}}};
}

Json BertJson() {
  Json added = Json::array();
  const char* names[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]"};
  for (int id = 0; id < 4; ++id) {
    added.push_back(
        {{"id", id}, {"content", names[id]}, {"special", true}, {"normalized", false}});
  }
  return {{"added_tokens", added},
          {"normalizer",
           {{"type", "BertNormalizer"}, {"lowercase", true}, {"strip_accents", nullptr}}},
          {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
          {"post_processor",
           {{"type", "TemplateProcessing"},
            {"single", Json::array({Special("[CLS]"), Seq("A"), Special("[SEP]")})},
            {"pair", Json::array({Special("[CLS]"), Seq("A"), Special("[SEP]"),
                                  Seq("B", 1), Special("[SEP]", 1)})},
            {"special_tokens",
             {{"[CLS]", {{"id", "[CLS]"}, {"ids", {2}}}},
              {"[SEP]", {{"id", "[SEP]"}, {"ids", {3}}}}}}}},
          {"padding", {{"pad_id", 0}, {"pad_token", "[PAD]"}}},
          {"model",
           {{"type", "WordPiece"},
            {"unk_token", "[UNK]"},
            {"vocab",
             {{"[PAD]", 0},
              {"[UNK]", 1},
              {"[CLS]", 2},
              {"[SEP]", 3},
              {"un", 4},
              {"##aff", 5},
              {"##able", 6}}}}}};
}

class WordPieceImportTest : public ::testing::Test {
 protected:
  Status Read(const Json& json, TokenizerSpec* spec) {
    const std::string text = json.dump();
    FILE* f = fopen((dir_.path() + "/tokenizer.json").c_str(), "wb");
    fwrite(text.data(), 1, text.size(), f);
    fclose(f);
    return ReadHfTokenizer(dir_.path(), 0, SpecialTokens(), spec);
  }
  void ExpectError(const Json& json, const std::string& fragment) {
    TokenizerSpec spec;
    const Status s = Read(json, &spec);
    ASSERT_FALSE(s.ok()) << json.dump();
    EXPECT_NE(std::string(s.message()).find(fragment), std::string::npos) << s.message();
  }
  testing::ScratchDir dir_{"hf_wordpiece"};
};

TEST_F(WordPieceImportTest, ReadsTheBertPipeline) {
  TokenizerSpec spec;
  ASSERT_TRUE(Read(BertJson(), &spec).ok());
  EXPECT_EQ(spec.kind, TokenizerKind::kWordPiece);
  EXPECT_EQ(spec.pieces[4], " un");
  EXPECT_EQ(spec.pieces[5], "aff");
  EXPECT_EQ(spec.pieces[2], "[CLS]");
  EXPECT_EQ(spec.types[2], TokenType::kControl);
  EXPECT_EQ(spec.bos_id, 2);
  EXPECT_EQ(spec.eos_id, 3);
  EXPECT_EQ(spec.unk_id, 1);
  EXPECT_EQ(spec.pad_id, 0);
  EXPECT_TRUE(spec.add_bos);
  EXPECT_TRUE(spec.append_eos);
  EXPECT_EQ(spec.wordpiece_prefix, "##");
  EXPECT_EQ(spec.normalizer, Normalization::kBert);
  EXPECT_TRUE(spec.bert.clean_text && spec.bert.handle_chinese_chars);
  EXPECT_TRUE(spec.bert.lowercase && spec.bert.strip_accents);  // null: lowercase's
  Json cased = BertJson();
  cased["normalizer"]["lowercase"] = false;
  ASSERT_TRUE(Read(cased, &spec).ok());
  EXPECT_FALSE(spec.bert.strip_accents);
  Json bert_processing = BertJson();
  bert_processing["post_processor"] = {{"type", "BertProcessing"},
                                       {"sep", Json::array({"[SEP]", 3})},
                                       {"cls", Json::array({"[CLS]", 2})}};
  ASSERT_TRUE(Read(bert_processing, &spec).ok());
  EXPECT_EQ(spec.bos_id, 2);
  EXPECT_TRUE(spec.append_eos);
  Json none = BertJson();
  none.erase("post_processor");
  ASSERT_TRUE(Read(none, &spec).ok());
  EXPECT_FALSE(spec.add_bos);
  EXPECT_FALSE(spec.append_eos);
  LoadedTokenizer loaded;
  ASSERT_TRUE(LoadHfTokenizer(dir_.path(), &loaded).ok());
}

TEST_F(WordPieceImportTest, RefusesWhatItDoesNotRun) {
  Json j = BertJson();
  j["pre_tokenizer"] = {{"type", "Whitespace"}};
  ExpectError(j, "the pre-tokenizer 'Whitespace' is not supported with WordPiece");
  j = BertJson();
  j.erase("pre_tokenizer");
  ExpectError(j, "the pre-tokenizer 'none' is not supported with WordPiece");
  j = BertJson();
  j["normalizer"] = {{"type", "NFD"}};
  ExpectError(j, "the normalizer 'NFD' is not supported with WordPiece");
  j = BertJson();
  j["post_processor"] = {{"type", "RobertaProcessing"}};
  ExpectError(j, "the post-processor 'RobertaProcessing' is not supported");
  j = BertJson();
  j["post_processor"]["pair"][3] = Seq("B", 0);
  ExpectError(j, "is not [CLS] $A [SEP]");
  j = BertJson();
  j["post_processor"]["single"] = Json::array({Seq("A"), Special("[CLS]"), Seq("A")});
  ExpectError(j, "is not [CLS] $A [SEP]");
  j = BertJson();
  j["model"]["unk_token"] = "<unk>";
  ExpectError(j, "the unknown token '<unk>' is not in the vocabulary");
  j = BertJson();
  j["model"]["continuing_subword_prefix"] = "";
  ExpectError(j, "continuing_subword_prefix");
  j = BertJson();
  j["model"]["type"] = "Unigram";
  ExpectError(j, "tokenizer model 'Unigram' is not supported (only BPE and WordPiece)");
}

}  // namespace
}  // namespace ember::tools
