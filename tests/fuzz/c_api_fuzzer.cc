// Fuzzes the C API as a caller would misuse it: the input is a program of calls on one
// tiny model (the C API edge tests' model: a chat template and a baked prompt), each an
// opcode byte and then the bytes that pick its arguments from edge values (0, 1,
// SIZE_MAX, SIZE_MAX / 2 + 1, INT32_MAX, negative ints, ids just past the vocabulary,
// NULL pointers, struct sizes the library does not know). Sessions are created and
// freed, tokenize, prefill, decode, sample, generate (with a callback that stops
// early), shift their context, save and restore their state, and hold chats.
//
// The harness never lies about a buffer it owns: a pointer into one comes with a length
// inside it, and the edge sizes go with NULL pointers or with arguments that are counts,
// not buffers. Every failing call must leave a message; every success must keep the
// API's promises (ids inside the vocabulary, lengths inside the buffer, a state that
// restores, an arena of ember_arena_bytes that is enough). Anything else aborts.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "runtime/ember.h"
#include "tests/fuzz/c_api_fuzz_calls.h"
#include "tests/fuzz/fuzz_common.h"
#include "testing/testing.h"
#include "tools/convert/bake.h"
#include "tools/template/chat_program.h"

namespace ember::fuzz {
namespace {

ember_model* LoadModel() {
  static AlignedCopy* bytes = nullptr;
  static ember_model* model = nullptr;
  if (model) return model;
  ModelSpec spec = testing::TinyModelSpec();
  spec.tokenizer.chat_template =
      "{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}"
      "{% if add_generation_prompt %}[assistant]{% endif %}"
      "{% if strftime_now is defined %} {{ strftime_now('%Y-%m-%d %j %a') }}{% endif "
      "%}";
  std::vector<uint8_t> raw;
  tools::BakeRequest bake;
  bake.text = "Hello";
  Status s = tools::CompileChatTemplate(&spec.tokenizer);
  if (s.ok()) s = tools::BakeSpec(bake, &spec);
  if (s.ok()) s = SerializeModel(spec, &raw);
  if (!s.ok()) {
    fprintf(stderr, "c_api_fuzzer: building the model: %s\n", s.message());
    abort();
  }
  bytes = new AlignedCopy(raw.data(), raw.size());
  if (ember_model_from_memory(bytes->data(), bytes->size(), &model) != EMBER_OK) {
    fprintf(stderr, "c_api_fuzzer: loading the model: %s\n", ember_last_error());
    abort();
  }
  return model;
}

}  // namespace
}  // namespace ember::fuzz

// libFuzzer calls this before the first input, so building the model (a compile and a
// bake) is not charged to an input; the replay harness builds it at its first input.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ember::fuzz::LoadModel();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ember::fuzz::CallProgram program(ember::fuzz::LoadModel(), data, size);
  program.Run();
  return 0;
}
