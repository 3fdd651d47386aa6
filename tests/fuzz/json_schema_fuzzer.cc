// Fuzzes the runtime's JSON Schema to GBNF converter (runtime/grammar/json_schema.h) and
// the JSON reader and writer under it (json_reader.h): a schema is hostile input (an
// app's through the C API, a user's file). Text the reader takes writes back to text it
// reads to the same writing; a schema converts to a grammar the GBNF compiler accepts
// (the converter never writes one it refuses) and the program Bind accepts, or fails
// with a message; never a crash, unbounded memory or time.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/grammar/gbnf.h"
#include "runtime/grammar/grammar_program.h"
#include "runtime/grammar/json_reader.h"
#include "runtime/grammar/json_schema.h"

namespace {

void Check(bool ok, const char* what, const std::string& detail) {
  if (!ok) {
    fprintf(stderr, "json_schema_fuzzer: %s: %s\n", what, detail.c_str());
    abort();
  }
}

// The reader alone: a refusal has a message; what it reads, its writer writes to text
// that reads back and writes the same.
void Reader(const std::string& text) {
  ember::grammar::JsonValue value;
  const ember::Status read = ember::grammar::ReadJson(text, 200, &value);
  if (!read.ok()) {
    Check(read.message()[0] != '\0', "a refusal without a message", text);
    return;
  }
  std::string dumped, again;
  ember::grammar::DumpJson(value, &dumped);
  ember::grammar::JsonValue reread;
  Check(ember::grammar::ReadJson(dumped, 200, &reread).ok(), "its writing does not read",
        text + "\n" + dumped);
  ember::grammar::DumpJson(reread, &again);
  Check(again == dumped, "its writing reads back to another", dumped + "\n" + again);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;  // schemas are small; large ones only slow the search
  const std::string text(reinterpret_cast<const char*>(data), size);
  Reader(text);
  std::string gbnf;
  const ember::Status converted =
      ember::grammar::JsonSchemaTextToGbnf(text, "schema", &gbnf);
  if (!converted.ok()) {
    Check(converted.message()[0] != '\0', "a refusal without a message", text);
    return 0;
  }
  std::vector<uint32_t> words;
  const ember::Status compiled = ember::grammar::CompileGbnf(gbnf, "root", &words);
  // A schema may ask for more than a grammar holds (a compiler's limit): that is a
  // refusal with a message, not a malformed grammar.
  if (!compiled.ok()) {
    Check(compiled.code() == ember::StatusCode::kResourceExhausted,
          "the converter wrote a grammar the compiler refuses",
          std::string(compiled.message()) + "\n" + gbnf);
    return 0;
  }
  ember::grammar::Program program;
  Check(program.Bind(words.data(), words.size()).ok(), "Bind refuses a compiled program",
        gbnf);
  return 0;
}
