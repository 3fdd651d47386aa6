// The oracle corpus (see hf_tokenizer_corpus.h). Deterministic: std::mt19937 is fully
// specified, and only its raw output is used (the distributions are not).
#include "tests/hf_tokenizer_corpus.h"

#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "testing/testing.h"

namespace ember::testing {
namespace {

// Assigned code points of UnicodeData.txt by general category ("Lu", "Mn", ...), the
// First/Last ranges expanded; surrogates and the left-out ones dropped.
std::map<std::string, std::vector<uint32_t>> ReadCategories(const std::string& path) {
  std::map<std::string, std::vector<uint32_t>> categories;
  std::ifstream in(path);
  std::string line;
  uint32_t range_first = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::istringstream split(line);
    for (std::string f; std::getline(split, f, ';');) fields.push_back(f);
    if (fields.size() < 3) continue;
    const uint32_t cp = static_cast<uint32_t>(std::stoul(fields[0], nullptr, 16));
    const std::string& name = fields[1];
    if (name.find(", First>") != std::string::npos) {
      range_first = cp;
      continue;
    }
    const uint32_t first = name.find(", Last>") != std::string::npos ? range_first : cp;
    for (uint32_t c = first; c <= cp; ++c) {
      if (fields[2] != "Cs" && !LeftOutOfCorpus(c)) categories[fields[2]].push_back(c);
    }
  }
  return categories;
}

// Hand-written texts: the cases each pre-tokenizer, normalizer and added-token rule
// turns on.
void AddFixedTexts(std::vector<std::string>* texts) {
  const char* const kFixed[] = {
      "",
      "Hello world",
      "Hello, World! How are you?",
      " Hello",
      "  Hello  ",
      "   leading and trailing   ",
      "\tTabbed\ttext\t",
      "line one\nline two\n\nline four\n",
      "windows\r\nline\r\n\r\nends\r\n",
      "\r\n\r\n",
      " \n \n ",
      "a\n\n\n\n\nb",
      "trailing newline\n",
      "mixed \t\n \r\n\t spaces",
      // Contractions, both cases, and near misses.
      "it's we're they've I'm you'll he'd don't",
      "IT'S WE'RE THEY'VE I'M YOU'LL HE'D DON'T",
      "It'S We'Re They'Ve I'M You'Ll He'D",
      "'s 't 're 've 'm 'll 'd 'S 'T 'RE 'VE 'M 'LL 'D",
      "y'all o'clock rock'n'roll ''s '' 'x 'sup 'Sup",
      "'tis the season",
      // Words Llama 3's merges do not reach but its vocabulary has (ignore_merges).
      "T\xC3\xB4i l\xC3\xA0m vi\xE1\xBB\x87"
      "c \xE1\xBB\x9F Vi\xE1\xBB\x87t Nam, "
      "nhi\xE1\xBB\x81u \xC4\x91i\xE1\xBB\x81u h\xE1\xBB\xA3p ngo\xC3\xA0i t\xE1"
      "\xBB\xB1 nhi\xC3\xAAn. jeho 1ektedir \xD8\xA7\xDB\x8C\xD8\xB1\xD8\xA7\xD9\x86",
      // Numbers.
      "1 12 123 1234 12345 123456 1234567 12345678 123456789 1234567890",
      "3.14159 2,718 1e10 0x1F 007 -42 +7 1/2",
      "abc123def 456ghi jkl789",
      "\xD9\xA1\xD9\xA2\xD9\xA3 \xEF\xBC\x91\xEF\xBC\x92 \xC2\xB2\xC2\xB3 \xE2\x85\xAB "
      "\xC2\xBD",  // Arabic-Indic and fullwidth digits, superscripts, XII, one half
      "The year 2024, 12:30pm, $1,000.00 and 50%",
      // CJK.
      "\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C\xE4\xB8\x96\xE7\x95\x8C\xEF\xBC\x81",
      "\xE7\xA7\x81\xE3\x81\xAF\xE5\xAD\xA6\xE7\x94\x9F\xE3\x81\xA7\xE3\x81\x99\xE3\x80"
      "\x82"
      "\xE3\x82\xAB\xE3\x82\xBF\xE3\x82\xAB\xE3\x83\x8A",
      "\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4 \xED\x85\x8D\xEC\x8A\xA4\xED\x8A\xB8",
      "\xE4\xB8\xAD\xE6\x96\x87"
      "English\xE6\xB7\xB7\xE5\x90\x88 mixed 123",
      // Emoji: skin tones, ZWJ sequences, flags, keycaps, variation selectors.
      "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD \xF0\x9F\x91\x8B\xF0\x9F\x8F\xBF",
      "\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7\xE2\x80"
      "\x8D"
      "\xF0\x9F\x91\xA6 family",
      "\xF0\x9F\x8F\xB3\xEF\xB8\x8F\xE2\x80\x8D\xF0\x9F\x8C\x88 "
      "\xF0\x9F\x87\xAF\xF0\x9F\x87"
      "\xB5\xF0\x9F\x87\xAB\xF0\x9F\x87\xB7",
      "1\xEF\xB8\x8F\xE2\x83\xA3 #\xEF\xB8\x8F\xE2\x83\xA3 \xE2\x9D\xA4\xEF\xB8\x8F",
      "I \xE2\x9D\xA4 \xF0\x9F\xA6\x99s!",
      // Code.
      "int main(int argc, char** argv) {\n  return argc > 1 ? 0 : -1;\n}\n",
      "def f(x):\n    return [i ** 2 for i in range(x) if i % 2 == 0]\n",
      "{\"key\": [1, 2.5, null, true], \"nested\": {\"a\": \"b\"}}",
      "<html><body><h1>Title</h1><table><tr><td>x</td></tr></table></body></html>",
      "if (a != b && c <= d || e >= f) { x += 1; y -= 2; z *= 3; }",
      "    indented\n        more\n\ttab",
      "SELECT * FROM t WHERE id = 'x';",
      // Text NFC changes (Qwen): combining marks, singletons, exclusions, Hangul jamo.
      "e\xCC\x81 A\xCC\x8A o\xCC\x88\xCC\x81 cafe\xCC\x81",
      "\xE2\x84\xAB \xE2\x84\xA6 \xE2\x84\xAA",  // Angstrom, Ohm, Kelvin signs
      "a\xCC\xA3\xCC\x82 a\xCC\x82\xCC\xA3 q\xCC\xA3\xCC\x87",  // reordering
      "\xE1\x84\x92\xE1\x85\xA1\xE1\x86\xAB\xE1\x84\x80\xE1\x85\xB3\xE1\x86\xAF",  // jamo
      "\xF0\x9D\x85\xA0\xF0\x9D\x85\xA1 \xE0\xA5\x98 \xCD\x84 \xEF\xAC\xAC",  // exclusions
      "a\xCC\x81\xCC\x81\xCC\x81\xCC\x81\xCC\x81\xCC\x81\xCC\x81\xCC\x81\xCC\x81\xCC\x81",
      "\xCC\x81 starts with a mark",
      "<\xCC\xB8 =\xCC\xB8 >\xCC\xB8",  // compose with ASCII
      // SentencePiece's metaspace in the text.
      "\xE2\x96\x81 \xE2\x96\x81\xE2\x96\x81 x\xE2\x96\x81y",
      // Added tokens written in the text, whole and broken.
      "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
      "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nhi<|im_end|>",
      "<bos><start_of_turn>user\nHello<end_of_turn>\n<start_of_turn>model\n",
      "<think>\nhmm\n</think>\n\n<tool_call>{}</tool_call>",
      "<|im_sta <|im_start| <|im_start|>> <<|im_end|>> |<|endoftext|>|",
      "<pad><eos><unk><mask>[multimodal]<unused0><unused99>",
      "text<|endoftext|>more text<|end_of_text|>",
      " <start_of_turn> spaced <end_of_turn> ",
      "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n",
      "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t",
  };
  for (const char* text : kFixed) texts->push_back(text);
  for (int n = 1; n <= 10; ++n) {  // runs of digits, of spaces, of newlines
    texts->push_back("x" + std::string(static_cast<size_t>(n), '7') + "y");
    texts->push_back("a" + std::string(static_cast<size_t>(n), ' ') + "b");
    texts->push_back(std::string(static_cast<size_t>(n), ' ') + std::to_string(n));
    texts->push_back("a" + std::string(static_cast<size_t>(n), '\n') + "b");
    texts->push_back(std::string(static_cast<size_t>(n), ' '));
  }
}

}  // namespace

bool LeftOutOfCorpus(uint32_t code_point) {
  return code_point == 0x85 || code_point == 0xFEFF;
}

std::vector<std::string> HfTokenizerCorpus(const std::string& unicode_data,
                                           size_t num_random) {
  std::vector<std::string> texts;
  AddFixedTexts(&texts);
  std::map<std::string, std::vector<uint32_t>> categories = ReadCategories(unicode_data);
  // Cn (unassigned): noncharacters, unassigned in every version of Unicode.
  categories["Cn"] = {0xFDD0, 0xFDEF, 0xFFFE, 0xFFFF, 0x1FFFE, 0x10FFFF};
  std::mt19937 rng(20261125);
  // Every general category: a few of its code points (its first, its last, random ones)
  // alone, after a letter and a space, and as a run.
  std::vector<uint32_t> all;
  for (const auto& [name, cps] : categories) {
    all.insert(all.end(), cps.begin(), cps.end());
    std::vector<uint32_t> picks = {cps.front(), cps.back()};
    for (int i = 0; i < 6; ++i) picks.push_back(cps[rng() % cps.size()]);
    std::string run;
    for (uint32_t cp : picks) {
      texts.push_back(Utf8(cp));
      texts.push_back("a " + Utf8(cp) + "b" + Utf8(cp) + " 1" + Utf8(cp));
      run += Utf8(cp);
    }
    texts.push_back(run + " " + run);
  }
  // Random texts of units: any assigned code point, letters, digits, white space, marks,
  // punctuation, emoji, pieces of added tokens.
  const std::vector<uint32_t>& marks = categories["Mn"];
  const char* const kUnits[] = {
      " ",       "  ",         "\n",           "\r\n",         "\t",
      "'s",      "'LL",        "<|",           "|>",           "<",
      ">",       "_",          "\xE2\x96\x81", "<|im_start|>", "<start_of_turn>",
      "<think>", "<|eot_id|>", "<bos>"};
  for (size_t t = 0; t < num_random; ++t) {
    std::string text;
    for (size_t units = 1 + rng() % 24; units > 0; --units) {
      switch (rng() % 8) {
        case 0:
        case 1:
          text += Utf8(all[rng() % all.size()]);
          break;
        case 2:
          for (size_t n = 1 + rng() % 8; n > 0; --n) text += "etaoinsrhdlCTA"[rng() % 14];
          break;
        case 3:
          for (size_t n = 1 + rng() % 12; n > 0; --n)
            text += static_cast<char>('0' + rng() % 10);
          break;
        case 4:
          text += kUnits[rng() % (sizeof(kUnits) / sizeof(kUnits[0]))];
          break;
        case 5:
          text += Utf8(marks[rng() % marks.size()]);
          break;
        case 6:
          text += static_cast<char>("!\"#$%&()*+,-./:;=?@[\\]^`{|}~"[rng() % 29]);
          break;
        default:
          text += Utf8(0x1F300 + rng() % 0x300);  // pictographs and emoji
          break;
      }
    }
    texts.push_back(text);
  }
  return texts;
}

}  // namespace ember::testing
