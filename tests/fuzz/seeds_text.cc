// The seeds of the text-side fuzzers (template, template_bytecode, gbnf, json_schema,
// tool_calls, tokenizer_json, c_api): chat templates in the shapes the model families
// ship (and the real ones when ../shared/models has them), compiled templates with bytes flipped, GBNF grammars with a
// text each, small tokenizer.json
// files of each kind the reader runs, and call programs that walk a session and a chat
// through the C API.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "runtime/text/pretokenizer.h"
#include "tests/fuzz/c_api_fuzz_calls.h"
#include "tests/fuzz/fuzz_common.h"
#include "tools/convert/hf/hf_tokenizer.h"
#include "tools/util/files.h"
#include "tools/util/json_util.h"

namespace ember::fuzz {
namespace {

using tools::Json;
using Files = std::vector<std::pair<std::string, std::string>>;

const char* const kTemplates[][2] = {
    {"edge_tests",  // tests/c_api_edge.h's
     "{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}"
     "{% if add_generation_prompt %}[assistant]{% endif %}"
     "{% if strftime_now is defined %} {{ strftime_now('%Y-%m-%d %j %a') }}{% endif %}"},
    {"stories",  // tests/chat_templates/stories.jinja's shape
     "{{- bos_token }}{%- for message in messages %}"
     "{%- if message.role == 'system' %}{{- message.content | trim ~ '\\n\\n' }}"
     "{%- elif message.role == 'user' %}{{- 'User: ' ~ message.content | trim ~ '\\n' }}"
     "{%- elif message.role == 'assistant' %}"
     "{{- 'Bot:' ~ message.content ~ eos_token ~ '\\n' }}"
     "{%- else %}{{- raise_exception('Unknown role: ' + message.role) }}{%- endif %}"
     "{%- endfor %}{%- if add_generation_prompt %}{{- 'Bot:' }}{%- endif %}"},
    {"llama3",
     "{%- set loop_messages = messages %}{% for message in loop_messages %}"
     "{% set content = '<|start_header_id|>' + message['role'] + "
     "'<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' %}"
     "{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}"
     "{{ content }}{% endfor %}{% if add_generation_prompt %}"
     "{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}"},
    {"gemma3",
     "{{ bos_token }}{% if messages[0]['role'] == 'system' %}"
     "{% set first_user_prefix = messages[0]['content'] + '\\n\\n' %}"
     "{% set loop_messages = messages[1:] %}{% else %}{% set first_user_prefix = '' %}"
     "{% set loop_messages = messages %}{% endif %}{% for message in loop_messages %}"
     "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
     "{{ raise_exception('Conversation roles must alternate user/assistant') }}"
     "{% endif %}{% if message['role'] == 'assistant' %}{% set role = 'model' %}"
     "{% else %}{% set role = message['role'] %}{% endif %}"
     "{{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else '') }}"
     "{{ message['content'] | trim }}{{ '<end_of_turn>\\n' }}{% endfor %}"
     "{% if add_generation_prompt %}{{ '<start_of_turn>model\\n' }}{% endif %}"},
    {"qwen3",
     "{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) "
     "%}{%- for message in messages[::-1] %}{%- set index = (messages|length - 1) - "
     "loop.index0 %}{%- if ns.multi_step_tool and message.role == 'user' and not "
     "(message.content.startswith('<tool_response>') and "
     "message.content.endswith('</tool_response>')) %}{%- set ns.multi_step_tool = false "
     "%}{%- set ns.last_query_index = index %}{%- endif %}{%- endfor %}"
     "{%- for message in messages %}{%- if message.role == 'assistant' %}"
     "{%- set content = message.content.split('</think>')[-1].lstrip('\\n') %}"
     "{{- '<|im_start|>' + message.role + '\\n' + content + '<|im_end|>\\n' }}"
     "{%- else %}{{- '<|im_start|>' + message.role + '\\n' + message.content + "
     "'<|im_end|>\\n' }}{%- endif %}{%- endfor %}{%- if add_generation_prompt %}"
     "{{- '<|im_start|>assistant\\n' }}{%- if enable_thinking is defined and "
     "enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}"
     "{%- endif %}"},
    {"features",  // filters, tests, methods, literals, loops and their variables
     "{% set d = {'a': 1, 'b': [1, 2.5, none, true], 'c': 'x'} %}"
     "{{ d | tojson }}{{ d.items() | list | length }}{% for k, v in d | dictsort %}"
     "{{ k | upper }}={{ v | string | replace('1', 'one') }}{% if not loop.last %},"
     "{% endif %}{% endfor %}{{ messages | selectattr('role', 'equalto', 'user') | "
     "map(attribute='content') | join('|') }}{% for m in messages if m.content %}"
     "{{ loop.index }}/{{ loop.length }}{{ m.content[:3] ~ m.content[-2:] }}"
     "{% if m.content is string and m.role in ['user', 'tool'] %}{% continue %}"
     "{% endif %}{{ (m.content | length) // 2 * 3 - 1 }}{% if loop.index > 2 %}"
     "{% break %}{% endif %}{% endfor %}{{ 'a,b'.split(',') | first | capitalize }}"
     "{{ range(3) | last }}{{ (7 / 2) | round }}{{ -3 | abs }}{{ 'x' * 3 }}"
     "{{ tools is defined }}{{ undefined_thing | default('dflt') }}{# comment #}"
     "{{ ' pad ' | trim | title }}{{ '%d-%s' % (1, 'z') if false else 'no' }}"},
};

void AddTemplates(Files* files) {
  for (const auto& t : kTemplates) files->push_back({std::string("template/") + t[0], t[1]});
  // The real templates (Llama 3's, Qwen3's with tools and thinking, Gemma 3's).
  const char* env = getenv("EMBER_MODELS");
  const std::string models = env && *env ? env : EMBER_DEFAULT_MODELS_DIR;
  for (const char* name : {"llama3", "qwen3", "gemma3"}) {
    std::vector<uint8_t> bytes;
    if (!tools::ReadFile(models + "/hf-tokenizers/" + name + "/tokenizer_config.json",
                         &bytes)
             .ok()) {
      continue;
    }
    const Json config = Json::parse(bytes.begin(), bytes.end(), nullptr,
                                    /*allow_exceptions=*/false);
    if (config.is_object() && config.contains("chat_template") &&
        config["chat_template"].is_string()) {
      files->push_back({std::string("template/real_") + name,
                        config["chat_template"].get<std::string>()});
    }
  }
}

Json ByteLevelVocab() {
  Json vocab = Json::object();
  for (uint32_t b = 0; b < 256; ++b) vocab[tools::ByteLevelEncode(std::string(1, char(b)))] = b;
  vocab[tools::ByteLevelEncode(" t")] = 256;
  vocab[tools::ByteLevelEncode("he")] = 257;
  return vocab;
}

Json Split(const char* regex) {
  return {{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"},
          {"invert", false}};
}

Json ByteLevelPre(bool use_regex) {
  return {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", use_regex}};
}

Json Sequence(const Json& first, const Json& second) {
  return {{"type", "Sequence"}, {"pretokenizers", Json::array({first, second})}};
}

void AddTokenizerJsons(Files* files) {
  const std::string text = "Hello world 123, caf\xc3\xa9 <|im_start|>the\n  end";
  const Json merges = Json::array({tools::ByteLevelEncode(" ") + " t", "h e"});
  Json byte_level = {
      {"model", {{"type", "BPE"}, {"vocab", ByteLevelVocab()}, {"merges", merges}}},
      {"pre_tokenizer", ByteLevelPre(true)},
      {"added_tokens",
       Json::array({{{"id", 258}, {"content", "<|endoftext|>"}, {"special", true}},
                    {{"id", 259}, {"content", "<|im_start|>"}, {"special", true}}})}};
  const Json config = {
      {"add_bos_token", false},
      {"eos_token", "<|endoftext|>"},
      {"chat_template", kTemplates[4][1]},
      {"added_tokens_decoder",
       {{"259", {{"content", "<|im_start|>"}, {"special", true}}}}}};
  files->push_back({"tokenizer_json/gpt2", JoinParts({byte_level.dump(), "", text})});
  files->push_back(
      {"tokenizer_json/gpt2_config", JoinParts({byte_level.dump(1), config.dump(1), text})});
  Json llama3 = byte_level;
  llama3["pre_tokenizer"] = Sequence(Split(kLlama3Pattern), ByteLevelPre(false));
  llama3["model"]["ignore_merges"] = true;
  files->push_back({"tokenizer_json/llama3", JoinParts({llama3.dump(), "", text})});
  Json qwen2 = byte_level;
  qwen2["pre_tokenizer"] = Sequence(Split(kQwen2Pattern), ByteLevelPre(false));
  qwen2["normalizer"] = {{"type", "NFC"}};
  files->push_back({"tokenizer_json/qwen2_nfc", JoinParts({qwen2.dump(), "", text})});
  Json smollm = byte_level;
  smollm["pre_tokenizer"] =
      Sequence({{"type", "Digits"}, {"individual_digits", true}}, ByteLevelPre(true));
  files->push_back({"tokenizer_json/smollm_digits", JoinParts({smollm.dump(), "", text})});

  // SentencePiece-style: Llama 2's (Prepend + Replace, byte fallback, BOS by the post
  // processor), Gemma 3's (Replace, Split on spaces), Metaspace.
  Json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}};
  for (int b = 0; b < 256; ++b) {
    char piece[8];
    snprintf(piece, sizeof(piece), "<0x%02X>", b);
    vocab[piece] = 3 + b;
  }
  int next = 259;
  for (const char* p : {"\xE2\x96\x81", "a", "b", "\xE2\x96\x81" "a", "ab", "\xE2\x96\x81" "ab"}) {
    vocab[p] = next++;
  }
  Json sp = {
      {"model",
       {{"type", "BPE"}, {"vocab", vocab},
        {"merges", Json::array({"\xE2\x96\x81 a", "a b", "\xE2\x96\x81 ab"})},
        {"unk_token", "<unk>"}, {"byte_fallback", true}}},
      {"added_tokens", Json::array({{{"id", 0}, {"content", "<unk>"}, {"special", true}},
                                    {{"id", 1}, {"content", "<s>"}, {"special", true}},
                                    {{"id", 2}, {"content", "</s>"}, {"special", true}},
                                    {{"id", next}, {"content", "<|u|>"}, {"special", true},
                                     {"rstrip", true}, {"normalized", false}}})},
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
  const std::string sp_text = "ab a  b\xe2\x82\xac <|u|>  x <s>";
  files->push_back({"tokenizer_json/llama2_sentencepiece", JoinParts({sp.dump(), "", sp_text})});
  Json gemma = sp;
  gemma["normalizer"] = {
      {"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\xE2\x96\x81"}};
  gemma["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"String", " "}}},
                            {"behavior", "MergedWithPrevious"}, {"invert", false}};
  files->push_back({"tokenizer_json/gemma_sentencepiece",
                    JoinParts({gemma.dump(), R"({"bos_token": "<s>", "add_bos_token": true})",
                               sp_text})});
  Json metaspace = sp;
  metaspace["normalizer"] = nullptr;
  metaspace["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"},
                                {"prepend_scheme", "first"}, {"split", false}};
  files->push_back({"tokenizer_json/metaspace", JoinParts({metaspace.dump(), "", sp_text})});
}

// C API programs, in the bytes CallProgram reads (c_api_fuzz_calls.cc): opcode, then
// its arguments' bytes.
void AddCallPrograms(Files* files) {
  const std::vector<uint8_t> create = {kCreateSession, 0, 1, 0};  // default options
  const std::vector<uint8_t> tokenize = {kTokenize, 1, 5, 'H', 'e', 'l', 'l', 'o', 0,
                                         4 * 5 + 3, 1, 4};
  const std::vector<uint8_t> prefill = {kPrefill, 1, 3, 40, 1, 50, 2, 60, 3, 1, 1};
  const std::vector<uint8_t> sample_decode = {kSample, 1, 1, kDecode, 1, 70, 9};
  const std::vector<uint8_t> generate = {kGenerate, 1, 0, 0, 0, 5, 3};
  const std::vector<uint8_t> save_restore = {kSaveRestore, 1, 4, 2};
  const std::vector<uint8_t> shift = {kShiftContext, 1, 0, 1, 2};
  const std::vector<uint8_t> chat = {kChatCreate, 0, 1,
                                     kChatAdd, 3, 'H', 'i', '!', 0, 1, 0,
                                     kChatGenerate, 0, 4, 5};
  const std::vector<uint8_t> render = {kRender, 4, 'a', 'b', 'c', 'd',
                                       0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1,
                                       0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1,
                                       0, 1, 6, 1, 1};
  const std::vector<std::pair<const char*, std::vector<std::vector<uint8_t>>>> programs = {
      {"session", {create, tokenize, prefill, sample_decode, generate, save_restore}},
      {"shift", {create, prefill, prefill, shift, generate, {kFreeSession}}},
      {"chat", {create, chat, {kChatOther, 1, 0}, chat, render, {kFreeSession}}},
      {"no_session", {tokenize, prefill, generate, save_restore, chat, render}},
      {"options", {{kCreateSession, 0xFF, 2, 9, 1, 2, 1, 7, 2, 3, 4, 1, 0},
                   {kArenaBytes, 0xFE, 1, 9, 2, 4, 1, 1, 1, 2, 1, 1},
                   {kSetSampler, 0x3F, 0, 2, 7, 3, 4, 5, 6, 7, 1, 2, 3, 9},
                   create, generate}},
  };
  for (const auto& [name, calls] : programs) {
    std::string bytes;
    for (const auto& call : calls) bytes.append(call.begin(), call.end());
    files->push_back({std::string("c_api/") + name, bytes});
  }
}

}  // namespace

// template_bytecode: each compiled template as it is (the first byte picks it; 0x80 sets
// enable_thinking false), and with a few bytes of code flipped.
void AddBytecodeSeeds(Files* files) {
  for (int t = 0; t < 3; ++t) {
    files->push_back({"template_bytecode/plain_" + std::to_string(t),
                      std::string(1, static_cast<char>(t))});
    files->push_back({"template_bytecode/no_thinking_" + std::to_string(t),
                      std::string(1, static_cast<char>(0x80 | t))});
    const char flips[] = {static_cast<char>(t), 7, 0, 1, 40, 0, 4, 90, 0, 0x10};
    files->push_back({"template_bytecode/flipped_" + std::to_string(t),
                      std::string(flips, sizeof(flips))});
  }
}

// gbnf: grammars of every feature (written here), a NUL, then a text to match.
void AddGbnfSeeds(Files* files) {
  const char* const kGrammars[][3] = {
      {"json",
       "root ::= value\nvalue ::= object | array | string | number | (\"true\" | "
       "\"false\" | \"null\") ws\nobject ::= \"{\" ws ( string \":\" ws value (\",\" "
       "ws string \":\" ws value)* )? \"}\" ws\narray ::= \"[\" ws ( value (\",\" ws "
       "value)* )? \"]\" ws\nstring ::= \"\\\"\" ( [^\"\\\\\\x00-\\x1F] | \"\\\\\" "
       "([\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4}) )* \"\\\"\" ws\nnumber ::= \"-\"? "
       "(\"0\" | [1-9] [0-9]*) (\".\" [0-9]+)? ([eE] [-+]? [0-9]+)? ws\nws ::= [ \\t\\n]*\n",
       "{\"a\": [1, -2.5e3, true, null, \"\\u00e9\"]}"},
      {"arithmetic",
       "root ::= (expr \"=\" ws term \"\\n\")+\nexpr ::= term ([-+*/] term)*\nterm ::= "
       "ident | num | \"(\" ws expr \")\" ws\nident ::= [a-z] [a-z0-9_]* ws\nnum ::= "
       "[0-9]+ ws\nws ::= [ \\t\\n]*\n",
       "a+(b*3)=x\n"},
      {"features",
       "# comment\nroot ::=\n  item{2,4} \"!\"? . [^a-c\\n]\nitem ::= \"- \" ( [\\u00e0-"
       "\\u00ff] | [ぁ-ゟ]+ |\n  \"\\U0001F600\" )* \"\\n\" | \"\"{3}\n",
       "- \xc3\xa9\n- \n!xd"},
  };
  for (const auto& g : kGrammars) {
    files->push_back({std::string("gbnf/") + g[0], std::string(g[1]) + '\0' + g[2]});
  }
}

// json_schema: schemas of every supported keyword (written here), and refused ones.
void AddJsonSchemaSeeds(Files* files) {
  const char* const kSchemas[][2] = {
      {"object",
       R"({"type":"object","properties":{"name":{"type":"string","minLength":1,)"
       R"("maxLength":8},"age":{"type":"integer","minimum":0,"maximum":150},"id":{)"
       R"("type":"string","format":"uuid"},"at":{"format":"date-time"}},"required":)"
       R"(["name"],"additionalProperties":{"type":"boolean"}})"},
      {"array",
       R"({"type":"array","prefixItems":[{"const":"x"},{"enum":[1,"a"b",null]}],)"
       R"("items":{"type":["number","null"]},"minItems":1,"maxItems":5})"},
      {"refs",
       R"({"$defs":{"n":{"properties":{"next":{"anyOf":[{"type":"null"},{"$ref":)"
       R"("#/$defs/n"}]}}}},"oneOf":[{"$ref":"#/$defs/n"},{"allOf":[{"type":)"
       R"("integer","exclusiveMinimum":-1000,"exclusiveMaximum":7}]}]})"},
      {"refused", R"({"type":"string","pattern":"a+","format":"email"})"},
  };
  for (const auto& s : kSchemas) files->push_back({std::string("json_schema/") + s[0], s[1]});
}

// tool_calls: replies in each family's syntax (first byte even: '0') and tools files
// (odd: '1').
void AddToolCallSeeds(Files* files) {
  const char* const kSeeds[][2] = {
      {"hermes", "0<think>x</think><tool_call>\n{\"name\": \"f\", \"arguments\": "
                 "{\"a\": [1, {\"b\": \"}\\\"\"}]}}\n</tool_call><tool_call>{\"name\": \"g\"}"},
      {"llama3", "0{\"name\": \"add\", \"parameters\": {\"a\": 1}}; {\"name\": \"b\"}"},
      {"mistral", "0[{\"name\": \"a\", \"arguments\": {}}, {\"name\": \"b\", "
                  "\"arguments\": {\"x\": null}}]"},
      {"phi4-mini", "0ok<|tool_call|>[{\"name\": \"a\", \"arguments\": {}}]<|/tool_call|>"
                    "<|tool_call|>{\"name\": \"b\", \"arguments\": {\"s\": \"]\"}}"},
      {"tools", "1[{\"type\": \"function\", \"function\": {\"name\": \"get\", "
                "\"parameters\": {\"type\": \"object\", \"properties\": {\"c\": "
                "{\"type\": \"string\", \"maxLength\": 3}, \"u\": {\"enum\": "
                "[\"x\", 2]}}, \"required\": [\"c\"]}}}, {\"name\": \"now\"}]"},
  };
  for (const auto& s : kSeeds) files->push_back({std::string("tool_calls/") + s[0], s[1]});
}

void AddTextSeeds(std::vector<std::pair<std::string, std::string>>* files) {
  AddToolCallSeeds(files);
  AddTemplates(files);
  AddBytecodeSeeds(files);
  AddGbnfSeeds(files);
  AddJsonSchemaSeeds(files);
  AddTokenizerJsons(files);
  AddCallPrograms(files);
}

}  // namespace ember::fuzz
