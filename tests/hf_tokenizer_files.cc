// tokenizer.json files the oracle test writes from real vocabularies (see
// hf_tokenizer_files.h): GPT-2's files as tokenizer.json with GPT-2's and SmolLM's
// pre-tokenizers, and Llama 2's vocabulary as transformers' LlamaConverter writes it.
#include "tests/hf_tokenizer_files.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "tools/convert/llama2c/llama2c_import.h"
#include "tools/util/files.h"
#include "tools/util/json_util.h"

namespace ember::testing {
namespace {

using tools::Json;

Status WriteJson(const std::string& path, const Json& json) {
  std::ofstream out(path, std::ios::binary);
  out << json.dump();
  return out ? Status::Ok() : IoError("cannot write %s", path.c_str());
}

// The code point boundaries of a UTF-8 string (its length included).
std::vector<size_t> Boundaries(const std::string& s) {
  std::vector<size_t> at;
  for (size_t i = 1; i < s.size(); ++i) {
    if ((static_cast<uint8_t>(s[i]) & 0xC0) != 0x80) at.push_back(i);
  }
  return at;
}

}  // namespace

Status WriteGpt2StyleTokenizer(const std::string& models, bool smollm,
                               const std::string& dir) {
  Json vocab;
  EMBER_RETURN_IF_ERROR(tools::ReadJsonFile(models + "/gpt2-bpe/encoder.json", &vocab));
  std::ifstream in(models + "/gpt2-bpe/vocab.bpe");
  Json merges = Json::array();
  std::string line;
  std::getline(in, line);  // "#version: 0.2"
  while (std::getline(in, line)) {
    if (!line.empty()) merges.push_back(line);
  }
  const Json byte_level = {{"type", "ByteLevel"},
                           {"add_prefix_space", false},
                           {"trim_offsets", true},
                           {"use_regex", true}};
  Json pre = byte_level;
  if (smollm) {
    pre = {
        {"type", "Sequence"},
        {"pretokenizers",
         Json::array({{{"type", "Digits"}, {"individual_digits", true}}, byte_level})}};
  }
  const Json tokenizer = {
      {"version", "1.0"},
      {"added_tokens", Json::array({{{"id", 50256},
                                     {"content", "<|endoftext|>"},
                                     {"single_word", false},
                                     {"lstrip", false},
                                     {"rstrip", false},
                                     {"normalized", true},
                                     {"special", true}}})},
      {"normalizer", nullptr},
      {"pre_tokenizer", pre},
      {"post_processor", byte_level},
      {"decoder", byte_level},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}}};
  EMBER_RETURN_IF_ERROR(WriteJson(dir + "/tokenizer.json", tokenizer));
  return WriteJson(dir + "/tokenizer_config.json",
                   {{"tokenizer_class", "PreTrainedTokenizerFast"},
                    {"bos_token", "<|endoftext|>"},
                    {"eos_token", "<|endoftext|>"}});
}

Status WriteLlama2StyleTokenizer(const std::string& models, const std::string& dir) {
  std::vector<uint8_t> bytes;
  EMBER_RETURN_IF_ERROR(tools::ReadFile(models + "/llama2c/tokenizer.bin", &bytes));
  TokenizerSpec llama2c;
  EMBER_RETURN_IF_ERROR(tools::ParseLlama2cTokenizer(bytes, 32000, &llama2c));
  std::vector<std::string> pieces = llama2c.pieces;
  pieces[0] = "<unk>";
  pieces[1] = "<s>";
  pieces[2] = "</s>";
  std::map<std::string, uint32_t> ids;
  for (uint32_t id = 0; id < pieces.size(); ++id) {
    std::string& p = pieces[id];
    for (size_t at; (at = p.find(' ')) != std::string::npos;)
      p.replace(at, 1, "\xE2\x96\x81");
    ids.emplace(p, id);
  }
  // LlamaConverter's merges: every split of a piece into two pieces (ordered by their
  // ids), all of them by the piece's score, highest first (a stable sort).
  std::vector<std::tuple<std::string, std::string, float>> merges;
  for (uint32_t id = 0; id < pieces.size(); ++id) {
    std::vector<std::tuple<uint32_t, uint32_t, std::string, std::string>> local;
    for (size_t at : Boundaries(pieces[id])) {
      const std::string l = pieces[id].substr(0, at), r = pieces[id].substr(at);
      const auto li = ids.find(l), ri = ids.find(r);
      if (li != ids.end() && ri != ids.end())
        local.emplace_back(li->second, ri->second, l, r);
    }
    std::sort(local.begin(), local.end());
    for (const auto& [li, ri, l, r] : local)
      merges.emplace_back(l, r, llama2c.scores[id]);
  }
  std::stable_sort(merges.begin(), merges.end(), [](const auto& a, const auto& b) {
    return std::get<2>(a) > std::get<2>(b);
  });
  Json vocab = Json::object(), merge_list = Json::array();
  for (uint32_t id = 0; id < pieces.size(); ++id) vocab[pieces[id]] = id;
  for (const auto& [l, r, score] : merges) merge_list.push_back(Json::array({l, r}));
  Json added = Json::array();
  const auto add = [&](uint32_t id, const char* content, bool special, bool lstrip,
                       bool rstrip) {
    added.push_back({{"id", id},
                     {"content", content},
                     {"single_word", false},
                     {"lstrip", lstrip},
                     {"rstrip", rstrip},
                     {"normalized", false},
                     {"special", special}});
  };
  add(0, "<unk>", true, false, false);
  add(1, "<s>", true, false, false);
  add(2, "</s>", true, false, false);
  // Phi-3-mini's chat tokens take the white space after them; one token takes the
  // white space before it.
  add(32000, "<|endoftext|>", true, false, false);
  add(32001, "<|assistant|>", true, false, true);
  add(32002, "<|end|>", true, false, true);
  add(32003, "<|user|>", true, false, true);
  add(32004, "<|lstrip|>", false, true, false);
  const Json tokenizer = {
      {"version", "1.0"},
      {"added_tokens", added},
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
        {"pair", Json::array()},
        {"special_tokens",
         {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}}}}}},
      {"decoder", nullptr},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"unk_token", "<unk>"},
        {"continuing_subword_prefix", nullptr},
        {"end_of_word_suffix", nullptr},
        {"fuse_unk", true},
        {"byte_fallback", true},
        {"vocab", vocab},
        {"merges", merge_list}}}};
  EMBER_RETURN_IF_ERROR(WriteJson(dir + "/tokenizer.json", tokenizer));
  return WriteJson(dir + "/tokenizer_config.json",
                   {{"tokenizer_class", "PreTrainedTokenizerFast"},
                    {"add_bos_token", true},
                    {"bos_token", "<s>"},
                    {"eos_token", "</s>"}});
}

}  // namespace ember::testing
