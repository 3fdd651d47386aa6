// Fuzzes the chat-template VM on bytecode no compiler wrote: a model file is hostile input,
// and its template program (code, string table, sizes) is bytes the loader checks
// (ChatTemplate::Init) and the VM then runs. The input picks one of a few compiled
// templates and flips bytes of its program: each mutation is three input bytes, an offset
// (two, into the code, or past its end into the string offsets and the sizes) and the
// byte to XOR there. What Init accepts must render a fixed conversation into a fixed
// buffer within a small step budget, or fail with a message: never a crash, a read past
// a table, or a hang.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/chat/chat_template.h"
#include "tests/fuzz/fuzz_common.h"
#include "tools/template/chat_program.h"

namespace {

constexpr size_t kRenderBytes = size_t{1} << 14;
constexpr uint64_t kMaxSteps = 20000;

// Templates whose programs use most instructions: loops with loop variables, namespaces,
// slices, filters, methods, tests, string building and raise_exception.
const char* const kTemplates[] = {
    "{{ bos_token }}{% for m in messages %}{% if m.role == 'system' %}"
    "{{ m.content | trim ~ '\\n' }}{% elif loop.first and m.role != 'user' %}"
    "{{ raise_exception('first must be user') }}{% else %}[{{ m.role | upper }}] "
    "{{ m.content }}{% endif %}{% endfor %}{% if add_generation_prompt %}[A]{% endif %}",
    "{%- set ns = namespace(n=0, last='') %}{%- for m in messages[::-1] %}"
    "{%- set ns.n = ns.n + 1 %}{%- if m.content.startswith('<tool') %}"
    "{%- set ns.last = m.content.split('>')[0] %}{%- endif %}{%- endfor %}"
    "{{ ns.n }} {{ ns.last | length }} {{ messages | map(attribute='role') | join(',') }}"
    "{%- for m in messages[1:] %}{{ loop.index0 % 2 }}{{ m.content[:3] }}"
    "{{ m | tojson }}{% endfor %}",
    "{% for m in messages if m.role != 'tool' %}<{{ m.role }}>"
    "{{ m.content | replace('a', 'b') }}</{{ m.role }}>{% if m.content is string and "
    "m.content | length > 3 %}{{ m.content[-2:] ~ (loop.length - loop.index) }}"
    "{% endif %}{% endfor %}{{ (1.5 * 2) | int }}{{ [1, 2, 3] | length }}"
    "{% if enable_thinking is defined and not enable_thinking %}<think></think>{% endif %}",
};
constexpr size_t kNumTemplates = sizeof(kTemplates) / sizeof(kTemplates[0]);

struct Compiled {
  ember::TokenizerSpec tok;  // the tables point into its program and the storage
  ember::tools::ProgramStorage storage;
  ember::ChatProgramTables tables;
  std::vector<uint8_t> code;
  uint32_t vocab = 0;
};

const std::vector<Compiled>& Programs() {
  static std::vector<Compiled>* const programs = [] {
    auto* out = new std::vector<Compiled>(kNumTemplates);  // never resized: stable
    const ember::TokenizerSpec base = ember::fuzz::SmallModelSpec().tokenizer;
    for (size_t i = 0; i < kNumTemplates; ++i) {
      Compiled& c = (*out)[i];
      c.tok = base;
      c.tok.chat_template = kTemplates[i];
      const ember::Status s = ember::tools::CompileChatTemplate(&c.tok);
      if (!s.ok()) {
        fprintf(stderr, "template_bytecode_fuzzer: template %zu: %s\n", i, s.message());
        abort();
      }
      c.tables = ember::tools::TablesOf(c.tok.chat_program, &c.storage);
      c.code.assign(c.tables.code, c.tables.code + c.tables.code_size);
      c.vocab = static_cast<uint32_t>(c.tok.pieces.size());
    }
    return out;
  }();
  return *programs;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const Compiled& base = Programs()[data[0] % kNumTemplates];
  // Copies of what the mutations touch: the code, the string offsets, the sizes.
  std::vector<uint8_t> code = base.code;
  std::vector<uint32_t> offsets(base.tables.string_offsets,
                                base.tables.string_offsets + base.tables.num_strings + 1);
  uint32_t sizes[3] = {base.tables.num_slots, base.tables.max_stack,
                       base.tables.max_loops};
  const size_t offset_bytes = offsets.size() * sizeof(uint32_t);
  for (size_t i = 1; i + 3 <= size; i += 3) {
    size_t at = (data[i] | size_t{data[i + 1]} << 8) %
                (code.size() + offset_bytes + sizeof(sizes));
    const uint8_t flip = data[i + 2];
    if (at < code.size()) {
      code[at] ^= flip;
      continue;
    }
    at -= code.size();
    uint8_t* bytes = at < offset_bytes ? reinterpret_cast<uint8_t*>(offsets.data())
                                       : reinterpret_cast<uint8_t*>(sizes);
    bytes[at < offset_bytes ? at : at - offset_bytes] ^= flip;
  }
  ember::ChatProgramTables t = base.tables;
  t.code = code.data();
  t.string_offsets = offsets.data();
  t.num_slots = sizes[0];
  t.max_stack = sizes[1];
  t.max_loops = sizes[2];
  ember::ChatTemplate chat_template;
  const ember::Status bound = chat_template.Init(t, base.vocab);
  if (!bound.ok()) {
    if (bound.message()[0] == '\0') {
      fprintf(stderr, "template_bytecode_fuzzer: Init failed without a message\n");
      abort();
    }
    return 0;
  }
  static char* const buffer = static_cast<char*>(malloc(kRenderBytes));
  const ember::ChatMessage conversation[] = {
      {"system", "Be brief."},
      {"user", "Hi {{ x }}"},
      {"assistant", "<tool_call>a</tool_call> Hello."},
      {"tool", "{\"ok\": true}"},
      {"user", "caf\xc3\xa9?"}};
  ember::ChatTemplateOptions options;
  options.max_steps = kMaxSteps;
  options.enable_thinking = data[0] & 0x80 ? 0 : -1;
  size_t length = 0;
  const ember::Status s = chat_template.Render(
      conversation, sizeof(conversation) / sizeof(conversation[0]), options, buffer,
      kRenderBytes, &length);
  if (size == 1 && !s.ok()) {  // unmutated: the harness itself must render
    fprintf(stderr, "template_bytecode_fuzzer: template %zu does not render: %s\n",
            data[0] % kNumTemplates, s.message());
    abort();
  }
  if ((!s.ok() && s.message()[0] == '\0') || (s.ok() && length > kRenderBytes)) {
    fprintf(stderr, "template_bytecode_fuzzer: a render of %zu bytes (%s)\n", length,
            s.message());
    abort();
  }
  return 0;
}
